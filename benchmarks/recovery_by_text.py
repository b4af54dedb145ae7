"""Crux recovery scored by text, per engine, at default knobs, missed_attack 0.3 and misread 0.2,
beside the figures measured before "one channel" (simulator ids; benchmarks/data/).

Every engine runs on the same seeded synthetic scenarios; each crux found is matched to a planted
one by its words (MiniLM cosine at the threshold calibrated on held-out paraphrases, printed
first). P/R/F1 are means over all scenarios: a scenario where nothing was found scores F1 = 0.
Writes benchmarks/results/recovery_by_text.json.

    .venv/bin/python benchmarks/recovery_by_text.py [--scenarios 5] [--seed 0] [--engines dcg,panel]
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

from crux_lab.analysis.calibration import default_calibration
from crux_lab.analysis.recovery import summarize
from crux_lab.analysis.scenarios import generate_scenarios
from crux_lab.eval.compare import all_engines
from crux_lab.eval.knobs import run_recovery
from crux_lab.llm.simulated.options import SimulatorKnobs

HERE = Path(__file__).resolve().parent
SETTINGS = {"default": {}, "missed_attack=0.3": {"missed_attack": 0.3}, "misread=0.2": {"misread": 0.2}}


def fmt(x: object) -> str:
    if isinstance(x, float):
        return "   —" if math.isnan(x) else f"{x:.2f}"
    return str(x)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--engines", default=",".join(all_engines()))
    args = ap.parse_args()
    engines = [e for e in args.engines.split(",") if e]
    cal = default_calibration()
    print(cal.describe())
    before = json.loads((HERE / "data" / "recovery_before_one_channel.json").read_text())
    scenarios = generate_scenarios(args.scenarios, seed=args.seed)
    out: dict[str, object] = {"calibration": cal.__dict__, "scenarios": args.scenarios, "seed": args.seed, "settings": {}}
    for name, knobs in SETTINGS.items():
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            run = run_recovery(scenarios, engines, Path(tmp) / "lib", seed=args.seed, backend_options=SimulatorKnobs(**knobs).as_options(), store=False)
        rows = summarize(run.scores)
        old = before["settings"].get(name, {})
        print(f"\n{name} ({time.perf_counter() - started:.0f}s; failures: {run.failures or 'none'})")
        print(f"{'engine':11s} {'P':>5s} {'R':>5s} {'F1':>5s} {'type':>5s} {'found':>6s} {'falseCG':>7s} | before (ids): P/R/F1")
        for r in rows:
            o = old.get(r["engine"], {})
            was = "/".join(fmt(float(o[k])) for k in ("precision", "recall", "f1")) if o else "—"
            print(f"{r['engine']:11s} {fmt(r['precision']):>5s} {fmt(r['recall']):>5s} {fmt(r['f1']):>5s} "
                  f"{fmt(r['type_accuracy']):>5s} {r['found']:>3d}/{r['planted']:<2d} {r['false_common_ground']:>7d} | {was}")
        out["settings"][name] = {"rows": rows, "failures": run.failures}  # type: ignore[index]
    path = HERE / "results" / "recovery_by_text.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1, default=str))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
