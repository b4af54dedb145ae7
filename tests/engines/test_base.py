"""The engine helpers of crux_lab.engines.base: turns from replies, parameters, config hooks."""

from __future__ import annotations

from typing import ClassVar

import pytest

from crux_lab.engines.base import (
    EngineConfigError,
    EngineContext,
    EngineParams,
    check_config,
    engine_params,
    make_turn,
    turn_metadata,
)
from crux_lab.llm.base import LLMResponse
from crux_lab.models import DebateConfig, DebateResult, Move

SIMULATED: dict[str, object] = {"proposition_ids": ["p1"], "stance": "con", "move": "CONCEDE", "named_reason": "the vacancy data"}


def reply(annotations: dict[str, object] | None = None) -> LLMResponse:
    return LLMResponse(text="", model="m", backend="b", annotations=annotations or {})


def test_a_real_llm_reply_annotates_nothing() -> None:
    turn = make_turn(reply(), id="t0", turn_index=0, persona_id="a", dialogue="Fine.", phase="opening")
    assert (turn.proposition_ids, turn.stance, turn.move, turn.named_reason) == ([], None, None, None)


def test_annotations_fill_what_the_engine_leaves_out() -> None:
    turn = make_turn(reply(SIMULATED), id="t0", turn_index=0, persona_id="a", dialogue="Fine.", phase="round",
                     move=Move.CLAIM, stance=None)
    assert turn.move is Move.CLAIM  # the engine's own value wins
    assert turn.stance == "con" and turn.proposition_ids == ["p1"]  # None lets the annotation in


def test_unknown_annotation_shapes_are_dropped() -> None:
    meta = turn_metadata(reply({"stance": "maybe", "move": "SHOUT", "proposition_ids": "p1", "named_reason": "  "}))
    assert meta == {"proposition_ids": [], "stance": None, "move": None, "named_reason": None}


def test_named_reason_is_filled_from_the_annotation() -> None:
    fields = {"id": "t0", "turn_index": 0, "persona_id": "a", "dialogue": "Fine.", "phase": "round"}
    turn = make_turn(reply(SIMULATED), **fields)
    assert turn.named_reason == "the vacancy data"
    assert "named_reason" not in make_turn(reply(), **fields).model_dump()  # empty: records unchanged


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
