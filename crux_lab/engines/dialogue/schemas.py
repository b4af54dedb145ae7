"""Output schemas of the dialogue and DCG engines' LLM calls.

These are what the model is asked to return, not persisted records: they are lenient about
extra keys and about move spelling, and the engine maps them onto :mod:`crux_lab.models`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from crux_lab.engines.base import TurnReply, TurnText, shaped
from crux_lab.engines.guards import MAX_QUOTABLE, check_sides
from crux_lab.models.domain import AttackType, ConcessionKind, Move, Side


class LLMOutput(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class TurnOutput(TurnReply):
    """One dialogue turn: its words and move (``{dialogue, move}``) plus what the turn states besides its
    words: its stance, the ids of the shown arguments or disputes it answers (``addresses``)
    and, when it concedes, the ``named_reason``.

    >>> t = TurnOutput.model_validate({"dialogue": "Fine, you have me there.", "move": "concede", "addresses": ["d-0"]})
    >>> t.move, t.addresses
    (<Move.CONCEDE: 'CONCEDE'>, ['d-0'])
    """

    model_config = ConfigDict(extra="ignore")

    dialogue: TurnText = Field(min_length=1)
    move: Move  # required here, a Move

    @field_validator("move", mode="before")
    @classmethod
    def _upper(cls, v: object) -> object:
        return v.strip().upper().replace(" ", "_") if isinstance(v, str) else v


# ---------------------------------------------------------------------------
# Dung-graph crystallizer (dialogue engine): CrystallizationResult
# ---------------------------------------------------------------------------


class NewArg(LLMOutput):
    """A distilled position. ``id`` is a provisional handle that ``new_attacks`` may cite."""

    id: str = ""
    speaker_id: str
    claim: str = Field(min_length=1)
    premises: list[str] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    derived_from_turns: list[int] = Field(default_factory=list)


class ArgUpdate(LLMOutput):
    id: str
    claim: str | None = None
    assumptions: list[str] | None = None


class NewAttack(LLMOutput):
    from_arg_id: str
    to_arg_id: str
    type: AttackType = AttackType.rebut
    rationale: str = ""


class ConcessionNote(LLMOutput):
    """A concession the crystallizer saw: who conceded in which turn, what (the conceded
    argument's id in the Dung graph, the dispute's id in the DCG, and the claim in words), of which kind
    (full: withdrawn, partial: narrowed, scope: qualified) and the reason the turn named."""

    turn_index: int
    speaker_id: str
    kind: ConcessionKind
    conceded_claim: str = ""
    arg_id: str | None = None
    dispute_id: str | None = None
    reason: str | None = None


class CruxNote(LLMOutput):
    """A participant-proposed crux and whether the other side accepted its framing."""

    statement: str
    proposed_by: list[str] = Field(default_factory=list)
    acknowledged: bool = False
    assumptions: list[str] = Field(default_factory=list)


class CrystallizationResult(LLMOutput):
    """Mutations of the Dung graph: new and updated arguments, removed argument ids, new attacks,
    removed attack ids.

    ``concessions`` and ``crux`` let the crystallizer say what it saw; both are optional.
    """

    new_args: list[NewArg] = Field(default_factory=list)
    updated_args: list[ArgUpdate] = Field(default_factory=list)
    removed_arg_ids: list[str] = Field(default_factory=list)
    new_attacks: list[NewAttack] = Field(default_factory=list)
    removed_attack_ids: list[str] = Field(default_factory=list)
    concessions: list[ConcessionNote] = Field(default_factory=list)
    crux: CruxNote | None = None


class DiscoveryResult(LLMOutput):
    """Centralized discovery after the openings: attacks between the speakers' positions."""

    new_attacks: list[NewAttack] = Field(default_factory=list)


# ---------------------------------------------------------------------------
# DCG crystallizer
# ---------------------------------------------------------------------------


DisputeType = Literal["evidence", "values", "definition", "horizon", "premise", "claim"]
_DISPUTE_TYPES = get_args(DisputeType)


class NewDispute(LLMOutput):
    """A binary question on the premise under a disagreement (never the debate topic itself).
    ``id`` is a provisional handle that stances in the same reply cite; ``disagreement_type``
    is the crystallizer's own classification (evidence, values, definition, horizon, premise,
    claim)."""

    id: str
    question: str = Field(min_length=1)
    horizon: str | None = None
    resolution_criteria: list[str] = Field(default_factory=list)
    created_from_turns: list[int] = Field(default_factory=list)
    # One word from a closed list, so a server that enforces the schema cannot run on here
    # (Qwen 1.5B wrote a type of 700 tokens, "values or definition: ... or ...", to its cap).
    disagreement_type: DisputeType | None = None

    @field_validator("disagreement_type", mode="before")
    @classmethod
    def _first_known_type(cls, value: object) -> object:
        """A free-form answer (a server that does not enforce the schema) is read as the first
        known type it names, else no type.

        >>> NewDispute(id="n", question="Q?", disagreement_type="Values or definition: ...").disagreement_type
        'values'
        >>> NewDispute(id="n", question="Q?", disagreement_type="a mix").disagreement_type is None
        True
        """
        if not isinstance(value, str):
            return value
        words = re.findall(r"[a-z]+", value.lower())
        return next((w for w in words if w in _DISPUTE_TYPES), None)


class DisputeUpdate(LLMOutput):
    id: str
    question: str | None = None
    active: bool | None = None
    resolution_criteria: list[str] | None = None


class StanceUpsert(LLMOutput):
    """One speaker's side on one dispute; a second upsert for the same pair replaces it."""

    dispute_id: str
    speaker_id: str
    side: Side
    statement: str = Field(min_length=1)
    quote: str = ""  # a few of the speaker's own words from the turns, copied exactly
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    derived_from_turns: list[int] = Field(default_factory=list)

    @field_validator("side", mode="before")
    @classmethod
    def _upper(cls, v: object) -> object:
        return v.strip().upper() if isinstance(v, str) else v


class NewReason(LLMOutput):
    """A reason for or against one speaker's stance on a dispute (named by dispute + speaker)."""

    id: str = ""
    dispute_id: str
    speaker_id: str
    polarity: Literal["SUPPORT", "ATTACK"] = "SUPPORT"
    claim: str = Field(min_length=1)
    assumptions: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    derived_from_turns: list[int] = Field(default_factory=list)
    attacks: list[str] = Field(default_factory=list)


class DCGCrystallizationResult(LLMOutput):
    """Mutations of the DCG: new and updated disputes, upserted stances, new reasons, removed
    reason ids, notes."""

    new_disputes: list[NewDispute] = Field(default_factory=list)
    updated_disputes: list[DisputeUpdate] = Field(default_factory=list)
    upsert_stances: list[StanceUpsert] = Field(default_factory=list)
    new_reasons: list[NewReason] = Field(default_factory=list)
    removed_reason_ids: list[str] = Field(default_factory=list)
    notes: str = ""
    concessions: list[ConcessionNote] = Field(default_factory=list)
    crux: CruxNote | None = None

    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> DCGCrystallizationResult:
        """Sends a stance whose quote is not its persona's own words back once (:func:`check_sides`)."""
        check_sides(self, info.context)
        return self


class ReasonAttack(LLMOutput):
    from_reason_id: str
    to_reason_id: str


class DCGDiscoveryResult(LLMOutput):
    """Reason-layer attacks inside each dispute (Dung within a dispute)."""

    reason_attacks: list[ReasonAttack] = Field(default_factory=list)


# The stance fields in the order a schema-following model writes them: the quote first, so the
# side and the statement are read from the words chosen.
_STANCE_ORDER = ("dispute_id", "speaker_id", "quote", "side", "statement", "confidence", "derived_from_turns")


def crystallization_reply_for(said: Mapping[str, Sequence[str]]) -> type[DCGCrystallizationResult]:
    """The DCG crystallization reply for one cluster: it validates as
    :class:`DCGCrystallizationResult` does, and its JSON schema, which a server that enforces
    schemas makes the model write to, lets a stance name only a speaker of the cluster
    (``said``: persona id -> the sentences they said there) and quote one of that speaker's
    sentences, written before its side. Qwen2.5-Coder-1.5B, free to write any string, quoted its
    own paraphrase ("The Skeptic argues that ..."), and the grounded-sides guard dropped every
    side it gave. Free text is written at most :data:`WRITE_AT_MOST` long. With nobody to quote
    the reply is left as it is.

    >>> R = crystallization_reply_for({"a": ["Gold is money.", "Gold is money."], "b": []})
    >>> item = R.model_json_schema()["properties"]["upsert_stances"]["items"]["anyOf"][0]
    >>> item["properties"]["speaker_id"]["enum"], item["properties"]["quote"]["enum"], list(item["properties"])[:4]
    (['a'], ['Gold is money.'], ['dispute_id', 'speaker_id', 'quote', 'side'])
    >>> R.model_json_schema()["properties"]["new_disputes"]["items"]["properties"]["question"]["maxLength"]
    240
    >>> crystallization_reply_for({"a": []}) is DCGCrystallizationResult
    True
    """
    key = tuple((pid, tuple(dict.fromkeys(s))[-MAX_QUOTABLE:]) for pid, s in said.items() if s)
    return _crystallization_reply_for(key) if key else DCGCrystallizationResult


# The longest a free-text field of a crystallization may be written (characters): Qwen's
# crystallizations on the generated scenarios ran a question or criterion on for 1,900
# characters until the token cap cut the JSON, and none of them could be read.
WRITE_AT_MOST = {"question": 240, "resolution_criteria": 240, "horizon": 80, "statement": 300, "claim": 300, "notes": 300}
# The most items a list field of a crystallization may hold (a list of turn numbers ran on too).
LIST_AT_MOST = {"resolution_criteria": 3, "created_from_turns": 12, "derived_from_turns": 12, "assumptions": 3,
                "evidence": 3, "attacks": 6}


def _capped(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema``'s properties with :data:`WRITE_AT_MOST` as their ``maxLength`` (a list's items)
    and :data:`LIST_AT_MOST` as their ``maxItems``."""
    props = {}
    for name, prop in schema["properties"].items():
        if name in LIST_AT_MOST and prop.get("type") == "array":
            prop = {**prop, "maxItems": LIST_AT_MOST[name]}
        most = WRITE_AT_MOST.get(name)
        if most is not None and prop.get("type") == "array":
            prop = {**prop, "items": {**prop["items"], "maxLength": most}}
        elif most is not None and prop.get("type") == "string":
            prop = {**prop, "maxLength": most}
        props[name] = prop
    return {**schema, "properties": props}


@lru_cache(maxsize=64)
def _crystallization_reply_for(speakers: tuple[tuple[str, tuple[str, ...]], ...]) -> type[DCGCrystallizationResult]:
    def stances(schema: dict[str, Any]) -> None:
        base = StanceUpsert.model_json_schema()["properties"]
        items = []
        for pid, sentences in speakers:
            props = {**base, "side": {"type": "string", "enum": [x.value for x in Side]},
                     "speaker_id": {"type": "string", "enum": [pid]}, "quote": {"type": "string", "enum": list(sentences)}}
            items.append(_capped({"type": "object", "properties": {k: props[k] for k in _STANCE_ORDER if k in props},
                                  "required": ["dispute_id", "speaker_id", "quote", "side", "statement"]}))
        schema["properties"]["upsert_stances"]["items"] = {"anyOf": items}
        for field, model in (("new_disputes", NewDispute), ("new_reasons", NewReason)):
            one = model.model_json_schema()
            one.pop("description", None)
            schema["properties"][field]["items"] = _capped(one)
        schema["properties"].update(_capped({"properties": {"notes": schema["properties"]["notes"]}})["properties"])

    return shaped(DCGCrystallizationResult, stances)
