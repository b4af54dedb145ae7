"""Shared first steps of the blitz, classical and graph engines (seed 02 §1, seed 03).

topic -> 2-4 testable sub-claims (fast tier) -> tables of 3-5 personas -> initial stances
(one strong-tier call per persona, in parallel).

The simulator reports which deck proposition each claim came from in
``LLMResponse.annotations["proposition_ids"]``; it is copied generically and a real model
simply leaves it empty.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from crux_lab.engines.base import EngineContext
from crux_lab.llm.base import Hints

StanceWord = Literal["pro", "con", "uncertain"]


@dataclass
class Claim:
    """A testable sub-claim of the topic (runtime)."""

    id: str
    text: str
    proposition_id: str | None = None

    @property
    def key(self) -> str:
        """The key used in stance dicts: the proposition id when known, else the claim id."""
        return self.proposition_id or self.id


@dataclass
class AgentStance:
    """One persona's stance on one claim at one point of the debate (runtime)."""

    claim_id: str
    stance: StanceWord
    confidence: float
    reasoning: str = ""
    round: int = 0


@dataclass
class AgentState:
    persona_id: str
    history: list[dict[str, AgentStance]] = field(default_factory=list)

    def latest(self) -> dict[str, AgentStance]:
        return self.history[-1] if self.history else {}


# ---------------------------------------------------------------------------
# Output schemas (what each call must return)
# ---------------------------------------------------------------------------


class ClaimList(BaseModel):
    claims: list[str] = Field(min_length=1)


class ClaimStance(BaseModel):
    claim_index: int = Field(ge=0)
    stance: StanceWord
    confidence: float = Field(ge=0.0, le=1.0)
    reasoning: str = ""


class InitialStanceReply(BaseModel):
    stances: list[ClaimStance] = Field(min_length=1)


CLAIM_DECOMPOSITION = """You split a debate topic into testable sub-claims.
Return JSON: {{"claims": ["...", ...]}} with {low} to {high} claims. Each claim is one
declarative sentence that evidence or argument could confirm or refute, and that informed
people actually disagree about. No compound claims, no questions."""


def persona_system(ctx: EngineContext, persona_id: str) -> str:
    """The persona's system prompt: the consolidated prompt when the library provides one."""
    persona = ctx.personas[persona_id]
    try:  # the persona issue's consolidated prompt builder (optional until it lands)
        from crux_lab.personas import prompt as prompt_mod

        build = getattr(prompt_mod, "build_system_prompt", None)
        if callable(build):
            return str(build(persona))
    except ImportError:
        pass
    c = persona.contract
    return (
        f"You are {c.name}. {c.personality}\n"
        f"Epistemology: {c.epistemology}\nTime horizon: {c.time_horizon}\n"
        f"Stakes: {c.stakes}\nKnown bias: {c.bias}\n"
        f"What would change your mind: {c.flip_conditions}\n"
        "Stay in character; argue for what you actually believe."
    )


async def decompose_claims(ctx: EngineContext, low: int = 2, high: int = 4) -> list[Claim]:
    """Topic -> ``low``..``high`` testable sub-claims (purpose ``decompose_claims``, fast tier)."""
    request = ctx.request(
        "decompose_claims",
        CLAIM_DECOMPOSITION.format(low=low, high=high),
        f"Topic: {ctx.config.topic}",
        output_schema=ClaimList,
        hints=Hints(topic=ctx.config.topic, persona_ids=ctx.persona_ids, extra={"max_claims": high}),
    )
    response = await ctx.call(request)
    parsed = response.parsed
    texts = [t.strip() for t in (parsed.claims if isinstance(parsed, ClaimList) else []) if t.strip()]
    if not texts:  # a model that returned nothing usable: the topic itself is the one claim
        texts = [ctx.config.topic]
    texts = texts[:high]
    props: list[str | None] = []  # TODO(one channel): claims carry no ground truth
    return [
        Claim(id=f"c{i + 1}", text=t, proposition_id=props[i] if i < len(props) and props[i] else None)
        for i, t in enumerate(texts)
    ]


def assign_tables(persona_ids: Sequence[str], seed: int = 0, size: int = 5) -> list[list[str]]:
    """Split personas into tables of 3-5 (seed 02 "Table Assigner"); fewer than 6 share one table.

    Tables are as even as possible; the seed shuffles who sits where.

    >>> assign_tables(["a", "b", "c", "d"])
    [['a', 'b', 'c', 'd']]
    >>> [len(t) for t in assign_tables([str(i) for i in range(11)], seed=1)]
    [4, 4, 3]
    >>> [len(t) for t in assign_tables([str(i) for i in range(6)])]
    [3, 3]
    """
    ids = list(persona_ids)
    if len(ids) <= size:
        return [ids]
    n_tables = -(-len(ids) // size)  # ceil
    random.Random(seed).shuffle(ids)
    tables: list[list[str]] = [[] for _ in range(n_tables)]
    for i, pid in enumerate(ids):
        tables[i % n_tables].append(pid)
    return [sorted(t, key=list(persona_ids).index) for t in tables]


def claims_block(claims: Sequence[Claim]) -> str:
    return "\n".join(f"[{i}] {c.text}" for i, c in enumerate(claims))


def claims_extra(claims: Sequence[Claim]) -> dict[str, Any]:
    """The claims as hint extras (texts, and proposition ids the simulator maps them to).

    >>> claims_extra([Claim(id="c1", text="Rents fall.", proposition_id="p1")])
    {'claims': ['Rents fall.'], 'claim_proposition_ids': ['p1']}
    """
    return {"claims": [c.text for c in claims], "claim_proposition_ids": [c.proposition_id for c in claims]}


def claim_hints(ctx: EngineContext, claims: Sequence[Claim], speaker: str | None = None) -> Hints:
    return Hints(speaker_id=speaker, topic=ctx.config.topic, persona_ids=ctx.persona_ids, extra=claims_extra(claims))


async def initial_stance(
    ctx: EngineContext, persona_id: str, claims: Sequence[Claim]
) -> dict[str, AgentStance]:
    """One persona's opening stance (pro/con/uncertain + confidence) on every claim."""
    user = (
        f"Topic: {ctx.config.topic}\nClaims:\n{claims_block(claims)}\n\n"
        'For every claim give your stance. Return JSON: {"stances": [{"claim_index": 0, '
        '"stance": "pro|con|uncertain", "confidence": 0.0-1.0, "reasoning": "one sentence"}]}'
    )
    request = ctx.request(
        "initial_stance",
        persona_system(ctx, persona_id),
        user,
        output_schema=InitialStanceReply,
        hints=claim_hints(ctx, claims, persona_id),
        cache_system=True,
    )
    response = await ctx.call(request)
    parsed = response.parsed
    out: dict[str, AgentStance] = {}
    if isinstance(parsed, InitialStanceReply):
        for s in parsed.stances:
            if s.claim_index < len(claims):
                cid = claims[s.claim_index].id
                out[cid] = AgentStance(cid, s.stance, s.confidence, s.reasoning, 0)
    for c in claims:  # a claim the model skipped counts as uncertain, never as agreement
        out.setdefault(c.id, AgentStance(c.id, "uncertain", 0.5, "", 0))
    return out


async def initial_stances(
    ctx: EngineContext, claims: Sequence[Claim]
) -> dict[str, dict[str, AgentStance]]:
    """Every persona's initial stances, in parallel."""
    replies = await asyncio.gather(*(initial_stance(ctx, pid, claims) for pid in ctx.persona_ids))
    return dict(zip(ctx.persona_ids, replies, strict=True))
