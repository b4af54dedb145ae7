"""Structured replies the crux engines request (the ``output_schema`` of each call).

Field names are snake_case. A persona turn's reply is its utterance plus the turn
fields every engine asks for (:class:`crux_lab.engines.base.TurnReply`: move, stance, addresses,
named reason); everything else is optional so a terse real reply still validates.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from crux_lab.engines.base import TurnReply, TurnText
from crux_lab.engines.guards import check_sides
from crux_lab.engines.worldview import Position
from crux_lab.models.domain import CardPosition, DisagreementType


class Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class AspectItem(Reply):
    id: str = ""
    label: str = Field(min_length=1)
    description: str = ""


class AspectsReply(Reply):
    """Topic decomposition into the aspects a panel debates."""

    aspects: list[AspectItem] = Field(min_length=1)


class SpeechReply(TurnReply):
    """One persona utterance and its turn fields (move, stance, addresses, named_reason)."""

    model_config = ConfigDict(extra="ignore")

    utterance: TurnText = Field(min_length=1)


class OpeningReply(SpeechReply):
    """An opening that also states the speaker's positions on the topic, each with the implicit
    assumptions it rests on (the worldview step's positions, asked in the same turn)."""

    positions: list[Position] = Field(default_factory=list)


class DetectionItem(Reply):
    """Boolean decomposition of one disagreement: no confidence float."""

    has_direct_opposition: bool
    has_specific_claim: bool
    topic_relevant: bool
    personas: list[str] = Field(default_factory=list)
    claim: str = ""
    claim_id: str | None = None  # the id of a listed claim, when the disagreement is about one

    @property
    def positive(self) -> bool:
        return self.has_direct_opposition and self.has_specific_claim and self.topic_relevant


class DetectionReply(Reply):
    disagreements: list[DetectionItem] = Field(default_factory=list)


class ExitCheckReply(Reply):
    """Crux-room exit check (fast tier): has the crux been surfaced?"""

    crux_surfaced: bool
    reason: str = ""


class ConvergenceReply(Reply):
    """Convergence check: do both personas name the same core disagreement?"""

    same_core: bool
    core: str = ""


class CardPersonaReply(Reply):
    persona_id: str
    position: CardPosition
    reasoning: str = ""
    falsifier: str | None = None
    grounding_quotes: list[str] = Field(default_factory=list)
    quote: str = ""  # a few words this participant said in the conversation, copied exactly


class CardReply(Reply):
    """Crux card extraction (provenance fields are added by the engine).
    ``question`` is the buried premise under the disagreement, not the debate topic."""

    diagnosis: str = Field(min_length=1)  # first: a JSON schema makes the field order the order of writing
    question: str = Field(min_length=1)
    disagreement_type: DisagreementType
    resolved: bool = False
    resolution: str | None = None
    personas: list[CardPersonaReply] = Field(min_length=1)

    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> CardReply:
        """Sends a side whose quote is not its persona's own words back once (:func:`check_sides`)."""
        check_sides(self, info.context)
        return self


class SummaryReply(Reply):
    summary: str = Field(min_length=1)


class SycophancyCheckReply(Reply):
    """Post-generation check: a capitulation is legitimate only with a named claim or a met flip
    condition."""

    capitulates: bool
    names_specific_claim: bool = False
    flip_condition_met: bool = False
