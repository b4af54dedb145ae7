"""Two baselines in the crux-card schema: ``direct`` and ``cot``.

No debate at all: one strong-tier call sees the topic and each persona's contract (who they
are, their bias, stakes, way of reasoning, time horizon, what would change their mind and
what evidence they accept), never a proposition list, and writes crux cards. ``cot`` is the
same call asked to reason explicitly first (its reasoning is kept in a status event). They
answer the question a researcher asks of every engine: does a 60-call debate find more, or
better, cruxes than one well-prompted call?

A reply that stays off-schema after the backend's one repair is dropped with a warning (the
run reports ``no_disagreement_found`` and says why); a card naming an unknown persona keeps
its known positions (a persona may be named by id, display name or a short form), and a card
left with fewer than two positions is dropped with a warning quoting it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from crux_lab.engines import register_engine
from crux_lab.engines.base import EngineContext, EngineParams, engine_params
from crux_lab.engines.crux_room.outcome import card_to_crux
from crux_lab.engines.names import persona_ref, quote, world_question
from crux_lab.llm.base import Hints
from crux_lab.llm.purposes import Purpose
from crux_lab.models.domain import (
    Camp,
    CardPosition,
    CruxCard,
    CruxCardPosition,
    DisagreementType,
    Regime,
    Tier,
)
from crux_lab.models.events import (
    CruxCardPosted,
    DebateEvent,
    EngineComplete,
    EngineError,
    EngineStart,
    Status,
)
from crux_lab.personas.models import Persona


class BaselineParams(EngineParams):
    max_cards: int = Field(6, ge=1, le=20)


class CardPositionReply(BaseModel):
    persona: str
    position: Literal["YES", "NO", "NUANCED"]
    reasoning: str = ""
    falsifier: str | None = None


class CardReply(BaseModel):
    question: str = Field(min_length=1)
    disagreement_type: Literal["premise", "evidence", "values", "definition", "horizon", "claim"]
    diagnosis: str = ""
    positions: list[CardPositionReply] = Field(default_factory=list)


class CardsReply(BaseModel):
    reasoning: str = ""
    cards: list[CardReply] = Field(default_factory=list)


SYSTEM = (
    "You are an analyst of disagreements. Given a topic and descriptions of the people "
    "debating it, you find their cruxes: the buried premises under their disagreement, the "
    "claims which, if one of them changed their mind about it, would change their view of the "
    "topic. A crux is never the topic restated: name the premise underneath it."
)

CARD_FIELDS = (
    '"cards": a list of at most {max_cards} crux cards, the most decisive first, each '
    '{{"question": a yes/no question naming the buried premise (not the topic), '
    '"disagreement_type": one of "premise", "evidence", "values", "definition", "horizon", '
    '"claim", "diagnosis": one or two sentences on why they split on it, '
    '"positions": one entry per person, {{"persona": the person\'s id as listed above, '
    '"position": "YES", "NO" or "NUANCED", "reasoning": why they answer so, "falsifier": a '
    "concrete observation that would change their answer, or null}}}}. [] if they do not disagree."
)

DIRECT_TASK = "Reply as JSON with one field, " + CARD_FIELDS
COT_TASK = (
    "First think step by step: for each person, what they believe about the topic and what "
    "that rests on; then, for each pair, where those premises conflict; then which conflicts "
    'decide the topic. Reply as JSON with two fields: "reasoning": your step-by-step '
    "thinking, and " + CARD_FIELDS
)

# A one-call baseline writes several cards: more room than the default allocation.
_ALLOCATION = {"tier": Tier.strong, "temperature": 0.3, "max_tokens": 3000}


def contract_text(persona: Persona) -> str:
    """A persona's contract as the baselines' prompt shows it (no positions, no beliefs)."""
    c = persona.contract
    ev = c.evidence_policy
    lines = [
        f"Who: {c.personality}",
        f"Bias: {c.bias}",
        f"Stakes: {c.stakes}",
        f"How they reason: {c.epistemology}",
        f"Time horizon: {c.time_horizon}",
        f"What would change their mind: {c.flip_conditions}",
    ]
    if ev.accepts:
        lines.append("Evidence they accept: " + "; ".join(ev.accepts) + ".")
    if ev.rejects:
        lines.append("Evidence they discount: " + "; ".join(ev.rejects) + ".")
    return "\n".join(lines)


def cards_from_reply(
    reply: CardsReply, personas: Sequence[str] | Mapping[str, str], max_cards: int, prefix: str, purpose: str | None = None
) -> tuple[list[CruxCard], list[EngineError]]:
    """The reply's cards as :class:`CruxCard` (ids ``{prefix}-card-N``). ``personas`` maps
    each persona id to its display name (a list of ids stands for itself); a position's persona
    may be named by id, display name or a short form (:func:`~crux_lab.engines.names.persona_ref`).
    A position naming no one persona unambiguously, or one already placed on that card, is
    dropped, and a card left with fewer than two positions is dropped, each with a warning
    (quoting what was refused) under the call's ``purpose`` (default ``prefix``). A question
    that asks what someone believes is asked as the claim itself
    (:func:`~crux_lab.engines.names.world_question`), and a card asking an earlier card's
    question again, or one every persona answers the same way, is dropped, each with a warning."""
    purpose = purpose or prefix
    names = dict(personas) if isinstance(personas, Mapping) else {pid: pid for pid in personas}
    cards: list[CruxCard] = []
    warnings: list[EngineError] = []

    def warn(text: str) -> None:
        warnings.append(EngineError(level="warning", purpose=purpose, error=text))

    for i, c in enumerate(reply.cards[:max_cards], start=1):
        positions: dict[str, CruxCardPosition] = {}
        for p in c.positions:
            pid = persona_ref(p.persona, names)
            if pid is None:
                warn(f"card {i} ({quote(c.question)}): position of {quote(p.persona)} dropped: it names no one persona of {', '.join(names)}")
            elif pid in positions:
                warn(f"card {i} ({quote(c.question)}): a second position of {pid} ({quote(p.persona)}) dropped")
            else:
                positions[pid] = CruxCardPosition(position=CardPosition(p.position), reasoning=p.reasoning, falsifier=p.falsifier or None)
        if len(positions) < 2:
            warn(f"card {i} dropped: fewer than two known personas take a position on {quote(c.question)}")
            continue
        if len({p.position for p in positions.values()}) == 1:
            answer = next(iter(positions.values())).position.value
            warn(f"card {i} dropped: every persona answers {answer} to {quote(c.question)}, so it divides no one")
            continue
        question = c.question.strip()
        if (about_world := world_question(question, names)) is not None:
            warn(f"card {i}: its question asks about a person or the debate, not the claim, {quote(question)}; asked as {quote(about_world)}")
            question = about_world
        if any(k.question.casefold() == question.casefold() for k in cards):
            warn(f"card {i} dropped: an earlier card asks the same question, {quote(question)}")
            continue
        cards.append(
            CruxCard(
                id=f"{prefix}-card-{len(cards) + 1}",
                question=question,
                disagreement_type=DisagreementType(c.disagreement_type),
                diagnosis=c.diagnosis.strip(),
                personas=positions,
            )
        )
    return cards, warnings


def position_camps(cards: list[CruxCard], persona_ids: list[str]) -> list[Camp]:
    """Camps: groups of personas that answer every card the same way."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for pid in persona_ids:
        key = tuple(c.personas[pid].position.value if pid in c.personas else "-" for c in cards)
        groups.setdefault(key, []).append(pid)
    return [Camp(index=i, persona_ids=ids, label=", ".join(ids)) for i, ids in enumerate(groups.values())]


@register_engine
class DirectEngine:
    """One strong-tier call from the topic and the contracts to crux cards."""

    name: ClassVar[str] = "direct"
    description: ClassVar[str] = "Baseline: one call from topic and persona contracts to crux cards"
    params_model: ClassVar[type[EngineParams]] = BaselineParams
    min_personas: ClassVar[int] = 2
    max_personas: ClassVar[int] = 8
    purpose: ClassVar[str] = Purpose.direct_cards
    task: ClassVar[str] = DIRECT_TASK

    async def run(self, ctx: EngineContext) -> AsyncGenerator[DebateEvent, None]:
        params = engine_params(ctx, BaselineParams)
        ids = ctx.persona_ids
        topic = ctx.config.topic
        yield EngineStart(engine=self.name, topic=topic, persona_ids=ids, backend=ctx.backend.name, run_id=ctx.run_id)
        contracts = {pid: contract_text(ctx.personas[pid]) for pid in ids}
        people = "\n\n".join(f"[{pid}] {ctx.personas[pid].name}\n{text}" for pid, text in contracts.items())
        user = f"Topic: {topic}\n\nThe people (id in brackets):\n\n{people}\n\n" + self.task.format(max_cards=params.max_cards)
        request = ctx.request(
            self.purpose, SYSTEM, user, output_schema=CardsReply,
            hints=Hints(topic=topic, phase="cards", extra={"contracts": contracts}),
        )
        if self.purpose not in ctx.config.allocation:
            request = request.model_copy(update={"tier": _ALLOCATION["tier"], "temperature": _ALLOCATION["temperature"], "max_tokens": _ALLOCATION["max_tokens"]})
        names = {pid: ctx.personas[pid].name for pid in ids}
        response, warning = await ctx.call_or_warn(request)
        cards: list[CruxCard] = []
        if warning is not None:
            yield warning
        elif response is not None and isinstance(response.parsed, CardsReply):
            if response.parsed.reasoning.strip():
                yield Status(message=f"reasoning: {response.parsed.reasoning.strip()}")
            cards, warnings = cards_from_reply(response.parsed, names, params.max_cards, self.name, self.purpose)
            for w in warnings:
                yield w
        result = ctx.result
        for card in cards:
            yield CruxCardPosted(card=card)
        result.crux_cards = cards
        result.cruxes = [card_to_crux(c, acknowledged=False, names=names) for c in cards]
        result.camps = position_camps(cards, ids) if cards else []
        split = [c for c in cards if {x.position for x in c.personas.values()} >= {CardPosition.YES, CardPosition.NO}]
        if warning is not None:
            result.regime = Regime.no_disagreement_found
            result.regime_description = "The one call's reply was unusable after a repair, so nothing was found."
        elif not cards:
            result.regime = Regime.no_disagreement_found
            result.regime_description = "The one call named no point on which these personas disagree."
        elif split and len(result.camps) >= 2:
            result.regime = Regime.polarized
            result.regime_description = f"{len(cards)} crux card(s) from one call; {len(split)} with a YES and a NO side; {len(result.camps)} camps."
        else:
            result.regime = Regime.partial
            result.regime_description = f"{len(cards)} crux card(s) from one call; {len(split)} with a YES and a NO side."
        result.fault_lines = [c.question for c in split]
        result.flip_conditions = {
            pid: [x.falsifier for c in cards if (x := c.personas.get(pid)) is not None and x.falsifier]
            for pid in ids
        }
        result.flip_conditions = {k: list(dict.fromkeys(v)) for k, v in result.flip_conditions.items() if v}
        yield EngineComplete(complete=True, regime=result.regime, summary=result.regime_description)


@register_engine
class CotEngine(DirectEngine):
    """The same one call, asked to reason step by step before writing the cards."""

    name: ClassVar[str] = "cot"
    description: ClassVar[str] = "Baseline: one chain-of-thought call from topic and persona contracts to crux cards"
    purpose: ClassVar[str] = Purpose.cot_cards
    task: ClassVar[str] = COT_TASK


__all__ = ["BaselineParams", "CardsReply", "CotEngine", "DirectEngine", "cards_from_reply", "contract_text"]
