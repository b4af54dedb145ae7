"""The events only the round-based engines stream (blitz, classical, graph: tables, stances,
arguments, attacks and their validation, blackboard, convergence); the ones other layers read
are in :mod:`crux_lab.models.events`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from crux_lab.models.domain import (
    Argument,
    Attack,
    ValidationResult,
)
from crux_lab.models.events import EventBase, register_event


@register_event
class ArgumentsSubmitted(EventBase):
    type: Literal["arguments_submitted"] = "arguments_submitted"
    persona_id: str
    arguments: list[Argument]


@register_event
class AttacksGenerated(EventBase):
    type: Literal["attacks_generated"] = "attacks_generated"
    round: int
    persona_id: str
    attacks: list[Attack]
    counter_arguments: list[Argument] = Field(default_factory=list)


@register_event
class ValidationComplete(EventBase):
    type: Literal["validation_complete"] = "validation_complete"
    round: int
    results: list[ValidationResult]


@register_event
class GraphConvergence(EventBase):
    type: Literal["graph_convergence"] = "graph_convergence"
    round: int
    converged: bool
    reason: str


@register_event
class TableAssigned(EventBase):
    type: Literal["table_assigned"] = "table_assigned"
    tables: list[list[str]]


@register_event
class InitialStance(EventBase):
    type: Literal["initial_stance"] = "initial_stance"
    persona_id: str
    stances: dict[str, Literal["pro", "con", "uncertain"]]
    confidence: dict[str, float] = Field(default_factory=dict)


@register_event
class ConvergenceUpdate(EventBase):
    type: Literal["convergence_update"] = "convergence_update"
    round: int
    entropy: float | None = None
    distance: float | None = None
    converged: bool = False
    reason: str = ""


@register_event
class BlackboardUpdate(EventBase):
    type: Literal["blackboard_update"] = "blackboard_update"
    round: int
    summary: str
    crux_candidates: list[str] = Field(default_factory=list)
    disputes: list[str] = Field(default_factory=list)


@register_event
class ClaimsDecomposed(EventBase):
    type: Literal["claims_decomposed"] = "claims_decomposed"
    claims: list[str]
