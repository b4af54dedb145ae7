"""Queries work while a sweep runs (issue 16): the sweep holds DuckDB's write lock only while
it ingests a finished cell, so `crux-lab db query` between ingests is not refused.

Synchronised on files: the first cell's manifest entry (written after its ingest) and a file
the second cell waits for.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

DATA = Path(__file__).parent / "data"
SAFETY_S = 600.0


def test_db_query_works_between_ingests(tmp_path: Path) -> None:
    go, db = tmp_path / "go", tmp_path / "s.duckdb"
    spec = tmp_path / "s.yaml"
    spec.write_text(f"name: s\nnotebook: {DATA / 'runfolder.ipynb'}\nworkers: 2\n"
                    f"grid:\n  wait_for: ['', {json.dumps(str(go))}]\n")
    sweep = subprocess.Popen([sys.executable, "-m", "crux_lab", "sweep", str(spec), "--db", str(db)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        manifest = tmp_path / "s" / "manifest.json"
        deadline = time.monotonic() + SAFETY_S
        while not (manifest.is_file() and '"done"' in manifest.read_text()):
            assert sweep.poll() is None and time.monotonic() < deadline, sweep.communicate()
            time.sleep(0.1)  # waiting on a file the sweep writes after the first ingest
        # The sweep is still running (its second cell waits for `go`): read the database now.
        assert sweep.poll() is None
        q = subprocess.run([sys.executable, "-m", "crux_lab", "db", "query", "SELECT count(*) AS n FROM runs",
                            "--db", str(db), "--json"], capture_output=True, text=True, timeout=SAFETY_S)
        assert q.returncode == 0, q.stderr
        assert json.loads(q.stdout) == [{"n": 1}]
        assert sweep.poll() is None  # the read happened while the sweep ran
    finally:
        go.write_text("go")
        out, err = sweep.communicate(timeout=SAFETY_S)
    assert sweep.returncode == 0, (out, err)
    q = subprocess.run([sys.executable, "-m", "crux_lab", "db", "query", "SELECT count(*) AS n FROM runs",
                        "--db", str(db), "--json"], capture_output=True, text=True, timeout=SAFETY_S)
    assert json.loads(q.stdout) == [{"n": 2}]
