"""The persona simulator: a deterministic, seeded backend that answers from ground truth.

Each persona carries ``stances.json``: a stance on every proposition of its deck, with
confidence, machine-checkable flip conditions and a disagreement type. The simulator answers
every purpose from that ground truth plus the request's ``hints`` (who speaks, the turns so
far and their metadata). Handlers for each purpose live in sibling modules and register with
:func:`handler`; nothing here knows which engine is calling.

Failure knobs (probabilities, 0 by default) reproduce what real LLMs do:

- ``sycophancy``: a persona concedes without naming a reason;
- ``missed_attack``: an extractor leaves out an attack edge between contradictory claims;
- ``vague_crux``: crux statements and cards come out generic ("they see it differently");
- ``drift``: a persona states the opposite of its ground-truth stance.
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

from crux_lab.llm.base import Hints, LLMOutputError, LLMRequest, LLMResponse, TurnHint
from crux_lab.llm.pricing import cost_usd, default_model
from crux_lab.models import SimulatorKnobs, Tier, Usage
from crux_lab.personas.models import (
    FlipTrigger,
    Persona,
    Proposition,
    PropositionStance,
    StanceValue,
)
from crux_lab.tokens import count_tokens

HandlerResult = dict[str, Any] | str
Handler = Callable[["SimContext", LLMRequest], HandlerResult]

HANDLERS: dict[str, Handler] = {}


def handler(*purposes: str) -> Callable[[Handler], Handler]:
    """Register a function as the simulator's answer to one or more purposes."""

    def register(fn: Handler) -> Handler:
        for p in purposes:
            HANDLERS[p] = fn
        return fn

    return register


OPPOSITE: dict[str, StanceValue] = {"pro": "con", "con": "pro", "uncertain": "uncertain"}
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    ["the", "a", "an", "of", "to", "in", "on", "and", "or", "is", "are", "be", "for", "with", "that", "this", "it", "as", "by", "at", "from", "will", "should", "can", "do", "does", "not", "no", "yes", "what", "how", "why", "whether", "which", "who", "than", "more", "less", "its", "into", "over"]
)


def words(text: str) -> set[str]:
    """Content words of a text, lower-cased.

    >>> sorted(words("Is Bitcoin a store of value?"))
    ['bitcoin', 'store', 'value']
    """
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


@dataclass
class SimContext:
    """What a handler may use: seeded randomness, knobs, ground truth and the hints."""

    rng: random.Random
    knobs: SimulatorKnobs
    personas: Mapping[str, Persona]
    propositions: Mapping[str, Proposition]
    hints: Hints
    annotations: dict[str, Any] = field(default_factory=dict)

    # -- randomness -------------------------------------------------------
    def chance(self, p: float) -> bool:
        """True with probability ``p`` (always draws, so the stream stays aligned)."""
        return self.rng.random() < p

    def pick(self, items: Sequence[Any]) -> Any:
        return items[self.rng.randrange(len(items))] if items else None

    # -- ground truth -----------------------------------------------------
    def persona(self, persona_id: str | None = None) -> Persona:
        pid = persona_id or self.hints.speaker_id
        if pid is None or pid not in self.personas:
            known = ", ".join(sorted(self.personas))
            raise LLMOutputError("simulator", f"unknown speaker {pid!r}; known: {known}")
        return self.personas[pid]

    def truth(self, persona_id: str, proposition_id: str) -> PropositionStance | None:
        return self.personas[persona_id].stance_on(proposition_id) if persona_id in self.personas else None

    def current_stance(self, persona_id: str, proposition_id: str) -> StanceValue | None:
        """Ground-truth stance, updated by what happened in the turns so far.

        A persona's own CONCEDE on a proposition moves it to ``uncertain``; a flip condition whose
        trigger appears in an opponent's turn moves it to the trigger's ``new_stance``.
        """
        truth = self.truth(persona_id, proposition_id)
        if truth is None:
            return None
        stance: StanceValue = truth.stance
        for turn in self.hints.turns:
            if proposition_id not in turn.proposition_ids:
                continue
            if turn.speaker_id == persona_id:
                if turn.move == "CONCEDE":
                    stance = "uncertain"
                continue
            if fired_trigger(truth, turn) is not None:
                trig = fired_trigger(truth, turn)
                assert trig is not None
                stance = trig.new_stance
        return stance

    def deck_propositions(self, persona_ids: Sequence[str] | None = None) -> list[Proposition]:
        ids = list(persona_ids or self.hints.persona_ids or self.personas)
        held = {s.proposition_id for pid in ids if pid in self.personas for s in self.personas[pid].stances.stances}
        return [p for pid, p in sorted(self.propositions.items()) if pid in held]

    def contested(self, a: str, b: str) -> list[Proposition]:
        """Propositions where ``a`` and ``b`` hold opposite (pro vs con) stances."""
        out = []
        for p in self.deck_propositions([a, b]):
            sa, sb = self.current_stance(a, p.id), self.current_stance(b, p.id)
            if {sa, sb} == {"pro", "con"}:
                out.append(p)
        return out

    def relevance(self, proposition: Proposition, text: str) -> float:
        q = words(text)
        if not q:
            return 0.0
        keys = words(" ".join([proposition.text, proposition.question, *proposition.keywords]))
        return len(q & keys) / (len(q) ** 0.5 * max(1, len(keys)) ** 0.5)

    def rank_propositions(self, text: str, persona_ids: Sequence[str] | None = None) -> list[Proposition]:
        """Deck propositions ordered by keyword relevance to ``text`` (ties by id, stable)."""
        props = self.deck_propositions(persona_ids)
        return sorted(props, key=lambda p: (-self.relevance(p, text), p.id))

    def focus(self, persona_ids: Sequence[str] | None = None) -> Proposition | None:
        """The proposition a persona most likely talks about now.

        An explicit ``hints.proposition_id`` wins; then what the last opponent turn addressed;
        then the most relevant contested proposition for the aspect/topic not yet worn out.
        """
        if self.hints.proposition_id and self.hints.proposition_id in self.propositions:
            return self.propositions[self.hints.proposition_id]
        me = self.hints.speaker_id
        for turn in reversed(self.hints.turns[-4:]):
            if turn.speaker_id != me and turn.proposition_ids:
                pid = turn.proposition_ids[0]
                if pid in self.propositions:
                    return self.propositions[pid]
        ids = list(persona_ids or self.hints.persona_ids or self.personas)
        context = " ".join(x for x in [self.hints.aspect or "", self.hints.topic] if x)
        ranked = self.rank_propositions(context, ids)
        if not ranked:
            return None
        used: dict[str, int] = {}
        for turn in self.hints.turns:
            for pid in turn.proposition_ids:
                used[pid] = used.get(pid, 0) + 1
        contested_ids = set()
        if me is not None:
            for other in ids:
                if other != me:
                    contested_ids |= {p.id for p in self.contested(me, other)}
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
        against: TurnHint | None = None,
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
            "con": f"It is not the case that {lower_first(proposition.text.rstrip('.'))}.",
            "uncertain": f"I am not sure that {lower_first(proposition.text.rstrip('.'))}.",
        }[stance or "uncertain"]
        parts: list[str] = []
        opener = self.voice_opener(persona)
        if move == "CONCEDE":
            parts.append(f"I'll grant part of that on {short(proposition.question)}")
            parts.append(reason if truth else claim)
        elif move == "PROPOSE_CRUX":
            parts.append(f"I think the core disagreement is {lower_first(proposition.question.rstrip('?'))}?")
            parts.append(f"My answer: {claim}")
        elif move == "CHALLENGE" and against is not None:
            parts.append(f"I disagree: {claim}")
            parts.append(reason)
        elif move == "CLARIFY":
            parts.append(f"To be precise about {short(proposition.question)}: {claim}")
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


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text else text


def short(text: str, limit: int = 80) -> str:
    text = text.rstrip("?")
    return lower_first(text if len(text) <= limit else text[: limit - 1] + "…")


def fired_trigger(truth: PropositionStance, turn: TurnHint) -> FlipTrigger | None:
    """The first flip condition of ``truth`` that ``turn`` (an opponent's) satisfies, if any."""
    text = words(turn.text)
    for trig in truth.flip_conditions:
        if trig.proposition_id and trig.proposition_id not in turn.proposition_ids:
            continue
        if trig.kind == "concession":
            if turn.move == "CONCEDE" and trig.by in ("any", turn.speaker_id):
                return trig
            continue
        if trig.keywords and all(k.lower() in " ".join(sorted(text)) or k.lower() in turn.text.lower() for k in trig.keywords):
            return trig
    return None


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
        self.seed = seed
        self.knobs = knobs or SimulatorKnobs()
        self.realtime = realtime
        self.latency_scale = latency_scale
        self._seen: dict[str, int] = {}

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
        )
        result = fn(ctx, request)
        parsed: BaseModel | None = None
        if isinstance(result, str):
            text = result
        else:
            text = json.dumps(result, ensure_ascii=False)
            if request.output_schema is not None:
                try:
                    parsed = request.output_schema.model_validate(result)
                except ValidationError as exc:
                    raise LLMOutputError(request.purpose, str(exc)) from exc
        usage = Usage(
            calls=1,
            input_tokens=count_tokens(request.system) + count_tokens(request.user),
            output_tokens=count_tokens(text),
        )
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
            annotations=ctx.annotations,
        )


def _load_handlers() -> None:
    """Import every handler module of this package (each registers its purposes)."""
    import importlib
    import pkgutil

    import crux_lab.llm.simulated as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("handlers"):
            importlib.import_module(f"{pkg.__name__}.{info.name}")
