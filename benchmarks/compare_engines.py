"""Compare every installed engine on one shipped deck (simulated backend), and measure graph
mode's LLM call budget (20 calls for 4 personas and 3 rounds).

    .venv/bin/python benchmarks/compare_engines.py [--deck crypto] [--seeds 5]

Prints two tables and writes benchmarks/results/compare_engines.json. Crux recovery is scored
against the deck's ground truth: a proposition is *contested* when some persona is pro and
another con; an engine *recovers* it when one of its cruxes names it. Precision counts cruxes
naming a proposition that is not contested (or naming none) as misses.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from crux_lab.engines import available
from crux_lab.eval.compare import comparison_table, run_comparison
from crux_lab.llm.simulated.options import SimulatorKnobs
from crux_lab.models import DebateConfig, DebateResult
from crux_lab.personas.loader import get_deck, load_decks, load_personas
from crux_lab.runner import run_debate

RESULTS = Path(__file__).resolve().parent / "results"
GRAPH_BUDGET = 20  # 1 decomposition + 4 openings + 3 rounds * (4 attack calls + 1 validation)
ORIGINAL_BLITZ_CALLS = (26, 31)  # what the original blitz engine was reported to use


def contested(persona_ids: list[str]) -> set[str]:
    personas = load_personas(persona_ids)
    props: dict[str, set[str]] = {}
    for p in personas.values():
        for s in p.stances.stances:
            props.setdefault(s.proposition_id, set()).add(s.stance)
    return {pid for pid, st in props.items() if {"pro", "con"} <= st}


def recovery(result: DebateResult, truth: set[str]) -> dict[str, float]:
    named = [set(c.proposition_ids) for c in result.cruxes]
    found = set().union(*named) if named else set()
    hits = sum(1 for n in named if n & truth)
    return {
        "recall": round(len(found & truth) / len(truth), 3) if truth else 0.0,
        "precision": round(hits / len(named), 3) if named else 0.0,
    }


async def graph_budget(persona_ids: list[str], topic: str, seeds: int, knobs: SimulatorKnobs) -> list[dict[str, Any]]:
    rows = []
    for seed in range(seeds):
        config = DebateConfig(topic=topic, persona_ids=persona_ids, engine="graph", seed=seed, backend_options=knobs.as_options(),
                              params={"max_rounds": 3})
        result = await run_debate(config)
        purposes = Counter(c.purpose for c in result.llm_calls)
        rounds = sum(1 for e in result.events if e.type == "validation_complete")
        rows.append({"seed": seed, "calls": result.usage.calls, "rounds": rounds, **purposes,
                     "cost_usd": round(result.usage.cost_usd, 5), "attacks": len(result.graph.attacks)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deck", default=None, help="Deck id (default: the first deck with 4+ personas).")
    parser.add_argument("--seeds", type=int, default=5, help="Seeds for the call-budget runs.")
    parser.add_argument("--seed", type=int, default=1, help="Seed of the comparison run.")
    args = parser.parse_args()

    deck = get_deck(args.deck) if args.deck else next(d for d in load_decks() if len(d.persona_ids) >= 4)
    ids = deck.persona_ids[:4]
    topic = deck.topics[0]
    truth = contested(ids)
    console = Console(width=150)
    console.print(f"deck [bold]{deck.id}[/]: {', '.join(ids)}; topic: {topic!r}; "
                  f"{len(truth)} contested propositions in the ground truth")

    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        outcome = run_comparison(topic, ids, list(available()), args.seed, Path(tmp) / "cmp.duckdb",
                                 backend="simulated", runs_dir=Path(tmp) / "runs", on_message=lambda m: None)
        total = time.perf_counter() - started
    console.print(comparison_table(outcome.results, outcome.skipped))
    recov = {r.engine: recovery(r, truth) for r in outcome.results}
    rec_table = Table(title="Crux recovery against ground truth", header_style="bold")
    for col in ("engine", "cruxes", "recall", "precision", "calls", "calls / graph"):
        rec_table.add_column(col, justify="left" if col == "engine" else "right")
    graph_calls = next((r.usage.calls for r in outcome.results if r.engine == "graph"), None)
    for r in outcome.results:
        ratio = f"{r.usage.calls / graph_calls:.2f}" if graph_calls else "-"
        rec_table.add_row(r.engine, str(len(r.cruxes)), f"{recov[r.engine]['recall']:.2f}",
                          f"{recov[r.engine]['precision']:.2f}", str(r.usage.calls), ratio)
    console.print(rec_table)

    budget: dict[str, list[dict[str, Any]]] = {}
    for label, knobs in [("default", SimulatorKnobs()), ("missed_attack=0.3", SimulatorKnobs(missed_attack=0.3)),
                         ("drift=0.3", SimulatorKnobs(drift=0.3))]:
        budget[label] = asyncio.run(graph_budget(ids, topic, args.seeds, knobs))
    bt = Table(title=f"Graph mode LLM calls, 4 personas, max 3 rounds (budget: {GRAPH_BUDGET})", header_style="bold")
    for col in ("simulator", "runs", "calls mean", "calls min-max", "rounds mean", "vs budget", "cost $ mean"):
        bt.add_column(col, justify="left" if col == "simulator" else "right")
    summary = {}
    for label, rows in budget.items():
        calls = [r["calls"] for r in rows]
        mean = statistics.mean(calls)
        summary[label] = {"mean_calls": mean, "min": min(calls), "max": max(calls),
                          "ratio_to_budget": round(mean / GRAPH_BUDGET, 3)}
        bt.add_row(label, str(len(rows)), f"{mean:.1f}", f"{min(calls)}-{max(calls)}",
                   f"{statistics.mean(r['rounds'] for r in rows):.1f}", f"{mean / GRAPH_BUDGET:.2f}x",
                   f"{statistics.mean(r['cost_usd'] for r in rows):.4f}")
    console.print(bt)
    blitz = next((r for r in outcome.results if r.engine == "blitz"), None)
    if blitz is not None:
        console.print(f"blitz: {blitz.usage.calls} calls (the original blitz was reported at {ORIGINAL_BLITZ_CALLS[0]}-{ORIGINAL_BLITZ_CALLS[1]} "
                      f"calls; ratio to the low end {blitz.usage.calls / ORIGINAL_BLITZ_CALLS[0]:.2f}x)")

    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "compare_engines.json"
    out.write_text(json.dumps({
        "deck": deck.id, "personas": ids, "topic": topic, "seed": args.seed, "contested": sorted(truth),
        "comparison_wall_s": round(total, 3),
        "engines": [
            {"engine": r.engine, "complete": r.complete, "cruxes": len(r.cruxes), "regime": r.regime.value,
             "turns": len(r.transcript), "calls": r.usage.calls,
             "tokens": r.usage.input_tokens + r.usage.output_tokens, "cost_usd": round(r.usage.cost_usd, 6),
             "wall_s": r.duration_s, **recov[r.engine]}
            for r in outcome.results
        ],
        "skipped": outcome.skipped,
        "graph_call_budget": {"budget": GRAPH_BUDGET, "runs": budget, "summary": summary},
    }, indent=1))
    console.print(f"wrote {out}")


if __name__ == "__main__":
    main()
