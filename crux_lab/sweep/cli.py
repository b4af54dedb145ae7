"""``crux-lab sweep experiments/<name>.yaml`` and ``crux-lab report <run_id | sweep name>``.

Registered by :mod:`crux_lab.cli` (its ``COMMANDS`` registry) as the single commands ``sweep`` and
``report`` (plain functions, so options may follow the argument). Bad input exits 2 with a one-paragraph message; a sweep with failed cells
exits 1 after recording and ingesting everything else.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from crux_lab.console import err_console, fail, note, out_console
from crux_lab.store import RunFolderError, StoreError, connect, ingest, query, resolve_db_path
from crux_lab.sweep.runner import (
    NotebookParameterError,
    cell_states,
    notebook_defaults,
    run_sweep,
    summarize_timings,
)
from crux_lab.sweep.spec import MAX_WORKERS, SweepSpec, SweepSpecError, load_sweep

DbOption = Annotated[Path | None, typer.Option("--db", envvar="CRUX_LAB_DB", help="DuckDB file (default data/crux_lab.duckdb).")]


def sweep(
    spec_file: Annotated[Path, typer.Argument(help="The sweep file, e.g. experiments/demo.yaml.")],
    workers: Annotated[int | None, typer.Option("--workers", "-w", help="Parallel cells (default: the file's workers).")] = None,
    executor: Annotated[str | None, typer.Option("--executor", help="local | dask | dask://host:port (default: the file's executor).")] = None,
    db: DbOption = None,
    report: Annotated[bool, typer.Option("--report/--no-report", help="Export the sweep report when done.")] = False,
    status: Annotated[bool, typer.Option("--status", help="Show each cell's state (done on disk, ingested, failed, pending) and run nothing.")] = False,
    backend: Annotated[str | None, typer.Option("--backend", help="Every cell's backend (overrides the file's), e.g. openai.")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="Every cell's server for the openai backend, e.g. http://127.0.0.1:8080/v1.")] = None,
) -> None:
    """Run every cell not yet done (resumable), ingest each into DuckDB, show progress.

    A cell is done when its run folder is complete and valid; a done cell is never run again
    and is ingested if the database lacks it. The database is locked only while a cell is
    ingested, so queries work while the sweep runs.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if workers is not None and not 1 <= workers <= MAX_WORKERS:
        fail(f"--workers must be between 1 and {MAX_WORKERS}; got {workers}.")
    if executor is not None and not (executor in ("local", "dask") or executor.startswith("dask://")):
        fail(f"--executor {executor!r}: expected local, dask, or dask://host:port.")
    try:
        spec = load_sweep(spec_file)
    except SweepSpecError as exc:
        fail(str(exc))
    spec = _override(spec, backend=backend, base_url=base_url)
    db_path = resolve_db_path(db)
    if status:
        _print_status(spec, db_path)
        return
    try:
        # Fail on a bad database before any cell runs; migrate it once, then let go of it.
        connect(db_path).close()
        already = _ingested_ids(db_path)
    except StoreError as exc:
        fail(str(exc))

    def ingest_one(run_dir: Path) -> None:
        ingest([run_dir], db_path)  # opens, writes one transaction, closes: the lock is brief

    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[last]}"), TimeElapsedColumn(), console=err_console, transient=False)
    task = progress.add_task(f"sweep {spec.name}", total=None, last="")

    def started(todo: int, total: int) -> None:
        progress.update(task, total=todo)
        if todo < total:
            note(f"{total - todo} of {total} cell(s) already done on disk: not run again")

    def advanced(outcome: object) -> None:
        progress.advance(task)
        progress.update(task, last=f"{outcome.run_id} {outcome.status}")  # type: ignore[attr-defined]

    for line in sharing_lines(spec, workers or spec.workers):
        note(line)
    try:
        with progress:
            result = run_sweep(spec, ingest=ingest_one, ingested=already, workers=workers, executor=executor,
                               on_start=started, on_progress=advanced)
    except NotebookParameterError as exc:
        fail(str(exc))
    except KeyboardInterrupt:  # before the sweep's own handler was installed: nothing was running
        note("[yellow]interrupted[/] before any cell started.")
        raise typer.Exit(130) from None
    t = summarize_timings(result.outcomes)
    caught_up = f", {len(result.caught_up)} ingested from their run folders" if result.caught_up else ""
    per_cell = (f" (per cell: kernel {t['kernel_s']:.1f}s, cells {t['cells_s']:.1f}s of which debate "
                f"{t['debate_s']:.1f}s, ingest {t['ingest_s']:.2f}s)") if result.count("done") else ""
    out_console.print(
        f"sweep {spec.name}: {result.count('done')} done, {result.count('failed')} failed, "
        f"{result.count('incomplete')} incomplete, {len(result.skipped)} skipped{caught_up} "
        f"in {result.wall_s:.1f}s{per_cell}"
    )
    for o in result.outcomes:
        if o.status == "failed":
            out_console.print(f"[red]failed[/] {o.run_id}: {o.error}  (notebook: {o.notebook})")
    out_console.print(f"runs: {spec.out_dir / 'runs'}  manifest: {spec.out_dir / 'manifest.json'}  database: {db_path}")
    if result.interrupted:
        note("[yellow]interrupted:[/] finished cells are ingested; the rest are marked incomplete. Rerun to resume.")
        raise typer.Exit(130)
    if report:
        _report_sweep(spec.name, spec.path.parent, db)
    if result.count("failed"):
        raise typer.Exit(1)



def _override(spec: SweepSpec, **params: str | None) -> SweepSpec:
    """``spec`` with the given parameters set for every cell (a grid of them replaced)."""
    given = {k: v for k, v in params.items() if v is not None}
    if not given:
        return spec
    if "base_url" in given:
        from crux_lab.llm.openai_backend import check_base_url

        problem = check_base_url(given["base_url"])
        if problem:
            fail(problem)
    grid = {k: v for k, v in spec.grid.items() if k not in given}
    return replace(spec, base={**spec.base, **given}, grid=grid)


def sharing_lines(spec: SweepSpec, workers: int) -> list[str]:
    """One line per server the sweep's openai cells use: how its workers share it."""
    from crux_lab.backends import registered

    specs = registered()
    backends = spec.grid.get("backend", [spec.base.get("backend")])
    if not any(b in specs and specs[b].base_url for b in backends):  # no cell talks to a server at a URL
        return []
    from crux_lab.llm.openai_backend import resolve_base_url, sharing_line

    urls = spec.grid.get("base_url", [spec.base.get("base_url")])
    return [sharing_line(url, workers) for url in dict.fromkeys(resolve_base_url(str(u or "") or None) for u in urls)]


def _ingested_ids(db_path: Path) -> set[str]:
    """Run ids the database holds (read-only; an absent database holds none)."""
    if not db_path.exists():
        return set()
    return {str(r[0]) for r in query("SELECT run_id FROM runs", db_path).rows}


def _print_status(spec: object, db_path: Path) -> None:
    from rich.markup import escape
    from rich.table import Table

    assert isinstance(spec, SweepSpec)
    try:
        ingested = _ingested_ids(db_path)
    except StoreError as exc:
        fail(str(exc))
    try:
        cells = spec.cells(notebook_defaults(spec.notebook))
    except NotebookParameterError as exc:
        fail(str(exc))
    states = cell_states(spec, cells, ingested)
    grid = sorted(spec.grid) + ["seed"]
    table = Table("run_id", *grid, "state", "detail")
    for st in states:
        detail = st["error"] if st["state"] == "failed" else ("" if st["on_disk"] == "done" else st["on_disk"])
        table.add_row(st["run_id"], *(escape(str(st["params"].get(k, ""))[:40]) for k in grid),
                      st["state"], escape(detail[:120]))
    out_console.print(table)
    counts: dict[str, int] = {}
    for st in states:
        counts[st["state"]] = counts.get(st["state"], 0) + 1
    order = ("ingested", "done, not ingested", "failed", "pending")
    out_console.print(f"sweep {spec.name}: " + ", ".join(f"{counts.get(k, 0)} {k}" for k in order)
                      + f" (of {len(states)}; database {db_path})")


def _report_sweep(name: str, experiments: Path, db: Path | None) -> None:
    from crux_lab.report import ReportError, sweep_report

    try:
        info = sweep_report(name, db=db, experiments=experiments)
    except ReportError as exc:
        fail(str(exc))
    out_console.print(f"report: {info.path}  ({info.size_bytes / 1e6:.1f} MB, {info.render_s:.1f}s)")
    typer.echo(str(info.path.resolve()))


def report(
    ref: Annotated[str, typer.Argument(help="A run id (or unique prefix, or run folder) or a sweep name.")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Where the HTML goes (run reports; default reports/<run_id>.html).")] = None,
    experiments: Annotated[Path, typer.Option("--experiments", help="The experiments folder.")] = Path("experiments"),
    db: DbOption = None,
) -> None:
    """Export an offline HTML report (input hidden, plotly.js embedded, no CDN); prints its path."""
    from crux_lab.report import ReportError, run_report
    from crux_lab.workbench import UnknownRunError

    name = Path(ref).stem if ref.endswith((".yaml", ".yml")) else ref
    # a run folder has a manifest.json too: its result or event log says it is a run
    a_run = any((Path(ref) / f).is_file() for f in ("result.json", "events.jsonl"))
    if not a_run and ((experiments / name / "manifest.json").is_file() or (experiments / f"{name}.yaml").is_file()):
        _report_sweep(name, experiments, db)
        return
    try:
        info = run_report(ref, out, db=db, experiments=experiments)
    except UnknownRunError as exc:
        sweeps = sorted(p.parent.name for p in experiments.glob("*/manifest.json"))
        fail(f"{exc}" + (f" Sweeps: {', '.join(sweeps)}." if sweeps else ""))
    except (ReportError, RunFolderError, StoreError) as exc:  # a damaged run folder or database
        fail(str(exc))
    out_console.print(f"report: {info.path}  ({info.size_bytes / 1e6:.1f} MB, {info.render_s:.1f}s)")
    typer.echo(str(info.path.resolve()))
