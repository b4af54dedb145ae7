"""The events only the dialogue and dcg engines stream (phases, steering, crystallizations,
concessions, convergence checks); the ones other layers read are in :mod:`crux_lab.models.events`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from crux_lab.models.domain import (
    Argument,
    Attack,
    Concession,
)
from crux_lab.models.events import EventBase, register_event


@register_event
class PhaseStart(EventBase):
    type: Literal["phase_start"] = "phase_start"
    phase: int
    name: str


@register_event
class PhaseTransition(EventBase):
    type: Literal["phase_transition"] = "phase_transition"
    from_phase: int
    to_phase: int
    reason: str


@register_event
class Steering(EventBase):
    type: Literal["steering"] = "steering"
    persona_id: str
    hint: str
    situation: str


@register_event
class Crystallization(EventBase):
    type: Literal["crystallization"] = "crystallization"
    index: int
    turn_range: tuple[int, int]
    new_args: list[Argument] = Field(default_factory=list)
    updated_arg_ids: list[str] = Field(default_factory=list)
    removed_arg_ids: list[str] = Field(default_factory=list)
    new_attacks: list[Attack] = Field(default_factory=list)
    removed_attack_ids: list[str] = Field(default_factory=list)


@register_event
class ConcessionEvent(EventBase):
    type: Literal["concession"] = "concession"
    concession: Concession


@register_event
class ConvergenceCheck(EventBase):
    type: Literal["convergence_check"] = "convergence_check"
    converged: bool
    signals: dict[str, float | bool | int] = Field(default_factory=dict)
    reason: str = ""
