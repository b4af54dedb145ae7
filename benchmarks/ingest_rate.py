"""DuckDB ingest rate for a synthetic 1M-turn batch, through the store's real ingest path.

100 run folders (default) are written with ``write_run`` from a real simulated debate, then
each folder's ``tables/turns.parquet`` is replaced with 10,000 synthetic turns (the manifest
count updated), so ``crux_lab.store.ingest`` loads 1,000,000 turns plus the other tables in one
transaction (the sweep coordinator's path). Peer: a bare DuckDB
``INSERT INTO turns SELECT * FROM read_parquet([...])`` of the same files, with no checks.

    .venv/bin/python benchmarks/ingest_rate.py [--runs 100] [--turns-per-run 10000]

Prints a table and writes benchmarks/results/ingest_rate.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from _report import print_and_save  # benchmarks/ is on sys.path when run as a script

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "ingest_rate.json"
WORDS = ["the", "supply", "is", "fixed", "so", "scarcity", "holds", "but", "demand", "can", "fall", "and", "the", "energy", "cost", "is", "real"]


def synthetic_turns(run_id: str, n: int) -> pa.Table:
    from crux_lab.store.tables import arrow_schemas

    schema = arrow_schemas()["turns"]
    idx = list(range(n))
    cols = {
        "run_id": [run_id] * n, "ord": idx, "id": [f"t{i}" for i in idx], "turn_index": idx,
        "persona_id": [("michael-saylor", "peter-schiff", "arthur-hayes")[i % 3] for i in idx],
        "dialogue": [" ".join(WORDS[(i + k) % len(WORDS)] for k in range(40)) for i in idx],
        "move": [("CLAIM", "CHALLENGE", "CLARIFY", "CONCEDE")[i % 4] for i in idx],
        "phase": [("opening", "free_exchange", "crux_seeking", "resolution")[(4 * i) // n] for i in idx],
        "phase_number": [1 + (4 * i) // n for i in idx], "steering_hint": [None] * n, "aspect_id": [None] * n,
        "room_id": [None] * n, "reply_to": [f"t{i - 1}" if i else None for i in idx],
        "proposition_ids": [[f"crypto.p{1 + i % 8}"] for i in idx], "stance": [("pro", "con", "uncertain")[i % 3] for i in idx],
        "confidence": [0.5 + (i % 50) / 100 for i in idx], "timestamp": [1.7e9 + i for i in idx],
    }
    return pa.table({k: pa.array(v, type=schema.field(k).type) for k, v in cols.items()}, schema=schema)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--turns-per-run", type=int, default=10_000)
    args = ap.parse_args()
    from crux_lab.models import DebateConfig
    from crux_lab.runner import run_debate_sync
    from crux_lab.store import connect, ingest, write_run

    base = run_debate_sync(DebateConfig(topic="Is gold money?", persona_ids=["michael-saylor", "peter-schiff", "arthur-hayes"],
                                        engine="blitz", max_turns=6))
    with tempfile.TemporaryDirectory(prefix="ingest-bench-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        folders = []
        for i in range(args.runs):
            rid = f"{i:016x}"
            folder = write_run(base.model_copy(update={"run_id": rid, "transcript": []}), root / "runs")
            pq.write_table(synthetic_turns(rid, args.turns_per_run), folder / "tables" / "turns.parquet")
            manifest = json.loads((folder / "manifest.json").read_text())
            manifest["tables"]["turns"] = args.turns_per_run
            (folder / "manifest.json").write_text(json.dumps(manifest))
            folders.append(folder)
        prep_s = time.perf_counter() - t0

        con = connect(root / "store.duckdb")
        t0 = time.perf_counter()
        report = ingest(folders, con)
        ingest_s = time.perf_counter() - t0
        turns = con.execute("SELECT count(*) FROM turns").fetchone()[0]  # type: ignore[index]
        con.close()

        peer = duckdb.connect(str(root / "peer.duckdb"))
        files = [str(f / "tables" / "turns.parquet") for f in folders]
        peer.execute("CREATE TABLE turns AS SELECT * FROM read_parquet(?) LIMIT 0", [files[:1]])
        t0 = time.perf_counter()
        peer.execute("INSERT INTO turns SELECT * FROM read_parquet(?)", [files])
        peer_s = time.perf_counter() - t0
        peer.close()

    rows = {
        "runs": args.runs,
        "turns": turns,
        "total_rows_ingested": report.total_rows,
        "ingest_s": round(ingest_s, 2),
        "rows_per_s": round(report.total_rows / ingest_s),
        "turns_per_s": round(turns / ingest_s),
        "peer_bare_insert_turns_s": round(peer_s, 2),
        "peer_turns_per_s": round(turns / peer_s),
        "ratio_store_vs_bare": round(ingest_s / peer_s, 2),
        "prepare_s": round(prep_s, 1),
        "duckdb": duckdb.__version__,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }
    print_and_save(rows, OUT)


if __name__ == "__main__":
    main()
