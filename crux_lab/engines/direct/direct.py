"""Two baselines in the crux-card schema: ``direct`` and ``cot``.

No debate at all: one strong-tier call sees the topic and each persona's contract (who they
are, their bias, stakes, way of reasoning, time horizon, what would change their mind and
what evidence they accept), never a proposition list, and writes crux cards. ``cot`` is the
same call asked to reason explicitly first (its reasoning is kept in a status event). They
answer the question a researcher asks of every engine: does a 60-call debate find more, or
better, cruxes than one well-prompted call?

Two parameters make the comparison fair:

- ``informed=true`` shows each persona as the debate engines' speakers see themselves: its
  whole system prompt (:func:`~crux_lab.personas.prompt.build_system_prompt`, in the third
  person), stance block included. The blind call sees the contracts only;
- ``samples=k`` makes the call k times, each listing the people in another order, and merges
  the cards by text (:class:`~crux_lab.engines.crux_room.claims.ClaimIndex`): a persona's side
  on a merged card is its majority answer over the samples that asked it, and the cards asked
  by the most samples come first. Majority voting over samples explains much of what
  multi-agent debate gains in the literature, so a debate must beat it at the same budget.

A reply that stays off-schema after the backend's one repair is dropped with a warning (the
run reports ``no_disagreement_found`` and says why); a card naming an unknown persona keeps
its known positions (a persona may be named by id, display name or a short form), and a card
left with fewer than two positions is dropped with a warning quoting it.

The two calls' purposes (``direct_cards``, ``cot_cards``) are declared here; the simulator's
answer to them is :mod:`crux_lab.engines.direct.sim`, registered here.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from crux_lab.engines import register_engine
from crux_lab.engines.base import EngineContext, EngineParams, engine_params
from crux_lab.engines.crux_room.claims import ClaimIndex
from crux_lab.engines.crux_room.outcome import card_to_crux
from crux_lab.engines.direct.sim import baseline_cards
from crux_lab.engines.names import persona_ref, quote, world_question
from crux_lab.engines.poll import PollParams
from crux_lab.llm.base import Hints, declare_purpose
from crux_lab.llm.simulated import handler
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
from crux_lab.personas.prompt import build_system_prompt


class BaselineParams(PollParams):
    max_cards: int = Field(6, ge=1, le=20)
    informed: bool = Field(False, description="Show each persona's whole system prompt, stances included, not its contract alone.")
    samples: int = Field(1, ge=1, le=32, description="Calls to make and merge by text, sides by majority.")


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

# The baselines' purposes, on the default allocation (strong tier); the simulator answers both
# with its analyst (crux_lab.engines.direct.sim).
DIRECT_CARDS = declare_purpose("direct_cards", Tier.strong, module=__name__)
COT_CARDS = declare_purpose("cot_cards", Tier.strong, module=__name__)
handler(DIRECT_CARDS, COT_CARDS)(baseline_cards)

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


def persona_text(persona: Persona, *, informed: bool) -> str:
    """How the one call shows a persona: its contract, or (``informed``) its whole system
    prompt in the third person, exactly what a debate's speaker is told, stances included."""
    return build_system_prompt(persona, framing="third") if informed else contract_text(persona)


def _orders_count(n: int) -> int:
    return math.factorial(n)


def sample_orders(ids: Sequence[str], samples: int) -> list[list[str]]:
    """The order in which each sample lists the people: the given order first, then the other
    permutations in turn (they repeat past ``n!`` samples).

    >>> sample_orders(["a", "b", "c"], 3)
    [['a', 'b', 'c'], ['a', 'c', 'b'], ['b', 'a', 'c']]
    >>> len(sample_orders(["a", "b"], 3))
    3
    """
    perms = [list(p) for p in itertools.islice(itertools.permutations(ids), samples)]
    return [perms[k % len(perms)] for k in range(samples)]


def merge_samples(drafts: Sequence[Sequence[CruxCard]], max_cards: int, prefix: str, index: ClaimIndex | None = None) -> list[CruxCard]:
    """One card list from several samples' cards: cards that word the same claim (``index``,
    by default the embedder's :class:`ClaimIndex`) are one card, asked in the first wording seen;
    each persona's position is its majority over the samples that placed it (a tie is NUANCED);
    cards asked by more samples come first, at most ``max_cards``; a merged card on which no one
    is left on YES against NO is dropped.

    >>> from crux_lab.models.domain import CruxCardPosition as P
    >>> def card(q, a, b): return CruxCard(id="x", question=q, disagreement_type="evidence", diagnosis="",
    ...     personas={"a": P(position=a, reasoning=""), "b": P(position=b, reasoning="")})
    >>> merged = merge_samples([[card("Is X true?", "YES", "NO")], [card("Is X true?", "YES", "NO"),
    ...     card("Is Y true?", "NO", "YES")], [card("Is X true?", "NO", "NO")]], 5, "d", ClaimIndex(encode=None))
    >>> [(c.question, c.personas["a"].position.value, c.personas["b"].position.value) for c in merged]
    [('Is X true?', 'YES', 'NO'), ('Is Y true?', 'NO', 'YES')]
    """
    index = index if index is not None else ClaimIndex()
    index.prepare([c.question for d in drafts for c in d])
    groups: dict[str, list[CruxCard]] = {}
    support: dict[str, set[int]] = {}
    for k, draft in enumerate(drafts):
        for c in draft:
            key = index.key(c.question)
            groups.setdefault(key, []).append(c)
            support.setdefault(key, set()).add(k)
    ranked = sorted(groups, key=lambda key: -len(support[key]))  # stable: first seen first among equals
    out: list[CruxCard] = []
    for key in ranked:
        cards = groups[key]
        positions: dict[str, CruxCardPosition] = {}
        for pid in dict.fromkeys(p for c in cards for p in c.personas):
            votes = Counter(c.personas[pid].position for c in cards if pid in c.personas)
            top = votes.most_common(2)
            won = top[0][0] if len(top) == 1 or top[0][1] > top[1][1] else CardPosition.NUANCED
            first = next(c.personas[pid] for c in cards if pid in c.personas and c.personas[pid].position == won) \
                if won != CardPosition.NUANCED else next(c.personas[pid] for c in cards if pid in c.personas)
            positions[pid] = first.model_copy(update={"position": won})
        if not {CardPosition.YES, CardPosition.NO} <= {p.position for p in positions.values()}:
            continue
        types = Counter(c.disagreement_type for c in cards)
        out.append(cards[0].model_copy(update={
            "id": f"{prefix}-card-{len(out) + 1}", "personas": positions, "disagreement_type": types.most_common(1)[0][0],
        }))
        if len(out) >= max_cards:
            break
    return out


def position_camps(cards: list[CruxCard], persona_ids: list[str]) -> list[Camp]:
    """Camps: groups of personas that answer every card the same way."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for pid in persona_ids:
        key = tuple(c.personas[pid].position.value if pid in c.personas else "-" for c in cards)
        groups.setdefault(key, []).append(pid)
    return [Camp(index=i, persona_ids=ids, label=", ".join(ids)) for i, ids in enumerate(groups.values())]


@register_engine
class DirectEngine:
    """One strong-tier call from the topic and the contracts (``informed``: the speakers' whole
    system prompts) to crux cards; ``samples`` calls merged by text."""

    name: ClassVar[str] = "direct"
    description: ClassVar[str] = "Baseline: one call from topic and persona contracts to crux cards"
    params_model: ClassVar[type[EngineParams]] = BaselineParams
    min_personas: ClassVar[int] = 2
    max_personas: ClassVar[int] = 8
    purpose: ClassVar[str] = DIRECT_CARDS
    task: ClassVar[str] = DIRECT_TASK

    async def run(self, ctx: EngineContext) -> AsyncGenerator[DebateEvent, None]:
        params = engine_params(ctx, BaselineParams)
        ids = ctx.persona_ids
        topic = ctx.config.topic
        yield EngineStart(engine=self.name, topic=topic, persona_ids=ids, backend=ctx.backend.name, run_id=ctx.run_id)
        names = {pid: ctx.personas[pid].name for pid in ids}
        described = {pid: persona_text(ctx.personas[pid], informed=params.informed) for pid in ids}
        drafts: list[list[CruxCard]] = []
        warning: EngineError | None = None
        for k, order in enumerate(sample_orders(ids, params.samples)):
            people = "\n\n".join(f"[{pid}] {ctx.personas[pid].name}\n{described[pid]}" for pid in order)
            user = f"Topic: {topic}\n\nThe people (id in brackets):\n\n{people}\n\n" + self.task.format(max_cards=params.max_cards)
            if k >= _orders_count(len(ids)):
                user += f"\n\n(Independent draft {k + 1}.)"
            request = ctx.request(
                self.purpose, SYSTEM, user, output_schema=CardsReply,
                hints=Hints(topic=topic, phase="cards", extra={"contracts": {pid: described[pid] for pid in order}}),
            )
            if self.purpose not in ctx.config.allocation:
                request = request.model_copy(update={"tier": _ALLOCATION["tier"], "temperature": _ALLOCATION["temperature"], "max_tokens": _ALLOCATION["max_tokens"]})
            response, warning = await ctx.call_or_warn(request)
            if warning is not None:
                yield warning
            elif response is not None and isinstance(response.parsed, CardsReply):
                if response.parsed.reasoning.strip():
                    yield Status(message=f"reasoning: {response.parsed.reasoning.strip()}")
                drafted, warnings = cards_from_reply(response.parsed, names, params.max_cards, self.name, self.purpose)
                for w in warnings:
                    yield w
                drafts.append(drafted)
        cards = drafts[0] if len(drafts) == 1 else merge_samples(drafts, params.max_cards, self.name)
        if len(drafts) > 1:
            yield Status(message=f"merged {sum(len(d) for d in drafts)} cards from {len(drafts)} samples into {len(cards)}")
        if drafts:
            warning = None  # some sample was usable
        result = ctx.result
        made = "one call" if params.samples == 1 else f"{params.samples} merged calls"
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
            result.regime_description = f"The {'one call' if params.samples == 1 else 'merged calls'} named no point on which these personas disagree."
        elif split and len(result.camps) >= 2:
            result.regime = Regime.polarized
            result.regime_description = f"{len(cards)} crux card(s) from {made}; {len(split)} with a YES and a NO side; {len(result.camps)} camps."
        else:
            result.regime = Regime.partial
            result.regime_description = f"{len(cards)} crux card(s) from {made}; {len(split)} with a YES and a NO side."
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
    purpose: ClassVar[str] = COT_CARDS
    task: ClassVar[str] = COT_TASK


__all__ = [
    "BaselineParams", "CardsReply", "CotEngine", "DirectEngine", "cards_from_reply", "contract_text", "merge_samples",
    "persona_text", "sample_orders",
]
