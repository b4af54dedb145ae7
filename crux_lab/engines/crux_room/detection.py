"""Disagreement detection: boolean decomposition, majority vote, a bounded queue, and the
staged-commitment spawn gate (a room only for a disagreement seen again and again).

A detection reply lists candidate disagreements, each as three booleans plus the two personas
and the claim. A candidate counts only when all three booleans are true. With
``votes`` parallel detection calls, a persona pair is accepted when at least ``threshold`` of
them report it (2 of 3 by default). There is no confidence float.
Detections are keyed by the persona pair and the claim's text (:mod:`.claims`), never by
anything the reply did not say.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from crux_lab.analysis.restates import content_words, restates_topic
from crux_lab.engines.base import turn_hints
from crux_lab.engines.crux_room import prompts
from crux_lab.engines.crux_room.claims import ClaimIndex
from crux_lab.engines.crux_room.events import DisagreementCandidate
from crux_lab.engines.crux_room.purposes import DETECT_DISAGREEMENT
from crux_lab.engines.crux_room.schemas import DetectionItem, DetectionReply
from crux_lab.engines.crux_room.speaker import Speakers
from crux_lab.engines.names import labels, persona_ref, quote, world_claim
from crux_lab.models.domain import DialogueTurn

Pair = tuple[str, str]


def pair_of(personas: Iterable[str]) -> Pair:
    """Order-free key of a persona pair.

    >>> pair_of(["b", "a"])
    ('a', 'b')
    """
    a, b = sorted(personas)
    return (a, b)


@dataclass
class Voted:
    """A detected disagreement: the candidate as the reply stated it, its claim's engine id (the
    claim text's key, :class:`~crux_lab.engines.crux_room.claims.ClaimIndex`), and its votes."""

    candidate: DisagreementCandidate
    votes: int
    claim_id: str

    @property
    def key(self) -> tuple[Pair, str]:
        """What makes two detections "the same": the persona pair and the claim's key."""
        return (pair_of(self.candidate.personas), self.claim_id)


def _valid(item: DetectionItem, speakers: set[str]) -> bool:
    """Positive, between two of the speakers, on a claim with words in it (Qwen2.5-Coder-1.5B
    copied the prompt's placeholder "..." as the claim, and a room opened on it)."""
    return item.positive and len(set(item.personas)) == 2 and set(item.personas) <= speakers and bool(content_words(item.claim))


def _read(replies: Sequence[DetectionReply | None], names: dict[str, str], topic: str, sp: Speakers) -> list[DetectionReply | None]:
    """The replies with each speaker reference resolved to a persona id (:func:`persona_ref`),
    and without the disagreements whose claim is the debate topic itself: a room on it would
    only repeat the debate, and its card would restate the topic (Qwen2.5-Coder-1.5B named "No,
    Bitcoin is not a better long-term store of value than gold" as the claim). A reference that
    names no one speaker is kept as written (so the item is not valid). Each refused name and
    each dropped claim is warned about once, quoted."""
    refused: list[str] = []
    dropped: list[str] = []
    out: list[DetectionReply | None] = []
    for reply in replies:
        if reply is None:
            out.append(None)
            continue
        items = []
        for item in reply.disagreements:
            item = item.model_copy(update={"claim": world_claim(item.claim, names)})  # a claim, not a report of who holds it
            if item.positive and restates_topic(item.claim, topic):
                dropped.append(item.claim)
                continue
            refused += [ref for ref in item.personas if persona_ref(ref, names) is None and item.positive]
            items.append(item.model_copy(update={"personas": [persona_ref(ref, names) or ref for ref in item.personas]}))
        out.append(reply.model_copy(update={"disagreements": items}))
    if refused:
        shown = ", ".join(quote(r) for r in dict.fromkeys(refused))
        sp.warn("detect_disagreement", f"a disagreement naming {shown} dropped: no one speaker of {', '.join(names)} goes by that name")
    if dropped:
        shown = ", ".join(quote(c) for c in dict.fromkeys(dropped))
        sp.warn("detect_disagreement", f"a disagreement on {shown} dropped: it is the debate topic itself, not a point under it")
    return out


async def detect(
    sp: Speakers,
    turns: Sequence[DialogueTurn],
    *,
    aspect: str | None,
    claims: ClaimIndex,
    votes: int = 3,
    threshold: int = 2,
) -> list[Voted]:
    """Run ``votes`` detection calls in parallel on ``turns``; keep the (pair, claim) detections
    with >= ``threshold`` positive votes, most votes first. A claim is keyed by its text, so
    two votes that word one claim differently count together; a reply that names the id of a
    claim the prompt listed is taken at its word. Unrepairable replies abstain
    (with a warning). Turns of fewer than two speakers hold no disagreement: no call is made
    (Qwen2.5-Coder-1.5B, shown one speaker's turn, named that speaker and the topic turned round)."""
    if len({t.persona_id for t in turns}) < 2:
        return []
    shown_as = labels((t.persona_id for t in turns), sp.names)  # names, which the model copies, not ids
    statements = "\n".join(f"{shown_as[t.persona_id]}: {t.dialogue}" for t in turns)
    shown = dict(list(claims.texts.items())[-12:])  # the claims found so far, by id
    known = prompts.KNOWN_CLAIMS.format(lines="\n".join(f"[{cid}] {text}" for cid, text in shown.items())) if shown else ""
    user = prompts.DETECT.format(
        topic=sp.ctx.config.topic, aspect=aspect or "(whole topic)", statements=statements, known=known,
        claim_id_rule=prompts.KNOWN_CLAIM_ID if shown else "",
        # The example names two real speakers: a small model copied placeholder ids verbatim.
        pair=json.dumps(list(dict.fromkeys(shown_as[t.persona_id] for t in turns))[:2]),
    )
    hints = sp.hints(aspect=aspect, phase="detect", turns=turn_hints(turns), extra={"shown": shown})
    replies = await sp.timeline.parallel(
        "detect", [sp.structured(DETECT_DISAGREEMENT, user, DetectionReply, hints) for _ in range(votes)]
    )
    speakers = {t.persona_id for t in turns}
    replies = _read(replies, {pid: sp.names.get(pid, pid) for pid in speakers}, sp.ctx.config.topic, sp)
    claims.prepare([i.claim for r in replies if r is not None for i in r.disagreements if _valid(i, speakers)])
    tally: dict[tuple[Pair, str], int] = {}
    first: dict[tuple[Pair, str], DetectionItem] = {}
    for reply in replies:
        if reply is None:
            continue
        keys: set[tuple[Pair, str]] = set()
        for item in reply.disagreements:
            if _valid(item, speakers):
                cid = item.claim_id if item.claim_id in shown else claims.key(item.claim)
                key = (pair_of(item.personas), cid)
                keys.add(key)
                first.setdefault(key, item)
        for key in keys:
            tally[key] = tally.get(key, 0) + 1
    out = []
    for key, n in tally.items():
        if n < threshold:
            continue
        item = first[key]
        out.append(
            Voted(
                DisagreementCandidate(
                    has_direct_opposition=True,
                    has_specific_claim=True,
                    topic_relevant=True,
                    personas=[item.personas[0], item.personas[1]],
                    claim=claims.text(key[1]),
                ),
                n,
                key[1],
            )
        )
    order = list(first)
    out.sort(key=lambda v: (-v.votes, order.index(v.key)))
    return out


@dataclass
class DisagreementQueue:
    """Disagreements waiting for a clash/room: at most ``max_depth`` claims (so rooms cannot
    cascade and eat the debate), with every opposed pair on each of them (best-voted first);
    never a pair+claim already settled (it had a room, or its clash ended in a concession)."""

    max_depth: int = 2
    items: list[Voted] = field(default_factory=list)
    spawned: set[tuple[Pair, str]] = field(default_factory=set)
    dropped: int = 0
    pairs_per_claim: int | None = None  # at most this many opposed pairs per claim (None: all)

    def offer(self, detections: Iterable[Voted]) -> None:
        for v in detections:
            if v.key in self.spawned or any(q.key == v.key for q in self.items):
                continue
            claims = {q.claim_id for q in self.items}
            if v.claim_id not in claims and len(claims) >= self.max_depth:
                self.dropped += 1
                continue
            same = sum(1 for q in self.items if q.claim_id == v.claim_id)
            if self.pairs_per_claim is not None and same >= self.pairs_per_claim:
                self.dropped += 1
                continue
            self.items.append(v)

    def pop(self) -> Voted | None:
        return self.items.pop(0) if self.items else None

    def mark_spawned(self, detection: Voted) -> None:
        self.spawned.add(detection.key)


@dataclass
class Tracked:
    detection: Voted
    seen_count: int
    last_window: int


@dataclass
class SpawnGate:
    """Staged commitment: a detection spawns a room only when its pair and
    claim (keyed by the claim's text) were seen in ``min_seen`` consecutive detection windows,
    that pair+claim never had a room, and the pair's cooldown (in channel messages, since
    a modelled clock is not wall time) has passed."""

    min_seen: int = 3
    cooldown_messages: int = 9
    tracked: dict[tuple[Pair, str], Tracked] = field(default_factory=dict)
    spawned: set[tuple[Pair, str]] = field(default_factory=set)
    last_room_at: dict[Pair, int] = field(default_factory=dict)

    def observe(self, window: int, detections: Iterable[Voted], message_index: int) -> list[Voted]:
        """Record one window's detections; return those that pass the gate now."""
        seen_now: dict[tuple[Pair, str], Voted] = {}
        for v in detections:
            seen_now.setdefault(v.key, v)
        for key in list(self.tracked):
            if key not in seen_now:
                del self.tracked[key]  # consecutive windows only
        ready = []
        for key, v in seen_now.items():
            t = self.tracked.get(key)
            if t is not None and t.last_window == window - 1:
                t.seen_count += 1
                t.last_window = window
            else:
                t = self.tracked[key] = Tracked(v, 1, window)
            pair = key[0]
            cooling = pair in self.last_room_at and message_index - self.last_room_at[pair] < self.cooldown_messages
            if t.seen_count >= self.min_seen and key not in self.spawned and not cooling:
                ready.append(v)
        return ready

    def mark_spawned(self, detection: Voted, message_index: int) -> None:
        self.spawned.add(detection.key)
        self.last_room_at[detection.key[0]] = message_index
        self.tracked.pop(detection.key, None)
