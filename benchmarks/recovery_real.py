"""Crux recovery on any backend: planted scenarios through dcg, panel, crux_rooms and the
one-call baselines direct and cot, P/R/F1 with 95% bootstrap intervals over scenarios x seeds.

    .venv/bin/python benchmarks/recovery_real.py                      # the simulator: a plumbing check
    .venv/bin/python benchmarks/recovery_real.py --backend openai --base-url http://127.0.0.1:8080/v1 \\
        --model-strong qwen2.5-1.5b --model-fast qwen2.5-1.5b --max-turns 10 [--seeds 0,1] [--scenarios 3]

It runs ``crux-lab eval recovery`` (so every check and the resume are the CLI's own): run
folders go to ``benchmarks/results/recovery_real-<backend>/runs/`` and a rerun skips finished
debates (stop it with Ctrl-C whenever; run it again to go on), scores into
``benchmarks/results/recovery_real-<backend>.duckdb`` and ``.json``, and the Markdown table
into ``.md`` (printed too, for ``benchmarks/README.md``), with how often each guard fired. ``--scenarios-dir DIR`` debates your
own scenarios instead of generated ones; ``--tag T`` names the results
``recovery_real-<backend>-T`` (runs of another turn budget kept apart). Numbers, not asserts. On the simulator, speakers say
what their stances say and extractors read turns against the deck's wording, so its table
checks the plumbing, not the engines.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crux_lab.eval.cli import with_interval  # noqa: E402

ENGINES = "dcg,panel,crux_rooms,direct,cot"


def markdown(data: dict[str, Any], command: str) -> str:
    """The per-engine table of an ``eval recovery --json`` file, in Markdown."""
    backend = data["backend"]
    label = "plumbing check (simulator)" if backend == "simulated" else f"{backend}: {', '.join(sorted(set(data['models'].values())))}"
    lines = [f"**{label}**: {len(data['scenarios'])} scenario(s) x seeds {','.join(map(str, data['seeds']))}, "
             f"max {data['max_turns']} turns", "", f"`{command}`", "",
             "| engine | debates | P [95% CI] | R [95% CI] | F1 [95% CI] | type acc. | found | false CG | calls | wall s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["summary"]:
        def ci(key: str, row: dict[str, Any] = r) -> str:
            return with_interval(row[key], tuple(row[f"{key}_ci"]))

        acc = r["type_accuracy"]
        lines.append(f"| {r['engine']} | {r['debates']} | {ci('precision')} | {ci('recall')} | {ci('f1')} | "
                     f"{'—' if acc is None or math.isnan(acc) else f'{acc:.2f}'} | {r['found']}/{r['planted']} | "
                     f"{r['false_common_ground']} | {r['calls']} | {r['wall_s']:.0f} |")
    if data.get("failures"):
        lines += ["", "Failed: " + "; ".join(f"{k}: {v}" for k, v in data["failures"].items())]
    return "\n".join(lines) + "\n"


def guards_table(runs: Path) -> str:
    """The guard firing rates of the debates in ``runs`` (run folders), per engine."""
    from crux_lab.analysis.metrics import guard_rates, guard_rates_markdown
    from crux_lab.store.runfiles import find_run_dirs, load_result

    return guard_rates_markdown(guard_rates(load_result(d) for d in find_run_dirs([runs])))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="simulated")
    ap.add_argument("--base-url")
    ap.add_argument("--model-strong")
    ap.add_argument("--model-fast")
    ap.add_argument("--structured")
    ap.add_argument("--engines", default=ENGINES)
    ap.add_argument("--scenarios", type=int, default=3)
    ap.add_argument("--scenarios-dir")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--max-turns", type=int, default=10)
    ap.add_argument("--cassettes")
    ap.add_argument("--tag", default="", help="suffix of the results' names, to keep runs of another budget apart")
    args = ap.parse_args()
    out = ROOT / "benchmarks" / "results" / f"recovery_real-{args.backend}{'-' + args.tag if args.tag else ''}"
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["crux-lab", "eval", "recovery", "--engines", args.engines, "--seeds", args.seeds,
           "--max-turns", str(args.max_turns), "--backend", args.backend]
    cmd += ["--scenarios-dir", args.scenarios_dir] if args.scenarios_dir else ["--scenarios", str(args.scenarios)]
    for flag in ("base_url", "model_strong", "model_fast", "structured", "cassettes"):
        if getattr(args, flag):
            cmd += [f"--{flag.replace('_', '-')}", getattr(args, flag)]
    shown = " ".join(cmd)
    cmd += ["--runs-dir", str(out / "runs"), "--db", str(out.with_suffix(".duckdb")), "--json", str(out.with_suffix(".json"))]
    code = subprocess.call([sys.executable, "-m", "crux_lab", *cmd[1:]], cwd=ROOT)
    if code != 0:
        return code
    table = markdown(json.loads(out.with_suffix(".json").read_text()), shown)
    table += "\nGuards (how often each fired; crux_lab.engines.guards):\n\n" + guards_table(out / "runs")
    out.with_suffix(".md").write_text(table, encoding="utf-8")
    print(table)
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
