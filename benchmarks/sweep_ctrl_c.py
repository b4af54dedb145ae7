"""Ctrl-C on a sweep, 20 times under load: how many stop, and how fast (SIGINT to exit).

Each round starts a real sweep (two papermill kernels), brings it to one of three states —
kernels starting, kernels running a cell, coordinator between cells — in turn, with CPU hogs
beside it, sends SIGINT to its process group as a terminal does, and times the exit. A round
counts as a stop when the sweep exits with 130 and leaves no worker or kernel behind.

Peer: starting and exiting a bare ``python -c pass`` under the same load (the floor of any
process exit); the ratio says how many interpreter start-ups a stop costs.

    .venv/bin/python benchmarks/sweep_ctrl_c.py [--rounds 20] [--hogs 2]

Prints a table and writes benchmarks/results/sweep_ctrl_c.json.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _report import print_and_save  # benchmarks/ is on sys.path when run as a script

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "sweep_ctrl_c.json"
sys.path.insert(0, str(REPO))

from tests.sweep.ctrl_c import STATES, cpu_hogs, interrupt_sweep  # noqa: E402


def python_exit_s(rounds: int = 5) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--hogs", type=int, default=2)
    args = ap.parse_args()
    rounds = []
    with tempfile.TemporaryDirectory(prefix="ctrl-c-bench-") as tmp, cpu_hogs(args.hogs):
        peer = python_exit_s()
        for i in range(args.rounds):
            state = STATES[i % len(STATES)]
            out = interrupt_sweep(Path(tmp) / f"r{i:02d}", state)
            stopped = out.exit_code == 130 and not out.leftovers
            rounds.append({"state": state, "stopped": stopped, "exit_code": out.exit_code,
                           "stop_s": round(out.stop_s, 3), "leftovers": len(out.leftovers)})
            print(f"round {i + 1:2d} {state:<8} exit {out.exit_code} stop {out.stop_s:.2f}s "
                  f"leftovers {len(out.leftovers)}", flush=True)
    times = [r["stop_s"] for r in rounds]
    by_state = {s: [r["stop_s"] for r in rounds if r["state"] == s] for s in STATES}
    rows = {
        "rounds": len(rounds),
        "stopped": sum(r["stopped"] for r in rounds),
        "cpu_hogs": args.hogs,
        "cpus": os.cpu_count(),
        "stop_s_median": round(statistics.median(times), 3),
        "stop_s_max": round(max(times), 3),
        **{f"stop_s_median_{s}": round(statistics.median(v), 3) for s, v in by_state.items() if v},
        "peer_python_start_exit_s": round(peer, 3),
        "ratio_median_stop_to_peer": round(statistics.median(times) / peer, 2),
        "python": platform.python_version(),
        "per_round": rounds,
    }
    print_and_save(rows, OUT)


if __name__ == "__main__":
    main()
