"""The panel simulator handlers answer from ground truth and the hints' turn metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

from crux_lab.engines.crux_room.schemas import (
    AspectsReply,
    CardReply,
    ConvergenceReply,
    DetectionReply,
    ExitCheckReply,
    SummaryReply,
    SycophancyCheckReply,
)
from crux_lab.engines.crux_room.testdeck import PERSONA_IDS, TOPIC
from crux_lab.engines.crux_room.testing import deck_simulator
from crux_lab.llm.base import Hints, LLMRequest, TurnHint
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.models import SimulatorKnobs
from crux_lab.personas.loader import load_personas, propositions_for


@pytest.fixture
def sim(use_test_deck: Path) -> SimulatedBackend:
    return deck_simulator()


def ask(sim: SimulatedBackend, purpose: str, schema: type, **hints: object) -> object:
    import asyncio

    hints.setdefault("topic", TOPIC)
    hints.setdefault("persona_ids", list(PERSONA_IDS))
    req = LLMRequest(purpose=purpose, system="s", user="u", output_schema=schema, hints=Hints(**hints))  # type: ignore[arg-type]
    return asyncio.run(sim.generate(req)).parsed


def turn(who: str, prop: str, stance: str, text: str = "x", move: str = "CLAIM") -> TurnHint:
    return TurnHint(speaker_id=who, text=text, move=move, proposition_ids=[prop], stance=stance)


def test_decompose_groups_deck_aspects(sim: SimulatedBackend) -> None:
    r = ask(sim, "decompose", AspectsReply, extra={"n_aspects": 3})
    assert isinstance(r, AspectsReply)
    assert len(r.aspects) == 3 and len({a.label for a in r.aspects}) == 3
    r2 = ask(sim, "decompose", AspectsReply, extra={"n_aspects": 2})
    assert len(r2.aspects) == 2  # type: ignore[attr-defined]


def test_detection_reads_opposed_stances(sim: SimulatedBackend) -> None:
    takes = [turn("maximalist", "p1", "pro"), turn("goldbug", "p1", "con"), turn("trader", "p3", "con")]
    hits = 0
    for _ in range(10):
        r = ask(sim, "detect_disagreement", DetectionReply, turns=takes, aspect="Monetary policy and store of value")
        assert isinstance(r, DetectionReply)
        pos = [d for d in r.disagreements if d.positive]
        assert all(set(d.personas) == {"maximalist", "goldbug"} for d in pos)
        hits += bool(pos)
    assert 6 <= hits <= 10  # a vote can miss (noise the majority vote absorbs)
    r = ask(sim, "detect_disagreement", DetectionReply, turns=[turn("maximalist", "p6", "pro"), turn("goldbug", "p6", "pro")])
    assert not any(d.positive for d in r.disagreements)  # type: ignore[attr-defined]


def test_card_from_room_turns_and_ground_truth(sim: SimulatedBackend) -> None:
    room = [turn("maximalist", "p2", "con"), turn("trader", "p2", "pro")] * 2
    r = ask(sim, "card", CardReply, persona_ids=["maximalist", "trader"], turns=room, proposition_id="p2")
    assert isinstance(r, CardReply)
    assert r.question == "Is bitcoin's volatility disqualifying for a treasury reserve?"
    assert r.disagreement_type.value == "horizon"
    by = {e.persona_id: e for e in r.personas}
    assert by["maximalist"].position.value == "NO" and by["trader"].position.value == "YES"
    assert by["trader"].falsifier == "someone shows drawdowns shrinking across halving cycles"
    assert by["maximalist"].grounding_quotes == ["maximalist-c-p2"]


def test_vague_crux_knob_makes_generic_cards(library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRUX_LAB_PERSONAS", str(library))
    ids = list(PERSONA_IDS)
    vague = SimulatedBackend(load_personas(ids), propositions_for(ids), knobs=SimulatorKnobs(vague_crux=1.0))
    room = [turn("maximalist", "p1", "pro"), turn("goldbug", "p1", "con")]
    r = ask(vague, "card", CardReply, persona_ids=["maximalist", "goldbug"], turns=room)
    assert "see the issue differently" in r.question and r.disagreement_type.value == "claim"  # type: ignore[attr-defined]


def test_exit_and_convergence_checks(sim: SimulatedBackend) -> None:
    same = [turn("maximalist", "p1", "pro", move="PROPOSE_CRUX"), turn("goldbug", "p1", "con", move="PROPOSE_CRUX")]
    other = [turn("maximalist", "p1", "pro", move="PROPOSE_CRUX"), turn("goldbug", "p4", "con", move="PROPOSE_CRUX")]
    yes = sum(ask(sim, "exit_check", ConvergenceReply, turns=same).same_core for _ in range(10))  # type: ignore[attr-defined]
    no = sum(ask(sim, "exit_check", ConvergenceReply, turns=other).same_core for _ in range(10))  # type: ignore[attr-defined]
    assert yes > no
    broad = [turn("maximalist", "p1", "pro"), turn("goldbug", "p4", "con")]
    narrow = [turn("maximalist", "p1", "pro"), turn("goldbug", "p1", "con")]
    s_broad = sum(ask(sim, "exit_check", ExitCheckReply, turns=broad, extra={"exchange_turns": 4}).crux_surfaced for _ in range(10))  # type: ignore[attr-defined]
    s_narrow = sum(ask(sim, "exit_check", ExitCheckReply, turns=narrow, extra={"exchange_turns": 4}).crux_surfaced for _ in range(10))  # type: ignore[attr-defined]
    assert s_narrow > s_broad


def test_summary_and_sycophancy_check(sim: SimulatedBackend) -> None:
    r = ask(sim, "summarize", SummaryReply, turns=[turn("maximalist", "p1", "pro"), turn("goldbug", "p1", "con")])
    assert "The Maximalist affirmed" in r.summary and "clashed on" in r.summary  # type: ignore[attr-defined]
    cave = turn("trader", "p2", "uncertain", "I'll grant part of that.", move="CONCEDE")
    named = turn("trader", "p2", "uncertain", "I'll grant that. You have met my condition: drawdowns shrank.", move="CONCEDE")
    prev = turn("maximalist", "p2", "con", "Every halving cycle shows lower drawdowns.")
    plain = ask(sim, "anti_sycophancy_check", SycophancyCheckReply, speaker_id="trader", turns=[turn("goldbug", "p2", "pro"), cave])
    assert plain.capitulates and not plain.names_specific_claim and not plain.flip_condition_met  # type: ignore[attr-defined]
    ok = ask(sim, "anti_sycophancy_check", SycophancyCheckReply, speaker_id="trader", turns=[prev, named])
    assert ok.capitulates and ok.names_specific_claim and ok.flip_condition_met  # type: ignore[attr-defined]
