"""Every speaking engine tells a persona its own answer, from its own brief, last in its turn
request (next to what it is asked), and asks the turn's stance as yes or no where the reply's
schema allows it; dialogue and dcg hold an opening to the brief's side on the topic, not to
whatever the persona said first."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from crux_lab.llm.base import LLMRequest, LLMResponse
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.llm.structured import StructuredOutputInvalid, parse_structured
from crux_lab.models import DebateConfig, DebateResult, EngineError
from crux_lab.personas.loader import load_personas, propositions_for
from crux_lab.runner import run_debate
from tests.engines.leakcheck import Wrapped

TOPIC = "Is Bitcoin a better long-term store of value than gold?"
PAIR = ["michael-saylor", "peter-schiff"]
OPENINGS = {"opening", "blackboard_turn"}


@dataclass
class Recorder(Wrapped):
    """The simulator, keeping every request; ``turn_yes`` makes Schiff's opening answer yes
    (his brief answers no), as a small model that takes the other side does."""

    turn_yes: bool = False
    requests: list[LLMRequest] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        if not (self.turn_yes and request.purpose == "opening" and request.system.startswith("You are Peter Schiff")):
            return await self.inner.generate(request)
        plain = request.model_copy(update={"validation_context": None})
        data = json.loads((await self.inner.generate(plain)).text) | {"stance": "yes"}
        assert request.output_schema is not None
        try:
            parsed = parse_structured(json.dumps(data), request.output_schema, request.validation_context)
        except StructuredOutputInvalid as exc:  # the one repair: the same reply again
            self.repaired.append(str(exc))
            parsed = parse_structured(json.dumps(data), request.output_schema, request.validation_context)
        answer = await self.inner.generate(plain)
        return answer.model_copy(update={"text": json.dumps(data), "parsed": parsed})


async def _run(engine: str, backend: Recorder, **params: object) -> DebateResult:
    config = DebateConfig(topic=TOPIC, persona_ids=PAIR, engine=engine, max_turns=6, seed=1, params=dict(params))
    return await run_debate(config, backend=backend)


def _backend(**kw: Any) -> Recorder:
    return Recorder(SimulatedBackend(load_personas(PAIR), propositions_for(PAIR), seed=1), **kw)


@pytest.mark.parametrize(("engine", "params"), [("dialogue", {}), ("dcg", {}), ("blitz", {"max_rounds": 2})])
async def test_an_opening_request_ends_with_the_personas_own_answer(engine: str, params: dict[str, Any]) -> None:
    backend = _backend()
    result = await _run(engine, backend, **params)
    assert result.error is None
    firsts: dict[str, str] = {}  # a persona's system prompt -> its first turn request
    for r in backend.requests:
        if r.purpose in OPENINGS:
            firsts.setdefault(r.system, r.user)
    assert len(firsts) == 2
    # on the topic (dialogue, dcg), or on the round's claim when the brief asks it (blitz): the
    # answer the persona's own brief gives to that question
    for system, user in firsts.items():
        found = re.search(r'Your answer to (the debate question|"[^"]+\?"): (yes|no)\. Your reason: ', user)
        assert found, user[-900:]
        line = found[0]
        question = TOPIC if found[1] == "the debate question" else found[1].strip('"')
        assert f'(Your answer to "{question}": {found[2]}, confidence' in system, line
        # last, next to what it is asked: only the reply's format (and length) after it
        after = user[user.index(line):]
        assert "Output ONLY JSON" in after or "Return JSON" in after, after
        assert "Your reasoning anchors" not in after and "Claims on the table" not in after


@pytest.mark.parametrize("engine", ["dialogue", "dcg"])
async def test_dialogue_asks_the_stance_as_yes_or_no(engine: str) -> None:
    backend = _backend()
    await _run(engine, backend)
    turns = [r.user for r in backend.requests if r.purpose in ("opening", "dialogue_turn")]
    assert turns and all('"stance": your answer to the claim you address' in u for u in turns)
    assert not any('"pro", "con" or "uncertain"' in u for u in turns)


@pytest.mark.parametrize("engine", ["dialogue", "dcg"])
async def test_an_opening_against_the_brief_is_sent_back_once_then_kept_with_a_role_flag(engine: str) -> None:
    backend = _backend(turn_yes=True)
    result = await _run(engine, backend)
    # the guard read the opening's stance as its answer to the topic, against Schiff's brief (no)
    assert backend.repaired and all("your brief says where you stand" in p for p in backend.repaired), backend.repaired
    schiff = [t for t in result.transcript if t.persona_id == "peter-schiff" and t.phase == "opening"]
    assert schiff and schiff[0].role_flag and "contradicts your position" in schiff[0].role_flag
    assert any(isinstance(e, EngineError) and e.purpose == "guard_role" for e in result.events)


async def test_without_the_wrong_side_no_opening_is_sent_back() -> None:
    backend = _backend()
    result = await _run("dialogue", backend)
    assert not backend.repaired
    assert not [t for t in result.transcript if t.role_flag]


async def test_graph_states_the_briefs_answers_to_the_claims_it_lists() -> None:
    backend = _backend()
    result = await _run("graph", backend, max_rounds=1)
    assert result.error is None
    asked = [r for r in backend.requests if r.purpose in ("initial_arguments", "generate_attacks")]
    assert {r.system for r in asked} and len({r.system for r in asked}) == 2
    for r in asked:
        found = re.findall(r'Your answer to (the debate question|"[^"]+\?"): (yes|no)\. Your reason: ', r.user)
        assert found, r.user[-900:]
        for question, answer in found:  # each the persona's own brief's answer
            q = TOPIC if question == "the debate question" else question.strip('"')
            assert f'(Your answer to "{q}": {answer}, confidence' in r.system
        # before the task, after the listing and the grounding
        assert r.user.index("Your answer to") > r.user.index("Claims under debate")
        assert r.user.index("Your answer to") < r.user.index("Submit")
