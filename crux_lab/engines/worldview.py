"""The worldview step: the buried premise under a disagreement, not the topic restated.

Shared by the engines that want it. Two kinds of call:

1. **positions** (one persona call each, purpose ``worldview_positions``): the persona states
   its positions on the topic, each with the implicit assumptions it rests on. The panel asks
   for them in its opening turns instead (no call of its own), and passes them in;
2. **conflicts** (one extractor call per pair, purpose ``crux_pairs``,
   :func:`pair_conflicts`): a reader who sees only the two personas' positions texts lists the
   assumptions that conflict between them, each typed (empirical, causal, temporal, value or
   boundary) and with a question that would settle it.

:func:`run_worldview` makes the calls and returns a :class:`Worldview`; :func:`worldview_cruxes`
turns its conflicts into :class:`~crux_lab.models.Crux` items (``source="assumption"``) whose
statement is the settling question, so a crux names the premise, and whose sides are the two
personas' conflicting assumptions. A reply still off-schema after the backend's one repair is
skipped with a warning (``Worldview.warnings``: yield them).

The ``worldview`` engine runs the step alone, with no debate after it: a baseline that shows
what the debates of panel and crux_rooms add to the step they run first.

The five assumption types map onto the project's :class:`~crux_lab.models.DisagreementType`
(:data:`TYPE_MAP`): empirical -> evidence, causal -> premise, temporal -> horizon,
value -> values, boundary -> definition.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from crux_lab.engines import register_engine
from crux_lab.engines.base import EngineContext, EngineParams, engine_params
from crux_lab.engines.crux_room.timeline import Timeline
from crux_lab.engines.poll import PollParams, as_question, is_open
from crux_lab.llm.base import Hints
from crux_lab.llm.purposes import Purpose
from crux_lab.models.domain import Crux, CruxSide, DisagreementType, Regime
from crux_lab.models.events import DebateEvent, EngineComplete, EngineError, EngineStart, Status
from crux_lab.personas.loader import propositions_for
from crux_lab.personas.prompt import build_system_prompt

AssumptionType = Literal["empirical", "causal", "temporal", "value", "boundary"]

#: Worldview assumption types -> the project's crux taxonomy.
TYPE_MAP: dict[str, DisagreementType] = {
    "empirical": DisagreementType.evidence,
    "causal": DisagreementType.premise,
    "temporal": DisagreementType.horizon,
    "value": DisagreementType.values,
    "boundary": DisagreementType.definition,
}

POSITIONS_PURPOSE = Purpose.worldview_positions
CONFLICTS_PURPOSE = Purpose.crux_pairs


class Position(BaseModel):
    """One position a persona takes on the topic, with what it silently assumes."""

    position: str = Field(min_length=1)
    assumptions: list[str] = Field(default_factory=list)


class PositionsReply(BaseModel):
    positions: list[Position] = Field(default_factory=list)


class Conflict(BaseModel):
    """Two assumptions that cannot both hold, and how one would find out which does."""

    assumption_a: str = Field(min_length=1)
    assumption_b: str = Field(min_length=1)
    type: AssumptionType
    settling_question: str = Field(min_length=1)


class ConflictsReply(BaseModel):
    conflicts: list[Conflict] = Field(default_factory=list)


@dataclass
class PairConflicts:
    a: str
    b: str
    conflicts: list[Conflict]


@dataclass
class Worldview:
    """What the worldview step found: each persona's positions, each pair's conflicts."""

    positions: dict[str, list[Position]] = field(default_factory=dict)
    pairs: list[PairConflicts] = field(default_factory=list)
    warnings: list[EngineError] = field(default_factory=list)


POSITIONS_PROMPT = (
    "Topic: {topic}\n\n{grounding}"
    "State your positions on this topic: up to {n} claims you would defend, each with the "
    "implicit assumptions it rests on (what must be true, or what you take for granted, for "
    "the claim to hold; things you rarely say out loud). Reply as JSON with one field "
    '"positions": a list of {{"position": one sentence in your own words, "assumptions": a '
    "list of one-sentence assumptions}}."
)

CONFLICTS_SYSTEM = (
    "You find the buried premise under a disagreement. You read two people's stated positions "
    "and the assumptions under them, and list the assumptions that conflict: pairs that cannot "
    "both be true, or that weigh things in opposite ways. Never restate the debate topic as a "
    "conflict: name the premise underneath it."
)

CONFLICTS_PROMPT = (
    "Topic: {topic}\n\n{a_name}'s positions:\n{a_text}\n\n{b_name}'s positions:\n{b_text}\n\n"
    "List the conflicting assumptions between {a_name} and {b_name}. Reply as JSON with one "
    'field "conflicts": a list of {{"assumption_a": what {a_name} assumes, in one sentence, '
    '"assumption_b": the assumption of {b_name} that conflicts with it, "type": one of '
    '"empirical" (a fact about the world), "causal" (what causes what), "temporal" (over what '
    'time horizon), "value" (what matters more), "boundary" (what a word covers or where a '
    'category ends), "settling_question": one concrete question whose answer would settle '
    "which assumption holds (an observation, a measurement or a decision, not the topic)}}. "
    "[] if their assumptions do not conflict."
)


def positions_text(positions: Sequence[Position]) -> str:
    """A persona's positions as a reader sees them: one numbered line each, its assumptions
    indented under it.

    >>> print(positions_text([Position(position="Rents fall.", assumptions=["Supply matters."])]))
    1. Rents fall.
       assumes: Supply matters.
    """
    lines = []
    for i, p in enumerate(positions, start=1):
        lines.append(f"{i}. {p.position.strip()}")
        lines.extend(f"   assumes: {a.strip()}" for a in p.assumptions if a.strip())
    return "\n".join(lines) or "(no positions stated)"


def persona_system(ctx: EngineContext, persona_id: str) -> str:
    """The persona's system block, byte-identical to the one its debate turns send (the crux
    engines' :func:`~crux_lab.engines.crux_room.prompts.persona_system_prompt`, with the deck's
    propositions), so a prompt cache written by one call is read by the next."""
    return build_system_prompt(ctx.personas[persona_id], propositions=propositions_for(ctx.persona_ids))


async def persona_positions(ctx: EngineContext, persona_id: str, topic: str, n: int = 4) -> tuple[list[Position], EngineError | None]:
    """One persona's positions on ``topic`` with their implicit assumptions (a persona call)."""
    grounding = ctx.grounding(persona_id, topic)
    user = POSITIONS_PROMPT.format(
        topic=topic, n=n, grounding=f"What you know that bears on it:\n{grounding}\n\n" if grounding else ""
    )
    request = ctx.request(
        POSITIONS_PURPOSE,
        persona_system(ctx, persona_id),
        user,
        output_schema=PositionsReply,
        hints=Hints(topic=topic, speaker_id=persona_id, phase="worldview"),
        cache_system=True,
    )
    response, warning = await ctx.call_or_warn(request)
    if response is None or not isinstance(response.parsed, PositionsReply):
        return [], warning
    return [p for p in response.parsed.positions[:n] if p.position.strip()], None


async def pair_conflicts(
    ctx: EngineContext, a: str, b: str, positions: dict[str, list[Position]], topic: str
) -> tuple[list[Conflict], EngineError | None]:
    """The conflicting assumptions of personas ``a`` and ``b`` (an extractor call that sees
    only the topic and the two positions texts)."""
    name = {p: ctx.personas[p].name for p in (a, b)}
    a_text, b_text = positions_text(positions.get(a, [])), positions_text(positions.get(b, []))
    user = CONFLICTS_PROMPT.format(topic=topic, a_name=name[a], b_name=name[b], a_text=a_text, b_text=b_text)
    request = ctx.request(
        CONFLICTS_PURPOSE,
        CONFLICTS_SYSTEM,
        user,
        output_schema=ConflictsReply,
        hints=Hints(
            topic=topic,
            phase="worldview",
            extra={"positions": {a: a_text, b: b_text}},
        ),
    )
    response, warning = await ctx.call_or_warn(request)
    if response is None or not isinstance(response.parsed, ConflictsReply):
        return [], warning
    conflicts = [c for c in response.parsed.conflicts if c.settling_question.strip()]
    kept = [c for c in conflicts if not one_assumption(c)]
    if len(kept) == len(conflicts):
        return kept, None
    same = next(c for c in conflicts if one_assumption(c))
    return kept, EngineError(
        level="warning",
        purpose=CONFLICTS_PURPOSE,
        error=f"{len(conflicts) - len(kept)} conflict(s) between {name[a]} and {name[b]} dropped: both sides "
        f"state the same assumption ({same.assumption_a.strip()[:80]!r}), which is no conflict",
    )


def one_assumption(conflict: Conflict) -> bool:
    """Whether a "conflict" states the same assumption on both sides (case, spacing and final
    punctuation aside). Only the same words count: two assumptions in nearly the same words
    may be each other's negation.

    >>> one_assumption(Conflict(assumption_a="Supply cuts rents.", assumption_b="supply cuts  rents",
    ...     type="causal", settling_question="Did rents fall where supply rose?"))
    True
    >>> one_assumption(Conflict(assumption_a="Supply cuts rents.", assumption_b="Supply does not cut rents.",
    ...     type="causal", settling_question="Did rents fall where supply rose?"))
    False
    """
    def norm(text: str) -> str:
        return " ".join(text.casefold().split()).rstrip(".!?;: ")

    return norm(conflict.assumption_a) == norm(conflict.assumption_b)


async def run_worldview(
    ctx: EngineContext,
    persona_ids: Sequence[str] | None = None,
    topic: str | None = None,
    *,
    positions_per_persona: int = 4,
    stated: dict[str, list[Position]] | None = None,
    timeline: Timeline | None = None,
) -> Worldview:
    """Positions per persona (concurrent calls; ``stated`` gives them when the personas
    already stated them, e.g. in their openings), then each pair's conflicts, one concurrent
    reader call per pair (:func:`pair_conflicts`; a ``timeline`` records them as one parallel
    stage).

    One reading of every pair at once would cost one call instead of n(n-1)/2, but on a small
    model it loses what the pairs find: on Qwen2.5-Coder-1.5B, with the positions four personas
    stated in a panel's openings, it listed no conflict in 2 of 4 readings and one in the other
    two, while one reading per pair listed four (in two pairs).
    """
    ids = list(persona_ids or ctx.persona_ids)
    topic = topic or ctx.config.topic
    out = Worldview()
    if stated is not None:
        out.positions = {pid: list(stated.get(pid, [])) for pid in ids}
    else:
        asked = await asyncio.gather(*(persona_positions(ctx, pid, topic, positions_per_persona) for pid in ids))
        for pid, (positions, warning) in zip(ids, asked, strict=True):
            out.positions[pid] = positions
            if warning is not None:
                out.warnings.append(warning)
    pairs = [(a, b) for a, b in combinations(ids, 2) if out.positions.get(a) and out.positions.get(b)]
    reads = [pair_conflicts(ctx, a, b, out.positions, topic) for a, b in pairs]
    read = await (timeline.parallel(CONFLICTS_PURPOSE, reads) if timeline is not None else asyncio.gather(*reads))
    for (a, b), (conflicts, warning) in zip(pairs, read, strict=True):
        out.pairs.append(PairConflicts(a, b, conflicts))
        if warning is not None:
            out.warnings.append(warning)
    return out


def worldview_cruxes(view: Worldview, *, prefix: str = "wv") -> list[Crux]:
    """The conflicts as cruxes: the settling question is the statement (the premise to settle),
    the two conflicting assumptions are its sides, its type maps through :data:`TYPE_MAP`.
    The same settling question raised by several pairs is one crux with every side.

    A settling question that is open ("What would the rent increase be ...?", "Why is ...?")
    has no yes and no no, so it cannot be a crux (the poll rules it out unasked); the crux then
    states the first side's assumption, which the other side's contradicts, and keeps the open
    question as the test that would settle it.

    >>> v = Worldview(pairs=[PairConflicts("a", "b", [Conflict(assumption_a="Supply cuts rents.",
    ...     assumption_b="Rents follow demand.", type="causal",
    ...     settling_question="Did rents fall where supply rose?")])])
    >>> c = worldview_cruxes(v)[0]
    >>> c.statement, c.disagreement_type.value, [s.persona_id for s in c.yes_side + c.no_side]
    ('Did rents fall where supply rose?', 'premise', ['a', 'b'])
    >>> v.pairs[0].conflicts[0].settling_question = "How far did rents fall where supply rose?"
    >>> c = worldview_cruxes(v)[0]
    >>> c.statement, c.settling_question
    ('Supply cuts rents.', 'How far did rents fall where supply rose?')
    """
    by_question: dict[str, Crux] = {}
    for pair in view.pairs:
        for conflict in pair.conflicts:
            question = conflict.settling_question.strip()
            statement = conflict.assumption_a.strip() if is_open(as_question(question)) else question
            key = " ".join(statement.lower().split())
            crux = by_question.get(key)
            if crux is None:
                crux = by_question[key] = Crux(
                    id=f"{prefix}{len(by_question) + 1}",
                    statement=statement,
                    source="assumption",
                    disagreement_type=TYPE_MAP[conflict.type],
                    settling_question=question,
                    proposed_by=[pair.a, pair.b],
                )
            crux.assumptions.extend(x for x in (conflict.assumption_a, conflict.assumption_b) if x not in crux.assumptions)
            # a pair that states the same conflict twice adds its sides once
            for side, pid, said in ((crux.yes_side, pair.a, conflict.assumption_a), (crux.no_side, pair.b, conflict.assumption_b)):
                if not any(x.persona_id == pid and x.statement == said for x in side):
                    side.append(CruxSide(persona_id=pid, statement=said))
            crux.proposed_by = list(dict.fromkeys([*crux.proposed_by, pair.a, pair.b]))
    return list(by_question.values())


class WorldviewParams(PollParams):
    positions: int = Field(4, ge=1, le=8, description="Positions each persona states.")


@register_engine
class WorldviewEngine:
    """The worldview step alone: each persona's positions, then every pair's conflicts."""

    name: ClassVar[str] = "worldview"
    description: ClassVar[str] = "Baseline: the worldview step alone (positions, then each pair's conflicting assumptions), no debate"
    params_model: ClassVar[type[EngineParams]] = WorldviewParams
    min_personas: ClassVar[int] = 2
    max_personas: ClassVar[int] = 8

    async def run(self, ctx: EngineContext) -> AsyncGenerator[DebateEvent, None]:
        params = engine_params(ctx, WorldviewParams)
        ids = ctx.persona_ids
        yield EngineStart(engine=self.name, topic=ctx.config.topic, persona_ids=ids, backend=ctx.backend.name, run_id=ctx.run_id)
        view = await run_worldview(ctx, positions_per_persona=params.positions)
        for w in view.warnings:
            yield w
        names = {pid: ctx.personas[pid].name for pid in ids}
        for pid, positions in view.positions.items():
            if positions:
                yield Status(message=f"{names[pid]}'s positions and what they assume:\n{positions_text(positions)}")
        result = ctx.result
        result.cruxes = worldview_cruxes(view)
        result.fault_lines = [c.statement for c in result.cruxes]
        if result.cruxes:
            result.regime = Regime.partial
            result.regime_description = f"{len(result.cruxes)} conflicting assumption(s) between {len(view.pairs)} pair(s), found without a debate."
        else:
            result.regime = Regime.no_disagreement_found
            result.regime_description = "No pair's positions had conflicting assumptions."
        yield EngineComplete(complete=True, regime=result.regime, summary=result.regime_description)


__all__ = [
    "CONFLICTS_PURPOSE",
    "POSITIONS_PURPOSE",
    "TYPE_MAP",
    "Conflict",
    "ConflictsReply",
    "PairConflicts",
    "Position",
    "PositionsReply",
    "Worldview",
    "WorldviewEngine",
    "one_assumption",
    "pair_conflicts",
    "persona_positions",
    "positions_text",
    "run_worldview",
    "worldview_cruxes",
]
