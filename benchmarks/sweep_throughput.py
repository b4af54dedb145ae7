"""Sweep throughput: 20 cells on 2 workers through papermill, seconds per cell split into
kernel start-up, notebook cells (of which the debate itself) and ingest.

Peer: the same 20 debates run in one process without notebooks (run_debate + write_run +
ingest), sequentially; the ratio says what papermill, kernels and figures cost.

    .venv/bin/python benchmarks/sweep_throughput.py [--cells 20] [--workers 2]

Prints a table and writes benchmarks/results/sweep_throughput.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from _report import print_and_save  # benchmarks/ is on sys.path when run as a script

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "sweep_throughput.json"
TOPICS = ["Is Bitcoin a better long-term store of value than gold?", "Should a company hold Bitcoin in its treasury?"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--executor", default="local")
    args = ap.parse_args()
    seeds = max(1, args.cells // 4)
    with tempfile.TemporaryDirectory(prefix="sweep-bench-") as tmp:
        root = Path(tmp)
        os.environ["CRUX_LAB_DB"] = str(root / "bench.duckdb")
        os.environ["CRUX_LAB_RUNS"] = str(root / "runs")
        from crux_lab.models import DebateConfig
        from crux_lab.runner import run_debate_sync
        from crux_lab.store import connect, ingest, write_run
        from crux_lab.sweep.runner import run_sweep, summarize_timings
        from crux_lab.sweep.spec import load_sweep

        yaml = root / "bench.yaml"
        yaml.write_text(
            f"name: bench\nnotebook: {REPO / 'notebooks' / '01_debate.ipynb'}\nworkers: {args.workers}\n"
            f"base:\n  personas: [michael-saylor, peter-schiff]\n  max_turns: 12\n"
            f"grid:\n  engine: [dialogue, dcg]\n  topic: {json.dumps(TOPICS)}\nseeds: {list(range(seeds))}\n",
            encoding="utf-8",
        )
        spec = load_sweep(yaml)
        con = connect(root / "bench.duckdb")
        report = run_sweep(spec, ingest=lambda d: ingest([d], con), executor=args.executor)
        con.close()
        n = len(report.outcomes)
        t = summarize_timings(report.outcomes)

        # Peer: the same debates in-process, one after another, no notebooks.
        peer_db = connect(root / "peer.duckdb")
        t0 = time.perf_counter()
        for cell in spec.cells():
            p = cell.params
            result = run_debate_sync(DebateConfig(topic=p["topic"], persona_ids=p["personas"], engine=p["engine"],
                                                  max_turns=p["max_turns"], seed=p["seed"]))
            ingest([write_run(result, root / "peer-runs")], peer_db)
        peer_s = time.perf_counter() - t0
        peer_db.close()

    rows = {
        "cells": n,
        "done": report.count("done"),
        "workers": args.workers,
        "executor": args.executor,
        "sweep_wall_s": round(report.wall_s, 2),
        "effective_s_per_cell": round(report.wall_s / max(n, 1), 2),
        "per_cell_wall_s": round(t["wall_s"], 2),
        "per_cell_kernel_startup_s": round(t["kernel_s"], 2),
        "per_cell_notebook_cells_s": round(t["cells_s"], 2),
        "per_cell_debate_s": round(t["debate_s"], 2),
        "per_cell_ingest_s": round(t["ingest_s"], 3),
        "peer_in_process_sequential_s_per_cell": round(peer_s / max(n, 1), 2),
        "ratio_sweep_vs_peer": round((report.wall_s / max(n, 1)) / max(peer_s / max(n, 1), 1e-9), 2),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }
    print_and_save(rows, OUT)


if __name__ == "__main__":
    main()
