"""Classical mode: sequential turns chosen by urgency, with intent tracking.

Same front half as blitz (claims, tables, initial stances, blackboard), but the debate is a
sequence of turns: before every turn each agent of the table scores its urgency to speak
(one fast-tier ``urgency`` call per agent, the mode's known cost) and declares an
intent (challenge, defend, concede, clarify, propose_crux, pass) and the claim it wants to
address. The most urgent agent speaks with that intent. One round is as many turns as the
table has agents; after each round the blackboard is summarised and convergence is checked.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from crux_lab.engines import register_engine
from crux_lab.engines.base import EngineContext, EngineParams, engine_params, turn_hints
from crux_lab.engines.blackboard import sim  # noqa: F401  (registers the simulator's answers to the family's purposes)
from crux_lab.engines.blackboard.blitz import (
    TableSetup,
    board_events,
    board_turn,
    close_tables,
    make_turn,
    open_tables,
    rule_from,
)
from crux_lab.engines.blackboard.board import (
    Blackboard,
    apply_turn,
    claims_block,
    post_lines,
    summarize,
)
from crux_lab.engines.blackboard.claims import claim_ref, claims_extra, persona_system
from crux_lab.engines.blackboard.purposes import URGENCY
from crux_lab.engines.guards import stop_if_too_weak
from crux_lab.engines.poll import PollParams
from crux_lab.llm.base import Hints
from crux_lab.models.events import AgentTurn, DebateEvent, EngineError, Status

Intent = Literal["challenge", "defend", "concede", "clarify", "propose_crux", "pass"]


class ClassicalParams(PollParams):
    poll: bool = Field(False, description="Put every candidate crux to each persona alone (off by default for this engine).")
    max_rounds: int = Field(3, ge=1, le=12, description="Rounds per table; a round is one turn per agent.")
    entropy_threshold: float = Field(0.35, ge=0.0, le=1.0)
    divergence_distance: float = Field(0.35, ge=0.0, le=1.0, description="Mean distance at or above which a stalled table counts as divergent.")
    divergence_rounds: int = Field(2, ge=1, le=10)
    table_size: int = Field(5, ge=3, le=5)
    rounds_per_claim: int = Field(2, ge=1, le=6, description="Rounds a disputed claim stays the default focus.")


class UrgencyReply(BaseModel):
    urgency: float = Field(ge=0.0, le=1.0)
    intent: Intent = "clarify"
    claim_id: str | None = None
    target_persona_id: str | None = None


@dataclass
class IntentRecord:
    """Intent tracking: what each speaker said it would do, and on what."""

    turn_index: int
    persona_id: str
    intent: str
    claim_id: str
    urgency: float
    target_persona_id: str | None = None


URGENCY_SYSTEM = """You decide how urgently you need to speak next in a debate.
Score 0-1: high when the last posts attack your position, misstate it, or meet your flip
condition; low when you just spoke or have nothing new. Return JSON: {"urgency": 0.0-1.0,
"intent": "challenge|defend|concede|clarify|propose_crux|pass", "claim_id": "the id of the
claim you want to address, e.g. c1", "target_persona_id": "who you answer, or null"}"""


async def score_urgency(
    ctx: EngineContext, board: Blackboard, persona_id: str, system: str
) -> tuple[UrgencyReply, EngineError | None]:
    """One agent's urgency to speak next (fast tier). Its system prompt is the persona's
    contract without its stated positions: the call decides when to speak, from the posts and
    the agent's own stance history the prompt shows. An unusable reply counts as a pass."""
    last = board.turns[-len(board.persona_ids):]
    latest = board.latest().get(persona_id, {})
    user = (
        f"Topic: {ctx.config.topic}\nClaims:\n{claims_block(board.claims)}\n\nYour past stances:\n{board.past_stances_text(persona_id)}\n\n"
        f"Latest posts:\n{post_lines(last, board.claims) or '(no posts yet)'}\n\n"
        "How urgently do you need to speak next, and to do what?"
    )
    request = ctx.request(
        URGENCY,
        f"{system}\n\n{URGENCY_SYSTEM}",
        user,
        output_schema=UrgencyReply,
        hints=Hints(
            speaker_id=persona_id,
            topic=ctx.config.topic,
            turns=turn_hints(last),
            extra={
                **claims_extra(board.claims),
                "my_stances": {cid: [s.stance, s.confidence] for cid, s in latest.items()},
            },
        ),
    )
    response, warning = await ctx.call_or_warn(request)
    if response is not None and isinstance(response.parsed, UrgencyReply):
        return response.parsed, None
    return UrgencyReply(urgency=0.0, intent="pass"), warning


def pick_speaker(board: Blackboard, scores: dict[str, UrgencyReply]) -> str:
    """The most urgent agent; ties go to whoever spoke least recently, then table order. An
    agent whose turn was just kept out (``board.passed``) is not picked again at once: asked
    again on the same request, Qwen2.5-1.5B gave the same echo until the debate ended.

    >>> b = Blackboard(0, ["a", "b"], [])
    >>> pick_speaker(b, {"a": UrgencyReply(urgency=.9), "b": UrgencyReply(urgency=.5)})
    'a'
    >>> b.passed = "a"
    >>> pick_speaker(b, {"a": UrgencyReply(urgency=.9), "b": UrgencyReply(urgency=.5)})
    'b'
    """
    last_spoke = {t.persona_id: t.turn_index for t in board.turns}
    return min(
        [p for p in board.persona_ids if p != board.passed] or board.persona_ids,
        key=lambda p: (-scores[p].urgency, last_spoke.get(p, -1), board.persona_ids.index(p)),
    )


def round_of(board: Blackboard) -> int:
    """The round the table's next turn belongs to (a round is one turn per agent)."""
    return len(board.turns) // len(board.persona_ids) + 1


@register_engine
class ClassicalEngine:
    name: ClassVar[str] = "classical"
    description: ClassVar[str] = (
        "Classical: blackboard debate with sequential turns; each turn the persona with "
        "the highest urgency speaks, with its intent tracked."
    )
    params_model: ClassVar[type[EngineParams]] = ClassicalParams
    min_personas: ClassVar[int] = 2
    max_personas: ClassVar[int] = 12

    def persona_system(self, ctx: EngineContext, persona_id: str) -> str:
        """The persona's system prompt as its turns send it (the poll asks with it)."""
        return persona_system(ctx, persona_id)

    async def run(self, ctx: EngineContext) -> AsyncGenerator[DebateEvent, None]:
        params = engine_params(ctx, ClassicalParams)
        rule = rule_from(params)
        setup = TableSetup()
        async for event in open_tables(ctx, params, setup):
            yield event
        boards = setup.boards
        systems = {pid: persona_system(ctx, pid, positions=False) for pid in ctx.persona_ids}
        intents: list[IntentRecord] = []
        ctx.scratch["intents"] = intents
        turn_index = 0
        attempts = 0  # turns tried, skipped ones included: the budget bounds both
        while any(not b.converged for b in boards) and not ctx.cancelled:
            if max(turn_index, attempts) >= ctx.config.max_turns:
                yield Status(message=f"Turn budget ({ctx.config.max_turns}) reached")
                break
            active = [b for b in boards if not b.converged]
            # Urgency: every agent of every active table, in parallel.
            jobs = [(b, pid) for b in active for pid in b.persona_ids]
            scored = await asyncio.gather(*(score_urgency(ctx, b, pid, systems[pid]) for b, pid in jobs))
            for (_, pid), (_, warning) in zip(jobs, scored, strict=True):
                if warning is not None:
                    yield warning.model_copy(update={"error": f"{pid}: {warning.error}; counted as a pass"})
            speakers = []
            for board in active:
                scores = {pid: s for (b, pid), (s, _) in zip(jobs, scored, strict=True) if b is board}
                speaker = pick_speaker(board, scores)
                choice = scores[speaker]
                rn = round_of(board)
                by_id = {c.id: c for c in board.claims}
                wanted = claim_ref(choice.claim_id)
                focus = by_id[wanted] if wanted in by_id else board.focus_claim(rn)
                speakers.append((board, speaker, choice, focus, rn))
            replies = await asyncio.gather(
                *(board_turn(ctx, b, pid, focus, rn, intent=ch.intent) for b, pid, ch, focus, rn in speakers)
            )
            ended: list[tuple[Blackboard, int]] = []
            attempts += 1
            for (board, pid, choice, focus, rn), (reply, warnings, flag) in zip(speakers, replies, strict=True):
                for warning in warnings:
                    yield warning if warning.purpose.startswith("guard_") else warning.model_copy(update={"error": f"{pid}: {warning.error}"})
                if reply is None:  # an unusable reply, or one a guard kept out: the turn is skipped
                    board.passed = pid
                    continue
                board.passed = None
                apply_turn(board, pid, focus, reply, rn)
                turn = make_turn(turn_index, pid, reply, focus, rn, board.claim_ids, flag)
                board.post(turn, focus)
                intents.append(IntentRecord(turn_index, pid, choice.intent, focus.id, choice.urgency, choice.target_persona_id))
                turn_index += 1
                yield AgentTurn(turn=turn, intent=choice.intent, urgency=choice.urgency)
                if len(board.turns) % len(board.persona_ids) == 0:  # one turn per agent: round over
                    ended.append((board, rn))
            stop_if_too_weak(ctx.scratch)
            if ended:
                for w in await asyncio.gather(*(summarize(ctx, b) for b, _ in ended)):
                    if w is not None:
                        yield w
                for board, rn in ended:
                    yield Status(message=f"Table {board.table + 1}: round {rn} complete")
                    for event in board_events(board, rn, rule):
                        yield event
        async for event in close_tables(ctx, setup):
            yield event
