"""Camps and crux sides that are true, counted over whole debates on the simulator.

The seven debating engines x seeds x topics (Saylor, Schiff and Hayes, the crypto deck): for
each result, the properties :func:`crux_lab.analysis.sides.side_breaks` checks (a persona in
at most one camp, no more camps than personas, every crux with someone on each side and
nobody on both or labelled as not knowing, camps labelled by their members' display names, a
resolved card whose positions agree). Counts the results that break any, and lists what broke.

    .venv/bin/python benchmarks/side_properties.py [--seeds 0,1,2] [--max-turns 12]

Writes benchmarks/results/side_properties.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from crux_lab.analysis.sides import side_breaks
from crux_lab.runner import run_debate_sync
from crux_lab.workbench import debate_config, persona_names

ENGINES = ["dialogue", "dcg", "panel", "crux_rooms", "blitz", "classical", "graph"]
PERSONAS = ["michael-saylor", "peter-schiff", "arthur-hayes"]
TOPICS = ["Is Bitcoin a better long-term store of value than gold?",
          "What drives the Bitcoin price: adoption or liquidity?"]
OUT = Path(__file__).parent / "results" / "side_properties.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--max-turns", type=int, default=12)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    names = persona_names(PERSONAS)
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for engine in ENGINES:
        for topic in TOPICS:
            for seed in seeds:
                result = run_debate_sync(debate_config(topic, PERSONAS, engine, "simulated", seed, args.max_turns, deck="crypto"))
                breaks = side_breaks(result, names)
                rows.append({"engine": engine, "topic": topic, "seed": seed, "camps": len(result.camps),
                             "extensions": len(result.extensions), "cruxes": len(result.cruxes),
                             "sides_unknown": sum(1 for c in result.cruxes if c.sides_known is False),
                             "cards": len(result.crux_cards), "breaks": breaks})
                print(f"{engine:10s} seed {seed} {topic[:40]!r}: {len(breaks)} break(s)", file=sys.stderr)
    per_engine = {e: sum(1 for r in rows if r["engine"] == e and r["breaks"]) for e in ENGINES}
    summary = {"results": len(rows), "breaking": sum(1 for r in rows if r["breaks"]), "per_engine": per_engine,
               "cruxes": sum(r["cruxes"] for r in rows), "sides_unknown": sum(r["sides_unknown"] for r in rows),
               "max_turns": args.max_turns, "seeds": seeds, "wall_s": round(time.perf_counter() - started, 1)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=2), encoding="utf-8")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
