"""The final output of the blitz and classical engines (seed 02 "output.ts"), mapped onto the
common DebateResult fields of seed 03 "mapToDebateOutput": cruxes, fault lines, flip
conditions, resolution paths and evidence ledger.

The cruxes, fault lines and resolution paths come from one fast-tier ``final_output`` call
over the consolidated blackboards (the seed's "Final Table"). Common ground, camps and the
regime are computed in pure code from the final stances, so a model cannot invent agreement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from crux_lab.engines.base import EngineContext
from crux_lab.engines.blackboard import Blackboard, dispute_score
from crux_lab.engines.claims import AgentStance, Claim, claims_block, claims_extra
from crux_lab.llm.base import Hints, TurnHint
from crux_lab.models import (
    Camp,
    CommonGround,
    Crux,
    CruxSide,
    DebateOutput,
    DebateResult,
    DisagreementType,
    PersonaPosition,
    Regime,
    Side,
)


class CruxOut(BaseModel):
    statement: str
    claim_index: int | None = None
    disagreement_type: DisagreementType | None = None
    settling_question: str = ""


class PersonaNote(BaseModel):
    persona_id: str
    text: str


class DebateOutputReply(BaseModel):
    """The structured DebateOutput of seed 02 (one fast-tier call)."""

    cruxes: list[CruxOut] = Field(default_factory=list)
    fault_lines: list[str] = Field(default_factory=list)
    flip_conditions: list[PersonaNote] = Field(default_factory=list)
    resolution_paths: list[str] = Field(default_factory=list)
    evidence_ledger: list[PersonaNote] = Field(default_factory=list)


FINAL_OUTPUT = """You write the structured result of a debate from its blackboards.
Return JSON with: "cruxes" (at most 3; each {"statement", "claim_index", "disagreement_type":
premise|evidence|values|definition|horizon|claim, "settling_question"}), "fault_lines" (one line
per axis that splits the agents), "flip_conditions" ([{"persona_id", "text"}], only conditions the
agents stated), "resolution_paths" (what evidence or test would settle each crux) and
"evidence_ledger" ([{"persona_id", "text"}], evidence each agent cited). A crux is a specific
question on which agents hold opposite stances, never a generic "they see it differently"."""


def final_stances(boards: Sequence[Blackboard]) -> dict[str, dict[str, AgentStance]]:
    out: dict[str, dict[str, AgentStance]] = {}
    for board in boards:
        out.update(board.latest())
    return out


async def final_output(
    ctx: EngineContext, claims: Sequence[Claim], boards: Sequence[Blackboard], turns: list[TurnHint]
) -> DebateOutputReply:
    """The output pass: one ``final_output`` call (fast tier) over every table's blackboard."""
    latest = final_stances(boards)
    stance_lines = "\n".join(
        f"{pid}: " + ", ".join(f"[{i}] {s[c.id].stance} ({s[c.id].confidence:.2f})" for i, c in enumerate(claims) if c.id in s)
        for pid, s in latest.items()
    )
    summaries = "\n".join(f"Table {b.table + 1}: {b.summary}" for b in boards)
    candidates = sorted({c for b in boards for c in b.top_crux_candidates()})
    flips = "\n".join(f"{pid}: {c}" for b in boards for pid, cs in b.flip_conditions.items() for c in cs)
    user = (
        f"Topic: {ctx.config.topic}\nClaims:\n{claims_block(claims)}\n\nFinal stances:\n{stance_lines}\n\n"
        f"Blackboard summaries:\n{summaries}\n\nCrux candidates:\n" + "\n".join(candidates)
        + f"\n\nStated flip conditions:\n{flips or '(none)'}"
    )
    request = ctx.request(
        "final_output",
        FINAL_OUTPUT,
        user,
        output_schema=DebateOutputReply,
        hints=Hints(
            topic=ctx.config.topic,
            persona_ids=ctx.persona_ids,
            turns=turns,
            extra={
                **claims_extra(claims),
                "final_stances": {
                    pid: {str(i): [s[c.id].stance, s[c.id].confidence] for i, c in enumerate(claims) if c.id in s}
                    for pid, s in latest.items()
                },
                "crux_candidates": candidates,
            },
        ),
    )
    response = await ctx.call(request)
    return response.parsed if isinstance(response.parsed, DebateOutputReply) else DebateOutputReply()


# ---------------------------------------------------------------------------
# Pure mapping from final stances
# ---------------------------------------------------------------------------


def stance_common_ground(
    claims: Sequence[Claim], latest: Mapping[str, Mapping[str, AgentStance]]
) -> list[CommonGround]:
    """Claims on which every agent holds the same definite stance (pro or con).

    An ``uncertain`` agent or a missing stance breaks agreement: common ground is never fake.

    >>> c = [Claim("c1", "X is true."), Claim("c2", "Y is true.")]
    >>> st = {"a": {"c1": AgentStance("c1", "con", .8), "c2": AgentStance("c2", "pro", .8)},
    ...       "b": {"c1": AgentStance("c1", "con", .6), "c2": AgentStance("c2", "uncertain", .5)}}
    >>> [(g.statement, g.agreed_side.value) for g in stance_common_ground(c, st)]
    [('Not: X is true.', 'NO')]
    """
    out: list[CommonGround] = []
    for claim in claims:
        values = {s[claim.id].stance if claim.id in s else None for s in latest.values()}
        if len(values) != 1 or values & {None, "uncertain"} or not latest:
            continue
        side = Side.YES if values == {"pro"} else Side.NO
        out.append(
            CommonGround(
                id=f"g{len(out) + 1}",
                statement=claim.text if side is Side.YES else f"Not: {claim.text}",
                source="blackboard",
                persona_ids=sorted(latest),
                agreed_side=side,
                proposition_ids=[claim.proposition_id] if claim.proposition_id else [],
            )
        )
    return out


def stance_camps(
    claims: Sequence[Claim], latest: Mapping[str, Mapping[str, AgentStance]]
) -> list[Camp]:
    """Group agents by their stances on the disputed claims (one camp per distinct signature).

    >>> c = [Claim("c1", "X.")]
    >>> st = {p: {"c1": AgentStance("c1", s, .8)} for p, s in [("a", "pro"), ("b", "con"), ("c", "pro")]}
    >>> [(k.persona_ids, k.label) for k in stance_camps(c, st)]
    [(['a', 'c'], 'c1=pro'), (['b'], 'c1=con')]
    """
    disputed = [c for c in claims if dispute_score([s[c.id] for s in latest.values() if c.id in s]) > 0]
    if not disputed:
        return []
    groups: dict[tuple[str, ...], list[str]] = {}
    sig: tuple[str, ...]
    for pid in latest:
        sig = tuple(latest[pid][c.id].stance if c.id in latest[pid] else "uncertain" for c in disputed)
        groups.setdefault(sig, []).append(pid)
    camps = []
    for i, (sig, members) in enumerate(sorted(groups.items(), key=lambda t: (-len(t[1]), t[1]))):
        label = ", ".join(f"{c.id}={s}" for c, s in zip(disputed, sig, strict=True))
        camps.append(Camp(index=i, persona_ids=members, label=label))
    return camps


def stance_regime(claims: Sequence[Claim], latest: Mapping[str, Mapping[str, AgentStance]]) -> Regime:
    """consensus: nothing disputed; polarized: half or more of the claims disputed; else partial.

    >>> c = [Claim("c1", "X."), Claim("c2", "Y.")]
    >>> st = {"a": {"c1": AgentStance("c1", "pro", .8)}, "b": {"c1": AgentStance("c1", "con", .8)}}
    >>> stance_regime(c, st).value
    'polarized'
    """
    if not claims or not latest:
        return Regime.unknown
    disputed = sum(
        1 for c in claims if dispute_score([s[c.id] for s in latest.values() if c.id in s]) > 0
    )
    if disputed == 0:
        return Regime.consensus
    return Regime.polarized if disputed * 2 >= len(claims) else Regime.partial


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
    for i, c in enumerate(reply.cruxes):
        claim = claims[c.claim_index] if c.claim_index is not None and 0 <= c.claim_index < len(claims) else None
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
                proposition_ids=[claim.proposition_id] if claim and claim.proposition_id else [],
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
    disputed = [c for c in claims if dispute_score([s[c.id] for s in latest.values() if c.id in s]) > 0]
    result.regime_description = (
        f"{len(disputed)} of {len(claims)} claims still disputed after the final round; "
        f"{len(result.common_ground)} agreed by everyone."
    )
    result.positions = [
        *(_position(pid, "initial", claims, s) for pid, s in initial.items()),
        *(_position(pid, "final", claims, s) for pid, s in latest.items()),
    ]


def _position(pid: str, at: Literal["initial", "final"], claims: Sequence[Claim], stances: Mapping[str, AgentStance]) -> PersonaPosition:
    held = [c for c in claims if c.id in stances]
    return PersonaPosition(
        persona_id=pid,
        at=at,
        text="; ".join(f"{c.text} -> {stances[c.id].stance}" for c in held),
        stances={c.key: stances[c.id].stance for c in held},
        confidence={c.key: stances[c.id].confidence for c in held},
    )


def debate_output(result: DebateResult) -> DebateOutput:
    """The common output of a finished result, for the ``debate_complete`` event."""
    return DebateOutput(
        cruxes=result.cruxes,
        fault_lines=result.fault_lines,
        flip_conditions=result.flip_conditions,
        resolution_paths=result.resolution_paths,
        evidence_ledger=result.evidence_ledger,
        common_ground=result.common_ground,
        camps=result.camps,
        regime=result.regime,
        regime_description=result.regime_description,
        accepted_claims=result.accepted_claims,
    )
