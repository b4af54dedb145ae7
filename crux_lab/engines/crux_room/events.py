"""The events only the panel and crux_rooms engines stream (rounds, clashes, crux rooms,
voted disagreement detection); the ones other layers read are in :mod:`crux_lab.models.events`.
"""

from __future__ import annotations

from typing import Literal

from crux_lab.models.base import Model
from crux_lab.models.domain import (
    Aspect,
)
from crux_lab.models.events import EventBase, register_event


@register_event
class RoundStart(EventBase):
    type: Literal["round_start"] = "round_start"
    aspect: Aspect | None = None
    round_number: int


@register_event
class RoundEnd(EventBase):
    type: Literal["round_end"] = "round_end"
    aspect: Aspect | None = None
    round_number: int = 0
    summary: str = ""


@register_event
class ClashStart(EventBase):
    type: Literal["clash_start"] = "clash_start"
    personas: list[str]
    aspect: str


@register_event
class CruxRoomSpawning(EventBase):
    type: Literal["crux_room_spawning"] = "crux_room_spawning"
    room_id: str
    question: str
    personas: list[str]


@register_event
class CruxRoomComplete(EventBase):
    type: Literal["crux_room_complete"] = "crux_room_complete"
    room_id: str
    turns: int = 0
    card_id: str | None = None


class DisagreementCandidate(Model):
    has_direct_opposition: bool
    has_specific_claim: bool
    topic_relevant: bool
    personas: list[str]
    claim: str
    proposition_id: str | None = None


@register_event
class DisagreementDetected(EventBase):
    type: Literal["disagreement_detected"] = "disagreement_detected"
    candidate: DisagreementCandidate
    votes: int = 0
