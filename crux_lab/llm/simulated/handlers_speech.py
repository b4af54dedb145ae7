"""Simulator handlers for every purpose where a persona speaks.

The answer is built from the speaker's ground-truth stance on the proposition in focus,
the turns so far (hints), and the failure knobs. The output fills whichever of the common
fields the request's schema has (``dialogue``/``utterance``/``text``..., ``move``, ``stance``,
``confidence``, ``reasoning``).
"""

from __future__ import annotations

from typing import Any

from crux_lab.llm.base import LLMRequest, TurnHint
from crux_lab.llm.simulated.core import OPPOSITE, SimContext, fired_trigger, handler
from crux_lab.personas.models import StanceValue

TEXT_FIELDS = ("dialogue", "utterance", "text", "content", "message", "statement", "argument")
LONG_PURPOSES = {"opening": 5, "closing": 4, "resolution": 4, "take": 3}


def fill_schema(request: LLMRequest, values: dict[str, Any]) -> dict[str, Any]:
    """Map common values onto the field names of the request's output schema."""
    if request.output_schema is None:
        return values
    fields = request.output_schema.model_fields
    out: dict[str, Any] = {}
    for name in fields:
        if name in values:
            out[name] = values[name]
        elif name in TEXT_FIELDS and "text" in values:
            out[name] = values["text"]
    return out


def last_opponent_turn(ctx: SimContext, me: str) -> TurnHint | None:
    for turn in reversed(ctx.hints.turns):
        if turn.speaker_id != me:
            return turn
    return None


def speak(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Decide the move and render the utterance of ``hints.speaker_id``."""
    me = ctx.persona()
    prop = ctx.focus()
    stance: StanceValue | None = ctx.current_stance(me.id, prop.id) if prop else None
    truth = me.stance_on(prop.id) if prop else None
    drifted = ctx.chance(ctx.knobs.drift)
    sycophantic = ctx.chance(ctx.knobs.sycophancy)
    if drifted and stance is not None:
        stance = OPPOSITE[stance] if stance != "uncertain" else "pro"

    purpose = request.purpose
    phase = ctx.hints.phase or ""
    against = last_opponent_turn(ctx, me.id)
    named_reason: str | None = None
    move = "CLAIM"
    if purpose in ("opening", "take", "closing", "resolution") or not ctx.hints.turns:
        move = "CLAIM"
    elif against is not None and prop is not None and prop.id in against.proposition_ids:
        opp_stance = against.stance
        trig = fired_trigger(truth, against) if truth else None
        if trig is not None:
            move, named_reason = "CONCEDE", trig.description
            stance = trig.new_stance
        elif sycophantic and stance in ("pro", "con") and opp_stance not in (None, stance):
            move, stance = "CONCEDE", "uncertain"
        elif against.move == "PROPOSE_CRUX" or phase in ("crux_seeking", "convergence"):
            move = "PROPOSE_CRUX"
        elif opp_stance is not None and opp_stance != stance and stance != "uncertain":
            move = "CHALLENGE" if ctx.chance(0.75) else ctx.pick(["CLARIFY", "REFRAME"])
        else:
            move = ctx.pick(["CLARIFY", "CLAIM", "REFRAME"])
    elif phase in ("crux_seeking", "convergence"):
        move = "PROPOSE_CRUX"
    else:
        move = "CLAIM" if against is None else ctx.pick(["CHALLENGE", "CLAIM", "CLARIFY"])

    sentences = LONG_PURPOSES.get(purpose, 2 if purpose in ("channel_message",) else 3)
    text = ctx.utter(me, prop, stance, move, sentences=sentences, against=against)
    if move == "CONCEDE" and named_reason:
        text += f" You have met my condition: {named_reason.rstrip('.')}."
    ctx.annotations.update(
        {
            "proposition_ids": [prop.id] if prop else [],
            "stance": stance,
            "move": move,
            "sycophantic": move == "CONCEDE" and named_reason is None,
            "named_reason": named_reason,
            "drifted": drifted,
        }
    )
    confidence = truth.confidence if truth else 0.5
    if move == "CONCEDE":
        confidence = round(confidence * 0.5, 3)
    return fill_schema(
        request,
        {
            "text": text,
            "move": move,
            "stance": stance or "uncertain",
            "confidence": confidence,
            "reasoning": truth.reason if truth else "",
            "position": {"pro": "YES", "con": "NO"}.get(stance or "", "NUANCED"),
        },
    )


@handler(
    "opening",
    "take",
    "closing",
    "rebuttal",
    "crux_turn",
    "dialogue_turn",
    "channel_message",
    "agent_turn",
    "resolution",
)
def speech(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    return speak(ctx, request)
