"""The purposes the simulator answers, and its named refusal of any other: an engine with a new
purpose runs offline only once the simulator has a handler for it, and says which purpose
stopped it until then. The list is collected after the simulator loaded its own handlers and
every registered engine's (each engine's beside it, e.g. ``crux_lab/engines/crux_room/sim.py``)."""

from __future__ import annotations

import pytest

from crux_lab.llm import make_backend
from crux_lab.llm.base import DECLARED, LLMOutputError, LLMRequest
from crux_lab.llm.purposes import Purpose
from crux_lab.llm.registry import options_for_library
from crux_lab.llm.simulated.core import HANDLERS, _load_handlers
from crux_lab.personas.loader import load_personas, propositions_for

ANSWERED = {
    "agent_turn", "anti_sycophancy_check", "blackboard_summary", "blackboard_turn", "card", "channel_message",
    "closing", "cot_cards", "crux_pairs", "crux_turn", "crystallize", "decompose", "decompose_claims",
    "detect_disagreement", "dialogue_turn", "direct_cards", "discovery", "exit_check", "extract_beliefs",
    "final_output", "generate_attacks", "initial_arguments", "initial_stance", "judge", "judge_falsifiers",
    "opening", "rebuttal", "resolution", "summarize", "take", "urgency", "validate_attacks", "worldview_positions", "poll", "pivot",
}


def test_the_simulator_answers_these_purposes() -> None:
    _load_handlers()  # its own handler modules and every registered engine's
    # crux_lab's answers; a plug-in's module may add answers to purposes it declared
    own = {p for p, fn in HANDLERS.items() if fn.__module__.startswith("crux_lab.")}
    assert own == ANSWERED
    assert {str(p) for p in Purpose} <= own  # every shared purpose has its handler
    assert {p for p, m in DECLARED.items() if m.startswith("crux_lab.")} <= own  # and every engine's


async def test_any_other_purpose_gets_a_named_refusal() -> None:
    ids = ["michael-saylor", "peter-schiff"]
    backend = make_backend("simulated", options=options_for_library("simulated", load_personas(ids), propositions_for(ids)))
    with pytest.raises(LLMOutputError) as err:
        await backend.generate(LLMRequest(purpose="toy_unknown_purpose", system="s", user="u"))
    assert "toy_unknown_purpose" in str(err.value) and "no handler for this purpose" in str(err.value)
