"""The simulator's dialogue-engine behaviour: extractor handlers that read turn texts and the
shown graph (never ground-truth ids), and the speech knobs."""

from __future__ import annotations

import random

import pytest

from crux_lab.engines.dialogue.crystallizer import DCGCrystallizer
from crux_lab.engines.dialogue.schemas import (
    CrystallizationResult,
    DCGCrystallizationResult,
    DiscoveryResult,
    TurnOutput,
)
from crux_lab.llm.base import Hints, LLMRequest, TurnHint
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.llm.simulated.core import SimContext, lower_first, split_sentences
from crux_lab.llm.simulated.options import SimulatorKnobs
from crux_lab.models import DialogueTurn, Move
from crux_lab.personas.loader import load_personas, propositions_for

PAIR = ["michael-saylor", "arthur-hayes"]
S, H = PAIR
P2 = "crypto.p2"  # Saylor pro, Hayes con
P6 = "crypto.p6"  # Saylor pro, Hayes con
P4 = "crypto.p4"  # Saylor con, Hayes pro
P8 = "crypto.p8"  # proof of work: Saylor pro
PROPS = propositions_for(PAIR)


@pytest.fixture(scope="module")
def world():  # type: ignore[no-untyped-def]
    return load_personas(PAIR), PROPS


def backend(world, seed: int = 0, **knobs: float) -> SimulatedBackend:  # type: ignore[no-untyped-def]
    personas, props = world
    return SimulatedBackend(personas, props, seed=seed, knobs=SimulatorKnobs(**knobs))


def claim(prop: str, stance: str) -> str:
    text = PROPS[prop].text.rstrip(".")
    return {"pro": f"{text}.", "con": f"It is not the case that {lower_first(text)}.",
            "uncertain": f"I am not sure that {lower_first(text)}."}[stance]


def lead(move: str, prop: str) -> str:
    """The words a simulated speaker opens a move with: a reader learns the move from them."""
    question = lower_first(PROPS[prop].question.rstrip("?"))
    return {"CONCEDE": f"I'll grant part of that on {question}. ",
            "PROPOSE_CRUX": f"I think the core disagreement is {question}? My answer: "}.get(move, "")


def turn(i: int, who: str, move: str, prop: str, stance: str, text: str | None = None) -> TurnHint:
    """A turn as an engine hints it: the words alone, which show its move and stance."""
    words = text if text is not None else f"{lead(move, prop)}{claim(prop, stance)} The record of the last decade shows it plainly."
    return TurnHint(speaker_id=who, text=words, turn_index=i)


def reader(world) -> SimContext:  # type: ignore[no-untyped-def]
    personas, props = world
    return SimContext(rng=random.Random(0), knobs=SimulatorKnobs(), personas=personas, propositions=props,
                      hints=Hints())


def about(world, text: str) -> str | None:  # type: ignore[no-untyped-def]
    prop = reader(world).recognize(text)
    return prop.id if prop else None


async def ask(b: SimulatedBackend, purpose: str, schema, turns, extra=None, **hint):  # type: ignore[no-untyped-def]
    hints = Hints(topic=hint.pop("topic", "Bitcoin"), turns=turns, extra=extra or {}, **hint)
    # the prompt shows what the hints restate (the simulated backend checks it)
    req = LLMRequest(purpose=purpose, system="s", user=hints.model_dump_json(), output_schema=schema, hints=hints)
    return await b.generate(req)


OPPOSED = [turn(0, S, "CLAIM", P2, "pro"), turn(1, H, "CHALLENGE", P2, "con")]


async def test_v2_reads_one_argument_per_speaker_and_mutual_rebuts(world) -> None:  # type: ignore[no-untyped-def]
    r = (await ask(backend(world), "crystallize", CrystallizationResult, OPPOSED)).parsed
    assert isinstance(r, CrystallizationResult)
    assert [a.speaker_id for a in r.new_args] == [S, H]
    assert [about(world, a.claim) for a in r.new_args] == [P2, P2]  # read from the turn texts
    assert r.new_args[1].claim.startswith("It is not the case")
    assert all(a.claim in {x for t in OPPOSED for x in split_sentences(t.text)} for a in r.new_args)  # a sentence said
    assert {(x.from_arg_id, x.to_arg_id) for x in r.new_attacks} == {("new-1", "new-2"), ("new-2", "new-1")}
    assert r.new_args[0].premises == ["The record of the last decade shows it plainly."]


async def test_missed_attack_drops_the_edge_between_contradictory_arguments(world) -> None:  # type: ignore[no-untyped-def]
    r = (await ask(backend(world, missed_attack=1.0), "crystallize", CrystallizationResult, OPPOSED)).parsed
    assert len(r.new_args) == 2 and r.new_attacks == []
    graph = {"arguments": [{"id": f"arg-{i}", "speaker_id": a.speaker_id, "claim": a.claim, "assumptions": []}
                           for i, a in enumerate(r.new_args)], "attacks": []}
    found = (await ask(backend(world), "discovery", DiscoveryResult, OPPOSED, {"graph": graph})).parsed
    assert {(x.from_arg_id, x.to_arg_id) for x in found.new_attacks} == {("arg-0", "arg-1"), ("arg-1", "arg-0")}


async def test_agreeing_speakers_get_no_attack(world) -> None:  # type: ignore[no-untyped-def]
    same = [turn(0, S, "CLAIM", "crypto.p5", "pro"), turn(1, H, "CLAIM", "crypto.p5", "pro")]
    r = (await ask(backend(world), "crystallize", CrystallizationResult, same)).parsed
    assert len(r.new_args) == 2 and r.new_attacks == []


GRANT = f"I'll grant part of that on {lower_first(PROPS[P2].question.rstrip('?'))}."


@pytest.mark.parametrize(
    ("stance", "text", "kind"),
    [
        ("con", f"{GRANT} {claim(P2, 'con')} You have met my condition: institutions reverse for years.", "full"),
        ("uncertain", f"{GRANT} {claim(P2, 'uncertain')} You have met my condition: institutions reverse for years.", "partial"),
        ("uncertain", f"{GRANT} {claim(P2, 'uncertain')} Fine.", "scope"),
    ],
)
async def test_v2_concessions_of_three_kinds(world, stance: str, text: str, kind: str) -> None:  # type: ignore[no-untyped-def]
    graph = {"arguments": [{"id": "arg-0", "speaker_id": S, "claim": claim(P2, "pro"), "assumptions": []}], "attacks": []}
    turns = [turn(2, S, "CONCEDE", P2, stance, text)]
    r = (await ask(backend(world), "crystallize", CrystallizationResult, turns, {"graph": graph})).parsed
    assert [(c.kind.value, c.arg_id) for c in r.concessions] == [(kind, "arg-0")]
    if kind == "full":
        assert r.removed_arg_ids == ["arg-0"]
    elif kind == "partial":
        assert r.updated_args[0].claim and "except where institutions reverse" in r.updated_args[0].claim
        assert r.concessions[0].reason == "institutions reverse for years"
    else:
        assert r.updated_args[0].assumptions and "not in the case just raised" in r.updated_args[0].assumptions[-1]


async def test_dcg_creates_a_dispute_only_on_divergence(world) -> None:  # type: ignore[no-untyped-def]
    r = (await ask(backend(world), "crystallize", DCGCrystallizationResult, OPPOSED)).parsed
    assert len(r.new_disputes) == 1
    d = r.new_disputes[0]
    assert about(world, d.question) == P2 and d.question != PROPS[P2].question
    assert d.disagreement_type  # the extractor's own classification of its question
    assert {(s.speaker_id, s.side.value) for s in r.upsert_stances} == {(S, "YES"), (H, "NO")}
    assert all(s.derived_from_turns for s in r.upsert_stances)
    agree = [turn(0, S, "CLAIM", "crypto.p5", "pro"), turn(1, H, "CLAIM", "crypto.p5", "pro")]
    r = (await ask(backend(world), "crystallize", DCGCrystallizationResult, agree)).parsed
    assert r.new_disputes == [] and r.upsert_stances == []


async def test_dcg_never_makes_the_topic_a_dispute(world) -> None:  # type: ignore[no-untyped-def]
    topic = "Is Bitcoin a better long-term store of value than gold?"
    p1 = [turn(0, S, "CLAIM", "crypto.p1", "pro"), turn(1, "peter-schiff", "CHALLENGE", "crypto.p1", "con")]
    personas = load_personas([S, "peter-schiff"])
    b = SimulatedBackend(personas, propositions_for([S, "peter-schiff"]))
    hints = Hints(topic=topic, turns=p1)
    req = LLMRequest(purpose="crystallize", system="s", user=hints.model_dump_json(), output_schema=DCGCrystallizationResult, hints=hints)
    assert (await b.generate(req)).parsed.new_disputes == []


async def test_dcg_adds_at_most_two_disputes_per_call(world) -> None:  # type: ignore[no-untyped-def]
    turns = [*OPPOSED, turn(2, S, "CLAIM", P6, "pro"), turn(3, H, "CHALLENGE", P6, "con"),
             turn(4, S, "CLAIM", P4, "con"), turn(5, H, "CHALLENGE", P4, "pro")]
    r = (await ask(backend(world), "crystallize", DCGCrystallizationResult, turns)).parsed
    assert len(r.new_disputes) == 2 and "next call" in r.notes


async def test_dcg_missed_link_leaves_a_free_floating_stance(world) -> None:  # type: ignore[no-untyped-def]
    r = (await ask(backend(world, missed_attack=1.0), "crystallize", DCGCrystallizationResult, OPPOSED)).parsed
    ids = {d.id for d in r.new_disputes}
    assert len(r.upsert_stances) == 2
    assert sum(s.dispute_id in ids for s in r.upsert_stances) == 1  # the other one floats


@pytest.mark.parametrize("vague", [0.0, 1.0])
async def test_crux_acknowledged_only_when_both_name_it_clearly(world, vague: float) -> None:  # type: ignore[no-untyped-def]
    b = backend(world, vague_crux=vague)
    turns: list[TurnHint] = list(OPPOSED)
    for i, who in enumerate((S, H), start=2):
        out = (await ask(b, "dialogue_turn", TurnOutput, turns, speaker_id=who, phase="crux_seeking")).parsed
        assert out.move.value == "PROPOSE_CRUX"
        turns.append(TurnHint(speaker_id=who, text=out.dialogue, turn_index=i))
    r = (await ask(b, "crystallize", CrystallizationResult, turns)).parsed
    assert r.crux is not None and r.crux.proposed_by == [S, H]
    if vague:
        assert not r.crux.acknowledged and "differently" in r.crux.statement
    else:
        assert r.crux.acknowledged and about(world, r.crux.statement) == P2
        assert r.crux.statement != PROPS[P2].question


async def test_sycophancy_concedes_without_a_named_reason(world) -> None:  # type: ignore[no-untyped-def]
    out = (await ask(backend(world, sycophancy=1.0), "dialogue_turn", TurnOutput, OPPOSED[:1], speaker_id=H, phase="free_exchange")).parsed
    assert out.move.value == "CONCEDE" and out.named_reason is None
    assert "You have met my condition" not in out.dialogue


async def test_drift_flips_the_stance_against_ground_truth(world) -> None:  # type: ignore[no-untyped-def]
    straight = (await ask(backend(world), "dialogue_turn", TurnOutput, OPPOSED, speaker_id=S, phase="free_exchange")).parsed
    drifted = (await ask(backend(world, drift=1.0), "dialogue_turn", TurnOutput, OPPOSED, speaker_id=S, phase="free_exchange")).parsed
    assert straight.stance == "pro" and drifted.stance == "con"


async def test_steering_reactions(world) -> None:  # type: ignore[no-untyped-def]
    b = backend(world)
    circ = (await ask(b, "dialogue_turn", TurnOutput, OPPOSED, speaker_id=S, phase="free_exchange", steering="circling")).parsed
    assert circ.move.value == "CLARIFY" and "What would change my mind" in circ.dialogue
    stuck = (await ask(b, "dialogue_turn", TurnOutput, OPPOSED, speaker_id=S, phase="free_exchange", steering="stuck")).parsed
    assert about(world, stuck.dialogue) not in (None, P2)


async def test_a_turn_names_the_shown_ids_it_answers(world) -> None:  # type: ignore[no-untyped-def]
    shown = {"d-0": "Is it really the case that bitcoin adoption is deterministic?", "d-1": claim(P4, "pro")}
    out = (await ask(backend(world), "dialogue_turn", TurnOutput, OPPOSED, speaker_id=S, phase="free_exchange",
                     extra={"shown": shown})).parsed
    assert out.addresses == ["d-0"]


async def test_opening_states_several_positions(world) -> None:  # type: ignore[no-untyped-def]
    out = (await ask(backend(world), "opening", TurnOutput, [], speaker_id=S, phase="opening", extra={"positions": 3})).parsed
    assert len(reader(world).recognize_all(out.dialogue)) >= 3 and out.dialogue.count("Beyond that,") == 2
    single = (await ask(backend(world), "opening", TurnOutput, [], speaker_id=S, phase="opening")).parsed
    assert "Beyond that," not in single.dialogue


async def test_same_request_same_answer(world) -> None:  # type: ignore[no-untyped-def]
    a = await ask(backend(world, seed=3), "crystallize", DCGCrystallizationResult, OPPOSED)
    b = await ask(backend(world, seed=3), "crystallize", DCGCrystallizationResult, OPPOSED)
    assert a.text == b.text


async def test_concessions_are_applied_once_across_overlapping_clusters(world) -> None:  # type: ignore[no-untyped-def]
    text = f"{GRANT} {claim(P2, 'uncertain')} You have met my condition: institutions reverse for years."
    turns = [*OPPOSED, turn(2, S, "CONCEDE", P2, "uncertain", text)]
    narrowed = {"id": "arg-0", "speaker_id": S, "claim": f"{claim(P2, 'pro').rstrip('.')}, except where institutions reverse.",
                "assumptions": []}
    r = (await ask(backend(world), "crystallize", CrystallizationResult, turns,
                   {"graph": {"arguments": [narrowed], "attacks": []}})).parsed
    assert r.updated_args == [] and r.concessions == []
    # DCG: a full concession already reflected in the stance is not flipped back
    flipped = [*OPPOSED, turn(2, S, "CONCEDE", P2, "con", text.replace(claim(P2, "uncertain"), claim(P2, "con")))]
    dcg = {"disputes": [{"id": "d-0", "question": PROPS[P2].question, "active": True}],
           "stances": [{"id": "s-0", "dispute_id": "d-0", "speaker_id": S, "side": "NO", "statement": claim(P2, "con")},
                       {"id": "s-1", "dispute_id": "d-0", "speaker_id": H, "side": "NO", "statement": claim(P2, "con")}],
           "reasons": []}
    r2 = (await ask(backend(world), "crystallize", DCGCrystallizationResult, flipped, {"dcg": dcg})).parsed
    assert not [u for u in r2.upsert_stances if u.speaker_id == S]


async def test_four_turn_exchange_with_a_concession_leaves_a_dispute_and_a_trail_entry(world) -> None:  # type: ignore[no-untyped-def]
    """Issue 14: a proof-of-work exchange in which one side concedes, through the engine's own
    crystallizer prompt and hints, the simulator's reading, and the engine applying the reply."""
    pow_q = lower_first(PROPS[P8].question.rstrip("?"))
    script = [
        (S, Move.CLAIM, "pro", f"{claim(P8, 'pro')} Energy spent is what makes rewriting history unaffordable."),
        (H, Move.CHALLENGE, "con", f"{claim(P8, 'con')} Stake can be slashed, and that punishes attackers directly."),
        (S, Move.CHALLENGE, "pro", f"{claim(P8, 'pro')} Slashing needs the honest chain to agree first, which is circular."),
        (H, Move.CONCEDE, "uncertain", f"I'll grant part of that on {pow_q}. {claim(P8, 'uncertain')} You have met my condition: slashing relies on social consensus."),
    ]
    turns = [DialogueTurn(id=f"t{i}", turn_index=i, persona_id=who, dialogue=text, move=move, stance=stance,
                          phase="free_exchange", named_reason="slashing relies on social consensus" if move is Move.CONCEDE else None)
             for i, (who, move, stance, text) in enumerate(script)]
    cryst = DCGCrystallizer("Bitcoin is digital gold", PAIR, {S: "Michael Saylor", H: "Arthur Hayes"})
    req = LLMRequest(purpose="crystallize", system="s", user=cryst.user_prompt(turns),
                     output_schema=cryst.schema, hints=cryst.hints(turns, "free_exchange"))
    reply = (await backend(world).generate(req)).parsed
    applied = cryst.apply(reply, turns, (0, 3))
    state = cryst.holder.state
    assert len(state.disputes) == 1 and about(world, state.disputes[0].question) == P8
    assert {(s.speaker_id, s.side.value) for s in state.stances} == {(S, "YES"), (H, "NO")}
    hayes = next(s for s in state.stances if s.speaker_id == H)
    assert "except where slashing relies on social consensus" in hayes.statement  # narrowed, not dropped
    assert [(c.persona_id, c.turn_index, c.reason) for c in applied.concessions] == [(H, 3, "slashing relies on social consensus")]
    assert "d-0" not in applied.concessions[0].effect and "s-" not in applied.concessions[0].effect


async def test_a_concession_the_reply_did_not_note_still_lands_in_the_trail() -> None:
    cryst = DCGCrystallizer("Bitcoin is digital gold", PAIR, {S: "Michael Saylor", H: "Arthur Hayes"})
    t = DialogueTurn(id="t0", turn_index=0, persona_id=H, dialogue="Fine, I grant that point about fees.",
                     move=Move.CONCEDE, phase="free_exchange", named_reason="fees fell")
    applied = cryst.apply(DCGCrystallizationResult(), [t], (0, 0))
    assert [(c.persona_id, c.reason, c.type.value) for c in applied.concessions] == [(H, "fees fell", "partial")]
    assert cryst.apply(DCGCrystallizationResult(), [t], (0, 0)).concessions == []  # once
