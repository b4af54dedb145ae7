"""The persisted events: one registry by ``type`` tag that each engine family adds its own to."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Literal

import pytest
from pydantic import ValidationError

from crux_lab.models import (
    EVENT_TYPES,
    AttacksGenerated,
    Crystallization,
    DebateConfig,
    DebateResult,
    DisagreementCandidate,
    DisagreementDetected,
    EventBase,
    PhaseStart,
    RoundStart,
    Status,
    TableAssigned,
    event_type,
    register_event,
)
from crux_lab.registry import DuplicateName

FAMILIES = {
    "phase_start": "crux_lab.engines.dialogue.events",
    "crystallization": "crux_lab.engines.dialogue.events",
    "round_start": "crux_lab.engines.crux_room.events",
    "disagreement_detected": "crux_lab.engines.crux_room.events",
    "table_assigned": "crux_lab.engines.blackboard.events",
    "attacks_generated": "crux_lab.engines.blackboard.events",
    "status": "crux_lab.models.events",
}


def result(events: list[EventBase]) -> DebateResult:
    config = DebateConfig(topic="t", persona_ids=["a", "b"], engine="dcg")
    return DebateResult(run_id="r", config=config, engine="dcg", backend="simulated", events=events)


def test_each_family_declares_its_events_in_its_own_package() -> None:
    for tag, module in FAMILIES.items():
        assert event_type(tag).__module__ == module, tag
    names = EVENT_TYPES.names()
    assert len(names) == len(set(names)) == 38  # the 37 event types the single union had, and crux_polled


def test_a_result_with_every_familys_events_round_trips() -> None:
    candidate = DisagreementCandidate(has_direct_opposition=True, has_specific_claim=True, topic_relevant=True,
                                      personas=["a", "b"], claim="Rents fall.")
    events: list[EventBase] = [
        Status(message="hi"), PhaseStart(phase=1, name="opening"), Crystallization(index=0, turn_range=(0, 3)),
        RoundStart(round_number=2), DisagreementDetected(candidate=candidate, votes=2),
        TableAssigned(tables=[["a", "b"]]), AttacksGenerated(round=1, persona_id="a", attacks=[]),
    ]
    original = result(events)
    text = original.model_dump_json()
    back = DebateResult.model_validate_json(text)
    assert back == original and back.model_dump_json() == text
    assert [type(e) for e in back.events] == [type(e) for e in events]
    dumped = json.loads(text)["events"]
    assert dumped[1]["name"] == "opening" and dumped[4]["candidate"]["claim"] == "Rents fall."  # every field kept


def test_an_unknown_tag_names_itself_and_the_known_ones() -> None:
    with pytest.raises(ValidationError) as err:
        DebateResult.model_validate({**result([]).model_dump(), "events": [{"type": "phase_strat", "phase": 1}]})
    message = str(err.value)
    assert "unknown event type 'phase_strat'" in message and "phase_start" in message


def test_a_misspelt_field_fails_at_its_place() -> None:
    with pytest.raises(ValidationError) as err:
        DebateResult.model_validate({**result([]).model_dump(), "events": [{"type": "round_start", "round_numbr": 1}]})
    locations = [e["loc"] for e in err.value.errors()]
    assert ("events", 0, "round_numbr") in locations


def test_a_tag_belongs_to_one_module() -> None:
    class Impostor(EventBase):
        type: Literal["status"] = "status"

    with pytest.raises(DuplicateName, match="'status'"):
        register_event(Impostor)
    assert event_type("status") is Status


def test_the_model_imports_no_engine_until_a_stored_family_event_asks_for_it() -> None:
    code = (
        "import sys\n"
        "from crux_lab.models import DebateResult, parse_event\n"
        "print(any(m.startswith('crux_lab.engines') for m in sys.modules))\n"
        "e = parse_event('{\"type\": \"round_start\", \"round_number\": 3}')\n"
        "print(type(e).__module__, e.round_number)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["False", "crux_lab.engines.crux_room.events 3"]
