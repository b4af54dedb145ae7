"""The backend contract: engines build an LLMRequest and await an LLMResponse.

Engines never know which backend is behind them (DESIGN.md). Real backends ignore
``hints``; the persona simulator reads them.

**One channel.** An engine learns only from the reply its own prompt asked for: the fields of
its output schema, or the text. ``hints`` restate, in structured form, only what the prompt
text already shows: the topic, who speaks, earlier turns as the prompt names and words them,
the claims it lists. A turn's move, stance or named reason, parsed from the speaker's reply,
travel only as the turn's words: a reader learns them from the text, as a model would.
:func:`check_hints` holds every text value of a hint to the request's messages; the simulated
backend runs it on every request. Two fields are labels, not content: ``phase`` and
``steering`` name, from closed sets, which instruction the prompt gives (as ``purpose`` does). No ground truth (a
deck's proposition ids, a persona's planted stances) ever travels in a hint, and no backend
returns anything beside its reply.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from crux_lab.llm.purposes import Phase, Purpose, SteeringLabel
from crux_lab.models.accounting import Usage
from crux_lab.models.domain import Tier
from crux_lab.registry import import_modules


class TurnHint(BaseModel):
    """A turn so far, as the prompt shows it: who spoke and the words (``turn_index``: its place
    in the debate). Nothing the engine parsed from the speaker's reply travels here: a reader
    learns a turn's move and stance from its words."""

    model_config = ConfigDict(extra="forbid")

    speaker_id: str
    text: str
    turn_index: int | None = None


class Hints(BaseModel):
    """The prompt's context in structured form, for the simulator. Real backends ignore it.

    ``focus`` is the text of the claim the prompt puts in front of the speaker (as shown in
    the prompt); ``extra`` holds other prompt content the engine built (claims, arguments,
    disputes), never ground truth. ``phase`` and ``steering`` are labels from closed sets
    naming which instruction, or which moderator's note, the prompt gives.
    """

    model_config = ConfigDict(extra="forbid")

    speaker_id: str | None = None
    topic: str = ""
    aspect: str | None = None
    phase: Phase | None = None
    steering: SteeringLabel | None = None
    turns: list[TurnHint] = Field(default_factory=list)
    focus: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


def without_docstrings(node: Any) -> Any:
    """A JSON schema without the descriptions pydantic takes from class docstrings (on model
    and enum nodes): they are written for developers, and a model shown them may echo them.
    Field descriptions, written for the model, stay.

    >>> without_docstrings({"description": "Dev notes.", "properties": {"a": {"description": "The answer."}}})
    {'properties': {'a': {'description': 'The answer.'}}}
    """
    if isinstance(node, list):
        return [without_docstrings(v) for v in node]
    if not isinstance(node, dict):
        return node
    is_class = "properties" in node or "enum" in node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if is_class and key == "description":
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):  # maps of names, not schemas
            out[key] = {name: without_docstrings(v) for name, v in value.items()}
        else:
            out[key] = without_docstrings(value)
    return out


@lru_cache(maxsize=256)
def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    # Building a JSON schema costs milliseconds; every call hashes its request, so cache it.
    # Callers must not mutate the returned dict.
    schema: dict[str, Any] = without_docstrings(model.model_json_schema())
    return schema


class LLMRequest(BaseModel):
    """One call an engine wants made."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    purpose: str
    system: str
    user: str
    tier: Tier = Tier.strong
    temperature: float = 0.7
    max_tokens: int = 1024
    output_schema: type[BaseModel] | None = Field(default=None, exclude=True)
    hints: Hints = Field(default_factory=Hints)
    # Mark the system block for prompt caching (the persona system prompt).
    cache_system: bool = False
    # Passed to the schema's validation (pydantic ``context``): an engine's guards
    # (crux_lab.engines.guards) that send a reply back once for the backend's one repair.
    # Not part of the request's text or hash.
    validation_context: Any = Field(default=None, exclude=True)

    def schema_json(self) -> dict[str, Any] | None:  # type: ignore[override]  # pydantic v1 name, unused
        return _schema_of(self.output_schema) if self.output_schema else None

    def request_hash(self, model: str) -> str:
        """Stable hash of what determines the answer (hints excluded: real backends ignore them).

        >>> r = LLMRequest(purpose="take", system="s", user="u")
        >>> r.request_hash("m") == LLMRequest(purpose="take", system="s", user="u").request_hash("m")
        True
        >>> r.request_hash("m") == r.request_hash("other-model")
        False
        """
        blob = json.dumps(self.hash_payload(model), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()

    def hash_payload(self, model: str) -> dict[str, Any]:
        """What :meth:`request_hash` hashes (stored in cassettes so a miss can be diagnosed): a
        persona's speech says so, since a local server samples it differently (``own_words``).

        >>> "own_words" in LLMRequest(purpose="opening", system="s", user="u").hash_payload("m")
        True
        >>> "own_words" in LLMRequest(purpose="poll", system="s", user="u").hash_payload("m")
        False
        """
        return {
            "purpose": self.purpose,
            "model": model,
            "system": self.system,
            "messages": [{"role": "user", "content": self.user}],
            "schema": self.schema_json(),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        } | ({"own_words": True} if allocation_for(self.purpose).own_words else {})


class HintNotShown(ValueError):
    """A request's hints hold a value its messages do not show (an engine bug, not bad input)."""


def _flat(text: str) -> str:
    """Lower-cased words of a text, one space apart: punctuation, dashes and underscores read
    as space, so an id (``michael-saylor``, ``crux_seeking``) is found where the prompt writes it
    as words, and a value is found only as whole words (``pro`` is not in "prompt").

    >>> _flat("Crux-seeking  phase: Michael_Saylor!")
    'crux seeking phase michael saylor'
    """
    return " ".join(re.sub(r"[\W_]+", " ", text.lower()).split())


def shows(text: str, value: str) -> bool:
    """Whether ``text`` shows ``value`` as the hint check reads it: whole words, lower-cased,
    punctuation read as space (a plural is another word).

    >>> shows("Do three-weekly collections work?", "three-weekly collection")
    False
    >>> shows("The three-weekly collection, again.", "three-weekly collection")
    True
    """
    return f" {_flat(value)} " in f" {_flat(text)} "


# What the check leaves out: labels from closed sets (``phase``, ``steering``, like the request's
# ``purpose``) name which instruction the prompt gives, and the prompt states the instruction,
# not the label; numbers, since a digit is in most prompts by chance.


def _hint_values(prefix: str, value: Any) -> list[tuple[str, str]]:
    """(field path, text) for every text leaf of a hint; labels (enum members), numbers,
    booleans, None and empty strings are skipped."""
    if value is None or isinstance(value, (bool, int, float, Enum)) or value == "":
        return []
    if isinstance(value, BaseModel):
        value = value.model_dump(exclude_defaults=True)
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _hint_values(f"{prefix}.{k}", v)]
    if isinstance(value, (list, tuple, set)):
        return [pair for i, v in enumerate(value) for pair in _hint_values(f"{prefix}[{i}]", v)]
    return [(prefix, str(value))]


def unshown_hints(request: LLMRequest, aliases: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The hint values of ``request`` that its messages (system and user text) do not show, as
    (field path, value). Values are found as whole words, lower-cased, punctuation read as space;
    ``aliases`` maps an id to the name a prompt shows for it (a persona id to its name).

    >>> r = LLMRequest(purpose="take", system="You are Michael Saylor.", user="Topic: gold?",
    ...                hints=Hints(speaker_id="p1", topic="Gold?", focus="Bitcoin is scarce."))
    >>> unshown_hints(r, {"p1": "Michael Saylor"})
    [('focus', 'Bitcoin is scarce.')]
    >>> unshown_hints(r)
    [('speaker_id', 'p1'), ('focus', 'Bitcoin is scarce.')]
    """
    shown = f" {_flat(request.system)} {_flat(request.user)} "
    names = aliases or {}
    out = []
    for name in type(request.hints).model_fields:
        for path, text in _hint_values(name, getattr(request.hints, name)):
            forms = [text] + ([names[text]] if text in names else [])
            if not any(f" {_flat(f)} " in shown for f in forms):
                out.append((path, text))
    return out


def check_hints(request: LLMRequest, aliases: Mapping[str, str] | None = None) -> None:
    """Raise :class:`HintNotShown` when a hint of ``request`` holds what its messages do not
    show. The simulated backend runs this on every request it answers, so every test and
    simulated run enforces the one-channel rule for hints.

    >>> check_hints(LLMRequest(purpose="take", system="s", user="u", hints=Hints(focus="Gold is money.")))
    Traceback (most recent call last):
    ...
    crux_lab.llm.base.HintNotShown: request 'take': hint focus = 'Gold is money.' is not in the request's messages; hints may restate only what the prompt shows: show it in the prompt or drop it from the hint
    """
    missing = unshown_hints(request, aliases)
    if missing:
        path, text = missing[0]
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        value = text if len(text) <= 80 else text[:77] + "..."
        raise HintNotShown(
            f"request '{request.purpose}': hint {path} = {value!r} is not in the request's messages{more}; "
            f"hints may restate only what the prompt shows: show it in the prompt or drop it from the hint"
        )


class LLMResponse(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    text: str
    parsed: BaseModel | None = Field(default=None, exclude=True)
    model: str
    backend: str
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    cost_usd: float = 0.0
    retries: int = 0
    repaired: bool = False


class LLMError(RuntimeError):
    """Base error of the LLM layer.

    ``usage`` and ``retries`` carry what a failed call still consumed, so the ledger can
    bill a call that ended in an error.
    """

    usage: Usage | None = None
    retries: int = 0


class LLMOutputError(LLMError):
    """The model's output did not match the schema even after one repair attempt."""

    def __init__(
        self,
        purpose: str,
        detail: str,
        *,
        usage: Usage | None = None,
        retries: int = 0,
        after_repair: bool = True,
    ) -> None:
        when = " after one repair" if after_repair else ""
        super().__init__(f"LLM output for purpose '{purpose}' is invalid{when}: {detail}")
        self.purpose = purpose
        self.detail = detail
        self.usage = usage
        self.retries = retries


class LLMCallFailed(LLMError):
    """The API call failed for good: retries exhausted, timeout, or a non-retryable status."""

    def __init__(
        self,
        purpose: str,
        detail: str,
        *,
        status: int | None = None,
        retries: int = 0,
        usage: Usage | None = None,
    ) -> None:
        where = f" (HTTP {status})" if status is not None else ""
        super().__init__(
            f"LLM call for purpose '{purpose}' failed{where} after {retries} retries: {detail}"
        )
        self.purpose = purpose
        self.detail = detail
        self.status = status
        self.retries = retries
        self.usage = usage


class CassetteMiss(LLMError):
    """A replay cassette holds no recorded answer for this request."""

    def __init__(self, purpose: str, cassette: str, request_hash: str) -> None:
        super().__init__(
            f"replay cassette {cassette} has no recorded call for purpose '{purpose}' "
            f"(request hash {request_hash[:12]}). Record it first: run with the real backend "
            f"and the cassette in record mode, or use --backend simulated."
        )
        self.purpose = purpose
        self.cassette = cassette
        self.request_hash = request_hash


class BackendUnavailable(LLMError):
    """The backend cannot be used as configured (e.g. no API key)."""


@runtime_checkable
class Backend(Protocol):
    """What every backend provides."""

    name: str

    def model_for(self, tier: Tier) -> str: ...

    async def generate(self, request: LLMRequest) -> LLMResponse: ...


@dataclass(frozen=True)
class Allocation:
    tier: Tier
    temperature: float
    max_tokens: int
    # The reply is what a persona says, in its own words: a server that can penalise long
    # verbatim repeats of the prompt is asked to (llama.cpp's DRY sampler). A small model
    # otherwise copies the claim it answers, or its own earlier point, into its turn.
    own_words: bool = False


# Model allocation per purpose: the fast tier for reading, checking and summarising, the strong
# tier for what a persona says and for cards and crystallization. DebateConfig.allocation
# overrides it. Here only the shared purposes (crux_lab.llm.purposes) that have their own; an
# engine's purposes are added by its package, where it declares them (declare_purpose).
ALLOCATION: dict[str, Allocation] = {
    # a persona's opening statement (panel and dialogue)
    Purpose.opening: Allocation(Tier.strong, 0.85, 400, own_words=True),
    # the poll: a persona answers one question alone (short, steady replies)
    Purpose.poll: Allocation(Tier.strong, 0.2, 200),
    Purpose.pivot: Allocation(Tier.strong, 0.2, 160),
    # personas
    Purpose.extract_beliefs: Allocation(Tier.fast, 0.2, 800),
}

DEFAULT_ALLOCATION = Allocation(Tier.strong, 0.7, 800)

# Purposes an engine declared in its own module (:func:`declare_purpose`): name -> the module.
DECLARED: dict[str, str] = {}

# The entry-point group of the engines, whose modules declare their purposes when imported.
ENGINE_GROUP = "crux_lab.engines"


def own_engines_declared() -> None:
    """Import crux_lab's own engine modules (through their entry points: this layer never
    imports an engine), so that every purpose they declare is declared before another
    module's declaration or simulator answer is checked against it."""
    import_modules(ENGINE_GROUP, own_only=True)


def declare_purpose(
    name: str, tier: Tier, *, module: str, temperature: float = 0.7, max_tokens: int = 800,
    own_words: bool = False,
) -> str:
    """Declare a purpose an engine's requests name, with its tier, temperature and token cap
    (and ``own_words`` when its reply is what a persona says: :class:`Allocation`),
    from the engine's own module (``module``: its ``__name__``; a plug-in's included):
    :func:`allocation_for` then allocates it, with no edit to crux_lab. Returns ``name``, for
    the engine's requests. crux_lab's own engines declare theirs the same way, each in its
    package (``crux_lab/engines/<family>/purposes.py``).

    A shared purpose (:class:`~crux_lab.llm.purposes.Purpose`), or one another module declared,
    is refused with a ``ValueError`` naming it; declaring the same purpose again from the same
    module (a re-import) is allowed. A module outside crux_lab declares after crux_lab's own
    engines have declared theirs, so a plug-in cannot take one of their names.

    >>> declare_purpose("doc_example_purpose", Tier.fast, max_tokens=300, module="doc")
    'doc_example_purpose'
    >>> allocation_for("doc_example_purpose").tier
    <Tier.fast: 'fast'>
    >>> declare_purpose("card", Tier.fast, module="doc")
    Traceback (most recent call last):
    ...
    ValueError: the purpose 'card' is crux_lab's own (declared by crux_lab.engines.crux_room.purposes); declare another name
    """
    if name in Purpose.__members__.values():
        raise ValueError(f"the purpose {name!r} is crux_lab's own (crux_lab.llm.purposes); declare another name")
    if not module.startswith("crux_lab."):
        own_engines_declared()
    first = DECLARED.get(name)
    if first is not None and first != module:
        owner = f"crux_lab's own (declared by {first})" if first.startswith("crux_lab.") else f"already declared by {first}"
        raise ValueError(f"the purpose {name!r} is {owner}; declare another name")
    DECLARED[name] = module
    ALLOCATION[name] = Allocation(tier, temperature, max_tokens, own_words)
    return name


def allocation_for(purpose: str, overrides: dict[str, dict[str, Any]] | None = None) -> Allocation:
    """Tier, temperature and max tokens for a purpose, with per-run overrides.

    >>> allocation_for("poll").temperature
    0.2
    >>> allocation_for("poll", {"poll": {"tier": "fast"}}).tier
    <Tier.fast: 'fast'>
    """
    base = ALLOCATION.get(purpose, DEFAULT_ALLOCATION)
    if overrides and purpose in overrides:
        o = overrides[purpose]
        return Allocation(
            Tier(o.get("tier", base.tier)),
            float(o.get("temperature", base.temperature)),
            int(o.get("max_tokens", base.max_tokens)),
            base.own_words,
        )
    return base
