"""One persona turn: request -> reply -> anti-sycophancy check -> DialogueTurn; plus the
structured (non-speech) calls with skip-and-warn on unrepairable replies, and the position
tracker that enforces the update rule.

A turn's prompt lists the claims on the table by engine id (the topic as ``topic``, contested
claims as ``c1``, ``c2``...); the reply names the ids it addresses, its move, its stance on
them and, when it concedes, the reason. Those parsed fields are all the engine learns besides
the words. Turn indices are given in the order the calls are made, not the order replies
arrive, so a recorded debate and its replay have the same transcript.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from crux_lab.engines.base import EngineContext, as_named, make_turn, shown_turns, turn_hints
from crux_lab.engines.crux_room import prompts
from crux_lab.engines.crux_room.antisyc import (
    AntiSycophancyParams,
    belief_anchor,
    looks_sycophantic,
    names_reason,
)
from crux_lab.engines.crux_room.purposes import ANTI_SYCOPHANCY_CHECK
from crux_lab.engines.crux_room.schemas import SpeechReply, SycophancyCheckReply
from crux_lab.engines.crux_room.timeline import Timeline
from crux_lab.engines.guards import (
    TOPIC_KEY,
    TooWeakToPlay,
    TurnGuard,
    answer_line,
    brief_flips,
    briefed_positions,
    my_turn,
    said_of,
    topic_side,
    turn_outcome,
)
from crux_lab.llm.base import Hints, LLMOutputError, LLMRequest, LLMResponse, shows
from crux_lab.models.domain import DialogueTurn, TurnPhase
from crux_lab.models.events import EngineError
from crux_lab.personas.loader import propositions_for
from crux_lab.personas.prompt import impersonal
from crux_lab.tokens import count_tokens

S = TypeVar("S", bound=BaseModel)
StanceLit = Literal["pro", "con", "uncertain"]


@dataclass
class StanceRecord:
    """One stance a persona expressed, in order; ``accepted`` is False when the update rule
    refused a change made without a named reason."""

    persona_id: str
    proposition_id: str  # the engine id of the claim the turn addressed ("topic", "c1"...)
    stance: StanceLit
    turn_id: str
    turn_index: int
    room_id: str | None
    changed: bool
    accepted: bool
    named_reason: str | None = None


@dataclass
class PositionTracker:
    """Explicit position tracking: every stance, and which changes were justified."""

    enforce: bool = True
    records: list[StanceRecord] = field(default_factory=list)
    committed: dict[tuple[str, str], StanceLit] = field(default_factory=dict)
    committed_text: dict[str, str] = field(default_factory=dict)

    def observe(self, turn: DialogueTurn, named_reason: str | None) -> list[StanceRecord]:
        """Record the stance a turn took on the claims it addressed (by engine id); a turn that
        addressed none of the listed claims states no stance we can place."""
        if turn.stance is None:
            return []
        keys = list(turn.proposition_ids)
        out = []
        for key in keys:
            before = self.committed.get((turn.persona_id, key))
            changed = before is not None and before != turn.stance
            accepted = not changed or named_reason is not None or not self.enforce
            rec = StanceRecord(
                turn.persona_id, key, turn.stance, turn.id, turn.turn_index, turn.room_id, changed, accepted,
                named_reason if changed else None,
            )
            self.records.append(rec)
            out.append(rec)
            if accepted:
                self.committed[(turn.persona_id, key)] = turn.stance
        if all(r.accepted for r in out):
            self.committed_text[turn.persona_id] = turn.dialogue
        return out


@dataclass
class SycophancyStats:
    turns: int = 0
    flagged_by_pattern: int = 0
    checked: int = 0
    unjustified: int = 0
    regenerated: int = 0
    still_unjustified: int = 0
    refused_updates: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


class Speakers:
    """Issues every call of a crux engine for one debate."""

    def __init__(self, ctx: EngineContext, antisyc: AntiSycophancyParams, timeline: Timeline, budget: int = 2000) -> None:
        self.ctx = ctx
        self.budget = budget  # token cap of a turn's whole user message
        self.antisyc = antisyc
        self.timeline = timeline
        props = propositions_for(ctx.persona_ids)
        self.systems = {pid: prompts.persona_system_prompt(p, props) for pid, p in ctx.personas.items()}
        self.names = {pid: p.name for pid, p in ctx.personas.items()}
        # read once from each persona's own prompt: its side on the topic, and what would change its mind
        self.sides = {pid: topic_side(system, ctx.config.topic) for pid, system in self.systems.items()}
        self.briefed = {
            pid: briefed_positions(system, ctx.config.topic, pid, self.names[pid], TOPIC_KEY) for pid, system in self.systems.items()
        }
        self.flips = {pid: brief_flips(system) for pid, system in self.systems.items()}
        self.tracker = PositionTracker(enforce=antisyc.update_rule)
        self.stats = SycophancyStats()
        self.pending: list[EngineError] = []
        self.context_tokens: list[int] = []
        self.rejected_cards: list[dict[str, object]] = []
        self.named_reasons: dict[str, str | None] = {}
        self.replies: dict[str, SpeechReply] = {}  # turn id -> its parsed reply (extra fields)
        self.turns: list[DialogueTurn] = []  # every turn generated, in index order
        self.next_index = 0

    # -- plumbing -----------------------------------------------------------
    async def call(self, request: LLMRequest) -> LLMResponse:
        self.timeline.record(len(self.ctx.backend.calls))  # the seq the ledger is about to reserve
        return await self.ctx.call(request)

    def warn(self, purpose: str, message: str) -> None:
        self.pending.append(EngineError(level="warning", purpose=purpose, error=message))

    def drain(self) -> list[EngineError]:
        out, self.pending = self.pending, []
        return out

    def hints(self, **kw: Any) -> Hints:
        kw.setdefault("topic", self.ctx.config.topic)
        return Hints(**kw)

    async def structured(
        self, purpose: str, user: str, schema: type[S], hints: Hints, system: str = "",
        validation: dict[str, Any] | None = None,
    ) -> S | None:
        """A non-speech call; an unrepairable reply is skipped with a warning event.
        ``validation`` is the reply's validation context (a guard)."""
        request = self.ctx.request(
            purpose, system or "You are a careful, neutral analyst of debates. Answer in JSON only.", user,
            output_schema=schema, hints=hints, validation=validation,
        )
        try:
            response = await self.call(request)
            if isinstance(response.parsed, schema):
                return response.parsed
            return schema.model_validate_json(response.text)
        except (LLMOutputError, ValidationError, ValueError) as exc:
            self.warn(purpose, f"{purpose} reply could not be repaired and was skipped: {str(exc)[:300]}")
            return None

    # -- speech -------------------------------------------------------------
    def claims_block(self, claims: Mapping[str, str]) -> str:
        lines = "\n".join(f"- [{cid}] {text}" for cid, text in claims.items())
        return prompts.CLAIMS_SHOWN.format(lines=lines) if lines else ""

    def user_message(
        self, persona_id: str, instruction: str, context: str, *, focus: str, claims: Mapping[str, str],
        opponent_id: str | None = None,
    ) -> str:
        persona = self.ctx.personas[persona_id]
        said = [t.dialogue for t in self.turns if t.persona_id == persona_id]  # what it has said: not anchored on again
        anchor = belief_anchor(persona, focus, (), self.antisyc.anchor_budget, said) if self.antisyc.belief_anchoring else ""
        # per-turn belief grounding; an anonymized debate never names the opponent
        opponent = None if self.antisyc.anonymize_history else opponent_id
        grounding = self.ctx.grounding(persona_id, focus, opponent, said)
        rest = self._rest(persona_id, instruction, context, claims, focus, said)
        # within the budget: over it, the grounding is left out first, then the anchor
        if grounding and count_tokens("\n\n".join([anchor, grounding, rest])) > self.budget:
            grounding = ""
        if anchor and count_tokens("\n\n".join([anchor, rest])) > self.budget:
            anchor = ""
        return "\n\n".join(b for b in (anchor, grounding, rest) if b)

    def _rest(
        self, persona_id: str, instruction: str, context: str, claims: Mapping[str, str], question: str, said: Sequence[str]
    ) -> str:
        blocks = [context, self.claims_block(claims)]
        # the persona's side last, next to what it is asked: earlier in the request, the builder
        # whose brief answers yes answered no in 2 of 3 replies; here, yes in 6 of 6
        side = self.side_line(persona_id, question, said)
        # Commitment and the update rule only once the persona has said something: before its
        # first turn there is nothing to hold, and a small model told to keep or update a
        # position it never stated talks about changing its mind, or restates the topic.
        last = self.tracker.committed_text.get(persona_id)
        if last and self.antisyc.position_statement and not side:
            # Pointed to, never quoted: Qwen2.5-Coder-1.5B copied a quoted turn, even its first
            # words, as its next one until the echo guard kept it out. Where the side line
            # states the position, the commitment line is left out: beside it, Qwen narrated
            # it ("The current position is that ...", "My earlier points state that ...").
            blocks.append(prompts.POSITION_STATEMENT)
        if last and self.antisyc.update_rule:
            blocks.append(prompts.UPDATE_RULE)
        blocks.append(instruction)
        blocks.append(side)
        blocks.append(prompts.JSON_SPEECH)
        return "\n\n".join(b for b in blocks if b)

    async def _settled(self, guard: TurnGuard, index: int) -> None:
        """Wait for the parallel turns started before this one (:func:`my_turn`), then judge
        against every turn before it. The guard's list taken when the request was made depends
        on which parallel replies had come back by then: a replay, whose replies come at once,
        saw a partner's turn that the recording had not, and skipped a turn the recording kept."""
        await my_turn()
        guard.earlier = said_of([t for t in self.turns if t.turn_index < index], self.names)

    def side_line(self, persona_id: str, question: str = "", said: Sequence[str] = ()) -> str:
        """The persona's side on the question in front of it (``question``: the round's aspect,
        the clash's claim, the room's crux) as its own brief states it (:func:`side_on`), else
        its side on the topic while it still holds that side (after an update the commitment
        line speaks for it). Qwen2.5-Coder-1.5B, with the side only in the system prompt and
        beliefs about gold in the anchor, opened Saylor's turns with "I think gold is still the
        better long-term store of value than Bitcoin"; asked "Is it really the case that new
        apartment blocks near Brackwater station would slow rent rises?", the builder whose
        brief answers yes answered no in two of three replies."""
        now = self.tracker.committed.get((persona_id, TOPIC_KEY))
        side = self.sides.get(persona_id)
        held = side is None or now is None or now == side.stance
        return answer_line(self.systems[persona_id], self.ctx.config.topic, question, said, topic_held=held)

    async def speak(
        self,
        purpose: str,
        persona_id: str,
        instruction: str,
        context: str,
        *,
        phase: TurnPhase,
        seen: Sequence[DialogueTurn] = (),
        hint_phase: str | None = None,
        aspect: str | None = None,
        aspect_id: str | None = None,
        focus: str | None = None,
        claims: Mapping[str, str] | None = None,
        opponent_id: str | None = None,
        reply_to: str | None = None,
        room_id: str | None = None,
        persona_ids: Sequence[str] | None = None,
        schema: type[SpeechReply] = SpeechReply,
    ) -> DialogueTurn | None:
        """Generate one turn of ``persona_id``. ``seen`` are the turns its context shows,
        ``focus`` the text of the claim in front of it, ``claims`` the claims its prompt lists
        by id (the topic is always listed, as ``topic``). A reply that stays off-schema after
        the backend's repair is skipped: ``None``, with a warning (the debate goes on)."""
        index = self.next_index  # reserved now: indices follow the order of the calls
        self.next_index += 1
        # the claims and the claim in focus as the request shows them: no speaker named
        shown = {TOPIC_KEY: self.ctx.config.topic, **{k: impersonal(v, self.names, persona_id) for k, v in (claims or {}).items()}}
        focus = impersonal(focus, self.names, persona_id) if focus else focus
        query = focus or aspect or self.ctx.config.topic
        user = self.user_message(persona_id, instruction, context, focus=query, claims=shown, opponent_id=opponent_id)
        self.context_tokens.append(count_tokens(user))
        # the turns as the prompt shows them: an anonymized history names others "Speaker A"...
        turns = as_named(turn_hints(shown_turns(seen, user)), user, persona_id, self.names)
        hints = self.hints(
            speaker_id=persona_id,
            aspect=aspect if aspect and shows(user, aspect) else None,
            phase=hint_phase or phase,
            turns=turns,
            focus=focus,
            extra={"shown": shown},
        )
        topic = self.ctx.config.topic
        guard = TurnGuard(
            persona_id, topic, said_of(self.turns, self.names), briefed=self.briefed[persona_id], flips=self.flips[persona_id],
            form=" ".join([instruction, prompts.POSITION_STATEMENT, prompts.UPDATE_RULE, prompts.JSON_SPEECH]),
        )
        request = self.ctx.request(
            purpose, self.systems[persona_id], user, output_schema=schema, hints=hints, cache_system=True,
            validation=guard.context(),
        )
        try:
            response = await self.call(request)
        except LLMOutputError as exc:
            await self._settled(guard, index)
            self.pending += turn_outcome(self.ctx.scratch, guard, None, self.names)[1]
            self.warn(purpose, f"a {purpose} turn of {self.ctx.personas[persona_id].name} was skipped: its reply "
                               f"could not be repaired ({str(exc)[:240]})")
            return None
        turn = self._turn(response, shown, persona_id, phase, aspect_id, room_id, reply_to, schema)
        await self._settled(guard, index)
        try:
            kept_out, events = turn_outcome(self.ctx.scratch, guard, self._parsed(response, schema), self.names)
        except TooWeakToPlay as exc:  # the warnings not yet yielded go with the error
            exc.events = self.drain() + exc.events
            raise
        self.pending += events
        if kept_out is not None:
            return None
        self.stats.turns += 1
        named = names_reason(turn.dialogue) or turn.named_reason is not None
        if self.antisyc.post_check and looks_sycophantic(turn.dialogue, turn.move.value if turn.move else None):
            self.stats.flagged_by_pattern += 1
            verdict = await self._check(persona_id, turn, seen, hints)
            if verdict is not None:
                self.stats.checked += 1
                justified = verdict.names_specific_claim or verdict.flip_condition_met
                named = justified
                if verdict.capitulates and not justified:
                    self.stats.unjustified += 1
                    self.stats.regenerated += 1
                    retry = request.model_copy(update={"user": user + "\n\n" + prompts.REGENERATE})
                    try:
                        response = await self.call(retry)
                        turn = self._turn(response, shown, persona_id, phase, aspect_id, room_id, reply_to, schema)
                    except LLMOutputError as exc:  # keep the first turn, flagged
                        self.warn(purpose, f"the regenerated turn could not be repaired; the first one stands ({str(exc)[:200]})")
                    named = names_reason(turn.dialogue) or turn.named_reason is not None
                    if looks_sycophantic(turn.dialogue, turn.move.value if turn.move else None) and not named:
                        self.stats.still_unjustified += 1
        turn = turn.model_copy(update={"turn_index": index, "id": f"m{index}", "role_flag": guard.flagged.problem if guard.flagged else None})
        self.replies[turn.id] = self._parsed(response, schema)
        self.turns.append(turn)
        self.turns.sort(key=lambda t: t.turn_index)
        reason = (turn.named_reason or turn.dialogue) if named else None
        self.named_reasons[turn.id] = reason
        for rec in self.tracker.observe(turn, reason):
            if rec.changed and not rec.accepted:
                self.stats.refused_updates += 1
        return turn

    @staticmethod
    def _parsed(response: LLMResponse, schema: type[SpeechReply]) -> SpeechReply:
        return response.parsed if isinstance(response.parsed, schema) else schema.model_validate_json(response.text)

    def _turn(
        self, response: LLMResponse, shown: Mapping[str, str], persona_id: str, phase: TurnPhase,
        aspect_id: str | None, room_id: str | None, reply_to: str | None, schema: type[SpeechReply] = SpeechReply,
    ) -> DialogueTurn:
        parsed = self._parsed(response, schema)
        return make_turn(
            parsed,
            set(shown),
            id="pending",
            turn_index=-1,
            persona_id=persona_id,
            dialogue=parsed.utterance,
            phase=phase,
            aspect_id=aspect_id,
            room_id=room_id,
            reply_to=reply_to,
        )

    async def _check(
        self, persona_id: str, turn: DialogueTurn, seen: Sequence[DialogueTurn], hints: Hints
    ) -> SycophancyCheckReply | None:
        previous = next((t for t in reversed(seen) if t.persona_id != persona_id), None)
        persona = self.ctx.personas[persona_id]
        flips = persona.contract.flip_conditions
        user = prompts.SYCOPHANCY_CHECK.format(
            previous=previous.dialogue if previous else "(none)", reply=turn.dialogue, flips=flips
        )
        # the check's prompt shows the two turns and the flip conditions: not the topic, the
        # speaker's claim list, nor who spoke (its turns are "the other side" and "the reply")
        shown = [t for t in (previous, turn) if t is not None]
        unnamed = [h.model_copy(update={"speaker_id": ""}) for h in turn_hints(shown)]
        check_hints = Hints(phase=hints.phase, turns=unnamed)
        return await self.structured(ANTI_SYCOPHANCY_CHECK, user, SycophancyCheckReply, check_hints)


def spoken(turns: Sequence[DialogueTurn | None]) -> list[DialogueTurn]:
    """The turns that were spoken (a skipped turn is ``None``).

    >>> spoken([None])
    []
    """
    return [t for t in turns if t is not None]
