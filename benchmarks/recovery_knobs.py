"""How crux recovery degrades as the simulator's failure knobs rise.

For each knob (missed_attack, vague_crux, sycophancy) at each level (the others at 0), every
engine runs on the same seeded scenarios; recovery is scored against the planted cruxes
(crux_lab.analysis.recovery). Prints precision / recall / F1 / type accuracy / false common
ground per (knob, level, engine), and each F1 as a ratio to the same engine at level 0 (the
peer). Writes benchmarks/results/recovery_knobs.json; with --db the runs and their metrics
are stored too (notebook 07 reads them).

    .venv/bin/python benchmarks/recovery_knobs.py [--scenarios 3] [--levels 0.3,0.6] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

from crux_lab.analysis.recovery import KNOBS
from crux_lab.analysis.scenarios import generate_scenarios
from crux_lab.eval.compare import all_engines
from crux_lab.eval.knobs import knob_sweep


def fmt(x: float) -> str:
    return "   —" if isinstance(x, float) and math.isnan(x) else f"{x:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenarios", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--engines", default=",".join(all_engines()))
    ap.add_argument("--levels", default="0.3,0.6")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--db", default=None, help="also store runs + metrics in this DuckDB file")
    args = ap.parse_args()
    engines = args.engines.split(",")
    levels = [float(x) for x in args.levels.split(",")]
    scenarios = generate_scenarios(args.scenarios, seed=args.seed)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        rows, runs = knob_sweep(
            scenarios, engines, Path(tmp) / "lib", dict.fromkeys(KNOBS, levels), seed=args.seed,
            db=args.db, runs_dir=Path(tmp) / "runs" if args.db is None else None,
            store=args.db is not None, workers=args.workers,
        )
    wall = time.perf_counter() - started
    base = {r["engine"]: r["f1"] for r in rows if r["level"] == 0.0}
    for r in rows:
        b = base.get(r["engine"], math.nan)
        r["f1_ratio_to_level0"] = r["f1"] / b if b and not math.isnan(b) else math.nan
    print(f"{len(scenarios)} scenarios x {len(engines)} engines x {1 + len(KNOBS) * len(levels)} knob settings "
          f"= {sum(len(x.results) for x in runs)} debates in {wall:.1f}s ({args.workers} worker(s))")
    print(f"{'knob':<14}{'level':>6}  {'engine':<11}{'P':>6}{'R':>6}{'F1':>6}{'type':>6}{'falseCG':>8}{'F1/F1@0':>9}")
    for r in sorted(rows, key=lambda r: (r["knob"], r["engine"], r["level"])):
        print(f"{r['knob']:<14}{r['level']:>6.2f}  {r['engine']:<11}{fmt(r['precision']):>6}{fmt(r['recall']):>6}"
              f"{fmt(r['f1']):>6}{fmt(r['type_accuracy']):>6}{r['false_common_ground']:>8}{fmt(r['f1_ratio_to_level0']):>9}")
    failures = {k: v for x in runs for k, v in x.failures.items()}
    if failures:
        print("failures:", failures)
    out = Path(__file__).parent / "results" / "recovery_knobs.json"
    out.parent.mkdir(exist_ok=True)
    clean = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in rows]
    out.write_text(json.dumps({"scenarios": args.scenarios, "seed": args.seed, "engines": engines, "levels": levels,
                               "wall_s": round(wall, 2), "rows": clean, "failures": failures}, indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
