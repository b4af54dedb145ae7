"""Every engine against a real model: the local llama.cpp server (or any OpenAI-compatible URL).

Start the server first (``crux-lab local-model start``, or ``make local-model``), then:

    .venv/bin/python benchmarks/real_model.py [--base-url http://127.0.0.1:8080/v1]
        [--engines blitz,dialogue,...] [--max-turns 8] [--model M]

Per engine it reports:

- ``calls``; ``first_valid_share``: structured calls whose first reply validated (no repair);
  ``repair_rate``: structured calls that needed the repair turn; ``failed_after_repair``:
  structured calls still invalid after it; ``skipped_turns``: the engine's warning events
  that say ``skipped:`` (a skipped step; an error that ended the run shows in ``error``);
- ``prompt_tokens`` and ``cached_share`` (prompt tokens the server's prefix cache served);
  ``prompt_tok_s`` / ``gen_tok_s``: uncached prompt and output tokens per second of call time;
- ``wall_s``; ``critical_path_s``: time with at least one call in flight (the union of the
  calls' intervals: what a faster model would shorten), and ``serial_call_s``, the sum of
  call latencies (their ratio is the concurrency the engine got);
- ``cruxes``, ``disputes``, ``cards`` found, and whether the run completed;
- crux quality, as in ``crux_quality.py``: ``restates_cards`` (cards whose question restates
  the topic / cards), ``restates_items`` (the run's ``restates_topic_rate`` metric over every
  crux item) and ``recovery_f1`` by text against the crypto deck's contested propositions
  (those the two personas hold pro and con).

Each run is saved as a run folder and ingested into ``benchmarks/results/real_model-<model>.duckdb``.
With ``--arena direct,cot,panel,...`` the same server then judges those engines' card sets
pairwise in both orders (``crux-lab arena``'s judge and rubric), and Bradley-Terry scores are
added to each row (``arena_bt``); a verdict that stays off-schema is left out and counted.

Writes ``benchmarks/results/real_model-<model>.json``. Numbers, not asserts: tiny models
write poor text, and the point is that every engine runs on real model output.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crux_lab.llm import resolve_openai_models  # noqa: E402
from crux_lab.llm.base import LLMError, LLMOutputError, LLMRequest, LLMResponse  # noqa: E402
from crux_lab.llm.openai_backend import OpenAIBackend  # noqa: E402
from crux_lab.models import DebateConfig, EngineError, Tier  # noqa: E402

ENGINES = ("blitz", "classical", "graph", "dialogue", "dcg", "panel", "crux_rooms", "direct", "cot")
TOPIC = "Is Bitcoin a better long-term store of value than gold?"
DECK = "crypto"  # the deck of the personas below: recovery is scored against its propositions
PERSONAS = "michael-saylor,peter-schiff"


@dataclass
class Call:
    purpose: str
    structured: bool
    started: float
    ended: float
    outcome: str  # ok | repaired | invalid | error


@dataclass
class Probe:
    """Wraps the backend: records each call's timing and what became of its reply."""

    inner: OpenAIBackend
    calls: list[Call] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    def model_for(self, tier: Tier) -> str:
        return self.inner.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        started = time.perf_counter()
        structured = request.output_schema is not None
        try:
            response = await self.inner.generate(request)
        except LLMOutputError:
            self.calls.append(Call(request.purpose, structured, started, time.perf_counter(), "invalid"))
            raise
        except LLMError:
            self.calls.append(Call(request.purpose, structured, started, time.perf_counter(), "error"))
            raise
        outcome = "repaired" if response.repaired else "ok"
        self.calls.append(Call(request.purpose, structured, started, time.perf_counter(), outcome))
        return response


def union_seconds(intervals: list[tuple[float, float]]) -> float:
    """Length of the union of intervals (time with at least one call in flight).

    >>> union_seconds([(0, 2), (1, 3), (5, 6)])
    4.0
    """
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def quality(result: Any) -> dict[str, Any]:
    """Topic restatement and recovery F1 by text (``crux_quality.py``'s measures)."""
    from benchmarks.crux_quality import deck_scenario, recovery_f1

    flagged = [c.restates_topic for c in result.crux_cards]
    f1 = recovery_f1(result, deck_scenario(DECK, list(result.config.persona_ids)))
    return {
        "restates_cards": share(sum(1 for f in flagged if f), len(flagged)),
        "restates_items": result.metrics.get("restates_topic_rate"),
        "recovery_f1": round(f1, 3) if f1 is not None else None,
    }


def save(result: Any, db: Path) -> None:
    """The run as a run folder under ``db``'s folder, ingested into ``db`` (for the arena)."""
    from crux_lab.store import ingest
    from crux_lab.store.runfiles import write_run

    ingest([write_run(result, db.parent / f"{db.stem}-runs")], db)


async def arena(engines: list[str], db: Path, args: argparse.Namespace, model: str) -> tuple[dict[str, float], int, int]:
    """Bradley-Terry scores of ``engines`` judged by the server's model; (scores, judgements, skipped)."""
    from crux_lab.arena.cli import JudgeModel, plan, run_arena
    from crux_lab.arena.core import bt_with_bootstrap, load_card_sets
    from crux_lab.store import connect

    con = connect(db)
    try:
        pairs = plan(load_card_sets(con, engines), engines)
    finally:
        con.close()
    skipped: list[str] = []
    judgements = await run_arena(pairs, "openai", args.seed, JudgeModel(args.base_url, model), skipped)
    scores = bt_with_bootstrap(judgements, samples=1000, seed=args.seed)
    return {e: round(v, 3) for e, v in scores.score.items()}, len(judgements), len(skipped)


async def run_engine(engine: str, args: argparse.Namespace, models: dict[Tier, str]) -> dict[str, Any]:
    from crux_lab.runner import DebateRun

    backend = OpenAIBackend(models=models, base_url=args.base_url, timeout_s=args.timeout, structured=args.structured)
    probe = Probe(backend)
    config = DebateConfig(
        topic=args.topic,
        persona_ids=args.personas.split(","),
        engine=engine,
        backend="openai",
        seed=args.seed,
        max_turns=args.max_turns,
        params=json.loads(args.params).get(engine, {}),
        models={t.value: m for t, m in models.items()},
        base_url=args.base_url,
        structured=args.structured,
    )
    run = DebateRun(config, backend=probe)  # type: ignore[arg-type]
    started = time.perf_counter()
    skipped = 0
    try:
        async for event in run.events():
            if isinstance(event, EngineError) and event.level == "warning" and "skipped:" in event.error:
                skipped += 1
    finally:
        await backend.aclose()
    wall = time.perf_counter() - started
    result = run.result
    save(result, args.db)
    structured = [c for c in probe.calls if c.structured]
    ledger = result.llm_calls
    uncached = sum(c.input_tokens for c in ledger)
    cached = sum(c.cache_read_tokens for c in ledger)
    output = sum(c.output_tokens for c in ledger)
    serial = sum(c.ended - c.started for c in probe.calls)
    return {
        "engine": engine,
        "structured": result.structured.mode if result.structured else None,
        "canary": result.structured.canary if result.structured else None,
        "complete": result.complete,
        "error": (result.error or "")[:200] or None,
        "calls": len(probe.calls),
        "structured_calls": len(structured),
        "first_valid_share": share(sum(c.outcome == "ok" for c in structured), len(structured)),
        "repair_rate": share(sum(c.outcome in ("repaired", "invalid") for c in structured), len(structured)),
        "failed_after_repair": sum(c.outcome == "invalid" for c in structured),
        "call_errors": sum(c.outcome == "error" for c in probe.calls),
        "skipped_turns": skipped,
        "prompt_tokens": uncached + cached,
        "cached_share": share(cached, uncached + cached),
        "output_tokens": output,
        "prompt_tok_s": round(uncached / serial, 1) if serial else None,
        "gen_tok_s": round(output / serial, 1) if serial else None,
        "wall_s": round(wall, 1),
        "critical_path_s": round(union_seconds([(c.started, c.ended) for c in probe.calls]), 1),
        "serial_call_s": round(serial, 1),
        "cruxes": len(result.cruxes),
        "disputes": len(result.dcg.disputes),
        "cards": len(result.crux_cards),
        "turns": len(result.transcript),
        **quality(result),
    }


COLUMNS = (
    "engine", "structured", "complete", "calls", "first_valid_share", "repair_rate", "skipped_turns",
    "prompt_tokens", "cached_share", "wall_s", "critical_path_s", "cruxes", "disputes", "cards",
    "restates_cards", "recovery_f1", "arena_bt",
)


def print_table(rows: list[dict[str, Any]]) -> None:
    widths = {c: max(len(c), *(len(str(r.get(c))) for r in rows)) for c in COLUMNS}
    print("  ".join(c.ljust(widths[c]) for c in COLUMNS))
    for r in rows:
        print("  ".join(str(r.get(c)).ljust(widths[c]) for c in COLUMNS))
        if r.get("error"):
            print(f"    error: {r['error']}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default=None, help="model id for both tiers (default: the server's)")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--topic", default=TOPIC)
    parser.add_argument("--personas", default=PERSONAS)
    parser.add_argument("--max-turns", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per HTTP attempt")
    parser.add_argument("--params", default="{}", help='per-engine params as JSON: {"panel": {"max_rounds": 1}}')
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--structured", default="auto", choices=["auto", "json_schema", "prompt"],
                        help="how replies are held to their schema (the canary decides under auto)")
    parser.add_argument("--arena", default="", help="engines whose cards the server's model judges pairwise, e.g. direct,cot,panel")
    args = parser.parse_args(argv)

    chosen = {"strong": args.model, "fast": args.model} if args.model else {}
    models = resolve_openai_models(chosen, args.base_url)
    model = models[Tier.strong]
    suffix = "" if args.structured == "auto" else f"-{args.structured}"
    out = args.out or ROOT / "benchmarks" / "results" / f"real_model-{model.replace('/', '_')}{suffix}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    args.db = out.with_suffix(".duckdb")
    rows: list[dict[str, Any]] = []
    for engine in [e.strip() for e in args.engines.split(",") if e.strip()]:
        print(f"-- {engine} on {model} ...", flush=True)
        try:
            row = asyncio.run(run_engine(engine, args, models))
        except Exception as exc:  # one engine's crash must not lose the others' numbers
            row = {"engine": engine, "complete": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
        rows.append(row)
        print(json.dumps(row), flush=True)
        payload = {
            "base_url": args.base_url, "model": model, "topic": args.topic, "personas": args.personas,
            "max_turns": args.max_turns, "seed": args.seed, "structured": args.structured,
            "params": json.loads(args.params), "engines": rows,
        }
        out.write_text(json.dumps(payload, indent=1), encoding="utf-8")  # after each engine
    judged = [e.strip() for e in args.arena.split(",") if e.strip()]
    if judged:
        print(f"-- arena of {', '.join(judged)}, judged by {model} ...", flush=True)
        scores, n, skipped = asyncio.run(arena(judged, args.db, args, model))
        for row in rows:
            row["arena_bt"] = scores.get(row["engine"])
        payload["arena"] = {"engines": judged, "scores": scores, "judgements": n, "skipped_verdicts": skipped}
        out.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    print_table(rows)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
