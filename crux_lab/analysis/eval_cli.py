"""``crux-lab eval``: ground-truth crux recovery, stored metrics, cross-debate recurrence.

    crux-lab eval recovery --engines blitz,dcg --scenarios 5 --seed 0 --sim missed_attack=0.3
    crux-lab eval metrics            # mean of each stored metric per engine
    crux-lab eval recurrence         # record cross-debate crux recurrence for every stored run
    crux-lab eval polis tests/data/polis/brexit-consensus --engines direct,cot,dcg
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


POLIS_COLUMNS = (
    ("engine", "engine"), ("debates", "runs"), ("precision", "crux P [95% CI]"),
    ("recall_at_k", "R@k [95% CI]"), ("recall_ceiling", "R@k ceiling"),
    ("false_common_ground", "false CG"), ("camp_ari", "camp ARI"), ("calls", "calls"), ("wall_s", "wall s"),
)


def with_interval(mean: float, ci: tuple[float, float]) -> str:
    """``0.5 [0.2–0.8]``; the interval left out when it is undefined.

    >>> with_interval(0.5, (0.25, 0.75))
    '0.50 [0.25–0.75]'
    >>> with_interval(float("nan"), (float("nan"), float("nan")))
    '—'
    """
    if math.isnan(mean):
        return "—"
    if any(math.isnan(v) for v in ci):
        return f"{mean:.2f}"
    return f"{mean:.2f} [{ci[0]:.2f}–{ci[1]:.2f}]"


def _polis_cell(row: dict[str, Any], key: str) -> str:
    if key == "precision":
        return with_interval(row["precision"], row["precision_ci"])
    if key == "recall_at_k":
        return with_interval(row["recall_at_k"], row["recall_ci"])
    value = row[key]
    return f"{value:.2f}" if isinstance(value, float) and not math.isnan(value) else _fmt(value)


def polis_table(rows: Sequence[dict[str, Any]], title: str) -> Table:
    """The per-engine Polis summary (:func:`crux_lab.analysis.polis_eval.summarize`) as a rich table."""
    table = Table(title=title)
    for key, label in POLIS_COLUMNS:
        table.add_column(label, justify="left" if key == "engine" else "right", overflow="fold")
    for row in rows:
        table.add_row(*(_polis_cell(row, key) for key, _ in POLIS_COLUMNS))
    return table


def parse_seeds(text: str) -> list[int]:
    """``"0,1"`` -> ``[0, 1]``; anything else raises ``ValueError`` naming the option.

    >>> parse_seeds("0, 2")
    [0, 2]
    """
    try:
        seeds = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        seeds = []
    if not seeds or any(not 0 <= s <= 2**63 - 1 for s in seeds):
        raise ValueError(f"--seeds {text!r}: write whole numbers separated by commas, e.g. --seeds 0,1.")
    return seeds


@app.command("polis")
def polis(
    folders: Annotated[list[Path], typer.Argument(help="Polis conversation folder(s) (participants-votes.csv, comments.csv, summary.csv).")],
    engines: Annotated[str, typer.Option(help="Comma-separated engines (direct and cot are the one-call baselines).")] = "direct,cot,dcg,panel",
    backend: Annotated[str, typer.Option("--backend", "-b", help="simulated | openai | anthropic | replay (replay needs --cassettes).")] = "simulated",
    base_url: Annotated[str | None, typer.Option("--base-url", help="openai backend: the server's URL, e.g. http://127.0.0.1:8080/v1.")] = None,
    model_strong: Annotated[str | None, typer.Option("--model-strong", help="Model id of the strong tier (anthropic, openai).")] = None,
    model_fast: Annotated[str | None, typer.Option("--model-fast", help="Model id of the fast tier (anthropic, openai).")] = None,
    llm_config: Annotated[Path | None, typer.Option("--llm-config", help="YAML/JSON file with base_url, model_strong, model_fast.")] = None,
    cassettes: Annotated[Path | None, typer.Option(help="Folder of one cassette per debate: recorded on a live backend, replayed with --backend replay.")] = None,
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds; one debate per engine and seed.")] = "0",
    max_turns: Annotated[int, typer.Option(min=1, max=10_000, help="Turn budget per debate.")] = 30,
    k: Annotated[int, typer.Option("--k", min=1, help="Recall is measured on the top k divisive statements.")] = 5,
    min_votes: Annotated[int, typer.Option(min=1, help="Votes every group needs on a statement for it to count.")] = 5,
    min_difference: Annotated[float, typer.Option(min=0.0, max=1.0, help="Smallest between-group agree-rate difference of a divisive statement.")] = 0.25,
    per_group: Annotated[int, typer.Option(min=1, help="Most representative statements per group persona.")] = 5,
    consensus: Annotated[int, typer.Option(min=0, help="Consensus statements every persona also holds.")] = 2,
    min_clear: Annotated[int, typer.Option(min=1, help="A group with fewer clear statements gets no persona.")] = 3,
    topic: Annotated[str | None, typer.Option(help="Debate topic (one conversation only; default: its Polis topic).")] = None,
    workdir: Annotated[Path, typer.Option(help="Holds library/<conversation>/ (the personas) and runs/ (finished debates are reused).")] = Path("experiments/polis"),
    db: Annotated[Path | None, typer.Option(help="DuckDB file (default: $CRUX_LAB_DB or data/crux_lab.duckdb).")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the scores as JSON here.")] = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="Do not ingest the runs or record metrics.")] = False,
) -> None:
    """Debate Polis conversations with one persona per opinion group and score the cruxes found
against what the votes say divides the groups (crux precision, recall@k, false common ground,
camp ARI); definitions in crux_lab/analysis/polis_truth.py and polis_eval.py."""
    from crux_lab.analysis.polis import PolisDataError
    from crux_lab.analysis.polis_eval import prepare, run_polis_eval, summarize
    from crux_lab.cli import _backend_choice, _llm_settings, fail
    from crux_lab.engines import available

    names = [e.strip() for e in engines.split(",") if e.strip()]
    installed = available()
    unknown = [e for e in names if e not in installed]
    if not names or unknown:
        fail(f"--engines: unknown engine(s) {', '.join(unknown) or '(none given)'}; valid: {', '.join(installed)}.")
    try:
        seed_list = parse_seeds(seeds)
    except ValueError as exc:
        fail(str(exc))
    if topic is not None and len(folders) != 1:
        fail("--topic applies to one conversation; pass one folder or leave --topic out.")
    if backend == "replay" and cassettes is None:
        fail("the replay backend needs --cassettes DIR (recorded by an earlier run with --cassettes).")
    resolved = _backend_choice(backend, None)
    models, url = _llm_settings(resolved, base_url, model_strong, model_fast, llm_config)
    options = {"k": k, "min_votes": min_votes, "min_difference": min_difference, "per_group": per_group,
               "n_consensus": consensus, "min_clear": min_clear}
    setups = []
    for folder in folders:  # every folder is checked before any debate runs
        try:
            setups.append(prepare(folder, workdir / "library" / folder.name, topic=topic, **options))  # type: ignore[arg-type]
        except (PolisDataError, OSError) as exc:
            fail(str(exc))
    from crux_lab.analysis.calibration import default_calibration
    from crux_lab.store import StoreError

    scores = []
    failures: dict[str, str] = {}
    for setup in setups:
        t = setup.truth
        console.print(f"{t.conversation}: {len(t.groups)} groups, {len(t.statements)} statements, "
                      f"{len(t.divisive)} divisive (top {t.k}: {', '.join(t.top_divisive)}), "
                      f"{len(t.consensus)} consensus; personas {', '.join(setup.library.persona_ids)}; "
                      f"topic {setup.library.topic!r}", highlight=False, soft_wrap=True)
        for skipped in setup.skipped:
            console.print(f"  [yellow]skipped[/yellow] {skipped}", highlight=False, soft_wrap=True)

        def progress(score: Any) -> None:
            console.print(f"  {score.engine} s{score.seed}{' (reused)' if score.resumed else ''}: {score.n_items} crux items, "
                          f"precision {_fmt(score.precision)}, recall@{score.k} {_fmt(score.recall_at_k)}, "
                          f"false CG {score.false_common_ground}, camp ARI {_fmt(score.camp_ari)}",
                          highlight=False, soft_wrap=True)

        try:
            run = run_polis_eval(setup, names, workdir, backend=resolved, seeds=seed_list, max_turns=max_turns,
                                 models=models, base_url=url, cassettes=cassettes, db=db, store=not no_store,
                                 on_result=progress)
        except StoreError as exc:
            fail(f"{exc} (the run folders are in {workdir / 'runs'}; `crux-lab db ingest` loads them later, or pass --no-store).", code=1)
        scores += run.scores
        failures.update({f"{t.conversation}/{key}": err for key, err in run.failures.items()})
        if run.db_path is not None:
            console.print(f"  stored {len(run.results)} run(s) and their polis_* metrics in {run.db_path}", highlight=False)
    console.print(f"Matched by text only; {default_calibration().describe()}.", highlight=False)
    console.print(polis_table(summarize(scores), f"Cruxes against Polis votes: {len(setups)} conversation(s), backend {resolved}, seeds {seeds}"))
    for key, err in failures.items():
        console.print(f"[yellow]failed[/yellow] {key}: {err}", highlight=False, soft_wrap=True)
    if json_out is not None:
        from dataclasses import asdict

        json_out.write_text(json.dumps({
            "backend": resolved, "models": models, "base_url": url, "seeds": seed_list, "options": options,
            "calibration": asdict(default_calibration()),
            "conversations": [{"conversation": s.truth.conversation, "topic": s.library.topic,
                               "groups": s.truth.group_sizes, "top_divisive": list(s.truth.top_divisive),
                               "consensus": list(s.truth.consensus), "skipped": s.skipped} for s in setups],
            "summary": summarize(scores), "scores": [asdict(s) for s in scores], "failures": failures,
        }, indent=1, default=str))
    if failures and not scores:
        raise typer.Exit(1)
