"""The typed data model shared by every layer of crux_lab.

Everything that is persisted (event logs, result JSON, DuckDB rows) is one of these
pydantic v2 models. JSON keys are snake_case. Every model round-trips losslessly:
``Model.model_validate_json(m.model_dump_json()) == m``.

Modules: ``base`` (the strict base model), ``domain`` (dialogue turns and moves, argument
graphs, the dispute-centric graph, cruxes and crux cards, the output every engine fills),
``accounting`` (usage, the call ledger, billing), ``config`` (a debate's configuration), ``events`` (the events engines stream) and ``result``
(the whole outcome of one debate). Code inside crux_lab imports from those modules; this
package re-exports every name for notebooks, tests and benchmarks, including the events each
engine family declares in its own package (imported when first asked for, so this package never
imports the engines).
"""

from __future__ import annotations

import importlib
from typing import Any

from crux_lab.models.accounting import (
    LLMCall,
    Usage,
    add_known,
    is_billed,
)
from crux_lab.models.base import (
    SCHEMA_VERSION,
    Model,
)
from crux_lab.models.config import (
    MAX_TURNS,
    DebateConfig,
)
from crux_lab.models.domain import (
    DIALOGUE_PHASES,
    AcceptedClaim,
    Argument,
    ArgumentGraph,
    Aspect,
    Attack,
    AttackComponent,
    AttackTarget,
    AttackType,
    Camp,
    CardPosition,
    CommonGround,
    Concession,
    ConcessionKind,
    Crux,
    CruxCard,
    CruxCardPosition,
    CruxPoll,
    CruxSide,
    DCGState,
    DebateOutput,
    DialogueTurn,
    DisagreementType,
    Dispute,
    GroundingQuote,
    Label,
    Move,
    PersonaPollAnswer,
    PersonaPosition,
    PollSummary,
    PositionShift,
    PropositionShift,
    Reason,
    Regime,
    Side,
    Stance,
    Tier,
    TurnPhase,
    ValidationResult,
)
from crux_lab.models.events import (
    EVENT_ADAPTER,
    EVENT_TYPES,
    AgentTurn,
    CruxCardPosted,
    CruxMessage,
    CruxPolled,
    CruxProposed,
    DCGUpdate,
    DebateComplete,
    DebateEvent,
    DebateStart,
    DialogueTurnEvent,
    EngineComplete,
    EngineError,
    EngineStart,
    ErrorEvent,
    EventBase,
    GraphUpdate,
    GraphUpdated,
    MessagePosted,
    Status,
    event_type,
    parse_event,
    register_event,
)
from crux_lab.models.result import (
    DebateResult,
    StructuredCheck,
)

# Events an engine family declares in its own package: name -> module.
_FAMILY_EVENTS = {
    "PhaseStart": "crux_lab.engines.dialogue.events",
    "PhaseTransition": "crux_lab.engines.dialogue.events",
    "Steering": "crux_lab.engines.dialogue.events",
    "Crystallization": "crux_lab.engines.dialogue.events",
    "ConcessionEvent": "crux_lab.engines.dialogue.events",
    "ConvergenceCheck": "crux_lab.engines.dialogue.events",
    "RoundStart": "crux_lab.engines.crux_room.events",
    "RoundEnd": "crux_lab.engines.crux_room.events",
    "ClashStart": "crux_lab.engines.crux_room.events",
    "CruxRoomSpawning": "crux_lab.engines.crux_room.events",
    "CruxRoomComplete": "crux_lab.engines.crux_room.events",
    "DisagreementCandidate": "crux_lab.engines.crux_room.events",
    "DisagreementDetected": "crux_lab.engines.crux_room.events",
    "ArgumentsSubmitted": "crux_lab.engines.blackboard.events",
    "AttacksGenerated": "crux_lab.engines.blackboard.events",
    "ValidationComplete": "crux_lab.engines.blackboard.events",
    "GraphConvergence": "crux_lab.engines.blackboard.events",
    "TableAssigned": "crux_lab.engines.blackboard.events",
    "InitialStance": "crux_lab.engines.blackboard.events",
    "ConvergenceUpdate": "crux_lab.engines.blackboard.events",
    "BlackboardUpdate": "crux_lab.engines.blackboard.events",
    "ClaimsDecomposed": "crux_lab.engines.blackboard.events",
}


def __getattr__(name: str) -> Any:
    if name == "PAID_BACKENDS":  # read from the backend registry when asked for
        from crux_lab.models import accounting

        return accounting.PAID_BACKENDS
    module = _FAMILY_EVENTS.get(name)
    if module is None:
        raise AttributeError(f"module 'crux_lab.models' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)



__all__ = [
    "AcceptedClaim",
    "AgentTurn",
    "Argument",
    "ArgumentGraph",
    "Aspect",
    "Attack",
    "AttackComponent",
    "AttackTarget",
    "AttackType",
    "Camp",
    "CardPosition",
    "CommonGround",
    "Concession",
    "ConcessionKind",
    "Crux",
    "CruxCard",
    "CruxCardPosition",
    "CruxCardPosted",
    "CruxPolled",
    "CruxMessage",
    "CruxProposed",
    "CruxPoll",
    "CruxSide",
    "PersonaPollAnswer",
    "PollSummary",
    "DCGState",
    "DCGUpdate",
    "DIALOGUE_PHASES",
    "DebateComplete",
    "DebateConfig",
    "DebateEvent",
    "DebateOutput",
    "DebateResult",
    "DebateStart",
    "DialogueTurn",
    "DialogueTurnEvent",
    "DisagreementType",
    "Dispute",
    "EVENT_ADAPTER",
    "EVENT_TYPES",
    "EngineComplete",
    "EngineError",
    "EngineStart",
    "ErrorEvent",
    "EventBase",
    "GraphUpdate",
    "GraphUpdated",
    "GroundingQuote",
    "LLMCall",
    "Label",
    "MAX_TURNS",
    "MessagePosted",
    "Model",
    "Move",
    "PAID_BACKENDS",
    "PersonaPosition",
    "PositionShift",
    "PropositionShift",
    "Reason",
    "Regime",
    "SCHEMA_VERSION",
    "Side",
    "Stance",
    "Status",
    "StructuredCheck",
    "Tier",
    "TurnPhase",
    "Usage",
    "ValidationResult",
    "add_known",
    "event_type",
    "is_billed",
    "parse_event",
    "register_event",
]
