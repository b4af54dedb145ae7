"""``crux-lab arena ENGINE ENGINE [...]``: judge engines' crux cards pairwise from the store.

Reads the engines' stored runs, pairs them by topic and personas (same seed first), has the
judge compare each pair in both orders, prints Bradley-Terry scores with bootstrap intervals
and writes every judgement to the ``arena_judgements`` table.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from crux_lab.analysis.quality import judge_falsifiers
from crux_lab.arena.core import (
    RUBRIC,
    ArenaError,
    CardSet,
    Judgement,
    Scores,
    bt_with_bootstrap,
    judge_pair,
    load_card_sets,
    pair_runs,
    write_judgements,
)
from crux_lab.backends import OFFLINE
from crux_lab.llm import make_backend, resolve_backend_name
from crux_lab.llm.base import LLMError
from crux_lab.llm.registry import options_for_library
from crux_lab.personas.loader import load_personas, propositions_for
from crux_lab.store import StoreError, connect, record_metrics


@dataclass(frozen=True)
class JudgeModel:
    """Where the openai backend's judge runs: a base URL and a model (None: the defaults)."""

    base_url: str | None = None
    model: str | None = None


def _judge_backend(name: str, persona_ids: Sequence[str], seed: int, where: JudgeModel = JudgeModel()) -> Any:
    personas = load_personas(list(persona_ids))
    models = {"strong": where.model, "fast": where.model} if where.model else None
    resolved = resolve_backend_name(name)
    options = options_for_library(resolved, personas, propositions_for(list(persona_ids)), seed)
    return make_backend(resolved, options=options, models=models, base_url=where.base_url)


def plan(sets: dict[str, list[CardSet]], engines: Sequence[str]) -> list[tuple[CardSet, CardSet]]:
    """Every pair of runs to judge, over every pair of engines; :class:`ArenaError` naming
    what to run when an engine has no runs, or two engines share no topic."""
    missing = [e for e in engines if not sets.get(e)]
    if missing:
        have = next((s for e in engines for s in sets.get(e, [])), None)
        topic = repr(have.topic) if have else "'a question to debate'"
        personas = ",".join(have.persona_ids) if have else "a,b"
        raise ArenaError(
            f"no stored runs for {', '.join(missing)} in this database. Run them on the same topic and "
            f"personas as the other engine(s) first, e.g.: crux-lab compare --engines {','.join(engines)} "
            f"--topic {topic} --personas {personas}"
        )
    pairs: list[tuple[CardSet, CardSet]] = []
    for a, b in combinations(engines, 2):
        found = pair_runs(sets[a], sets[b])
        if not found:
            topics = sorted({s.topic for s in sets[a]})[:3]
            raise ArenaError(
                f"{a} and {b} have no runs on a shared topic with the same personas. {a} ran on: "
                + "; ".join(repr(t) for t in topics)
                + f". Run {b} on one of them, e.g.: crux-lab debate --engine {b} --topic {topics[0]!r} "
                f"--personas {','.join(sets[a][0].persona_ids)}"
            )
        pairs += found
    return pairs


async def run_arena(
    pairs: Sequence[tuple[CardSet, CardSet]],
    backend_name: str,
    seed: int = 0,
    where: JudgeModel = JudgeModel(),
    skipped: list[str] | None = None,
) -> list[Judgement]:
    """Judge every pair in both orders (one judge backend per persona set); verdicts that
    stayed off-schema are left out and listed in ``skipped``."""
    out: list[Judgement] = []
    backends: dict[tuple[str, ...], Any] = {}
    for a, b in pairs:
        backend = backends.get(a.persona_ids)
        if backend is None:
            backend = backends[a.persona_ids] = _judge_backend(backend_name, a.persona_ids, seed, where)
        names = {p.id: p.name for p in load_personas(list(a.persona_ids)).values()}
        out += await judge_pair(backend, a, b, names, skipped)
    for backend in backends.values():
        close = getattr(backend, "aclose", None)
        if close is not None:
            await close()
    return out


async def judge_run_falsifiers(
    pairs: Sequence[tuple[CardSet, CardSet]], backend_name: str, seed: int = 0, where: JudgeModel = JudgeModel()
) -> dict[str, tuple[float, str]]:
    """Falsifier concreteness of every judged run by the rubric judge
    (:func:`crux_lab.analysis.quality.judge_falsifiers`): ``{run_id: (share, basis)}``."""
    out: dict[str, tuple[float, str]] = {}
    for card_set in {s.run_id: s for pair in pairs for s in pair}.values():
        falsifiers = list(dict.fromkeys(f for c in card_set.cards for _, _, f in c.positions if f))
        if not falsifiers:
            continue
        backend = _judge_backend(backend_name, card_set.persona_ids, seed, where)
        out[card_set.run_id] = await judge_falsifiers(backend, falsifiers)
        close = getattr(backend, "aclose", None)
        if close is not None:
            await close()
    return out


def scores_table(scores: Scores) -> Table:
    table = Table(title="Arena: Bradley-Terry scores (log-strength; 95% bootstrap CI over pairs)", header_style="bold")
    for col in ("engine", "score", "95% CI", "wins", "ties", "losses"):
        table.add_column(col, justify="left" if col == "engine" else "right")
    for engine in sorted(scores.score, key=lambda e: -scores.score[e]):
        r = scores.record.get(engine, {})
        table.add_row(escape(engine), f"{scores.score[engine]:+.2f}", f"[{scores.low[engine]:+.2f}, {scores.high[engine]:+.2f}]",
                      str(r.get("wins", 0)), str(r.get("ties", 0)), str(r.get("losses", 0)))
    table.caption = f"{scores.n_pairs} pair(s) of runs, each judged in both orders: {scores.n_judgements} judgements"
    return table


def arena(
    engines: Annotated[list[str], typer.Argument(help="Two (or more) engines whose stored runs to compare, e.g. panel direct.")],
    db: Annotated[Path | None, typer.Option("--db", envvar="CRUX_LAB_DB", help="DuckDB file (default data/crux_lab.duckdb).")] = None,
    backend: Annotated[str, typer.Option("--backend", "-b", help="The judge: auto | simulated | anthropic | openai.")] = "auto",
    samples: Annotated[int, typer.Option("--bootstrap", min=0, help="Bootstrap resamples for the intervals.")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap (and of the simulated judge).")] = 0,
    show_rubric: Annotated[bool, typer.Option("--rubric", help="Print the judge's rubric first.")] = False,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the scores and judgements as JSON here.")] = None,
    falsifiers: Annotated[bool | None, typer.Option("--falsifiers/--no-falsifiers", help="Also have the judge rate each run's falsifiers (metric falsifier_concreteness_judged; default: on real backends).")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="openai backend: the server's URL, e.g. http://127.0.0.1:8080/v1 (default $OPENAI_BASE_URL).")] = None,
    model: Annotated[str | None, typer.Option("--model", help="openai backend: the judge's model (default: the server's only model).")] = None,
) -> None:
    """Judge engines' crux cards pairwise (blind, both orders) and print Bradley-Terry scores."""
    err = Console(stderr=True)
    out = Console()

    def fail(message: str) -> None:
        err.print(f"[red]error:[/] {escape(message)}")
        raise typer.Exit(2)

    names = list(dict.fromkeys(e.strip() for e in engines if e.strip()))
    if len(names) < 2:
        fail("give at least two different engines, e.g. crux-lab arena panel direct.")

    try:
        resolved = resolve_backend_name(backend)
    except ValueError as exc:
        fail(str(exc))
        return
    try:
        con = connect(db)
    except StoreError as exc:
        fail(str(exc))
        return
    try:
        try:
            pairs = plan(load_card_sets(con, names), names)
        except ArenaError as exc:
            fail(str(exc))
            return
        if show_rubric:
            out.print(escape(RUBRIC))
        if resolved == OFFLINE:
            err.print("judge: the simulator. It does not read the cards for quality: it scores each set "
                      "from the planted ground truth (the deck's contested claims and their types) and says so in each reason.")
        else:
            err.print(f"judge: the strong model of the {resolved} backend.")
        where = JudgeModel(base_url, model)
        skipped: list[str] = []
        try:
            judgements = asyncio.run(run_arena(pairs, resolved, seed, where, skipped))
        except LLMError as exc:
            fail(str(exc))
            return
        for why in skipped:
            err.print(f"[yellow]warning:[/] a verdict stayed off-schema after one repair and was left out: {escape(why)}")
        written = write_judgements(con, judgements)
        if falsifiers if falsifiers is not None else resolved != OFFLINE:
            judged = asyncio.run(judge_run_falsifiers(pairs, resolved, seed, where))
            for run_id, (share, basis) in judged.items():
                record_metrics(con, run_id, {"falsifier_concreteness_judged": share},
                               details={"falsifier_concreteness_judged": {"basis": basis}})
            err.print(f"falsifier concreteness judged for {len(judged)} run(s) (metric falsifier_concreteness_judged)")
    finally:
        con.close()
    scores = bt_with_bootstrap(judgements, samples=samples, seed=seed)
    out.print(scores_table(scores))
    if judgements:
        out.print(f"example reason: {escape(judgements[0].reason)}")
    err.print(f"{written} judgement(s) written to arena_judgements")
    if json_out is not None:
        payload = {
            "scores": scores.score, "low": scores.low, "high": scores.high, "record": scores.record,
            "pairs": scores.n_pairs, "judgements": [j.__dict__ | {"id": j.id} for j in judgements],
        }
        json_out.write_text(json.dumps(payload, indent=1), encoding="utf-8")
