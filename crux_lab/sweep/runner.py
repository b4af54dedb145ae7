"""Run a sweep: cells -> papermill (local processes or Dask) -> run files -> one ingest.

Only the coordinating process writes to DuckDB (DuckDB allows one writing process): workers
execute notebooks and write their own run folders; the coordinator ingests each finished
cell. The manifest ``experiments/<name>/manifest.json`` records every cell's status, so a
rerun skips completed run_ids, a failing cell is recorded with its error without stopping
the others, and Ctrl-C leaves finished cells ingested and the rest marked ``incomplete``.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Literal

from crux_lab.sweep.spec import Cell, SweepSpec

CellStatus = Literal["done", "failed", "incomplete", "pending"]


class NotebookParameterError(ValueError):
    """A notebook without a 'parameters' cell, or a parameter the notebook does not declare."""


@dataclass
class CellOutcome:
    run_id: str
    status: CellStatus
    params: dict[str, Any]
    error: str | None = None
    wall_s: float = 0.0
    kernel_s: float = 0.0
    cells_s: float = 0.0
    ingest_s: float = 0.0
    notebook: str = ""
    run_dir: str = ""


@dataclass
class SweepReport:
    name: str
    outcomes: list[CellOutcome] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    interrupted: bool = False

    def count(self, status: CellStatus) -> int:
        return sum(1 for o in self.outcomes if o.status == status)


def notebook_parameters(notebook: Path) -> dict[str, Any]:
    """Declared parameters of a notebook (papermill's ``inspect_notebook``).

    Raises NotebookParameterError when the notebook has no cell tagged ``parameters``.
    """
    import nbformat
    import papermill

    nb = nbformat.read(str(notebook), as_version=4)
    if not any("parameters" in c.get("metadata", {}).get("tags", []) for c in nb.cells):
        raise NotebookParameterError(
            f"{notebook}: no cell tagged 'parameters'. Tag the cell that sets the defaults "
            "(JupyterLab: Property Inspector -> Cell Tags -> parameters)."
        )
    params: dict[str, Any] = papermill.inspect_notebook(str(notebook))
    return params


def check_parameters(notebook: Path, names: Iterable[str], injected: Iterable[str] = ("run_id", "run_dir")) -> None:
    declared = notebook_parameters(notebook)
    unknown = sorted(set(names) - set(declared) - set(injected))
    if unknown:
        raise NotebookParameterError(
            f"{notebook}: unknown parameter(s) {', '.join(unknown)}. "
            f"The notebook declares: {', '.join(sorted(declared))}."
        )


def execute_cell(notebook: str, output: str, params: dict[str, Any], run_id: str, run_dir: str, timeout_s: float, cwd: str) -> dict[str, Any]:
    """Execute one cell's notebook with papermill (runs in a worker process)."""
    import nbformat
    import papermill

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    started = time.perf_counter()
    papermill.execute_notebook(
        notebook,
        output,
        parameters={**params, "run_id": run_id, "run_dir": run_dir},
        kernel_name="python3",
        progress_bar=False,
        cwd=cwd,
        execution_timeout=int(timeout_s),
    )
    wall = time.perf_counter() - started
    nb = nbformat.read(output, as_version=4)
    cells = sum(float(c.get("metadata", {}).get("papermill", {}).get("duration") or 0.0) for c in nb.cells)
    return {"wall_s": wall, "cells_s": cells, "kernel_s": max(0.0, wall - cells)}


class Manifest:
    """Per-sweep record of cell statuses, written atomically after every change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cells: dict[str, dict[str, Any]] = {}
        if path.exists():
            self.cells = json.loads(path.read_text(encoding="utf-8")).get("cells", {})

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
    cwd: Path | None = None,
) -> SweepReport:
    """Run every cell not yet done; ingest each finished cell with ``ingest(run_dir)``."""
    cells = spec.cells()
    check_parameters(spec.notebook, {k for c in cells for k in c.params})
    out = spec.out_dir
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(out / "manifest.json")
    report = SweepReport(name=spec.name)
    todo = [c for c in cells if manifest.status(c.run_id) != "done"]
    report.skipped = [c.run_id for c in cells if manifest.status(c.run_id) == "done"]
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
        )

    def finish(cell: Cell, timings: dict[str, Any] | None, error: str | None) -> None:
        outcome = CellOutcome(
            run_id=cell.run_id,
            status="failed" if error else "done",
            params=cell.params,
            error=error,
            notebook=str(runs / f"{cell.run_id}.ipynb"),
            run_dir=str(runs / cell.run_id),
            **(timings or {}),
        )
        if error is None:
            t0 = time.perf_counter()
            try:
                ingest(runs / cell.run_id)
            except Exception as exc:  # noqa: BLE001 - recorded, the sweep goes on
                outcome.status, outcome.error = "failed", f"ingest failed: {exc}"
            outcome.ingest_s = time.perf_counter() - t0
        manifest.record(outcome)
        report.outcomes.append(outcome)
        if on_progress:
            on_progress(outcome)

    pending: dict[Any, Cell] = {}
    try:
        if kind == "local":
            with ProcessPoolExecutor(max_workers=n_workers, mp_context=get_context("spawn")) as pool:
                pending = {pool.submit(execute_cell, *args(c)): c for c in todo}
                while pending:
                    done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                    for fut in done:
                        cell = pending.pop(fut)
                        _finish_future(fut, cell, finish)
        else:
            from distributed import Client, LocalCluster, as_completed

            cluster = None
            if kind == "dask":
                cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None)
                client = Client(cluster)
            else:
                client = Client(kind.replace("dask://", "tcp://", 1))
            try:
                futs = {client.submit(execute_cell, *args(c), pure=False): c for c in todo}
                pending = dict(futs)
                for fut in as_completed(list(futs)):
                    cell = pending.pop(fut)
                    _finish_future(fut, cell, finish)
            finally:
                client.close()
                if cluster is not None:
                    cluster.close()
    except KeyboardInterrupt:
        report.interrupted = True
        for cell in pending.values():
            outcome = CellOutcome(run_id=cell.run_id, status="incomplete", params=cell.params, error="interrupted")
            manifest.record(outcome)
            report.outcomes.append(outcome)
    return report


def _finish_future(fut: Future[Any] | Any, cell: Cell, finish: Callable[[Cell, dict[str, Any] | None, str | None], None]) -> None:
    try:
        timings = fut.result()
    except Exception as exc:  # noqa: BLE001 - one failing cell must not stop the others
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        finish(cell, None, detail[-2000:])
    else:
        finish(cell, timings, None)
