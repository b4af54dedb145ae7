"""The sweep tests, N times in a row beside a CPU hog: how many runs pass (issue 44).

Each round runs ``pytest <tests> -n0`` from a source tree (``--tree``, default this one) in
a fresh process, niced, while ``--hogs`` busy processes (``python -c "while 1: pass"``,
niced) run beside it for the whole series. A round that has not finished after
``--round-timeout`` seconds is killed and counted as a hang. Failed test ids and the tail
of the output are kept per round.

    .venv/bin/python benchmarks/sweep_tests_30.py --label after [--rounds 30] [--tree DIR]
        [--tests tests/sweep] [--hogs 1]

Results are merged under ``--label`` into benchmarks/data/sweep_tests_30.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "data" / "sweep_tests_30.json"


def one_round(tree: Path, tests: list[str], timeout_s: float) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = ["nice", "-n", "5", sys.executable, "-m", "pytest", *tests, "-n0", "-q", "-p", "no:randomly"]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        hung = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        hung = True
    wall = time.monotonic() - started
    failed = sorted(set(re.findall(r"^(?:FAILED|ERROR) (\S+)", out, flags=re.MULTILINE)))
    summary = next((line for line in reversed(out.splitlines()) if " in " in line and "=" in line
                    or re.search(r"\d+ (passed|failed)", line)), "")
    return {"passed": proc.returncode == 0 and not hung, "hung": hung, "exit_code": proc.returncode,
            "wall_s": round(wall, 1), "failed": failed, "summary": summary.strip("= "),
            "tail": "" if proc.returncode == 0 else out[-3000:]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", required=True, help="before / after")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--tree", type=Path, default=REPO)
    ap.add_argument("--tests", default="tests/sweep", help="comma-separated test paths")
    ap.add_argument("--hogs", type=int, default=1)
    ap.add_argument("--round-timeout", type=float, default=1500.0)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    tests = [t for t in args.tests.split(",") if t]
    hogs = [subprocess.Popen(["nice", "-n", "10", sys.executable, "-c", "while 1: pass"])
            for _ in range(args.hogs)]
    rounds: list[dict[str, object]] = []
    try:
        for i in range(args.rounds):
            load = os.getloadavg()[0]
            result = one_round(args.tree.resolve(), tests, args.round_timeout)
            result["load_1m_at_start"] = round(load, 2)
            rounds.append(result)
            print(f"round {i + 1:2d}: {'pass' if result['passed'] else 'FAIL'} {result['wall_s']:7.1f}s "
                  f"load {load:.1f} {result['summary']} {' '.join(result['failed'])}", flush=True)
            save(args, tests, rounds)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    passed = sum(1 for r in rounds if r["passed"])
    print(f"{args.label}: {passed} of {len(rounds)} rounds passed")


def save(args: argparse.Namespace, tests: list[str], rounds: list[dict[str, object]]) -> None:
    data = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {}
    data[args.label] = {
        "tests": tests, "hogs": args.hogs, "cpus": os.cpu_count(), "python": platform.python_version(),
        "rounds_run": len(rounds), "rounds_passed": sum(1 for r in rounds if r["passed"]),
        "rounds_hung": sum(1 for r in rounds if r["hung"]), "rounds": rounds,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
