"""A re-scorable crux-recovery table on one scenario set: every debate engine at one turn budget,
the worldview step alone, the blind, informed and k-sample one-call baselines, and the canaries.

    .venv/bin/python benchmarks/recovery_table.py --set dev                  # the simulator: plumbing
    .venv/bin/python benchmarks/recovery_table.py --set test --backend openai \\
        --base-url http://127.0.0.1:8080/v1 --model-strong qwen2.5-1.5b --model-fast qwen2.5-1.5b \\
        --max-turns 8 --seeds 0 [--arms panel,direct+informed=true]         # resumable parts

It runs ``crux-lab eval recovery --items`` (every check and the resume are the CLI's own) in
two phases: first every arm but the k-sample baseline; then ``direct+informed=true+samples=k``,
with k chosen so that its tokens per debate match the median debate engine's (from the first
phase's items). Run folders go to ``benchmarks/results/<name>/runs/`` (not committed; a rerun
skips finished debates); the compact items to ``benchmarks/items/<name>/`` (committed: the
table is rebuilt from them by ``crux-lab eval rescore``). ``--arms`` runs only those arms (a
part of the table; the k-sample phase runs when its arm is asked for or no arms are given).
Numbers, not asserts. On the simulator, speakers say what their stances say, so its table
checks the plumbing, not the engines.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crux_lab.eval.items import k_for_budget, load_table, rescore, table_markdown  # noqa: E402

DEBATE_ENGINES = ("panel", "crux_rooms", "dcg")
BASELINES = ("worldview", "direct", "cot", "direct+informed=true", "cot+informed=true")
K_ARM = "direct+informed=true"


def run(arms: list[str], args: argparse.Namespace, items: Path) -> int:
    cmd = [str(ROOT / ".venv/bin/crux-lab"), "eval", "recovery", "--scenarios-dir", str(ROOT / "benchmarks/scenarios" / args.set),
           "--engines", ",".join(arms), "--seeds", args.seeds, "--max-turns", str(args.max_turns), "--backend", args.backend,
           "--items", str(items), "--runs-dir", str(ROOT / "benchmarks/results" / args.name / "runs"), "--no-store"]
    for flag in ("base_url", "model_strong", "model_fast", "structured"):
        if getattr(args, flag):
            cmd += ["--" + flag.replace("_", "-"), getattr(args, flag)]
    print("$", " ".join(cmd), flush=True)
    return subprocess.call(cmd)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=("dev", "test"), required=True)
    ap.add_argument("--backend", default="simulated")
    ap.add_argument("--base-url")
    ap.add_argument("--model-strong")
    ap.add_argument("--model-fast")
    ap.add_argument("--structured")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--max-turns", type=int, default=8)
    ap.add_argument("--arms", default="", help="run only these arms (comma-separated); default: all")
    ap.add_argument("--name", help="the items folder's name (default recovery-<backend>-<set>)")
    args = ap.parse_args()
    args.name = args.name or f"recovery-{'sim' if args.backend == 'simulated' else args.backend}-{args.set}"
    items = ROOT / "benchmarks/items" / args.name
    asked = [a.strip() for a in args.arms.split(",") if a.strip()]
    first = [a for a in (asked or [*DEBATE_ENGINES, *BASELINES]) if "samples=" not in a]
    if first and (code := run(first, args, items)) != 0:
        return code
    head = items / "table.json"
    settings = json.loads(head.read_text(encoding="utf-8"))
    settings.update({"scenarios": f"benchmarks/scenarios/{args.set}", "debate_engines": list(DEBATE_ENGINES),
                     "title": f"Crux recovery with sides, {args.set} set, {args.backend}"})
    head.write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")
    if not asked or any("samples=" in a for a in asked):
        scores = rescore(load_table(items))
        k = k_for_budget(scores, K_ARM, list(DEBATE_ENGINES))
        if k is None:
            print("k-sample baseline: no tokens recorded yet for", K_ARM, "or the debate engines; run them first")
        elif (code := run([f"{K_ARM}+samples={k}"], args, items)) != 0:
            return code
    print(table_markdown(rescore(load_table(items)), DEBATE_ENGINES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
