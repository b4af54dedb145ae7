"""Cross-engine run: the same topic, personas and seed through several engines.

``compare(...)`` runs each engine in turn (an unknown engine name is skipped with a message
listing the valid ones), writes one run folder per engine and ingests them into DuckDB in one step (the
store's single-writer rule), and returns the results. ``comparison_table`` renders the
side-by-side view: cruxes and cards found beside the calls, tokens and cost they took, with
regime, turns and wall time (what each engine's extra calls buy).
``compare_command`` is the Typer command the CLI mounts as ``crux-lab compare``.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from crux_lab.backends import OFFLINE, choices_help
from crux_lab.console import llm_settings
from crux_lab.engines import COMPARE_ORDER, available, get, registered
from crux_lab.engines.base import EngineConfigError, check_config, check_personas, validate_params
from crux_lab.llm import resolve_backend_name
from crux_lab.models.config import DebateConfig
from crux_lab.models.result import DebateResult
from crux_lab.personas.loader import PersonaError, load_personas
from crux_lab.runner import run_debate
from crux_lab.runs import save_runs
from crux_lab.store import resolve_db_path
from crux_lab.tiers import STRUCTURED_HELP


def all_engines() -> tuple[str, ...]:
    """Every registered engine (crux_lab's and any plug-in's): what compare runs when no engines
    are given, crux_lab's own in ``COMPARE_ORDER``, then the others in listing order."""
    rank = {name: i for i, name in enumerate(COMPARE_ORDER)}
    listed = registered()
    return tuple(sorted(listed, key=lambda n: (rank.get(n, len(rank)), listed.index(n))))


def __getattr__(name: str) -> Any:
    if name == "ALL_ENGINES":  # read from the engine registry when asked for
        return all_engines()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class CompareError(ValueError):
    """A comparison that cannot start (bad engine list, bad parameter, bad persona...)."""


@dataclass
class Comparison:
    """What a cross-engine run produced (runtime)."""

    results: list[DebateResult] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    run_dirs: list[Path] = field(default_factory=list)
    db_path: Path | None = None
    store_note: str = ""


@dataclass(frozen=True)
class CompareRow:
    engine: str
    status: str
    cruxes: int
    cards: int
    regime: str
    turns: int
    calls: int
    tokens: int
    cost_usd: float
    wall_s: float

    @classmethod
    def of(cls, r: DebateResult) -> CompareRow:
        status = "complete" if r.complete else ("error" if r.error else "incomplete")
        return cls(
            engine=r.engine, status=status, cruxes=len(r.cruxes), cards=len(r.crux_cards), regime=r.regime.value,
            turns=len(r.transcript), calls=r.usage.calls,
            tokens=r.usage.input_tokens + r.usage.output_tokens + (r.usage.cache_read_tokens or 0) + r.usage.cache_write_tokens,
            cost_usd=round(r.usage.cost_usd, 6), wall_s=round(r.duration_s, 3),
        )


def parse_engine_list(raw: str | Sequence[str]) -> list[str]:
    """``"blitz, graph"`` -> ``["blitz", "graph"]``; duplicates and empties are refused.

    >>> parse_engine_list("blitz, graph")
    ['blitz', 'graph']
    >>> parse_engine_list("blitz,,blitz")
    Traceback (most recent call last):
    ...
    crux_lab.eval.compare.CompareError: engine 'blitz' is listed twice in --engines; give each engine once.
    """
    items = [e.strip() for e in (raw.split(",") if isinstance(raw, str) else raw) if e.strip()]
    if not items:
        raise CompareError(f"no engines given: pass --engines {','.join(all_engines())} (or a subset).")
    for e in items:
        if items.count(e) > 1:
            raise CompareError(f"engine '{e}' is listed twice in --engines; give each engine once.")
    return items


def parse_engine_params(values: Sequence[str], engines: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``graph.max_rounds=2`` -> ``{"graph": {"max_rounds": 2}}`` (values are JSON when they parse).

    >>> parse_engine_params(["graph.max_rounds=2", "blitz.table_size=4"], ["graph", "blitz"])
    {'graph': {'max_rounds': 2}, 'blitz': {'table_size': 4}}
    """
    out: dict[str, dict[str, Any]] = {}
    for raw in values:
        key, sep, value = raw.partition("=")
        engine, dot, name = key.strip().partition(".")
        if not sep or not dot or not engine or not name:
            raise CompareError(f"--param {raw!r}: write ENGINE.KEY=VALUE, e.g. --param graph.max_rounds=2.")
        if engine not in engines:
            raise CompareError(f"--param {raw!r}: engine '{engine}' is not in --engines ({', '.join(engines)}).")
        try:
            parsed: Any = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        out.setdefault(engine, {})[name] = parsed
    return out


async def _run_one(config: DebateConfig) -> DebateResult:
    return await run_debate(config)


def run_comparison(
    topic: str,
    persona_ids: Sequence[str],
    engines: Sequence[str] | None = None,
    seed: int = 0,
    db_path: str | Path | None = None,
    *,
    backend: str = OFFLINE,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    backend_options: Mapping[str, Any] | None = None,
    max_turns: int = 30,
    runs_dir: str | Path | None = None,
    store: bool = True,
    on_message: Callable[[str], None] | None = None,
    models: Mapping[str, str] | None = None,
    base_url: str | None = None,
    structured: str | None = None,
) -> Comparison:
    """Run every engine on the same input; see the module docstring."""
    say = on_message or (lambda _m: None)
    names = parse_engine_list(list(all_engines() if engines is None else engines))
    known = available()
    params = params or {}
    out = Comparison()
    configs: list[DebateConfig] = []
    for name in names:
        if name not in known:
            out.skipped[name] = "unknown engine"
            say(f"skipping engine '{name}': unknown engine (valid: {', '.join(known)})")
            continue
        try:
            configs.append(
                DebateConfig(
                    topic=topic, persona_ids=list(persona_ids), engine=name, backend=backend, seed=seed,
                    max_turns=max_turns, backend_options=dict(backend_options or {}), params=dict(params.get(name, {})),
                    models=dict(models or {}), base_url=base_url, structured=structured,
                )
            )
        except ValidationError as exc:
            err = exc.errors()[0]
            raise CompareError(f"invalid configuration for engine '{name}': {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    # Check personas, every engine's parameters and persona count before spending any calls.

    try:
        load_personas(list(persona_ids))
    except PersonaError as exc:
        raise CompareError(str(exc)) from None

    for config in configs:
        engine = get(config.engine)
        try:
            check_personas(engine, config.persona_ids)
            check_config(engine, config, validate_params(engine, config))
        except EngineConfigError as exc:
            raise CompareError(str(exc)) from None
    for config in configs:
        say(f"running {config.engine} ...")
        try:
            result = asyncio.run(_run_one(config))
        except EngineConfigError as exc:
            out.skipped[config.engine] = str(exc)
            say(f"skipping engine '{config.engine}': {exc}")
            continue
        except Exception as exc:  # one engine's bug must not cost the other engines' runs
            if os.environ.get("CRUX_LAB_DEBUG"):
                raise
            out.skipped[config.engine] = f"crashed: {type(exc).__name__}: {exc}"
            say(f"engine '{config.engine}' crashed ({type(exc).__name__}: {exc}); set CRUX_LAB_DEBUG=1 for the traceback")
            continue
        out.results.append(result)
    if store and out.results:
        _store(out, db_path, runs_dir, say)
    return out


def _store(out: Comparison, db_path: str | Path | None, runs_dir: str | Path | None, say: Callable[[str], None]) -> None:

    out.db_path = resolve_db_path(db_path)
    saved = save_runs(out.results, runs_dir, db=out.db_path)  # one writer, one transaction for all engines
    out.run_dirs = saved.run_dirs
    if saved.problem is not None:
        out.store_note = f"runs saved in {out.run_dirs[0].parent} but not ingested: {saved.problem}"
        say(out.store_note)


def compare(
    topic: str,
    persona_ids: Sequence[str],
    engines: Sequence[str] | None = None,
    seed: int = 0,
    db_path: str | Path | None = None,
    **kwargs: Any,
) -> list[DebateResult]:
    """Run the same input through every engine; one run per engine lands in DuckDB.

    Keyword arguments are those of :func:`run_comparison` (backend, params, backend_options, max_turns,
    runs_dir, store, on_message).
    """
    return run_comparison(topic, persona_ids, engines, seed, db_path, **kwargs).results


def comparison_rows(results: Sequence[DebateResult]) -> list[CompareRow]:
    return [CompareRow.of(r) for r in results]


def comparison_frame(results: Sequence[DebateResult]) -> Any:
    """The comparison rows as a pandas DataFrame (one row per engine), for notebooks."""
    import pandas as pd

    return pd.DataFrame([row.__dict__ for row in comparison_rows(results)]).set_index("engine")


def comparison_table(results: Sequence[DebateResult], skipped: Mapping[str, str] | None = None) -> Table:
    """The side-by-side rich table (skipped engines shown as such)."""
    table = Table(title="Engine comparison", header_style="bold")
    for col, justify in [("engine", "left"), ("status", "left"), ("cruxes", "right"), ("cards", "right"), ("regime", "left"),
                         ("turns", "right"), ("calls", "right"), ("tokens", "right"), ("cost $", "right"), ("wall s", "right")]:
        table.add_column(col, justify=justify, overflow="fold")  # type: ignore[arg-type]  # never cut a value
    for row in comparison_rows(results):
        table.add_row(row.engine, row.status, str(row.cruxes), str(row.cards), row.regime, str(row.turns), str(row.calls),
                      f"{row.tokens:,}", f"{row.cost_usd:.4f}", f"{row.wall_s:.2f}")
    for name in skipped or {}:
        table.add_row(escape(name), "skipped", "-", "-", "-", "-", "-", "-", "-", "-")
    if skipped:
        table.caption = "; ".join(f"{escape(n)}: {escape(r)}" for n, r in skipped.items())
    return table


def compare_command(
    topic: Annotated[str, typer.Option("--topic", "-t", help="The question every engine debates.")],
    personas: Annotated[str, typer.Option("--personas", "-p", help="Comma-separated persona ids.")],
    engines: Annotated[str, typer.Option("--engines", "-e", help="Comma-separated engines to compare.")] = ",".join(all_engines()),
    seed: Annotated[int, typer.Option("--seed", help="Seed shared by every engine.")] = 0,
    backend: Annotated[str, typer.Option("--backend", "-b", help=choices_help() + ".")] = "auto",
    max_turns: Annotated[int, typer.Option("--max-turns", help="Turn budget for engines that use one.")] = 30,
    param: Annotated[list[str] | None, typer.Option("--param", help="ENGINE.KEY=VALUE, repeatable (e.g. graph.max_rounds=2).")] = None,
    db: Annotated[Path | None, typer.Option("--db", envvar="CRUX_LAB_DB", help="DuckDB file (default data/crux_lab.duckdb).")] = None,
    runs_dir: Annotated[Path | None, typer.Option("--runs-dir", envvar="CRUX_LAB_RUNS", help="Where run folders go.")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the comparison rows as JSON here.")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="openai backend: the server's URL, e.g. http://127.0.0.1:8080/v1.")] = None,
    model_strong: Annotated[str | None, typer.Option("--model-strong", help="Model id of the strong tier (anthropic, openai).")] = None,
    model_fast: Annotated[str | None, typer.Option("--model-fast", help="Model id of the fast tier (anthropic, openai).")] = None,
    llm_config: Annotated[Path | None, typer.Option("--llm-config", help="YAML/JSON file with base_url, model_strong, model_fast, structured (the flags win).")] = None,
    structured: Annotated[str | None, typer.Option("--structured", help=STRUCTURED_HELP)] = None,
) -> None:
    """Run the same topic, personas and seed through several engines and compare them side by side."""
    err = Console(stderr=True)

    def fail(message: str) -> None:
        err.print(f"[red]error:[/] {escape(message)}")
        raise typer.Exit(2)

    if not topic.strip():
        fail("the topic is empty: pass --topic 'a question to debate'.")
    ids = [p.strip() for p in personas.split(",") if p.strip()]
    if not ids:
        fail("no personas given: pass --personas a,b,c (see `crux-lab personas list`).")
    try:
        resolved = resolve_backend_name(backend)

        llm = llm_settings(resolved, base_url, model_strong, model_fast, llm_config, structured)
        names = parse_engine_list(engines)
        params = parse_engine_params(param or [], names)
        outcome = run_comparison(
            topic.strip(), ids, names, seed, db, backend=resolved, params=params, max_turns=max_turns,
            runs_dir=runs_dir, on_message=lambda m: err.print(escape(m)),
            models=llm.models, base_url=llm.base_url, structured=llm.structured,
        )
    except (CompareError, ValueError, KeyError) as exc:
        fail(str(exc).strip("'\""))
        return
    Console().print(comparison_table(outcome.results, outcome.skipped))
    if outcome.db_path is not None and not outcome.store_note:
        err.print(f"{len(outcome.run_dirs)} run(s) ingested into {outcome.db_path}")
    if json_out is not None:
        rows = [row.__dict__ for row in comparison_rows(outcome.results)]
        json_out.write_text(json.dumps({"rows": rows, "skipped": outcome.skipped}, indent=1), encoding="utf-8")


# Mountable as a sub-app too: ``app.add_typer(compare_app, name="compare")``.
app = typer.Typer(help="Compare debate engines on the same input.", no_args_is_help=True)
app.callback(invoke_without_command=True)(compare_command)
