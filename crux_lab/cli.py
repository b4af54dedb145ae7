"""The ``crux-lab`` command line (also ``python -m crux_lab``).

Commands: ``debate``, ``engines``, ``personas list|show``, ``db ingest|query|path|info``, plus
sub-apps other packages provide (``af``, ``sweep``, ...).

Bad input exits with code 2 and a one-paragraph message on stderr (never a traceback);
a debate that ran but ended in an engine error exits with code 1 after saving what it has.
The heavy libraries load on first use (DuckDB and PyArrow in the store, the backends' SDKs in
``llm.make_backend``, plotly in the report), so ``--help`` stays fast.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import signal
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from crux_lab.analysis.metric_registry import problems as metric_problems
from crux_lab.analysis.polled import crux_poll_lines, poll_lines
from crux_lab.backends import OFFLINE, choices_help
from crux_lab.backends import problems as backend_problems
from crux_lab.backends import registered as registered_backends
from crux_lab.console import (
    backend_choice,
    check_runs_dir,
    err_console,
    fail,
    llm_settings,
    note,
    out_console,
)
from crux_lab.engines import EngineConfigError, available
from crux_lab.engines import get as get_engine
from crux_lab.engines import problems as engine_problems
from crux_lab.llm import (
    LLMError,
    describe_backend_choice,
)
from crux_lab.llm.ledger import is_billed
from crux_lab.llm.registry import option_names
from crux_lab.models.config import MAX_TURNS, DebateConfig
from crux_lab.models.events import AgentTurn, CruxMessage, DialogueTurnEvent, MessagePosted
from crux_lab.persona_tools.cli import resolve_persona_id
from crux_lab.personas.loader import PersonaError, list_personas, persona_root
from crux_lab.registry import Registry
from crux_lab.runner import DebateRun
from crux_lab.scrub import install_log_filter, scrub
from crux_lab.store import (
    StoreError,
    applied_migrations,
    connect,
    default_runs_dir,
    find_run_dirs,
    ingest,
    query,
    resolve_db_path,
    table_counts,
)
from crux_lab.store.runfiles import RunFolderError
from crux_lab.store.tables import crux_lab_version
from crux_lab.tiers import STRUCTURED_HELP, allocation_help

if TYPE_CHECKING:
    from crux_lab.engines.base import Engine
    from crux_lab.models.result import DebateResult

app = typer.Typer(
    name="crux-lab",
    help="crux_lab: find where people really disagree. Persona debates -> argument graphs, crux cards, DuckDB.",
    no_args_is_help=True,
    add_completion=False,
    # Locals in a traceback could include a client holding an API key: never show them.
    pretty_exceptions_show_locals=False,
)

# ---------------------------------------------------------------------------
# Commands other packages provide, registered here by name with a "module:attribute" reference,
# or by another package with an entry point in the group crux_lab.commands (the same reference;
# a name already taken is left out with one line, which `crux-lab engines` prints). The module
# is imported when the CLI is assembled. The attribute is a typer.Typer (mounted
# as a command group) or a plain function (registered as a single command, so
# `crux-lab sweep FILE --report` parses options after the argument, which a group callback
# with an argument does not). A module that fails to import is mounted as a stub that
# reports the import error, so one broken package never breaks the whole CLI.
# Convention: ``crux_lab/<package>/cli.py``.
# ---------------------------------------------------------------------------
COMMANDS: Registry[str] = Registry("command", group="crux_lab.commands", lazy=True)


def register_command(name: str, ref: str) -> None:
    """Register the command ``name`` as the Typer app or function at ``ref`` ("module:attribute");
    a name already taken by another reference is an error."""
    COMMANDS.add(name, ref, origin=ref)


register_command("personas", "crux_lab.persona_tools.cli:app")
register_command("af", "crux_lab.argumentation.cli:af_app")
register_command("sweep", "crux_lab.sweep.cli:sweep")
register_command("report", "crux_lab.sweep.cli:report")
register_command("compare", "crux_lab.eval.compare:compare_command")
register_command("eval", "crux_lab.eval.cli:app")
register_command("local-model", "crux_lab.local_model.cli:app")
register_command("arena", "crux_lab.arena.cli:arena")

def subapps() -> list[tuple[str, str, str]]:
    """(module, attribute, command name) of each registered command, for mount_subapps."""
    return [(ref.partition(":")[0], ref.partition(":")[2], name) for name, ref in COMMANDS.items()]


SUBAPPS = subapps()


def _stub_app(name: str, problem: str) -> typer.Typer:
    stub = typer.Typer(help=f"(unavailable: {problem})")

    @stub.callback(invoke_without_command=True)
    def _unavailable() -> None:
        fail(f"`crux-lab {name}` is unavailable: {problem}", code=1)

    return stub


def load_subapp(module_name: str, attr: str, name: str) -> typer.Typer | Callable[..., Any]:
    """The Typer app (or command function) at ``module_name:attr``, or a stub that reports why
    it cannot be loaded."""
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # a bug in that package: report it when the command is used
        return _stub_app(name, f"{module_name} failed to import ({type(exc).__name__}: {exc})")
    sub = getattr(module, attr, None)
    if isinstance(sub, typer.Typer) or callable(sub):
        return sub
    return _stub_app(name, f"{module_name} has no Typer app or command function named {attr!r}")


# ---------------------------------------------------------------------------
# KEY=VALUE options
# ---------------------------------------------------------------------------


def parse_pairs(values: Sequence[str], option: str, known: Sequence[str], example: str) -> dict[str, str]:
    """``["a=1", "b=x"]`` -> ``{"a": "1", "b": "x"}``; malformed or unknown keys fail clearly.

    >>> parse_pairs(["drift=0.5"], "--sim", ["drift"], "drift=0.2")
    {'drift': '0.5'}
    """
    known_text = ", ".join(known) or "(none)"
    out: dict[str, str] = {}
    for raw in values:
        key, sep, value = raw.partition("=")
        key = key.strip()
        if not sep or not key or not value.strip():
            fail(f"{option} expects KEY=VALUE (e.g. {option} {example}); got {raw!r}. Known keys: {known_text}.")
        if key not in known:
            fail(f"{option}: unknown key {key!r}. Known keys: {known_text}. Form: {option} KEY=VALUE.")
        out[key] = value.strip()
    return out


def parse_sim(values: Sequence[str]) -> dict[str, float]:
    """The simulator's failure knobs from ``--sim KEY=VALUE`` (each a probability in [0, 1]),
    as its backend options."""
    known = option_names(OFFLINE)
    pairs = parse_pairs(values, "--sim", known, "missed_attack=0.4")
    knobs: dict[str, float] = {}
    for key, value in pairs.items():
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not 0.0 <= number <= 1.0:
            fail(f"--sim {key}={value}: the value must be a probability between 0 and 1 (e.g. --sim {key}=0.4). Known knobs: {', '.join(known)}.")
        knobs[key] = number
    return knobs


def parse_params(values: Sequence[str], engine: Engine) -> dict[str, Any]:
    """Engine parameters from ``--param KEY=VALUE``; values are JSON when they parse, else text."""
    known = sorted(engine.params_model.model_fields)
    pairs = parse_pairs(values, "--param", known, f"{known[0]}=VALUE" if known else "KEY=VALUE")
    params: dict[str, Any] = {}
    for key, value in pairs.items():
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params


# ---------------------------------------------------------------------------
# debate
# ---------------------------------------------------------------------------


def _check_personas(raw: str) -> list[str]:
    ids = [p.strip() for p in raw.split(",") if p.strip()]
    if not ids:
        fail("--personas is empty: pass comma-separated persona ids, e.g. --personas a,b (see `crux-lab personas list`).")
    valid = list_personas()
    resolved = [resolve_persona_id(p, valid) for p in ids]
    unknown = [p for p, r in zip(ids, resolved, strict=True) if r is None]
    if unknown:
        import difflib

        near = {p: difflib.get_close_matches(p, valid, n=1, cutoff=0.5) for p in unknown}
        hints = "; ".join(f"{p}: did you mean {m[0]}?" for p, m in near.items() if m)
        fail(
            f"unknown persona(s): {', '.join(unknown)}." + (f" {hints}" if hints else "")
            + f" Valid persona ids (in {persona_root()}): {', '.join(valid) or '(none)'}."
        )
    return [r for r in resolved if r is not None]


def _tier_help() -> str:
    try:
        return allocation_help()
    except Exception as exc:  # a broken price table must not break --help
        return f"(tier allocation unavailable: {exc})"


_TIER_HELP = _tier_help()


def _llm_settings(
    resolved: str, base_url: str | None, model_strong: str | None, model_fast: str | None, config_file: Path | None
) -> tuple[dict[str, str], str | None]:
    settings = llm_settings(resolved, base_url, model_strong, model_fast, config_file)
    return settings.models, settings.base_url


def _check_out(out: Path | None) -> None:
    if out is None:
        return
    if out.is_dir():
        fail(f"--out {out} is a directory; pass a file path such as {out / 'result.json'}.")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"--out {out}: cannot create its folder ({exc.strerror or exc}).")
    if not os.access(out.parent, os.W_OK):
        fail(f"--out {out}: the folder {out.parent} is not writable.")




def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(scrub(text))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _drive(run: Any, max_turns: int, show_progress: bool) -> tuple[DebateResult, bool]:
    """Run the debate with a rich progress bar (turns against --max-turns) on stderr.

    Returns the result and whether Ctrl-C stopped it (the caller saves it, then exits 130)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    progress = Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[last]}"),
        TimeElapsedColumn(),
        console=err_console,
        disable=not show_progress,
        transient=True,
    )

    async def consume() -> None:
        with progress:
            task = progress.add_task("turns", total=max_turns, last="")
            shown = False
            async for event in run.events():
                check = run.result.structured
                if check is not None and not shown:  # how replies are held to their schema, once
                    shown = True
                    progress.console.print(escape(check.line()))
                    if check.warning():
                        progress.console.print(f"[yellow]warning:[/] {escape(check.warning() or '')}")
                if isinstance(event, DialogueTurnEvent | AgentTurn | MessagePosted | CruxMessage):
                    turns = progress.tasks[task].completed + 1
                    # some engines (panel, graph) count turns their own way: grow the bar
                    progress.update(task, completed=turns, total=max(max_turns, turns))
                progress.update(task, last=event.type)
            # A debate that ends before --max-turns (converged, stopped) finishes the bar.
            progress.update(task, total=progress.tasks[task].completed or max_turns, last="done")

    interrupted = False
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Started with Ctrl-C ignored (a background job, a test runner's worker): take it
        # back, so that Ctrl-C always stops the debate and saves it as incomplete.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        asyncio.run(consume())
    except KeyboardInterrupt:
        note("[yellow]interrupted: saving the partial debate (complete = false)[/]")
        run.result.complete = False
        interrupted = True
    except Exception as exc:  # an engine bug: keep what it produced, report it, exit 1 later
        if os.environ.get("CRUX_LAB_DEBUG"):
            raise
        run.result.complete = False
        run.result.error = f"engine {run.config.engine!r} crashed: {type(exc).__name__}: {exc} (set CRUX_LAB_DEBUG=1 for the traceback)"
    # The loop is closed now and every cancelled call has unwound: take the ledger's final
    # word (the run's own snapshot can precede a sibling call's cancellation).
    run.result.llm_calls = run.ledger.snapshot()
    run.result.usage = run.ledger.usage()
    result: DebateResult = run.result
    return result, interrupted


def _summary(result: DebateResult, run_dir: Path, db_path: Path | None, out: Path | None) -> None:
    u = result.usage
    # The simulator and replay report what the calls would cost on Claude; nothing is billed.

    # The same words as the reports (viz.transcript.cost_text): only modelled cost is labelled.
    billed = "" if is_billed(result.backend) else " (modelled, not billed)"
    status = "complete" if result.complete else "[yellow]incomplete[/]"
    out_console.print(
        f"[bold]run {result.run_id}[/]  engine {escape(result.engine)}  backend {escape(result.backend)}  {status}"
    )
    regime = result.regime.value + (f" — {escape(result.regime_description)}" if result.regime_description else "")
    out_console.print(f"regime: {regime}")
    out_console.print(f"turns: {len(result.transcript)}  cruxes: {len(result.cruxes)}  crux cards: {len(result.crux_cards)}")
    names = result.persona_names or {}
    for crux in result.cruxes[:5]:
        kind = f" ({crux.disagreement_type.value})" if crux.disagreement_type else ""
        out_console.print(f"  - {escape(crux.statement)}{kind}")
        for line in crux_poll_lines(crux, names):
            out_console.print(f"      {escape(line)}")
    if len(result.cruxes) > 5:
        out_console.print(f"  ... and {len(result.cruxes) - 5} more")
    for line in poll_lines(result, names):
        out_console.print(escape(line))
    out_console.print(
        f"calls: {u.calls}  tokens: {u.input_tokens:,} in / {u.output_tokens:,} out"
        f" (cache read {'unknown' if u.cache_read_tokens is None else f'{u.cache_read_tokens:,}'},"
        f" write {u.cache_write_tokens:,})"
        f"  cost: ${u.cost_usd:.4f}{billed}  time: {result.duration_s:.1f}s"
    )
    out_console.print(f"transcript: {run_dir / 'transcript.md'}")
    out_console.print(f"run folder: {run_dir}")
    out_console.print(f"database: {db_path}" if db_path else f"database: not ingested (crux-lab db ingest {run_dir})")
    if out is not None:
        out_console.print(f"result JSON: {out}")


@app.command()
def debate(
    topic: Annotated[str, typer.Option("--topic", "-t", help="The question the personas debate.")],
    personas: Annotated[str, typer.Option("--personas", "-p", help="Comma-separated persona ids (see `crux-lab personas list`).")],
    engine: Annotated[str, typer.Option("--engine", "-e", help="Debate engine (see `crux-lab engines`).")] = "dialogue",
    backend: Annotated[str, typer.Option("--backend", "-b", help=choices_help() + ". auto = anthropic when ANTHROPIC_API_KEY is set. " + _TIER_HELP)] = "auto",
    max_turns: Annotated[int, typer.Option("--max-turns", help="Turn budget (> 0).")] = 30,
    seed: Annotated[int, typer.Option("--seed", help="Seed (the run id hashes it with the other parameters).")] = 0,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Also write the DebateResult JSON here.")] = None,
    sim: Annotated[list[str] | None, typer.Option("--sim", help="Simulator knob KEY=VALUE, repeatable (sycophancy, missed_attack, vague_crux, drift).")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", help="Engine parameter KEY=VALUE, repeatable (JSON values).")] = None,
    cassette: Annotated[Path | None, typer.Option("--cassette", help="Replay cassette (JSONL) to record into or replay from.")] = None,
    db: Annotated[Path | None, typer.Option("--db", envvar="CRUX_LAB_DB", help="DuckDB file (default data/crux_lab.duckdb).")] = None,
    runs_dir: Annotated[Path | None, typer.Option("--runs-dir", envvar="CRUX_LAB_RUNS", help="Where run folders go (default runs/).")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="openai backend: the server's URL, e.g. http://127.0.0.1:8080/v1 (default $OPENAI_BASE_URL, else OpenAI's). Key: $OPENAI_API_KEY, none for a local server.")] = None,
    model_strong: Annotated[str | None, typer.Option("--model-strong", help="Model id of the strong tier (anthropic, openai).")] = None,
    model_fast: Annotated[str | None, typer.Option("--model-fast", help="Model id of the fast tier (anthropic, openai).")] = None,
    llm_config: Annotated[Path | None, typer.Option("--llm-config", help="YAML/JSON file with base_url, model_strong, model_fast, structured (the flags win).")] = None,
    structured: Annotated[str | None, typer.Option("--structured", help=STRUCTURED_HELP)] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar.")] = True,
    do_ingest: Annotated[bool, typer.Option("--ingest/--no-ingest", help="Ingest into DuckDB (--no-ingest: only the run folder, e.g. while another process holds the database).")] = True,
) -> None:
    """Run one debate, save its run folder, ingest it into DuckDB, and print a summary."""
    if not topic.strip():
        fail("the topic is empty: pass --topic 'a question to debate'.")

    if not 0 < max_turns <= MAX_TURNS:
        fail(f"--max-turns must be a whole number of turns from 1 to {MAX_TURNS:,}; got {max_turns}. Pass e.g. --max-turns 30.")
    if not 0 <= seed <= 2**63 - 1:
        fail(f"--seed must be a whole number from 0 to {2**63 - 1}; got {seed}.")
    knobs = parse_sim(sim or [])

    try:
        engine_obj = get_engine(engine)
    except EngineConfigError as exc:
        fail(str(exc))
    except Exception as exc:  # an engine module that fails to import (a bug, not bad input)
        fail(f"cannot load the engines ({type(exc).__name__}: {exc}).", code=1)
    params = parse_params(param or [], engine_obj)
    persona_ids = _check_personas(personas)
    resolved = backend_choice(backend, cassette)
    if sim and not option_names(resolved):
        fail(f"--sim sets the simulator's knobs; the {resolved} backend has none. Drop --sim, or pass --backend simulated.")
    llm = llm_settings(resolved, base_url, model_strong, model_fast, llm_config, structured)
    llm_models, llm_url = llm.models, llm.base_url
    _check_out(out)
    runs_folder = check_runs_dir(runs_dir)

    from pydantic import ValidationError

    try:
        config = DebateConfig(
            topic=topic.strip(), persona_ids=persona_ids, engine=engine, backend=resolved,
            seed=seed, max_turns=max_turns, backend_options=knobs, params=params,
            models=llm_models, base_url=llm_url, structured=llm.structured,
        )
    except ValidationError as exc:
        err = exc.errors()[0]
        fail(f"invalid debate configuration: {'.'.join(map(str, err['loc']))}: {err['msg']}.")
    try:
        run = DebateRun(config, cassette=cassette)
    except (EngineConfigError, PersonaError, LLMError, ValueError) as exc:
        fail(str(exc))

    db_path = resolve_db_path(db)
    if do_ingest:
        try:
            connect(db_path).close()  # fail on a bad database before spending any calls
        except StoreError as exc:
            fail(f"{exc} (Or pass --no-ingest to only write the run folder.)")

    note(escape(describe_backend_choice(backend, cassette=cassette, models=llm_models, base_url=llm_url)))
    note(f"engine: {escape(engine)}  personas: {escape(', '.join(persona_ids))}  run: {config.run_id()}")
    result, interrupted = _drive(run, max_turns, progress)

    from crux_lab.runs import save_runs

    try:
        saved = save_runs([result], runs_folder, db=db_path, ingest=do_ingest)
    except OSError as exc:
        fail(f"the debate ran but its run folder could not be written in {runs_folder}: {exc}", code=1)
    run_dir = saved.run_dirs[0]
    if saved.problem is not None:
        fail(f"the run was saved in {run_dir} but not ingested: {saved.problem} Retry with `crux-lab db ingest {run_dir}`.", code=1)
    if out is not None:
        _write_atomic(out, result.model_dump_json(indent=1))
    _summary(result, run_dir, db_path if do_ingest else None, out)
    if interrupted:
        raise typer.Exit(130)  # as a shell reports a command stopped by Ctrl-C (and as `sweep` does)
    if result.error:
        fail(f"the debate stopped on an error: {result.error}", code=1)


# ---------------------------------------------------------------------------
# engines
# ---------------------------------------------------------------------------


@app.command("engines")
def engines_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object name -> description.")] = False,
) -> None:
    """List the debate engines, with one line each."""
    try:
        engines = available()
    except Exception as exc:  # an engine that fails to build
        fail(f"cannot load the engines ({type(exc).__name__}: {exc}).", code=1)
    try:
        metric_lines = metric_problems()
    except Exception as exc:  # a metric module of crux_lab's own that fails to import
        metric_lines = [f"the metrics failed to load ({type(exc).__name__}: {exc})"]
    _warn_plugins(engine_problems(), metric_lines, COMMANDS.problems)
    if as_json:
        typer.echo(json.dumps(engines))
        return
    table = Table("engine", "description")
    table.columns[0].overflow = "fold"
    for name, desc in engines.items():
        table.add_row(name, desc)
    out_console.print(table)


def _warn_plugins(*problems: Sequence[str]) -> None:
    """One warning line (on stderr) per plug-in left out: which plug-in, which name, which package."""
    for line in (line for lines in problems for line in lines):
        err_console.print(f"warning: {line}", markup=False, emoji=False, highlight=False, soft_wrap=True)


@app.command("backends")
def backends_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object name -> description.")] = False,
) -> None:
    """List the LLM backends --backend accepts, with one line each (and one warning line per
    plug-in left out)."""
    specs = registered_backends()
    _warn_plugins(backend_problems())
    if as_json:
        typer.echo(json.dumps({name: spec.description for name, spec in specs.items()}))
        return
    table = Table("backend", "billed", "description")
    table.columns[0].overflow = "fold"
    for name, spec in specs.items():
        table.add_row(name, "yes" if spec.billed else "no", spec.description)
    out_console.print(table)


# ---------------------------------------------------------------------------
# db
# ---------------------------------------------------------------------------

db_app = typer.Typer(help="The DuckDB store: ingest run folders, query, locate.", no_args_is_help=True)
DbOption = Annotated[Path | None, typer.Option("--db", envvar="CRUX_LAB_DB", help="DuckDB file (default data/crux_lab.duckdb).")]


@db_app.command("path")
def db_path_cmd(db: DbOption = None) -> None:
    """Print the database path in use (--db, else CRUX_LAB_DB, else data/crux_lab.duckdb)."""
    typer.echo(str(resolve_db_path(db)))


@db_app.command("ingest")
def db_ingest(
    paths: Annotated[list[Path] | None, typer.Argument(help="Run folders, or folders containing run folders (default: the runs folder).")] = None,
    db: DbOption = None,
) -> None:
    """Load run folders into the database (idempotent by run id; all or nothing)."""
    from rich.progress import Progress

    paths = paths or [default_runs_dir()]
    try:
        total = len(find_run_dirs(paths))
        with Progress(console=err_console, transient=True) as progress:
            task = progress.add_task("ingesting", total=total)
            report = ingest(paths, db, on_run=lambda _p: progress.advance(task))
    except (StoreError, RunFolderError) as exc:
        fail(f"{exc} Nothing was ingested.")
    for dup in report.duplicates:
        note(f"[yellow]note:[/] {dup} has the same run id as a later folder; the later one was kept.")
    out_console.print(f"ingested {len(report.run_ids)} run(s), {report.total_rows:,} rows into {resolve_db_path(db)}")


@db_app.command("query")
def db_query(
    sql: Annotated[str, typer.Argument(help='SQL, e.g. "SELECT regime, count(*) FROM debates GROUP BY 1".')],
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array of row objects.")] = False,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV with a header row.")] = False,
    limit: Annotated[int, typer.Option("--limit", help="Rows shown in the table (JSON and CSV get all).")] = 200,
) -> None:
    """Run a read-only SQL query and print its rows with full values: a table when it fits the
    terminal, else one block per row (column : value); or JSON, or CSV."""
    try:
        res = query(sql, db)
    except StoreError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(res.to_json())
        return
    if as_csv:
        import csv
        import sys

        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(res.columns)
        writer.writerows([_cell(v) for v in row] for row in res.rows)
        return
    rows = [[_cell(v) for v in row] for row in res.rows[:limit]]
    widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(res.columns)]
    if sum(widths) + 3 * len(widths) + 1 <= out_console.width and all("\n" not in v for r in rows for v in r):
        table = Table(*res.columns)
        for row in rows:
            table.add_row(*(escape(v) for v in row))
        out_console.print(table)
    else:  # too wide for a table without cutting values: one block per row
        pad = max((len(c) for c in res.columns), default=0)
        for n, row in enumerate(rows, 1):
            out_console.print(f"[bold]-- row {n}[/]")
            for col, value in zip(res.columns, row, strict=True):
                out_console.print(f"{escape(col):<{pad}} : {escape(value)}", highlight=False)
    if len(res.rows) > limit:
        note(f"({len(res.rows) - limit} more rows; use --limit, --json or --csv)")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


@db_app.command("info")
def db_info(
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the path, migrations and row counts as JSON.")] = False,
) -> None:
    """Schema version (applied migrations) and row counts."""
    try:
        con = connect(db, read_only=True)
    except StoreError as exc:
        fail(str(exc))
    try:
        try:
            counts = table_counts(con, resolve_db_path(db))
        except StoreError as exc:
            fail(str(exc))
        if as_json:
            typer.echo(json.dumps({"database": str(resolve_db_path(db)), "migrations": list(applied_migrations(con)),
                                   "rows": dict(counts)}))
            return
        out_console.print(f"database: {resolve_db_path(db)}")
        out_console.print(f"migrations: {', '.join(applied_migrations(con))}")
        table = Table("table", "rows")
        for name, n in counts.items():
            table.add_row(name, f"{n:,}")
        out_console.print(table)
    finally:
        con.close()


# ---------------------------------------------------------------------------
# assembly
# ---------------------------------------------------------------------------


def _version(value: bool) -> None:
    if value:
        typer.echo(f"crux_lab {crux_lab_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")] = False,
) -> None:
    """crux_lab: find where people really disagree."""
    install_log_filter()  # every log record of every command is scrubbed of API keys


def mount_subapps(target: typer.Typer, subapps: Sequence[tuple[str, str, str]]) -> list[str]:
    """Mount each sub-app (or command function) on ``target``; returns the names mounted."""
    mounted: list[str] = []
    for module_name, attr, name in subapps:
        sub = load_subapp(module_name, attr, name)
        if isinstance(sub, typer.Typer):
            target.add_typer(sub, name=name)
        else:
            target.command(name)(sub)
        mounted.append(name)
    return mounted


mount_subapps(app, SUBAPPS)
app.add_typer(db_app, name="db")


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of ``python -m crux_lab``."""
    app(args=list(argv) if argv is not None else None, prog_name="crux-lab")
