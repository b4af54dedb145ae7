"""Run one debate: config -> engine events -> DebateResult (and its event log).

``DebateRun`` streams events (for notebooks and the live console); ``run_debate`` runs to the
end. Cancellation (task cancel, Ctrl-C, ``stop()``) yields a partial result with
``complete=False``, never a corrupt one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

from crux_lab.analysis.metrics import run_metrics
from crux_lab.analysis.quality import mark_event_restates_topic
from crux_lab.analysis.sides import tidy_sides
from crux_lab.engines import get as get_engine
from crux_lab.engines.base import (
    EngineContext,
    check_config,
    check_personas,
    debate_output,
    validate_params,
)
from crux_lab.engines.guards import TooWeakToPlay
from crux_lab.engines.poll import poll_on, run_poll
from crux_lab.limits import check_params
from crux_lab.llm import Backend, LLMError, backend_for_debate, check_structured
from crux_lab.llm.ledger import Ledger, live_backend, run_backend
from crux_lab.models.config import DebateConfig
from crux_lab.models.events import (
    AgentTurn,
    CruxMessage,
    DebateEvent,
    DialogueTurnEvent,
    EngineError,
    MessagePosted,
    Status,
)
from crux_lab.models.result import DebateResult
from crux_lab.personas.loader import deck_for, load_personas
from crux_lab.scrub import scrub

# An engine's last event: the poll runs just before it is recorded.
FINAL_EVENTS = frozenset({"debate_complete", "engine_complete"})


class DebateRun:
    """One debate in progress. Iterate ``events()``; read ``result`` when done."""

    def __init__(
        self,
        config: DebateConfig,
        *,
        backend: Backend | None = None,
        event_log: Path | None = None,
        cassette: Path | None = None,
        realtime: bool = False,
    ) -> None:
        self.engine = get_engine(config.engine)
        check_personas(self.engine, config.persona_ids)
        self.params = validate_params(self.engine, config)
        check_config(self.engine, config, self.params)
        # Numbers that cannot be stored and min > max pairs fail here, before any call.
        check_params(self.params.model_dump(), "params")
        self.config = config
        self.run_id = config.run_id()
        self.personas = load_personas(config.persona_ids)
        # A backend the run made is the run's to close; one passed in belongs to the caller.
        # Building it runs the backend's own checks of the debate (one line, before any call
        # or file), e.g. a topic it cannot debate.
        self._owns_backend = backend is None
        if backend is None:
            backend = backend_for_debate(config, cassette=cassette, realtime=realtime)
        self.ledger = Ledger(backend, run_id=self.run_id)
        self._names = {pid: p.contract.name for pid, p in self.personas.items()}
        self.result = DebateResult(
            run_id=self.run_id, config=config, engine=config.engine, backend=live_backend(backend),
            persona_names=self._names,
        )
        self.ctx = EngineContext(
            config=config,
            backend=self.ledger,
            personas=self.personas,
            run_id=self.run_id,
            result=self.result,
            deck=deck_for(config.persona_ids),
            params=self.params,
        )
        self.event_log = event_log
        self._stop = False

    def stop(self) -> None:
        """Ask the engine to stop at its next event; the result is marked incomplete."""
        self._stop = True
        self.ctx.cancelled = True

    async def events(self) -> AsyncIterator[DebateEvent]:
        started = time.perf_counter()
        log = None
        if self.event_log is not None:
            self.event_log.parent.mkdir(parents=True, exist_ok=True)
            log = self.event_log.open("w", encoding="utf-8")
        finished = False
        polled = False

        def record(event: DebateEvent) -> DebateEvent:
            event = event.model_copy(update={"seq": len(self.result.events)})
            if event.type == "debate_complete":
                # The log's final output is the result's: sides tidied before it is written.
                tidy_sides(self.result, self._names)
                event = event.model_copy(update={"output": debate_output(self.result)})
            # Cruxes and cards are stamped restates_topic before the log records them.
            mark_event_restates_topic(event, self.config.topic)
            self.result.events.append(event)
            _collect_turn(self.result, event)
            if log is not None:
                log.write(scrub(event.model_dump_json()) + "\n")
                log.flush()
            return event

        try:
            # How the server holds replies to their schema, known (and shown) before the first call.
            check = await check_structured(self.ledger.backend)
            if check is not None:
                self.result.structured = check
                yield record(Status(message=check.line()))
                if check.warning():
                    yield record(EngineError(level="warning", purpose="structured_output", error=check.warning() or ""))
            gen = self.engine.run(self.ctx)
            try:
                async for event in gen:
                    if event.type in FINAL_EVENTS and not polled and not self._stop:
                        # The poll: every candidate crux put to each persona alone, before the
                        # final event tidies the sides and logs the output (engines/poll.py).
                        polled = True
                        if poll_on(self.params):
                            async for polled_event in run_poll(self.ctx, self.engine):
                                yield record(polled_event)
                    yield record(event)
                    if self._stop:
                        break
                else:
                    finished = True
            finally:
                await gen.aclose()
        except LLMError as exc:
            for event in getattr(exc, "events", ()):  # what the engine had not yielded yet (guards)
                yield record(event)
            err = EngineError(seq=len(self.result.events), error=scrub(str(exc)), level="error")
            self.result.events.append(err)
            self.result.error = err.error
            if log is not None:
                log.write(scrub(err.model_dump_json()) + "\n")
            yield err
            if isinstance(exc, TooWeakToPlay) and not polled and not self._stop and poll_on(self.params):
                # The guards ended the debate early; the candidates it made are still put to the
                # personas, so no crux of the run keeps sides the poll never asked about.
                polled = True
                async for polled_event in run_poll(self.ctx, self.engine):
                    yield record(polled_event)
        finally:
            # An engine that saw ctx.cancelled and returned early is not complete either.
            self.result.complete = finished and not self.ctx.cancelled and self.result.error is None
            self.result.usage = self.ledger.usage()
            self.result.llm_calls = self.ledger.snapshot()
            # The backend that answered ("replay" only when a cassette answered every call).
            self.result.backend = run_backend(self.result.llm_calls, self.result.backend)
            self.result.duration_s = round(time.perf_counter() - started, 4)
            # Camps disjoint, crux sides true, names not ids, resolved cards that agree.
            tidy_sides(self.result, self._names)
            # Per-debate metrics; run_metrics never raises, so a metric bug cannot lose a result.
            self.result.metrics = run_metrics(self.result, self.personas)
            if log is not None:
                log.close()
            close = getattr(self.ledger.backend, "aclose", None)
            if self._owns_backend and close is not None:
                await close()


def _collect_turn(result: DebateResult, event: DebateEvent) -> None:
    """Every utterance event also lands in the transcript (engines need not do it twice)."""
    if isinstance(event, DialogueTurnEvent | AgentTurn):
        result.transcript.append(event.turn)
    elif isinstance(event, MessagePosted | CruxMessage):
        result.transcript.append(event.message)


async def run_debate(config: DebateConfig, **kwargs: object) -> DebateResult:
    """Run a debate to the end (or to cancellation) and return its result."""
    run = DebateRun(config, **kwargs)  # type: ignore[arg-type]
    try:
        async for _ in run.events():
            pass
    except (asyncio.CancelledError, KeyboardInterrupt):
        run.result.complete = False
    return run.result


def run_debate_sync(config: DebateConfig, **kwargs: object) -> DebateResult:
    """Blocking form of :func:`run_debate` for scripts and the CLI."""
    return asyncio.run(run_debate(config, **kwargs))
