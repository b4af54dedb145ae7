"""The ``panel`` engine: panel debate with crux rooms.

Flow: topic decomposition (fast tier, 3 aspects, at most 4) -> opening round (all personas
concurrently; with the worldview step on, each opening also states the persona's positions
with their assumptions, and one reader call per pair lists their conflicting ones) -> one themed
round per aspect: parallel takes, one boolean disagreement detection call (a vote of several
with ``detection_votes``), a queue of at most 2 contested claims with one opposed pair each
(``pairs_per_claim``), a clash of 2-3 rebuttals per queued pair, and a three-phase crux room
that goes on from the clash when it does not resolve it (at most two rooms) -> round summary
(fast tier) -> closing round (concurrently) -> position shifts, opening vs closing. This keeps a 4-persona,
3-aspect debate within a budget of about 63 calls (docs/architecture.md).

A clash is an exchange of at least two turns. When one side concedes in it, naming what moved
it, the clash's card is extracted from the exchange and recorded as a resolved crux with that
reason (it does not vanish); otherwise the pair goes to a crux room.

The anti-sycophancy stack (:mod:`.crux_room.antisyc`) is on by default; every measure has
its own switch in :class:`PanelParams`.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import ClassVar

from pydantic import Field, model_validator

from crux_lab.analysis.restates import restates_topic
from crux_lab.engines import register_engine
from crux_lab.engines.base import EngineContext, turn_hints
from crux_lab.engines.crux_room import (
    prompts,
    sim,  # noqa: F401  (registers the simulator's answers to the family's purposes)
)
from crux_lab.engines.crux_room.context import ContestedClaim, turn_context
from crux_lab.engines.crux_room.detection import DisagreementQueue, Voted, detect
from crux_lab.engines.crux_room.events import ClashStart, DisagreementDetected, RoundEnd, RoundStart
from crux_lab.engines.crux_room.outcome import finish
from crux_lab.engines.crux_room.params import CruxParams
from crux_lab.engines.crux_room.purposes import CLOSING, DECOMPOSE, REBUTTAL, SUMMARIZE, TAKE
from crux_lab.engines.crux_room.room import RoomSettings, extract_card
from crux_lab.engines.crux_room.run import CruxEngine, CruxRun
from crux_lab.engines.crux_room.schemas import (
    AspectsReply,
    OpeningReply,
    SpeechReply,
    SummaryReply,
    aspects_reply_for,
)
from crux_lab.engines.crux_room.speaker import spoken
from crux_lab.engines.names import quote
from crux_lab.llm.purposes import Purpose
from crux_lab.models.domain import Aspect, DialogueTurn, Move
from crux_lab.models.events import (
    CruxCardPosted,
    DebateComplete,
    DebateEvent,
    DebateStart,
    MessagePosted,
)

MAX_ASPECTS = 4
POSITIONS_PER_PERSONA = 4  # positions an opening states for the worldview step


class PanelParams(CruxParams):
    n_aspects: int = Field(3, ge=1, le=MAX_ASPECTS, description="Aspects from topic decomposition (capped at 4).")
    max_rooms: int = Field(
        2, ge=0, le=20,
        description="Crux rooms per debate: the panel's design budgets two.",
    )
    queue_depth: int = Field(2, ge=1, le=4, description="Contested claims handled per themed round.")
    pairs_per_claim: int | None = Field(
        1, ge=1, le=6,
        description="Opposed pairs that clash on one claim in a round (best-voted first); None: every pair.",
    )
    detection_votes: int = Field(1, ge=1, le=7, description="Detection calls per themed round (a vote when > 1).")
    vote_threshold: int = Field(1, ge=1, le=7, description="Detection calls that must report a disagreement.")
    clash_min: int = Field(2, ge=1, le=8)
    clash_max: int = Field(
        3, ge=1, le=8,
        description="Rebuttals of a clash (the first side answers the push-back); a room that follows goes on from it.",
    )
    steelman_after: int = Field(4, ge=0, le=20, description="Room exchange turn from which steelman prompts start.")
    extra_rounds: int = Field(2, ge=1, le=5, description="Exchange rounds added when the convergence check fails.")
    round_summaries: bool = True

    @model_validator(mode="after")
    def _panel_ranges(self) -> PanelParams:
        if self.clash_min > self.clash_max:
            raise ValueError("clash_min must be <= clash_max")
        if self.vote_threshold > self.detection_votes:
            raise ValueError("vote_threshold must be <= detection_votes")
        return self


def clean_aspects(reply: AspectsReply | None, n: int, topic: str) -> tuple[list[Aspect], list[str]]:
    """Validated aspects: non-empty, distinct labels (by content words), none that restates the
    topic, at most ``n`` (≤ 4), fresh ids ``a1..``; and the labels refused as the topic itself.
    Qwen2.5-Coder-1.5B gave the topic back as its
    one aspect, and the round then asked each persona the topic a second time: each repeated
    its opening word for word.

    >>> r = AspectsReply.model_validate({"aspects": [{"label": "Cost"}, {"label": "cost "},
    ...     {"label": "Risk", "description": "d"}, {"label": "Is T good?"}]})
    >>> aspects, refused = clean_aspects(r, 3, "Is T good?")
    >>> [(a.id, a.label) for a in aspects], refused
    ([('a1', 'Cost'), ('a2', 'Risk')], ['Is T good?'])
    """
    out: list[Aspect] = []
    refused: list[str] = []
    seen: set[frozenset[str]] = set()
    for item in reply.aspects if reply else []:
        label = item.label.strip()
        key = frozenset(re.findall(r"[a-z0-9]+", label.lower()))
        if not label or key in seen:
            continue
        seen.add(key)
        if restates_topic(label, topic):
            refused.append(label)
            continue
        if len(out) < min(n, MAX_ASPECTS):
            out.append(Aspect(id=f"a{len(out) + 1}", label=label, description=item.description.strip() or label))
    return out, refused


class _PanelRun(CruxRun[PanelParams]):
    def __init__(self, ctx: EngineContext, params: PanelParams) -> None:
        super().__init__(ctx, params)
        self.spawned = DisagreementQueue(max_depth=params.queue_depth).spawned  # settled pair+claim keys
        self.clashes_resolved = 0
        self.settings = RoomSettings(
            three_phase=True, min_exchange=params.room_min_exchange, max_exchange=params.room_max_exchange,
            steelman_after=params.steelman_after, extra_rounds=params.extra_rounds, turn_cap=params.room_turn_cap,
            last_turns=params.room_last_turns,
        )

    def context(self, pid: str, current: list[DialogueTurn], aspect: str | None = None) -> str:
        # the turn's own blocks (claims, position statement, rules, instruction) take ~400 tokens of the budget
        budget = max(300, self.p.context_budget - 400)
        return turn_context(self.memory, pid, current, budget=budget, aspect=aspect)

    async def events(self) -> AsyncIterator[DebateEvent]:
        ctx, sp, topic = self.ctx, self.sp, self.ctx.config.topic
        ids = ctx.persona_ids

        user = prompts.DECOMPOSE.format(n=self.p.n_aspects, topic=topic)
        hints = sp.hints(extra={"n_aspects": self.p.n_aspects}, phase="decompose")
        schema = aspects_reply_for(self.p.n_aspects)
        reply = await sp.structured(DECOMPOSE, user, schema, hints)
        aspects, refused = clean_aspects(reply, self.p.n_aspects, topic)
        if refused and not aspects:
            # asked once more, naming what was wrong
            shown = ", ".join(quote(r) for r in refused)
            retry = f"{user}\n\nYour previous aspects were unusable: {shown} restates the debate topic. Give sub-questions under it."
            aspects, refused = clean_aspects(await sp.structured(DECOMPOSE, retry, schema, hints), self.p.n_aspects, topic)
        if refused:
            sp.warn("decompose", f"aspect {', '.join(quote(r) for r in refused)} left out: it is the debate topic itself, not a part of it")
        aspects = aspects or [Aspect(id="a1", label=topic, description="The topic as a whole.")]
        self.memory.aspects = [a.label for a in aspects]
        ctx.result.aspects = aspects
        yield DebateStart(topic=topic, aspects=aspects, personas=ids)
        for w in sp.drain():
            yield w

        # With the worldview step on, each opening also states the persona's positions with
        # their assumptions: the worldview reads those, and asks no persona again.
        opening = prompts.OPENING.format(topic=topic)
        if self.p.worldview:
            opening += "\n" + prompts.OPENING_POSITIONS.format(n=POSITIONS_PER_PERSONA)
        openings = spoken(await self.timeline.parallel(
            "opening",
            [
                sp.speak(
                    Purpose.opening, pid, opening, self.context(pid, []), phase="opening",
                    schema=OpeningReply if self.p.worldview else SpeechReply,
                )
                for pid in ids
            ],
        ))
        for t in openings:
            self.memory.turns.append(t)
            yield MessagePosted(message=t, phase="opening")
        for w in sp.drain():
            yield w
        stated = {
            t.persona_id: [p for p in said.positions[:POSITIONS_PER_PERSONA] if p.position.strip()]
            for t in openings if isinstance(said := sp.replies.get(t.id), OpeningReply)
        }
        async for ev in self.worldview(stated=stated):
            yield ev

        for number, aspect in enumerate(aspects, start=1):
            async for ev in self.themed_round(number, aspect):
                yield ev

        closings = spoken(await self.timeline.parallel(
            "closing",
            [
                sp.speak(
                    CLOSING, pid, prompts.CLOSING.format(topic=topic), self.context(pid, []), phase="closing",
                    seen=self.seen_by(pid), claims=self.memory.open_claims(),
                )
                for pid in ids
            ],
        ))
        for t in closings:
            self.memory.turns.append(t)
            yield MessagePosted(message=t, phase="closing")
        for w in sp.drain():
            yield w

        shifts = finish(
            ctx, sp, self.rooms, self.memory.cards, self.memory,
            opening={t.persona_id: t.dialogue for t in openings},
            closing={t.persona_id: t.dialogue for t in closings},
            embeddings=self.p.shift_embeddings,
            detected=bool(self.memory.contested),
            assumptions=self.assumption_cruxes,
        )
        yield DebateComplete(shifts=shifts)

    def seen_by(self, pid: str) -> list[DialogueTurn]:
        """What a persona's closing draws on: its own turns, the replies to them, its rooms."""
        mine = {t.id for t in self.memory.turns if t.persona_id == pid}
        main = [t for t in self.memory.turns if t.id in mine or t.reply_to in mine]
        rooms = [t for r in self.rooms if pid in r.outcome.personas for t in r.outcome.turns]
        return sorted(main + rooms, key=lambda t: t.turn_index)

    async def themed_round(self, number: int, aspect: Aspect) -> AsyncIterator[DebateEvent]:
        sp = self.sp
        yield RoundStart(aspect=aspect, round_number=number)
        instruction = prompts.TAKE.format(label=aspect.label, description=aspect.description)
        takes = spoken(await self.timeline.parallel(
            f"take-{aspect.id}",
            [
                sp.speak(
                    TAKE, pid, instruction, self.context(pid, [], aspect.label), phase="take",
                    aspect=f"{aspect.label}. {aspect.description}", aspect_id=aspect.id,
                    focus=aspect.description if aspect.description != aspect.label else None,
                    claims=self.memory.open_claims(),
                )
                for pid in self.ctx.persona_ids
            ],
        ))
        round_turns: list[DialogueTurn] = []
        for t in takes:
            self.memory.turns.append(t)
            round_turns.append(t)
            yield MessagePosted(message=t, phase="take")

        voted = await detect(
            sp, takes, aspect=aspect.label, claims=self.memory.claims, votes=self.p.detection_votes,
            threshold=self.p.vote_threshold,
        )
        for w in sp.drain():
            yield w
        queue = DisagreementQueue(max_depth=self.p.queue_depth, spawned=self.spawned, pairs_per_claim=self.p.pairs_per_claim)
        for v in voted:
            yield DisagreementDetected(candidate=v.candidate, votes=v.votes)
        queue.offer(voted)

        while (cand := queue.pop()) is not None:
            async for ev in self.clash_and_room(cand, aspect, round_turns, queue):
                yield ev

        summary = ""
        if self.p.round_summaries:
            transcript = "\n".join(f"{sp.names[t.persona_id]}: {t.dialogue}" for t in round_turns)
            reply = await sp.structured(
                SUMMARIZE, prompts.SUMMARIZE.format(topic=self.ctx.config.topic, label=aspect.label, transcript=transcript),
                SummaryReply, sp.hints(aspect=aspect.label, turns=turn_hints(round_turns), phase="summarize"),
            )
            if reply is not None:
                summary = reply.summary
                self.memory.summaries.append((aspect.label, summary))
        for w in sp.drain():
            yield w
        yield RoundEnd(aspect=aspect, round_number=number, summary=summary)

    async def clash_and_room(
        self, v: Voted, aspect: Aspect, round_turns: list[DialogueTurn], queue: DisagreementQueue
    ) -> AsyncIterator[DebateEvent]:
        sp = self.sp
        cand = v.candidate
        a, b = cand.personas[0], cand.personas[1]
        claim = ContestedClaim(cand.claim, (a, b), claim_id=v.claim_id)
        self.memory.contested.append(claim)
        yield ClashStart(personas=[a, b], aspect=aspect.id)
        clash: list[DialogueTurn] = []
        conceded: DialogueTurn | None = None
        for k in range(self.p.clash_max):
            speaker, other = (a, b) if k % 2 == 0 else (b, a)
            target = next((t for t in reversed(round_turns) if t.persona_id == other), None)
            pair = [t for t in round_turns if t.persona_id in (speaker, other)]  # the claim to answer is the other's
            t = await sp.speak(
                REBUTTAL, speaker, prompts.REBUTTAL.format(claim=f"[{v.claim_id}] {cand.claim}"),
                self.context(speaker, pair, aspect.label), phase="clash", seen=pair,
                aspect=f"{aspect.label}. {aspect.description}", aspect_id=aspect.id,
                focus=cand.claim, claims=self.memory.open_claims(), opponent_id=other,
                reply_to=target.id if target else None,
            )
            if t is None:
                continue
            self.memory.turns.append(t)
            round_turns.append(t)
            clash.append(t)
            yield MessagePosted(message=t, phase="clash")
            if conceded is None and t.move is Move.CONCEDE and sp.named_reasons.get(t.id):
                conceded = t  # a justified concession settles it; the other side still answers it
            if k + 1 < max(2, self.p.clash_min):
                continue  # a clash is an exchange: at least two turns
            if conceded is not None:
                break
            if t.move in (Move.PROPOSE_CRUX, Move.REFRAME):
                break  # the clash has narrowed to a crux: hand over to the room
        for w in sp.drain():
            yield w
        sources = [t.id for t in round_turns if t.persona_id in (a, b) and (t.phase == "take" or t in clash)]
        if conceded is not None:
            queue.mark_spawned(v)  # settled: this pair does not clash on it again
            claim.status = "resolved"
            async for ev in self.clash_card(v, clash, conceded, sources, aspect):
                yield ev
            return
        if len(self.rooms) >= self.p.max_rooms or v.key in queue.spawned:
            return
        queue.mark_spawned(v)
        # Each side's clash turn on this claim is its position statement in the room.
        opened_by = clash if {t.persona_id for t in clash} == {a, b} else []
        async for ev in self.crux_room(v, claim, sources, aspect, opened_by=opened_by):
            yield ev

    async def clash_card(
        self, v: Voted, clash: list[DialogueTurn], conceded: DialogueTurn, sources: list[str], aspect: Aspect
    ) -> AsyncIterator[DebateEvent]:
        """A clash settled by a concession becomes a resolved crux card, with the reason named."""
        sp = self.sp
        a, b = v.candidate.personas[0], v.candidate.personas[1]
        self.clashes_resolved += 1
        card = await extract_card(
            sp, (a, b), clash, v.candidate.claim, claims=self.memory.claims,
            card_id=f"card-clash{self.clashes_resolved}", setting="A clash", aspect=aspect, source_messages=sources,
        )
        for w in sp.drain():
            yield w
        if card is None:
            return
        reason = sp.named_reasons.get(conceded.id) or conceded.dialogue
        who = sp.names[conceded.persona_id]
        resolution = card.resolution or f"{who} conceded, naming what moved them: {reason.rstrip('.')}."
        card = card.model_copy(update={"resolved": True, "resolution": resolution})
        self.memory.cards.append(card)
        yield CruxCardPosted(card=card)


@register_engine
class PanelEngine(CruxEngine[PanelParams]):
    name: ClassVar[str] = "panel"
    description: ClassVar[str] = (
        "Panel debate with crux rooms: aspects, parallel takes, voted disagreement "
        "detection, clashes, three-phase crux rooms, crux cards, position shifts."
    )
    params_model: ClassVar[type[PanelParams]] = PanelParams
    run_class: ClassVar[type[_PanelRun]] = _PanelRun
