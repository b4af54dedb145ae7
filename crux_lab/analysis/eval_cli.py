"""``crux-lab eval``: ground-truth crux recovery, stored metrics, cross-debate recurrence.

    crux-lab eval recovery --engines blitz,dcg --scenarios 5 --seed 0 --sim missed_attack=0.3
    crux-lab eval metrics            # mean of each stored metric per engine
    crux-lab eval recurrence         # record cross-debate crux recurrence for every stored run
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from crux_lab.models import SimulatorKnobs

app = typer.Typer(help="Evaluation: ground-truth crux recovery and per-debate metrics.", no_args_is_help=True)
console = Console()

DEFAULT_ENGINES = "blitz,classical,graph,dialogue,dcg,crux_rooms,panel"


def _fail(message: str) -> None:
    console.print(f"[red]error:[/red] {message}", highlight=False)
    raise typer.Exit(2)


def parse_knobs(values: Sequence[str]) -> SimulatorKnobs:
    """``["missed_attack=0.3"]`` -> knobs; a bad key or value raises ``ValueError`` naming it.

    >>> parse_knobs(["missed_attack=0.3"]).missed_attack
    0.3
    """
    known = list(SimulatorKnobs.model_fields)
    knobs: dict[str, float] = {}
    for raw in values:
        key, sep, value = raw.partition("=")
        key = key.strip()
        if not sep or key not in known:
            raise ValueError(f"--sim {raw!r}: write KEY=VALUE with KEY one of {', '.join(known)} (e.g. --sim missed_attack=0.3).")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not 0.0 <= number <= 1.0:
            raise ValueError(f"--sim {raw!r}: the value must be a probability between 0 and 1.")
        knobs[key] = number
    return SimulatorKnobs(**knobs)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return "—" if math.isnan(value) else f"{value:.3f}"
    return str(value)


COLUMNS = (
    ("engine", "engine"), ("debates", "runs"), ("precision", "P"), ("recall", "R"), ("f1", "F1"),
    ("type_accuracy", "type acc"), ("found", "found"), ("planted", "planted"),
    ("false_positives", "FP"), ("false_common_ground", "false CG"),
)


def recovery_table(rows: Sequence[dict[str, Any]], title: str) -> Table:
    """The per-engine recovery summary as a rich table."""
    table = Table(title=title)
    for key, label in COLUMNS:
        table.add_column(label, justify="left" if key == "engine" else "right", overflow="fold")
    for row in rows:
        table.add_row(*(_fmt(row[key]) for key, _ in COLUMNS))
    return table


@app.command("recovery")
def recovery(
    engines: Annotated[str, typer.Option(help="Comma-separated engines.")] = DEFAULT_ENGINES,
    scenarios: Annotated[int, typer.Option(min=1, help="Number of synthetic scenarios.")] = 3,
    seed: Annotated[int, typer.Option(help="Seed of the scenario generator and the simulator.")] = 0,
    sim: Annotated[list[str] | None, typer.Option("--sim", help="Simulator knob KEY=VALUE, repeatable.")] = None,
    db: Annotated[Path | None, typer.Option(help="DuckDB file (default: $CRUX_LAB_DB or data/crux_lab.duckdb).")] = None,
    runs_dir: Annotated[Path | None, typer.Option(help="Where run folders go (default: the store's runs folder).")] = None,
    library: Annotated[Path | None, typer.Option(help="Write the scenario persona library here (default: a temp dir).")] = None,
    contested: Annotated[int, typer.Option(min=1, help="Planted contested propositions per scenario.")] = 4,
    consensus: Annotated[int, typer.Option(min=0, help="Planted consensus propositions per scenario.")] = 2,
    personas: Annotated[int, typer.Option(min=2, max=5, help="Personas per scenario.")] = 3,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the scores as JSON here.")] = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="Do not write run folders or the database.")] = False,
) -> None:
    """Run engines on synthetic scenarios with planted cruxes and score crux recovery by text:
each crux found is matched to a planted one by its words (embeddings at a threshold calibrated
on held-out paraphrases), never by ids."""
    from crux_lab.analysis.recovery import run_recovery, summarize
    from crux_lab.analysis.scenarios import ScenarioError, generate_scenarios
    from crux_lab.engines import available

    names = [e.strip() for e in engines.split(",") if e.strip()]
    installed = available()
    unknown = [e for e in names if e not in installed]
    if not names or unknown:
        _fail(f"--engines: unknown engine(s) {', '.join(unknown) or '(none given)'}; valid: {', '.join(installed)}.")
    try:
        knobs = parse_knobs(sim or [])
        planted = generate_scenarios(scenarios, seed=seed, n_personas=personas, n_contested=contested, n_consensus=consensus)
    except (ValueError, ScenarioError) as exc:
        _fail(str(exc))
    with tempfile.TemporaryDirectory(prefix="crux-eval-") as tmp:
        lib = library or Path(tmp) / "personas"
        done = 0

        def progress(score: Any) -> None:
            nonlocal done
            done += 1
            console.print(f"  [{done}/{len(names) * len(planted)}] {score.engine} on {score.scenario}: "
                          f"found {score.found}/{score.n_planted}, F1 {_fmt(score.f1)}", highlight=False)

        run = run_recovery(planted, names, lib, seed=seed, sim=knobs, runs_dir=runs_dir, db=db,
                           store=not no_store, on_result=progress)
    from crux_lab.analysis.calibration import default_calibration

    knob_text = ", ".join(f"{k}={v}" for k, v in knobs.model_dump().items() if v) or "default knobs"
    calibration = default_calibration()
    console.print(f"Matched by text only; {calibration.describe()}.", highlight=False)
    console.print(recovery_table(summarize(run.scores), f"Crux recovery: {len(planted)} scenario(s), seed {seed}, {knob_text}"))
    for key, err in run.failures.items():
        console.print(f"[yellow]failed[/yellow] {key}: {err}", highlight=False)
    if run.db_path is not None:
        console.print(f"stored {len(run.results)} run(s) and their recovery metrics in {run.db_path} ({run.wall_s:.1f}s)")
    if json_out is not None:
        from dataclasses import asdict

        json_out.write_text(json.dumps({"knobs": knobs.model_dump(), "seed": seed, "calibration": asdict(calibration),
                                        "summary": summarize(run.scores),
                                        "scores": [asdict(s) for s in run.scores]}, indent=1, default=str))
    if run.failures and not run.results:
        raise typer.Exit(1)


@app.command("metrics")
def metrics(db: Annotated[Path | None, typer.Option(help="DuckDB file.")] = None) -> None:
    """Mean of every stored per-debate metric, per engine."""
    from crux_lab.analysis.metrics import metric_summary
    from crux_lab.store import StoreError

    try:
        summary = metric_summary(db)
    except StoreError as exc:
        _fail(str(exc))
    if summary.empty:
        console.print("no metrics stored yet: run debates (crux-lab run / compare / eval recovery) and ingest them.")
        return
    table = Table(title="Mean metric per engine")
    table.add_column("metric")
    for engine in summary.columns:
        table.add_column(str(engine), justify="right")
    for name, row in summary.iterrows():
        table.add_row(str(name), *(_fmt(float(v)) for v in row))
    console.print(table)


@app.command("recurrence")
def recurrence(db: Annotated[Path | None, typer.Option(help="DuckDB file.")] = None) -> None:
    """Record cross-debate crux recurrence (per topic) as the ``crux_recurrence`` metric of every run."""
    from crux_lab.analysis.metrics import record_recurrence
    from crux_lab.store import StoreError

    try:
        values = record_recurrence(db)
    except StoreError as exc:
        _fail(str(exc))
    console.print(f"recorded crux_recurrence for {len(values)} run(s)"
                  + (f"; mean {sum(values.values()) / len(values):.3f}" if values else " (no topic has two debates)"))
