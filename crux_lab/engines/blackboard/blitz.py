"""Blitz mode: the original engine, kept for comparison.

Topic -> claim decomposition (2-4 testable sub-claims, fast tier) -> tables of 3-5 ->
initial stances (parallel) -> rounds in which every agent of every table answers the round's
claim in parallel over its table's blackboard -> blackboard merge (summary, crux candidates,
flip conditions; fast tier) -> convergence (stance entropy, confidence-weighted distance,
divergence, max rounds) -> one final output pass (fast tier).

Its known weakness is the design's own: agents answer the blackboard, not each other, so a run
reads as parallel monologues. That is the point of keeping it: the comparison shows it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import Field, ValidationError

from crux_lab.engines import register_engine
from crux_lab.engines.base import (
    EngineContext,
    EngineParams,
    as_named,
    debate_output,
    engine_params,
    shown_turns,
    turn_fields,
    turn_hints,
)
from crux_lab.engines.blackboard import sim  # noqa: F401  (registers the simulator's answers to the family's purposes)
from crux_lab.engines.blackboard.board import (
    Blackboard,
    BlackboardTurnReply,
    ConvergenceRule,
    apply_turn,
    check_convergence,
    post_format,
    summarize,
    turn_prompt,
)
from crux_lab.engines.blackboard.claims import (
    AgentStance,
    Claim,
    assign_tables,
    claims_extra,
    decompose_claims,
    grounding_block,
    initial_stances,
    persona_system,
)
from crux_lab.engines.blackboard.events import (
    BlackboardUpdate,
    ClaimsDecomposed,
    ConvergenceUpdate,
    InitialStance,
    TableAssigned,
)
from crux_lab.engines.blackboard.output import apply_classic_output, final_output
from crux_lab.engines.blackboard.purposes import BLACKBOARD_TURN
from crux_lab.engines.guards import (
    TooWeakToPlay,
    TurnGuard,
    answer_to_claim,
    in_order,
    my_turn,
    said_of,
    stop_if_too_weak,
    turn_outcome,
)
from crux_lab.engines.poll import PollParams
from crux_lab.llm.base import Hints
from crux_lab.models.domain import DialogueTurn
from crux_lab.models.events import (
    AgentTurn,
    DebateComplete,
    DebateEvent,
    DebateStart,
    EngineError,
    Status,
)
from crux_lab.personas.prompt import speaker_view

TURN_PURPOSE = BLACKBOARD_TURN


class BlitzParams(PollParams):
    poll: bool = Field(False, description="Put every candidate crux to each persona alone (off by default for this engine).")
    max_rounds: int = Field(4, ge=1, le=12, description="Rounds per table before stopping.")
    entropy_threshold: float = Field(0.35, ge=0.0, le=1.0, description="Consensus when mean stance entropy falls to this.")
    divergence_distance: float = Field(0.35, ge=0.0, le=1.0, description="Mean distance at or above which a stalled table counts as divergent.")
    divergence_rounds: int = Field(2, ge=1, le=10, description="Rounds of no shrinking distance that count as divergence.")
    table_size: int = Field(5, ge=3, le=5, description="Largest table (tables hold 3-5 personas).")
    rounds_per_claim: int = Field(2, ge=1, le=6, description="Consecutive rounds a disputed claim stays in focus.")


def rule_from(params: Any) -> ConvergenceRule:
    return ConvergenceRule(
        max_rounds=params.max_rounds,
        entropy_threshold=params.entropy_threshold,
        divergence_distance=params.divergence_distance,
        divergence_rounds=params.divergence_rounds,
    )


def make_turn(
    index: int,
    persona_id: str,
    reply: BlackboardTurnReply,
    focus: Claim,
    round_number: int,
    claim_ids: Sequence[str],
    role_flag: str | None = None,
) -> DialogueTurn:
    """A post as a transcript turn: its words, stance and confidence on the round's claim, and
    the move and named reason its reply stated, and the claims it addressed: the round's claim
    first, whether or not the reply named it, since its format asks the stance on that claim."""
    fields = turn_fields(reply, set(claim_ids))
    return DialogueTurn(
        id=f"t{index}",
        turn_index=index,
        persona_id=persona_id,
        dialogue=reply.content,
        phase="round",
        phase_number=round_number,
        move=fields["move"],
        named_reason=fields["named_reason"],
        proposition_ids=list(dict.fromkeys([focus.id, *fields["proposition_ids"]])),
        stance=reply.stance,
        confidence=reply.confidence,
        role_flag=role_flag,
    )


def point_to_answer(board: Blackboard, persona_id: str, focus: Claim) -> DialogueTurn | None:
    """The post a turn request states as the claim to answer: the newest post of another agent
    on the round's claim that takes the other side from this agent's, else the newest other
    post on it, else the newest other post.

    >>> b = Blackboard("t", ["a", "b"], [Claim("c1", "X.")])
    >>> b.turns = [DialogueTurn(id="t0", turn_index=0, persona_id="b", dialogue="No.", phase="round", proposition_ids=["c1"], stance="con")]
    >>> point_to_answer(b, "a", b.claims[0]).id
    't0'
    """
    mine = board.latest().get(persona_id, {}).get(focus.id)
    others = [t for t in board.turns if t.persona_id != persona_id]
    on_claim = [t for t in others if focus.id in t.proposition_ids]
    against = [t for t in on_claim if mine is not None and {t.stance, mine.stance} == {"pro", "con"}]
    return next((ts[-1] for ts in (against, on_claim, others) if ts), None)


async def board_turn(
    ctx: EngineContext, board: Blackboard, persona_id: str, focus: Claim, round_number: int, intent: str = ""
) -> tuple[BlackboardTurnReply | None, list[EngineError], str | None]:
    """One agent's post on the blackboard (purpose ``blackboard_turn``), the warnings it
    raised (guards, :mod:`crux_lab.engines.guards`) and its role flag, if any;
    ``(None, warnings, None)`` when its reply stayed unusable or a guard kept it out (the turn
    is skipped)."""
    answer = point_to_answer(board, persona_id, focus)
    shown = [t for t in board.turns if t.persona_id == persona_id or t is answer]
    names = {pid: p.name for pid, p in ctx.personas.items()}
    guard = TurnGuard(
        persona_id, ctx.config.topic, said_of(board.turns, names), stance_on=(focus.id,),
        form=post_format(focus.id),
    )
    # Grounding on the round's claim (one retrieval per persona and claim: the blackboard
    # answers the table, not one opponent).
    grounding = grounding_block(ctx, persona_id, focus.text, said=[t.dialogue for t in board.turns if t.persona_id == persona_id])
    system = persona_system(ctx, persona_id)
    # its own answer to the round's claim from its brief, else to the topic until a point it heard moves it
    side = answer_to_claim(system, ctx.config.topic, focus.text, said_of(board.turns, names), persona_id)
    user = turn_prompt(board, persona_id, focus, intent, grounding, ctx.config.topic, names, side)
    view = speaker_view(persona_id, shown, names, answer=answer)  # its own points, the claim to answer: no transcript
    if view:
        user = "\n\n".join([*view, user])
    request = ctx.request(
        TURN_PURPOSE,
        system,
        user,
        output_schema=BlackboardTurnReply,
        hints=Hints(
            speaker_id=persona_id,
            topic=ctx.config.topic,
            phase="round",
            focus=focus.text,
            turns=as_named(turn_hints(shown_turns(shown, user)), user, persona_id, names),  # as the prompt shows them
            extra={**claims_extra(board.claims), "focus_id": focus.id, "intent": intent},
        ),
        cache_system=True,
        validation=guard.context(),
    )
    response, warning = await ctx.call_or_warn(request)
    await my_turn()
    if response is None:
        return None, turn_outcome(ctx.scratch, guard, None, names)[1] + ([warning] if warning else []), None
    reply = response.parsed
    if not isinstance(reply, BlackboardTurnReply):  # schema-less backend: keep the text, no stance change
        prev = board.latest().get(persona_id, {}).get(focus.id)
        try:
            reply = BlackboardTurnReply(
                content=response.text,
                stance=prev.stance if prev else "uncertain",
                confidence=prev.confidence if prev else 0.5,
            )
        except ValidationError as exc:  # the text says too little to be a turn
            problem = exc.errors()[0]["msg"]
            return None, [EngineError(level="warning", purpose=TURN_PURPOSE, error=f"skipped: {problem}")], None
    try:
        kept_out, events = turn_outcome(ctx.scratch, guard, reply, names)
    except TooWeakToPlay as exc:  # raised by the caller once the parallel turns' warnings are out
        ctx.scratch["guard_stop"], events, exc.events = exc, exc.events, []
        return None, events, None
    return (None if kept_out is not None else reply), events, guard.flagged.problem if guard.flagged else None


def initial_stance_events(
    claims: Sequence[Claim], initial: dict[str, dict[str, AgentStance]]
) -> list[InitialStance]:
    return [
        InitialStance(
            persona_id=pid,
            stances={c.id: s[c.id].stance for c in claims},
            confidence={c.id: s[c.id].confidence for c in claims},
        )
        for pid, s in initial.items()
    ]


def setup_boards(
    tables: list[list[str]], claims: list[Claim], initial: dict[str, dict[str, AgentStance]], rounds_per_claim: int = 2
) -> list[Blackboard]:
    boards = []
    for i, table in enumerate(tables):
        board = Blackboard(table=i, persona_ids=table, claims=claims, rounds_per_claim=rounds_per_claim)
        for pid in table:
            board.record(pid, initial[pid])
        board.measure()
        boards.append(board)
    return boards


def board_events(board: Blackboard, round_number: int, rule: ConvergenceRule) -> list[DebateEvent]:
    """Measure a table after a round, decide convergence, and describe both as events."""
    entropy, distance = board.measure()
    converged, reason = check_convergence(board.entropies, board.distances, rule, len(board.disputes()))
    board.converged, board.reason = converged, reason
    prefix = f"Table {board.table + 1}: "
    return [
        BlackboardUpdate(
            round=round_number,
            summary=prefix + board.summary,
            crux_candidates=board.top_crux_candidates(),
            disputes=[c.text for c in board.disputes()],
        ),
        ConvergenceUpdate(
            round=round_number, entropy=entropy, distance=distance, converged=converged,
            reason=prefix + reason if reason else "",
        ),
    ]


@dataclass
class TableSetup:
    """What :func:`open_tables` prepared (runtime): the claims, each persona's initial stances,
    and one blackboard per table."""

    claims: list[Claim] = field(default_factory=list)
    initial: dict[str, dict[str, AgentStance]] = field(default_factory=dict)
    boards: list[Blackboard] = field(default_factory=list)


async def open_tables(
    ctx: EngineContext, params: Any, setup: TableSetup, *, announce_stances: bool = False
) -> AsyncGenerator[DebateEvent, None]:
    """The front half blitz and classical share: claims, tables, initial stances, blackboards.
    ``params`` carries ``table_size`` and ``rounds_per_claim``. Yields its events as it goes and
    fills ``setup`` (an async generator returns no value)."""
    yield DebateStart(topic=ctx.config.topic, personas=ctx.persona_ids)
    yield Status(message="Decomposing the topic into testable claims")
    setup.claims, warning = await decompose_claims(ctx)
    if warning is not None:
        yield warning
    yield ClaimsDecomposed(claims=[c.text for c in setup.claims])
    tables = assign_tables(ctx.persona_ids, ctx.config.seed, params.table_size)
    yield TableAssigned(tables=tables)
    if announce_stances:
        yield Status(message=f"Initial stances from {len(ctx.persona_ids)} personas")
    setup.initial, warnings = await initial_stances(ctx, setup.claims)
    for w in warnings:
        yield w
    for stance_event in initial_stance_events(setup.claims, setup.initial):
        yield stance_event
    setup.boards = setup_boards(tables, setup.claims, setup.initial, params.rounds_per_claim)


async def close_tables(ctx: EngineContext, setup: TableSetup) -> AsyncGenerator[DebateEvent, None]:
    """The final output pass over every table's posts, mapped onto the common result."""
    yield Status(message="Final output pass")
    all_turns = sorted((t for b in setup.boards for t in b.turns), key=lambda t: t.turn_index)
    output, warning = await final_output(ctx, setup.claims, setup.boards, all_turns)
    if warning is not None:
        yield warning
    apply_classic_output(ctx.result, output, setup.claims, setup.boards, setup.initial)
    yield DebateComplete(output=debate_output(ctx.result))


@register_engine
class BlitzEngine:
    name: ClassVar[str] = "blitz"
    description: ClassVar[str] = (
        "Blitz: 2-4 claims, tables of 3-5 personas, parallel stance rounds over a shared blackboard, "
        "entropy convergence, final output pass."
    )
    params_model: ClassVar[type[EngineParams]] = BlitzParams
    min_personas: ClassVar[int] = 2
    max_personas: ClassVar[int] = 24

    def persona_system(self, ctx: EngineContext, persona_id: str) -> str:
        """The persona's system prompt as its turns send it (the poll asks with it)."""
        return persona_system(ctx, persona_id)

    async def run(self, ctx: EngineContext) -> AsyncGenerator[DebateEvent, None]:
        params = engine_params(ctx, BlitzParams)
        rule = rule_from(params)
        setup = TableSetup()
        async for event in open_tables(ctx, params, setup, announce_stances=True):
            yield event
        boards = setup.boards
        turn_index = 0
        round_number = 0
        while any(not b.converged for b in boards) and not ctx.cancelled:
            round_number += 1
            active = [b for b in boards if not b.converged]
            yield Status(message=f"Round {round_number}: {sum(len(b.persona_ids) for b in active)} agents in parallel")
            jobs = [(b, pid, b.focus_claim(round_number)) for b in active for pid in b.persona_ids]
            replies = await in_order([board_turn(ctx, b, pid, focus, round_number) for b, pid, focus in jobs])
            for (board, pid, focus), (reply, warnings, flag) in zip(jobs, replies, strict=True):
                for warning in warnings:
                    yield warning if warning.purpose.startswith("guard_") else warning.model_copy(update={"error": f"{pid}: {warning.error}"})
                if reply is None:  # an unusable reply, or one a guard kept out: this agent sits the round out
                    continue
                apply_turn(board, pid, focus, reply, round_number)
                turn = make_turn(turn_index, pid, reply, focus, round_number, board.claim_ids, flag)
                turn_index += 1
                board.post(turn, focus)
                yield AgentTurn(turn=turn, intent="respond to the blackboard")
            stop_if_too_weak(ctx.scratch)
            for w in await asyncio.gather(*(summarize(ctx, b) for b in active)):
                if w is not None:
                    yield w
            for board in active:
                for event in board_events(board, round_number, rule):
                    yield event
        async for event in close_tables(ctx, setup):
            yield event
