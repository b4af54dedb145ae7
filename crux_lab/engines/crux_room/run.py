"""The engine shell and per-run state shared by the ``panel`` and ``crux_rooms`` engines.

:class:`CruxEngine` checks the run's own persona maximum (``params.max_personas``) when the
run is built (the runner's ``check_config`` hook) and again when it starts (for an engine
driven without the runner). :class:`CruxRun` holds what both runs keep: the call timeline,
the speakers with their anti-sycophancy stack, the debate memory and the crux rooms, and it
exposes them in ``ctx.scratch`` for tests and benchmarks.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from crux_lab.engines.base import EngineContext, EngineParams, engine_params
from crux_lab.engines.crux_room.context import ContestedClaim, DebateMemory
from crux_lab.engines.crux_room.detection import Voted
from crux_lab.engines.crux_room.outcome import RoomRecord
from crux_lab.engines.crux_room.params import HARD_MAX_PERSONAS, CruxParams, check_max_personas
from crux_lab.engines.crux_room.room import RoomOutcome, RoomSettings, run_room
from crux_lab.engines.crux_room.speaker import Speakers
from crux_lab.engines.crux_room.timeline import Timeline
from crux_lab.engines.worldview import Position, positions_text, run_worldview, worldview_cruxes
from crux_lab.models.config import DebateConfig
from crux_lab.models.domain import Aspect, Crux, DialogueTurn
from crux_lab.models.events import DebateEvent, Status

P = TypeVar("P", bound=CruxParams)


class CruxRun(Generic[P]):
    """One run's shared state; subclasses add their own and implement :meth:`events`."""

    def __init__(self, ctx: EngineContext, params: P, **scratch: Any) -> None:
        self.ctx = ctx
        self.p = params
        self.timeline = Timeline()
        self.sp = Speakers(ctx, params.antisyc(), self.timeline, budget=params.context_budget)
        self.memory = DebateMemory(topic=ctx.config.topic, names=dict(self.sp.names))
        self.rooms: list[RoomRecord] = []
        self.assumption_cruxes: list[Crux] = []
        self.settings = RoomSettings()  # each engine sets its own room settings
        ctx.scratch.update(
            timeline=self.timeline, anti_sycophancy=self.sp.stats, context_tokens=self.sp.context_tokens,
            rejected_cards=self.sp.rejected_cards, rooms=self.rooms, stance_records=self.sp.tracker.records, memory=self.memory,
            **scratch,
        )

    def events(self) -> AsyncIterator[DebateEvent]:
        raise NotImplementedError

    async def worldview(self, stated: dict[str, list[Position]] | None = None) -> AsyncIterator[DebateEvent]:
        """The worldview step, when ``params.worldview`` is on: each persona's positions with
        their implicit assumptions, then each pair's conflicting assumptions, kept in
        :attr:`assumption_cruxes` (the result lists them after the cards' cruxes). Each found
        persona's positions and each found premise are announced in status lines; a step whose
        reply stays off-schema is a warning. ``stated``: the positions the personas already
        stated (the panel's openings), so they are not asked again."""
        if not self.p.worldview:
            return
        view = await run_worldview(self.ctx, stated=stated, timeline=self.timeline)
        for w in view.warnings:
            yield w
        names = self.sp.names
        for pid, positions in view.positions.items():
            if positions:
                yield Status(message=f"{names.get(pid, pid)}'s positions and what they assume:\n{positions_text(positions)}")
        self.assumption_cruxes = worldview_cruxes(view)
        # In the result at once, so a debate a guard ends early keeps them; the end of a
        # debate lists them again after the cards' cruxes.
        self.ctx.result.cruxes = list(self.assumption_cruxes)
        for c in self.assumption_cruxes:
            who = " vs ".join(names.get(p, p) for p in c.proposed_by)
            kind = c.disagreement_type.value if c.disagreement_type else "premise"
            yield Status(message=f"Buried premise ({kind}), {who}: {c.statement}")

    async def crux_room(
        self, detection: Voted, claim: ContestedClaim, sources: Sequence[str], aspect: Aspect | None = None,
        opened_by: Sequence[DialogueTurn] = (),
    ) -> AsyncIterator[DebateEvent]:
        """Run one crux room on a detected disagreement; its card goes back to the debate
        memory, and a card that resolves the question resolves the contested claim.
        ``opened_by``: the two personas' turns on this claim just before the room (a clash),
        which stand as their position statements."""
        a, b = detection.candidate.personas[0], detection.candidate.personas[1]
        outcome = RoomOutcome(
            room_id=f"r{len(self.rooms) + 1}", personas=(a, b), question=detection.candidate.claim,
            claim_id=detection.claim_id, opened_by=list(opened_by),
        )
        self.rooms.append(RoomRecord(outcome=outcome, aspect_id=aspect.id if aspect else ""))
        async for ev in run_room(
            self.sp, outcome, self.settings, claims=self.memory.claims, aspect=aspect, source_messages=sources
        ):
            yield ev
        if outcome.card is not None:
            self.memory.cards.append(outcome.card)
            if outcome.card.resolved:
                claim.status = "resolved"


class CruxEngine(Generic[P]):
    """Engine shell: subclasses set ``name``, ``description``, ``params_model`` and ``run_class``."""

    name: ClassVar[str]
    description: ClassVar[str]
    params_model: ClassVar[type[Any]]
    run_class: ClassVar[type[CruxRun[Any]]]
    structure: ClassVar[str] = "rooms"  # the live console's counts (engines.base.Engine)
    min_personas: ClassVar[int] = 2
    max_personas: ClassVar[int] = HARD_MAX_PERSONAS

    def check_config(self, config: DebateConfig, params: EngineParams) -> None:
        """``max_personas`` is a parameter of the run: a larger panel fails when the run is built."""
        if isinstance(params, self.params_model):
            check_max_personas(self.name, config.persona_ids, params)

    def run(self, ctx: EngineContext) -> AsyncIterator[DebateEvent]:
        params = engine_params(ctx, self.params_model)
        check_max_personas(self.name, ctx.persona_ids, params)  # also when driven without the runner
        return self.run_class(ctx, params).events()
