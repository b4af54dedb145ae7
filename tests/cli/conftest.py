"""CLI test fixtures: a two-persona library and a tiny fake engine, independent of others' work.

The fake engine is registered into ``crux_lab.engines.ENGINES`` for the test's duration; it
asks the real simulated backend for each turn (so the ledger, usage and
llm_calls rows are real) and fills ``ctx.result`` with a crux and a regime.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import ClassVar

import pytest
from typer.testing import CliRunner

from crux_lab.engines.base import EngineContext, EngineParams
from crux_lab.llm.base import Hints
from crux_lab.models import (
    Crux,
    DebateEvent,
    DialogueTurn,
    DialogueTurnEvent,
    EngineComplete,
    EngineStart,
    Regime,
)
from crux_lab.personas.models import (
    BeliefGraph,
    CorpusChunk,
    Deck,
    DeckFile,
    EvidencePolicy,
    PersonaContract,
    PersonaStances,
    Proposition,
    PropositionStance,
    VoiceProfile,
)

PERSONAS = ("ada", "bo")


class FakeParams(EngineParams):
    rounds: int = 1
    style: str = "plain"


class FakeEngine:
    name: ClassVar[str] = "fake"
    description: ClassVar[str] = "Test-only engine: personas speak in turn, one crux at the end."
    params_model: ClassVar[type[EngineParams]] = FakeParams
    min_personas: ClassVar[int] = 2
    max_personas: ClassVar[int] = 4

    async def run(self, ctx: EngineContext) -> AsyncIterator[DebateEvent]:
        yield EngineStart(engine=self.name, topic=ctx.config.topic, persona_ids=ctx.persona_ids, run_id=ctx.run_id)
        params = ctx.params
        assert isinstance(params, FakeParams)
        n_turns = min(ctx.config.max_turns, params.rounds * len(ctx.persona_ids))
        for i in range(n_turns):
            speaker = ctx.persona_ids[i % len(ctx.persona_ids)]
            hints = Hints(speaker_id=speaker, topic=ctx.config.topic, phase="opening")
            response = await ctx.call(ctx.request("opening", f"You are {speaker}.", ctx.config.topic, hints=hints))
            yield DialogueTurnEvent(
                turn=DialogueTurn(id=f"t{i}", turn_index=i, persona_id=speaker, dialogue=response.text, phase="opening")
            )
        ctx.result.cruxes.append(Crux(id="k1", statement="Is the tide rising?", source="proposed", proposed_by=["ada"]))
        ctx.result.regime = Regime.polarized
        yield EngineComplete(regime=Regime.polarized, summary="done")


class BrokenEngine(FakeEngine):
    name: ClassVar[str] = "broken"
    description: ClassVar[str] = "Test-only engine that raises on its second event."

    async def run(self, ctx: EngineContext) -> AsyncIterator[DebateEvent]:
        yield EngineStart(engine=self.name, topic=ctx.config.topic, persona_ids=ctx.persona_ids)
        raise RuntimeError("engine bug")


def _write(path: Path, model: object) -> None:
    path.write_text(model.model_dump_json(by_alias=True, indent=1))  # type: ignore[attr-defined]


def build_persona_library(root: Path) -> Path:
    """Two synthetic personas who disagree on one proposition, plus their deck."""
    root.mkdir(parents=True, exist_ok=True)
    prop = Proposition(id="t.p1", text="The tide is rising.", question="Is the tide rising?", keywords=["tide"])
    for pid, stance in zip(PERSONAS, ("pro", "con"), strict=True):
        folder = root / pid
        folder.mkdir()
        _write(folder / "contract.json", PersonaContract(
            persona_id=pid, name=pid.title(), kind="synthetic", personality="calm", bias="none",
            stakes="low", epistemology="empirical", time_horizon="years",
            flip_conditions="data", evidence_policy=EvidencePolicy(),
        ))
        _write(folder / "voice.json", VoiceProfile(vocabulary=["indeed"]))
        _write(folder / "stances.json", PersonaStances(persona_id=pid, stances=[
            PropositionStance(proposition_id="t.p1", stance=stance, confidence=0.8, reason=f"{pid} read the gauges."),
        ]))
        chunk = CorpusChunk(id=f"{pid}-c1", text="synthetic note", source="synthetic", kind="synthetic")
        (folder / "corpus.jsonl").write_text(chunk.model_dump_json(by_alias=True) + "\n")
        _write(folder / "beliefs.json", BeliefGraph(persona_id=pid))
    deck = Deck(id="tides", name="Tides", description="test deck", persona_ids=list(PERSONAS), topics=["tides"], propositions=[prop])
    _write(root / "decks.json", DeckFile(decks=[deck]))
    return root


@pytest.fixture
def persona_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = build_persona_library(tmp_path / "personas")
    monkeypatch.setenv("CRUX_LAB_PERSONAS", str(root))
    return root


@pytest.fixture
def fake_engine(monkeypatch: pytest.MonkeyPatch) -> str:
    from crux_lab.engines import ENGINES

    ENGINES.load()  # the real engines first, so the fakes come last in listings
    monkeypatch.setitem(ENGINES.entries, "fake", FakeEngine)
    monkeypatch.setitem(ENGINES.entries, "broken", BrokenEngine)
    return "fake"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def env(tmp_path: Path, persona_library: Path, fake_engine: str) -> dict[str, Path]:
    """Paths one CLI debate writes to (all inside tmp_path)."""
    return {"db": tmp_path / "db" / "t.duckdb", "runs": tmp_path / "runs", "out": tmp_path / "out" / "result.json"}
