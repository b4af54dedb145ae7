"""The live debate console for JupyterLab: ``DebateConsole()``.

It is the workbench's form of the seeds' web UI: pick a deck and its personas, a topic, an
engine, a backend and a seed; press run; the transcript streams as events arrive, with live
IN/OUT/UNDEC counts, crux cards as they post and the cost so far; stop ends the debate at
its next event (the partial result is kept, ``complete=False``).

The event handling (:meth:`DebateConsole.handle`) is plain state updates, testable without a
browser or a kernel: feed it events and read :attr:`DebateConsole.state` or the widgets.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import ipywidgets as w

from crux_lab.models import (
    AgentTurn,
    CruxCard,
    CruxCardPosted,
    CruxMessage,
    CruxProposed,
    DCGUpdate,
    DebateComplete,
    DebateEvent,
    DebateResult,
    DialogueTurn,
    DialogueTurnEvent,
    EngineComplete,
    EngineError,
    ErrorEvent,
    GraphUpdate,
    GraphUpdated,
    MessagePosted,
    PhaseStart,
    RoundStart,
    Usage,
)
from crux_lab.viz._text import esc
from crux_lab.viz.framework import labelling_of
from crux_lab.viz.transcript import crux_cards_html, transcript_html

BACKENDS = ("simulated", "auto", "anthropic", "replay")
TRANSCRIPT_TAIL = 60  # turns shown live; the full transcript is in the result


@dataclass
class ConsoleState:
    """What the console shows, updated event by event (runtime only)."""

    turns: list[DialogueTurn] = field(default_factory=list)
    cards: list[CruxCard] = field(default_factory=list)
    proposed: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: {"IN": 0, "OUT": 0, "UNDEC": 0})
    disputes: int = 0
    phase: str = ""
    cost_usd: float = 0.0
    calls: int = 0
    events: int = 0
    errors: list[str] = field(default_factory=list)
    finished: bool = False


class DebateConsole:
    """An ipywidgets console that runs one debate at a time and streams it."""

    def __init__(self, deck: str | None = None, *, max_turns: int = 16) -> None:
        from crux_lab.engines import available
        from crux_lab.personas.loader import load_decks

        self.decks = {d.id: d for d in load_decks()}
        deck_ids = list(self.decks)
        self.state = ConsoleState()
        self.run: Any = None
        self.result: DebateResult | None = None
        self.task: asyncio.Future[Any] | None = None
        self.deck = w.Dropdown(options=deck_ids, value=deck or (deck_ids[0] if deck_ids else None), description="deck")
        self.personas = w.SelectMultiple(options=[], description="personas", rows=5)
        self.topic = w.Combobox(options=[], description="topic", ensure_option=False, layout=w.Layout(width="90%"))
        self.engine = w.Dropdown(options=list(available()), description="engine")
        self.backend = w.Dropdown(options=list(BACKENDS), value="simulated", description="backend")
        self.seed = w.IntText(value=0, description="seed")
        self.max_turns = w.BoundedIntText(value=max_turns, min=1, max=500, description="max turns")
        self.run_button = w.Button(description="run", button_style="success", icon="play")
        self.stop_button = w.Button(description="stop", button_style="danger", icon="stop", disabled=True)
        self.status = w.HTML("ready")
        self.counts = w.HTML()
        self.cost = w.HTML()
        self.transcript = w.HTML(layout=w.Layout(max_height="480px", overflow="auto", border="1px solid #ddd"))
        self.cards = w.HTML()
        self.deck.observe(self._deck_changed, names="value")
        self.run_button.on_click(lambda _b: self.start())
        self.stop_button.on_click(lambda _b: self.stop())
        self._deck_changed()
        self._render()
        self.widget = w.VBox([
            w.HBox([self.deck, self.engine, self.backend]),
            w.HBox([self.personas, w.VBox([self.seed, self.max_turns])]),
            self.topic,
            w.HBox([self.run_button, self.stop_button, self.status]),
            w.HBox([self.counts, self.cost]),
            self.transcript,
            w.HTML("<b>crux cards</b>"),
            self.cards,
        ])

    # -- widget plumbing ------------------------------------------------------------------

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def _deck_changed(self, _change: Any = None) -> None:
        deck = self.decks.get(self.deck.value) if self.deck.value else None
        self.personas.options = list(deck.persona_ids) if deck else []
        self.personas.value = tuple(deck.persona_ids[:2]) if deck else ()
        self.topic.options = list(deck.topics) if deck else []
        self.topic.value = deck.topics[0] if deck and deck.topics else ""

    # -- events -----------------------------------------------------------------------------

    def reset(self) -> None:
        self.state = ConsoleState()
        self.result = None
        self._render()

    def handle(self, event: DebateEvent, usage: Usage | None = None) -> None:
        """Apply one event to the console's state and widgets (``usage`` = the ledger so far)."""
        s = self.state
        s.events += 1
        if isinstance(event, DialogueTurnEvent | AgentTurn):
            s.turns.append(event.turn)
        elif isinstance(event, MessagePosted | CruxMessage):
            s.turns.append(event.message)
        elif isinstance(event, GraphUpdated):
            s.counts = {"IN": event.in_count, "OUT": event.out_count, "UNDEC": event.undec_count}
        elif isinstance(event, GraphUpdate):
            labels = [v.value for v in labelling_of(event.graph).values()]
            s.counts = {k: labels.count(k) for k in ("IN", "OUT", "UNDEC")}
        elif isinstance(event, DCGUpdate):
            s.disputes = len(event.dcg.disputes)
        elif isinstance(event, CruxCardPosted):
            s.cards.append(event.card)
        elif isinstance(event, CruxProposed):
            s.proposed.append(event.statement)
        elif isinstance(event, PhaseStart):
            s.phase = event.name
        elif isinstance(event, RoundStart):
            s.phase = f"round {event.round_number}" + (f": {event.aspect.label}" if event.aspect else "")
        elif isinstance(event, EngineError | ErrorEvent):
            s.errors.append(event.error)
        elif isinstance(event, EngineComplete | DebateComplete):
            s.finished = True
        if usage is not None:
            s.cost_usd, s.calls = usage.cost_usd, usage.calls
        self._render(event.type)

    def _render(self, last: str = "") -> None:
        s = self.state
        c = s.counts
        self.counts.value = (
            f'<span style="color:#1a9850"><b>IN {c["IN"]}</b></span> · '
            f'<span style="color:#d73027"><b>OUT {c["OUT"]}</b></span> · '
            f'<span style="color:#777"><b>UNDEC {c["UNDEC"]}</b></span>'
            + (f" · disputes {s.disputes}" if s.disputes else "")
            + (f" · proposed cruxes {len(s.proposed)}" if s.proposed else "")
        )
        self.cost.value = f"&nbsp; cost so far <b>${s.cost_usd:.4f}</b> ({s.calls} calls)"
        tail = s.turns[-TRANSCRIPT_TAIL:]
        self.transcript.value = transcript_html(tail).html if tail else "<i>(no turns yet)</i>"
        self.cards.value = crux_cards_html(s.cards).html
        if s.errors:
            self.status.value = f'<span style="color:#d73027">error: {esc(s.errors[-1])}</span>'
        elif last:
            self.status.value = f"{esc(s.phase)} · {s.events} events · {len(s.turns)} turns · last: {esc(last)}"

    # -- running ----------------------------------------------------------------------------

    def config(self) -> Any:
        from crux_lab.workbench import debate_config

        return debate_config(self.topic.value, list(self.personas.value), self.engine.value, self.backend.value,
                             int(self.seed.value), int(self.max_turns.value), deck=self.deck.value)

    async def consume(self, run: Any) -> DebateResult:
        """Stream ``run`` (a :class:`~crux_lab.runner.DebateRun`) into the console."""
        self.run = run
        self.run_button.disabled, self.stop_button.disabled = True, False
        try:
            async for event in run.events():
                self.handle(event, run.ledger.usage())
                # Yield to the kernel's loop after every event, so a click on stop (a comm
                # message) is handled even when the backend answers without ever suspending.
                await asyncio.sleep(0)
        except Exception as exc:  # shown in the console, kept in the result
            run.result.error = f"{type(exc).__name__}: {exc}"
            self.state.errors.append(run.result.error)
            self._render("error")
        finally:
            self.run_button.disabled, self.stop_button.disabled = False, True
        self.result = run.result
        done = "complete" if run.result.complete else "stopped (incomplete)"
        if not self.state.errors:
            self.status.value = f"{done} · run {esc(run.run_id)} · {len(self.state.turns)} turns"
        return run.result

    def start(self) -> asyncio.Future[Any] | DebateResult | None:
        """Start a debate from the form. In a kernel it runs as a task on the running loop (the
        UI stays live); elsewhere it runs to the end and returns the result."""
        from crux_lab.runner import DebateRun

        self.reset()
        try:
            run = DebateRun(self.config())
        except Exception as exc:  # bad form input: say so in the console
            self.state.errors.append(str(exc))
            self._render("error")
            return None
        self.run = run
        self.run_button.disabled, self.stop_button.disabled = True, False
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.consume(run))
        self.task = loop.create_task(self.consume(run))
        return self.task

    def stop(self) -> None:
        """Stop the running debate at its next event."""
        if self.run is not None:
            self.run.stop()
            self.status.value = "stopping…"
