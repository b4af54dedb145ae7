"""The shared engine loop of ``dialogue`` and ``dcg``.

Phase 1 openings (parallel) -> initial crystallization + centralized discovery -> phase 2
free exchange -> phase 3 crux seeking -> phase 4 resolution (parallel) -> final
crystallization -> insights. The two engines differ only in their :class:`Crystallizer`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import Field

from crux_lab.embed import get_embedder
from crux_lab.engines.base import (
    EngineContext,
    as_named,
    make_turn,
    shown_turns,
    turn_hints,
)
from crux_lab.engines.dialogue import prompts
from crux_lab.engines.dialogue.controller import (
    PHASE_NAMES,
    PHASE_TITLES,
    Controller,
    ControllerSettings,
    Encoder,
    SteeringDecision,
)
from crux_lab.engines.dialogue.crystallizer import Applied, Crystallizer, Insights, parse_reply
from crux_lab.engines.dialogue.events import (
    ConcessionEvent,
    ConvergenceCheck,
    PhaseStart,
    PhaseTransition,
    Steering,
)
from crux_lab.engines.dialogue.purposes import CRYSTALLIZE, DIALOGUE_TURN, DISCOVERY, RESOLUTION
from crux_lab.engines.dialogue.schemas import TurnOutput
from crux_lab.engines.guards import (
    TOPIC_KEY,
    TooWeakToPlay,
    TurnGuard,
    answer_to_claim,
    brief_flips,
    briefed_positions,
    in_order,
    my_turn,
    said_of,
    side_outcome,
    turn_outcome,
)
from crux_lab.engines.poll import PollParams
from crux_lab.llm.base import Hints, LLMOutputError
from crux_lab.llm.purposes import Phase, Purpose, SteeringLabel
from crux_lab.models.domain import (
    Concession,
    Crux,
    DialogueTurn,
    Move,
    PersonaPosition,
    PositionShift,
    PropositionShift,
)
from crux_lab.models.events import (
    CruxProposed,
    DebateEvent,
    DialogueTurnEvent,
    EngineComplete,
    EngineError,
    EngineStart,
)
from crux_lab.personas.prompt import build_system_prompt

MAX_FAILED_TURNS = 3
OPENING_POSITIONS = 3  # an opening states the main position and up to two more


class DialogueParams(PollParams):
    """Parameters of the dialogue and dcg engines (all optional)."""

    crystallize_every: int = Field(5, ge=2, le=20, description="safety net: crystallize after this many turns")
    substantive_gap: int = Field(4, ge=1, le=20, description="min turns between exchange-triggered crystallizations")
    circling_threshold: float = Field(0.9, gt=0.0, le=1.0, description="cosine similarity that counts as repetition")
    circling_window: int = Field(6, ge=4, le=20)
    circling_detection: bool = True
    fairness_gap: int = Field(3, ge=2, le=10, description="bring in anyone silent this many turns")
    crux_budget: float = Field(0.6, gt=0.0, lt=1.0, description="phase 3 once this share of turns is used")
    resolution_budget: float = Field(0.85, gt=0.0, lt=1.0, description="phase 4 once this share of turns is used")
    stable_crystallizations: int = Field(3, ge=2, le=10)
    cluster_min: int = Field(6, ge=2, le=20)
    cluster_max: int = Field(8, ge=2, le=30)
    framing: Literal["second", "third"] = "second"
    post_concession_steering: bool = True
    max_new_disputes: int = Field(2, ge=1, le=2, description="DCG hard rule 1")


def default_encoder() -> Encoder:
    """The shared embedder, run on one BLAS thread: a handful of short turns gains nothing
    from threads, and on a loaded machine oversubscribed BLAS threads made it 20x slower."""
    from threadpoolctl import threadpool_limits

    embedder = get_embedder()

    def encode(texts: Sequence[str]) -> np.ndarray:
        with threadpool_limits(limits=1, user_api="blas"):
            return embedder.encode(texts)

    return encode


def dialogue_system(ctx: EngineContext, params: DialogueParams, persona_id: str) -> str:
    """A persona's system block in the dialogue and dcg engines: every turn of that persona,
    and the poll, send these bytes."""
    propositions = {p.id: p for p in ctx.deck.propositions} if ctx.deck else None
    return build_system_prompt(ctx.personas[persona_id], framing=params.framing, propositions=propositions)


class DialogueRun:
    """One debate of the dialogue family; :meth:`events` is the engine's event stream."""

    def __init__(
        self,
        ctx: EngineContext,
        params: DialogueParams,
        crystallizer: Crystallizer,
        engine_name: str,
        encoder_factory: Callable[[], Encoder] = default_encoder,
    ) -> None:
        self.ctx = ctx
        self.params = params
        self.cryst = crystallizer
        self.engine_name = engine_name
        self.ids = ctx.persona_ids
        self.names = {pid: ctx.personas[pid].name if pid in ctx.personas else pid for pid in self.ids}
        self.control = Controller(
            persona_ids=self.ids,
            settings=ControllerSettings(
                max_turns=ctx.config.max_turns,
                crystallize_every=params.crystallize_every,
                substantive_gap=params.substantive_gap,
                circling_threshold=params.circling_threshold,
                circling_window=params.circling_window,
                fairness_gap=params.fairness_gap,
                crux_budget=params.crux_budget,
                resolution_budget=params.resolution_budget,
                stable_crystallizations=params.stable_crystallizations,
                post_concession_steering=params.post_concession_steering,
            ),
            names=self.names,
            encoder=encoder_factory() if params.circling_detection else None,
        )
        self.systems = {pid: dialogue_system(ctx, params, pid) for pid in self.ids}
        # read once from each persona's own prompt: where it stands on the topic, and what would
        # change its mind; the role guard holds a persona to its brief, not to its first turn
        self.briefed = {
            pid: briefed_positions(self.systems[pid], ctx.config.topic, pid, self.names[pid], TOPIC_KEY) for pid in self.ids
        }
        self.flips = {pid: brief_flips(self.systems[pid]) for pid in self.ids}
        self.proposed: Crux | None = None
        self.failed_turns = 0
        self.last_size = 0
        self.pending: list[EngineError] = []  # guard warnings, yielded after the turn they concern

    # -- helpers ----------------------------------------------------------
    @property
    def turns(self) -> list[DialogueTurn]:
        return self.control.turns

    def _drain(self) -> list[EngineError]:
        out, self.pending = self.pending, []
        return out

    def _warning(self, purpose: str, error: str) -> EngineError:
        return EngineError(level="warning", purpose=purpose, error=error)

    async def _speak(
        self, persona_id: str, phase: int, steering: SteeringDecision | None, turn_index: int,
        history: Sequence[DialogueTurn],
    ) -> DialogueTurn:
        """One persona turn. The prompt lists the engine's current arguments (``dialogue``) or
        disputes (``dcg``) by id; the reply states its words, move, stance, the ids it answers and, for a
        concession, the reason that moved it. Nothing else of the reply is read."""
        purpose, instruction, length = {
            1: (Purpose.opening, prompts.OPENING_INSTRUCTION, "4-6 sentences"),
            4: (RESOLUTION, prompts.RESOLUTION_INSTRUCTION, "3-5 sentences"),
        }.get(phase, (DIALOGUE_TURN, prompts.EXCHANGE_INSTRUCTION, "2-4 sentences"))
        shown = prompts.fit_shown(self.cryst.shown()) if phase != 1 else {}
        opponent = next((t for t in reversed(history) if t.persona_id != persona_id), None)
        query = opponent.dialogue if opponent is not None else self.ctx.config.topic
        grounding = self.ctx.grounding(persona_id, query, opponent.persona_id if opponent else None)
        # its own answer, from its brief: to the claim in front of it when its brief asks that
        # question, else to the topic until a point it heard moves it
        answer = answer_to_claim(
            self.systems[persona_id], self.ctx.config.topic, query if opponent is not None else "",
            said_of(history, self.names), persona_id, self.flips[persona_id],
        )
        user = prompts.dialogue_message(
            persona_id=persona_id,
            topic=self.ctx.config.topic,
            turns=history,
            names=self.names,
            phase=PHASE_NAMES[phase],
            instruction=instruction,
            length=length,
            steering=steering.hint if steering else None,
            shown=prompts.shown_block(shown, self.cryst.shown_label),
            grounding=grounding,
            answer=answer,
        )
        hints = Hints(
            speaker_id=persona_id,
            topic=self.ctx.config.topic,
            phase=Phase(PHASE_NAMES[phase]),
            steering=SteeringLabel(steering.situation) if steering else None,
            turns=as_named(turn_hints(shown_turns(history, user)), user, persona_id, self.names),  # as the prompt shows them
            extra=({"positions": OPENING_POSITIONS} if phase == 1 else {})
            | ({"shown": shown} if shown else {}),
        )
        # an opening's stance is its answer to the debate question (its format says so)
        guard = TurnGuard(
            persona_id, self.ctx.config.topic, said_of(history, self.names), stance_on=(TOPIC_KEY,) if phase == 1 else (),
            briefed=self.briefed[persona_id], flips=self.flips[persona_id],
            form=" ".join([instruction, prompts.MOVES_HELP, prompts.TURN_FORMAT]),
        )
        req = self.ctx.request(
            purpose, self.systems[persona_id], user, output_schema=TurnOutput, hints=hints, cache_system=True,
            validation=guard.context(),
        )
        try:
            resp = await self.ctx.call(req)
            out: TurnOutput = parse_reply(purpose, resp, TurnOutput)
        except LLMOutputError:
            await my_turn()
            self.pending += turn_outcome(self.ctx.scratch, guard, None, self.names)[1]
            raise
        await my_turn()
        try:
            kept_out, events = turn_outcome(self.ctx.scratch, guard, out, self.names)
        except TooWeakToPlay as exc:  # the warnings not yet yielded go with the error
            exc.events = self._drain() + exc.events
            raise
        self.pending += events
        if kept_out is not None:
            raise LLMOutputError(purpose, f"the {kept_out.guard} guard kept it out: {kept_out.problem}")
        return make_turn(
            out,
            set(shown),
            id=f"{self.ctx.run_id[:8]}-t{turn_index}",
            turn_index=turn_index,
            persona_id=persona_id,
            dialogue=out.dialogue.strip(),
            move=out.move,
            phase=PHASE_NAMES[phase],
            phase_number=phase,
            steering_hint=steering.hint if steering else None,
            reply_to=history[-1].id if history and phase in (2, 3) else None,
            role_flag=guard.flagged.problem if guard.flagged else None,
        )

    def _cluster(self) -> list[DialogueTurn]:
        since = len(self.turns) - self.control.last_crystallized_at
        size = min(self.params.cluster_max, max(self.params.cluster_min, since))
        return self.turns[-size:]

    # -- crystallization --------------------------------------------------
    async def _crystallize(self, cluster: list[DialogueTurn], trigger: str) -> AsyncIterator[DebateEvent]:
        phase = PHASE_NAMES[self.control.phase]
        guard = self.cryst.side_guard(self.turns)
        schema = self.cryst.reply_schema(cluster)
        req = self.ctx.request(
            CRYSTALLIZE,
            prompts.NEUTRAL_SYSTEM,
            self.cryst.user_prompt(cluster, final=trigger == "final"),
            output_schema=schema,
            hints=self.cryst.hints(cluster, phase),
            validation=guard.context() if guard is not None else None,
        )
        reply = None
        resp, warning = await self.ctx.call_or_warn(req)
        if resp is not None:
            try:
                reply = parse_reply(CRYSTALLIZE, resp, schema)
            except LLMOutputError as exc:
                warning = self._warning("crystallize", f"skipped: {exc}")
        if guard is not None:
            drop, events = side_outcome(self.ctx.scratch, guard, reply, self.names)
            for guard_event in events:
                yield guard_event
            if reply is not None and drop:
                reply = self.cryst.without_sides(reply, drop)
        if reply is None:
            self.control.last_crystallized_at = len(self.turns)
            why = warning.error.removeprefix("skipped: ") if warning is not None else "no reply"
            yield self._warning("crystallize", f"crystallization ({trigger}) skipped, graph unchanged: {why}")
            return
        turn_range = (cluster[0].turn_index, cluster[-1].turn_index) if cluster else (0, 0)
        applied = self.cryst.apply(reply, cluster, turn_range)
        for ev in self._after_apply(applied, "crystallize"):
            yield ev
        self.control.crystallized(
            frontier=self.cryst.frontier(), new_nodes=applied.new_nodes, changed=applied.changed
        )
        yield self._convergence(trigger)

    async def _discover(self) -> AsyncIterator[DebateEvent]:
        if not self.cryst.discoverable():
            return
        openings = list(self.turns)
        req = self.ctx.request(
            DISCOVERY,
            prompts.NEUTRAL_SYSTEM,
            self.cryst.discovery_prompt(openings),
            output_schema=self.cryst.discovery_schema,
            hints=self.cryst.hints(openings, "opening"),
        )
        resp, warning = await self.ctx.call_or_warn(req)
        try:
            if resp is None:
                raise LLMOutputError("discovery", warning.error if warning is not None else "no reply")
            reply = parse_reply(DISCOVERY, resp, self.cryst.discovery_schema)
        except LLMOutputError as exc:
            yield self._warning("discovery", f"centralized discovery skipped: {exc}")
            return
        for ev in self._after_apply(self.cryst.apply_discovery(reply), "discovery"):
            yield ev

    def _after_apply(self, applied: Applied, purpose: str) -> list[DebateEvent]:
        events: list[DebateEvent] = list(applied.events)
        if applied.refused:
            events.append(self._warning(purpose, "refused: " + " | ".join(applied.refused)))
        if applied.reworded:
            events.append(self._warning(purpose, "reworded: " + " | ".join(applied.reworded)))
        trail: list[Concession] = list(self.ctx.result.concession_trail)
        for c in applied.concessions:
            trail.append(c)
            events.append(ConcessionEvent(concession=c))
        self.ctx.result.concession_trail = trail
        if applied.crux is not None:
            note = applied.crux
            was_ack = self.proposed.acknowledged if self.proposed else False
            self.proposed = Crux(
                id="crux-proposed",
                statement=note.statement,
                source="proposed",
                proposed_by=[p for p in note.proposed_by if p in self.ids] or sorted(self.control.crux_proposers),
                acknowledged=note.acknowledged,
                assumptions=list(note.assumptions),
            )
            if note.acknowledged:
                self.control.crux_acknowledged = True
                if not was_ack:
                    events.append(
                        CruxProposed(
                            persona_id=self.proposed.proposed_by[0] if self.proposed.proposed_by else "",
                            statement=note.statement,
                            acknowledged=True,
                        )
                    )
        self._write_result()
        return events

    def _convergence(self, trigger: str) -> ConvergenceCheck:
        size = self.cryst.size()
        delta, self.last_size = size - self.last_size, size
        exchange = [t for t in self.turns if t.phase_number in (2, 3)]
        concede = sum(1 for t in exchange if t.move is Move.CONCEDE)
        c = self.control
        converged = c.crux_acknowledged or c.stable_in_phase3 >= c.settings.stable_crystallizations
        return ConvergenceCheck(
            converged=converged,
            signals={
                "graph_size": size,
                "graph_delta": delta,
                "graph_shrinking": delta < 0,
                "crux_proposed": bool(c.crux_proposers),
                "crux_acknowledged": c.crux_acknowledged,
                "frontier_stable": c.frontier_stable(),
                "stable_crystallizations": c.stable_in_phase3,
                "concession_rate": round(concede / len(exchange), 3) if exchange else 0.0,
                "budget_used": round(c.budget_used, 3),
            },
            reason=f"after {trigger}",
        )

    # -- result -----------------------------------------------------------
    def _write_result(self) -> None:
        """Keep the result consistent after every mutation (a cancelled run stays valid)."""
        r = self.ctx.result
        self.cryst.write_result(r)
        ins: Insights = self.cryst.insights()
        r.cruxes = ([self.proposed] if self.proposed else []) + ins.cruxes
        r.common_ground = ins.common_ground
        r.camps = ins.camps
        r.regime = ins.regime
        r.regime_description = ins.regime_description

    def _positions(self) -> None:
        """Opening and closing positions, and per-proposition shifts where turns carry stances."""
        r = self.ctx.result
        positions, shifts = [], []
        for pid in self.ids:
            mine = [t for t in self.turns if t.persona_id == pid]
            if not mine:
                continue
            first: dict[str, str] = {}
            last: dict[str, str] = {}
            for t in mine:
                if t.stance is None:
                    continue
                for prop in t.proposition_ids[:1]:
                    first.setdefault(prop, t.stance)
                    last[prop] = t.stance
            opening = next((t for t in mine if t.phase_number == 1), mine[0])
            closing = next((t for t in reversed(mine) if t.phase_number == 4), mine[-1])
            positions.append(PersonaPosition(persona_id=pid, at="opening", text=opening.dialogue, stances=first))
            positions.append(PersonaPosition(persona_id=pid, at="closing", text=closing.dialogue, stances=last))
            moved = [
                PropositionShift(proposition_id=p, before=first[p], after=last[p])
                for p in first
                if first[p] != last[p]
            ]
            reasons = [c.reason for c in r.concession_trail if c.persona_id == pid and c.reason]
            shifts.append(
                PositionShift(
                    persona_id=pid,
                    shifted=bool(moved),
                    proposition_shifts=moved,
                    named_reason=reasons[0] if reasons else None,
                    summary=f"{len(moved)} stance(s) moved" if moved else "no stance moved",
                )
            )
        r.positions = positions
        r.position_shifts = shifts

    async def _everyone_speaks(self, phase: int) -> AsyncIterator[DebateEvent]:
        """Phases 1 and 4: every persona speaks once, in parallel, on the turns so far."""
        yield PhaseStart(phase=phase, name=PHASE_TITLES[phase])
        history = list(self.turns)
        start = len(history)

        async def attempt(i: int, pid: str) -> DialogueTurn | LLMOutputError:
            try:
                return await self._speak(pid, phase, None, start + i, history)
            except LLMOutputError as exc:  # skipped below with a warning; the others still speak
                return exc

        spoken = await in_order([attempt(i, pid) for i, pid in enumerate(self.ids)])
        for ev in self._drain():
            yield ev
        for pid, turn in zip(self.ids, spoken, strict=True):
            if isinstance(turn, LLMOutputError):
                yield self._warning("dialogue_turn", f"{PHASE_TITLES[phase].lower()} of {pid} skipped: {turn}")
                continue
            self.control.record(turn)
            yield DialogueTurnEvent(turn=turn)
        self._positions()

    # -- the debate -------------------------------------------------------
    async def events(self) -> AsyncIterator[DebateEvent]:
        ctx, c = self.ctx, self.control
        yield EngineStart(
            engine=self.engine_name, topic=ctx.config.topic, persona_ids=self.ids,
            backend=ctx.backend.name, run_id=ctx.run_id,
        )
        # Phase 1: opening statements, in parallel; then crystallize and discover
        async for ev in self._everyone_speaks(1):
            yield ev
        if ctx.cancelled:
            return
        async for ev in self._crystallize(self.turns[: len(self.ids)], "openings"):
            yield ev
        async for ev in self._discover():
            yield ev
        yield PhaseTransition(from_phase=1, to_phase=2, reason="all agents gave opening statements; initial graph built")
        c.enter_phase(2)
        yield PhaseStart(phase=2, name=PHASE_TITLES[2])

        # Phases 2 and 3: the exchange
        end_reason = f"max turns ({ctx.config.max_turns}) reached"
        transitioned = False
        while True:
            if ctx.cancelled:
                return
            if c.exchange_turns_left() <= 0:
                break
            step = c.transition()
            if step is not None:
                to, why = step
                yield PhaseTransition(from_phase=c.phase, to_phase=to, reason=why)
                if to == 4:
                    end_reason, transitioned = why, True
                    break
                c.enter_phase(to)
                yield PhaseStart(phase=to, name=PHASE_TITLES[to])
            speaker = c.next_speaker()
            decision = c.steer(speaker)
            if decision is not None:
                yield Steering(persona_id=speaker, hint=decision.hint, situation=decision.situation)
            try:
                turn = await self._speak(speaker, c.phase, decision, len(self.turns), list(self.turns))
            except LLMOutputError as exc:
                for ev in self._drain():
                    yield ev
                self.failed_turns += 1
                c.kept_out(speaker)
                yield self._warning("dialogue_turn", f"turn of {speaker} skipped: {exc}")
                if self.failed_turns >= MAX_FAILED_TURNS:
                    end_reason = f"{MAX_FAILED_TURNS} dialogue turns in a row were unusable"
                    break
                continue
            self.failed_turns = 0
            for ev in self._drain():
                yield ev
            c.record(turn)
            yield DialogueTurnEvent(turn=turn)
            if turn.move is Move.PROPOSE_CRUX:
                yield CruxProposed(persona_id=speaker, statement=turn.dialogue, acknowledged=False)
            trigger = c.crystallization_trigger()
            if trigger is not None:
                async for ev in self._crystallize(self._cluster(), trigger):
                    yield ev
        if c.phase != 4:
            if not transitioned:
                yield PhaseTransition(from_phase=c.phase, to_phase=4, reason=end_reason)
            c.enter_phase(4)

        # Phase 4: resolution, in parallel; final crystallization; insights
        if ctx.cancelled:
            return
        async for ev in self._everyone_speaks(4):
            yield ev
        if ctx.cancelled:
            return
        final_cluster = self.turns[-max(self.params.cluster_min, len(self.ids)) :]
        async for ev in self._crystallize(final_cluster, "final"):
            yield ev
        self._write_result()
        r = ctx.result
        yield EngineComplete(
            complete=True,
            regime=r.regime,
            summary=f"{r.regime_description} Ended: {end_reason}. "
            f"{len(self.turns)} turns, {self.cryst.count} crystallizations, "
            f"{len(r.concession_trail)} concessions.",
        )
