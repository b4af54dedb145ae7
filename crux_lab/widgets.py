"""The live debate console for JupyterLab: ``DebateConsole()``.

It is the workbench's debate page: pick a deck and its personas, a topic, an
engine, a backend (any registered one: with ``openai``, a server URL, filled from a running
``crux-lab local-model``, its model and the structured-output mode) and a seed; press run; the transcript streams as events arrive, with live
IN/OUT/UNDEC counts, crux cards as they post and the cost so far; stop ends the debate at
its next event (the partial result is kept, ``complete=False``).

Console runs are ordinary runs: when a debate ends, its run folder is written to the runs
folder (``runs/`` or ``$CRUX_LAB_RUNS``) and ingested into DuckDB; when another process holds
the database, the run stays queued in the runs folder for ``crux-lab db ingest``. The console
then offers "open report", which writes the run's offline HTML report and links to it.

The event handling (:meth:`DebateConsole.handle`) is plain state updates, testable without a
browser or a kernel: feed it events and read :attr:`DebateConsole.state` or the widgets.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import ipywidgets as w

from crux_lab import backends
from crux_lab.engines import ENGINES, available
from crux_lab.engines.crux_room.events import CruxRoomSpawning, RoundStart
from crux_lab.engines.dialogue.events import PhaseStart
from crux_lab.llm import BackendUnavailable, UnknownBackend, resolve_backend_name
from crux_lab.local_model.server import ServerState, pid_alive, read_state
from crux_lab.models.accounting import Usage
from crux_lab.models.domain import CruxCard, DCGState, DialogueTurn
from crux_lab.models.events import (
    AgentTurn,
    CruxCardPosted,
    CruxMessage,
    CruxProposed,
    DCGUpdate,
    DebateComplete,
    DebateEvent,
    DialogueTurnEvent,
    EngineComplete,
    EngineError,
    ErrorEvent,
    GraphUpdate,
    GraphUpdated,
    MessagePosted,
)
from crux_lab.models.result import DebateResult
from crux_lab.personas.loader import load_decks
from crux_lab.report import ReportError, reports_dir, run_report
from crux_lab.runner import DebateRun
from crux_lab.runs import save_runs
from crux_lab.tiers import STRUCTURED_MODES
from crux_lab.viz._text import esc
from crux_lab.viz.framework import labelling_of
from crux_lab.viz.transcript import (
    camps_html,
    crux_cards_html,
    cruxes_html,
    disputes_html,
    poll_html,
    regime_text,
    transcript_html,
)
from crux_lab.workbench import debate_config, persona_names

TRANSCRIPT_TAIL = 60  # turns shown live; the full transcript is in the result
LINK_STYLE = "color:#1a5fb4;text-decoration:underline;font-weight:bold"


def backend_choices() -> list[str]:
    """The backend dropdown: the offline one first (the default), then auto, then every other
    registered backend (plug-ins' included)."""
    names = [n for n in backends.names() if n not in (backends.OFFLINE, backends.AUTO)]
    return [backends.OFFLINE, backends.AUTO, *names]


def engine_structure(engine: str) -> str:
    """What ``engine`` builds, known before its first event (its ``structure``): "graph"
    (IN/OUT/UNDEC), "dcg" (disputes, stances, reasons), "rooms" (disagreements, crux rooms,
    cards); "" for the others (blackboard engines, one-call baselines), which show their cruxes
    when they finish."""
    try:
        return str(getattr(ENGINES.get(engine), "structure", "") or "")
    except LookupError:
        return ""


def local_model() -> ServerState | None:
    """The server a running ``crux-lab local-model`` recorded, or None."""
    state = read_state()
    return state if state is not None and pid_alive(state.pid) else None


@dataclass
class ConsoleState:
    """What the console shows, updated event by event (runtime only)."""

    turns: list[DialogueTurn] = field(default_factory=list)
    cards: list[CruxCard] = field(default_factory=list)
    proposed: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: {"IN": 0, "OUT": 0, "UNDEC": 0})
    # What the engine builds, set by the first structure event: "graph" (IN/OUT/UNDEC),
    # "dcg" (disputes, stances, reasons) or "rooms" (disagreements, crux rooms, cards).
    structure: str = ""
    disputes: int = 0
    stances: int = 0
    reasons: int = 0
    dcg: DCGState = field(default_factory=DCGState)  # the latest dispute graph (dcg)
    disagreements: int = 0
    rooms: int = 0
    phase: str = ""
    cost_usd: float = 0.0
    calls: int = 0
    events: int = 0
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # the debate went on without it
    finished: bool = False
    saved: str = ""  # where the finished run went (folder, database or queue)


class DebateConsole:
    """An ipywidgets console that runs one debate at a time and streams it."""

    def __init__(self, deck: str | None = None, *, engine: str | None = None, max_turns: int = 16,
                 runs_dir: str | Path | None = None, db: str | Path | None = None) -> None:
        self.runs_dir, self.db = runs_dir, db
        self.run_folder: Path | None = None
        self.report_path: Path | None = None
        self.decks = {d.id: d for d in load_decks()}
        self.names: dict[str, str] = {}
        deck_ids = list(self.decks)
        self.state = ConsoleState()
        self.run: Any = None
        self.result: DebateResult | None = None
        self.task: asyncio.Future[Any] | None = None
        self.deck = w.Dropdown(options=deck_ids, value=deck or (deck_ids[0] if deck_ids else None), description="deck")
        self.personas = w.SelectMultiple(options=[], description="personas", rows=5)
        self.topic = w.Combobox(options=[], description="topic", ensure_option=False, layout=w.Layout(width="90%"))
        engines = list(available())
        self.engine = w.Dropdown(options=engines, value=engine if engine in engines else engines[0], description="engine")
        self.backend = w.Dropdown(options=backend_choices(), value=backends.OFFLINE, description="backend")
        # A backend that talks to a server (openai): its URL, its model and the structured-output
        # mode, shown only for such a backend; filled from a running `crux-lab local-model`.
        server = local_model()
        self.base_url = w.Text(value=server.base_url if server else "", description="base URL",
                               placeholder="http://127.0.0.1:8080/v1", layout=w.Layout(width="45%"))
        self.model = w.Text(value=server.model if server else "", description="model",
                            placeholder="the one model the server lists")
        self.structured = w.Dropdown(options=list(STRUCTURED_MODES), value=STRUCTURED_MODES[0], description="structured")
        self.server_box = w.HBox([self.base_url, self.model, self.structured])
        self.seed = w.IntText(value=0, description="seed")
        self.max_turns = w.BoundedIntText(value=max_turns, min=1, max=500, description="max turns")
        self.run_button = w.Button(description="run", button_style="success", icon="play")
        self.stop_button = w.Button(description="stop", button_style="danger", icon="stop", disabled=True)
        self.status = w.HTML("ready")
        self.counts = w.HTML()
        self.cost = w.HTML()
        # column-reverse keeps the scroll position at the bottom: the newest turn stays in view.
        self.transcript = w.HTML(layout=w.Layout(max_height="480px", overflow="auto", border="1px solid #ddd",
                                                 display="flex", flex_flow="column-reverse"))
        self.cards = w.HTML()  # the findings: disputes, cruxes, cards and camps, as the engine makes them
        self.report_button = w.Button(description="open report", icon="file", disabled=True, layout=w.Layout(width="auto", min_width="130px"),
                                      tooltip="Write this run's offline HTML report and link to it")
        self.report_link = w.HTML()
        self.report_button.on_click(lambda _b: self.open_report())
        self.deck.observe(self._deck_changed, names="value")
        self.engine.observe(self._engine_changed, names="value")
        self.backend.observe(self._backend_changed, names="value")
        self.run_button.on_click(lambda _b: self.start())
        self.stop_button.on_click(lambda _b: self.stop())
        self._deck_changed()
        self._backend_changed()
        self.reset()
        self.widget = w.VBox([
            w.HBox([self.deck, self.engine, self.backend]),
            self.server_box,
            w.HBox([self.personas, w.VBox([self.seed, self.max_turns])]),
            self.topic,
            w.HBox([self.run_button, self.stop_button, self.report_button, self.status]),
            self.report_link,
            w.HBox([self.counts, self.cost]),
            self.transcript,
            w.HTML("<b>findings</b>"),
            self.cards,
        ])

    # -- widget plumbing ------------------------------------------------------------------

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def _deck_changed(self, _change: Any = None) -> None:
        deck = self.decks.get(self.deck.value) if self.deck.value else None
        self.names.update(persona_names(deck.persona_ids if deck else []))
        self.personas.options = [(self.names[p], p) for p in deck.persona_ids] if deck else []
        self.personas.value = tuple(deck.persona_ids[:2]) if deck else ()
        self.topic.options = list(deck.topics) if deck else []
        self.topic.value = deck.topics[0] if deck and deck.topics else ""

    def backend_spec(self) -> backends.BackendSpec | None:
        """The chosen backend's registry entry (``auto`` resolved), None if it is not known."""
        try:
            return backends.spec(resolve_backend_name(str(self.backend.value)))
        except (UnknownBackend, KeyError):
            return None

    def _backend_changed(self, _change: Any = None) -> None:
        spec = self.backend_spec()
        self.base_url.layout.display = "" if spec is not None and spec.base_url else "none"
        self.model.layout.display = "" if spec is not None and spec.base_url else "none"
        self.structured.layout.display = "" if spec is not None and spec.structured else "none"
        self.server_box.layout.display = "" if spec is not None and (spec.base_url or spec.structured) else "none"
        if not self.run_button.disabled:
            self._render()

    def _engine_changed(self, _change: Any = None) -> None:
        if not self.run_button.disabled:  # not while a debate runs
            self.reset()

    # -- events -----------------------------------------------------------------------------

    def reset(self) -> None:
        self.state = ConsoleState(structure=engine_structure(str(self.engine.value)))
        self.result = None
        self.run_folder = self.report_path = None
        self.report_button.disabled = True
        self.report_link.value = ""
        self.status.value = "ready"  # never the previous run's status
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
            s.structure = "graph"
            s.counts = {"IN": event.in_count, "OUT": event.out_count, "UNDEC": event.undec_count}
        elif isinstance(event, GraphUpdate):
            s.structure = "graph"
            labels = [v.value for v in labelling_of(event.graph).values()]
            s.counts = {k: labels.count(k) for k in ("IN", "OUT", "UNDEC")}
        elif isinstance(event, DCGUpdate):
            s.structure = "dcg"
            s.disputes, s.stances, s.reasons = len(event.dcg.disputes), len(event.dcg.stances), len(event.dcg.reasons)
            s.dcg = event.dcg
        elif event.type == "disagreement_detected":
            s.structure = s.structure or "rooms"
            s.disagreements += 1
        elif isinstance(event, CruxRoomSpawning):
            s.structure = s.structure or "rooms"
            s.rooms += 1
        elif isinstance(event, CruxCardPosted):
            s.structure = s.structure or "rooms"
            s.cards.append(event.card)
        elif isinstance(event, CruxProposed):
            s.proposed.append(event.statement)
        elif isinstance(event, PhaseStart):
            s.phase = event.name
        elif isinstance(event, RoundStart):
            s.phase = f"round {event.round_number}" + (f": {event.aspect.label}" if event.aspect else "")
        elif isinstance(event, EngineError) and event.level == "warning":
            s.warnings.append(event.error)
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
        if s.structure == "dcg":
            counts = f"<b>disputes {s.disputes}</b> · stances {s.stances} · reasons {s.reasons}"
        elif s.structure == "rooms":
            counts = f"<b>crux cards {len(s.cards)}</b> · crux rooms {s.rooms} · disagreements detected {s.disagreements}"
        elif s.structure == "graph":
            counts = (f'<span style="color:#1a9850"><b>IN {c["IN"]}</b></span> · '
                      f'<span style="color:#d73027"><b>OUT {c["OUT"]}</b></span> · '
                      f'<span style="color:#777"><b>UNDEC {c["UNDEC"]}</b></span>')
        else:  # an engine without a live structure: turns now, cruxes when it finishes
            found = f" · cruxes {len(self.result.cruxes)}" if self.result is not None else ""
            counts = f"<b>turns {len(s.turns)}</b>{found}"
        self.counts.value = counts + (f" · proposed cruxes {len(s.proposed)}" if s.proposed else "")
        spec = self.backend_spec()
        modelled = " (modelled, not billed)" if spec is not None and not spec.billed else ""
        self.cost.value = f"&nbsp; cost so far <b>${s.cost_usd:.4f}</b>{modelled} ({s.calls} calls)"
        tail = s.turns[-TRANSCRIPT_TAIL:]
        more = f"<div><i>… {len(s.turns) - len(tail)} earlier turns (all in the report)</i></div>" if len(s.turns) > len(tail) else ""
        self.transcript.value = more + transcript_html(tail, names=self.names).html if tail else "<i>(no turns yet)</i>"
        self.cards.value = self.findings_html()
        if s.errors:
            self.status.value = f'<span style="color:#d73027">error: {esc(s.errors[-1])}</span>'
        elif last:
            self.status.value = f"{esc(s.phase)} · {s.events} events · {len(s.turns)} turns · last: {esc(last)}" + self._warned()

    def _warned(self) -> str:
        """The warnings so far, after the status: the debate went on without what they name."""
        w = self.state.warnings
        if not w:
            return ""
        return (f' · <span style="color:#b35806" title="{esc(chr(10).join(w))}">{len(w)} warning{"s" * (len(w) > 1)} '
                f"(the debate went on), last: {esc(w[-1])}</span>")

    def findings_html(self) -> str:
        """What the engine found, in its own shape: dcg's disputes with their two sides, the
        cruxes with who holds which side, panel's crux cards; when the run ends, its cruxes,
        cards, camps and regime as saved, and what the poll made of the candidates."""
        s, names = self.state, self.names
        parts: list[str] = []
        r = self.result
        if r is not None:
            parts.append(f"<div><b>regime</b>: {esc(regime_text(r))}</div>")
            parts.append(camps_html(r.camps, r.extensions).html)
        if s.structure == "dcg" or s.dcg.disputes:
            parts.append(f"<div><b>disputes ({len(s.dcg.disputes)})</b></div>" + disputes_html(s.dcg, names=names).html)
        if r is not None:
            parts.append(f"<div><b>cruxes ({len(r.cruxes)})</b></div>" + cruxes_html(r.cruxes, names=names).html)
        elif s.proposed:
            parts.append("<div><b>proposed cruxes</b></div><ul>" + "".join(f"<li>{esc(p)}</li>" for p in s.proposed) + "</ul>")
        cards = r.crux_cards if r is not None else s.cards
        if cards or s.structure == "rooms":
            parts.append(f"<div><b>crux cards ({len(cards)})</b></div>" + crux_cards_html(cards, names=names).html)
        if r is not None and r.poll is not None:
            parts.append("<div><b>the poll</b> (each persona asked alone)</div>" + poll_html(r, names=names).html)
        if not parts:
            parts.append("<div><i>(nothing found yet)</i></div>")
        return "".join(parts)

    # -- running ----------------------------------------------------------------------------

    def config(self) -> Any:
        """The debate of the form. A backend with model settings (a server) is asked first: one
        that does not answer raises :class:`~crux_lab.llm.BackendUnavailable` (one line)."""
        spec = self.backend_spec()
        url = structured = None
        models: dict[str, str] = {}
        if spec is not None and spec.check is not None:
            spec.check(None)  # what it needs before a run (an API key)
        if spec is not None and spec.settings is not None:
            model = str(self.model.value).strip() if spec.base_url else ""
            chosen = {"strong": model, "fast": model} if model else {}
            mode = str(self.structured.value) if spec.structured else None
            models, url = spec.settings(chosen, str(self.base_url.value).strip() or None if spec.base_url else None, mode)
            structured = mode
        config = debate_config(self.topic.value, list(self.personas.value), self.engine.value, self.backend.value,
                               int(self.seed.value), int(self.max_turns.value), deck=self.deck.value,
                               base_url=url, structured=structured)
        return config.model_copy(update={"models": models}) if models else config

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
        self.save(run.result)
        self._render("finished")
        done = "complete" if run.result.complete else "stopped (incomplete)"
        if not self.state.errors:
            self.status.value = (f"{done} · run {esc(run.run_id)} · {len(self.state.turns)} turns · "
                                 f"{esc(self.state.saved)}{self._warned()}")
        return run.result

    def save(self, result: DebateResult) -> None:
        """Write the run folder and ingest it; a busy database leaves it queued in the runs folder."""
        try:
            saved = save_runs([result], self.runs_dir, db=self.db)
        except OSError as exc:
            self.state.saved = f"not saved: {exc}"
            self.state.errors.append(f"the run could not be saved: {exc}")
            self._render("error")
            return
        self.run_folder = saved.run_dirs[0]
        if saved.busy:
            self.state.saved = (f"saved to {self.run_folder}; the database is busy (another process holds it), "
                                f"so the run is queued there: `crux-lab db ingest` loads it")
        elif saved.problem is not None:
            self.state.saved = f"saved to {self.run_folder}; not ingested ({saved.problem}); `crux-lab db ingest` retries"
        else:
            self.state.saved = f"saved to {self.run_folder} and the database"
        self.report_button.disabled = False

    def open_report(self) -> Path | None:
        """Write the finished run's offline HTML report and show a link that opens it in a new
        browser tab, served by the Jupyter server this console runs under (wherever it was
        started: a report outside the server's folder is written under the notebook's folder).
        The link appears only once the report is written, so it never opens an empty page."""
        if self.result is None or self.run_folder is None:
            self.report_link.value = "<i>no finished run yet: run a debate first</i>"
            return None
        self.report_link.value = "<i>writing the report…</i>"
        server = jupyter_server()
        target = reports_dir() / f"{self.result.run_id}.html"
        if server is not None and served_path(target, server) is None:
            target = Path.cwd() / "reports" / target.name
        try:
            info = run_report(str(self.run_folder), target, db=self.db)
        except (ReportError, LookupError, OSError) as exc:
            self.report_link.value = f'<span style="color:#d73027">report failed: {esc(exc)}</span>'
            return None
        self.report_path = info.path
        href = served_path(info.path, server) if server is not None else None
        where = f"<code>{esc(info.path)}</code>"
        if href is None:  # no Jupyter server (e.g. another front end): the file itself
            href = info.path.resolve().as_uri()
            where += " (if the link does not open, open this file in a browser)"
        self.report_link.value = (f'<a class="cl-report-link" href="{esc(href)}" target="_blank" rel="noopener" '
                                  f'style="{LINK_STYLE}">open the report of this run</a> '
                                  f"({info.size_bytes / 1e6:.1f} MB, offline, opens in a new tab) · {where}")
        return info.path

    def start(self) -> asyncio.Future[Any] | DebateResult | None:
        """Start a debate from the form. In a kernel it runs as a task on the running loop (the
        UI stays live); elsewhere it runs to the end and returns the result."""
        self.reset()
        try:
            run = DebateRun(self.config())
        except BackendUnavailable as exc:  # a server that does not answer, a missing key: one line
            self.state.errors.append(str(exc).strip().splitlines()[0])
            self._render("error")
            return None
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


def jupyter_server() -> dict[str, Any] | None:
    """The Jupyter server this kernel runs under (its ``jpserver-*.json`` info: ``root_dir``,
    ``base_url``, ``url``, ``token``), or None outside one. With several servers running, the
    one that lists this kernel; else the one whose folder holds the current folder."""
    try:
        from jupyter_server.serverapp import list_running_servers
    except ImportError:
        return None
    servers = list(list_running_servers())
    here = [s for s in servers if served_path(Path.cwd(), s) is not None] or servers
    if len(here) <= 1:
        return here[0] if here else None
    kernel = _kernel_id()
    for s in here:
        if kernel and kernel in _kernel_ids(s):
            return s
    return max(here, key=lambda s: len(str(s.get("root_dir", ""))))


def served_path(path: Path, server: dict[str, Any]) -> str | None:
    """The URL path at which ``server`` serves ``path`` as a file (new tab), or None when the
    file is outside the server's folder.

    >>> served_path(Path("/w/reports/a b.html"), {"root_dir": "/w", "base_url": "/lab-x/"})
    '/lab-x/files/reports/a%20b.html'
    >>> served_path(Path("/elsewhere/a.html"), {"root_dir": "/w", "base_url": "/"}) is None
    True
    """
    root = Path(str(server.get("root_dir", ""))).expanduser()
    try:
        rel = path.resolve().relative_to(root.resolve())
    except ValueError:
        return None
    return str(server.get("base_url", "/")).rstrip("/") + "/files/" + quote(rel.as_posix())


def _kernel_id() -> str:
    try:
        from ipykernel.connect import get_connection_file

        return Path(get_connection_file()).stem.removeprefix("kernel-")
    except Exception:  # not in a kernel
        return ""


def _kernel_ids(server: dict[str, Any]) -> set[str]:
    url = str(server.get("url", "")).rstrip("/") + "/api/kernels"
    request = urllib.request.Request(url, headers={"Authorization": f"token {server.get('token', '')}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:  # noqa: S310 (the local server)
            return {str(k.get("id")) for k in json.loads(reply.read())}
    except (OSError, ValueError):
        return set()
