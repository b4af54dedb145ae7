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

from crux_lab.analysis.calibration import default_calibration
from crux_lab.analysis.metrics import metric_summary, record_recurrence
from crux_lab.analysis.polis import PolisDataError
from crux_lab.analysis.polis_eval import prepare
from crux_lab.analysis.polis_eval import summarize as polis_summarize
from crux_lab.analysis.polis_heldout import HoldOutError
from crux_lab.analysis.recovery import store_recovery
from crux_lab.analysis.recovery import summarize as recovery_summarize
from crux_lab.analysis.scenarios import (
    ScenarioError,
    generate_scenarios,
    load_scenarios,
    write_library,
)
from crux_lab.analysis.stats import with_interval
from crux_lab.backends import OFFLINE, answers_from_cassette, registered
from crux_lab.console import backend_choice, check_runs_dir, fail, llm_settings, note
from crux_lab.engines import available
from crux_lab.eval.polis import run_polis_eval
from crux_lab.eval.recovery import LLMChoice, run_recovery_eval
from crux_lab.llm import describe_backend_choice
from crux_lab.llm.registry import option_names
from crux_lab.store import StoreError, connect, resolve_db_path

app = typer.Typer(help="Evaluation: ground-truth crux recovery and per-debate metrics.", no_args_is_help=True)
console = Console()

DEFAULT_ENGINES = "blitz,classical,graph,dialogue,dcg,crux_rooms,panel"


def _fail(message: str) -> None:
    console.print(f"[red]error:[/red] {message}", highlight=False)
    raise typer.Exit(2)


def parse_knobs(values: Sequence[str]) -> dict[str, float]:
    """``["missed_attack=0.3"]`` -> the offline backend's failure knobs (its backend options);
    a bad key or value raises ``ValueError`` naming it.

    >>> parse_knobs(["missed_attack=0.3"])
    {'missed_attack': 0.3}
    """

    known = option_names(OFFLINE)
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
    return knobs


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


# Options shared by the evaluations that debate on any backend (recovery, polis).
BackendOpt = Annotated[str, typer.Option("--backend", "-b", help=" | ".join(registered()) + " (replay needs --cassettes).")]
BaseUrlOpt = Annotated[str | None, typer.Option("--base-url", help="openai backend: the server's URL, e.g. http://127.0.0.1:8080/v1.")]
ModelStrongOpt = Annotated[str | None, typer.Option("--model-strong", help="Model id of the strong tier (anthropic, openai).")]
ModelFastOpt = Annotated[str | None, typer.Option("--model-fast", help="Model id of the fast tier (anthropic, openai).")]
LLMConfigOpt = Annotated[Path | None, typer.Option("--llm-config", help="YAML/JSON file with base_url, model_strong, model_fast, structured (the flags win).")]
StructuredOpt = Annotated[str | None, typer.Option("--structured", help="openai backend: auto | json_schema | prompt (how replies are held to their schema).")]
CassettesOpt = Annotated[Path | None, typer.Option(help="Folder of one cassette per debate: recorded on a live backend, replayed with --backend replay.")]
SeedsOpt = Annotated[str, typer.Option(help="Comma-separated seeds; one debate per engine, seed (and scenario).")]


def engine_names(engines: str) -> list[str]:
    """The engines asked for, or a one-line failure naming the unknown ones and the valid ones."""
    names = [e.strip() for e in engines.split(",") if e.strip()]
    installed = available()
    unknown = [e for e in names if e not in installed]
    if not names or unknown:
        fail(f"--engines: unknown engine(s) {', '.join(unknown) or '(none given)'}; valid: {', '.join(installed)}.")
    return names


def arm_names(engines: str) -> list[str]:
    """The arms asked for (``engine`` or ``engine+key=value...``), or a one-line failure naming
    a bad one: an unknown engine, a part that is not KEY=VALUE, or parameters the engine refuses."""
    from pydantic import ValidationError

    from crux_lab.engines import get
    from crux_lab.eval.items import parse_arm

    specs = [e.strip() for e in engines.split(",") if e.strip()]
    try:
        parsed = [parse_arm(spec) for spec in specs]
    except ValueError as exc:
        fail(f"--engines: {exc}")
    engine_names(",".join(engine for engine, _ in parsed))
    for spec, (engine, params) in zip(specs, parsed, strict=True):
        try:
            get(engine).params_model(**params)
        except ValidationError as exc:
            first = exc.errors()[0]
            fail(f"--engines: {spec!r}: {'.'.join(str(x) for x in first['loc'])}: {first['msg']}; "
                 f"{engine} takes {', '.join(get(engine).params_model.model_fields)}.")
    return specs


def live_backend(backend: str, base_url: str | None, model_strong: str | None, model_fast: str | None,
                 llm_config: Path | None, structured: str | None, cassettes: Path | None) -> Any:
    """The backend an evaluation debates on (a :class:`crux_lab.eval.recovery.LLMChoice`), or a
    one-line failure: unknown backend, no key, replay without cassettes, a server that does not
    answer (asked once, before anything is written)."""

    if answers_from_cassette(backend) and (cassettes is None or not cassettes.is_dir()):
        fail("the replay backend needs --cassettes DIR, a folder recorded by an earlier run with --cassettes "
             + ("(none given)." if cassettes is None else f"({cassettes} is not a folder)."))
    resolved = backend_choice(backend, None)
    llm = llm_settings(resolved, base_url, model_strong, model_fast, llm_config, structured)
    return LLMChoice(resolved, llm.models, llm.base_url, llm.structured)


def stop_line(stop: Any, kept: int, runs_dir: Path) -> str:
    """What an evaluation stopped by an unfinished debate says, in one line."""
    why = "interrupted" if stop.interrupted else f"the debate {stop.label} stopped: {stop.error}"
    return f"{why}. {kept} finished debate(s) are kept in {runs_dir}; rerun the same command to resume."


def _take_ctrl_c() -> None:
    """Started with Ctrl-C ignored (a background job, a test runner): take it back, so Ctrl-C
    always stops the evaluation (as `crux-lab debate` does)."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


RECOVERY_COLUMNS = (
    ("engine", "arm"), ("debates", "runs"), ("items", "items"), ("found_by_text", "by text"),
    ("found", "with sides"), ("sides_wrong", "sides wrong"), ("restated_topic", "topic"),
    ("precision", "P [95% CI]"), ("recall", "R [95% CI]"), ("f1", "F1 [95% CI]"), ("text_f1", "F1 text"),
    ("type_accuracy", "type acc"), ("false_common_ground", "false CG"), ("calls", "calls"), ("wall_s", "wall s"),
)


def _recovery_cell(row: dict[str, Any], key: str) -> str:
    if key in ("precision", "recall", "f1"):
        return with_interval(row[key], row[f"{key}_ci"])
    value = row[key]
    return f"{value:.2f}" if isinstance(value, float) and not math.isnan(value) else _fmt(value)


def _engine_table(
    rows: Sequence[dict[str, Any]], title: str, columns: Sequence[tuple[str, str]], cell: Any
) -> Table:
    """One row per engine, ``columns`` as (key, label), each value written by ``cell(row, key)``."""
    table = Table(title=title)
    for key, label in columns:
        table.add_column(label, justify="left" if key == "engine" else "right", overflow="fold")
    for row in rows:
        table.add_row(*(cell(row, key) for key, _ in columns))
    return table


def recovery_interval_table(rows: Sequence[dict[str, Any]], title: str) -> Table:
    """The per-engine summary with intervals (``summarize(..., intervals=True)``) as a rich table."""
    return _engine_table(rows, title, RECOVERY_COLUMNS, _recovery_cell)


@app.command("recovery")
def recovery(
    engines: Annotated[str, typer.Option(help="Comma-separated engines or arms ENGINE+KEY=VALUE..., e.g. direct+informed=true+samples=6 (direct and cot are the one-call baselines; worldview is the worldview step alone).")] = DEFAULT_ENGINES,
    scenarios: Annotated[int | None, typer.Option(min=1, help="Number of generated scenarios (default 3).")] = None,
    scenarios_dir: Annotated[Path | None, typer.Option("--scenarios-dir", help="Your own scenarios: a persona library and its answer_key.json (README, 'Your own scenarios').")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the scenario generator.")] = 0,
    seeds: SeedsOpt = "0",
    backend: BackendOpt = OFFLINE,
    base_url: BaseUrlOpt = None,
    model_strong: ModelStrongOpt = None,
    model_fast: ModelFastOpt = None,
    llm_config: LLMConfigOpt = None,
    structured: StructuredOpt = None,
    cassettes: CassettesOpt = None,
    max_turns: Annotated[int, typer.Option(min=1, max=10_000, help="Turn budget per debate.")] = 30,
    sim: Annotated[list[str] | None, typer.Option("--sim", help=f"Failure knob KEY=VALUE of the {OFFLINE} backend, repeatable.")] = None,
    db: Annotated[Path | None, typer.Option(help="DuckDB file (default: $CRUX_LAB_DB or data/crux_lab.duckdb).")] = None,
    runs_dir: Annotated[Path | None, typer.Option(help="Where run folders go; finished debates there are reused (default: the store's runs folder).")] = None,
    library: Annotated[Path | None, typer.Option(help="Write the generated scenarios (persona library and answer key) here (default: a temp dir).")] = None,
    contested: Annotated[int, typer.Option(min=1, help="Planted contested propositions per generated scenario.")] = 4,
    consensus: Annotated[int, typer.Option(min=0, help="Planted consensus propositions per generated scenario.")] = 2,
    personas: Annotated[int, typer.Option(min=2, max=5, help="Personas per generated scenario.")] = 3,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the scores as JSON here.")] = None,
    items: Annotated[Path | None, typer.Option("--items", help="Write each debate's and canary's compact items here (a folder `crux-lab eval rescore` reads; commit it to keep the table re-scorable).")] = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="Do not ingest the runs or record metrics.")] = False,
) -> None:
    """Debate scenarios with planted cruxes on any backend and score crux recovery by text and
sides: a crux found is recovered when its words match a planted one (embeddings at a threshold
calibrated on held-out paraphrases), it does not restate the topic, and its YES and NO sides
split the personas as the answer key does; never by ids. The canaries (the topic, a vague
question, the answer key) are scored beside every engine. P, R and F1 come with 95% bootstrap
intervals over scenarios. Finished debates are kept in the runs folder; a rerun skips them."""
    names = arm_names(engines)
    try:
        seed_list = parse_seeds(seeds)
        knobs = parse_knobs(sim or [])
    except ValueError as exc:
        fail(str(exc))
    if scenarios_dir is not None and scenarios is not None:
        fail("--scenarios N generates scenarios and --scenarios-dir DIR reads yours: pass one of them.")
    if scenarios_dir is not None and library is not None:
        fail("--library writes generated scenarios; with --scenarios-dir the folder itself is the library.")
    try:
        if scenarios_dir is not None:
            planted = load_scenarios(scenarios_dir)
        else:
            planted = generate_scenarios(scenarios or 3, seed=seed, n_personas=personas, n_contested=contested,
                                         n_consensus=consensus)
    except ScenarioError as exc:
        fail(str(exc))
    llm = live_backend(backend, base_url, model_strong, model_fast, llm_config, structured, cassettes)
    if sim and llm.backend != OFFLINE:
        fail(f"--sim sets the {OFFLINE} backend's failure knobs; it does not apply to the {llm.backend} backend.")
    runs = check_runs_dir(runs_dir)
    if not no_store:
        try:
            connect(resolve_db_path(db)).close()  # a bad database fails before any call is spent
        except StoreError as exc:
            fail(f"{exc} (Or pass --no-store.)")

    note(describe_backend_choice(llm.backend, cassette=cassettes if answers_from_cassette(llm.backend) else None,
                                 models=llm.models, base_url=llm.base_url))
    total = len(names) * len(planted) * len(seed_list)
    done = 0

    def progress(score: Any, resumed: bool) -> None:
        nonlocal done
        done += 1
        console.print(f"  [{done}/{total}] {score.engine} on {score.scenario} s{score.seed}{' (reused)' if resumed else ''}: "
                      f"found {score.found}/{score.n_planted}, F1 {_fmt(score.f1)}", highlight=False, soft_wrap=True)

    _take_ctrl_c()
    try:
        with tempfile.TemporaryDirectory(prefix="crux-eval-") as tmp:
            lib = scenarios_dir or write_library(planted, library or Path(tmp) / "personas")
            run = run_recovery_eval(planted, names, lib, runs, llm=llm, seeds=seed_list, max_turns=max_turns, backend_options=knobs,
                                    cassettes=cassettes, on_result=progress, items_dir=items)
            if items is not None:
                _write_table_head(items, scenarios_dir, llm, seed_list, max_turns)
    except KeyboardInterrupt:
        note(f"interrupted. Finished debates are kept in {runs}; rerun the same command to resume.")
        raise typer.Exit(130) from None
    db_path = None
    if not no_store and run.results:
        try:
            db_path = store_recovery(run.run_dirs, run.scores, db)
        except StoreError as exc:
            fail(f"{exc} (the run folders are in {runs}; `crux-lab db ingest` loads them later, or pass --no-store).", code=1)
    if run.stopped is not None:
        if run.stopped.interrupted:
            note(stop_line(run.stopped, len(run.results), runs))
            raise typer.Exit(130)
        fail(stop_line(run.stopped, len(run.results), runs), code=1)
    knob_text = ", ".join(f"{k}={v}" for k, v in knobs.items() if v) or "default knobs"
    calibration = default_calibration()
    rows = recovery_summarize(run.scores + run.canaries, intervals=True)
    console.print(f"Matched by text and sides; {calibration.describe()}. Canaries: the topic and a vague "
                  "question must score 0, the answer key 1.", highlight=False)
    where = f"backend {llm.backend}" + (f", {knob_text}" if llm.backend == OFFLINE else "")
    console.print(recovery_interval_table(rows, f"Crux recovery: {len(planted)} scenario(s) x seeds {seeds}, {where}"))
    for key, err in run.failures.items():
        console.print(f"[yellow]failed[/yellow] {key}: {err}", highlight=False, soft_wrap=True)
    if db_path is not None:
        console.print(f"stored {len(run.results)} run(s) and their recovery metrics in {db_path} ({run.wall_s:.1f}s)")
    if json_out is not None:
        from dataclasses import asdict


        json_out.write_text(json.dumps({
            "backend": llm.backend, "models": dict(llm.models), "base_url": llm.base_url, "structured": llm.structured,
            "knobs": {k: knobs.get(k, 0.0) for k in option_names(OFFLINE)}, "scenario_seed": seed, "seeds": seed_list, "max_turns": max_turns,
            "scenarios": [s.id for s in planted], "calibration": asdict(calibration),
            "summary": rows, "scores": [asdict(s) for s in run.scores], "failures": run.failures,
        }, indent=1, default=str))
    if run.failures and not run.results:
        raise typer.Exit(1)


def _write_table_head(folder: Path, scenarios_dir: Path | None, llm: Any, seeds: Sequence[int], max_turns: int) -> None:
    """The items folder's ``table.json``: which scenario set and settings its records come from."""
    head = folder / "table.json"
    settings = json.loads(head.read_text(encoding="utf-8")) if head.is_file() else {}
    where = settings.get("scenarios", "")
    if scenarios_dir is not None:
        repo = Path(__file__).resolve().parents[2]
        full = scenarios_dir.resolve()
        where = str(full.relative_to(repo)) if full.is_relative_to(repo) else str(full)  # committed tables name a repo path
    settings.update({
        "scenarios": where,
        "backend": llm.backend, "models": dict(llm.models), "max_turns": max_turns,
        "seeds": sorted(set(settings.get("seeds", [])) | set(seeds)),
    })
    folder.mkdir(parents=True, exist_ok=True)
    head.write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")


@app.command("rescore")
def rescore_command(
    folders: Annotated[list[Path] | None, typer.Argument(help="Items folders (default: every folder under benchmarks/items).")] = None,
    readme: Annotated[Path | None, typer.Option(help="A Markdown file whose tables to rebuild between <!-- rescore: NAME --> and <!-- /rescore --> (default: benchmarks/README.md).")] = None,
    check: Annotated[bool, typer.Option("--check", help="Fail (exit 1) when a table in the README differs from its items; change nothing.")] = False,
    write: Annotated[bool, typer.Option("--write", help="Write the rebuilt tables into the README.")] = False,
) -> None:
    """Rebuild every recovery table, Polis crux table and Polis fidelity table from its committed compact items,
with the current scorer: print each, and with --check compare it with the README, or with
--write put it there."""
    from crux_lab.analysis.polis_eval import sides_markdown
    from crux_lab.analysis.polis_fidelity import fidelity_table
    from crux_lab.eval.items import (
        ItemsError,
        k_for_budget,
        load_table,
        pivots_against_flips,
        pivots_markdown,
        poll_against_debate,
        poll_markdown,
        reader_agreement,
        reader_markdown,
        rescore,
        table_markdown,
    )
    from crux_lab.eval.polis import rescore_fidelity, rescore_polis
    from crux_lab.eval.readme import ReadmeError, replace_blocks, table_blocks

    root = Path(__file__).resolve().parents[2] / "benchmarks"
    data = root.parent / "tests" / "data" / "polis"
    readme = readme or root / "README.md"
    polis = [] if folders else sorted(p for p in (root / "polis_items").glob("*") if p.is_dir())
    fidelity = [p for p in polis if p.name.startswith("fidelity-")]
    polis_cruxes = [p for p in polis if not p.name.startswith("fidelity-")]
    folders = folders or sorted(p for p in (root / "items").glob("*") if p.is_dir())
    if not folders:
        fail(f"no items folders under {root / 'items'}; pass one, as `crux-lab eval recovery --items DIR` writes them.")
    built: dict[str, str] = {}
    prepared: dict[str, Any] = {}
    try:
        for folder in fidelity:  # one persona-fidelity table per folder, against the vendored Polis votes
            built[folder.name] = fidelity_table(rescore_fidelity(folder, data, prepared=prepared))
            console.print(f"\nPersona fidelity on Polis ({folder}):", highlight=False)
            console.print(built[folder.name], highlight=False, soft_wrap=True)
        for folder in polis_cruxes:  # one Polis crux table per folder, with sides, against the held-out statements
            built[folder.name] = sides_markdown(polis_summarize(rescore_polis(folder, data)))
            console.print(f"\nCruxes with sides on Polis ({folder}):", highlight=False)
            console.print(built[folder.name], highlight=False, soft_wrap=True)
        for folder in folders:
            table = load_table(folder)
            scores = rescore(table)
            built[table.name] = table_markdown(scores, table.settings.get("debate_engines", []))
            console.print(f"\n{table.settings.get('title', table.name)} ({folder}):", highlight=False)
            console.print(built[table.name], highlight=False, soft_wrap=True)
            if polled := poll_against_debate(table):  # the poll's sides beside the debate's, same debates
                built[f"{table.name}.poll"] = poll_markdown(polled)
                console.print("\nThe poll's sides against the debate's own, on the same debates:", highlight=False)
                console.print(built[f"{table.name}.poll"], highlight=False, soft_wrap=True)
            for line in table.notes:
                console.print(f"[yellow]note[/yellow] {line}", highlight=False, soft_wrap=True)
            if (reader := reader_agreement(table, scores)) is not None:  # a reader's labels against the scorer
                built[f"{table.name}.reader"] = reader_markdown(reader)
                console.print(f"\nA reader's check: {reader['labels']} items labelled, {reader['accepted']} accepted; Cohen's kappa "
                              f"with the text match {_fmt(reader['kappa_text'])}, with recovery with sides "
                              f"{_fmt(reader['kappa_sides'])}", highlight=False)
                console.print(built[f"{table.name}.reader"], highlight=False, soft_wrap=True)
            if pivots := pivots_against_flips(table, scores):  # the pivot test against the planted flip conditions
                built[f"{table.name}.pivots"] = pivots_markdown(pivots)
                console.print("\nThe personas' pivot answers against the planted flip conditions:", highlight=False)
                console.print(built[f"{table.name}.pivots"], highlight=False, soft_wrap=True)
            arms = list(dict.fromkeys(s.engine for s in scores))
            base = next((a for a in arms if a.startswith("direct+") and "informed=true" in a and "samples" not in a), None)
            debates = [a for a in arms if a.split("+")[0] in table.settings.get("debate_engines", [])]
            if base and debates and (k := k_for_budget(scores, base, debates)) is not None:
                console.print(f"k for the k-sample baseline at the median debate engine's tokens: {k}", highlight=False)
    except (ItemsError, ScenarioError) as exc:
        fail(str(exc))
    if not (check or write):
        return
    try:
        text = readme.read_text(encoding="utf-8")
        blocks = table_blocks(text)
        if check:
            stale = [name for name, body in blocks.items() if name in built and body.strip() != built[name].strip()]
            missing = [name for name in blocks if name not in built]
            if stale or missing:
                fail(f"{readme}: tables that do not match their items: {', '.join(stale) or '-'}; "
                     f"tables with no items folder: {', '.join(missing) or '-'}. Run `crux-lab eval rescore --write`.", code=1)
            console.print(f"{readme}: {len(blocks)} table(s) match their items.")
        else:
            readme.write_text(replace_blocks(text, built), encoding="utf-8")
            console.print(f"{readme}: rebuilt {len(set(blocks) & set(built))} table(s).")
    except ReadmeError as exc:
        fail(str(exc))


@app.command("metrics")
def metrics(db: Annotated[Path | None, typer.Option(help="DuckDB file.")] = None) -> None:
    """Mean of every stored per-debate metric, per engine."""
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
POLIS_SIDES_COLUMNS = (
    ("engine", "arm"), ("held_out_debates", "runs"), ("items", "items"), ("matched_by_text", "by text"),
    ("recovered", "with sides"), ("sides_wrong", "sides wrong"), ("no_sides", "no sides"),
    ("restated_topic", "topic"), ("sides_precision", "P [95% CI]"), ("sides_recall_at_k", "R@5 [95% CI]"),
    ("sides_f1", "F1 [95% CI]"), ("calls", "calls"), ("wall_s", "wall s"),
)


def _polis_cell(row: dict[str, Any], key: str) -> str:
    if key.startswith("sides_") and f"{key.replace('_at_k', '')}_ci" in row:
        return with_interval(row[key], row[f"{key.replace('_at_k', '')}_ci"])
    if key == "precision":
        return with_interval(row["precision"], row["precision_ci"])
    if key == "recall_at_k":
        return with_interval(row["recall_at_k"], row["recall_ci"])
    value = row[key]
    return f"{value:.2f}" if isinstance(value, float) and not math.isnan(value) else _fmt(value)


def polis_table(rows: Sequence[dict[str, Any]], title: str) -> Table:
    """The per-engine Polis summary (:func:`crux_lab.analysis.polis_eval.summarize`) as a rich table."""
    return _engine_table([r for r in rows if not r["engine"].startswith("canary:")], title, POLIS_COLUMNS, _polis_cell)


def polis_sides_table(rows: Sequence[dict[str, Any]], title: str) -> Table:
    """The crux finding with sides against the held-out divisive statements, canaries last."""
    return _engine_table([r for r in rows if r.get("held_out_debates")], title, POLIS_SIDES_COLUMNS, _polis_cell)


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
    engines: Annotated[str, typer.Option(help="Comma-separated engines or arms ENGINE+KEY=VALUE..., e.g. direct+informed=true+samples=4 (direct and cot are the one-call baselines).")] = "direct,cot,dcg,panel",
    backend: BackendOpt = OFFLINE,
    base_url: BaseUrlOpt = None,
    model_strong: ModelStrongOpt = None,
    model_fast: ModelFastOpt = None,
    llm_config: LLMConfigOpt = None,
    structured: StructuredOpt = None,
    cassettes: CassettesOpt = None,
    seeds: SeedsOpt = "0",
    max_turns: Annotated[int, typer.Option(min=1, max=10_000, help="Turn budget per debate.")] = 30,
    k: Annotated[int, typer.Option("--k", min=1, help="Recall is measured on the top k divisive statements.")] = 5,
    min_votes: Annotated[int, typer.Option(min=1, help="Votes every group needs on a statement for it to count.")] = 5,
    min_difference: Annotated[float, typer.Option(min=0.0, max=1.0, help="Smallest between-group agree-rate difference of a divisive statement.")] = 0.25,
    per_group: Annotated[int, typer.Option(min=1, help="Most representative statements per group persona.")] = 5,
    consensus: Annotated[int, typer.Option(min=0, help="Consensus statements every persona also holds.")] = 2,
    min_clear: Annotated[int, typer.Option(min=1, help="A group with fewer clear statements gets no persona.")] = 3,
    topic: Annotated[str | None, typer.Option(help="Debate topic (one conversation only; default: its Polis topic).")] = None,
    holdout: Annotated[bool, typer.Option("--holdout/--no-holdout", help="Keep the top-k divisive statements, a seeded fifth of the other clear statements and their near copies (cosine 0.8) out of the personas' minds.")] = True,
    holdout_seed: Annotated[int, typer.Option(help="Seed of the fidelity share drawn for the hold-out.")] = 0,
    workdir: Annotated[Path, typer.Option(help="Holds library/<conversation>/ (the personas) and runs/ (finished debates are reused).")] = Path("experiments/polis"),
    db: Annotated[Path | None, typer.Option(help="DuckDB file (default: $CRUX_LAB_DB or data/crux_lab.duckdb).")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the scores as JSON here.")] = None,
    items: Annotated[Path | None, typer.Option("--items", help="Write each debate's and canary's compact items here (with the held-out split), to commit and re-score.")] = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="Do not ingest the runs or record metrics.")] = False,
) -> None:
    """Debate Polis conversations with one persona per opinion group and score the cruxes found
against what the votes say divides the groups (crux precision, recall@k, false common ground,
camp ARI); definitions in crux_lab/analysis/polis_truth.py and polis_eval.py."""
    names = arm_names(engines)
    try:
        seed_list = parse_seeds(seeds)
    except ValueError as exc:
        fail(str(exc))
    if topic is not None and len(folders) != 1:
        fail("--topic applies to one conversation; pass one folder or leave --topic out.")
    llm = live_backend(backend, base_url, model_strong, model_fast, llm_config, structured, cassettes)
    resolved, models, url = llm.backend, dict(llm.models), llm.base_url
    options = {"k": k, "min_votes": min_votes, "min_difference": min_difference, "per_group": per_group,
               "n_consensus": consensus, "min_clear": min_clear, "holdout": holdout, "holdout_seed": holdout_seed}
    setups = []
    left_out: dict[str, str] = {}
    for folder in folders:  # every folder is checked before any debate runs
        try:
            setups.append(prepare(folder, workdir / "library" / folder.name, topic=topic, **options))  # type: ignore[arg-type]
        except HoldOutError as exc:  # named and skipped, with the counts; the others still run
            left_out[folder.name] = str(exc)
            console.print(f"[yellow]skipped[/yellow] {exc}", highlight=False, soft_wrap=True)
        except (PolisDataError, OSError) as exc:
            fail(str(exc))
    if not setups:
        fail("no conversation keeps two personas after the hold-out: " + " ".join(left_out.values()))

    _take_ctrl_c()
    scores: list[Any] = []
    canaries: list[Any] = []
    failures: dict[str, str] = {}
    for setup in setups:
        t = setup.truth
        console.print(f"{t.conversation}: {len(t.groups)} groups, {len(t.statements)} statements, "
                      f"{len(t.divisive)} divisive (top {t.k}: {', '.join(t.top_divisive)}), "
                      f"{len(t.consensus)} consensus; personas {', '.join(setup.library.persona_ids)}; "
                      f"topic {setup.library.topic!r}", highlight=False, soft_wrap=True)
        if setup.held is not None:
            h = setup.held
            console.print(f"  held out of every mind: {len(h.divisive)} divisive, {len(h.fidelity)} fidelity, "
                          f"{len(h.near)} near copies (cosine {h.cosine})", highlight=False, soft_wrap=True)
        for skipped in setup.skipped:
            console.print(f"  [yellow]skipped[/yellow] {skipped}", highlight=False, soft_wrap=True)

        def progress(score: Any) -> None:
            console.print(f"  {score.progress()}", highlight=False, soft_wrap=True)

        try:
            run = run_polis_eval(setup, names, workdir, backend=resolved, seeds=seed_list, max_turns=max_turns,
                                 models=models, base_url=url, structured=llm.structured, cassettes=cassettes, db=db,
                                 store=not no_store, on_result=progress, items_dir=items)
        except StoreError as exc:
            fail(f"{exc} (the run folders are in {workdir / 'runs'}; `crux-lab db ingest` loads them later, or pass --no-store).", code=1)
        except KeyboardInterrupt:
            note(f"interrupted. Finished debates are kept in {workdir / 'runs'}; rerun the same command to resume.")
            raise typer.Exit(130) from None
        if run.stopped is not None:
            line = stop_line(run.stopped, len(scores) + len(run.results), workdir / "runs")
            if run.stopped.interrupted:
                note(line)
                raise typer.Exit(130)
            fail(line, code=1)
        scores += run.scores
        canaries += run.canaries
        failures.update({f"{t.conversation}/{key}": err for key, err in run.failures.items()})
        if run.db_path is not None:
            console.print(f"  stored {len(run.results)} run(s) and their polis_* metrics in {run.db_path}", highlight=False)
    console.print(f"Matched by text only; {default_calibration().describe()}.", highlight=False)
    console.print(polis_table(polis_summarize(scores), f"Cruxes against Polis votes: {len(setups)} conversation(s), backend {resolved}, seeds {seeds}"))
    if canaries:
        console.print(polis_sides_table(polis_summarize(scores + canaries),
                                        "Cruxes recovered with sides against the held-out divisive statements (canaries last)"))
    for key, err in failures.items():
        console.print(f"[yellow]failed[/yellow] {key}: {err}", highlight=False, soft_wrap=True)
    if json_out is not None:
        from dataclasses import asdict


        json_out.write_text(json.dumps({
            "backend": resolved, "models": models, "base_url": url, "seeds": seed_list, "options": options,
            "calibration": asdict(default_calibration()),
            "conversations": [{"conversation": s.truth.conversation, "topic": s.library.topic,
                               "groups": s.truth.group_sizes, "top_divisive": list(s.truth.top_divisive),
                               "consensus": list(s.truth.consensus), "skipped": s.skipped,
                               "heldout": s.held.as_dict() if s.held is not None else None} for s in setups],
            "left_out": left_out, "summary": polis_summarize(scores + canaries),
            "scores": [asdict(s) for s in scores + canaries], "failures": failures,
        }, indent=1, default=str))
    if failures and not scores:
        raise typer.Exit(1)
