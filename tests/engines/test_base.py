"""The engine helpers of crux_lab.engines.base: turns from replies, parameters, config hooks."""

from __future__ import annotations

from typing import ClassVar

import pytest

from crux_lab.engines.base import (
    EngineConfigError,
    EngineContext,
    EngineParams,
    TurnReply,
    check_config,
    engine_params,
    make_turn,
    turn_fields,
    turn_hints,
)
from crux_lab.models import DebateConfig, DebateResult, Move

FIELDS = {"id": "t0", "turn_index": 0, "persona_id": "a", "dialogue": "Fine.", "phase": "round"}


def test_a_reply_that_states_nothing_leaves_the_turn_fields_empty() -> None:
    turn = make_turn(None, **FIELDS)
    assert (turn.proposition_ids, turn.stance, turn.move, turn.named_reason) == ([], None, None, None)
    turn = make_turn(TurnReply(), **FIELDS)
    assert (turn.proposition_ids, turn.stance, turn.move, turn.named_reason) == ([], None, None, None)


def test_the_reply_fills_what_the_engine_leaves_out() -> None:
    reply = TurnReply(move="concede", stance="con", addresses=["c1"], named_reason="the vacancy data")
    turn = make_turn(reply, {"c1", "c2"}, **FIELDS, move=Move.CLAIM, stance=None)
    assert turn.move is Move.CLAIM  # the engine's own value wins
    assert turn.stance == "con" and turn.proposition_ids == ["c1"]  # None lets the reply's field in
    assert turn.named_reason == "the vacancy data"


def test_unknown_field_values_and_ids_the_prompt_never_showed_are_dropped() -> None:
    reply = TurnReply(move="SHOUT", stance="maybe", addresses=["c9", "crypto.p1"], named_reason="  ")
    assert turn_fields(reply, {"c1"}) == {"proposition_ids": [], "stance": None, "move": None, "named_reason": None}
    assert "named_reason" not in make_turn(reply, {"c1"}, **FIELDS).model_dump()  # empty: records unchanged


def test_turn_hints_carry_the_words_and_not_the_fields_parsed_from_the_reply() -> None:
    reply = TurnReply(move="CHALLENGE", stance="pro", addresses=["c2"])
    turn = make_turn(reply, {"c2"}, **FIELDS)
    assert (turn.move, turn.stance) == ("CHALLENGE", "pro")  # the engine keeps what the reply said
    hint = turn_hints([turn])[0]
    assert hint.model_dump() == {"speaker_id": "a", "text": "Fine.", "turn_index": turn.turn_index}


class Knobs(EngineParams):
    limit: int = 3


class Hooked:
    name: ClassVar[str] = "hooked"

    def check_config(self, config: DebateConfig, params: EngineParams) -> None:
        if isinstance(params, Knobs) and len(config.persona_ids) > params.limit:
            raise EngineConfigError("too many")


def test_check_config_runs_the_optional_hook() -> None:
    config = DebateConfig(topic="t", persona_ids=["a", "b"], engine="blitz")
    check_config(object(), config, Knobs())  # type: ignore[arg-type]  # no hook: passes
    check_config(Hooked(), config, Knobs())  # type: ignore[arg-type]
    with pytest.raises(EngineConfigError, match="too many"):
        check_config(Hooked(), config, Knobs(limit=1))  # type: ignore[arg-type]


def test_engine_params_parses_the_config_when_the_runner_did_not() -> None:
    config = DebateConfig(topic="t", persona_ids=["a", "b"], engine="blitz", params={"limit": 5})
    result = DebateResult(run_id="r", config=config, engine="blitz", backend="x")
    ctx = EngineContext(config=config, backend=None, personas={}, run_id="r", result=result)  # type: ignore[arg-type]
    assert engine_params(ctx, Knobs).limit == 5
    ctx.params = Knobs(limit=2)
    assert engine_params(ctx, Knobs).limit == 2
