"""Sweeps through papermill: local processes and a Dask LocalCluster, single-writer ingest,
resume, a failing cell, and Ctrl-C. Kernels cost seconds each, so cells are few and tiny."""

from __future__ import annotations

import json
import os
from pathlib import Path

from crux_lab.store import connect, ingest, query
from crux_lab.sweep.runner import CellOutcome, Manifest, run_sweep
from crux_lab.sweep.spec import load_sweep

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[2]


def tiny_spec(tmp_path: Path, values: list[int], fail: list[bool] | None = None, executor: str = "local"):
    fails = f"\n  fail: {json.dumps(fail)}" if fail else ""
    text = (f"name: tiny\nnotebook: {DATA / 'tiny.ipynb'}\nexecutor: {executor}\nworkers: 2\n"
            f"grid:\n  value: {json.dumps(values)}{fails}\nseeds: [0]\n")
    (tmp_path / "tiny.yaml").write_text(text, encoding="utf-8")
    return load_sweep(tmp_path / "tiny.yaml")


def read_value(run_dir: Path) -> int:
    return int(json.loads((run_dir / "value.json").read_text())["value"])


def test_debate_sweep_ingests_resumes_and_records_a_failure(tmp_path: Path) -> None:
    """The real debate notebook: run folders named by the cell run id, one ingest per cell into
    DuckDB from this process, and a failing cell recorded without stopping the other (resume is
    tested with the tiny notebook below)."""
    yaml = tmp_path / "mini.yaml"
    yaml.write_text(
        f"name: mini\nnotebook: {REPO / 'notebooks' / '01_debate.ipynb'}\nworkers: 2\n"
        "base:\n  personas: [michael-saylor, peter-schiff]\n  max_turns: 4\n  topic: Is gold money?\n"
        "grid:\n  engine: [blitz, no-such-engine]\nseeds: [3]\n",
        encoding="utf-8",
    )
    spec = load_sweep(yaml)
    db = tmp_path / "sweep.duckdb"
    con = connect(db)
    ingested: list[tuple[str, int]] = []

    def ingest_one(run_dir: Path) -> None:
        ingested.append((run_dir.name, os.getpid()))
        ingest([run_dir], con)

    report = run_sweep(spec, ingest=ingest_one)
    con.close()
    by_status = {o.status: o for o in report.outcomes}
    assert sorted(by_status) == ["done", "failed"]
    done, failed = by_status["done"], by_status["failed"]
    assert "no-such-engine" in (failed.error or "")
    assert done.params["engine"] == "blitz" and done.params["seed"] == 3
    # The run folder is the cell's run id, and the executed notebook sits beside it.
    assert (spec.out_dir / "runs" / done.run_id / "manifest.json").is_file()
    assert (spec.out_dir / "runs" / f"{done.run_id}.ipynb").is_file()
    assert ingested == [(done.run_id, os.getpid())]  # single writer: the coordinating process
    rows = query("SELECT run_id, sweep_id, engine, seed FROM runs", db).rows
    assert rows == [(done.run_id, "mini", "blitz", 3)]
    assert done.wall_s > done.kernel_s > 0 and done.cells_s > 0
    manifest = json.loads((spec.out_dir / "manifest.json").read_text())["cells"]
    assert {c["status"] for c in manifest.values()} == {"done", "failed"}



def test_ctrl_c_keeps_finished_cells_and_marks_the_rest_incomplete(tmp_path: Path) -> None:
    spec = tiny_spec(tmp_path, [1, 2])
    ingested: list[int] = []

    def ingest_one(run_dir: Path) -> None:
        ingested.append(read_value(run_dir))

    def interrupt_after_first(outcome: CellOutcome) -> None:
        raise KeyboardInterrupt  # as if Ctrl-C arrived right after the first cell was ingested

    report = run_sweep(spec, ingest=ingest_one, workers=1, on_progress=interrupt_after_first)
    assert report.interrupted
    statuses = Manifest(spec.out_dir / "manifest.json").cells
    done = [rid for rid, c in statuses.items() if c["status"] == "done"]
    incomplete = [rid for rid, c in statuses.items() if c["status"] == "incomplete"]
    assert len(done) == 1 and len(incomplete) == 1
    assert len(ingested) == 1
    # Resume: only the incomplete cells run.
    resumed = run_sweep(spec, ingest=ingest_one, workers=2)
    assert sorted(resumed.skipped) == sorted(done)
    assert [o.status for o in resumed.outcomes] == ["done"]
    assert sorted(ingested) == [1, 2]


def test_interrupt_during_ingest_leaves_the_cell_incomplete(tmp_path: Path) -> None:
    spec = tiny_spec(tmp_path, [7])

    def interrupted_ingest(run_dir: Path) -> None:
        raise KeyboardInterrupt

    report = run_sweep(spec, ingest=interrupted_ingest)
    assert report.interrupted
    assert [o.status for o in report.outcomes] == ["incomplete"]
    assert Manifest(spec.out_dir / "manifest.json").status(report.outcomes[0].run_id) == "incomplete"


def test_dask_local_cluster(tmp_path: Path) -> None:
    spec = tiny_spec(tmp_path, [10, -1], executor="dask")
    ingested: list[tuple[int, int]] = []
    report = run_sweep(spec, ingest=lambda d: ingested.append((read_value(d), os.getpid())), workers=2)
    statuses = sorted((o.params["value"], o.status) for o in report.outcomes)
    assert statuses == [(-1, "failed"), (10, "done")]
    assert ingested == [(10, os.getpid())]  # ingest runs in the coordinator, not on a worker
    failed = [o for o in report.outcomes if o.status == "failed"]
    assert all("cell asked to fail" in (o.error or "") for o in failed)


def test_real_ctrl_c_on_the_process_group(tmp_path: Path) -> None:
    """SIGINT to the whole process group, as a terminal sends it: the finished cell stays done
    and ingested, the running ones are marked incomplete, and no kernel is left behind."""
    import signal
    import subprocess
    import sys
    import time

    spec_path = tmp_path / "s.yaml"
    spec_path.write_text(f"name: s\nnotebook: {DATA / 'sleepy.ipynb'}\nworkers: 2\ngrid:\n  sleep: [0.0, 600.0, 601.0]\n")
    code = (
        "from crux_lab.sweep.runner import run_sweep\nfrom crux_lab.sweep.spec import load_sweep\n"
        f"r = run_sweep(load_sweep({str(spec_path)!r}), ingest=lambda d: print('INGEST', d.name, flush=True))\n"
        "print('INTERRUPTED', r.interrupted, flush=True)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    manifest = tmp_path / "s" / "manifest.json"
    deadline = time.time() + 180
    while time.time() < deadline and not (manifest.is_file() and "done" in manifest.read_text()):
        time.sleep(0.3)
    time.sleep(2)  # the two sleeping cells are running now
    os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    cells = Manifest(manifest).cells
    by_sleep = {c["params"]["sleep"]: c["status"] for c in cells.values()}
    assert by_sleep == {0.0: "done", 600.0: "incomplete", 601.0: "incomplete"}
    done_id = next(rid for rid, c in cells.items() if c["status"] == "done")
    assert out.splitlines() == [f"INGEST {done_id}", "INTERRUPTED True"]
