"""The typed data model shared by every layer of crux_lab.

Everything that is persisted (event logs, result JSON, DuckDB rows) is one of these
pydantic v2 models. JSON keys are snake_case. Every model round-trips losslessly:
``Model.model_validate_json(m.model_dump_json()) == m``.

Sections: dialogue turns and moves, argument graphs (Dung: arguments and typed attacks), the
dispute-centric graph, cruxes and crux cards, the result every engine fills, and the events
engines stream.
"""

from __future__ import annotations

import hashlib
import json
import time
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from crux_lab.backends import billed_names

SCHEMA_VERSION = 1


class Model(BaseModel):
    """Base for persisted models: strict about unknown keys, so typos fail loudly."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# ---------------------------------------------------------------------------
# Vocabularies
# ---------------------------------------------------------------------------


class Move(StrEnum):
    """Dialogue moves: what a turn does (challenge, concede, reframe, propose a crux...)."""

    CLAIM = "CLAIM"
    CHALLENGE = "CHALLENGE"
    CLARIFY = "CLARIFY"
    CONCEDE = "CONCEDE"
    REFRAME = "REFRAME"
    PROPOSE_CRUX = "PROPOSE_CRUX"


class DisagreementType(StrEnum):
    """Crux taxonomy: what kind of disagreement a crux is."""

    premise = "premise"
    evidence = "evidence"
    values = "values"
    definition = "definition"
    horizon = "horizon"
    claim = "claim"


class CardPosition(StrEnum):
    YES = "YES"
    NO = "NO"
    NUANCED = "NUANCED"


class Side(StrEnum):
    YES = "YES"
    NO = "NO"


class AttackType(StrEnum):
    rebut = "rebut"
    undermine = "undermine"
    undercut = "undercut"


class AttackComponent(StrEnum):
    claim = "claim"
    premise = "premise"
    assumption = "assumption"


class Label(StrEnum):
    IN = "IN"
    OUT = "OUT"
    UNDEC = "UNDEC"


class Regime(StrEnum):
    consensus = "consensus"
    polarized = "polarized"
    partial = "partial"
    # Nothing was found to disagree on: detection found no opposed claims, or the personas
    # took no view. Never reported as consensus, which needs stated agreement on named claims.
    no_disagreement_found = "no_disagreement_found"
    unknown = "unknown"


class Tier(StrEnum):
    fast = "fast"
    strong = "strong"


class ConcessionKind(StrEnum):
    full = "full"
    partial = "partial"
    scope = "scope"


# Phases a turn can belong to. The dialogue engines use their four phases (opening, free
# exchange, crux seeking, resolution); the panel and crux-room engines use the message phases
# (take, clash, closing, crux room, channel...); blitz/classical/graph use rounds.
TurnPhase = Literal[
    "opening",
    "free_exchange",
    "crux_seeking",
    "resolution",
    "take",
    "clash",
    "closing",
    "crux_room",
    "channel",
    "round",
]

DIALOGUE_PHASES: tuple[TurnPhase, ...] = ("opening", "free_exchange", "crux_seeking", "resolution")


# ---------------------------------------------------------------------------
# Transcript
# ---------------------------------------------------------------------------


class DialogueTurn(Model):
    """One utterance of one persona (a transcript entry)."""

    id: str
    turn_index: int
    persona_id: str
    dialogue: str
    move: Move | None = None
    phase: TurnPhase
    phase_number: int | None = None
    steering_hint: str | None = None
    aspect_id: str | None = None
    room_id: str | None = None
    reply_to: str | None = None
    # Ids of the engine's own claims or arguments the turn addresses, as the model named them
    # in its reply (never a deck's ground-truth ids). The store keeps the column's old name.
    proposition_ids: list[str] = Field(default_factory=list)
    stance: Literal["pro", "con", "uncertain"] | None = None
    confidence: float | None = None
    timestamp: float = Field(default_factory=time.time)
    # The reason a concession names (a met flip condition, evidence), as the model stated it
    # in its reply's ``named_reason`` field; empty when it named none.
    # Left out of dumps while empty, so records (and the store's turns columns) stay as before.
    named_reason: str | None = Field(default=None, exclude_if=lambda v: v is None)


class Aspect(Model):
    """A debatable sub-question of the topic."""

    id: str
    label: str
    description: str


# ---------------------------------------------------------------------------
# Argument graph (Dung)
# ---------------------------------------------------------------------------


class Argument(Model):
    id: str
    speaker_id: str
    claim: str
    premises: list[str] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    round: int = 0
    derived_from_turns: list[int] = Field(default_factory=list)
    proposition_id: str | None = None


class AttackTarget(Model):
    arg_id: str
    component: AttackComponent = AttackComponent.claim
    index: int = 0


class Attack(Model):
    id: str
    from_arg_id: str
    to_arg_id: str
    type: AttackType = AttackType.rebut
    target: AttackTarget
    counter_proposition: str = ""
    rationale: str = ""
    evidence: list[str] = Field(default_factory=list)
    confidence: float = 1.0
    speaker_id: str = ""
    round: int = 0


class ValidationResult(Model):
    attack_id: str
    valid: bool
    attack_strength: float = 1.0
    corrections: str = ""
    fallacy: str | None = None


class ArgumentGraph(Model):
    """A Dung argument graph with its computed semantics."""

    arguments: list[Argument] = Field(default_factory=list)
    attacks: list[Attack] = Field(default_factory=list)
    grounded: list[str] = Field(default_factory=list)
    preferred: list[list[str]] = Field(default_factory=list)
    preferred_count: int = 0
    labelling: dict[str, Label] = Field(default_factory=dict)


# ---------------------------------------------------------------------------
# Dispute-centric graph (DCG)
# ---------------------------------------------------------------------------


class Dispute(Model):
    id: str
    question: str
    horizon: str | None = None
    resolution_criteria: list[str] = Field(default_factory=list)
    created_from_turns: list[int] = Field(default_factory=list)
    active: bool = True
    proposition_id: str | None = None
    disagreement_type: DisagreementType | None = None


class Stance(Model):
    id: str
    dispute_id: str
    speaker_id: str
    side: Side
    statement: str
    confidence: float | None = None
    derived_from_turns: list[int] = Field(default_factory=list)


class Reason(Model):
    id: str
    stance_id: str
    polarity: Literal["SUPPORT", "ATTACK"]
    claim: str
    assumptions: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    derived_from_turns: list[int] = Field(default_factory=list)
    # Reason-layer attacks (Dung within a dispute): ids of reasons this one attacks.
    attacks: list[str] = Field(default_factory=list)


class DCGState(Model):
    disputes: list[Dispute] = Field(default_factory=list)
    stances: list[Stance] = Field(default_factory=list)
    reasons: list[Reason] = Field(default_factory=list)


# ---------------------------------------------------------------------------
# Insight output
# ---------------------------------------------------------------------------


class CruxSide(Model):
    persona_id: str
    statement: str = ""


class Crux(Model):
    """A crux found by any engine, in one common shape.

    ``source`` says how it was found: ``proposed`` (a PROPOSE_CRUX turn),
    ``symmetric_difference`` / ``assumption`` (Dung semantics), ``dispute`` (DCG),
    ``card`` (a crux card), ``blackboard`` (blitz/classical).
    """

    id: str
    statement: str
    source: Literal[
        "proposed", "symmetric_difference", "assumption", "dispute", "card", "blackboard", "pivot"
    ]
    disagreement_type: DisagreementType | None = None
    proposed_by: list[str] = Field(default_factory=list)
    acknowledged: bool = False
    assumptions: list[str] = Field(default_factory=list)
    yes_side: list[CruxSide] = Field(default_factory=list)
    no_side: list[CruxSide] = Field(default_factory=list)
    settling_question: str | None = None
    dispute_id: str | None = None
    argument_ids: list[str] = Field(default_factory=list)
    proposition_ids: list[str] = Field(default_factory=list)
    score: float | None = None
    # Does the statement merely restate the debate topic? (analysis.metrics.restates_topic,
    # stamped at the end of a run; left out of dumps while unset.)
    restates_topic: bool | None = Field(default=None, exclude_if=lambda v: v is None)
    # False: the run cannot say who holds which side (the sides are then empty); True: each side
    # names at least one persona and none is on both (analysis.sides.tidy_sides, at the end of a
    # run; left out of dumps while unset).
    sides_known: bool | None = Field(default=None, exclude_if=lambda v: v is None)


class CommonGround(Model):
    """Something every participant accepts. Must never be fake (see DESIGN.md)."""

    id: str
    statement: str
    source: Literal["grounded", "dispute", "card", "blackboard", "stances"]
    persona_ids: list[str] = Field(default_factory=list)
    argument_id: str | None = None
    dispute_id: str | None = None
    agreed_side: Side | None = None
    proposition_ids: list[str] = Field(default_factory=list)


class AcceptedClaim(Model):
    """A claim the argument graph accepts (grounded) although it is in conflict with another
    persona: another persona's argument attacks it (and its defenders defeated every attack),
    it attacks another persona's argument, or another persona stated the opposite stance on
    the same claim. It won the exchange; it is not agreement, so it is
    reported here and never as :class:`CommonGround` (graph mode)."""

    id: str
    statement: str
    argument_id: str
    persona_ids: list[str] = Field(default_factory=list)  # who made the argument
    attacked_by: list[str] = Field(default_factory=list)  # personas whose arguments attack it
    attacker_argument_ids: list[str] = Field(default_factory=list)
    defender_argument_ids: list[str] = Field(default_factory=list)  # accepted arguments that defeat the attackers
    target_argument_ids: list[str] = Field(default_factory=list)  # other personas' arguments it attacks
    opposing_argument_ids: list[str] = Field(default_factory=list)  # other personas' opposite-stance arguments
    proposition_ids: list[str] = Field(default_factory=list)


class Camp(Model):
    index: int
    argument_ids: list[str] = Field(default_factory=list)
    persona_ids: list[str] = Field(default_factory=list)
    label: str = ""


class GroundingQuote(Model):
    """A corpus excerpt a card position rests on: the chunk's own words and where they come from."""

    chunk_id: str
    text: str
    source: str = ""


class CruxCardPosition(Model):
    position: CardPosition
    reasoning: str
    falsifier: str | None = None
    grounding_quotes: list[str] = Field(
        default_factory=list, description="Corpus chunk ids of the persona (must exist)."
    )
    grounding: list[GroundingQuote] = Field(
        default_factory=list, description="The cited chunks' text and source, in grounding_quotes order."
    )


class CruxCard(Model):
    """A crux card: the question under a disagreement, its type and diagnosis, and each
    persona's position with its reasoning and falsifier."""

    id: str
    question: str
    disagreement_type: DisagreementType
    diagnosis: str
    resolved: bool = False
    resolution: str | None = None
    personas: dict[str, CruxCardPosition]
    source_aspect: str = ""
    source_messages: list[str] = Field(default_factory=list)
    crux_room_id: str = ""
    timestamp: float = Field(default_factory=time.time)
    proposition_ids: list[str] = Field(default_factory=list)
    # Does the question merely restate the debate topic? (see Crux.restates_topic)
    restates_topic: bool | None = Field(default=None, exclude_if=lambda v: v is None)


class Concession(Model):
    turn_index: int
    persona_id: str
    type: ConcessionKind
    conceded_claim: str
    effect: str = ""
    removed_arg_ids: list[str] = Field(default_factory=list)
    updated_arg_ids: list[str] = Field(default_factory=list)
    proposition_id: str | None = None
    reason: str | None = None


class PersonaPosition(Model):
    """A persona's position at a point of the debate (opening, closing, ...)."""

    persona_id: str
    at: Literal["opening", "closing", "initial", "final"]
    text: str
    stances: dict[str, Literal["pro", "con", "uncertain"]] = Field(default_factory=dict)
    confidence: dict[str, float] = Field(default_factory=dict)


class PropositionShift(Model):
    proposition_id: str
    before: Literal["pro", "con", "uncertain"] | None
    after: Literal["pro", "con", "uncertain"] | None


class PositionShift(Model):
    persona_id: str
    shifted: bool
    embedding_distance: float | None = None
    proposition_shifts: list[PropositionShift] = Field(default_factory=list)
    attributed_rooms: list[str] = Field(default_factory=list)
    named_reason: str | None = None
    summary: str = ""


def add_known(a: int | None, b: int | None) -> int | None:
    """Sum of two counts where None is unknown: unknown only when both are.

    >>> add_known(None, None) is None, add_known(None, 3), add_known(2, 3)
    (True, 3, 5)
    """
    return None if a is None and b is None else (a or 0) + (b or 0)


class Usage(Model):
    calls: int = 0
    input_tokens: int = 0  # uncached input (cache reads and writes are counted apart)
    output_tokens: int = 0
    # None: the backend reported no cache figures (unknown, not 0). A total is unknown only
    # when every call's is; otherwise it sums the calls that reported one.
    cache_read_tokens: int | None = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=add_known(self.cache_read_tokens, other.cache_read_tokens),
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cost_usd=round(self.cost_usd + other.cost_usd, 10),
            latency_s=self.latency_s + other.latency_s,
        )


class LLMCall(Model):
    """One row of the call ledger."""

    run_id: str
    seq: int
    purpose: str
    backend: str
    model: str
    tier: Tier
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int | None = 0  # None: the server reported no cache figures (unknown)
    cache_write_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    retries: int = 0
    # "replayed" only in runs written before the ledger recorded the answering backend instead.
    outcome: Literal["ok", "repaired", "error", "cancelled", "replayed"] = "ok"
    error: str | None = None
    request_hash: str = ""


# Backends whose calls are billed to an API key (the backend registry says which); the others
# model what a call would cost.
PAID_BACKENDS = frozenset(billed_names())


def is_billed(backend: str) -> bool:
    """True when a run's (or call's) backend includes a paid API: the one rule behind the CLI
    summary, the reports and the store's ``billed`` columns.

    >>> is_billed("anthropic"), is_billed("replay"), is_billed("anthropic+replay")
    (True, False, True)
    """
    return any(part in PAID_BACKENDS for part in backend.split("+"))


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------


MAX_TURNS = 10_000


class DebateConfig(Model):
    topic: str = Field(min_length=1)
    persona_ids: list[str] = Field(min_length=1)
    engine: str = "dialogue"
    backend: str = "simulated"
    # Bounds are checked before any call: a seed must fit the store's BIGINT, and a turn
    # budget beyond MAX_TURNS is a typo (it would run for days, then fail to store).
    seed: int = Field(0, ge=0, le=2**63 - 1)
    max_turns: int = Field(30, gt=0, le=MAX_TURNS)
    # The backend's own options (crux_lab.backends), checked by the backend when it is built;
    # left out of dumps while empty.
    backend_options: dict[str, Any] = Field(default_factory=dict, exclude_if=lambda v: not v)
    # Engine-specific parameters (e.g. max_rounds, aspects); each engine validates its own.
    params: dict[str, Any] = Field(default_factory=dict)
    # Per-purpose overrides of the model allocation: {"crux_turn": {"tier": "fast", "temperature": 0.5}}
    allocation: dict[str, dict[str, Any]] = Field(default_factory=dict)
    deck: str | None = None
    # The model each tier called ({"strong": ..., "fast": ...}, crux_lab.llm.tier_models) and
    # the server of the openai backend: provenance, and part of the run id when set. Left out
    # of dumps while empty, so the run ids of runs without them stay as they were.
    models: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)
    base_url: str | None = Field(default=None, exclude_if=lambda v: v is None)
    # --structured for the openai backend (auto, json_schema, prompt); left out while unset.
    structured: Literal["auto", "json_schema", "prompt"] | None = Field(default=None, exclude_if=lambda v: v is None)

    @model_validator(mode="before")
    @classmethod
    def _legacy_options(cls, data: Any) -> Any:
        """Configs written before backends carried their own options kept the simulator's
        failure knobs under ``sim``: they load with the knobs that were set (the non-zero
        ones) as the backend's options.

        >>> DebateConfig.model_validate({"topic": "t", "persona_ids": ["a"],
        ...     "sim": {"drift": 0.5, "misread": 0.0}}).backend_options
        {'drift': 0.5}
        """
        if isinstance(data, dict) and "sim" in data:
            data = dict(data)
            legacy = data.pop("sim") or {}
            if "backend_options" not in data:
                data["backend_options"] = {k: v for k, v in dict(legacy).items() if v}
        return data

    def run_id(self) -> str:
        """Stable id: a hash of the parameters and the seed (see DESIGN.md "One writer")."""
        payload = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------
# Events
# ---------------------------------------------------------------------------


class EventBase(Model):
    seq: int = 0
    ts: float = Field(default_factory=time.time)


# dialogue / dcg
class EngineStart(EventBase):
    type: Literal["engine_start"] = "engine_start"
    engine: str
    topic: str
    persona_ids: list[str]
    backend: str = ""
    run_id: str = ""


class PhaseStart(EventBase):
    type: Literal["phase_start"] = "phase_start"
    phase: int
    name: str


class PhaseTransition(EventBase):
    type: Literal["phase_transition"] = "phase_transition"
    from_phase: int
    to_phase: int
    reason: str


class DialogueTurnEvent(EventBase):
    type: Literal["dialogue_turn"] = "dialogue_turn"
    turn: DialogueTurn


class Steering(EventBase):
    type: Literal["steering"] = "steering"
    persona_id: str
    hint: str
    situation: str


class Crystallization(EventBase):
    type: Literal["crystallization"] = "crystallization"
    index: int
    turn_range: tuple[int, int]
    new_args: list[Argument] = Field(default_factory=list)
    updated_arg_ids: list[str] = Field(default_factory=list)
    removed_arg_ids: list[str] = Field(default_factory=list)
    new_attacks: list[Attack] = Field(default_factory=list)
    removed_attack_ids: list[str] = Field(default_factory=list)


class GraphUpdated(EventBase):
    type: Literal["graph_updated"] = "graph_updated"
    graph: ArgumentGraph
    in_count: int
    out_count: int
    undec_count: int


class ConcessionEvent(EventBase):
    type: Literal["concession"] = "concession"
    concession: Concession


class CruxProposed(EventBase):
    type: Literal["crux_proposed"] = "crux_proposed"
    persona_id: str
    statement: str
    acknowledged: bool = False


class ConvergenceCheck(EventBase):
    type: Literal["convergence_check"] = "convergence_check"
    converged: bool
    signals: dict[str, float | bool | int] = Field(default_factory=dict)
    reason: str = ""


class DCGUpdate(EventBase):
    type: Literal["dcg_update"] = "dcg_update"
    dcg: DCGState
    cruxes: list[Crux] = Field(default_factory=list)
    common_ground: list[CommonGround] = Field(default_factory=list)
    regime: Regime = Regime.unknown


class EngineComplete(EventBase):
    type: Literal["engine_complete"] = "engine_complete"
    complete: bool = True
    regime: Regime = Regime.unknown
    summary: str = ""


class EngineError(EventBase):
    """An error or a warning. ``level='warning'`` means the debate went on without it."""

    type: Literal["engine_error"] = "engine_error"
    level: Literal["warning", "error"] = "error"
    purpose: str = ""
    error: str


# panel / crux rooms
class DebateStart(EventBase):
    type: Literal["debate_start"] = "debate_start"
    topic: str
    aspects: list[Aspect] = Field(default_factory=list)
    personas: list[str] = Field(default_factory=list)


class DebateOutput(Model):
    """The output every engine fills, carried by ``debate_complete`` so the
    event log alone rebuilds it."""

    cruxes: list[Crux] = Field(default_factory=list)
    fault_lines: list[str] = Field(default_factory=list)
    flip_conditions: dict[str, list[str]] = Field(default_factory=dict)
    resolution_paths: list[str] = Field(default_factory=list)
    evidence_ledger: dict[str, list[str]] = Field(default_factory=dict)
    common_ground: list[CommonGround] = Field(default_factory=list)
    camps: list[Camp] = Field(default_factory=list)
    regime: Regime = Regime.unknown
    regime_description: str = ""
    accepted_claims: list[AcceptedClaim] = Field(default_factory=list)


class DebateComplete(EventBase):
    type: Literal["debate_complete"] = "debate_complete"
    shifts: list[PositionShift] = Field(default_factory=list)
    output: DebateOutput | None = None


class ErrorEvent(EventBase):
    type: Literal["error"] = "error"
    error: str


class RoundStart(EventBase):
    type: Literal["round_start"] = "round_start"
    aspect: Aspect | None = None
    round_number: int


class RoundEnd(EventBase):
    type: Literal["round_end"] = "round_end"
    aspect: Aspect | None = None
    round_number: int = 0
    summary: str = ""


class MessagePosted(EventBase):
    type: Literal["message_posted"] = "message_posted"
    message: DialogueTurn
    phase: Literal["opening", "take", "clash", "closing", "channel"]


class ClashStart(EventBase):
    type: Literal["clash_start"] = "clash_start"
    personas: list[str]
    aspect: str


class CruxRoomSpawning(EventBase):
    type: Literal["crux_room_spawning"] = "crux_room_spawning"
    room_id: str
    question: str
    personas: list[str]


class CruxMessage(EventBase):
    type: Literal["crux_message"] = "crux_message"
    room_id: str
    message: DialogueTurn
    room_phase: Literal["position", "exchange", "convergence"] = "exchange"


class CruxCardPosted(EventBase):
    type: Literal["crux_card_posted"] = "crux_card_posted"
    card: CruxCard


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


class DisagreementDetected(EventBase):
    type: Literal["disagreement_detected"] = "disagreement_detected"
    candidate: DisagreementCandidate
    votes: int = 0


# graph mode and blitz / classical
class ArgumentsSubmitted(EventBase):
    type: Literal["arguments_submitted"] = "arguments_submitted"
    persona_id: str
    arguments: list[Argument]


class AttacksGenerated(EventBase):
    type: Literal["attacks_generated"] = "attacks_generated"
    round: int
    persona_id: str
    attacks: list[Attack]
    counter_arguments: list[Argument] = Field(default_factory=list)


class ValidationComplete(EventBase):
    type: Literal["validation_complete"] = "validation_complete"
    round: int
    results: list[ValidationResult]


class GraphUpdate(EventBase):
    type: Literal["graph_update"] = "graph_update"
    round: int
    graph: ArgumentGraph


class GraphConvergence(EventBase):
    type: Literal["graph_convergence"] = "graph_convergence"
    round: int
    converged: bool
    reason: str


class TableAssigned(EventBase):
    type: Literal["table_assigned"] = "table_assigned"
    tables: list[list[str]]


class Status(EventBase):
    type: Literal["status"] = "status"
    message: str


class InitialStance(EventBase):
    type: Literal["initial_stance"] = "initial_stance"
    persona_id: str
    stances: dict[str, Literal["pro", "con", "uncertain"]]
    confidence: dict[str, float] = Field(default_factory=dict)


class AgentTurn(EventBase):
    type: Literal["agent_turn"] = "agent_turn"
    turn: DialogueTurn
    intent: str = ""
    urgency: float | None = None


class ConvergenceUpdate(EventBase):
    type: Literal["convergence_update"] = "convergence_update"
    round: int
    entropy: float | None = None
    distance: float | None = None
    converged: bool = False
    reason: str = ""


class BlackboardUpdate(EventBase):
    type: Literal["blackboard_update"] = "blackboard_update"
    round: int
    summary: str
    crux_candidates: list[str] = Field(default_factory=list)
    disputes: list[str] = Field(default_factory=list)


class ClaimsDecomposed(EventBase):
    type: Literal["claims_decomposed"] = "claims_decomposed"
    claims: list[str]


DebateEvent = Annotated[
    EngineStart
    | PhaseStart
    | PhaseTransition
    | DialogueTurnEvent
    | Steering
    | Crystallization
    | GraphUpdated
    | ConcessionEvent
    | CruxProposed
    | ConvergenceCheck
    | DCGUpdate
    | EngineComplete
    | EngineError
    | DebateStart
    | DebateComplete
    | ErrorEvent
    | RoundStart
    | RoundEnd
    | MessagePosted
    | ClashStart
    | CruxRoomSpawning
    | CruxMessage
    | CruxCardPosted
    | CruxRoomComplete
    | DisagreementDetected
    | ArgumentsSubmitted
    | AttacksGenerated
    | ValidationComplete
    | GraphUpdate
    | GraphConvergence
    | TableAssigned
    | Status
    | InitialStance
    | AgentTurn
    | ConvergenceUpdate
    | BlackboardUpdate
    | ClaimsDecomposed,
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[DebateEvent] = TypeAdapter(DebateEvent)


def parse_event(data: str | bytes | dict[str, Any]) -> DebateEvent:
    """Parse one event from a JSON line or a dict.

    >>> e = parse_event('{"type": "status", "message": "hi"}')
    >>> type(e).__name__, e.message
    ('Status', 'hi')
    """
    if isinstance(data, dict):
        return EVENT_ADAPTER.validate_python(data)
    return EVENT_ADAPTER.validate_json(data)


# ---------------------------------------------------------------------------
# Result
# ---------------------------------------------------------------------------


class StructuredCheck(Model):
    """How a model server's replies were held to their JSON schema in one run.

    ``mode`` is what the run used: ``json_schema`` (the schema sent as ``response_format``)
    or ``prompt`` (the schema stated in the prompt, every reply validated either way).
    ``canary`` is what a one-off request whose schema admits a single sentinel value showed:
    the server ``enforced`` the schema, ``ignored`` it (answered HTTP 200 with other text),
    ``rejected`` it (HTTP 400), or it was ``not checked`` (``--structured prompt``).

    >>> StructuredCheck(mode="prompt", canary="ignored", server="http://127.0.0.1:8080/v1").line()
    'structured output: prompt contract (the server at http://127.0.0.1:8080/v1 ignored a JSON schema it was sent)'
    """

    mode: Literal["json_schema", "prompt"]
    canary: Literal["enforced", "ignored", "rejected", "not checked"]
    server: str = ""
    requested: Literal["auto", "json_schema", "prompt"] = "auto"

    def line(self) -> str:
        mode = "JSON schema (response_format)" if self.mode == "json_schema" else "prompt contract"
        why = {
            "enforced": "enforced a JSON schema it was sent",
            "ignored": "ignored a JSON schema it was sent",
            "rejected": "refused a JSON schema it was sent",
            "not checked": "was not checked: --structured prompt",
        }[self.canary]
        return f"structured output: {mode} (the server at {self.server} {why})"

    def warning(self) -> str | None:
        """A warning when the server does not hold replies to a schema it is sent."""
        if self.canary not in ("ignored", "rejected"):
            return None
        if self.mode == "prompt":
            return (
                f"the server at {self.server} {self.canary} a JSON schema it was sent (response_format): "
                f"prompt mode is in use, the schema is stated in each prompt and every reply is validated"
            )
        return (
            f"the server at {self.server} {self.canary} a JSON schema it was sent, but --structured "
            f"json_schema keeps sending it; use --structured auto or prompt"
        )


class DebateResult(Model):
    """The whole outcome of one debate. Engines fill what applies and leave the rest empty."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    config: DebateConfig
    engine: str
    backend: str
    complete: bool = False
    transcript: list[DialogueTurn] = Field(default_factory=list)
    events: list[DebateEvent] = Field(default_factory=list)
    aspects: list[Aspect] = Field(default_factory=list)
    graph: ArgumentGraph = Field(default_factory=ArgumentGraph)
    dcg: DCGState = Field(default_factory=DCGState)
    cruxes: list[Crux] = Field(default_factory=list)
    crux_cards: list[CruxCard] = Field(default_factory=list)
    common_ground: list[CommonGround] = Field(default_factory=list)
    # Accepted but contested claims (graph mode): grounded arguments another persona attacked.
    accepted_claims: list[AcceptedClaim] = Field(default_factory=list)
    camps: list[Camp] = Field(default_factory=list)
    # The groups camps came from when they overlapped (preferred extensions: a persona's
    # arguments can sit in several); camps themselves are disjoint (analysis.sides).
    extensions: list[Camp] = Field(default_factory=list, exclude_if=lambda v: not v)
    concession_trail: list[Concession] = Field(default_factory=list)
    regime: Regime = Regime.unknown
    regime_description: str = ""
    # How the server held replies to their schema (openai backend; None elsewhere).
    structured: StructuredCheck | None = Field(default=None, exclude_if=lambda v: v is None)
    positions: list[PersonaPosition] = Field(default_factory=list)
    position_shifts: list[PositionShift] = Field(default_factory=list)
    # the output every engine fills
    fault_lines: list[str] = Field(default_factory=list)
    flip_conditions: dict[str, list[str]] = Field(default_factory=dict)
    resolution_paths: list[str] = Field(default_factory=list)
    evidence_ledger: dict[str, list[str]] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)
    llm_calls: list[LLMCall] = Field(default_factory=list)
    duration_s: float = 0.0
    error: str | None = None
    # Per-debate evaluation metrics (crux_lab.analysis.metrics.compute_metrics); NaN-free.
    metrics: dict[str, float] = Field(default_factory=dict)
