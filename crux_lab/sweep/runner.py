"""Run a sweep: cells -> papermill (local processes or Dask) -> run files -> one ingest.

Only the coordinating process writes to DuckDB (DuckDB allows one writing process): workers
execute notebooks and write their own run folders; the coordinator ingests each finished
cell. The manifest ``experiments/<name>/manifest.json`` records every cell's status, so a
rerun skips completed run_ids, a failing cell is recorded with its error without stopping
the others, and Ctrl-C leaves finished cells ingested and the rest marked ``incomplete``
(ingest is one transaction per cell: an interrupted ingest rolls back and the cell is
``incomplete``, never half-ingested).
"""

from __future__ import annotations

import ast
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Literal

from crux_lab.sweep.spec import Cell, SweepSpec

CellStatus = Literal["done", "failed", "incomplete", "pending"]
# Parameters the runner adds to every cell (the notebook may or may not declare them).
INJECTED = ("run_id", "run_dir", "sweep")
# Quiet kernels: their log lines (start-up warnings such as "running over TCP without
# encryption", a KeyboardInterrupt logged at shutdown) would interleave with the progress bar
# on every cell; cell errors still reach papermill.
KERNEL_ARGS = ("--IPKernelApp.log_level=CRITICAL",)


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
    skipped: list[str] = field(default_factory=list)
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


def execute_cell(notebook: str, output: str, params: dict[str, Any], run_id: str, run_dir: str,
                 timeout_s: float, cwd: str, sweep: str = "") -> dict[str, Any]:
    """Execute one cell's notebook with papermill (runs in a worker process); returns timings."""
    import nbformat
    import papermill

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    started = time.perf_counter()
    papermill.execute_notebook(
        notebook,
        output,
        parameters={**params, "run_id": run_id, "run_dir": run_dir, "sweep": sweep},
        kernel_name="python3",
        progress_bar=False,
        cwd=cwd,
        execution_timeout=int(timeout_s),
        extra_arguments=list(KERNEL_ARGS),
    )
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
    """Per-sweep record of cell statuses, written atomically after every change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cells: dict[str, dict[str, Any]] = {}
        if path.exists():
            try:
                self.cells = json.loads(path.read_text(encoding="utf-8")).get("cells", {})
            except (json.JSONDecodeError, AttributeError):
                self.cells = {}  # a damaged manifest: every cell is re-run (ingest is idempotent)

    def status(self, run_id: str) -> str:
        return str(self.cells.get(run_id, {}).get("status", "pending"))

    def record(self, outcome: CellOutcome) -> None:
        self.cells[outcome.run_id] = asdict(outcome)
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"cells": self.cells}, indent=1, default=str), encoding="utf-8")
        os.replace(tmp, self.path)


Ingest = Callable[[Path], None]


def run_sweep(
    spec: SweepSpec,
    *,
    ingest: Ingest,
    workers: int | None = None,
    executor: str | None = None,
    on_progress: Callable[[CellOutcome], None] | None = None,
    on_start: Callable[[int, int], None] | None = None,
    cwd: Path | None = None,
) -> SweepReport:
    """Run every cell not yet done; ingest each finished cell with ``ingest(run_dir)``.

    ``on_start(todo, total)`` is called once before the first cell; ``on_progress`` after each.
    """
    started = time.perf_counter()
    defaults = notebook_defaults(spec.notebook)
    cells = spec.cells(defaults)
    check_parameters(spec.notebook, {k for c in cells for k in c.params})
    out = spec.out_dir
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(out / "manifest.json")
    report = SweepReport(name=spec.name)
    todo = [c for c in cells if manifest.status(c.run_id) != "done"]
    report.skipped = [c.run_id for c in cells if manifest.status(c.run_id) == "done"]
    if on_start:
        on_start(len(todo), len(cells))
    if not todo:
        return report
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
        )

    pending: dict[Any, Cell] = {}

    def finish(fut: Any) -> None:
        cell = pending[fut]
        outcome = CellOutcome(run_id=cell.run_id, status="done", params=cell.params,
                              notebook=str(runs / f"{cell.run_id}.ipynb"), run_dir=str(runs / cell.run_id))
        try:
            timings = fut.result()
        except Exception as exc:  # noqa: BLE001 - one failing cell must not stop the others
            outcome.status, outcome.error = "failed", _error_text(exc)
        else:
            for key, value in timings.items():
                setattr(outcome, key, value)
            outcome.debate_s = _debate_seconds(runs / cell.run_id)
            t0 = time.perf_counter()
            try:
                ingest(runs / cell.run_id)  # one transaction: all of the run or nothing
            except Exception as exc:  # noqa: BLE001 - recorded, the sweep goes on
                outcome.status, outcome.error = "failed", f"ingest failed: {exc}"
            outcome.ingest_s = time.perf_counter() - t0
        # Recorded only now: an interrupt before this line leaves the cell in `pending`.
        manifest.record(outcome)
        report.outcomes.append(outcome)
        del pending[fut]
        if on_progress:
            on_progress(outcome)

    try:
        if kind == "local":
            pool = ProcessPoolExecutor(max_workers=n_workers, mp_context=get_context("spawn"),
                                       initializer=_ignore_sigint)
            try:
                pending.update({pool.submit(execute_cell, *args(c)): c for c in todo})
                while pending:
                    done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                    for fut in done:
                        finish(fut)
            finally:
                _stop_pool(pool, interrupted=bool(pending))
        else:
            from distributed import Client, LocalCluster, as_completed

            cluster = None
            if kind == "dask":
                cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
                client = Client(cluster)
            else:
                client = Client(kind.replace("dask://", "tcp://", 1), timeout=30)
            try:
                pending.update({client.submit(execute_cell, *args(c), pure=False): c for c in todo})
                for fut in as_completed(list(pending)):
                    finish(fut)
            finally:
                if pending:
                    client.cancel(list(pending))
                client.close()
                if cluster is not None:
                    cluster.close()
    except KeyboardInterrupt:
        report.interrupted = True
        for cell in pending.values():
            outcome = CellOutcome(run_id=cell.run_id, status="incomplete", params=cell.params,
                                  error="interrupted (Ctrl-C): rerun the sweep to complete it")
            manifest.record(outcome)
            report.outcomes.append(outcome)
        pending.clear()
    report.wall_s = time.perf_counter() - started
    return report


def _ignore_sigint() -> None:
    """Workers leave Ctrl-C to the coordinator, which records every cell's status and then ends
    them (a worker dying on SIGINT first would turn its cell into a broken-pool failure)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop_pool(pool: ProcessPoolExecutor, *, interrupted: bool) -> None:
    """Shut the pool down; on an interrupt, cancel queued cells and end the running workers
    (their kernels get the terminal's SIGINT too) instead of waiting for them."""
    if not interrupted:
        pool.shutdown(wait=True)
        return
    processes = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        if proc.is_alive():
            proc.terminate()


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
