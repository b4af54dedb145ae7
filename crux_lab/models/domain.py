"""Domain types: dialogue turns and moves, argument graphs (Dung: arguments and typed
attacks), the dispute-centric graph, cruxes and crux cards, and the output every engine fills.
"""

from __future__ import annotations

import time
from enum import StrEnum
from typing import Literal

from pydantic import Field

from crux_lab.models.base import Model

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
    # Set when the turn's stance still contradicted the persona's declared position after its
    # one repair: the role guard's problem, in words. The turn is kept, flagged, not dropped.
    role_flag: str | None = Field(default=None, exclude_if=lambda v: v is None)


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


PollAnswer = Literal["YES", "NO", "UNSURE"]
PivotAnswer = Literal["YES", "NO", "PARTLY"]


class PersonaPollAnswer(Model):
    """One persona's answer to a candidate crux, asked alone (its own system prompt and the
    question, no transcript), with the side the debate had given it kept as evidence."""

    persona_id: str
    answer: PollAnswer
    confidence: float = Field(0.5, ge=0.0, le=1.0)
    reason: str = ""
    # The side the debate gave this persona (a card position, a crux side, a dispute stance);
    # None: the debate put it on no side. Its quote or reasoning there, kept as evidence.
    debate_side: Literal["YES", "NO", "NUANCED"] | None = None
    debate_statement: str = ""
    # The debate put it on YES (NO) and, asked alone, it answers NO (YES).
    flipped: bool = False
    # A reply that was neither YES, NO nor UNSURE after the one repair: recorded as UNSURE, kept.
    raw_reply: str | None = Field(default=None, exclude_if=lambda v: v is None)
    # The pivot test: would its answer on the debate topic change were this settled against it?
    pivot: PivotAnswer | None = None
    pivot_reason: str = ""

    def flip_line(self, name: str) -> str:
        """The side flip in words, or "".

        >>> PersonaPollAnswer(persona_id="a", answer="YES", debate_side="NO", flipped=True).flip_line("Ann")
        'Ann stated NO in the room, answers YES when asked alone'
        """
        return f"{name} stated {self.debate_side} in the room, answers {self.answer} when asked alone" if self.flipped else ""


class CruxPoll(Model):
    """A candidate crux put to every persona alone (``crux_lab.engines.poll``).

    ``status``: ``split`` (at least one YES and one NO: a crux, its sides the poll's),
    ``unanimous`` (every persona gave the same YES or NO: common ground, never a crux),
    ``unsplit`` (no YES against a NO: not a crux), ``unpolled`` (a request failed: the debate's
    sides stand). ``decisive_for``: the personas whose pivot answer is YES."""

    status: Literal["split", "unanimous", "unsplit", "unpolled"]
    question: str
    # The card or crux it was asked of (its id in the result).
    item_id: str = ""
    answers: list[PersonaPollAnswer] = Field(default_factory=list)
    decisive_for: list[str] = Field(default_factory=list)
    not_decisive_for: list[str] = Field(default_factory=list)
    # The debate's own sides, with their quotes (evidence; the crux's sides are the poll's).
    debate_yes_side: list[CruxSide] = Field(default_factory=list)
    debate_no_side: list[CruxSide] = Field(default_factory=list)
    note: str = ""

    def answer_of(self, persona_id: str) -> PersonaPollAnswer | None:
        return next((a for a in self.answers if a.persona_id == persona_id), None)

    @property
    def flips(self) -> list[PersonaPollAnswer]:
        return [a for a in self.answers if a.flipped]


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
    # The personas' own answers, asked alone (crux_lab.engines.poll); None: not polled.
    poll: CruxPoll | None = Field(default=None, exclude_if=lambda v: v is None)


class PollSummary(Model):
    """What the poll did in one run (``crux_lab.engines.poll``): how many candidates it put to
    the personas, what it left out and why, the side flips, and, where the engine keeps an
    argument graph, how often the graph's pivots agree with the personas' own pivot answers."""

    status: Literal["done", "skipped"] = "done"
    note: str = ""
    candidates: int = 0
    polled: int = 0
    # Candidates beyond poll_max (left with their debate sides), and those a failed request
    # left unpolled: their questions.
    over_limit: list[str] = Field(default_factory=list)
    unpolled: list[str] = Field(default_factory=list)
    # Candidates the poll did not split (no YES against a NO, and not every persona the same):
    # dropped from the cruxes and cards, kept here.
    not_split: list[CruxPoll] = Field(default_factory=list)
    # Disputes whose crux the poll ruled out (not split, or common ground): not cruxes any more.
    ruled_disputes: list[str] = Field(default_factory=list)
    flips: int = 0
    decisive: int = 0
    # Share of (crux, persona) pairs where the argument graph's pivot and the persona's pivot
    # answer agree (graph, dialogue); None: no argument graph, or nothing to compare.
    graph_pivot_agreement: float | None = None
    graph_pivot_pairs: int = 0


class CommonGround(Model):
    """Something every participant accepts. Must never be fake (see DESIGN.md)."""

    id: str
    statement: str
    source: Literal["grounded", "dispute", "card", "blackboard", "stances", "poll"]
    persona_ids: list[str] = Field(default_factory=list)
    argument_id: str | None = None
    dispute_id: str | None = None
    agreed_side: Side | None = None
    proposition_ids: list[str] = Field(default_factory=list)
    # source "poll": a candidate crux every persona answered the same way when asked alone.
    poll: CruxPoll | None = Field(default=None, exclude_if=lambda v: v is None)


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
    # The personas' own answers, asked alone (see Crux.poll); None: not polled.
    poll: CruxPoll | None = Field(default=None, exclude_if=lambda v: v is None)


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
    poll: PollSummary | None = Field(default=None, exclude_if=lambda v: v is None)
