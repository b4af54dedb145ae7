"""Run a sweep: cells -> papermill (local processes or Dask) -> run folders -> one ingest.

**The run folders are the truth.** A cell is *done* when its run folder is complete and valid
(:func:`crux_lab.store.runfiles.run_folder_status`); a done cell is never run again, and it is
ingested whenever the target database lacks it (a new database, a deleted manifest, an
ingest that failed). ``experiments/<name>/manifest.json`` only records what each attempt did
(status, error, timings) for ``crux-lab sweep --status``; deleting it loses no work.

**One writer, briefly.** Only the coordinating process writes to DuckDB, and it holds the
write lock only while it ingests one finished cell (one transaction: all of the run or
nothing). Between ingests the database is free for readers (``db query``, notebooks,
reports); an ingest that finds a reader holding the file waits for it (up to
``INGEST_WAIT_S``), and if it is still busy the cell stays done-on-disk and is ingested by
the next sweep or ``crux-lab db ingest``.

**Ctrl-C stops within seconds, whatever the kernels are doing.** With the local executor each
cell runs in its own worker process (``python -m crux_lab.sweep.worker``) in a session of its
own, so the terminal's SIGINT reaches only the coordinator. The coordinator turns SIGINT (and
SIGTERM) into a flag plus a wake-up byte, never into an exception at an arbitrary line: its
loop wakes at once, launches nothing more, and ends every running cell by freezing its worker
process tree (SIGSTOP, so a kernel being started cannot escape), then killing all of it. The
same path runs whether the kernels are starting, running, or the coordinator is between
cells; finished cells stay ingested and the interrupted ones are marked ``incomplete``.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import wait as wait_fds
from pathlib import Path
from types import FrameType
from typing import Any, Literal

from crux_lab.scrub import scrub, scrub_data, scrub_file
from crux_lab.store.db import DatabaseLocked
from crux_lab.store.runfiles import run_folder_status
from crux_lab.sweep.spec import KERNEL_START_S, Cell, SweepSpec

CellStatus = Literal["done", "failed", "incomplete", "pending"]
# Parameters the runner adds to every cell (the notebook may or may not declare them).
INJECTED = ("run_id", "run_dir", "sweep")
# Quiet kernels: their log lines (start-up warnings such as "running over TCP without
# encryption", a KeyboardInterrupt logged at shutdown) would interleave with the progress bar
# on every cell; cell errors still reach papermill.
KERNEL_ARGS = ("--IPKernelApp.log_level=CRITICAL",)
# A cell whose kernel died, or did not answer within the sweep's kernel_start_s, before
# replying to its first request is started again, this often in all.
KERNEL_STARTS = 2
KERNEL_DIED = "Kernel died before replying to kernel_info"  # jupyter_client's words
KERNEL_SILENT = "Kernel didn't respond in"  # ... N seconds (the start bound passed)
# How long an ingest waits for readers to release the database before leaving the cell
# done-on-disk for a later ingest.
INGEST_WAIT_S = 120.0
# Grace between freezing and killing a cell's process tree (the kill itself is SIGKILL).
KILL_WAIT_S = 5.0

CheckDone = Callable[[Path], "str | None"]
INTERRUPTED_INGEST = "interrupted during ingest (rolled back): rerun the sweep to ingest it"


class NotebookParameterError(ValueError):
    """A notebook without a 'parameters' cell, or a parameter the notebook does not declare."""


@dataclass
class CellOutcome:
    run_id: str
    status: CellStatus
    params: dict[str, Any]
    error: str | None = None
    wall_s: float = 0.0
    kernel_s: float = 0.0  # kernel start-up and papermill overhead (wall minus cell time)
    cells_s: float = 0.0  # time spent in notebook cells
    debate_s: float = 0.0  # of which the debate itself (the run's duration_s)
    ingest_s: float = 0.0
    notebook: str = ""
    run_dir: str = ""


@dataclass
class SweepReport:
    name: str
    outcomes: list[CellOutcome] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # done on disk and already in the database
    caught_up: list[str] = field(default_factory=list)  # done on disk, ingested now without running
    interrupted: bool = False
    wall_s: float = 0.0

    def count(self, status: CellStatus) -> int:
        return sum(1 for o in self.outcomes if o.status == status)


def notebook_parameters(notebook: Path) -> dict[str, Any]:
    """Declared parameters of a notebook (papermill's ``inspect_notebook``): name -> info with
    ``default`` (source text) and ``inferred_type_name``.

    Raises NotebookParameterError when the file is missing or has no cell tagged ``parameters``.
    """
    import nbformat
    import papermill

    if not notebook.is_file():
        raise NotebookParameterError(f"{notebook}: no such notebook; fix the sweep's `notebook:` path.")
    nb = nbformat.read(str(notebook), as_version=4)
    if not any("parameters" in c.get("metadata", {}).get("tags", []) for c in nb.cells):
        raise NotebookParameterError(
            f"{notebook}: no cell tagged 'parameters'. Tag the cell that sets the defaults "
            "(JupyterLab: Property Inspector -> Cell Tags -> parameters)."
        )
    params: dict[str, Any] = papermill.inspect_notebook(str(notebook))
    return params


def notebook_defaults(notebook: Path) -> dict[str, Any]:
    """The literal default values of a notebook's parameters (non-literal ones are left out)."""
    out: dict[str, Any] = {}
    for name, info in notebook_parameters(notebook).items():
        try:
            out[name] = ast.literal_eval(str(info.get("default")))
        except (ValueError, SyntaxError):
            continue
    return out


def check_parameters(notebook: Path, names: Iterable[str], injected: Iterable[str] = INJECTED) -> None:
    """Refuse parameter names the notebook does not declare (a typo would be silently ignored)."""
    declared = notebook_parameters(notebook)
    unknown = sorted(set(names) - set(declared) - set(injected))
    if unknown:
        raise NotebookParameterError(
            f"{notebook}: unknown parameter(s) {', '.join(unknown)}. "
            f"The notebook declares: {', '.join(sorted(declared))}."
        )


class KernelStartError(RuntimeError):
    """A cell's kernel did not start, in every attempt; the message holds its stderr."""


def _start_failure(exc: BaseException) -> str | None:
    """How a kernel failed to start (jupyter_client's words), or None for any other error."""
    text = str(exc)
    if KERNEL_DIED in text:
        return "it died before answering"
    if KERNEL_SILENT in text:
        return "it did not answer"
    return None


@contextlib.contextmanager
def _stderr_to(path: Path | None) -> Iterator[None]:
    """Send this process's stderr (fd 2, which a kernel it launches inherits) to ``path``."""
    if path is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.dup2(fd, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def _kill_children() -> None:
    """End every process this one started (a kernel jupyter_client could not shut down)."""
    import psutil

    for child in psutil.Process().children():
        kill_tree(child.pid, wait_s=2.0)


def _tail(path: Path | None, chars: int = 600) -> str:
    if path is None:
        return ""
    with contextlib.suppress(OSError):
        return " ".join(path.read_text(encoding="utf-8", errors="replace").split())[-chars:]
    return ""


def execute_cell(notebook: str, output: str, params: dict[str, Any], run_id: str, run_dir: str,
                 timeout_s: float, cwd: str, sweep: str = "", kernel_start_s: float = KERNEL_START_S,
                 *, stderr_dir: str = "") -> dict[str, Any]:
    """Execute one cell's notebook with papermill (runs in a worker process); returns timings.

    A kernel that has not answered within ``kernel_start_s`` (or that died first) has run
    nothing: it is killed and another is started, once; if that one does not start either,
    :class:`KernelStartError` names the cell's failure with the kernel's stderr (each
    attempt's stderr goes to ``stderr_dir/kernel-<n>.stderr`` when ``stderr_dir`` is given:
    the worker process's own stderr is then the kernel's)."""
    import nbformat
    import papermill

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    started = time.perf_counter()
    for attempt in range(1, KERNEL_STARTS + 1):
        log = Path(stderr_dir) / f"kernel-{attempt}.stderr" if stderr_dir else None
        try:
            with _stderr_to(log):
                papermill.execute_notebook(
                    notebook,
                    output,
                    parameters={**params, "run_id": run_id, "run_dir": run_dir, "sweep": sweep},
                    kernel_name="python3",
                    progress_bar=False,
                    cwd=cwd,
                    execution_timeout=int(timeout_s),
                    start_timeout=max(1, round(kernel_start_s)),
                    extra_arguments=list(KERNEL_ARGS),
                )
            break
        except RuntimeError as exc:
            # A kernel that did not start has run nothing, so starting another is safe.
            how = _start_failure(exc)
            if how is None:
                raise
            if stderr_dir:  # a worker process of its own: its only children are kernels
                _kill_children()
            if attempt == KERNEL_STARTS:
                stderr = _tail(log) or ("(empty)" if log is not None else "(not captured)")
                raise KernelStartError(
                    f"the cell's kernel did not start in {KERNEL_STARTS} attempts of up to "
                    f"{kernel_start_s:g}s each (the last time {how}); its stderr: {stderr}"
                ) from None
        finally:
            scrub_file(Path(output))  # an error output may quote a key; the notebook is kept
    wall = time.perf_counter() - started
    nb = nbformat.read(output, as_version=4)
    cells = sum(float(c.get("metadata", {}).get("papermill", {}).get("duration") or 0.0) for c in nb.cells)
    return {"wall_s": wall, "cells_s": cells, "kernel_s": max(0.0, wall - cells)}


def _error_text(exc: BaseException) -> str:
    """A short error: papermill's cell error (name, value) or the exception's last line."""
    ename, evalue = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    if ename:
        return f"{ename}: {evalue}"[-2000:]
    return f"{type(exc).__name__}: {exc}"[-2000:]


def _debate_seconds(run_dir: Path) -> float:
    try:
        return float(json.loads((run_dir / "result.json").read_text(encoding="utf-8")).get("duration_s") or 0.0)
    except (OSError, ValueError):
        return 0.0


class Manifest:
    """Per-sweep record of what each cell's last attempt did (status, error, timings), written
    atomically after every change. A record, not the truth: whether a cell is done is read
    from its run folder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cells: dict[str, dict[str, Any]] = {}
        if path.exists():
            try:
                self.cells = json.loads(path.read_text(encoding="utf-8")).get("cells", {})
            except (json.JSONDecodeError, AttributeError):
                self.cells = {}  # a damaged record: the run folders still say what is done

    def status(self, run_id: str) -> str:
        return str(self.cells.get(run_id, {}).get("status", "pending"))

    def record(self, outcome: CellOutcome) -> None:
        self.cells[outcome.run_id] = scrub_data(asdict(outcome))
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"cells": self.cells}, indent=1, default=str), encoding="utf-8")
        os.replace(tmp, self.path)


Ingest = Callable[[Path], None]


class _Stop:
    """SIGINT / SIGTERM become a flag and a byte on a pipe the coordinator's wait includes.

    No exception is raised inside the coordinator, so a signal can never land between two
    lines that must run together (a worker started but not yet recorded, a pool half shut
    down): the loop notices the flag at its next wake-up, which the byte makes immediate.
    Handlers are installed only in the main thread (signals are delivered there).
    """

    def __init__(self) -> None:
        self.requested = False
        self.signum: int | None = None
        self._r, self._w = os.pipe()
        os.set_blocking(self._w, False)
        self._previous: dict[int, Any] = {}
        self._previous_wakeup: int | None = None

    def fileno(self) -> int:
        return self._r

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous[signum] = signal.signal(signum, self._handle)
        # The C-level handler writes to this fd at once, even while Python is blocked in a
        # system call: the wait below wakes without waiting for the Python handler.
        self._previous_wakeup = signal.set_wakeup_fd(self._w, warn_on_full_buffer=False)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.request(signum)

    def request(self, signum: int = signal.SIGINT) -> None:
        self.requested = True
        self.signum = self.signum or signum
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._w, b"!")

    def restore(self) -> None:
        if self._previous_wakeup is not None:
            signal.set_wakeup_fd(self._previous_wakeup)
            self._previous_wakeup = None
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()
        os.close(self._r)
        os.close(self._w)

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` unless a stop is requested first."""
        if not self.requested:
            wait_fds([self._r], timeout=seconds)


def kill_tree(pid: int, wait_s: float = KILL_WAIT_S) -> None:
    """End process ``pid`` and every process below it, including a kernel being launched.

    Each process is frozen (SIGSTOP) *before* its children are listed, so none of them can
    start another one afterwards; then all are killed (SIGKILL) and reaped. Kernels live in
    sessions of their own (jupyter_client starts them that way), so a process-group signal
    would miss them: the tree walk does not.
    """
    import psutil

    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    frozen: list[psutil.Process] = []
    todo, seen = [root], set()
    while todo:
        proc = todo.pop()
        if proc.pid in seen:
            continue
        seen.add(proc.pid)
        try:
            proc.suspend()
            frozen.append(proc)
            todo.extend(proc.children())
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
        except psutil.AccessDenied:  # not ours: leave it alone
            continue
    for proc in frozen:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    # Dead is enough: a killed kernel is a zombie until whoever adopted it reaps it.
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        alive = []
        for proc in frozen:
            with contextlib.suppress(psutil.NoSuchProcess):
                if proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(proc)
        if not alive:
            return
        psutil.wait_procs(alive, timeout=0.02)


@dataclass
class _Running:
    """A cell executing in a worker process (runtime only)."""

    cell: Cell
    proc: subprocess.Popen[bytes]
    done_fd: int  # readable (EOF) once the worker has exited
    workspace: Path
    started: float


def _launch(cell: Cell, job_args: tuple[Any, ...], workspace: Path) -> _Running:
    """Start ``python -m crux_lab.sweep.worker`` for one cell, in a session of its own."""
    if workspace.exists():
        shutil.rmtree(workspace, ignore_errors=True)
    (workspace / "runtime").mkdir(parents=True)
    job = {"args": list(job_args), "result": str(workspace / "result.json")}
    (workspace / "job.json").write_text(json.dumps(job, default=str), encoding="utf-8")
    r, w = os.pipe()
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(workspace / "runtime"), "PYTHONUNBUFFERED": "1"}
    with (workspace / "worker.log").open("wb") as log:
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "crux_lab.sweep.worker", str(workspace / "job.json"), str(w)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                start_new_session=True, pass_fds=(w,),
            )
        finally:
            os.close(w)
    return _Running(cell, proc, r, workspace, time.perf_counter())


def _worker_result(running: _Running) -> dict[str, Any]:
    path = running.workspace / "result.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data
    except (OSError, ValueError):
        tail = ""
        with contextlib.suppress(OSError):
            tail = (running.workspace / "worker.log").read_text(encoding="utf-8", errors="replace")[-600:]
        code = running.proc.returncode
        return {"ok": False, "error": scrub(f"the cell's worker exited with code {code} before reporting: {tail.strip()}")}


def _close(running: _Running, *, keep_log: bool) -> None:
    os.close(running.done_fd)
    if keep_log:
        shutil.rmtree(running.workspace / "runtime", ignore_errors=True)
        scrub_file(running.workspace / "worker.log")
    else:
        shutil.rmtree(running.workspace, ignore_errors=True)


def run_sweep(
    spec: SweepSpec,
    *,
    ingest: Ingest,
    ingested: Collection[str] = (),
    check_done: CheckDone | None = None,
    workers: int | None = None,
    executor: str | None = None,
    on_progress: Callable[[CellOutcome], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
    on_launch: Callable[[Cell], None] | None = None,
    cwd: Path | None = None,
) -> SweepReport:
    """Run every cell that is not done; ingest each finished cell with ``ingest(run_dir)``.

    ``ingested`` holds the run ids the target database already has: a done cell missing
    from it is ingested without running. ``check_done(run_dir)`` returns None for a done
    cell, else why not (default: a complete, valid run folder). ``on_start(todo, total)`` is
    called once before the first cell; ``on_launch(cell)`` as each cell's worker starts;
    ``on_progress(outcome)`` after each cell.
    """
    stop = _Stop()
    stop.install()
    try:
        return _run_sweep(spec, ingest, set(ingested), check_done or _default_check, workers, executor,
                          on_progress, on_start, on_launch, cwd, stop)
    finally:
        stop.restore()


def _default_check(run_dir: Path) -> str | None:
    return run_folder_status(run_dir)


def cell_states(
    spec: SweepSpec, cells: list[Cell], ingested: Collection[str], check_done: CheckDone | None = None
) -> list[dict[str, Any]]:
    """What is true of each cell now: on disk (done or why not), in the database, and what
    the manifest says its last attempt did. Backs ``crux-lab sweep --status``."""
    check = check_done or _default_check
    manifest = Manifest(spec.out_dir / "manifest.json")
    states = []
    for cell in cells:
        why_not = check(spec.out_dir / "runs" / cell.run_id)
        last = manifest.cells.get(cell.run_id, {})
        if why_not is None:
            state = "ingested" if cell.run_id in ingested else "done, not ingested"
        elif last.get("status") == "failed":
            state = "failed"
        else:
            state = "pending"
        states.append({"run_id": cell.run_id, "params": cell.params, "state": state,
                       "on_disk": why_not or "done", "last_attempt": last.get("status", ""),
                       "error": last.get("error") or ""})
    return states


def _run_sweep(spec: SweepSpec, ingest: Ingest, ingested: set[str], check_done: CheckDone,
               workers: int | None, executor: str | None,
               on_progress: Callable[[CellOutcome], None] | None,
               on_start: Callable[[int, int], None] | None,
               on_launch: Callable[[Cell], None] | None,
               cwd: Path | None, stop: _Stop) -> SweepReport:
    started = time.perf_counter()
    defaults = notebook_defaults(spec.notebook)
    cells = spec.cells(defaults)
    check_parameters(spec.notebook, {k for c in cells for k in c.params})
    out = spec.out_dir
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(out / "manifest.json")
    report = SweepReport(name=spec.name)
    done_on_disk = {c.run_id for c in cells if check_done(runs / c.run_id) is None}
    todo = [c for c in cells if c.run_id not in done_on_disk]
    if on_start:
        on_start(len(todo), len(cells))

    def record(outcome: CellOutcome) -> None:
        manifest.record(outcome)
        report.outcomes.append(outcome)
        if on_progress:
            on_progress(outcome)

    def ingest_cell(run_dir: Path) -> str | None:
        """Ingest one run folder, waiting for readers to let go; None, or the error."""
        deadline = time.monotonic() + INGEST_WAIT_S
        pause = 0.05
        while True:
            try:
                ingest(run_dir)  # one transaction: all of the run or nothing
                return None
            except DatabaseLocked as exc:
                if stop.requested or time.monotonic() > deadline:
                    return scrub(f"ingest failed, the database stayed busy: {exc} The run folder is done; "
                                 f"the next sweep (or `crux-lab db ingest {run_dir}`) ingests it.")
                stop.sleep(pause)
                pause = min(pause * 2, 1.0)
            except KeyboardInterrupt:  # the ingest rolled back; the run folder is intact
                stop.request()
                return INTERRUPTED_INGEST
            except Exception as exc:  # noqa: BLE001 - recorded, the sweep goes on
                return scrub(f"ingest failed: {exc}")

    try:
        # Done on disk but missing from the database: ingest it, never run it again.
        for cell in cells:
            if stop.requested:
                break
            if cell.run_id in done_on_disk and cell.run_id not in ingested:
                error = ingest_cell(runs / cell.run_id)
                if error is None:
                    report.caught_up.append(cell.run_id)
                    ingested.add(cell.run_id)
                elif error != INTERRUPTED_INGEST:
                    record(CellOutcome(run_id=cell.run_id, status="failed", params=cell.params,
                                       error=error, run_dir=str(runs / cell.run_id)))
            elif cell.run_id in done_on_disk:
                report.skipped.append(cell.run_id)
        if todo and not stop.requested:
            n_workers = workers or spec.workers
            kind = executor or spec.executor
            work_dir = str((cwd or spec.notebook.parent).resolve())

            def args(cell: Cell) -> tuple[Any, ...]:
                return (
                    str(spec.notebook.resolve()),
                    str((runs / f"{cell.run_id}.ipynb").resolve()),
                    cell.params,
                    cell.run_id,
                    str((runs / cell.run_id).resolve()),
                    spec.timeout_s,
                    work_dir,
                    spec.name,
                    spec.kernel_start_s,
                )

            def finish(cell: Cell, result: dict[str, Any]) -> None:
                outcome = CellOutcome(run_id=cell.run_id, status="done", params=cell.params,
                                      notebook=str(runs / f"{cell.run_id}.ipynb"), run_dir=str(runs / cell.run_id))
                if not result.get("ok"):
                    outcome.status, outcome.error = "failed", str(result.get("error") or "failed")
                else:
                    for key, value in (result.get("timings") or {}).items():
                        setattr(outcome, key, value)
                    outcome.debate_s = _debate_seconds(runs / cell.run_id)
                    why_not = check_done(runs / cell.run_id)
                    if why_not is not None:
                        outcome.status = "failed"
                        outcome.error = f"the notebook ran but left no complete run folder: {why_not}"
                    else:
                        t0 = time.perf_counter()
                        error = ingest_cell(runs / cell.run_id)
                        outcome.ingest_s = time.perf_counter() - t0
                        if error == INTERRUPTED_INGEST:
                            outcome.status, outcome.error = "incomplete", error
                        elif error is not None:
                            outcome.status, outcome.error = "failed", error
                record(outcome)

            if kind == "local":
                _run_local(todo, args, finish, n_workers, out / ".cells", on_launch, stop, manifest, report)
            else:
                _run_dask(todo, args, finish, n_workers, kind, stop, manifest, report)
    except KeyboardInterrupt:  # raised by a callback (ingest, on_progress), as Ctrl-C would be
        stop.request()
    report.interrupted = report.interrupted or stop.requested
    report.wall_s = time.perf_counter() - started
    return report


def _mark_incomplete(cells: Iterable[Cell], manifest: Manifest, report: SweepReport) -> None:
    for cell in cells:
        outcome = CellOutcome(run_id=cell.run_id, status="incomplete", params=cell.params,
                              error="interrupted (Ctrl-C): rerun the sweep to complete it")
        manifest.record(outcome)
        report.outcomes.append(outcome)


def _run_local(todo: list[Cell], args: Callable[[Cell], tuple[Any, ...]],
               finish: Callable[[Cell, dict[str, Any]], None], n_workers: int, cells_dir: Path,
               on_launch: Callable[[Cell], None] | None, stop: _Stop, manifest: Manifest,
               report: SweepReport) -> None:
    """Cells in worker processes, ``n_workers`` at a time; every exit path ends them all."""
    queue = list(todo)
    running: dict[int, _Running] = {}  # done_fd -> cell
    try:
        while (queue or running) and not stop.requested:
            while queue and len(running) < n_workers and not stop.requested:
                cell = queue.pop(0)
                job = _launch(cell, args(cell), cells_dir / cell.run_id)
                running[job.done_fd] = job
                if on_launch:
                    on_launch(cell)
            if stop.requested:
                break
            ready = wait_fds([*running, stop.fileno()], timeout=None)
            for fd in ready:
                finished = running.pop(fd, None) if isinstance(fd, int) else None
                if finished is None:
                    continue
                job = finished
                job.proc.wait()
                result = _worker_result(job)
                _close(job, keep_log=not result.get("ok"))
                finish(job.cell, result)
                if stop.requested:
                    break
    finally:
        # Reached on Ctrl-C, on an exception from a callback, and on normal completion
        # (then nothing is running): end every cell still running, whatever its state.
        for job in list(running.values()):
            kill_tree(job.proc.pid)
            job.proc.wait()
            _close(job, keep_log=False)
        _mark_incomplete([job.cell for job in running.values()] + queue, manifest, report)
        running.clear()
        queue.clear()


def _run_dask(todo: list[Cell], args: Callable[[Cell], tuple[Any, ...]],
              finish: Callable[[Cell, dict[str, Any]], None], n_workers: int, kind: str,
              stop: _Stop, manifest: Manifest, report: SweepReport) -> None:
    """Cells on a Dask cluster (a LocalCluster for ``dask``); Ctrl-C cancels what is left."""
    from distributed import Client, LocalCluster, as_completed

    cluster = None
    if kind == "dask":
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(kind.replace("dask://", "tcp://", 1), timeout=30)
    pending: dict[Any, Cell] = {}
    try:
        pending.update({client.submit(_dask_cell, *args(c), pure=False): c for c in todo})
        futures = as_completed(list(pending))
        while pending and not stop.requested:
            try:
                batch = futures.next_batch(block=False) or []
            except StopIteration:
                break
            if not batch:
                stop.sleep(0.2)  # as_completed has no wake-up fd: poll, but Ctrl-C cuts it short
                continue
            for fut in batch:
                cell = pending.pop(fut)
                finish(cell, fut.result())
    finally:
        if pending:
            client.cancel(list(pending))
        _mark_incomplete(pending.values(), manifest, report)
        client.close()
        if cluster is not None:
            cluster.close()


def _dask_cell(*job_args: Any) -> dict[str, Any]:
    """One cell on a Dask worker; the error travels back as data, like a local worker's."""
    try:
        return {"ok": True, "timings": execute_cell(*job_args)}
    except Exception as exc:  # noqa: BLE001 - reported as the cell's failure
        return {"ok": False, "error": scrub(_error_text(exc))}


def summarize_timings(outcomes: Iterable[CellOutcome]) -> Mapping[str, float]:
    """Mean seconds per finished cell: wall, kernel start-up, cells, debate, ingest.

    >>> summarize_timings([CellOutcome("a", "done", {}, wall_s=4.0, kernel_s=1.0, ingest_s=0.5)])["kernel_s"]
    1.0
    """
    done = [o for o in outcomes if o.status == "done"]
    keys = ("wall_s", "kernel_s", "cells_s", "debate_s", "ingest_s")
    if not done:
        return dict.fromkeys(keys, 0.0)
    return {k: sum(getattr(o, k) for o in done) / len(done) for k in keys}
