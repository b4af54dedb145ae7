"""The panel simulator's extractor handlers read the turn texts they are shown (never ids or
ground-truth stances), answer in their own words, and keep their failure knobs."""

from __future__ import annotations

import asyncio
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
from crux_lab.llm.base import Hints, LLMRequest, TurnHint
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.llm.simulated.core import split_sentences
from crux_lab.llm.simulated.options import SimulatorKnobs
from crux_lab.personas.loader import load_personas, propositions_for
from tests.engines.crux_deck import PERSONA_IDS, PROPOSITIONS, TOPIC
from tests.engines.scripted import deck_simulator

TEXT = {pid: text for pid, text, *_ in PROPOSITIONS}
QUESTION = {pid: q for pid, _, q, *_ in PROPOSITIONS}


@pytest.fixture
def sim(use_test_deck: Path) -> SimulatedBackend:
    return deck_simulator()


def ask(sim: SimulatedBackend, purpose: str, schema: type, user: str = "u", **hints: object) -> object:
    hints.setdefault("topic", TOPIC)
    ids = hints.pop("persona_ids", list(PERSONA_IDS))
    shown = Hints(**hints)  # type: ignore[arg-type]
    # the prompt names the personas present and shows what the hints restate (the backend checks it)
    user = f"{user}\nIn this conversation: {', '.join(ids)}\n{shown.model_dump_json()}"  # type: ignore[arg-type]
    req = LLMRequest(purpose=purpose, system="s", user=user, output_schema=schema, hints=shown)
    return asyncio.run(sim.generate(req)).parsed


def said(who: str, prop: str, stance: str, move: str = "CLAIM", extra: str = "") -> TurnHint:
    """A turn that states ``prop`` with ``stance``, and makes ``move``, in words (the only thing
    an extractor reads)."""
    claim = TEXT[prop].rstrip(".")
    text = {"pro": claim, "con": f"It is not the case that {claim[0].lower()}{claim[1:]}"}.get(stance, f"I am not sure that {claim}")
    question = QUESTION[prop].rstrip("?")
    lead = {"PROPOSE_CRUX": f"I think the core disagreement is {question[0].lower()}{question[1:]}? My answer: "}.get(move, "")
    if move == "CONCEDE":
        return TurnHint(speaker_id=who, text=f"{extra} {text}.".strip())  # the grant, then where the speaker now stands
    return TurnHint(speaker_id=who, text=f"{lead}{text}. {extra}".strip())


def test_decompose_gives_aspects_in_its_own_words(sim: SimulatedBackend) -> None:
    r = ask(sim, "decompose", AspectsReply, extra={"n_aspects": 3})
    assert isinstance(r, AspectsReply)
    assert len(r.aspects) == 3 and len({a.label for a in r.aspects}) == 3
    assert not any(a.description.rstrip("?.") in {q.rstrip("?") for q in QUESTION.values()} for a in r.aspects)
    r2 = ask(sim, "decompose", AspectsReply, extra={"n_aspects": 2})
    assert len(r2.aspects) == 2  # type: ignore[attr-defined]


def test_detection_reads_opposed_stances_from_the_texts(sim: SimulatedBackend) -> None:
    takes = [said("maximalist", "p1", "pro"), said("goldbug", "p1", "con"), said("trader", "p3", "con")]
    hits = 0
    for _ in range(10):
        r = ask(sim, "detect_disagreement", DetectionReply, turns=takes, aspect="Monetary policy and store of value")
        assert isinstance(r, DetectionReply)
        pos = [d for d in r.disagreements if d.positive]
        assert all(set(d.personas) == {"maximalist", "goldbug"} for d in pos)
        # the claim is a sentence the takes said, not one the reader made up from the deck
        assert all("supply" in d.claim.lower() and d.claim in {x for t in takes for x in split_sentences(t.text)} for d in pos)
        hits += bool(pos)
    assert 6 <= hits <= 10  # a vote can miss (noise the majority vote absorbs)
    agree = [said("maximalist", "p6", "pro"), said("goldbug", "p6", "pro")]
    r = ask(sim, "detect_disagreement", DetectionReply, turns=agree)
    assert not any(d.positive for d in r.disagreements)  # type: ignore[attr-defined]


def test_card_names_the_premise_from_the_conversation(sim: SimulatedBackend) -> None:
    room = [
        said("maximalist", "p2", "con", extra="Every halving cycle shows lower drawdowns."),
        said("trader", "p2", "pro", extra="A reserve asset with sixty percent drawdowns fails the mandate."),
    ] * 2
    menu = (
        "Corpus chunks each participant may cite, by id:\nmaximalist:\n  [maximalist-c-p2] Volatility fades as halving "
        "cycles show lower drawdowns. (source: synthetic)\ntrader:\n  [trader-c-p2] Sixty percent drawdowns fail the "
        "treasury mandate. (source: synthetic)\n\nExtract the crux card."
    )
    r = ask(sim, "card", CardReply, user=menu, persona_ids=["maximalist", "trader"], turns=room, focus="Is volatility a problem for a reserve?")
    assert isinstance(r, CardReply)
    assert "volatility" in r.question.lower() and r.question != QUESTION["p2"]
    by = {e.persona_id: e for e in r.personas}
    assert by["maximalist"].position.value == "NO" and by["trader"].position.value == "YES"
    assert by["maximalist"].grounding_quotes == ["maximalist-c-p2"] and by["trader"].grounding_quotes == ["trader-c-p2"]
    assert "split is a" not in r.diagnosis and r.diagnosis


def test_card_avoids_the_topic_when_a_premise_was_stated(sim: SimulatedBackend) -> None:
    # the topic is itself a claim the personas hold (p1 here): the card must name what lies under it
    room = [said("maximalist", "p1", "pro"), said("goldbug", "p1", "con"), said("maximalist", "p2", "con", "PROPOSE_CRUX"), said("goldbug", "p2", "pro", "PROPOSE_CRUX")]
    r = ask(sim, "card", CardReply, topic=TEXT["p1"], persona_ids=["maximalist", "goldbug"], turns=room)
    assert "volatility" in r.question.lower()  # type: ignore[attr-defined]


def test_vague_crux_knob_makes_generic_cards(library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRUX_LAB_PERSONAS", str(library))
    ids = list(PERSONA_IDS)
    vague = SimulatedBackend(load_personas(ids), propositions_for(ids), knobs=SimulatorKnobs(vague_crux=1.0))
    room = [said("maximalist", "p1", "pro"), said("goldbug", "p1", "con")]
    r = ask(vague, "card", CardReply, persona_ids=["maximalist", "goldbug"], turns=room)
    assert "see the issue differently" in r.question and r.disagreement_type.value == "claim"  # type: ignore[attr-defined]


def test_misread_knob_makes_the_reader_miss(library: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRUX_LAB_PERSONAS", str(library))
    ids = list(PERSONA_IDS)
    blind = SimulatedBackend(load_personas(ids), propositions_for(ids), knobs=SimulatorKnobs(misread=1.0))
    takes = [said("maximalist", "p1", "pro"), said("goldbug", "p1", "con")]
    found = [d for _ in range(5) for d in ask(blind, "detect_disagreement", DetectionReply, turns=takes).disagreements if d.positive]  # type: ignore[attr-defined]
    assert not any("supply" in d.claim.lower() for d in found)


def test_exit_and_convergence_checks(sim: SimulatedBackend) -> None:
    same = [said("maximalist", "p1", "pro", "PROPOSE_CRUX"), said("goldbug", "p1", "con", "PROPOSE_CRUX")]
    other = [said("maximalist", "p1", "pro", "PROPOSE_CRUX"), said("goldbug", "p4", "con", "PROPOSE_CRUX")]
    yes = sum(ask(sim, "exit_check", ConvergenceReply, turns=same).same_core for _ in range(10))  # type: ignore[attr-defined]
    no = sum(ask(sim, "exit_check", ConvergenceReply, turns=other).same_core for _ in range(10))  # type: ignore[attr-defined]
    assert yes > no
    broad = [said("maximalist", "p1", "pro"), said("goldbug", "p4", "con")]
    narrow = [said("maximalist", "p1", "pro"), said("goldbug", "p1", "con")]
    s_broad = sum(ask(sim, "exit_check", ExitCheckReply, turns=broad, extra={"exchange_turns": 4}).crux_surfaced for _ in range(10))  # type: ignore[attr-defined]
    s_narrow = sum(ask(sim, "exit_check", ExitCheckReply, turns=narrow, extra={"exchange_turns": 4}).crux_surfaced for _ in range(10))  # type: ignore[attr-defined]
    assert s_narrow > s_broad


def test_summary_and_sycophancy_check(sim: SimulatedBackend) -> None:
    r = ask(sim, "summarize", SummaryReply, turns=[said("maximalist", "p1", "pro"), said("goldbug", "p1", "con")])
    assert "The Maximalist argued" in r.summary and "clash" in r.summary  # type: ignore[attr-defined]
    said_clause = r.summary.split("over whether ")[1].rstrip(".").lower()  # type: ignore[attr-defined]
    assert said_clause and any(said_clause in t.text.lower() for t in (said("maximalist", "p1", "pro"), said("goldbug", "p1", "con")))  # from the turns
    cave = said("trader", "p2", "uncertain", "CONCEDE", "I'll grant part of that.")
    named = said("trader", "p2", "uncertain", "CONCEDE", "I'll grant that. You have met my condition: drawdowns shrank.")
    prev = said("maximalist", "p2", "con", extra="Every halving cycle shows lower drawdowns.")
    plain = ask(sim, "anti_sycophancy_check", SycophancyCheckReply, speaker_id="trader", turns=[said("goldbug", "p2", "pro"), cave])
    assert plain.capitulates and not plain.names_specific_claim and not plain.flip_condition_met  # type: ignore[attr-defined]
    ok = ask(sim, "anti_sycophancy_check", SycophancyCheckReply, speaker_id="trader", turns=[prev, named])
    assert ok.capitulates and ok.names_specific_claim and ok.flip_condition_met  # type: ignore[attr-defined]
