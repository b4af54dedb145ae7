"""ReplayBackend: record any backend to a JSONL cassette, replay it byte for byte."""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from crux_lab.llm.base import (
    CassetteMiss,
    Hints,
    LLMError,
    LLMOutputError,
    LLMRequest,
    LLMResponse,
    TurnHint,
)
from crux_lab.llm.ledger import Ledger
from crux_lab.llm.replay import CassetteError, ReplayBackend, cassette_stats, load_cassette
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.models import DebateConfig, Tier

from .tiny_panel import first_loadable_engine, tiny_panel, write_library


class Speech(BaseModel):
    text: str
    move: str
    stance: str
    confidence: float


def simulated(seed: int = 7) -> SimulatedBackend:
    personas, propositions = tiny_panel()
    return SimulatedBackend(personas, propositions, seed=seed)


def script() -> list[LLMRequest]:
    """Calls like an engine's: two openings, a schema'd reply, and one request made twice."""
    ids = ["ada-remote", "bo-office"]
    opening = [
        LLMRequest(
            purpose="opening",
            system=f"You are {pid}.",
            user="Open on remote work. Topic: Is remote work better?",
            temperature=0.85,
            hints=Hints(speaker_id=pid, topic="Is remote work better?"),
        )
        for pid in ids
    ]
    reply = LLMRequest(
        purpose="dialogue_turn",
        system="You are bo-office.",
        user="Topic: Is remote work better?\nada-remote: Remote work raises productivity.\nReply to Ada.",
        tier=Tier.strong,
        output_schema=Speech,
        hints=Hints(
            speaker_id="bo-office",
            topic="Is remote work better?",
            turns=[TurnHint(speaker_id="ada-remote", text="Remote work raises productivity.")],
        ),
    )
    vote = LLMRequest(
        purpose="take",
        system="You are ada-remote.",
        user="Your take on training. Topic: Is remote work better?",
        tier=Tier.fast,
        hints=Hints(speaker_id="ada-remote", topic="Is remote work better?", aspect="training"),
    )
    return [*opening, reply, vote, vote]


async def record(cassette: Path) -> list[LLMResponse]:
    recorder = ReplayBackend(cassette, inner=simulated(), mode="record")
    return [await recorder.generate(r) for r in script()]


def comparable(r: LLMResponse) -> dict[str, object]:
    data = r.model_dump(mode="json", exclude={"backend"})
    data["parsed"] = r.parsed.model_dump() if r.parsed is not None else None
    return data


async def test_record_then_replay_is_identical(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    live = await record(cassette)
    assert all(r.backend == "simulated" for r in live)
    assert len(cassette.read_text().splitlines()) == len(live)

    player = ReplayBackend(cassette)
    replayed = [await player.generate(r) for r in script()]
    assert [r.backend for r in replayed] == ["replay"] * len(live)
    assert [comparable(r) for r in replayed] == [comparable(r) for r in live]
    # Byte-identical text; parsed re-validated against the schema.
    assert isinstance(replayed[2].parsed, Speech)
    assert replayed[2].parsed == live[2].parsed
    assert replayed[0].text == live[0].text
    assert player.hits == len(live) and player.misses == 0


class Numbered:
    """A backend whose n-th answer is "answer n" (repeated requests get different answers)."""

    name = "numbered"

    def __init__(self) -> None:
        self.calls = 0

    def model_for(self, tier: Tier) -> str:
        return f"numbered-{tier.value}"

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        return LLMResponse(text=f"answer {self.calls}", model=self.model_for(request.tier), backend=self.name)


async def test_identical_requests_replay_in_recorded_order(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    vote = script()[3]
    recorder = ReplayBackend(cassette, inner=Numbered(), mode="record")
    live = [await recorder.generate(vote) for _ in range(2)]
    assert [r.text for r in live] == ["answer 1", "answer 2"]
    player = ReplayBackend(cassette)
    assert player.model_for(Tier.fast) == "numbered-fast"
    assert (await player.generate(vote)).text == "answer 1"
    assert (await player.generate(vote)).text == "answer 2"
    with pytest.raises(CassetteMiss):
        await player.generate(vote)  # recorded twice, asked a third time


async def test_miss_names_the_purpose_and_the_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    await record(cassette)
    player = ReplayBackend(cassette)
    other = LLMRequest(purpose="card", system="s", user="a question never recorded")
    with pytest.raises(CassetteMiss) as info:
        await player.generate(other)
    assert isinstance(info.value, LLMError)
    assert "card" in str(info.value) and str(cassette) in str(info.value)
    assert info.value.purpose == "card" and info.value.cassette == str(cassette)
    # A different temperature is a different request.
    changed = script()[0].model_copy(update={"temperature": 0.1})
    with pytest.raises(CassetteMiss):
        await player.generate(changed)


class Counting:
    """Wraps a backend and counts the calls that reach it."""

    def __init__(self, inner: SimulatedBackend) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls = 0

    def model_for(self, tier: Tier) -> str:
        return self.inner.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        return await self.inner.generate(request)


async def test_auto_mode_replays_hits_and_records_misses(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    await record(cassette)
    inner = Counting(simulated())
    auto = ReplayBackend(cassette, inner=inner, mode="auto")
    hit = await auto.generate(script()[0])
    assert hit.backend == "replay" and inner.calls == 0
    new = LLMRequest(purpose="closing", system="You are ada-remote.", user="Close.", hints=Hints(speaker_id="ada-remote"))
    miss = await auto.generate(new)
    assert miss.backend == "simulated" and inner.calls == 1
    assert len(load_cassette(cassette)) == len(script()) + 1
    again = ReplayBackend(cassette)
    assert (await again.generate(new)).text == miss.text


async def test_ledger_marks_replayed_calls_and_the_real_backend(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    recording = Ledger(ReplayBackend(cassette, inner=simulated(), mode="record"), run_id="r")
    for r in script():
        await recording.generate(r)
    assert {c.backend for c in recording.calls} == {"simulated"}
    assert {c.outcome for c in recording.calls} == {"ok"}
    replaying = Ledger(ReplayBackend(cassette), run_id="r")
    for r in script():
        await replaying.generate(r)
    # The backend says a cassette answered; the outcome is how the call ended (ok/repaired).
    assert {c.backend for c in replaying.calls} == {"replay"}
    assert {c.outcome for c in replaying.calls} == {c.outcome for c in recording.calls}
    assert [c.input_tokens for c in replaying.calls] == [c.input_tokens for c in recording.calls]
    assert replaying.usage().cost_usd == recording.usage().cost_usd


async def test_cassette_lines_are_self_describing(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    await record(cassette)
    first = json.loads(cassette.read_text().splitlines()[0])
    assert first["purpose"] == "opening"
    assert first["request"]["messages"] == [{"role": "user", "content": "Open on remote work. Topic: Is remote work better?"}]
    assert first["request"]["temperature"] == 0.85
    assert cassette_stats(cassette) == {"calls": 5, "by_purpose": {"dialogue_turn": 1, "opening": 2, "take": 2}}


async def test_torn_line_is_skipped_and_later_recordings_stay_whole(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    await record(cassette)
    whole = cassette.read_text()
    cassette.write_text(whole + whole.splitlines()[0][:40])  # a crash mid-write
    with pytest.warns(UserWarning, match="incomplete line 6"):
        player = ReplayBackend(cassette)
    assert player.recorded_calls() == 5
    extra = LLMRequest(purpose="closing", system="You are bo-office.", user="Close.", hints=Hints(speaker_id="bo-office"))
    with pytest.warns(UserWarning):
        await ReplayBackend(cassette, inner=simulated(), mode="auto").generate(extra)
    with pytest.warns(UserWarning, match="incomplete line 6"):
        assert len(load_cassette(cassette)) == 6


class Staggered(Numbered):
    """Answers identical concurrent requests out of order: the first one issued finishes last."""

    name = "staggered"

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        n = self.calls
        await asyncio.sleep(0.03 * (4 - n))
        return LLMResponse(text=f"answer {n}", model=self.model_for(request.tier), backend=self.name)


async def test_concurrent_identical_requests_replay_in_issue_order(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    vote = script()[3]
    recorder = ReplayBackend(cassette, inner=Staggered(), mode="record")
    live = await asyncio.gather(*(recorder.generate(vote) for _ in range(3)))
    assert [r.text for r in live] == ["answer 1", "answer 2", "answer 3"]
    written = [json.loads(line)["response"]["text"] for line in cassette.read_text().splitlines()]
    assert written == ["answer 3", "answer 2", "answer 1"]  # completion order on disk
    player = ReplayBackend(cassette)
    replayed = await asyncio.gather(*(player.generate(vote) for _ in range(3)))
    assert [r.text for r in replayed] == ["answer 1", "answer 2", "answer 3"]


async def test_recording_onto_a_cassette_continues_its_numbering(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    vote = script()[3]
    first = ReplayBackend(cassette, inner=Numbered(), mode="record")
    await first.generate(vote)
    second = ReplayBackend(cassette, inner=Numbered(), mode="record")
    assert (await second.generate(vote)).text == "answer 1"
    assert [e.occurrence for e in load_cassette(cassette)] == [0, 1]
    player = ReplayBackend(cassette)
    assert [(await player.generate(vote)).text for _ in range(2)] == ["answer 1", "answer 1"]


async def test_corrupt_cassette_names_file_and_line(tmp_path: Path) -> None:
    cassette = tmp_path / "bad.jsonl"
    await record(cassette)
    lines = cassette.read_text().splitlines()
    lines[1] = '{"purpose": "take"}'
    cassette.write_text("\n".join(lines) + "\n")
    with pytest.raises(CassetteError, match=r"bad\.jsonl, line 2"):
        ReplayBackend(cassette)


def test_missing_cassette_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="does not exist"):
        ReplayBackend(tmp_path / "nope.jsonl")


def test_recording_needs_an_inner_backend(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="inner backend"):
        ReplayBackend(tmp_path / "c.jsonl", mode="record")
    with pytest.raises(ValueError, match="Valid modes"):
        ReplayBackend(tmp_path / "c.jsonl", inner=simulated(), mode="live")  # type: ignore[arg-type]


async def test_pure_replay_uses_the_recorded_models(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    await record(cassette)
    entries = load_cassette(cassette)
    player = ReplayBackend(cassette)
    for entry in entries:
        assert player.model_for(entry.tier) == entry.model


def test_a_whole_debate_replays_identically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        runner = importlib.import_module("crux_lab.runner")
        engines = importlib.import_module("crux_lab.engines")
    except ImportError as exc:  # pragma: no cover - only before the runner lands
        pytest.skip(f"the debate runner is not importable yet: {exc}")
    ids = write_library(tmp_path / "personas")
    monkeypatch.setenv("CRUX_LAB_PERSONAS", str(tmp_path / "personas"))
    engine = first_loadable_engine(engines)
    if engine is None:  # pragma: no cover
        pytest.skip("no debate engine is installed yet")
    cassette = tmp_path / "debate.jsonl"
    base = {"topic": "Is remote work better?", "persona_ids": ids, "engine": engine, "seed": 5, "max_turns": 6}
    live = runner.run_debate_sync(DebateConfig(backend="simulated", **base), cassette=cassette)
    again = runner.run_debate_sync(DebateConfig(backend="replay", **base), cassette=cassette)
    assert live.complete and again.complete, (live.error, again.error)
    assert live.transcript, "the debate must have said something"
    assert [t.dialogue for t in again.transcript] == [t.dialogue for t in live.transcript]
    assert [t.persona_id for t in again.transcript] == [t.persona_id for t in live.transcript]
    assert {c.backend for c in again.llm_calls} == {"replay"} and again.backend == "replay"
    assert {c.outcome for c in again.llm_calls} <= {"ok", "repaired"}
    assert again.usage.cost_usd == live.usage.cost_usd
    assert len(load_cassette(cassette)) == len(live.llm_calls)


class OffSchema(Numbered):
    """A backend whose second answer stays off-schema after its repair."""

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        if self.calls == 2:
            raise LLMOutputError(request.purpose, "no JSON object in the reply")
        return LLMResponse(text=f"answer {self.calls}", model=self.model_for(request.tier), backend=self.name)


async def test_an_off_schema_reply_is_recorded_and_replayed_as_the_same_error(tmp_path: Path) -> None:
    cassette = tmp_path / "run.jsonl"
    vote = script()[3]
    recorder = ReplayBackend(cassette, inner=OffSchema(), mode="record")
    assert (await recorder.generate(vote)).text == "answer 1"
    with pytest.raises(LLMOutputError):
        await recorder.generate(vote)
    player = ReplayBackend(cassette)
    assert (await player.generate(vote)).text == "answer 1"
    with pytest.raises(LLMOutputError, match="no JSON object"):
        await player.generate(vote)  # the engine takes the same path as in the recorded run
