"""The engine shell and per-run state shared by the ``panel`` and ``crux_rooms`` engines.

:class:`CruxEngine` checks the run's own persona maximum (``params.max_personas``) when the
run is built (the runner's ``check_config`` hook) and again when it starts (for an engine
driven without the runner). :class:`CruxRun` holds what both runs keep: the call timeline,
the speakers with their anti-sycophancy stack, the debate memory and the crux rooms, and it
exposes them in ``ctx.scratch`` for tests and benchmarks.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar, Generic, TypeVar

from crux_lab.engines.base import EngineContext, EngineParams, engine_params
from crux_lab.engines.crux_room.context import DebateMemory
from crux_lab.engines.crux_room.outcome import RoomRecord
from crux_lab.engines.crux_room.params import HARD_MAX_PERSONAS, CruxParams, check_max_personas
from crux_lab.engines.crux_room.speaker import Speakers
from crux_lab.engines.crux_room.timeline import Timeline
from crux_lab.models import DebateConfig, DebateEvent

P = TypeVar("P", bound=CruxParams)


class CruxRun(Generic[P]):
    """One run's shared state; subclasses add their own and implement :meth:`events`."""

    def __init__(self, ctx: EngineContext, params: P, **scratch: Any) -> None:
        self.ctx = ctx
        self.p = params
        self.timeline = Timeline()
        self.sp = Speakers(ctx, params.antisyc(), self.timeline)
        self.memory = DebateMemory(topic=ctx.config.topic, names=dict(self.sp.names))
        self.rooms: list[RoomRecord] = []
        ctx.scratch.update(
            timeline=self.timeline, anti_sycophancy=self.sp.stats, context_tokens=self.sp.context_tokens,
            rejected_cards=self.sp.rejected_cards, rooms=self.rooms, stance_records=self.sp.tracker.records,
            **scratch,
        )

    def events(self) -> AsyncIterator[DebateEvent]:
        raise NotImplementedError


class CruxEngine(Generic[P]):
    """Engine shell: subclasses set ``name``, ``description``, ``params_model`` and ``run_class``."""

    name: ClassVar[str]
    description: ClassVar[str]
    params_model: ClassVar[type[Any]]
    run_class: ClassVar[type[CruxRun[Any]]]
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
