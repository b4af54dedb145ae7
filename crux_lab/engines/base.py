"""The engine interface shared by every debate engine.

An engine is an object with a ``run(ctx)`` async generator that yields typed events
(:data:`crux_lab.models.DebateEvent`) and fills ``ctx.result`` as it goes. The runner
(:mod:`crux_lab.runner`) numbers and records the events, and finalizes the result.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal, Protocol, TypeVar, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from crux_lab.llm.base import (
    Hints,
    LLMOutputError,
    LLMRequest,
    LLMResponse,
    TurnHint,
    allocation_for,
)
from crux_lab.llm.ledger import Ledger
from crux_lab.models.config import DebateConfig
from crux_lab.models.domain import DebateOutput, DialogueTurn, Move
from crux_lab.models.events import DebateEvent, EngineError
from crux_lab.models.result import DebateResult
from crux_lab.personas.models import Deck, Persona
from crux_lab.personas.retrieval import grounding_for


class EngineConfigError(ValueError):
    """A debate configuration the engine cannot run (bad persona count, unknown parameter...)."""


class EngineParams(BaseModel):
    """Base of each engine's own parameters; unknown names are refused."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class EngineContext:
    config: DebateConfig
    backend: Ledger
    personas: dict[str, Persona]
    run_id: str
    result: DebateResult
    deck: Deck | None = None
    params: Any = None
    cancelled: bool = False
    scratch: dict[str, Any] = field(default_factory=dict)

    @property
    def persona_ids(self) -> list[str]:
        return list(self.config.persona_ids)

    def request(
        self,
        purpose: str,
        system: str,
        user: str,
        *,
        output_schema: type[BaseModel] | None = None,
        hints: Hints | None = None,
        cache_system: bool = False,
        validation: dict[str, Any] | None = None,
    ) -> LLMRequest:
        """Build a request with the tier and temperature of the model allocation.
        ``validation`` is the reply's validation context (the engine's guards,
        :mod:`crux_lab.engines.guards`); it is not part of the request's text."""
        alloc = allocation_for(purpose, self.config.allocation)
        return LLMRequest(
            purpose=purpose,
            system=system,
            user=user,
            tier=alloc.tier,
            temperature=alloc.temperature,
            max_tokens=alloc.max_tokens,
            output_schema=output_schema,
            hints=hints or Hints(topic=self.config.topic),
            cache_system=cache_system,
            validation_context=validation,
        )

    async def call(self, request: LLMRequest) -> LLMResponse:
        return await self.backend.generate(request)

    async def call_or_warn(self, request: LLMRequest) -> tuple[LLMResponse | None, EngineError | None]:
        """Make a call whose reply the debate can do without: a reply that stays off-schema
        after the backend's one repair comes back as ``(None, warning)``, and the engine
        yields the warning and skips that step (the debate goes on, the log stays valid)."""
        try:
            return await self.backend.generate(request), None
        except LLMOutputError as exc:
            return None, EngineError(level="warning", purpose=request.purpose, error=f"skipped: {exc}")

    def grounding(self, persona_id: str, query: str, opponent_id: str | None = None, said: Sequence[str] = ()) -> str:
        """The persona's per-turn belief grounding for ``query`` (the claim under discussion):
        its most relevant beliefs and source excerpts, within the retrieval token budget; ""
        when the persona has no belief graph or nothing is relevant. ``said`` are the persona's
        own earlier turns: the beliefs they already make are left out. Add it to the persona's
        turn message."""
        persona = self.personas.get(persona_id)
        if persona is None or persona.beliefs is None or not query.strip():
            return ""

        # the opponent unnamed: a turn request names no other speaker (no transcript to continue)
        opponent = "the other side" if opponent_id in self.personas else None
        key = f"grounding|{persona_id}|{opponent}|{query}|" + "\x00".join(said)
        if key not in self.scratch:
            self.scratch[key] = grounding_for(persona, query, opponent=opponent, said=said)
        return str(self.scratch[key])


M = TypeVar("M", bound=BaseModel)


def shaped(reply: type[M], shape: Callable[[dict[str, Any]], None]) -> type[M]:
    """``reply`` under its own name, validating as it does, with ``shape`` applied to its JSON
    schema: what a server that enforces schemas makes the model write, narrowed to one call.

    >>> class Ask(BaseModel):
    ...     n: int
    >>> Narrow = shaped(Ask, lambda s: s["properties"]["n"].update(maximum=3))
    >>> Narrow.model_json_schema()["properties"]["n"]["maximum"], Narrow.__name__
    (3, 'Ask')
    >>> Narrow.model_validate({"n": 9}).n  # the schema guides the writing; validation is Ask's
    9
    """
    config = ConfigDict(**{**reply.model_config, "title": reply.__name__, "json_schema_extra": shape})
    return cast(type[M], type(reply.__name__, (reply,), {"model_config": config, "__module__": reply.__module__}))


P = TypeVar("P", bound=EngineParams)


def engine_params(ctx: EngineContext, model: type[P]) -> P:
    """The run's parameters as the engine's own model: the ones the runner validated, else
    ``config.params`` parsed now (an engine driven directly, e.g. by a test)."""
    return ctx.params if isinstance(ctx.params, model) else model.model_validate(ctx.config.params)


def turn_hints(turns: Sequence[DialogueTurn]) -> list[TurnHint]:
    """The turns so far, as hints: who spoke and the words (what the engine parsed from each
    reply stays with the engine: a reader learns it from the words)."""
    return [TurnHint(speaker_id=t.persona_id, text=t.dialogue, turn_index=t.turn_index) for t in turns]


def as_named(hints: Sequence[TurnHint], prompt: str, viewer: str, names: Mapping[str, str]) -> list[TurnHint]:
    """Turn hints with each speaker as ``prompt`` names it: the viewer keeps its id (its own
    system prompt names it), another speaker keeps its id when the prompt shows its name, else
    takes the label the prompt puts before its words ("Speaker A"), else none ("").

    >>> h = [TurnHint(speaker_id="bo", text="Gold is money."), TurnHint(speaker_id="al", text="No.")]
    >>> [t.speaker_id for t in as_named(h, "Speaker A: Gold is money.", "al", {"bo": "Bo Lee"})]
    ['Speaker A', 'al']
    """
    out = []
    for t in hints:
        if t.speaker_id == viewer or (names.get(t.speaker_id) or "\0") in prompt:
            out.append(t)
            continue
        at = prompt.find(t.text[:40])
        line = prompt[prompt.rfind("\n", 0, at) + 1 : at] if at >= 0 else ""
        label = re.findall(r"Speaker [A-Z]{1,2}\b", line)
        out.append(t.model_copy(update={"speaker_id": label[-1] if label else ""}))
    return out


SHOWN_MIN_WORDS = 8  # a turn the prompt shortened counts as shown when this many of its first words are


def holds_words(prompt: str, part: str) -> bool:
    """Whether ``prompt`` holds ``part`` ending on a word's end (not the start of a longer word).

    >>> holds_words("Absolute scarcity.", "A"), holds_words("A cap. Absolute.", "A")
    (False, True)
    """
    return re.search(r"(?<!\w)" + re.escape(part) + r"(?!\w)", prompt) is not None


def shown_part(text: str, prompt: str) -> str:
    """The part of ``text`` that ``prompt`` shows: all of it, else its longest opening run of
    words that the prompt holds (a history cut to its budget shortens turns), else "".

    >>> shown_part("Gold held its value for five thousand years, through every war.", "You: Gold held its value for five thousand years…")
    'Gold held its value for five thousand years'
    >>> shown_part("Gold held value.", "Bitcoin is new.")
    ''
    """
    text = text.strip()
    if holds_words(prompt, text):
        return text
    words = text.split()
    lo, hi = 0, len(words)  # the longest k with words[:k] in the prompt (prefixes nest)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if holds_words(prompt, " ".join(words[:mid]).rstrip(",;:.!?")):
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo]).rstrip(",;:.!?") if lo >= min(SHOWN_MIN_WORDS, len(words)) else ""


def shown_turns(turns: Sequence[DialogueTurn], prompt: str) -> list[DialogueTurn]:
    """The ``turns`` a prompt shows, each with only the words it shows (for the hints, which
    restate only what the prompt shows)."""
    out = []
    for t in turns:
        part = shown_part(t.dialogue, prompt)
        if part:
            out.append(t if part == t.dialogue.strip() else t.model_copy(update={"dialogue": part}))
    return out


def clip(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters, never cut inside a word: whole when it fits,
    else up to its last full sentence within the limit, else its last whole word, with "…".

    >>> clip("Gold held value. Bitcoin is new money.", 30)
    'Gold held value. …'
    >>> clip("Bitcoin supply is capped forever", 20)
    'Bitcoin supply is…'
    >>> clip("short", 20)
    'short'
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    sentence = max(head.rfind(". "), head.rfind("! "), head.rfind("? "))
    if sentence >= limit // 3:
        return head[: sentence + 1] + " …"
    word = head.rsplit(" ", 1)[0] if " " in head else head
    return word.rstrip(",;:") + "…"


# A panel or crux_rooms turn states its stance as its answer to the claim it addresses, "yes",
# "no" or "undecided": Qwen2.5-1.5B, asked for "pro" or "con", wrote "con" beside words that
# said yes (a builder whose brief holds that new flats slow rents, in 3 of 6 replies); asked for
# its answer, its stance and its words agreed in 3 of 3. "pro", "con" and "uncertain" are read too.
_STANCE_WORDS = {"yes": "pro", "no": "con", "undecided": "uncertain", "pro": "pro", "con": "con", "uncertain": "uncertain"}


def stance_of(value: object) -> str | None:
    """A reply's stance as the engines keep it (pro, con or uncertain); None when it states none.

    >>> stance_of(" Yes "), stance_of("no"), stance_of("undecided"), stance_of("con"), stance_of("maybe")
    ('pro', 'con', 'uncertain', 'con', None)
    """
    return _STANCE_WORDS.get(value.strip().lower()) if isinstance(value, str) else None

_MOVES = {m.value for m in Move}

StanceField = Literal["pro", "con", "uncertain"]


MIN_TURN_WORDS = 3


def says_something(text: str) -> str:
    """A persona turn's words: at least :data:`MIN_TURN_WORDS` words. A reply whose turn is
    one word ("none", a field name echoed from the schema) is off-schema, so it takes the
    repair path and, still short, is skipped with a warning instead of reaching the transcript.

    >>> says_something("Rents fell after the upzoning.")
    'Rents fell after the upzoning.'
    >>> says_something("none")
    Traceback (most recent call last):
    ...
    ValueError: a turn must say something, in at least 3 words; got 'none'
    """
    if len(text.split()) < MIN_TURN_WORDS:
        raise ValueError(f"a turn must say something, in at least {MIN_TURN_WORDS} words; got {text.strip()[:40]!r}")
    return text


# The words of a persona turn (the check is not part of the JSON schema a model is shown).
TurnText = Annotated[str, AfterValidator(says_something)]


STATED_FIRST = ("answers",)  # the turn fields a reply writes before its words


def _words_first(schema: dict[str, Any], cls: type[BaseModel]) -> None:
    """Order a turn reply's fields in the JSON schema a model is shown: the point it answers,
    then its own fields (its words first), then the other shared turn fields (its stance
    among them). A server that enforces the schema writes the fields in this order. A real model
    (Qwen2.5-Coder-1.5B) that had to write ``named_reason`` before its words put its argument
    there and left the words to a restated topic. Shown the point to answer, Qwen copied it as its
    turn; written first, in a few words of its own field, it is not copied into the words. Its
    stance written first, Qwen hedged: every panel opening on the dev housing scenario was
    "I can't determine whether ..." (stance "uncertain")."""
    props = schema.get("properties")
    if not isinstance(props, dict):
        return
    first = [k for k in STATED_FIRST if k in props]
    shared = [k for k in props if k in TurnReply.model_fields and k not in first]
    schema["properties"] = {k: props[k] for k in [*first, *(k for k in props if k not in shared and k not in first), *shared]}
    if isinstance(schema.get("required"), list):
        schema["required"] = [k for k in schema["properties"] if k in schema["required"]]


class TurnReply(BaseModel):
    """What every persona turn's reply states besides its words (the prompt asks for each
    field, see :data:`TURN_FIELDS_PROMPT`). Engines extend it with their own text field,
    which the schema shown to a model lists first.

    >>> class Speech(TurnReply):
    ...     words: str
    >>> list(Speech.model_json_schema()["properties"])
    ['answers', 'words', 'stance', 'move', 'addresses', 'named_reason']
    """

    model_config = ConfigDict(json_schema_extra=_words_first)

    stance: str | None = None
    answers: str | None = None  # the point the turn answers, in a few words (not its words)
    move: str | None = None
    addresses: list[str] = Field(default_factory=list)
    named_reason: str | None = None

    @model_validator(mode="after")
    def _guarded(self, info: ValidationInfo) -> TurnReply:
        """The turn guards an engine passed as the validation context
        (:class:`crux_lab.engines.guards.TurnGuard`): the first reply that repeats an earlier
        turn or contradicts the persona's declared position is sent back once."""
        guard = info.context.get("turn_guard") if isinstance(info.context, dict) else None
        if guard is not None:
            guard.on_validate(self)
        return self


TURN_STANCE_PROMPT = '"stance": your side, "pro", "con" or "uncertain", on the claim you address; '
# The stance as the persona's answer (panel and crux_rooms ask it so; :func:`stance_of` reads both).
ANSWER_STANCE_PROMPT = '"stance": your answer to the claim you address, "yes", "no" or "undecided"; '
TURN_FIELDS_PROMPT = TURN_STANCE_PROMPT + (
    '"answers": the claim you answer, in at most ten words (null when there is none); '
    '"move": one of CLAIM, CHALLENGE, CLARIFY, CONCEDE, REFRAME, PROPOSE_CRUX; '
    '"addresses": the ids (from the list above) of the claims your turn answers, [] if none; '
    '"named_reason": if you concede or change your mind, the specific argument or evidence '
    "that moved you, else null"
)


def turn_fields(parsed: BaseModel | None, known_ids: Collection[str] | None = None) -> dict[str, Any]:
    """The turn fields a reply states, checked and typed: ``move`` (a :class:`Move`),
    ``stance``, ``proposition_ids`` (the ``addresses`` the prompt showed; unknown ids dropped)
    and ``named_reason``. A field the reply left out, or filled with something unknown, is empty.

    >>> r = TurnReply(move="concede", stance="con", addresses=["c1", "c9"], named_reason=" rents fell ")
    >>> f = turn_fields(r, {"c1", "c2"})
    >>> f["move"].value, f["stance"], f["proposition_ids"], f["named_reason"]
    ('CONCEDE', 'con', ['c1'], 'rents fell')
    >>> turn_fields(None)
    {'proposition_ids': [], 'stance': None, 'move': None, 'named_reason': None}
    """
    move = getattr(parsed, "move", None)
    stance = getattr(parsed, "stance", None)
    reason = getattr(parsed, "named_reason", None)
    addresses = getattr(parsed, "addresses", None)
    move_s = move.value if isinstance(move, Move) else str(move).strip().upper() if isinstance(move, str) else None
    ids = [str(a) for a in addresses if a is not None] if isinstance(addresses, list) else []
    if known_ids is not None:
        ids = [a for a in ids if a in known_ids]
    return {
        "proposition_ids": list(dict.fromkeys(ids)),
        "stance": stance_of(stance),
        "move": Move(move_s) if move_s in _MOVES else None,
        "named_reason": reason.strip() if isinstance(reason, str) and reason.strip() and reason.strip().lower() not in ("null", "none") else None,
    }


def make_turn(parsed: BaseModel | None, known_ids: Collection[str] | None = None, **fields: Any) -> DialogueTurn:
    """A :class:`DialogueTurn` from a persona's reply: the fields the engine gives (id,
    turn_index, persona_id, dialogue, phase, ...) win; the reply's own fields
    (:func:`turn_fields`) fill the rest.

    >>> r = TurnReply(move="CLAIM", stance="pro", addresses=["c2"])
    >>> t = make_turn(r, id="t0", turn_index=0, persona_id="a", dialogue="Yes.", phase="opening", stance="con")
    >>> t.move.value, t.stance, t.proposition_ids
    ('CLAIM', 'con', ['c2'])
    """
    given = {k: v for k, v in fields.items() if v is not None}
    return DialogueTurn.model_validate(turn_fields(parsed, known_ids) | given)


class Engine(Protocol):
    """What every engine has. It may also set ``structure`` (a ClassVar): what it builds, known
    before its first event, for the live console: "graph" (IN/OUT/UNDEC), "dcg" (disputes,
    stances, reasons) or "rooms" (disagreements, crux rooms, cards); without it the console
    shows its turns, and its cruxes when it finishes."""

    name: ClassVar[str]
    description: ClassVar[str]
    params_model: ClassVar[type[EngineParams]]
    min_personas: ClassVar[int]
    max_personas: ClassVar[int]

    def run(self, ctx: EngineContext) -> AsyncGenerator[DebateEvent, None]: ...


def validate_params(engine: Engine, config: DebateConfig) -> EngineParams:
    """Parse ``config.params`` with the engine's own model; unknown names get a clear error."""
    try:
        return engine.params_model.model_validate(config.params)
    except ValidationError as exc:
        allowed = ", ".join(sorted(engine.params_model.model_fields)) or "(none)"
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise EngineConfigError(
            f"engine '{engine.name}' does not accept these parameters ({problems}). "
            f"Parameters it accepts: {allowed}."
        ) from None


def check_personas(engine: Engine, persona_ids: Sequence[str]) -> None:
    if len(set(persona_ids)) != len(persona_ids):
        dupes = sorted({p for p in persona_ids if list(persona_ids).count(p) > 1})
        raise EngineConfigError(f"duplicate persona(s): {', '.join(dupes)}; give each persona once.")
    n = len(persona_ids)
    if n < engine.min_personas or n > engine.max_personas:
        raise EngineConfigError(
            f"engine '{engine.name}' needs {engine.min_personas}–{engine.max_personas} personas; got {n}."
        )


def check_config(engine: Engine, config: DebateConfig, params: EngineParams) -> None:
    """Run the engine's optional ``check_config(config, params)`` hook, for checks that need the
    parsed parameters (a persona maximum set in params, ...). The runner calls it when a run is
    built, so a bad configuration fails before any LLM call; engines without the hook pass."""
    hook = getattr(engine, "check_config", None)
    if callable(hook):
        hook(config, params)


def debate_output(result: DebateResult) -> DebateOutput:
    """The common output of a finished result, for the ``debate_complete`` event."""
    return DebateOutput(
        cruxes=result.cruxes,
        fault_lines=result.fault_lines,
        flip_conditions=result.flip_conditions,
        resolution_paths=result.resolution_paths,
        evidence_ledger=result.evidence_ledger,
        common_ground=result.common_ground,
        camps=result.camps,
        regime=result.regime,
        regime_description=result.regime_description,
        accepted_claims=result.accepted_claims,
        poll=result.poll,
    )
