"""Engines read a persona named in the model's own way, and ids the same reply created;
whatever they still refuse is a warning that quotes it."""

from __future__ import annotations

from crux_lab.engines.crux_room.detection import _read
from crux_lab.engines.crux_room.room import _card_entries
from crux_lab.engines.crux_room.schemas import CardReply as RoomCardReply
from crux_lab.engines.crux_room.schemas import DetectionReply
from crux_lab.engines.dialogue.crystallizer import DCGCrystallizer
from crux_lab.engines.dialogue.schemas import DCGCrystallizationResult
from crux_lab.engines.direct.direct import (
    CardPositionReply,
    CardReply,
    CardsReply,
    cards_from_reply,
)
from crux_lab.engines.names import persona_ref
from crux_lab.models import DialogueTurn

NAMES = {"schiff": "Peter Schiff", "saylor": "Michael Saylor", "prag": "The Pragmatist"}


def test_persona_ref_takes_what_a_model_writes_and_refuses_what_is_ambiguous() -> None:
    assert [persona_ref(r, NAMES) for r in ("Schiff", "peter schiff", "PETER SCHIFF", "the pragmatist", "Saylor's")] == [
        "schiff", "schiff", "schiff", "prag", "saylor"
    ]
    assert persona_ref("Speaker A", NAMES) is None
    assert persona_ref("Peter", {"a": "Peter Schiff", "b": "Peter Thiel"}) is None


def test_direct_cards_keep_positions_named_by_display_name_and_quote_the_refused() -> None:
    reply = CardsReply(cards=[
        CardReply(question="Is scarcity value?", disagreement_type="premise", positions=[
            CardPositionReply(persona="Peter Schiff", position="NO"),
            CardPositionReply(persona="Saylor", position="YES"),
            CardPositionReply(persona="the pragmatist", position="NUANCED"),
            CardPositionReply(persona="Jim Rickards", position="NO"),
        ]),
    ])
    cards, warnings = cards_from_reply(reply, NAMES, 6, "direct")
    assert len(cards) == 1 and set(cards[0].personas) == {"schiff", "saylor", "prag"}
    assert len(warnings) == 1 and '"Jim Rickards"' in warnings[0].error


def test_room_card_positions_named_by_display_name() -> None:
    reply = RoomCardReply.model_validate({
        "diagnosis": "D.", "question": "Q?", "disagreement_type": "premise",
        "personas": [{"persona_id": "Michael Saylor", "position": "YES"}, {"persona_id": "schiff", "position": "NO"},
                     {"persona_id": "Hayes", "position": "NO"}],
    })
    entries, refused = _card_entries(reply, {"schiff": "Peter Schiff", "saylor": "Michael Saylor"})
    assert set(entries) == {"schiff", "saylor"} and refused == ["Hayes"]


class _Warned:
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warn(self, purpose: str, message: str) -> None:
        self.warnings.append(message)


def test_detection_resolves_speaker_names_and_warns_once_about_the_unknown() -> None:
    item = {"has_direct_opposition": True, "has_specific_claim": True, "topic_relevant": True, "claim": "c"}
    reply = DetectionReply.model_validate({"disagreements": [
        {**item, "personas": ["Schiff", "Michael Saylor"]}, {**item, "personas": ["Schiff", "Hayes"]},
    ]})
    sp = _Warned()
    out = _read([reply, reply], NAMES, "Is gold money?", sp)  # type: ignore[arg-type]
    assert out[0] is not None
    assert [i.personas for i in out[0].disagreements] == [["schiff", "saylor"], ["schiff", "Hayes"]]
    assert len(sp.warnings) == 1 and '"Hayes"' in sp.warnings[0]


def _turns() -> list[DialogueTurn]:
    return [
        DialogueTurn(id=f"t{i}", turn_index=i, persona_id=pid, dialogue="Words said here.", phase="free_exchange")
        for i, pid in enumerate(["saylor", "schiff"])
    ]


def test_dcg_stances_by_display_name_on_a_dispute_the_same_reply_created() -> None:
    cryst = DCGCrystallizer("T", ["saylor", "schiff"], {"saylor": "Michael Saylor", "schiff": "Peter Schiff"})
    cryst.known_turns = {0, 1}
    reply = DCGCrystallizationResult.model_validate({
        "new_disputes": [{"id": "dispute one", "question": "Is supply fixed?"}],
        "upsert_stances": [
            {"dispute_id": "new-1", "speaker_id": "Michael Saylor", "side": "YES", "statement": "fixed", "derived_from_turns": [0]},
            {"dispute_id": "NEW-1", "speaker_id": "Schiff", "side": "no", "statement": "not fixed", "derived_from_turns": [1]},
            {"dispute_id": "new-1", "speaker_id": "Hayes", "side": "NO", "statement": "never", "derived_from_turns": [1]},
        ],
        "new_reasons": [{"dispute_id": "new-1", "speaker_id": "schiff", "claim": "forks exist", "derived_from_turns": [1]}],
    })
    applied = cryst.apply(reply, _turns(), (0, 1))
    state = cryst.holder.state
    assert [d.question for d in state.disputes] == ["Is supply fixed?"]
    assert {(s.speaker_id, s.side.value) for s in state.stances} == {("saylor", "YES"), ("schiff", "NO")}
    assert len(state.reasons) == 1
    assert len(applied.refused) == 1 and '"Hayes"' in applied.refused[0] and '"never"' in applied.refused[0]
