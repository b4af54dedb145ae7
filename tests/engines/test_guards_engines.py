"""The guards inside the engines, on the simulator: a backend that parrots (every persona
turn the topic question, or a copy of the turn before) is sent back once per turn, skipped,
and, when it does so every time, ends the debate early with a named reason instead of
looping; the per-run counts land in the result's metrics and in DuckDB's metrics table; and
the simulator's own voice, which no longer repeats itself, leaves its debates whole."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from crux_lab.engines.guards import GIVE_UP_AFTER
from crux_lab.llm.base import LLMOutputError, LLMRequest, LLMResponse
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.llm.structured import StructuredOutputInvalid, parse_structured
from crux_lab.models import DebateConfig, DebateResult, EngineError
from crux_lab.personas.loader import load_personas, propositions_for
from crux_lab.runner import run_debate
from tests.engines.leakcheck import Wrapped

TOPIC = "Is Bitcoin a better long-term store of value than gold?"
PAIR = ["michael-saylor", "peter-schiff"]
TURNS = {"opening", "take", "rebuttal", "crux_turn", "closing", "dialogue_turn", "resolution",
         "channel_message", "agent_turn", "blackboard_turn"}
TEXT = ("utterance", "dialogue", "content")


@dataclass
class Parrot(Wrapped):
    """The simulator, except that every ``every``-th persona turn says what a weak model
    says: the topic question (``mode="topic"``) or the previous turn it was shown, word for
    word (``mode="copy"``). Its replies go through the one repair a real backend makes: a
    reply the request's guards send back is answered again, the same way."""

    every: int = 1
    mode: str = "topic"
    turns: int = 0
    repairs: int = 0
    calls: list[str] = field(default_factory=list)

    def _parrot(self, request: LLMRequest, data: dict[str, object]) -> dict[str, object]:
        shown = [t.text for t in request.hints.turns]
        said = TOPIC if self.mode == "topic" or not shown else shown[-1]
        return {k: (said if k in TEXT else v) for k, v in data.items()}

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.calls.append(request.purpose)
        if request.purpose not in TURNS:
            return await self.inner.generate(request)
        self.turns += 1
        if self.turns % self.every:
            return await self.inner.generate(request)
        plain = request.model_copy(update={"validation_context": None})
        answer = await self.inner.generate(plain)
        data = self._parrot(request, json.loads(answer.text))
        assert request.output_schema is not None
        try:
            parsed = parse_structured(json.dumps(data), request.output_schema, request.validation_context)
        except StructuredOutputInvalid:
            self.repairs += 1  # the repair: the same parrot, which the guard now lets through
            try:
                parsed = parse_structured(json.dumps(data), request.output_schema, request.validation_context)
            except StructuredOutputInvalid as exc:
                raise LLMOutputError(request.purpose, str(exc)) from None
        return answer.model_copy(update={"text": json.dumps(data), "parsed": parsed, "repaired": True})


async def _run(engine: str, backend: Parrot | SimulatedBackend, *, max_turns: int = 8, ids: list[str] = PAIR, **params: object) -> DebateResult:
    config = DebateConfig(topic=TOPIC, persona_ids=ids, engine=engine, max_turns=max_turns, seed=1, params=dict(params))
    return await run_debate(config, backend=backend)


def _sim(ids: list[str] = PAIR) -> SimulatedBackend:
    return SimulatedBackend(load_personas(ids), propositions_for(ids), seed=1)


def _guard_events(result: DebateResult, guard: str) -> list[EngineError]:
    return [e for e in result.events if isinstance(e, EngineError) and e.purpose == f"guard_{guard}"]


@pytest.mark.parametrize(("engine", "params"), [
    ("dcg", {}),
    ("dialogue", {}),
    ("crux_rooms", {}),
    ("panel", {"n_aspects": 1}),
    ("blitz", {"max_rounds": 3}),
])
async def test_a_model_that_only_restates_the_topic_ends_the_debate_early(engine: str, params: dict[str, Any]) -> None:
    backend = Parrot(_sim(), every=1, mode="topic")
    result = await _run(engine, backend, **params)
    assert result.error is not None and result.error.startswith("debate ended early: every speaker's turns were kept out"), result.error
    assert not result.complete
    assert result.metrics["guard_ended"] == 1.0
    echoes = _guard_events(result, "echo")
    assert len(echoes) >= GIVE_UP_AFTER and all("skipped" in e.error for e in echoes)
    assert result.metrics["guard_echo"] == len(echoes)
    assert not result.transcript  # no parroted turn reached the transcript
    # one repair per turn, never a loop: each turn's call was answered at most twice
    assert backend.repairs <= backend.turns


async def test_turns_that_copy_the_turn_before_are_skipped_and_counted_in_duckdb(tmp_path) -> None:
    from crux_lab.store import connect, ingest, write_run

    backend = Parrot(_sim(), every=3, mode="copy")
    result = await _run("dcg", backend, max_turns=10)
    assert result.error is None and result.complete
    echoes = _guard_events(result, "echo")
    assert echoes, "the parrot never fired the echo guard: the test did not exercise it"
    assert result.metrics["guard_echo"] == len(echoes)
    # a copied turn never reaches the transcript
    texts = [t.dialogue for t in result.transcript]
    assert len(set(texts)) == len(texts)
    db = tmp_path / "g.duckdb"
    ingest([write_run(result, tmp_path / "runs")], db)
    with connect(db) as con:
        stored = dict(con.execute("SELECT name, value FROM metrics WHERE run_id = ? AND name LIKE 'guard_%'", [result.run_id]).fetchall())
    assert stored == {"guard_echo": len(echoes), "guard_role": 0.0, "guard_sides": float(len(_guard_events(result, "sides"))),
                      "guard_ended": 0.0}


@pytest.mark.parametrize(("engine", "ids", "params"), [
    ("dcg", PAIR, {}),
    ("dialogue", PAIR, {}),
    ("crux_rooms", ["michael-saylor", "peter-schiff", "arthur-hayes"], {}),
    ("panel", ["michael-saylor", "peter-schiff", "arthur-hayes"], {"n_aspects": 1}),
    ("classical", PAIR, {"max_rounds": 2}),
])
async def test_the_simulator_plays_its_personas_through_the_guards(engine: str, ids: list[str], params: dict[str, Any]) -> None:
    result = await _run(engine, _sim(ids), max_turns=12, ids=ids, **params)
    assert result.error is None and result.complete
    assert result.metrics["guard_ended"] == 0.0
    # its sides quote the turns' own words, and it never flips a declared position unnamed
    assert result.metrics["guard_sides"] == 0.0 and result.metrics["guard_role"] == 0.0
    # no turn in the transcript repeats an earlier one verbatim
    texts = [" ".join(t.dialogue.lower().split()) for t in result.transcript]
    assert len(set(texts)) == len(texts)
