"""Shared first steps of the blitz, classical and graph engines.

topic -> 2-4 testable sub-claims (fast tier) -> tables of 3-5 personas -> initial stances
(one strong-tier call per persona, in parallel).

Claims are the engine's own: ``c1``, ``c2``... with the text the decomposition reply gave.
Every later prompt lists them by those ids, and every later reply names them by those ids
(stances per claim, the claim a turn addresses): that is all the engine knows about them.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from crux_lab.engines.base import EngineContext
from crux_lab.engines.blackboard.purposes import DECOMPOSE_CLAIMS, INITIAL_STANCE
from crux_lab.llm.base import Hints
from crux_lab.models.events import EngineError
from crux_lab.personas.prompt import build_system_prompt

StanceWord = Literal["pro", "con", "uncertain"]


@dataclass
class Claim:
    """A testable sub-claim of the topic (runtime): the engine's id and the reply's text."""

    id: str
    text: str


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
    claim_id: str
    stance: StanceWord
    confidence: float = Field(ge=0.0, le=1.0)
    reasoning: str = ""


class InitialStanceReply(BaseModel):
    stances: list[ClaimStance] = Field(min_length=1)


CLAIM_DECOMPOSITION = """You split a debate topic into the testable sub-claims it turns on.
Return JSON: {{"claims": ["...", ...]}} with {low} to {high} claims. Each claim is one
declarative sentence that evidence or argument could confirm or refute, that informed people
(these participants among them) actually disagree about, and that lies under the topic: a
premise the answer depends on, never the topic restated. No compound claims, no questions."""


def persona_system(ctx: EngineContext, persona_id: str, *, positions: bool = True) -> str:
    """The persona's consolidated system prompt. ``positions=False`` leaves the persona's stated
    positions out (a call that decides when to speak, not what to say)."""
    return build_system_prompt(ctx.personas[persona_id], include_positions=positions)


def names(ctx: EngineContext, persona_ids: Sequence[str] | None = None) -> str:
    """The participants' display names, for a prompt."""
    ids = list(persona_ids or ctx.persona_ids)
    return ", ".join(ctx.personas[p].name if p in ctx.personas else p for p in ids)


async def decompose_claims(ctx: EngineContext, low: int = 2, high: int = 4) -> tuple[list[Claim], EngineError | None]:
    """Topic -> ``low``..``high`` testable sub-claims (purpose ``decompose_claims``, fast tier),
    with a warning when the reply was unusable (the topic itself is then the one claim)."""
    request = ctx.request(
        DECOMPOSE_CLAIMS,
        CLAIM_DECOMPOSITION.format(low=low, high=high),
        f"Topic: {ctx.config.topic}\nParticipants: {names(ctx)}",
        output_schema=ClaimList,
        hints=Hints(topic=ctx.config.topic, extra={"max_claims": high}),
    )
    response, warning = await ctx.call_or_warn(request)
    parsed = response.parsed if response is not None else None
    texts = [t.strip() for t in (parsed.claims if isinstance(parsed, ClaimList) else []) if t.strip()]
    texts = list(dict.fromkeys(texts))[:high]
    if not texts:  # a model that returned nothing usable: the topic itself is the one claim
        texts = [ctx.config.topic]
    return [Claim(id=f"c{i + 1}", text=t) for i, t in enumerate(texts)], warning


def assign_tables(persona_ids: Sequence[str], seed: int = 0, size: int = 5) -> list[list[str]]:
    """Split personas into tables of 3-5; fewer than 6 share one table.

    Tables are as even as possible; ``seed`` shuffles who sits where.

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


def claim_ref(text: str | None) -> str:
    """A claim id as a reply wrote it, normalised to the id the prompt listed: spaces and the
    brackets of the ``[c1]`` listing dropped.

    >>> claim_ref(" [c2] "), claim_ref(None)
    ('c2', '')
    """
    return (text or "").strip().strip("[]").strip()


def short_claim(text: str, limit: int = 70) -> str:
    """A claim cut to ``limit`` characters for a label or a sentence, without its final stop.

    >>> short_claim("Bitcoin is scarce.")
    'Bitcoin is scarce'
    """
    text = text.strip().rstrip(".")
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


STANCE_WORD = {"pro": "for", "con": "against", "uncertain": "unsure about"}


def stance_groups(
    held: Mapping[str, Mapping[str, str]],
    persona_ids: Sequence[str],
    disputed: Sequence[str],
    texts: Mapping[str, str],
    missing: str = "uncertain",
) -> list[tuple[list[str], str]]:
    """Personas grouped by their stances on the ``disputed`` claims (a stance not stated counts
    as ``missing``), largest group first, each with a label in words.

    >>> held = {"a": {"c1": "pro"}, "b": {"c1": "con"}, "c": {"c1": "pro"}}
    >>> stance_groups(held, ["a", "b", "c", "d"], ["c1"], {"c1": "X."}, missing="silent")
    [(['a', 'c'], 'for: X'), (['b'], 'against: X'), (['d'], 'took no side on the disputed claims')]
    """
    groups: dict[tuple[str, ...], list[str]] = {}
    for pid in persona_ids:
        sig = tuple(held.get(pid, {}).get(c, missing) for c in disputed)
        groups.setdefault(sig, []).append(pid)
    out = []
    for sig, members in sorted(groups.items(), key=lambda t: (-len(t[1]), t[1])):
        label = "; ".join(
            f"{STANCE_WORD[st]}: {short_claim(texts.get(c, c))}" for c, st in zip(disputed, sig, strict=True) if st in STANCE_WORD
        )
        out.append((members, label or "took no side on the disputed claims"))
    return out


def claims_block(claims: Sequence[Claim]) -> str:
    """The claims as a prompt lists them, each with the id replies name it by.

    >>> print(claims_block([Claim("c1", "Rents fall."), Claim("c2", "Supply grows.")]))
    [c1] Rents fall.
    [c2] Supply grows.
    """
    return "\n".join(f"[{c.id}] {c.text}" for c in claims)


def claims_extra(claims: Sequence[Claim]) -> dict[str, Any]:
    """The claims as hint extras: exactly what :func:`claims_block` shows (id -> text).

    >>> claims_extra([Claim(id="c1", text="Rents fall.")])
    {'shown': {'c1': 'Rents fall.'}}
    """
    return {"shown": {c.id: c.text for c in claims}}


def claim_hints(ctx: EngineContext, claims: Sequence[Claim], speaker: str | None = None) -> Hints:
    return Hints(speaker_id=speaker, topic=ctx.config.topic, extra=claims_extra(claims))


def grounding_block(
    ctx: EngineContext, persona_id: str, query: str, opponent_id: str | None = None, said: Sequence[str] = ()
) -> str:
    """The persona's per-turn belief grounding for ``query``, as a prompt section ("" if none),
    without the beliefs its own earlier turns ``said`` already make."""
    text = ctx.grounding(persona_id, query, opponent_id, said)
    return f"\n\n{text}" if text else ""


async def initial_stance(
    ctx: EngineContext, persona_id: str, claims: Sequence[Claim]
) -> tuple[dict[str, AgentStance], EngineError | None]:
    """One persona's opening stance (pro/con/uncertain + confidence) on every claim, and a
    warning when its reply was unusable (every claim then counts as uncertain)."""
    query = " ".join([ctx.config.topic, *(c.text for c in claims)])
    user = (
        f"Topic: {ctx.config.topic}\nClaims:\n{claims_block(claims)}"
        f"{grounding_block(ctx, persona_id, query)}\n\n"
        'For every claim give your stance, naming the claim by its id. Return JSON: {"stances": '
        '[{"claim_id": "c1", "stance": "pro|con|uncertain", "confidence": 0.0-1.0, '
        '"reasoning": "one sentence in your own words"}]}'
    )
    request = ctx.request(
        INITIAL_STANCE,
        persona_system(ctx, persona_id),
        user,
        output_schema=InitialStanceReply,
        hints=claim_hints(ctx, claims, persona_id),
        cache_system=True,
    )
    response, warning = await ctx.call_or_warn(request)
    parsed = response.parsed if response is not None else None
    by_id = {c.id: c for c in claims}
    out: dict[str, AgentStance] = {}
    if isinstance(parsed, InitialStanceReply):
        for s in parsed.stances:
            cid = claim_ref(s.claim_id)
            if cid in by_id and cid not in out:
                out[cid] = AgentStance(cid, s.stance, s.confidence, s.reasoning, 0)
    for c in claims:  # a claim the model skipped counts as uncertain, never as agreement
        out.setdefault(c.id, AgentStance(c.id, "uncertain", 0.5, "", 0))
    if warning is not None:
        warning = warning.model_copy(update={"error": f"{persona_id}: {warning.error}; every claim counts as uncertain"})
    return out, warning


async def initial_stances(
    ctx: EngineContext, claims: Sequence[Claim]
) -> tuple[dict[str, dict[str, AgentStance]], list[EngineError]]:
    """Every persona's initial stances, in parallel, and the warnings of unusable replies."""
    replies = await asyncio.gather(*(initial_stance(ctx, pid, claims) for pid in ctx.persona_ids))
    stances = {pid: s for pid, (s, _) in zip(ctx.persona_ids, replies, strict=True)}
    return stances, [w for _, w in replies if w is not None]
