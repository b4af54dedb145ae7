"""The guards for what real text does (crux_lab.engines.guards), on hand-written text: the
failures Qwen2.5-Coder-1.5B showed on the Saylor-Schiff debate (a turn that copies the
opponent's turn, a turn that is only the topic question, a side quoting the other speaker),
the one repair each guard takes through a real backend's repair path, and the early end of a
debate whose persona turns a guard keeps out every time."""

from __future__ import annotations

import json
from typing import Any

import pytest

from crux_lab.engines.crux_room.schemas import CardReply, SpeechReply
from crux_lab.engines.dialogue.schemas import DCGCrystallizationResult
from crux_lab.engines.guards import (
    GIVE_UP_AFTER,
    Said,
    Side,
    SideGuard,
    TooWeakToPlay,
    TurnGuard,
    brief_flips,
    briefed_positions,
    echo_problem,
    quote_found,
    repeats,
    role_problem,
    side_outcome,
    tally,
    turn_outcome,
)
from crux_lab.engines.names import persona_ref
from crux_lab.llm.base import LLMOutputError, LLMRequest
from crux_lab.llm.structured import Reply, answer_with_one_repair
from crux_lab.models import Usage
from crux_lab.personas.loader import load_persona
from crux_lab.personas.prompt import build_system_prompt

TOPIC = "Is Bitcoin a better long-term store of value than gold?"
NAMES = {"michael-saylor": "Michael Saylor", "peter-schiff": "Peter Schiff"}
SCHIFF = (
    "Gold has been money for five thousand years. Bitcoin has no intrinsic value, and its price "
    "is driven by speculation rather than any use."
)
SAYLOR = "Bitcoin's supply is capped at 21 million coins, and no central bank can print more of it."
EARLIER = [Said("michael-saylor", "Michael Saylor", SAYLOR, "pro", None, ("c1",)),
           Said("peter-schiff", "Peter Schiff", SCHIFF, "con", None, ("c1",))]


# -- echo ---------------------------------------------------------------------


def test_a_turn_that_copies_the_opponents_turn_is_an_echo() -> None:
    copied = "Gold has been money for five thousand years. Bitcoin has no intrinsic value, and its price is driven by speculation."
    problem = echo_problem(copied, EARLIER, TOPIC, "michael-saylor")
    # the problem goes back to the model, so it quotes the point and names no speaker
    assert problem is not None and "repeats an earlier point" in problem and "Schiff" not in problem


def test_a_turn_that_is_only_the_topic_question_is_an_echo() -> None:
    problem = echo_problem("Is Bitcoin a better long-term store of value than gold?", EARLIER, TOPIC, "peter-schiff")
    assert problem is not None and "topic" in problem


def test_a_turn_repeating_its_own_speaker_says_so() -> None:
    problem = echo_problem(f"  {SAYLOR.upper()} ", EARLIER, TOPIC, "michael-saylor")
    assert problem is not None and "your own earlier point" in problem


def test_a_copy_with_a_word_changed_every_few_words_is_still_an_echo() -> None:
    """A local server's repeat penalty (``own_words``) turns a copy into one with words swapped;
    these are Qwen2.5-1.5B's, from a panel debate under that penalty."""
    topic = "Should Brackwater allow six-storey apartment blocks around its railway station?"
    assert echo_problem("Should Brackwater allow six-storey apartment buildings around its railway station?", [], topic, "b")
    earlier = [Said("housing-builder", "The Small Builder", "Converting the rooms above shops and bringing back "
                    "empty flats above Brackwater's high-street shops also presents risks.")]
    copy = "Converting the rooms above shops and bringing back the empty flats above the station would not be allowed."
    assert repeats(copy, earlier[0].text)  # what the speakers' benchmark counts as a kept repeat
    problem = echo_problem(copy, earlier, topic, "housing-builder")
    assert problem is not None and "your own earlier point" in problem
    # a denial of the same claim with a reason of its own is no echo
    assert echo_problem("Flats above shops are few, and most need new stairs before anyone can live in them.", earlier, topic, "b") is None


def test_an_earlier_turn_said_again_with_words_changed_is_sent_back() -> None:
    """Qwen2.5-1.5B's panel turns on dev (seed 0), each a copy of an earlier turn with a word or
    two changed, which the word-triple rule alone kept (15 of 82 turns on the six scenarios)."""
    water = "Should Thornmere raise water bills to replace its old water mains?"
    mine = Said("water-pensioner", "The Pensioner", "I don't believe raising water bills to replace old mains would be "
                "justified. While it may seem logical to save money, the benefits of reducing water loss are negligible.")
    problem = echo_problem("I don't believe raising water bills to replace the old mains would be justified.", [mine],
                           water, "water-pensioner")
    assert problem is not None and "your own earlier point" in problem
    health = "Should Fenwick Cross open a supervised drug consumption room in its town centre?"
    theirs = Said("public-health-shopkeeper", "The Shopkeeper", "Yes, it is reasonable to consider opening a supervised "
                  "drug consumption room if it improves access to treatment, reduces the risk of overdoses and enhances public health.")
    problem = echo_problem("I think it's reasonable to consider opening a supervised drug consumption room if it improves "
                           "access to treatment, reduces the risk of overdoses, and enhances public health.", [theirs], health,
                           "public-health-councillor")
    assert problem is not None and "repeats an earlier point" in problem
    # the other side of another speaker's turn, in its words, is a denial, not an echo; against
    # one's own turn a flipped stance field does not excuse a copy
    theirs = Said(theirs.persona_id, theirs.name, theirs.text, "pro")
    denial = ("No, it is not reasonable to consider opening a supervised drug consumption room if it improves access "
              "to treatment, reduced the risk of overdose and enhances public health.")
    assert echo_problem(denial, [theirs], health, "public-health-nurse", "con") is None
    assert echo_problem(denial, [theirs], health, "public-health-nurse", "pro") is not None
    mine = Said("public-health-nurse", "The Nurse", theirs.text, "pro")
    assert echo_problem(denial, [mine], health, "public-health-nurse", "con") is not None
    # the other speaker's sentence with the stance field flipped and no negation of its own is a
    # copy, not a denial (Qwen2.5-1.5B on the panel cassette, Schiff after Saylor)
    topic = "Is Bitcoin a better long-term store of value than gold?"
    saylor = Said("michael-saylor", "Michael Saylor", "I understand your concerns about the risks associated with holding "
                  "Bitcoin, such as price fluctuations, regulatory uncertainties, and security issues, but the potential "
                  "benefits outweigh these concerns.", "pro")
    parrot = ("I understand your concerns about the risks associated with Bitcoin, such as price fluctuations, regulatory "
              "uncertainty, and security issues, but I believe the potential benefits outweigh these concerns.")
    assert echo_problem(parrot, [saylor], topic, "peter-schiff", "con") is not None
    # the same subject in a turn with points of its own is kept
    assert echo_problem("A supervised room moves injecting off the street, but Fenwick Cross has no clinic staff to run "
                        "one at night and the police would have to agree not to wait outside.", [theirs], health, "b") is None


def test_a_short_question_in_the_topic_words_is_the_topic_asked_back() -> None:
    """Qwen2.5-1.5B's panel turns on dev (housing, seed 0): the topic asked back with a word
    changed, too short for the content-word rule, kept before this rule."""
    topic = "Should Brackwater allow six-storey apartment blocks around its railway station?"
    for turn in ("Should Brackwater allow six-storey apartments around its railway station?",
                 "Should Brackwater allow six storey apartment buildings around its railway station?",
                 "Should Brackwater allow six-storey apartment buildings near its railway station?"):
        problem = echo_problem(turn, [], topic, "housing-planner")
        assert problem is not None and "topic" in problem
    # a question of its own in some of the topic's words, and a stance with a reason, are kept
    assert echo_problem("Would six-storey blocks by the station raise rents on Station Road?", [], topic, "b") is None
    assert echo_problem("Yes, Brackwater should allow six-storey apartment blocks around the railway station "
                        "to keep the station viable.", [], topic, "b") is None


def test_a_turn_that_answers_in_new_words_is_no_echo() -> None:
    answer = ("Five thousand years of gold prove it was the best money of its age. Bitcoin is better money: "
              "it is scarce by code, you cannot print more of it.")
    assert echo_problem(answer, EARLIER, TOPIC, "michael-saylor") is None


# -- role confusion -----------------------------------------------------------


def test_a_stance_against_the_declared_position_without_a_reason_is_refused() -> None:
    guard = TurnGuard("michael-saylor", TOPIC, EARLIER)
    found = guard.check("Bitcoin's supply keeps growing and it will fail as money.", "con", None, ["c1"])
    assert found is not None and found.guard == "role"
    assert '"pro"' in found.problem and "21 million" in found.problem  # it restates the position


def test_a_change_with_a_named_reason_or_on_another_claim_passes() -> None:
    declared = {s.addresses[0]: s for s in EARLIER if s.persona_id == "michael-saylor"}
    assert role_problem("con", "the 2022 drawdown showed it is no safe haven", ["c1"], declared) is None
    assert role_problem("con", None, ["c2"], declared) is None
    assert role_problem("uncertain", None, ["c1"], declared) is None


def test_the_position_a_persona_is_briefed_on_outranks_its_own_first_turn() -> None:
    """Qwen opened Schiff on Saylor's side ("I believe Bitcoin is a better long-term store of
    value than gold"); anchored on that first turn, the guard then held Schiff to it. Anchored
    on where Schiff's own system prompt says he stands, the wrong opening is sent back."""
    schiff = load_persona("peter-schiff")
    system = build_system_prompt(schiff)
    briefed = briefed_positions(system, TOPIC, "peter-schiff", "Peter Schiff", "topic")
    assert briefed["topic"].stance == "con" and briefed["topic"].from_brief
    wrong_first = [Said("peter-schiff", "Peter Schiff", "I believe Bitcoin is a better long-term store of value than gold.", "pro", None, ("topic",))]
    guard = TurnGuard("peter-schiff", TOPIC, wrong_first, briefed=briefed)
    found = guard.check("Bitcoin is still the better store of value, I hold to that.", "pro", None, ["topic"])
    assert found is not None and found.guard == "role" and "your brief says where you stand: " in found.problem
    assert f'answer to "{TOPIC}": no, confidence' in found.problem
    assert guard.check("Gold has industrial demand; Bitcoin has none, so it is no store of value.", "con", None, ["topic"]) is None
    # an opening, before anyone else spoke: a "named reason" cannot excuse leaving the brief
    opening = TurnGuard("peter-schiff", TOPIC, [], briefed=briefed)
    found = opening.check("Yes, Bitcoin is a better long-term store of value than gold.", "pro", "I changed my mind", ["topic"])
    assert found is not None and found.guard == "role" and "nobody else has spoken yet" in found.problem
    # after Saylor spoke, a reason counts when it is his argument (or one of Schiff's own conditions)
    heard = TurnGuard("peter-schiff", TOPIC, EARLIER[:1], briefed=briefed, flips=brief_flips(system))
    assert heard.check("You convinced me: it is the better store of value.", "pro", "no central bank can print more of it", ["topic"]) is None
    assert heard.check("It is the better store of value.", "pro", "Bitcoin became widely used to price everyday goods", ["topic"]) is None
    found = heard.check("It is the better store of value.", "pro", "The debate points out its decentralized nature and high returns", ["topic"])
    assert found is not None and "neither what another speaker said nor one of your conditions" in found.problem
    # without the brief, the first turn is the anchor (the old behaviour), and the same turn passes
    assert TurnGuard("peter-schiff", TOPIC, wrong_first).check("Bitcoin is still the better store of value.", "pro", None, ["topic"]) is None
    # a topic no line of the brief states gives no position
    assert briefed_positions(system, "Should the US create a strategic Bitcoin reserve?", "peter-schiff", "Peter Schiff", "topic") == {}


def test_a_named_reason_moves_the_declared_position() -> None:
    moved = [*EARLIER, Said("michael-saylor", "Michael Saylor", "You are right, I now say no.", "con", "the drawdown", ("c1",))]
    guard = TurnGuard("michael-saylor", TOPIC, moved)
    assert guard.check("Bitcoin cannot be trusted as a store of value after all.", "con", None, ["c1"]) is None
    found = guard.check("Bitcoin is the best store of value after all, I said it first.", "pro", None, ["c1"])
    assert found is not None and found.guard == "role"


# -- grounded sides -----------------------------------------------------------


def test_quotes_match_over_case_whitespace_and_punctuation() -> None:
    assert quote_found('"bitcoin has NO intrinsic value,"', [SCHIFF])
    assert not quote_found("Bitcoin has no value at all", [SCHIFF])  # a paraphrase is no quote
    assert not quote_found("Bitcoin", [SCHIFF])  # one word proves nothing


def _card_guard() -> SideGuard:
    return SideGuard(
        lambda r: [Side(e.persona_id, persona_ref(e.persona_id, NAMES), e.quote) for e in r.personas],
        {"michael-saylor": [SAYLOR], "peter-schiff": [SCHIFF]},
        NAMES,
    )


def _card(saylor_quote: str, schiff_quote: str) -> dict[str, Any]:
    return {
        "diagnosis": "Saylor holds that a fixed supply gives value; Schiff denies it.",
        "question": "Does scarcity alone make an asset hold value?", "disagreement_type": "premise",
        "personas": [
            {"persona_id": "Saylor", "position": "YES", "reasoning": "Supply is fixed.", "quote": saylor_quote},
            {"persona_id": "Peter Schiff", "position": "NO", "reasoning": "No use.", "quote": schiff_quote},
        ],
    }


def test_a_side_quoting_the_other_speaker_is_caught_as_swapped() -> None:
    guard = _card_guard()
    bad = guard.ungrounded(CardReply.model_validate(_card("Gold has been money for five thousand years", "no central bank can print more")))
    problems = {s.persona_id: p for s, p in bad}
    assert set(problems) == {"michael-saylor", "peter-schiff"}
    assert "quotes Peter Schiff, not Michael Saylor" in problems["michael-saylor"]


def test_a_card_side_is_sent_back_once_then_dropped() -> None:
    guard = _card_guard()
    data = _card("capped at 21 million coins", "")
    with pytest.raises(ValueError, match="the side of Peter Schiff has no quote"):
        CardReply.model_validate(data, context=guard.context())
    reply = CardReply.model_validate(data, context=guard.context())  # the repair came back the same: it validates
    drop, events = side_outcome({}, guard, reply, NAMES)
    assert drop == {("", "peter-schiff")}
    assert [e.purpose for e in events] == ["guard_sides"] and "dropped" in events[0].error


def test_a_dcg_stance_quoting_the_wrong_speaker_is_dropped_by_dispute() -> None:
    guard = SideGuard(
        lambda r: [Side(u.speaker_id, persona_ref(u.speaker_id, NAMES), u.quote, u.dispute_id) for u in r.upsert_stances],
        {"michael-saylor": [SAYLOR], "peter-schiff": [SCHIFF]},
        NAMES,
    )
    reply = DCGCrystallizationResult.model_validate({"upsert_stances": [
        {"dispute_id": "new-1", "speaker_id": "Saylor", "side": "YES", "statement": "yes", "quote": "capped at 21 million coins"},
        {"dispute_id": "new-1", "speaker_id": "Schiff", "side": "NO", "statement": "no", "quote": "capped at 21 million coins"},
    ]})
    drop, _ = side_outcome({}, guard, reply, NAMES)
    assert drop == {("new-1", "peter-schiff")}


def test_a_crystallization_with_stances_on_an_undeclared_dispute_is_sent_back_once() -> None:
    # Qwen's reply on the Saylor-Schiff cassette: both stances under "new-1", no new_disputes,
    # Saylor's quote taken from the reason his turn named (which the crystallizer is shown)
    from pydantic import ValidationError

    from crux_lab.engines.dialogue.crystallizer import DCGCrystallizer
    from crux_lab.models import DialogueTurn

    turns = [
        DialogueTurn(id="t0", turn_index=0, persona_id="michael-saylor", phase="opening", dialogue=SAYLOR,
                     named_reason="Gold is hard to move, verify and divide, and its supply keeps growing"),
        DialogueTurn(id="t1", turn_index=1, persona_id="peter-schiff", phase="opening", dialogue=SCHIFF),
    ]
    guard = DCGCrystallizer(TOPIC, list(NAMES), NAMES).side_guard(turns)
    assert guard is not None
    stances = [
        {"dispute_id": "new-1", "speaker_id": "michael-saylor", "side": "YES", "statement": "s",
         "quote": "Gold is hard to move, verify and divide", "derived_from_turns": [0]},
        {"dispute_id": "new-1", "speaker_id": "peter-schiff", "side": "NO", "statement": "s",
         "quote": "Bitcoin has no intrinsic value", "derived_from_turns": [1]},
    ]
    with pytest.raises(ValidationError) as sent_back:
        DCGCrystallizationResult.model_validate({"upsert_stances": stances}, context=guard.context())
    assert '"new-1"' in str(sent_back.value) and "add it to new_disputes" in str(sent_back.value)
    assert guard.fired == []  # both quotes are their speakers' own words: no side is at fault
    # a repair that still names it passes (the graph refuses those stances later, with a warning)
    assert DCGCrystallizationResult.model_validate({"upsert_stances": stances}, context=guard.context())
    # a reply that declares the dispute is not sent back at all
    fresh = DCGCrystallizer(TOPIC, list(NAMES), NAMES).side_guard(turns)
    assert fresh is not None
    fixed = {"new_disputes": [{"id": "new-1", "question": "Does gold's growing supply erode its value?"}], "upsert_stances": stances}
    assert DCGCrystallizationResult.model_validate(fixed, context=fresh.context()).new_disputes
    assert not fresh.asked


# -- the one repair, through a real backend's repair path ---------------------


def _speech(text: str, stance: str = "pro", addresses: tuple[str, ...] = ("c1",)) -> str:
    return json.dumps({"utterance": text, "move": "CLAIM", "stance": stance, "addresses": list(addresses), "named_reason": None})


async def _answer(first: str, second: str, guard: TurnGuard) -> tuple[Any, list[list[dict[str, Any]]]]:
    request = LLMRequest(purpose="crux_turn", system="s", user="u", output_schema=SpeechReply, validation_context=guard.context())
    sent: list[list[dict[str, Any]]] = []

    async def send(messages: list[dict[str, Any]]) -> Reply:
        sent.append(messages)
        return Reply(second, Usage(calls=1), 0, "m")

    response = await answer_with_one_repair("openai", request, [{"role": "user", "content": "u"}], Reply(first, Usage(calls=1), 0, "m"), send, 0.0)
    return response, sent


async def test_an_echo_takes_one_repair_that_says_so_and_the_fixed_turn_is_kept() -> None:
    guard = TurnGuard("michael-saylor", TOPIC, EARLIER)
    response, sent = await _answer(_speech(SCHIFF), _speech("Scarcity by code beats scarcity by geology, and I will hold my coins."), guard)
    assert len(sent) == 1 and "repeats an earlier point" in sent[0][-1]["content"] and "Schiff" not in sent[0][-1]["content"]
    assert response.repaired and guard.verdict(response.parsed) is None
    kept_out, events = turn_outcome({}, guard, response.parsed, NAMES)
    assert kept_out is None and [e.purpose for e in events] == ["guard_echo"] and "kept" in events[0].error


async def test_an_echo_repeated_after_the_repair_is_skipped_never_looped() -> None:
    guard = TurnGuard("peter-schiff", TOPIC, EARLIER)
    response, sent = await _answer(_speech(TOPIC, "con"), _speech(TOPIC, "con"), guard)
    assert len(sent) == 1  # one repair, no more
    kept_out, events = turn_outcome({}, guard, response.parsed, NAMES)
    assert kept_out is not None and kept_out.guard == "echo"
    assert len(events) == 1 and "skipped" in events[0].error


async def test_a_role_confused_turn_is_sent_back_with_the_persona_position() -> None:
    guard = TurnGuard("michael-saylor", TOPIC, EARLIER)
    _, sent = await _answer(_speech("The supply of Bitcoin is growing, so it will lose value.", "con"),
                            _speech("The supply is capped, so each coin keeps its share of the network.", "pro"), guard)
    assert "contradicts your position" in sent[0][-1]["content"] and "21 million" in sent[0][-1]["content"]


def test_the_guard_is_no_part_of_the_request_hash() -> None:
    plain = LLMRequest(purpose="crux_turn", system="s", user="u", output_schema=SpeechReply)
    guarded = plain.model_copy(update={"validation_context": TurnGuard("a", TOPIC, EARLIER).context()})
    assert plain.request_hash("m") == guarded.request_hash("m")
    assert "validation_context" not in guarded.model_dump()


async def test_an_unrepairable_reply_with_a_guard_firing_still_fails_as_off_schema() -> None:
    guard = TurnGuard("peter-schiff", TOPIC, EARLIER)
    with pytest.raises(LLMOutputError):
        await _answer(_speech(TOPIC, "con"), "{not json", guard)
    _, events = turn_outcome({}, guard, None, NAMES)
    assert [e.purpose for e in events] == ["guard_echo"]


# -- a model too weak to play -------------------------------------------------


def test_guards_keeping_out_every_turn_end_the_debate_with_a_named_reason() -> None:
    scratch: dict[str, Any] = {}
    reply = SpeechReply.model_validate_json(_speech(TOPIC, "con"))
    for _ in range(GIVE_UP_AFTER - 1):
        kept_out, _ = turn_outcome(scratch, TurnGuard("peter-schiff", TOPIC, EARLIER), reply, NAMES)
        assert kept_out is not None
    with pytest.raises(TooWeakToPlay, match=r"^debate ended early: every speaker's turns were kept out, 4 persona turns in a row "
                                            r"\(last: the echo guard: this turn only repeats the debate topic"):
        turn_outcome(scratch, TurnGuard("peter-schiff", TOPIC, EARLIER), reply, NAMES)


def test_one_speaker_failing_alone_never_ends_the_debate() -> None:
    scratch: dict[str, Any] = {}
    echo = SpeechReply.model_validate_json(_speech(TOPIC, "con"))
    fine = SpeechReply.model_validate_json(_speech("Bitcoin's supply is capped at 21 million coins.", "pro"))
    turn_outcome(scratch, TurnGuard("michael-saylor", TOPIC, []), fine, NAMES)
    for _ in range(2 * GIVE_UP_AFTER):
        kept_out, _ = turn_outcome(scratch, TurnGuard("peter-schiff", TOPIC, EARLIER), echo, NAMES)
        assert kept_out is not None
    with pytest.raises(TooWeakToPlay, match="every speaker's turns were kept out"):
        turn_outcome(scratch, TurnGuard("michael-saylor", TOPIC, EARLIER), echo, NAMES)


def test_a_turn_still_off_its_side_after_the_repair_is_kept_with_a_role_flag() -> None:
    schiff = load_persona("peter-schiff")
    briefed = briefed_positions(build_system_prompt(schiff), TOPIC, "peter-schiff", "Peter Schiff", "topic")
    guard = TurnGuard("peter-schiff", TOPIC, [], briefed=briefed)
    reply = SpeechReply.model_validate_json(_speech("Bitcoin beats gold: its supply is capped at 21 million.", "pro", addresses=("topic",)))
    kept_out, events = turn_outcome({}, guard, reply, NAMES)
    assert kept_out is None and guard.flagged is not None and guard.flagged.guard == "role"
    assert [e.purpose for e in events] == ["guard_role"] and "kept with a role flag" in events[0].error


def test_an_openings_stance_is_read_on_the_topic_even_when_it_names_claims() -> None:
    """Qwen opened Saylor with stance "no" and listed two claims of his own words as what he
    addressed; read on those claims, where his brief says nothing, the guard let it pass. An
    opening's format asks its stance on the debate question, so that is where it is read."""
    saylor = load_persona("michael-saylor")
    briefed = briefed_positions(build_system_prompt(saylor), TOPIC, "michael-saylor", "Michael Saylor", "topic")
    reply = SpeechReply.model_validate_json(_speech("Gold is hard to move and its supply grows; Bitcoin is digital property.", "con",
                                                    addresses=("Gold is hard to move", "Gold has lost ground to Bitcoin")))
    assert TurnGuard("michael-saylor", TOPIC, [], briefed=briefed).check_reply(reply) is None  # read on the claims it named
    found = TurnGuard("michael-saylor", TOPIC, [], briefed=briefed, stance_on=("topic",)).check_reply(reply)
    assert found is not None and found.guard == "role"


def test_a_kept_turn_resets_the_streak() -> None:
    scratch: dict[str, Any] = {}
    echo = SpeechReply.model_validate_json(_speech(TOPIC, "con"))
    fine = SpeechReply.model_validate_json(_speech("Gold pays no yield, but it never defaulted.", "con"))
    for _ in range(3):
        for _ in range(GIVE_UP_AFTER - 1):
            turn_outcome(scratch, TurnGuard("peter-schiff", TOPIC, []), echo, NAMES)
        turn_outcome(scratch, TurnGuard("peter-schiff", TOPIC, []), fine, NAMES)
    assert tally(scratch).streak == 0 and tally(scratch).fired["echo"] == 3 * (GIVE_UP_AFTER - 1)


# -- rates over runs ------------------------------------------------------------


def test_guard_rates_count_turns_kept_out_and_sides_dropped() -> None:
    from crux_lab.analysis.metrics import guard_rates
    from crux_lab.models import DebateConfig, DebateResult, DialogueTurn, EngineError

    def run(engine: str, kept: int, events: list[tuple[str, str]], error: str | None = None) -> DebateResult:
        r = DebateResult(run_id=f"r{engine}{kept}", engine=engine, backend="simulated", error=error,
                         config=DebateConfig(topic=TOPIC, persona_ids=list(NAMES), engine=engine))
        r.transcript = [DialogueTurn(id=f"t{i}", turn_index=i, persona_id="peter-schiff", dialogue=f"Turn {i} says this.", phase="round")
                        for i in range(kept)]
        r.events = [EngineError(level="warning", purpose=p, error=e) for p, e in events]
        return r

    rates = guard_rates([
        run("dcg", 6, [("guard_echo", "x (sent back once, still so: the turn was skipped)"),
                       ("guard_echo", "x (sent back once; the repaired turn was kept)"),
                       ("guard_sides", "x (the side was dropped)")]),
        run("dcg", 2, [("guard_role", "x (sent back once, still so: the turn was skipped)")],
            error="debate ended early: the role guard kept out 4 persona turns in a row"),
        run("direct", 0, []),
    ])
    assert set(rates) == {"dcg"}  # the one-call baselines have no persona turns to guard
    dcg = rates["dcg"]
    assert (dcg["persona_turns"], dcg["guard_echo"], dcg["guard_role"], dcg["guard_sides"], dcg["ended_early"]) == (10, 2, 1, 1, 1)
    assert dcg["echo_rate"] == 0.2 and dcg["role_rate"] == 0.1 and dcg["sides_rate"] == 1.0


def test_a_label_copied_from_the_request_is_dropped_from_the_kept_turn() -> None:
    """Qwen2.5-1.5B on the frozen test set: a harbourmaster's turn began "The claim in a few
    words: ...", a sergeant's "The claim to answer: ...". The label goes, the words stay, and
    the guard reads the words without it; an opening of the speaker's own stays."""
    from crux_lab.engines.dialogue import prompts as dialogue
    from crux_lab.engines.dialogue.schemas import TurnOutput

    form = " ".join([dialogue.EXCHANGE_INSTRUCTION, dialogue.MOVES_HELP, dialogue.TURN_FORMAT])
    said = "Scarcity by code beats scarcity by geology, and I will hold my coins."
    for label in ("The claim in a few words: ", "the claim to answer:  "):
        guard = TurnGuard("michael-saylor", TOPIC, EARLIER, form=form)
        reply = TurnOutput.model_validate({"dialogue": label + said, "stance": "pro", "move": "CLAIM"}, context=guard.context())
        assert reply.dialogue == said and guard.verdict(reply) is None and not guard.fired
    guard = TurnGuard("michael-saylor", TOPIC, EARLIER, form=form)
    own = "I stand by my earlier point: " + said
    assert TurnOutput.model_validate({"dialogue": own, "stance": "pro", "move": "CLAIM"}, context=guard.context()).dialogue == own


def test_a_turn_made_of_its_requests_instructions_is_sent_back() -> None:
    """Qwen2.5-1.5B in a dcg debate: one turn was its format's example value, a closing was its
    round's instruction. Each engine gives the guard its own request's words."""
    from crux_lab.engines.blackboard.board import post_format
    from crux_lab.engines.crux_room import prompts as room
    from crux_lab.engines.dialogue import prompts as dialogue

    dcg = " ".join([dialogue.RESOLUTION_INSTRUCTION, dialogue.MOVES_HELP, dialogue.TURN_FORMAT])
    for text in ("your words, in your own voice",
                 "you now agree on... what you still disagree on... what the core question between you is"):
        found = TurnGuard("michael-saylor", TOPIC, EARLIER, form=dcg).check(text, "yes", None, [])
        assert found is not None and "copies the instructions" in found.problem
        assert TurnGuard("michael-saylor", TOPIC, EARLIER).check(text, "yes", None, []) is None  # the shared form alone misses it
    post = post_format("c1")
    found = TurnGuard("michael-saylor", TOPIC, EARLIER, form=post).check("From your own side, answer the claim to answer, or the strongest opposing point.", "pro", None, [])
    assert found is not None and found.guard == "echo"
    speech = room.JSON_SPEECH
    said = "Scarcity by code beats scarcity by geology, and I will hold my coins."
    assert TurnGuard("michael-saylor", TOPIC, EARLIER, form=speech).check(said, "yes", None, []) is None
