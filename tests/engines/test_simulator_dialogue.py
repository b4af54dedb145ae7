"""The simulator's dialogue-engine behaviour: extractor handlers and the speech knobs."""

from __future__ import annotations

import pytest

from crux_lab.engines.dialogue_v2.schemas import (
    CrystallizationResult,
    DCGCrystallizationResult,
    DiscoveryResult,
    TurnOutput,
)
from crux_lab.llm.base import Hints, LLMRequest, TurnHint
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.models import SimulatorKnobs
from crux_lab.personas.loader import load_personas, propositions_for

PAIR = ["michael-saylor", "arthur-hayes"]
S, H = PAIR
P2 = "crypto.p2"  # Saylor pro, Hayes con
P6 = "crypto.p6"  # Saylor pro, Hayes con
P4 = "crypto.p4"  # Saylor con, Hayes pro


@pytest.fixture(scope="module")
def world():  # type: ignore[no-untyped-def]
    return load_personas(PAIR), propositions_for(PAIR)


def backend(world, seed: int = 0, **knobs: float) -> SimulatedBackend:  # type: ignore[no-untyped-def]
    personas, props = world
    return SimulatedBackend(personas, props, seed=seed, knobs=SimulatorKnobs(**knobs))


def turn(i: int, who: str, move: str, prop: str, stance: str, text: str = "claim. reason.") -> TurnHint:
    return TurnHint(speaker_id=who, text=text, move=move, proposition_ids=[prop], stance=stance, turn_index=i)


async def ask(b: SimulatedBackend, purpose: str, schema, turns, extra=None, **hint):  # type: ignore[no-untyped-def]
    req = LLMRequest(purpose=purpose, system="s", user="u", output_schema=schema,
                     hints=Hints(persona_ids=PAIR, topic="Bitcoin", turns=turns, extra=extra or {}, **hint))
    return await b.generate(req)


OPPOSED = [turn(0, S, "CLAIM", P2, "pro"), turn(1, H, "CHALLENGE", P2, "con")]


async def test_v2_extracts_one_argument_per_speaker_and_mutual_rebuts(world) -> None:  # type: ignore[no-untyped-def]
    r = (await ask(backend(world), "crystallize", CrystallizationResult, OPPOSED)).parsed
    assert isinstance(r, CrystallizationResult)
    assert [(a.speaker_id, a.proposition_id) for a in r.new_args] == [(S, P2), (H, P2)]
    assert "deterministic" in r.new_args[0].claim and r.new_args[1].claim.startswith("It is not the case")
    assert {(x.from_arg_id, x.to_arg_id) for x in r.new_attacks} == {("new-1", "new-2"), ("new-2", "new-1")}


async def test_missed_attack_drops_the_edge_between_contradictory_arguments(world) -> None:  # type: ignore[no-untyped-def]
    r = (await ask(backend(world, missed_attack=1.0), "crystallize", CrystallizationResult, OPPOSED)).parsed
    assert len(r.new_args) == 2 and r.new_attacks == []
    graph = {"arguments": [a.model_dump() | {"id": f"arg-{i}"} for i, a in enumerate(r.new_args)], "attacks": []}
    found = (await ask(backend(world), "discovery", DiscoveryResult, OPPOSED, {"graph": graph})).parsed
    assert {(x.from_arg_id, x.to_arg_id) for x in found.new_attacks} == {("arg-0", "arg-1"), ("arg-1", "arg-0")}


async def test_agreeing_speakers_get_no_attack(world) -> None:  # type: ignore[no-untyped-def]
    same = [turn(0, S, "CLAIM", "crypto.p1", "pro"), turn(1, H, "CLAIM", "crypto.p1", "pro")]
    r = (await ask(backend(world), "crystallize", CrystallizationResult, same)).parsed
    assert len(r.new_args) == 2 and r.new_attacks == []


@pytest.mark.parametrize(
    ("stance", "text", "kind"),
    [
        ("con", "I'll grant that. You have met my condition: institutions reverse for years.", "full"),
        ("uncertain", "I'll grant part of that. You have met my condition: institutions reverse for years.", "partial"),
        ("uncertain", "I'll grant part of that on adoption. Fine.", "scope"),
    ],
)
async def test_v2_concessions_of_three_kinds(world, stance: str, text: str, kind: str) -> None:  # type: ignore[no-untyped-def]
    graph = {"arguments": [{"id": "arg-0", "speaker_id": S, "claim": "Adoption is deterministic.",
                            "assumptions": [], "proposition_id": P2, "derived_from_turns": [0]}], "attacks": []}
    turns = [*OPPOSED, turn(2, S, "CONCEDE", P2, stance, text)]
    r = (await ask(backend(world), "crystallize", CrystallizationResult, turns, {"graph": graph, "cluster": [2]})).parsed
    assert [c.kind.value for c in r.concessions] == [kind]
    if kind == "full":
        assert r.removed_arg_ids == ["arg-0"]
    elif kind == "partial":
        assert r.updated_args[0].claim and "except where" in r.updated_args[0].claim
    else:
        assert r.updated_args[0].assumptions and "not in the case just raised" in r.updated_args[0].assumptions[-1]


async def test_dcg_creates_a_dispute_only_on_divergence(world) -> None:  # type: ignore[no-untyped-def]
    r = (await ask(backend(world), "crystallize", DCGCrystallizationResult, OPPOSED)).parsed
    assert [d.proposition_id for d in r.new_disputes] == [P2]
    assert {(s.speaker_id, s.side.value) for s in r.upsert_stances} == {(S, "YES"), (H, "NO")}
    assert all(s.derived_from_turns for s in r.upsert_stances) and r.new_disputes[0].resolution_criteria
    agree = [turn(0, S, "CLAIM", "crypto.p1", "pro"), turn(1, H, "CLAIM", "crypto.p1", "pro")]
    r = (await ask(backend(world), "crystallize", DCGCrystallizationResult, agree)).parsed
    assert r.new_disputes == [] and r.upsert_stances == []


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
        out = await ask(b, "dialogue_turn", TurnOutput, turns, speaker_id=who, phase="crux_seeking")
        assert out.parsed.move.value == "PROPOSE_CRUX"
        turns.append(TurnHint(speaker_id=who, text=out.parsed.dialogue, move="PROPOSE_CRUX",
                              proposition_ids=out.annotations["proposition_ids"], stance=out.annotations["stance"], turn_index=i))
    r = (await ask(b, "crystallize", CrystallizationResult, turns)).parsed
    assert r.crux is not None and r.crux.proposed_by == [S, H]
    if vague:
        assert not r.crux.acknowledged and "differently" in r.crux.statement
    else:
        assert r.crux.acknowledged and r.crux.proposition_ids == [P2]


async def test_sycophancy_concedes_without_a_named_reason(world) -> None:  # type: ignore[no-untyped-def]
    out = await ask(backend(world, sycophancy=1.0), "dialogue_turn", TurnOutput, OPPOSED[:1], speaker_id=H, phase="free_exchange")
    assert out.parsed.move.value == "CONCEDE"
    assert out.annotations["sycophantic"] and out.annotations["named_reason"] is None
    assert "You have met my condition" not in out.parsed.dialogue


async def test_drift_flips_the_stance_against_ground_truth(world) -> None:  # type: ignore[no-untyped-def]
    straight = await ask(backend(world), "dialogue_turn", TurnOutput, OPPOSED, speaker_id=S, phase="free_exchange")
    drifted = await ask(backend(world, drift=1.0), "dialogue_turn", TurnOutput, OPPOSED, speaker_id=S, phase="free_exchange")
    assert straight.annotations["stance"] == "pro" and drifted.annotations["stance"] == "con"
    assert drifted.annotations["drifted"]


async def test_steering_reactions(world) -> None:  # type: ignore[no-untyped-def]
    b = backend(world)
    circ = await ask(b, "dialogue_turn", TurnOutput, OPPOSED, speaker_id=S, phase="free_exchange", extra={"steering": "circling"})
    assert circ.parsed.move.value == "CLARIFY" and "What would change my mind" in circ.parsed.dialogue
    stuck = await ask(b, "dialogue_turn", TurnOutput, OPPOSED, speaker_id=S, phase="free_exchange", extra={"steering": "stuck"})
    assert stuck.annotations["proposition_ids"] and stuck.annotations["proposition_ids"][0] != P2


async def test_opening_states_several_positions(world) -> None:  # type: ignore[no-untyped-def]
    out = await ask(backend(world), "opening", TurnOutput, [], speaker_id=S, phase="opening", extra={"positions": 3})
    props = out.annotations["proposition_ids"]
    assert len(props) == 3 == len(set(props)) and out.parsed.dialogue.count("I also hold this") == 2
    single = await ask(backend(world), "opening", TurnOutput, [], speaker_id=S, phase="opening")
    assert len(single.annotations["proposition_ids"]) == 1


async def test_same_request_same_answer(world) -> None:  # type: ignore[no-untyped-def]
    a = await ask(backend(world, seed=3), "crystallize", DCGCrystallizationResult, OPPOSED)
    b = await ask(backend(world, seed=3), "crystallize", DCGCrystallizationResult, OPPOSED)
    assert a.text == b.text


async def test_concessions_are_applied_once_across_overlapping_clusters(world) -> None:  # type: ignore[no-untyped-def]
    text = "I'll grant that. You have met my condition: institutions reverse for years."
    turns = [*OPPOSED, turn(2, S, "CONCEDE", P2, "uncertain", text)]
    narrowed = {"id": "arg-0", "speaker_id": S, "claim": "Adoption is deterministic, except where institutions reverse.",
                "assumptions": [], "proposition_id": P2, "derived_from_turns": [0]}
    r = (await ask(backend(world), "crystallize", CrystallizationResult, turns,
                   {"graph": {"arguments": [narrowed], "attacks": []}, "cluster": [0, 1, 2]})).parsed
    assert r.updated_args == [] and r.concessions == []
    # DCG: a full concession already reflected in the stance is not flipped back
    flipped = [*OPPOSED, turn(2, S, "CONCEDE", P2, "con", text)]
    dcg = {"disputes": [{"id": "d-0", "question": "q?", "proposition_id": P2}],
           "stances": [{"id": "s-0", "dispute_id": "d-0", "speaker_id": S, "side": "NO", "statement": "no"},
                       {"id": "s-1", "dispute_id": "d-0", "speaker_id": H, "side": "NO", "statement": "no"}],
           "reasons": []}
    r2 = (await ask(backend(world), "crystallize", DCGCrystallizationResult, flipped, {"dcg": dcg})).parsed
    assert not [u for u in r2.upsert_stances if u.speaker_id == S] and r2.concessions == []
