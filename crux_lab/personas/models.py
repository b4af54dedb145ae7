"""Persona file formats (one folder per persona under ``data/personas/<id>/``).

Files use camelCase keys (``timeHorizon``, ``anchorExcerpts``...); Python code uses
snake_case. ``stances.json`` is the ground truth the simulated backend acts from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from crux_lab.models.domain import DisagreementType

ExcerptKind = Literal["quote", "paraphrase", "synthetic"]
StanceValue = Literal["pro", "con", "uncertain"]


class FileModel(BaseModel):
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, alias_generator=to_camel, serialize_by_alias=True
    )


class AnchorExcerpt(FileModel):
    """A grounding excerpt. ``quote`` needs a verifiable ``source``; otherwise it is paraphrase."""

    text: str
    source: str
    date: str = ""
    kind: ExcerptKind


class EvidencePolicy(FileModel):
    accepts: list[str] = Field(default_factory=list)
    rejects: list[str] = Field(default_factory=list)
    weighting: str = ""


class PersonaContract(FileModel):
    persona_id: str
    name: str
    handle: str = ""
    kind: Literal["real", "synthetic"]
    version: str = ""
    personality: str
    bias: str
    stakes: str
    epistemology: str
    time_horizon: str
    flip_conditions: str
    evidence_policy: EvidencePolicy
    anchor_excerpts: list[AnchorExcerpt] = Field(default_factory=list)


class VoiceProfile(FileModel):
    speech_patterns: list[str] = Field(default_factory=list)
    vocabulary: list[str] = Field(default_factory=list)
    forbidden_phrases: list[str] = Field(default_factory=list)
    voice_examples: list[AnchorExcerpt] = Field(default_factory=list)
    rhetorical_fingerprint: list[str] = Field(default_factory=list)


class CorpusChunk(FileModel):
    id: str
    text: str
    source: str
    date: str = ""
    kind: ExcerptKind


class BeliefNode(FileModel):
    id: str
    concept: str
    type: Literal["factual_claim", "inference", "core_value", "assumption"]
    confidence: float = Field(ge=0.0, le=1.0)
    grounding: list[str] = Field(default_factory=list)


class BeliefEdge(FileModel):
    from_: str = Field(alias="from")
    to: str
    polarity: Literal[1, -1]
    confidence: float = Field(ge=0.0, le=1.0)
    source_chunks: list[str] = Field(default_factory=list)


class BeliefGraph(FileModel):
    persona_id: str
    nodes: list[BeliefNode] = Field(default_factory=list)
    edges: list[BeliefEdge] = Field(default_factory=list)
    extracted_at: str = ""
    contradictions: list[list[str]] = Field(default_factory=list)


class FlipTrigger(FileModel):
    """A machine-checkable flip condition.

    ``kind``: ``evidence`` fires when a turn cites evidence naming one of ``keywords``;
    ``argument`` fires when an opponent's turn on ``proposition_id`` names one of ``keywords``;
    ``concession`` fires when ``by`` (a persona id, or ``any``) concedes ``proposition_id``.
    """

    id: str
    kind: Literal["evidence", "argument", "concession"]
    description: str
    proposition_id: str | None = None
    keywords: list[str] = Field(default_factory=list)
    by: str = "any"
    new_stance: StanceValue = "uncertain"


class PropositionStance(FileModel):
    proposition_id: str
    stance: StanceValue
    confidence: float = Field(ge=0.0, le=1.0)
    reason: str
    flip_conditions: list[FlipTrigger] = Field(default_factory=list)
    disagreement_type: DisagreementType | None = None
    belief_node_ids: list[str] = Field(default_factory=list)
    grounding: list[str] = Field(default_factory=list, description="Corpus chunk ids.")


class PersonaStances(FileModel):
    persona_id: str
    stances: list[PropositionStance]


class Proposition(FileModel):
    """A proposition shared by the personas of a deck (the unit of ground truth)."""

    id: str
    text: str
    question: str
    keywords: list[str] = Field(default_factory=list)
    aspect: str = ""
    disagreement_type: DisagreementType | None = Field(
        default=None, description="Crux type when the deck contests it; None for common ground."
    )


class Deck(FileModel):
    id: str
    name: str
    description: str
    persona_ids: list[str]
    topics: list[str]
    propositions: list[Proposition]


class DeckFile(FileModel):
    decks: list[Deck]


@dataclass
class Persona:
    """A loaded persona (runtime structure)."""

    id: str
    contract: PersonaContract
    voice: VoiceProfile
    corpus: list[CorpusChunk]
    stances: PersonaStances
    beliefs: BeliefGraph | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.contract.name

    def stance_on(self, proposition_id: str) -> PropositionStance | None:
        for s in self.stances.stances:
            if s.proposition_id == proposition_id:
                return s
        return None

    def chunk_ids(self) -> set[str]:
        return {c.id for c in self.corpus}
