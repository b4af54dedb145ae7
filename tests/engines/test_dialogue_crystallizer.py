"""The v2 crystallizer applied to replies as a real model might write them (no simulator)."""

from __future__ import annotations

from crux_lab.engines.dialogue.crystallizer import GraphCrystallizer
from crux_lab.engines.dialogue.schemas import CrystallizationResult
from crux_lab.models import Crystallization, DialogueTurn, GraphUpdated, Move


def t(i: int, who: str, move: Move) -> DialogueTurn:
    return DialogueTurn(id=f"t{i}", turn_index=i, persona_id=who, dialogue=f"turn {i}", move=move, phase="free_exchange")


def crystallizer() -> GraphCrystallizer:
    return GraphCrystallizer("Bitcoin", ["saylor", "hayes"], {"saylor": "Saylor", "hayes": "Hayes"})


FIRST = CrystallizationResult.model_validate({
    "new_args": [
        {"id": "new-1", "speaker_id": "saylor", "claim": "Adoption is deterministic.", "assumptions": ["networks win"]},
        {"id": "new-2", "speaker_id": "hayes", "claim": "Adoption depends on policy mistakes."},
        {"id": "new-3", "speaker_id": "nobody", "claim": "A stranger's claim."},
    ],
    "new_attacks": [
        {"from_arg_id": "new-1", "to_arg_id": "new-2"},
        {"from_arg_id": "new-2", "to_arg_id": "new-1"},
        {"from_arg_id": "new-2", "to_arg_id": "arg-99"},
    ],
})


def test_new_arguments_and_attacks_by_provisional_ids() -> None:
    c = crystallizer()
    out = c.apply(FIRST, [t(0, "saylor", Move.CLAIM), t(1, "hayes", Move.CHALLENGE)], (0, 1))
    assert [a.id for a in c.graph.arguments.values()] == ["arg-0", "arg-1"]
    assert {(a.from_arg_id, a.to_arg_id) for a in c.graph.attacks.values()} == {("arg-0", "arg-1"), ("arg-1", "arg-0")}
    assert len(out.refused) == 2 and out.new_nodes == 2 and out.changed
    assert c.graph.arguments["arg-0"].derived_from_turns == [0]  # defaulted to the speaker's turns
    ev = out.events
    assert isinstance(ev[0], Crystallization) and isinstance(ev[1], GraphUpdated)
    assert ev[1].undec_count == 2 and c.frontier() == frozenset({"arg-0", "arg-1"})


def test_concessions_full_partial_scope_are_derived_from_mutations() -> None:
    c = crystallizer()
    c.apply(FIRST, [t(0, "saylor", Move.CLAIM), t(1, "hayes", Move.CHALLENGE)], (0, 1))
    partial = CrystallizationResult.model_validate({"updated_args": [{"id": "arg-1", "claim": "Policy mistakes speed adoption up."}]})
    out = c.apply(partial, [t(2, "hayes", Move.CONCEDE)], (2, 2))
    assert [(x.type.value, x.updated_arg_ids) for x in out.concessions] == [("partial", ["arg-1"])]
    scope = CrystallizationResult.model_validate({"updated_args": [{"id": "arg-0", "assumptions": ["networks win", "over 4-year windows"]}]})
    out = c.apply(scope, [t(3, "saylor", Move.CONCEDE)], (3, 3))
    assert [x.type.value for x in out.concessions] == ["scope"]
    full = CrystallizationResult.model_validate({"removed_arg_ids": ["arg-1"]})
    out = c.apply(full, [t(4, "hayes", Move.CONCEDE)], (4, 4))
    assert [(x.type.value, x.removed_arg_ids) for x in out.concessions] == [("full", ["arg-1"])]
    assert list(c.graph.arguments) == ["arg-0"] and not c.graph.attacks  # attacks cascaded
    crystal = out.events[0]
    assert isinstance(crystal, Crystallization) and sorted(crystal.removed_attack_ids) == ["att-0", "att-1"]
    # the same concession turn seen again in an overlapping cluster is not recorded twice
    again = c.apply(CrystallizationResult(), [t(4, "hayes", Move.CONCEDE)], (4, 4))
    assert again.concessions == [] and not again.changed


def test_a_provisional_id_that_reuses_a_graph_id_is_not_ambiguous() -> None:
    c = crystallizer()
    c.apply(FIRST, [t(0, "saylor", Move.CLAIM)], (0, 0))
    tricky = CrystallizationResult.model_validate({
        "new_args": [{"id": "arg-0", "speaker_id": "hayes", "claim": "Another claim."}],
        "new_attacks": [{"from_arg_id": "arg-1", "to_arg_id": "arg-0"}],
    })
    c.apply(tricky, [t(1, "hayes", Move.CLAIM)], (1, 1))
    assert ("arg-1", "arg-0") in {(a.from_arg_id, a.to_arg_id) for a in c.graph.attacks.values()}
    assert "arg-2" in c.graph.arguments
