"""The ``dialogue`` and ``dcg`` engines: one moderated dialogue, two kinds of graph.

Both run the same dialogue layer, controller and four phases
(:mod:`crux_lab.engines.dialogue`); they differ only in what the crystallizer writes:
``dialogue`` keeps a sparse Dung argument graph (grounded = common ground, preferred = camps),
``dcg`` keeps a dispute-centric graph (Dispute -> Stance -> Reason), where contradictory
stances on one dispute are a crux by construction and can never count as common ground.

>>> DialogueEngine.name, DCGEngine.name
('dialogue', 'dcg')
>>> sorted(DialogueParams.model_fields)[:3]
['circling_detection', 'circling_threshold', 'circling_window']
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import ClassVar

from crux_lab.engines import register_engine
from crux_lab.engines.base import (
    EngineConfigError,
    EngineContext,
    EngineParams,
    check_personas,
    engine_params,
)
from crux_lab.engines.dialogue import sim  # noqa: F401  (registers the simulator's answers to the family's purposes)
from crux_lab.engines.dialogue.crystallizer import (
    Crystallizer,
    DCGCrystallizer,
    GraphCrystallizer,
)
from crux_lab.engines.dialogue.engine import DialogueParams, DialogueRun, dialogue_system
from crux_lab.models.events import DebateEvent


@register_engine
class DialogueEngine:
    """Short move-tagged dialogue, periodically crystallized into a sparse Dung argument graph."""

    name: ClassVar[str] = "dialogue"
    description: ClassVar[str] = (
        "Dialogue: short move-tagged exchanges, a moderator, and a crystallizer that distills "
        "them into a sparse Dung argument graph."
    )
    params_model: ClassVar[type[EngineParams]] = DialogueParams
    structure: ClassVar[str] = "graph"  # the live console's counts (engines.base.Engine)
    min_personas: ClassVar[int] = 2
    max_personas: ClassVar[int] = 6

    def crystallizer(self, ctx: EngineContext, params: DialogueParams, names: dict[str, str]) -> Crystallizer:
        return GraphCrystallizer(ctx.config.topic, ctx.persona_ids, names)

    def persona_system(self, ctx: EngineContext, persona_id: str) -> str:
        """The persona's system prompt as its dialogue turns send it (the poll asks with it)."""
        return dialogue_system(ctx, engine_params(ctx, DialogueParams), persona_id)

    async def run(self, ctx: EngineContext) -> AsyncGenerator[DebateEvent, None]:
        check_personas(self, ctx.persona_ids)
        need = 2 * len(ctx.persona_ids)
        if ctx.config.max_turns < need:
            raise EngineConfigError(
                f"engine '{self.name}' needs max_turns >= {need} for {len(ctx.persona_ids)} personas "
                f"(one opening and one resolution turn each); got {ctx.config.max_turns}. Raise max_turns."
            )
        params = engine_params(ctx, DialogueParams)
        names = {pid: (ctx.personas[pid].name if pid in ctx.personas else pid) for pid in ctx.persona_ids}
        run = DialogueRun(ctx, params, self.crystallizer(ctx, params, names), self.name)
        async for event in run.events():
            yield event


@register_engine
class DCGEngine(DialogueEngine):
    """The same dialogue, crystallized into disputes, stances and reasons instead."""

    name: ClassVar[str] = "dcg"
    description: ClassVar[str] = (
        "Dispute-centric graph: the dialogue engine's exchanges crystallized into binary disputes "
        "with YES/NO stances and reasons, so contradictions are cruxes and never fake common ground."
    )
    structure: ClassVar[str] = "dcg"

    def crystallizer(self, ctx: EngineContext, params: DialogueParams, names: dict[str, str]) -> Crystallizer:
        return DCGCrystallizer(ctx.config.topic, ctx.persona_ids, names, params.max_new_disputes)


__all__ = ["DCGEngine", "DialogueEngine", "DialogueParams"]
