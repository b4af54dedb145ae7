"""Performance numbers for the dialogue and dcg engines against their design figures, simulated backend.

For Saylor vs Hayes on "Bitcoin is digital gold" (2 personas, max 30 turns), several seeds:
turns taken, phases reached, crystallizations, graph size (after phase 1, peak, final;
arguments/attacks for the Dung graph, disputes/stances/reasons for the DCG), concessions, LLM calls, and
input/output tokens per call by purpose from the call ledger. The design's figures are the
peer: ~24 turns, ~30-35 calls, 25-35k input and 3-5k output tokens, final graph 4-8 arguments
and 6-12 attacks, 1-3 concessions, 60-90 s. Ratios to their midpoints are printed.

Token counts are the simulator's estimate with the project's one token counter over the real
prompts (persona system prompt + user message), so they are what a real run would send.

    .venv/bin/python benchmarks/dialogue_numbers.py [--seeds 5]

Prints a table and writes benchmarks/results/dialogue_numbers.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path

from crux_lab.llm.simulated.options import SimulatorKnobs
from crux_lab.models import (
    Crystallization,
    DCGUpdate,
    DebateConfig,
    DebateResult,
    EngineComplete,
    GraphUpdated,
    PhaseStart,
)
from crux_lab.personas.loader import deck_for, load_personas
from crux_lab.personas.prompt import build_system_prompt
from crux_lab.runner import run_debate
from crux_lab.tokens import count_tokens

PAIR = ["michael-saylor", "arthur-hayes"]
TOPIC = "Bitcoin is digital gold"
OUT = Path(__file__).parent / "results" / "dialogue_numbers.json"
# The dialogue design's figures for one 2-persona, 30-turn debate.
DESIGN = {"turns": 24, "calls": 32.5, "input_tokens": 30000, "output_tokens": 4000,
           "final_args": (4, 8), "final_attacks": (6, 12), "concessions": (1, 3), "duration_s": (60, 90)}


def graph_sizes(r: DebateResult) -> tuple[int, int, int]:
    """(after phase 1, peak, final) node counts: arguments (Dung graph) or disputes+stances (DCG)."""
    sizes, after_opening = [], None
    for ev in r.events:
        if isinstance(ev, GraphUpdated):
            sizes.append(len(ev.graph.arguments))
        elif isinstance(ev, DCGUpdate):
            sizes.append(len(ev.dcg.disputes) + len(ev.dcg.stances))
        elif isinstance(ev, PhaseStart) and ev.phase == 2 and after_opening is None:
            after_opening = sizes[-1] if sizes else 0
    return after_opening or 0, max(sizes, default=0), sizes[-1] if sizes else 0


def system_tokens() -> dict[str, int]:
    """Tokens of each persona's consolidated system prompt (what prompt caching would reuse)."""
    personas, deck = load_personas(PAIR), deck_for(PAIR)
    props = {p.id: p for p in deck.propositions} if deck else None
    return {pid: count_tokens(build_system_prompt(personas[pid], propositions=props)) for pid in PAIR}


SYSTEM_TOKENS = system_tokens()


def measure(r: DebateResult, wall: float) -> dict:
    per: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for c in r.llm_calls:
        per[c.purpose].append((c.input_tokens, c.output_tokens))
    after1, peak, final = graph_sizes(r)
    end = next((e.summary for e in r.events if isinstance(e, EngineComplete)), "")
    return {
        "turns": len(r.transcript),
        "phases": [e.phase for e in r.events if isinstance(e, PhaseStart)],
        "crystallizations": sum(1 for e in r.events if isinstance(e, Crystallization) and e.turn_range != (0, 0)),
        "crystallize_calls": len(per["crystallize"]),
        "args": len(r.graph.arguments), "attacks": len(r.graph.attacks),
        "disputes": len(r.dcg.disputes), "stances": len(r.dcg.stances), "reasons": len(r.dcg.reasons),
        "size_after_phase1": after1, "size_peak": peak, "size_final": final,
        "concessions": len(r.concession_trail),
        "concession_kinds": sorted(c.type.value for c in r.concession_trail),
        "calls": r.usage.calls, "input_tokens": r.usage.input_tokens, "output_tokens": r.usage.output_tokens,
        # with prompt caching, every persona call after its first reads the system prompt from cache
        "input_uncached_est": r.usage.input_tokens - sum(
            max(0, sum(t.persona_id == pid for t in r.transcript) - 1) * n for pid, n in SYSTEM_TOKENS.items()
        ),
        "cost_usd": round(r.usage.cost_usd, 4),
        "modelled_latency_s": round(sum(c.latency_s for c in r.llm_calls), 1),
        "per_purpose": {p: {"calls": len(v), "mean_in": round(statistics.mean(x[0] for x in v)),
                            "mean_out": round(statistics.mean(x[1] for x in v))} for p, v in sorted(per.items())},
        "regime": r.regime.value, "end": end.split("Ended: ")[-1].split(".")[0] if "Ended: " in end else end,
        "wall_s": round(wall, 3),
    }


async def one(engine: str, seed: int, knobs: SimulatorKnobs) -> dict:
    cfg = DebateConfig(topic=TOPIC, persona_ids=PAIR, engine=engine, seed=seed, max_turns=30, backend_options=knobs.as_options())
    t0 = time.perf_counter()
    r = await run_debate(cfg)
    return measure(r, time.perf_counter() - t0)


def mean(rows: list[dict], key: str) -> float:
    return round(statistics.mean(r[key] for r in rows), 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    setups = [
        ("dialogue", "default knobs", SimulatorKnobs()),
        ("dcg", "default knobs", SimulatorKnobs()),
        ("dialogue", "sycophancy=0.15", SimulatorKnobs(sycophancy=0.15)),
        ("dcg", "sycophancy=0.15", SimulatorKnobs(sycophancy=0.15)),
    ]
    results = []
    cols = ["turns", "crystallizations", "size_after_phase1", "size_peak", "args", "attacks", "disputes",
            "concessions", "calls", "input_tokens", "input_uncached_est", "output_tokens", "modelled_latency_s", "wall_s"]
    print(f"{'engine':9} {'knobs':16} " + " ".join(f"{c[:11]:>11}" for c in cols))
    for engine, label, knobs in setups:
        rows = [asyncio.run(one(engine, s, knobs)) for s in range(args.seeds)]
        summary = {c: mean(rows, c) for c in cols}
        summary["phases_all_four"] = sum(r["phases"] == [1, 2, 3, 4] for r in rows) / len(rows)
        summary["regimes"] = sorted(r["regime"] for r in rows)
        summary["ends"] = sorted(r["end"] for r in rows)
        purposes: dict[str, list[dict]] = defaultdict(list)
        for r in rows:
            for p, v in r["per_purpose"].items():
                purposes[p].append(v)
        summary["per_purpose"] = {p: {k: round(statistics.mean(x[k] for x in v), 1) for k in ("calls", "mean_in", "mean_out")}
                                  for p, v in purposes.items()}
        summary["vs_design"] = {
            "turns": round(summary["turns"] / DESIGN["turns"], 2),
            "calls": round(summary["calls"] / DESIGN["calls"], 2),
            "input_tokens": round(summary["input_tokens"] / DESIGN["input_tokens"], 2),
            "input_uncached_est": round(summary["input_uncached_est"] / DESIGN["input_tokens"], 2),
            "output_tokens": round(summary["output_tokens"] / DESIGN["output_tokens"], 2),
        }
        results.append({"engine": engine, "knobs": label, "summary": summary, "runs": rows})
        print(f"{engine:9} {label:16} " + " ".join(f"{summary[c]:>11}" for c in cols))
    print()
    for res in results:
        s = res["summary"]
        print(f"{res['engine']} / {res['knobs']}: all four phases in {s['phases_all_four']:.0%} of runs; "
              f"regimes {s['regimes']}; ratio to the design (turns, calls, input, input without cached "
              f"system prompts, output): {s['vs_design']['turns']}, {s['vs_design']['calls']}, {s['vs_design']['input_tokens']}, "
              f"{s['vs_design']['input_uncached_est']}, {s['vs_design']['output_tokens']}")
        print(f"   ends: {s['ends']}")
        if res["engine"] == "dialogue":
            lo, hi = DESIGN["final_args"]
            finals = [r["args"] for r in res["runs"]]
            print(f"   final arguments per run {finals} (design: {lo}-{hi}; within in {sum(lo <= n <= hi for n in finals)}/{len(finals)}); "
                  f"peak {[r['size_peak'] for r in res['runs']]}, so the graph shrank in "
                  f"{sum(r['args'] < r['size_peak'] for r in res['runs'])}/{len(finals)}")
        print("   per call by purpose (calls / mean input / mean output tokens): " + "; ".join(
            f"{p} {v['calls']}/{v['mean_in']:.0f}/{v['mean_out']:.0f}" for p, v in s["per_purpose"].items()))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"topic": TOPIC, "pair": PAIR, "max_turns": 30, "seeds": args.seeds,
                               "design": {k: list(v) if isinstance(v, tuple) else v for k, v in DESIGN.items()},
                               "results": results}, indent=2))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
