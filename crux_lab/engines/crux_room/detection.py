"""Disagreement detection: boolean decomposition, majority vote, a bounded queue, and the
staged-commitment spawn gate of seed 02 §6 Area 6.

A detection reply lists candidate disagreements, each as three booleans plus the two personas
and the claim (seed 05 §2.6). A candidate counts only when all three booleans are true. With
``votes`` parallel detection calls, a persona pair is accepted when at least ``threshold`` of
them report it (2 of 3 by default, seed 04 §5 option A). There is no confidence float.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from crux_lab.engines.base import turn_hints
from crux_lab.engines.crux_room import prompts
from crux_lab.engines.crux_room.schemas import DetectionItem, DetectionReply
from crux_lab.engines.crux_room.speaker import Speakers
from crux_lab.models import DialogueTurn, DisagreementCandidate

Pair = tuple[str, str]


def pair_of(personas: Iterable[str]) -> Pair:
    """Order-free key of a persona pair.

    >>> pair_of(["b", "a"])
    ('a', 'b')
    """
    a, b = sorted(personas)
    return (a, b)


def claim_key(candidate: DisagreementCandidate) -> str:
    """What makes two candidates "the same claim": the proposition id when the turns carry one,
    else the claim's content words.

    >>> claim_key(DisagreementCandidate(has_direct_opposition=True, has_specific_claim=True,
    ...     topic_relevant=True, personas=["a", "b"], claim="Is the supply, capped?"))
    'capped supply'
    """
    if candidate.proposition_id:
        return candidate.proposition_id
    words = sorted({w for w in re.findall(r"[a-z0-9]+", candidate.claim.lower()) if len(w) > 3})
    return " ".join(words[:8])


def room_key(candidate: DisagreementCandidate) -> tuple[Pair, str]:
    return (pair_of(candidate.personas), claim_key(candidate))


def shared_proposition(turns: Sequence[DialogueTurn], a: str, b: str) -> str | None:
    """A proposition both speakers addressed, preferring one where they took opposite sides
    (from turn metadata; ``None`` when the backend gives none)."""
    last: dict[tuple[str, str], str | None] = {}
    for t in turns:
        for pid in t.proposition_ids:
            last[(t.persona_id, pid)] = t.stance
    common = [pid for (spk, pid) in last if spk == a and (b, pid) in last]
    for pid in common:
        if {last[(a, pid)], last[(b, pid)]} == {"pro", "con"}:
            return pid
    return common[0] if common else None


@dataclass
class Voted:
    candidate: DisagreementCandidate
    votes: int


def _valid(item: DetectionItem, speakers: set[str]) -> bool:
    return item.positive and len(set(item.personas)) == 2 and set(item.personas) <= speakers


async def detect(
    sp: Speakers,
    turns: Sequence[DialogueTurn],
    *,
    aspect: str | None,
    votes: int = 3,
    threshold: int = 2,
) -> list[Voted]:
    """Run ``votes`` detection calls in parallel on ``turns``; keep pairs with ≥ ``threshold``
    positive votes, most votes first. Unrepairable replies abstain (with a warning)."""
    statements = "\n".join(f"[{t.persona_id}] {t.dialogue}" for t in turns)
    user = prompts.DETECT.format(topic=sp.ctx.config.topic, aspect=aspect or "(whole topic)", statements=statements)
    hints = sp.hints(aspect=aspect, phase="detect", turns=turn_hints(turns))
    replies = await sp.timeline.parallel(
        "detect", [sp.structured("detect_disagreement", user, DetectionReply, hints) for _ in range(votes)]
    )
    speakers = {t.persona_id for t in turns}
    tally: dict[Pair, int] = {}
    first: dict[Pair, DetectionItem] = {}
    for reply in replies:
        if reply is None:
            continue
        for pair in {pair_of(i.personas) for i in reply.disagreements if _valid(i, speakers)}:
            tally[pair] = tally.get(pair, 0) + 1
        for item in reply.disagreements:
            if _valid(item, speakers):
                first.setdefault(pair_of(item.personas), item)
    out = []
    for pair, n in tally.items():
        if n < threshold:
            continue
        item = first[pair]
        a, b = item.personas[0], item.personas[1]
        out.append(
            Voted(
                DisagreementCandidate(
                    has_direct_opposition=True,
                    has_specific_claim=True,
                    topic_relevant=True,
                    personas=[a, b],
                    claim=item.claim,
                    proposition_id=shared_proposition(turns, a, b),
                ),
                n,
            )
        )
    order = list(first)
    out.sort(key=lambda v: (-v.votes, order.index(pair_of(v.candidate.personas))))
    return out


@dataclass
class DisagreementQueue:
    """Disagreements waiting for a clash/room: at most ``max_depth`` (seed 05 §2.6), one pair
    per claim (the best-voted pair comes first), never a pair+claim that already had a room."""

    max_depth: int = 2
    items: list[DisagreementCandidate] = field(default_factory=list)
    spawned: set[tuple[Pair, str]] = field(default_factory=set)
    dropped: int = 0

    def offer(self, candidates: Iterable[DisagreementCandidate]) -> None:
        for c in candidates:
            key = room_key(c)
            if key in self.spawned or any(claim_key(q) == claim_key(c) for q in self.items):
                continue
            if len(self.items) >= self.max_depth:
                self.dropped += 1
                continue
            self.items.append(c)

    def pop(self) -> DisagreementCandidate | None:
        return self.items.pop(0) if self.items else None

    def mark_spawned(self, candidate: DisagreementCandidate) -> None:
        self.spawned.add(room_key(candidate))


@dataclass
class Tracked:
    candidate: DisagreementCandidate
    seen_count: int
    last_window: int


@dataclass
class SpawnGate:
    """Staged commitment (seed 02 §6 Area 6): a candidate spawns a room only when it was seen in
    ``min_seen`` consecutive detection windows, its pair+claim never had a room, and the pair's
    cooldown (in channel messages, since simulated time is not wall time) has passed."""

    min_seen: int = 3
    cooldown_messages: int = 9
    tracked: dict[tuple[Pair, str | None], Tracked] = field(default_factory=dict)
    spawned: set[tuple[Pair, str]] = field(default_factory=set)
    last_room_at: dict[Pair, int] = field(default_factory=dict)

    def observe(self, window: int, candidates: Iterable[DisagreementCandidate], message_index: int) -> list[DisagreementCandidate]:
        """Record one window's candidates; return those that pass the gate now."""
        seen_now: dict[tuple[Pair, str | None], DisagreementCandidate] = {}
        for c in candidates:
            seen_now.setdefault((pair_of(c.personas), c.proposition_id), c)
        for key in list(self.tracked):
            if key not in seen_now:
                del self.tracked[key]  # consecutive windows only
        ready = []
        for key, c in seen_now.items():
            t = self.tracked.get(key)
            if t is not None and t.last_window == window - 1:
                t.seen_count += 1
                t.last_window = window
            else:
                t = self.tracked[key] = Tracked(c, 1, window)
            pair = key[0]
            cooling = pair in self.last_room_at and message_index - self.last_room_at[pair] < self.cooldown_messages
            if t.seen_count >= self.min_seen and room_key(c) not in self.spawned and not cooling:
                ready.append(c)
        return ready

    def mark_spawned(self, candidate: DisagreementCandidate, message_index: int) -> None:
        self.spawned.add(room_key(candidate))
        self.last_room_at[pair_of(candidate.personas)] = message_index
        self.tracked.pop((pair_of(candidate.personas), candidate.proposition_id), None)
