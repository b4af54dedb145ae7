"""Structured replies the crux engines request (the ``output_schema`` of each call).

Field names are snake_case. A persona turn's reply is its utterance plus the turn
fields every engine asks for (:class:`crux_lab.engines.base.TurnReply`: move, stance, addresses,
named reason); everything else is optional so a terse real reply still validates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from crux_lab.engines.base import TurnReply, TurnText, shaped
from crux_lab.engines.guards import MAX_QUOTABLE, check_sides
from crux_lab.engines.worldview import Position
from crux_lab.models.domain import CardPosition, DisagreementType


class Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


R = TypeVar("R", bound=Reply)


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


# One participant of a card's conversation: id, the sentences they said there, the corpus chunk
# ids the prompt showed for them.
Participant = tuple[str, tuple[str, ...], tuple[str, ...]]


def card_reply_for(
    said: Mapping[str, Sequence[str]], chunk_ids: Mapping[str, Sequence[str]]
) -> type[CardReply]:
    """The card reply for one conversation: it validates as :class:`CardReply` does, and its
    JSON schema, which a server that enforces schemas makes the model write to, takes one entry
    per participant (``said``: persona id -> the sentences they said there), each naming one
    participant by id, quoting one of that participant's sentences and citing only that
    participant's chunk ids. Qwen2.5-Coder-1.5B, free to write any string, gave one side only,
    then quoted a corpus chunk for both sides, and the card was dropped.

    >>> R = card_reply_for({"a": ["Gold is money."], "b": ["Bitcoin is money."]}, {"a": ["a-c1"]})
    >>> items = R.model_json_schema()["properties"]["personas"]
    >>> items["minItems"], [v["properties"]["persona_id"]["enum"] for v in items["items"]["anyOf"]]
    (2, [['a'], ['b']])
    >>> items["items"]["anyOf"][0]["properties"]["quote"]["enum"]
    ['Gold is money.']
    >>> R.model_validate({"diagnosis": "d", "question": "q?", "disagreement_type": "claim",
    ...     "personas": [{"persona_id": "a", "position": "YES", "quote": "any words"}]}).personas[0].quote
    'any words'
    """
    key = tuple((pid, tuple(dict.fromkeys(said[pid]))[-MAX_QUOTABLE:], tuple(chunk_ids.get(pid, ()))) for pid in said)
    return _card_reply_for(key)


@lru_cache(maxsize=64)
def _card_reply_for(participants: tuple[Participant, ...]) -> type[CardReply]:
    def sides(schema: dict[str, Any]) -> None:
        personas = schema["properties"]["personas"]
        personas["items"] = {"anyOf": [_side_schema(p) for p in participants]}
        personas["minItems"] = personas["maxItems"] = len(participants)

    return shaped(CardReply, sides)


@lru_cache(maxsize=8)
def aspects_reply_for(n: int) -> type[AspectsReply]:
    """The decomposition reply for ``n`` aspects: it validates as :class:`AspectsReply` does, and
    its JSON schema takes exactly ``n``. Qwen2.5-Coder-1.5B, asked for two, gave one: the topic.

    >>> s = aspects_reply_for(3).model_json_schema()["properties"]["aspects"]
    >>> s["minItems"], s["maxItems"]
    (3, 3)
    """
    def count(schema: dict[str, Any]) -> None:
        schema["properties"]["aspects"]["minItems"] = schema["properties"]["aspects"]["maxItems"] = n

    return shaped(AspectsReply, count)


def _side_schema(participant: Participant) -> dict[str, Any]:
    pid, sentences, ids = participant
    props: dict[str, Any] = {
        "persona_id": {"type": "string", "enum": [pid]},
        "position": {"type": "string", "enum": [p.value for p in CardPosition]},
        "reasoning": {"type": "string"},
        "falsifier": {"type": "string"},
        "grounding_quotes": {"type": "array", "items": {"type": "string", **({"enum": list(ids)} if ids else {})}},
        "quote": {"type": "string", **({"enum": list(sentences)} if sentences else {})},
    }
    return {"type": "object", "properties": props, "required": ["persona_id", "position", "reasoning", "quote"]}


class SummaryReply(Reply):
    summary: str = Field(min_length=1)


class SycophancyCheckReply(Reply):
    """Post-generation check: a capitulation is legitimate only with a named claim or a met flip
    condition."""

    capitulates: bool
    names_specific_claim: bool = False
    flip_condition_met: bool = False
