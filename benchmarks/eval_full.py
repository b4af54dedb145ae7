"""The full evaluation of issue 9, timed stage by stage.

1. crux recovery of every engine on N seeded scenarios, at default knobs and with each failure
   knob (missed_attack, vague_crux, sycophancy) at each level: runs, per-debate metrics and
   recovery metrics stored in one DuckDB file;
2. cross-debate crux recurrence recorded for every stored run;
3. the metric summary (mean per engine) read back from the store;
4. the Polis check on every conversation (camps vs Polis groups, ARI);
5. the ArgKP check on the test split (mAP strict and relaxed).

Prints the recovery table at default knobs and at missed_attack 0.3, the stage timings, and the
share of the wall time each stage takes (its ratio to the whole). Writes
benchmarks/results/eval_full.json; the database (benchmarks/results/eval_full.duckdb by default)
is what notebook 07 reads with ``db=...``.

    .venv/bin/python benchmarks/eval_full.py [--scenarios 5] [--workers 2] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

from crux_lab.analysis.metrics import metric_summary, record_recurrence
from crux_lab.analysis.recovery import KNOBS, human_data_frames
from crux_lab.analysis.scenarios import generate_scenarios
from crux_lab.eval.compare import all_engines
from crux_lab.eval.knobs import knob_sweep

RESULTS = Path(__file__).parent / "results"


def fmt(x: object) -> str:
    return "—" if isinstance(x, float) and math.isnan(x) else (f"{x:.3f}" if isinstance(x, float) else str(x))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenarios", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--engines", default=",".join(all_engines()))
    ap.add_argument("--levels", default="0.3,0.6")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--db", default=str(RESULTS / "eval_full.duckdb"))
    args = ap.parse_args()
    RESULTS.mkdir(exist_ok=True)
    db = Path(args.db)
    if db.exists():
        db.unlink()  # a fresh database: the numbers below are this run's only
    engines = args.engines.split(",")
    levels = [float(x) for x in args.levels.split(",")]
    stages: dict[str, float] = {}
    started = time.perf_counter()

    t = time.perf_counter()
    scenarios = generate_scenarios(args.scenarios, seed=args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        rows, runs = knob_sweep(scenarios, engines, Path(tmp) / "lib", dict.fromkeys(KNOBS, levels),
                                seed=args.seed, db=db, runs_dir=Path(tmp) / "runs", workers=args.workers)
    n_debates = sum(len(r.results) for r in runs)
    stages["recovery + knob sweep (run, score, store)"] = time.perf_counter() - t

    t = time.perf_counter()
    recurrence = record_recurrence(db)
    stages["cross-debate recurrence"] = time.perf_counter() - t

    t = time.perf_counter()
    summary = metric_summary(db)
    stages["metric summary (SQL)"] = time.perf_counter() - t

    t = time.perf_counter()
    human_polis = human_data_frames(Path(args.data) / "polis", None)
    stages["Polis check"] = time.perf_counter() - t
    t = time.perf_counter()
    human_argkp = human_data_frames(None, Path(args.data) / "argkp2021")
    stages["ArgKP check"] = time.perf_counter() - t
    wall = time.perf_counter() - started

    def table(knob: str, level: float) -> list[dict[str, object]]:
        return [r for r in rows if r["knob"] == knob and r["level"] == level]

    cols = ("engine", "debates", "precision", "recall", "f1", "type_accuracy", "found", "planted",
            "false_positives", "false_common_ground")
    for title, picked in (("default knobs", table("missed_attack", 0.0)), ("missed_attack 0.3", table("missed_attack", 0.3))):
        print(f"\nCrux recovery, {len(scenarios)} scenarios, {title}")
        print("  ".join(f"{c:>13}" for c in cols))
        for r in picked:
            print("  ".join(f"{fmt(r[c]):>13}" for c in cols))
    print(f"\nmean crux_recurrence over {len(recurrence)} runs: "
          f"{sum(recurrence.values()) / max(len(recurrence), 1):.3f}")
    polis, argkp = human_polis["polis"], human_argkp["argkp"]
    if len(polis):
        print("\nPolis ARI:", ", ".join(f"{c} {a:.3f}" for c, a in zip(polis["conversation"], polis["ari"], strict=True)))
    if len(argkp):
        print(f"ArgKP mAP strict {argkp['map_strict'][0]:.3f}, relaxed {argkp['map_relaxed'][0]:.3f}")
    for note in human_polis["notes"] + human_argkp["notes"]:
        print("note:", note)
    print(f"\n{'stage':<44}{'seconds':>9}{'share':>8}")
    for name, sec in stages.items():
        print(f"{name:<44}{sec:>9.1f}{sec / wall:>8.1%}")
    print(f"{'total':<44}{wall:>9.1f}   ({n_debates} debates, {args.workers} worker(s), "
          f"{n_debates / stages['recovery + knob sweep (run, score, store)']:.2f} debates/s)")

    def clean(x: object) -> object:
        return None if isinstance(x, float) and math.isnan(x) else x

    out = RESULTS / "eval_full.json"
    out.write_text(json.dumps({
        "scenarios": args.scenarios, "seed": args.seed, "engines": engines, "levels": levels,
        "debates": n_debates, "workers": args.workers, "wall_s": round(wall, 2),
        "stages_s": {k: round(v, 2) for k, v in stages.items()},
        "recovery": [{k: clean(v) for k, v in r.items()} for r in rows],
        "metric_summary": json.loads(summary.to_json()) if len(summary) else {},
        "polis": json.loads(polis.to_json(orient="records")) if len(polis) else [],
        "argkp": json.loads(argkp.to_json(orient="records")) if len(argkp) else [],
        "db": str(db),
    }, indent=1))
    print(f"wrote {out} and {db}")


if __name__ == "__main__":
    main()
