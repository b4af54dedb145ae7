"""The final output of the blitz and classical engines, mapped onto the DebateResult fields
every engine fills: cruxes, fault lines, flip conditions, resolution paths and evidence ledger.

The cruxes, fault lines and resolution paths come from one fast-tier ``final_output`` call
over the consolidated blackboards of all tables; each crux names the engine's
claim it sits under by id. Common ground, camps and the regime are computed in pure code from
the stances the agents stated, so a model cannot invent agreement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from crux_lab.engines.base import EngineContext, turn_hints
from crux_lab.engines.blackboard import purposes
from crux_lab.engines.blackboard.board import Blackboard, dispute_score, post_lines
from crux_lab.engines.blackboard.claims import (
    AgentStance,
    Claim,
    claim_ref,
    claims_block,
    claims_extra,
    stance_groups,
)
from crux_lab.llm.base import Hints
from crux_lab.models.domain import (
    Camp,
    CommonGround,
    Crux,
    CruxSide,
    DialogueTurn,
    DisagreementType,
    PersonaPosition,
    Regime,
    Side,
)
from crux_lab.models.events import EngineError
from crux_lab.models.result import DebateResult


class CruxOut(BaseModel):
    statement: str
    claim_id: str | None = None
    disagreement_type: DisagreementType | None = None
    settling_question: str = ""


class PersonaNote(BaseModel):
    persona_id: str
    text: str


class DebateOutputReply(BaseModel):
    """The structured final output of a blitz or classical debate (one fast-tier call)."""

    cruxes: list[CruxOut] = Field(default_factory=list)
    fault_lines: list[str] = Field(default_factory=list)
    flip_conditions: list[PersonaNote] = Field(default_factory=list)
    resolution_paths: list[str] = Field(default_factory=list)
    evidence_ledger: list[PersonaNote] = Field(default_factory=list)


FINAL_OUTPUT = """You write the structured result of a debate from its blackboards and posts.
Return JSON with: "cruxes" (at most 3; each {"statement", "claim_id", "disagreement_type":
premise|evidence|values|definition|horizon|claim, "settling_question"}), "fault_lines" (one line
per axis that splits the agents), "flip_conditions" ([{"persona_id", "text"}], only conditions the
agents stated), "resolution_paths" (what evidence or test would settle each crux) and
"evidence_ledger" ([{"persona_id", "text"}], evidence each agent cited in its posts).
A crux sits under a claim on which agents hold opposite final stances ("claim_id" names that
claim by its id). Its statement is the buried premise under that disagreement: the specific
assumption that the two sides answer differently and that would move one of them if settled,
as a question in your own words. Never the debate topic restated, never a generic "they see it
differently". The settling question names the observation or test that would decide it."""


def final_stances(boards: Sequence[Blackboard]) -> dict[str, dict[str, AgentStance]]:
    out: dict[str, dict[str, AgentStance]] = {}
    for board in boards:
        out.update(board.latest())
    return out


async def final_output(
    ctx: EngineContext, claims: Sequence[Claim], boards: Sequence[Blackboard], turns: Sequence[DialogueTurn]
) -> tuple[DebateOutputReply, EngineError | None]:
    """The output pass: one ``final_output`` call (fast tier) over every table's blackboard and
    posts. An unusable reply leaves the generated parts empty (with a warning); the stance-based
    parts (common ground, camps, regime) do not depend on it."""
    latest = final_stances(boards)
    stance_lines = "\n".join(
        f"{pid}: " + ", ".join(f"[{c.id}] {s[c.id].stance} ({s[c.id].confidence:.2f})" for c in claims if c.id in s)
        for pid, s in latest.items()
    )
    summaries = "\n".join(f"Table {b.table + 1}: {b.summary}" for b in boards)
    candidates = sorted({c for b in boards for c in b.top_crux_candidates()})
    flips = {pid: list(cs) for b in boards for pid, cs in b.flip_conditions.items()}
    flip_lines = "\n".join(f"{pid}: {c}" for pid, cs in flips.items() for c in cs)
    user = (
        f"Topic: {ctx.config.topic}\nClaims:\n{claims_block(claims)}\n\nFinal stances:\n{stance_lines}\n\n"
        f"Blackboard summaries:\n{summaries}\n\nCrux candidates:\n" + ("\n".join(candidates) or "(none)")
        + f"\n\nStated flip conditions:\n{flip_lines or '(none)'}\n\nPosts:\n{post_lines(turns, claims) or '(none)'}"
    )
    request = ctx.request(
        purposes.FINAL_OUTPUT,
        FINAL_OUTPUT,
        user,
        output_schema=DebateOutputReply,
        hints=Hints(
            topic=ctx.config.topic,
            turns=turn_hints(turns),
            extra={
                **claims_extra(claims),
                "final_stances": {
                    pid: {c.id: [s[c.id].stance, s[c.id].confidence] for c in claims if c.id in s}
                    for pid, s in latest.items()
                },
                "crux_candidates": candidates,
                "flip_conditions": flips,
            },
        ),
    )
    response, warning = await ctx.call_or_warn(request)
    if response is None:
        return DebateOutputReply(), warning
    return (response.parsed if isinstance(response.parsed, DebateOutputReply) else DebateOutputReply()), None


# ---------------------------------------------------------------------------
# Pure mapping from final stances
# ---------------------------------------------------------------------------


MIN_VIEW_CONFIDENCE = 0.05  # below this a stated stance is no view at all


def stance_common_ground(
    claims: Sequence[Claim], latest: Mapping[str, Mapping[str, AgentStance]]
) -> list[CommonGround]:
    """Claims on which every agent holds the same definite stance (pro or con).

    An ``uncertain`` agent, a missing stance, or a stance held with no confidence (a model that
    filled the field without taking a view) breaks agreement: common ground is never fake.

    >>> c = [Claim("c1", "X is true."), Claim("c2", "Y is true.")]
    >>> st = {"a": {"c1": AgentStance("c1", "con", .8), "c2": AgentStance("c2", "pro", .8)},
    ...       "b": {"c1": AgentStance("c1", "con", .6), "c2": AgentStance("c2", "uncertain", .5)}}
    >>> [(g.statement, g.agreed_side.value) for g in stance_common_ground(c, st)]
    [('Everyone rejects the claim: X is true.', 'NO')]
    >>> stance_common_ground(c[:1], {p: {"c1": AgentStance("c1", "con", 0.0)} for p in "ab"})
    []
    """
    out: list[CommonGround] = []
    for claim in claims:
        values = {
            s[claim.id].stance if claim.id in s and s[claim.id].confidence >= MIN_VIEW_CONFIDENCE else None
            for s in latest.values()
        }
        if len(values) != 1 or values & {None, "uncertain"} or not latest:
            continue
        side = Side.YES if values == {"pro"} else Side.NO
        text = claim.text.strip()
        out.append(
            CommonGround(
                id=f"g{len(out) + 1}",
                statement=text if side is Side.YES else f"Everyone rejects the claim: {text}",
                source="blackboard",
                persona_ids=sorted(latest),
                agreed_side=side,
            )
        )
    return out


def disputed_claims(claims: Sequence[Claim], latest: Mapping[str, Mapping[str, AgentStance]]) -> list[Claim]:
    """Claims someone holds pro and someone con now (in claim order)."""
    return [c for c in claims if dispute_score([s[c.id] for s in latest.values() if c.id in s]) > 0]


def stance_camps(
    claims: Sequence[Claim], latest: Mapping[str, Mapping[str, AgentStance]]
) -> list[Camp]:
    """Group agents by their stances on the disputed claims (one camp per distinct signature),
    labelled in words.

    >>> c = [Claim("c1", "X.")]
    >>> st = {p: {"c1": AgentStance("c1", s, .8)} for p, s in [("a", "pro"), ("b", "con"), ("c", "pro")]}
    >>> [(k.persona_ids, k.label) for k in stance_camps(c, st)]
    [(['a', 'c'], 'for: X'), (['b'], 'against: X')]
    """
    disputed = disputed_claims(claims, latest)
    if not disputed:
        return []
    held = {pid: {cid: s.stance for cid, s in stances.items()} for pid, stances in latest.items()}
    groups = stance_groups(held, list(latest), [c.id for c in disputed], {c.id: c.text for c in disputed})
    return [Camp(index=i, persona_ids=members, label=label) for i, (members, label) in enumerate(groups)]


def stance_regime(claims: Sequence[Claim], latest: Mapping[str, Mapping[str, AgentStance]]) -> Regime:
    """polarized: half or more of the claims disputed; partial: some; consensus: none disputed
    and every agent stated the same definite stance on at least one claim (agreement on a named
    claim); no_disagreement_found: none disputed and no such agreement (views left uncertain).

    >>> c = [Claim("c1", "X."), Claim("c2", "Y.")]
    >>> st = {"a": {"c1": AgentStance("c1", "pro", .8)}, "b": {"c1": AgentStance("c1", "con", .8)}}
    >>> stance_regime(c, st).value
    'polarized'
    >>> unsure = {p: {"c1": AgentStance("c1", "uncertain", .5)} for p in "ab"}
    >>> stance_regime(c, unsure).value
    'no_disagreement_found'
    """
    if not claims or not latest:
        return Regime.unknown
    disputed = len(disputed_claims(claims, latest))
    if disputed == 0:
        return Regime.consensus if stance_common_ground(claims, latest) else Regime.no_disagreement_found
    return Regime.polarized if disputed * 2 >= len(claims) else Regime.partial


def regime_description(
    regime: Regime, claims: Sequence[Claim], latest: Mapping[str, Mapping[str, AgentStance]]
) -> str:
    """The regime in a sentence a reader can check against the claims."""
    disputed = disputed_claims(claims, latest)
    agreed = stance_common_ground(claims, latest)
    if regime is Regime.no_disagreement_found:
        return (
            f"No disagreement found: on none of the {len(claims)} claims did one agent end pro and another "
            "con, and no claim had every agent on the same side (views were left uncertain)."
        )
    if regime is Regime.consensus:
        return (
            f"Consensus: no claim is disputed, and every agent stated the same side of {len(agreed)} of "
            f"{len(claims)} claims."
        )
    return (
        f"{len(disputed)} of {len(claims)} claims still disputed after the final round; "
        f"{len(agreed)} agreed by everyone."
    )


def apply_classic_output(
    result: DebateResult,
    reply: DebateOutputReply,
    claims: Sequence[Claim],
    boards: Sequence[Blackboard],
    initial: Mapping[str, Mapping[str, AgentStance]],
) -> None:
    """Fill the common DebateResult fields from the output pass and the final stances."""
    latest = final_stances(boards)
    persona_ids = set(latest)
    cruxes: list[Crux] = []
    by_id = {c.id: c for c in claims}
    for i, c in enumerate(reply.cruxes):
        claim = by_id.get(claim_ref(c.claim_id))
        yes = no = []
        score = None
        if claim is not None:
            held = {pid: s[claim.id] for pid, s in latest.items() if claim.id in s}
            yes = [CruxSide(persona_id=p, statement=held[p].reasoning) for p in sorted(held) if held[p].stance == "pro"]
            no = [CruxSide(persona_id=p, statement=held[p].reasoning) for p in sorted(held) if held[p].stance == "con"]
            score = dispute_score(list(held.values()))
        cruxes.append(
            Crux(
                id=f"x{i + 1}",
                statement=c.statement,
                source="blackboard",
                disagreement_type=c.disagreement_type,
                settling_question=c.settling_question or None,
                yes_side=yes,
                no_side=no,
                score=score,
            )
        )
    result.cruxes = cruxes
    result.fault_lines = list(reply.fault_lines)
    result.resolution_paths = list(reply.resolution_paths)
    flips: dict[str, list[str]] = {}
    for board in boards:
        for pid, conds in board.flip_conditions.items():
            flips.setdefault(pid, []).extend(c for c in conds if c not in flips.get(pid, []))
    for note in reply.flip_conditions:
        if note.persona_id in persona_ids and note.text not in flips.get(note.persona_id, []):
            flips.setdefault(note.persona_id, []).append(note.text)
    result.flip_conditions = flips
    ledger: dict[str, list[str]] = {}
    for note in reply.evidence_ledger:
        if note.persona_id in persona_ids and note.text not in ledger.get(note.persona_id, []):
            ledger.setdefault(note.persona_id, []).append(note.text)
    result.evidence_ledger = ledger
    result.common_ground = stance_common_ground(claims, latest)
    result.camps = stance_camps(claims, latest)
    result.regime = stance_regime(claims, latest)
    result.regime_description = regime_description(result.regime, claims, latest)
    result.positions = [
        *(_position(pid, "initial", claims, s) for pid, s in initial.items()),
        *(_position(pid, "final", claims, s) for pid, s in latest.items()),
    ]


_STANCE_WORD = {"pro": "for", "con": "against", "uncertain": "unsure"}


def _position(pid: str, at: Literal["initial", "final"], claims: Sequence[Claim], stances: Mapping[str, AgentStance]) -> PersonaPosition:
    held = [c for c in claims if c.id in stances]
    return PersonaPosition(
        persona_id=pid,
        at=at,
        text="; ".join(f"{_STANCE_WORD[stances[c.id].stance]}: {c.text}" for c in held),
        stances={c.id: stances[c.id].stance for c in held},
        confidence={c.id: stances[c.id].confidence for c in held},
    )
