"""How often each guard fires on the simulator, per engine (crux_lab.engines.guards).

For every engine that makes persona turns, cards or disputes, runs the simulated backend on
the shipped decks (two personas each, the deck's first topic) over a few seeds, and reports
per engine: persona turns attempted (kept + kept out by a guard), the firings of each guard
(the ``guard_*`` metrics of each run), the echo and role rates per persona turn attempted,
sides firings per card or dispute side, and debates ended early.

A guard's firing on the simulator is a bug in the simulator's voice (it repeats itself,
contradicts itself, or misquotes): the target is 0. On a real model the same figures come
from ``benchmarks/recovery_real.py`` runs' metrics.

    PYTHONPATH=. nice -n 19 .venv/bin/python benchmarks/guard_rates.py [--seeds 2] [--max-turns 12]

Writes benchmarks/results/guard_rates.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from crux_lab.analysis.metrics import guard_rates, guard_rates_markdown
from crux_lab.models import DebateConfig, DebateResult
from crux_lab.personas.loader import load_decks
from crux_lab.runner import run_debate

ENGINES = ("dialogue", "dcg", "panel", "crux_rooms", "blitz", "classical")
OUT = Path(__file__).resolve().parent / "results" / "guard_rates.json"


async def one(engine: str, ids: list[str], topic: str, seed: int, max_turns: int) -> DebateResult:
    return await run_debate(DebateConfig(topic=topic, persona_ids=ids, engine=engine, seed=seed, max_turns=max_turns))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--max-turns", type=int, default=12)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    started = time.perf_counter()
    results: list[DebateResult] = []
    rows = []
    for deck in load_decks():
        ids, topic = deck.persona_ids[:2], deck.topics[0]
        for engine in ENGINES:
            for seed in range(args.seeds):
                r = asyncio.run(one(engine, ids, topic, seed, args.max_turns))
                results.append(r)
                rows.append({"engine": engine, "deck": deck.id, "seed": seed, "error": r.error,
                             **{k: v for k, v in r.metrics.items() if k.startswith("guard_")}})
    summary = guard_rates(results)
    report = {
        "command": f"benchmarks/guard_rates.py --seeds {args.seeds} --max-turns {args.max_turns}",
        "backend": "simulated",
        "wall_s": round(time.perf_counter() - started, 1),
        "summary": summary,
        "runs": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(guard_rates_markdown(summary))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
