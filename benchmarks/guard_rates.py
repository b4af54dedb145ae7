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
from typing import Any

from crux_lab.models import DebateConfig, DebateResult
from crux_lab.personas.loader import load_decks
from crux_lab.runner import run_debate

ENGINES = ("dialogue", "dcg", "panel", "crux_rooms", "blitz", "classical")
OUT = Path(__file__).resolve().parent / "results" / "guard_rates.json"


def sides(result: DebateResult) -> int:
    """Card and dispute sides the run kept."""
    cards = sum(len(c.personas) for c in result.crux_cards)
    return cards + len(result.dcg.stances)


def turns_kept_out(result: DebateResult) -> int:
    return sum(
        1
        for e in result.events
        if e.type == "engine_error" and e.purpose in ("guard_echo", "guard_role") and "skipped" in e.error
    )


async def one(engine: str, deck_id: str, ids: list[str], topic: str, seed: int, max_turns: int) -> dict[str, Any]:
    config = DebateConfig(topic=topic, persona_ids=ids, engine=engine, seed=seed, max_turns=max_turns)
    result = await run_debate(config)
    m = result.metrics
    kept_out = turns_kept_out(result)
    return {
        "engine": engine, "deck": deck_id, "seed": seed,
        "turns": len(result.transcript) + kept_out, "kept_out": kept_out, "sides": sides(result),
        **{k: m.get(k, 0.0) for k in ("guard_echo", "guard_role", "guard_sides", "guard_ended")},
        "error": result.error,
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for engine in ENGINES:
        mine = [r for r in rows if r["engine"] == engine]
        turns = sum(r["turns"] for r in mine)
        side_count = sum(r["sides"] for r in mine) + sum(r["guard_sides"] for r in mine)
        fired = {k: int(sum(r[k] for r in mine)) for k in ("guard_echo", "guard_role", "guard_sides")}
        out[engine] = {
            "debates": len(mine),
            "persona_turns": turns,
            **fired,
            "echo_rate": round(fired["guard_echo"] / turns, 4) if turns else None,
            "role_rate": round(fired["guard_role"] / turns, 4) if turns else None,
            "sides_rate": round(fired["guard_sides"] / side_count, 4) if side_count else None,
            "turns_kept_out": sum(r["kept_out"] for r in mine),
            "ended_early": int(sum(r["guard_ended"] for r in mine)),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--max-turns", type=int, default=12)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    started = time.perf_counter()
    rows = []
    for deck in load_decks():
        ids, topic = deck.persona_ids[:2], deck.topics[0]
        for engine in ENGINES:
            for seed in range(args.seeds):
                rows.append(asyncio.run(one(engine, deck.id, ids, topic, seed, args.max_turns)))
    summary = summarise(rows)
    report = {
        "command": f"benchmarks/guard_rates.py --seeds {args.seeds} --max-turns {args.max_turns}",
        "backend": "simulated",
        "wall_s": round(time.perf_counter() - started, 1),
        "summary": summary,
        "runs": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"{'engine':<11} {'turns':>6} {'echo':>5} {'role':>5} {'sides':>6} {'echo/turn':>9} {'role/turn':>9} {'sides/side':>10} {'ended':>5}")
    for engine, s in summary.items():
        print(f"{engine:<11} {s['persona_turns']:>6} {s['guard_echo']:>5} {s['guard_role']:>5} {s['guard_sides']:>6} "
              f"{s['echo_rate'] or 0:>9.3f} {s['role_rate'] or 0:>9.3f} {s['sides_rate'] or 0:>10.3f} {s['ended_early']:>5}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
