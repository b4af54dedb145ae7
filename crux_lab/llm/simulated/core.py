"""The persona simulator: a deterministic, seeded backend, a model like any other.

It reads the request and answers it, the way a real model would, with two kinds of roles:

- **speaker roles** (a persona's turn) act from that persona's ground truth, ``stances.json``:
  a stance on every proposition of its deck, with confidence, machine-checkable flip
  conditions and a disagreement type. That is the persona's mind, as a system prompt is a
  real model's;
- **extractor roles** (decompose, detection, crystallizer, validation, card, summary, exit
  check, sycophancy check) know nothing but what the request shows: they *read* the turn
  texts, recognising which of the deck's beliefs a sentence states by word overlap
  (:meth:`SimContext.recognize`), classify types themselves and answer in their own words
  (:func:`paraphrase`).

The request's ``hints`` restate only what its prompt shows (who speaks, earlier turns' text
and the fields the engine parsed from earlier replies); the simulator recovers which
proposition a turn is about by reading its text (:class:`ReadTurn`). Nothing travels back
beside the reply. Each purpose has one handler, registered with :func:`handler`: the shared
purposes' (:mod:`crux_lab.llm.purposes`) in sibling modules (``handlers_*.py``, with the
speaker every engine's speaking purposes use), every engine's beside the engine
(``crux_lab/engines/<family>/sim.py``, a plug-in's in its own module). Before it answers a
purpose it has no handler for, the simulator imports the registered engines (their entry
points); a purpose nobody answers gets a named refusal. Nothing here knows which engine is
calling.

Failure knobs (probabilities, 0 by default) reproduce what real LLMs do:

- ``sycophancy``: a persona concedes without naming a reason;
- ``missed_attack``: an extractor leaves out an attack edge between contradictory claims;
- ``vague_crux``: crux statements and cards come out generic ("they see it differently");
- ``drift``: a persona states the opposite of its ground-truth stance;
- ``misread``: an extractor recognises the wrong claim in a turn (or none), or misclassifies
  a disagreement's type.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from crux_lab.llm import base
from crux_lab.llm.base import Hints, LLMOutputError, LLMRequest, LLMResponse, TurnHint, check_hints
from crux_lab.llm.pricing import cost_usd, default_model
from crux_lab.llm.purposes import Purpose
from crux_lab.llm.simulated.options import SimulatorKnobs
from crux_lab.models.accounting import Usage
from crux_lab.models.domain import DisagreementType, Tier
from crux_lab.paraphrase import _NAMES as _NAMES  # the handlers keep these names capitalised too
from crux_lab.personas.models import Persona, Proposition, PropositionStance, StanceValue

# The reading the simulator shares with the fake-consensus audit; the handlers import these
# names from here.
from crux_lab.personas.reading import CONDITION as CONDITION
from crux_lab.personas.reading import VAGUE_MARKERS as VAGUE_MARKERS
from crux_lab.personas.reading import Reader, ReadTurn, read_stance, split_sentences, words
from crux_lab.personas.reading import fired_trigger as fired_trigger
from crux_lab.registry import import_modules
from crux_lab.tokens import count_tokens

HandlerResult = dict[str, Any] | str
Handler = Callable[["SimContext", LLMRequest], HandlerResult]

HANDLERS: dict[str, Handler] = {}


def handler(*purposes: str) -> Callable[[Handler], Handler]:
    """Register a function as the simulator's answer to one or more purposes.

    The simulator's own handler modules answer the shared purposes
    (:class:`~crux_lab.llm.purposes.Purpose`); an engine answers the purposes its package
    declared (:func:`crux_lab.llm.base.declare_purpose`), from a module of that package:
    crux_lab's own engines beside each engine (``crux_lab/engines/<family>/sim.py``), a
    plug-in in its own module. Outside this package, a shared purpose, a purpose another
    package declared, or one another function already answers, is refused with a
    ``ValueError`` naming it; a module outside crux_lab is checked after crux_lab's own engines
    have declared and answered theirs.
    """

    def register(fn: Handler) -> Handler:
        own = fn.__module__.startswith(f"{__package__}.")
        if not own and not fn.__module__.startswith("crux_lab."):
            base.own_engines_declared()
        for p in purposes:
            if not own:
                taken = HANDLERS.get(p)
                declared = base.DECLARED.get(p)
                if p in Purpose.__members__.values():
                    raise ValueError(f"the simulator answers the purpose {str(p)!r} itself; {fn.__module__} may answer only purposes its package declared")
                if declared is not None and _package(declared) != _package(fn.__module__):
                    raise ValueError(f"the purpose {str(p)!r} is declared by {declared}; {fn.__module__} may answer only purposes its package declared")
                if taken is not None and (taken.__module__, taken.__qualname__) != (fn.__module__, fn.__qualname__):
                    raise ValueError(f"the purpose {str(p)!r} is already answered by {taken.__module__}.{taken.__qualname__}")
            HANDLERS[p] = fn
        return fn

    return register


def _package(module: str) -> str:
    """The package a module belongs to (a top-level module is its own)."""
    return module.rpartition(".")[0] or module


OPPOSITE: dict[str, StanceValue] = {"pro": "con", "con": "pro", "uncertain": "uncertain"}


def restates_in_words(text: str, topic: str) -> bool:
    """True when a text says the topic itself rather than something under it (most of the
    topic's content words, and few others): the decomposer's, the writer's and the
    extractor's check, by words.

    >>> restates_in_words("Is gold a better store of value?", "Gold: a better store of value?")
    True
    >>> restates_in_words("Gold has no yield.", "Gold: a better store of value?")
    False
    """
    a, b = words(text), words(topic)
    return bool(a and b) and len(a & b) / len(a | b) >= 0.6


_REPLY_LEAD = re.compile(r"^\s*(i disagree|no|wrong)\s*:\s*", re.I)


@dataclass
class SimContext(Reader):
    """What a handler may use: seeded randomness, knobs, ground truth, the hints and the
    request's turns as read (:class:`ReadTurn`)."""

    rng: random.Random
    knobs: SimulatorKnobs
    personas: Mapping[str, Persona]
    propositions: Mapping[str, Proposition]
    hints: Hints
    turns: list[ReadTurn] = field(default_factory=list)
    seed: int = 0
    # The problem a guard found with the first answer (the backend's one repair), else "".
    repair: str = ""
    # The request's messages (system and user text), as a model reads them, and its user text.
    text: str = ""
    user: str = ""

    def cast(self) -> list[str]:
        """The personas the request's messages name (by name or id), else the whole cast."""
        low = self.text.lower()
        named = [pid for pid, p in self.personas.items() if p.name.lower() in low or pid in low]
        return named or list(self.personas)

    # -- randomness -------------------------------------------------------
    def chance(self, p: float) -> bool:
        """True with probability ``p`` (always draws, so the stream stays aligned)."""
        return self.rng.random() < p

    def pick(self, items: Sequence[Any]) -> Any:
        return items[self.rng.randrange(len(items))] if items else None

    def stable_chance(self, p: float, *key: str) -> bool:
        """True with probability ``p``, the same every time for the same ``key`` (a reader who
        misreads a sentence misreads it the same way each time it reads it)."""
        if p <= 0.0:
            return False
        digest = hashlib.sha256("|".join([str(self.seed), *key]).encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < p

    # -- ground truth (speaker roles) -------------------------------------
    def persona(self, persona_id: str | None = None) -> Persona:
        pid = persona_id or self.hints.speaker_id
        if pid is None or pid not in self.personas:
            known = ", ".join(sorted(self.personas))
            raise LLMOutputError("simulator", f"unknown speaker {pid!r}; known: {known}")
        return self.personas[pid]

    def stances_in(self, turn: ReadTurn) -> dict[str, StanceValue]:
        """The stance a turn's text takes on each proposition it states, read from the sentence
        that states each. "I disagree: X" disagrees with the previous speaker and asserts X, so
        the lead-in is not read as a negation of X. A concession's main claim takes the stance
        read with the turn (where its words say the speaker now stands)."""
        out: dict[str, StanceValue] = {}
        sentences = split_sentences(turn.text) or [turn.text]
        for i, pid in enumerate(turn.proposition_ids):
            if pid not in self.propositions:
                continue
            if i == 0 and turn.move == "CONCEDE" and turn.stance in ("pro", "con", "uncertain"):
                out[pid] = turn.stance  # type: ignore[assignment]
                continue
            best = max(sentences, key=lambda s: self.relevance(self.propositions[pid], s))
            out[pid] = read_stance(_REPLY_LEAD.sub("", best)) or "pro"
        return out

    def heard(self, me: str) -> dict[str, StanceValue]:
        """What the others were heard to hold in the request's turns: proposition id -> the
        stance of the latest turn by someone else that states it, on every proposition a turn
        states (read from the wording of the sentence that states it)."""
        out: dict[str, StanceValue] = {}
        for turn in self.turns:
            if turn.speaker_id != me:
                out.update(self.stances_in(turn))
        return out

    def contested(self, me: str) -> list[Proposition]:
        """Propositions where ``me`` holds the opposite (pro vs con) of what another speaker was
        heard to say. A speaker knows its own mind and what was said, not the others' minds."""
        heard = self.heard(me)
        out = []
        for p in self.deck_propositions():
            if p.id in heard and {heard[p.id], self.current_stance(me, p.id)} == {"pro", "con"}:
                out.append(p)
        return out

    # -- reading (extractor roles) ---------------------------------------
    def misreads(self, *key: str) -> bool:
        """True when this reader misreads what ``key`` names: with probability ``misread``,
        the same every time for the same key."""
        return self.stable_chance(self.knobs.misread, *key)

    def classify(self, text: str) -> DisagreementType:
        """The extractor's own reading of what kind of disagreement a question is (the
        reader's classification from the wording, misread with probability ``misread``)."""
        kind = classify_question(text)
        if self.stable_chance(self.knobs.misread, "classify", text):
            options = [t for t in DisagreementType if t is not kind]
            return options[int(hashlib.sha256(text.encode()).hexdigest(), 16) % len(options)]
        return kind

    def paraphrase(self, proposition: Proposition, form: str = "question", stance: str | None = None) -> str:
        """What an extractor writes for ``proposition``: the sentence of the request's turns (else
        of its user message) that states it best, as written, preferring one with ``stance`` and
        one that does not restate the topic (an extractor is asked for what lies under the
        topic, not the topic). The simulator knows which belief a sentence states; the text it
        prints is what was said, never the deck's wording. ``form`` is kept for callers and not
        used."""
        shown = [x for t in self.turns for x in split_sentences(t.text)] or split_sentences(self.user)
        if not shown:
            return ""
        best = max(
            enumerate(shown),
            key=lambda ix: (
                stance is None or read_stance(ix[1]) == stance,
                not ix[1].lower().startswith("what would change my mind"),  # a condition, not the claim
                not restates_in_words(ix[1], self.hints.topic),
                self.relevance(proposition, ix[1]),
                -ix[0],
            ),
        )
        return without_lead_in(best[1])

    def focus(self, persona_ids: Sequence[str] | None = None) -> Proposition | None:
        """The proposition a persona most likely talks about now.

        The claim the prompt puts in front of the speaker (``hints.focus``, read) wins; then what
        the last opponent turn was about; then the most relevant contested proposition for the
        aspect/topic not yet worn out.
        """
        if self.hints.focus:
            prop = self.recognize(self.hints.focus)
            if prop is not None:
                return prop
        me = self.hints.speaker_id
        for turn in reversed(self.turns[-4:]):
            if turn.speaker_id != me and turn.proposition_ids:
                pid = turn.proposition_ids[0]
                if pid in self.propositions:
                    return self.propositions[pid]
        ids = list(persona_ids or self.cast())
        context = " ".join(x for x in [self.hints.aspect or "", self.hints.topic] if x)
        ranked = self.rank_propositions(context, ids)
        if not ranked:
            return None
        used: dict[str, int] = {}
        for turn in self.turns:
            for pid in turn.proposition_ids:
                used[pid] = used.get(pid, 0) + 1
        contested_ids = {p.id for p in self.contested(me)} if me is not None else set()
        top = ranked[: max(3, len(ranked) // 2)]
        return min(top, key=lambda p: (used.get(p.id, 0), p.id not in contested_ids, ranked.index(p)))

    # -- voice ------------------------------------------------------------
    def belief_phrase(self, persona: Persona, truth: PropositionStance | None) -> str:
        if persona.beliefs is None or truth is None:
            return ""
        nodes = {n.id: n for n in persona.beliefs.nodes}
        # Skip the node that merely restates the stance's reason: it would be said twice.
        reason = truth.reason.strip().rstrip(".").lower()
        linked = [
            nodes[i]
            for i in truth.belief_node_ids
            if i in nodes and nodes[i].concept.strip().rstrip(".").lower() != reason
        ]
        node = self.pick(linked) if linked else None
        return node.concept if node is not None else ""

    def voice_opener(self, persona: Persona) -> str:
        vocab = persona.voice.vocabulary
        return str(self.pick(vocab)) if vocab and self.chance(0.5) else ""

    def utter(
        self,
        persona: Persona,
        proposition: Proposition | None,
        stance: StanceValue | None,
        move: str,
        *,
        sentences: int = 2,
        against: ReadTurn | None = None,
        support: str | None = None,
    ) -> str:
        """Render a short utterance in the persona's voice from its ground truth.

        ``support`` replaces the stance's stock reason (callers vary it between turns).
        """
        if proposition is None:
            return f"{persona.name} restates a general view on the topic without a specific claim."
        truth = persona.stance_on(proposition.id)
        reason = support or (truth.reason if truth else "I have not formed a view on this.")
        belief = self.belief_phrase(persona, truth)
        claim = {
            "pro": f"{proposition.text}",
            "con": deny(proposition.text),
            "uncertain": f"I am not sure that {lower_first(proposition.text.rstrip('.'))}.",
        }[stance or "uncertain"]
        parts: list[str] = []
        opener = self.voice_opener(persona)
        if move == "CONCEDE":  # the grant, then where the speaker now stands, then why
            parts.append(f"I'll grant part of that on {short(proposition.question)}")
            parts.append(claim)
            if truth:
                parts.append(reason)
        elif move == "PROPOSE_CRUX":
            parts.append(f"I think the core disagreement is {lower_first(proposition.question.rstrip('?'))}?")
            parts.append(f"My answer: {claim}")
        elif move == "CHALLENGE" and against is not None:
            parts.append(f"I disagree: {claim}")
            parts.append(reason)
        elif move == "CLARIFY":
            parts.append(f"To be precise: {claim}")
            parts.append(reason)
        elif move == "REFRAME":
            parts.append(f"The real question is {lower_first(proposition.question.rstrip('?'))}?")
            parts.append(claim)
        else:
            parts.append(claim)
            parts.append(reason)
        if belief and sentences > 2:
            parts.append(f"It rests on {lower_first(belief.rstrip('.'))}.")
        if sentences > 3 and truth and truth.flip_conditions:
            parts.append(f"What would change my mind: {lower_first(truth.flip_conditions[0].description.rstrip('.'))}.")
        text = " ".join(p.strip().rstrip(".") + "." for p in parts[: max(2, sentences)] if p.strip())
        if opener:
            text = f"{opener.rstrip('.').capitalize()}. {text}"
        return text.replace("?.", "?")


# What a speaker puts before a claim ("Beyond that, X."): a reader quoting the claim leaves it out.
_LEAD_IN = re.compile(r"^(beyond that,|to be precise:|to be precise about [^:]*:|i disagree:|my answer:|i also hold this:)\s*", re.I)


def without_lead_in(sentence: str) -> str:
    """A sentence as a reader quotes its claim: without the speaker's lead-in.

    >>> without_lead_in("Beyond that, gold is money."), without_lead_in("To be precise: Gold is money.")
    ('Gold is money.', 'Gold is money.')
    """
    out = _LEAD_IN.sub("", sentence.strip(), count=1)
    return out[:1].upper() + out[1:] if out != sentence.strip() else out


_ARTICLES = frozenset({"A", "An", "The"})


def lower_first(text: str) -> str:
    """The text as the middle of a sentence: its first letter lower-cased, unless it opens with
    a name or an acronym.

    >>> lower_first("Gold is money."), lower_first("Bitcoin's supply is fixed."), lower_first("AI labs grow.")
    ('gold is money.', "Bitcoin's supply is fixed.", 'AI labs grow.')
    >>> lower_first("I don't accept that.")
    "I don't accept that."
    >>> lower_first("A Bitcoin treasury company is forced to sell.")
    'a Bitcoin treasury company is forced to sell.'
    """
    if not text:
        return text
    first, _, rest = text.partition(" ")
    second = rest.split(" ", 1)[0]
    if first in _ARTICLES:  # "A Bitcoin company": an article before a name, not a name
        return text[:1].lower() + text[1:]
    named = first == "I" or (len(first) > 1 and first.isupper()) or first.removesuffix("'s") in _NAMES or second[:1].isupper()
    return text if named else text[:1].lower() + text[1:]


def deny(text: str) -> str:
    """How a speaker rejects a claim, in a sentence a person would say.

    >>> deny("Gold will outperform Bitcoin in the next crisis.")
    "I don't accept that gold will outperform Bitcoin in the next crisis."
    """
    return f"I don't accept that {lower_first(text.strip().rstrip('.'))}."


def short(text: str, limit: int = 80) -> str:
    text = text.rstrip("?")
    return lower_first(text if len(text) <= limit else text[: limit - 1] + "…")


_TYPE_CUES: tuple[tuple[DisagreementType, tuple[str, ...]], ...] = (
    (DisagreementType.values, ("should", "ought", "fair", "right to", "worth", "moral", "priority", "matter more", "deserve", "legitimate", "acceptable", "justified")),
    (DisagreementType.horizon, ("long run", "long-term", "short-term", "decade", "years", "eventually", "next", "future", "by 20", "horizon", "in time")),
    (DisagreementType.definition, ("what counts", "define", "definition", "really a", "mean", "is a ", "kind of", "qualif")),
    (DisagreementType.evidence, ("evidence", "data", "show", "measured", "record", "studies", "observed", "historically", "outperform", "correlat")),
    (DisagreementType.premise, ("because", "driven by", "cause", "depends on", "regardless", "assum", "determin", "contingent", "lead to", "leads to")),
)


def classify_question(text: str) -> DisagreementType:
    """A reader's classification of a disputed question from its wording (first cue wins).

    >>> classify_question("Should rents be capped?").value
    'values'
    >>> classify_question("Does the data show that supply lowers rents?").value
    'evidence'
    >>> classify_question("Gold is shiny.").value
    'claim'
    """
    low = f" {text.lower()} "
    for kind, cues in _TYPE_CUES:
        if any(c in low for c in cues):
            return kind
    return DisagreementType.claim


CACHE_TTL_S = 300.0  # Anthropic's ephemeral cache: 5 minutes, refreshed by each read
CACHE_MIN_TOKENS = 1024  # the shortest block Anthropic caches (shorter ones are sent uncached)


def _latency(tier: Tier, output_tokens: int) -> float:
    """Modelled latency: time to first token plus per-token time, by tier."""
    if tier is Tier.fast:
        return 0.35 + output_tokens * 0.006
    return 0.8 + output_tokens * 0.015


class SimulatedBackend:
    """Deterministic persona simulator (the embedded default backend)."""

    name = "simulated"

    def __init__(
        self,
        personas: Mapping[str, Persona],
        propositions: Mapping[str, Proposition],
        *,
        seed: int = 0,
        knobs: SimulatorKnobs | None = None,
        realtime: bool = False,
        latency_scale: float = 1.0,
    ) -> None:
        self.personas = dict(personas)
        self.propositions = dict(propositions)
        self._names = {pid: p.name for pid, p in self.personas.items()}
        self.seed = seed
        self.knobs = knobs or SimulatorKnobs()
        self.realtime = realtime
        self.latency_scale = latency_scale
        self._seen: dict[str, int] = {}
        self._read: dict[tuple[str, ...], ReadTurn] = {}
        # The prompt cache as Anthropic keeps it: (model, system block) -> modelled time of its
        # last use. The clock is the modelled latency of the calls so far (deterministic).
        self._cached: dict[tuple[str, str], float] = {}
        self._clock = 0.0

    def model_for(self, tier: Tier) -> str:
        # Simulated calls are priced as the default Anthropic model of their tier, so that
        # offline benchmarks report what a real run would cost.
        return default_model(tier)

    def _rng(self, request: LLMRequest, model: str) -> random.Random:
        h = request.request_hash(model)
        hints = request.hints.model_dump_json()
        n = self._seen.get(h + hints, 0)
        self._seen[h + hints] = n + 1
        digest = hashlib.sha256(f"{self.seed}|{h}|{hints}|{n}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    async def generate(self, request: LLMRequest) -> LLMResponse:
        check_hints(request, self._names)  # hints restate only what the messages show (one channel)
        fn = HANDLERS.get(request.purpose)
        if fn is None:
            _load_handlers()
            fn = HANDLERS.get(request.purpose)
        if fn is None:
            raise LLMOutputError(request.purpose, "the simulator has no handler for this purpose")
        model = self.model_for(request.tier)
        ctx = SimContext(
            rng=self._rng(request, model),
            knobs=self.knobs,
            personas=self.personas,
            propositions=self.propositions,
            hints=request.hints,
            seed=self.seed,
            text=f"{request.system}\n{request.user}",
            user=request.user,
        )
        ctx.turns = [self._read_turn(ctx, t) for t in request.hints.turns]
        result = fn(ctx, request)
        parsed: BaseModel | None = None
        repaired = False
        first_try = Usage()  # what a reply a guard sent back cost (its tokens and the repair's)
        if isinstance(result, str):
            text = result
        else:
            text = json.dumps(result, ensure_ascii=False)
            if request.output_schema is not None:
                try:
                    parsed = request.output_schema.model_validate(result, context=request.validation_context)
                except ValidationError as exc:
                    if request.validation_context is None:
                        raise LLMOutputError(request.purpose, str(exc)) from exc
                    # A guard sent the answer back: the one repair a real backend makes, with
                    # the problem stated (the handler answers again, told what was wrong).
                    first_try = Usage(
                        input_tokens=count_tokens(request.system) + count_tokens(request.user) + count_tokens(text) + count_tokens(str(exc)),
                        output_tokens=count_tokens(text),
                    )
                    ctx.repair, ctx.rng, repaired = str(exc), self._rng(request, model), True
                    result = fn(ctx, request)
                    text = json.dumps(result, ensure_ascii=False)
                    try:
                        parsed = request.output_schema.model_validate(result, context=request.validation_context)
                    except ValidationError as again:
                        raise LLMOutputError(request.purpose, str(again)) from again
        usage = self._usage(request, model, count_tokens(text)) + first_try
        latency = _latency(request.tier, usage.output_tokens) * self.latency_scale
        if self.realtime:
            await asyncio.sleep(latency)
        return LLMResponse(
            text=text,
            parsed=parsed,
            model=model,
            backend=self.name,
            usage=usage,
            latency_s=latency,
            cost_usd=cost_usd(model, usage),
            repaired=repaired,
            retries=int(repaired),
        )

    def _usage(self, request: LLMRequest, model: str, output_tokens: int) -> Usage:
        """Tokens as Anthropic reports them, with its prompt cache modelled: a system block
        marked for caching (at least :data:`CACHE_MIN_TOKENS` long) is written on first use and
        read while it was used within :data:`CACHE_TTL_S` of modelled time; the rest of the
        prompt is uncached input. Priced at the table's cache rates (reads 0.1x, writes 1.25x)."""
        system, user = count_tokens(request.system), count_tokens(request.user)
        now = self._clock
        self._clock += _latency(request.tier, output_tokens)
        if not request.cache_system or system < CACHE_MIN_TOKENS:
            return Usage(calls=1, input_tokens=system + user, output_tokens=output_tokens)
        key = (model, request.system)
        last = self._cached.get(key)
        self._cached[key] = now
        if last is not None and now - last <= CACHE_TTL_S:
            return Usage(calls=1, input_tokens=user, output_tokens=output_tokens, cache_read_tokens=system)
        return Usage(calls=1, input_tokens=user, output_tokens=output_tokens, cache_write_tokens=system)

    def _read_turn(self, ctx: SimContext, turn: TurnHint) -> ReadTurn:
        # Reading a turn is deterministic for its text and the personas present: cache it.
        key = (turn.speaker_id, turn.text, ",".join(ctx.cast()), str(turn.turn_index))
        read = self._read.get(key)
        if read is None:
            read = self._read[key] = ctx.read_turn(turn)
        return read


def _load_handlers() -> None:
    """Import every handler module of this package and every registered engine's module (each
    registers the simulator's answers to its purposes; an engine through its entry point, as
    the engine registry finds it, since this layer never imports an engine)."""
    import importlib
    import pkgutil

    import crux_lab.llm.simulated as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("handlers"):
            importlib.import_module(f"{pkg.__name__}.{info.name}")
    import_modules(base.ENGINE_GROUP)
