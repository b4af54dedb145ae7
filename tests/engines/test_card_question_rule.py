"""A crux card whose question only repeats the card instruction is refused (seen on Qwen text)."""

from __future__ import annotations

import pytest

from crux_lab.engines.crux_room.claims import ClaimIndex
from crux_lab.engines.crux_room.room import _card_problem
from crux_lab.engines.crux_room.schemas import CardReply

NAMES = {"michael-saylor": "Michael Saylor", "peter-schiff": "Peter Schiff"}
TOPIC = "Is Bitcoin a better long-term store of value than gold?"


def card(question: str) -> CardReply:
    return CardReply.model_validate({
        "diagnosis": "Saylor holds that fixed supply makes value; Schiff denies it.", "question": question, "disagreement_type": "premise",
        "personas": [{"persona_id": "Michael Saylor", "position": "YES"}, {"persona_id": "Schiff", "position": "NO"}],
    })


@pytest.mark.parametrize(
    ("question", "problem"),
    [
        ("What is the specific assumption on which the two positions part ways?", "repeats the instruction"),
        ("What is the specific assumption on which the two participants part ways?", "repeats the instruction"),
        ("What is the specific assumption on which the two speakers part ways on?", "names nothing from this conversation"),
        ("Is Bitcoin a store of value?", "restates the debate topic"),
        ("Does a supply no one can dilute give an asset value without any use?", None),
    ],
)
def test_a_card_question_must_name_a_premise_of_its_own(question: str, problem: str | None) -> None:
    conversation = "[michael-saylor] A supply no one can dilute is what gives Bitcoin value.\n[peter-schiff] Gold has use; Bitcoin has none."
    found = _card_problem(card(question), NAMES, TOPIC, ClaimIndex(encode=None), conversation)
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_a_card_that_asks_the_topic_hears_its_own_diagnosis_back() -> None:
    reply = card(TOPIC).model_copy(update={"diagnosis": "Schiff argues that scarcity alone does not create value; Saylor holds that a fixed supply does."})
    found = _card_problem(reply, NAMES, TOPIC, ClaimIndex(encode=None))
    assert found is not None and "restates the debate topic" in found and "scarcity alone does not create value" in found
    # a diagnosis that is itself the topic is not offered as the way out
    bare = card(TOPIC).model_copy(update={"diagnosis": "Bitcoin is a better long-term store of value than gold."})
    found = _card_problem(bare, NAMES, TOPIC, ClaimIndex(encode=None))
    assert found is not None and "your diagnosis" not in found


def test_a_card_whose_diagnosis_repeats_the_instruction_is_sent_back() -> None:
    """Qwen's card on a Polis debate: a fair question, and the question rule copied as its diagnosis."""
    question = "Is the statement that BG will invest in The STEAM Factory true?"
    copied = card(question).model_copy(update={"diagnosis": (
        "The claim named in diagnosis, as a yes/no question that evidence or argument could settle, in the words of "
        "this conversation: the specific point, not 'they disagree about X'.")})
    found = _card_problem(copied, NAMES, TOPIC, ClaimIndex(encode=None))
    assert found is not None and "diagnosis repeats the instruction" in found
    assert _card_problem(card(question), NAMES, TOPIC, ClaimIndex(encode=None)) is None
