"""Hints carry only what the prompt shows: the simulated backend rejects a request whose hints
hold a value its messages do not show, and the simulator's extractors write sentences taken
from the turns, not the deck's wording."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from crux_lab.llm.base import HintNotShown, Hints, LLMRequest, TurnHint, check_hints, unshown_hints
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.llm.simulated.core import SimContext, split_sentences
from crux_lab.llm.simulated.options import SimulatorKnobs
from crux_lab.personas.loader import load_personas, propositions_for

IDS = ["michael-saylor", "peter-schiff"]
TOPIC = "Is Bitcoin a better long-term store of value than gold?"


def backend() -> SimulatedBackend:
    return SimulatedBackend(load_personas(IDS), propositions_for(IDS), seed=0)


async def test_a_hint_the_prompt_does_not_show_is_rejected_naming_purpose_and_field() -> None:
    request = LLMRequest(
        purpose="summarize", system="You summarise debates.", user=f"Topic: {TOPIC}\nSummarise the round.",
        hints=Hints(topic=TOPIC, focus="Gold outperforms Bitcoin in every crisis."),
    )
    with pytest.raises(HintNotShown, match=r"'summarize': hint focus = 'Gold outperforms"):
        await backend().generate(request)


def test_a_turn_or_speaker_the_prompt_does_not_show_is_named() -> None:
    request = LLMRequest(
        purpose="take", system="You are Michael Saylor.", user=f"Topic: {TOPIC}\nSpeaker A: Gold is money.",
        hints=Hints(speaker_id="michael-saylor", topic=TOPIC, turns=[
            TurnHint(speaker_id="peter-schiff", text="Gold is money."),  # the prompt says "Speaker A"
            TurnHint(speaker_id="Speaker A", text="Gold never fails."),  # a turn the prompt cut
        ]),
    )
    names = {"michael-saylor": "Michael Saylor", "peter-schiff": "Peter Schiff"}
    assert unshown_hints(request, names) == [("turns[0].speaker_id", "peter-schiff"), ("turns[1].text", "Gold never fails.")]


def test_values_the_prompt_shows_pass_as_whole_words_and_names() -> None:
    request = LLMRequest(
        purpose="take", system="You are Michael Saylor.", user=f"Topic: {TOPIC}\nSpeaker A: Gold is money.",
        hints=Hints(speaker_id="p1", topic=TOPIC, phase="take",
                    turns=[TurnHint(speaker_id="Speaker A", text="Gold is money.")]),
    )
    check_hints(request, {"p1": "Michael Saylor"})  # passes: the prompt shows p1's name
    with pytest.raises(HintNotShown, match="speaker_id"):
        check_hints(request)  # without its name the id is not shown
    short = LLMRequest(purpose="x", system="", user="A prompt.", hints=Hints(focus="pro"))
    assert unshown_hints(short) == [("focus", "pro")]  # "pro" is not found inside "prompt"


def test_a_turn_hint_carries_words_not_what_the_engine_parsed_from_the_reply() -> None:
    with pytest.raises(ValidationError, match="stance"):
        TurnHint(speaker_id="Speaker A", text="Gold is money.", stance="pro")  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="phase"):
        Hints(phase="Gold is money.")  # a phase is a label from a closed set, never content


def test_a_reader_learns_a_concession_and_where_the_speaker_now_stands_from_its_words() -> None:
    ctx = ctx_for([], "")
    prop = next(p for p in ctx.propositions.values())
    grant = f"I'll grant part of that on {prop.question.rstrip('?').lower()}. I am not sure that {prop.text[0].lower()}{prop.text[1:]}"
    read = ctx.read_turn(TurnHint(speaker_id="peter-schiff", text=grant))
    assert (read.move, read.stance, read.named_reason) == ("CONCEDE", "uncertain", None)
    met = ctx.read_turn(TurnHint(speaker_id="peter-schiff", text=f"{grant} You have met my condition: the price held for ten years."))
    assert (met.move, met.named_reason) == ("CONCEDE", "the price held for ten years")
    claim = ctx.read_turn(TurnHint(speaker_id="peter-schiff", text=prop.text))
    assert (claim.move, claim.stance, claim.proposition_ids[:1]) == ("CLAIM", "pro", [prop.id])


def ctx_for(turns: list[TurnHint], user: str) -> SimContext:
    personas, props = load_personas(IDS), propositions_for(IDS)
    sim = SimContext(random.Random(0), SimulatorKnobs(), personas, props, Hints(topic=TOPIC, turns=turns), user=user)
    sim.turns = [sim.read_turn(t) for t in turns]
    return sim


def test_an_extractor_writes_a_sentence_of_the_turns_not_the_deck() -> None:
    said = [
        TurnHint(speaker_id="michael-saylor", text="Hard money wins. Bitcoin's fixed supply makes it the hardest money ever made."),
        TurnHint(speaker_id="peter-schiff", text="Gold has held value for five thousand years. Bitcoin has no intrinsic value at all."),
    ]
    ctx = ctx_for(said, "\n".join(t.text for t in said))
    sentences = {s for t in said for s in split_sentences(t.text)}
    deck = {p.text for p in ctx.propositions.values()} | {p.question for p in ctx.propositions.values()}
    for prop in ctx.propositions.values():
        text = ctx.paraphrase(prop, "question")
        assert text in sentences and text not in deck


def test_an_extractor_quotes_a_sentence_under_the_topic_rather_than_the_topic() -> None:
    said = [
        TurnHint(speaker_id="michael-saylor", text="Bitcoin is a better long-term store of value than gold. Its supply is fixed forever."),
        TurnHint(speaker_id="peter-schiff", text="Gold has held value for five thousand years."),
    ]
    ctx = ctx_for(said, "\n".join(t.text for t in said))
    quoted = {ctx.paraphrase(prop, "question") for prop in ctx.propositions.values()}
    assert quoted and "Bitcoin is a better long-term store of value than gold." not in quoted


def test_a_speaker_knows_no_disagreement_before_it_hears_one() -> None:
    ctx = ctx_for([], "")
    assert ctx.contested("michael-saylor") == []  # the opponent's planted stances are not read
    heard = ctx_for([TurnHint(speaker_id="Speaker A", text="It is not the case that bitcoin is a better long-term store of value than gold.")], "")
    disputed = heard.contested("michael-saylor")
    assert disputed and all(heard.heard("michael-saylor")[p.id] == "con" for p in disputed)
