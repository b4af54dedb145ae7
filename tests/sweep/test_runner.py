"""Sweeps through papermill: local processes and a Dask LocalCluster, single-writer ingest,
resume, a failing cell, and Ctrl-C. Kernels cost seconds each, so cells are few and tiny."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from crux_lab.store import connect, ingest, query
from crux_lab.sweep.runner import CellOutcome, Manifest, run_sweep
from crux_lab.sweep.spec import SweepSpec, load_sweep

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


def tiny_done(run_dir: Path) -> str | None:
    """The tiny notebooks write value.json, not a run folder: that file is their truth."""
    return None if (run_dir / "value.json").is_file() else "no value.json"


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

    report = run_sweep(spec, ingest=ingest_one, workers=1, on_progress=interrupt_after_first, check_done=tiny_done)
    assert report.interrupted
    statuses = Manifest(spec.out_dir / "manifest.json").cells
    done = [rid for rid, c in statuses.items() if c["status"] == "done"]
    incomplete = [rid for rid, c in statuses.items() if c["status"] == "incomplete"]
    assert len(done) == 1 and len(incomplete) == 1
    assert len(ingested) == 1
    # Resume: only the incomplete cells run (the database already holds the done one).
    resumed = run_sweep(spec, ingest=ingest_one, workers=2, check_done=tiny_done, ingested=done)
    assert sorted(resumed.skipped) == sorted(done) and resumed.caught_up == []
    assert [o.status for o in resumed.outcomes] == ["done"]
    assert sorted(ingested) == [1, 2]


def test_interrupt_during_ingest_leaves_the_cell_incomplete(tmp_path: Path) -> None:
    spec = tiny_spec(tmp_path, [7])

    def interrupted_ingest(run_dir: Path) -> None:
        raise KeyboardInterrupt

    report = run_sweep(spec, ingest=interrupted_ingest, check_done=tiny_done)
    assert report.interrupted
    assert [o.status for o in report.outcomes] == ["incomplete"]
    assert Manifest(spec.out_dir / "manifest.json").status(report.outcomes[0].run_id) == "incomplete"


def test_dask_local_cluster(tmp_path: Path) -> None:
    spec = tiny_spec(tmp_path, [10, -1], executor="dask")
    ingested: list[tuple[int, int]] = []
    report = run_sweep(spec, ingest=lambda d: ingested.append((read_value(d), os.getpid())), workers=2,
                       check_done=tiny_done)
    statuses = sorted((o.params["value"], o.status) for o in report.outcomes)
    assert statuses == [(-1, "failed"), (10, "done")]
    assert ingested == [(10, os.getpid())]  # ingest runs in the coordinator, not on a worker
    failed = [o for o in report.outcomes if o.status == "failed"]
    assert all("cell asked to fail" in (o.error or "") for o in failed)


def runfolder_spec(tmp_path: Path, values: list[int], name: str = "rf") -> SweepSpec:
    text = (f"name: {name}\nnotebook: {DATA / 'runfolder.ipynb'}\nworkers: 2\n"
            f"grid:\n  value: {json.dumps(values)}\nseeds: [0]\n")
    (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")
    return load_sweep(tmp_path / f"{name}.yaml")


def db_run_ids(db: Path) -> set[str]:
    return {r[0] for r in query("SELECT run_id FROM runs", db).rows}


def test_resume_trusts_the_run_folders_not_the_manifest(tmp_path: Path) -> None:
    """Issue 16: a new database gets every done cell; a deleted manifest re-runs nothing; a
    damaged run folder is the one cell that runs again."""
    spec = runfolder_spec(tmp_path, [1, 2])
    first_db, second_db = tmp_path / "first.duckdb", tmp_path / "second.duckdb"
    first = run_sweep(spec, ingest=lambda d: ingest([d], first_db))
    assert sorted(o.status for o in first.outcomes) == ["done", "done"], first.outcomes
    ids = {o.run_id for o in first.outcomes}
    assert db_run_ids(first_db) == ids

    # A new, empty database: nothing runs, both cells are ingested from their folders.
    launched: list[str] = []
    second = run_sweep(spec, ingest=lambda d: ingest([d], second_db), ingested=set(),
                       on_launch=lambda c: launched.append(c.run_id))
    assert launched == [] and second.outcomes == []
    assert sorted(second.caught_up) == sorted(ids)
    assert db_run_ids(second_db) == ids

    # The manifest deleted: still nothing runs, and nothing is ingested twice.
    (spec.out_dir / "manifest.json").unlink()
    third = run_sweep(spec, ingest=lambda d: launched.append(f"ingest {d.name}"), ingested=ids,
                      on_launch=lambda c: launched.append(c.run_id))
    assert launched == [] and sorted(third.skipped) == sorted(ids)

    # A truncated result.json makes that cell not done: it alone runs again.
    damaged = sorted(ids)[0]
    result_json = spec.out_dir / "runs" / damaged / "result.json"
    result_json.write_bytes(result_json.read_bytes()[:40])
    fourth = run_sweep(spec, ingest=lambda d: ingest([d], first_db), ingested=ids,
                       on_launch=lambda c: launched.append(c.run_id))
    assert launched == [damaged]
    assert [(o.run_id, o.status) for o in fourth.outcomes] == [(damaged, "done")]
    assert db_run_ids(first_db) == ids


def test_sweep_status_and_catch_up_through_the_cli(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from crux_lab.cli import app

    spec = runfolder_spec(tmp_path, [5, -1], name="st")
    db = tmp_path / "st.duckdb"
    cli = CliRunner()
    res = cli.invoke(app, ["sweep", str(spec.path), "--db", str(db)])
    assert res.exit_code == 1, res.output  # the value -1 cell fails
    ok_id = next(iter(db_run_ids(db)))
    status = cli.invoke(app, ["sweep", str(spec.path), "--status", "--db", str(db)])
    flat = " ".join(status.output.split())
    assert status.exit_code == 0, status.output
    assert "1 ingested, 0 done, not ingested, 1 failed, 0 pending" in flat
    assert "cell asked to fail" in flat
    # A new database: --status says done but not ingested; the sweep ingests without running.
    new_db = tmp_path / "new.duckdb"
    status = cli.invoke(app, ["sweep", str(spec.path), "--status", "--db", str(new_db)])
    assert "0 ingested, 1 done, not ingested, 1 failed" in " ".join(status.output.split())
    res = cli.invoke(app, ["sweep", str(spec.path), "--db", str(new_db)])
    assert "1 ingested from their run folders" in " ".join(res.output.split())
    assert db_run_ids(new_db) == {ok_id}


def test_an_ingest_waits_for_readers_to_let_go(tmp_path: Path) -> None:
    """A reader holding the database makes ingest fail with DatabaseLocked: the sweep waits and
    retries (no kernel needed: the cell is already done on disk and only needs ingesting)."""
    from crux_lab.models import DebateConfig, DebateResult
    from crux_lab.store import write_run
    from crux_lab.store.db import DatabaseLocked
    from crux_lab.sweep.runner import notebook_defaults

    spec = runfolder_spec(tmp_path, [3], name="lk")
    [cell] = spec.cells(notebook_defaults(spec.notebook))
    config = DebateConfig(topic="value 3", persona_ids=["a", "b"])
    write_run(DebateResult(run_id=cell.run_id, config=config, engine="none", backend="simulated", complete=True),
              spec.out_dir / "runs")
    attempts: list[str] = []

    def busy_twice(run_dir: Path) -> None:
        attempts.append(run_dir.name)
        if len(attempts) <= 2:
            raise DatabaseLocked(f"{run_dir} is in use by another process")

    report = run_sweep(spec, ingest=busy_twice, on_launch=lambda c: attempts.append("LAUNCH"))
    assert attempts == [cell.run_id] * 3 and report.caught_up == [cell.run_id]


def test_a_kernel_that_died_at_start_is_started_once_more(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel that died, or did not answer within the start bound, before its first reply
    ran nothing: the cell starts another once; a second failure is named as the kernel not
    starting, and any other error is the cell's error at once."""
    import nbformat
    import papermill

    from crux_lab.sweep.runner import KERNEL_DIED, KernelStartError, execute_cell

    out = tmp_path / "out.ipynb"
    calls: list[int] = []

    def flaky(fails: int, error: str = KERNEL_DIED):  # type: ignore[no-untyped-def]
        def run(notebook: str, output: str, **_: object) -> None:
            calls.append(1)
            if len(calls) <= fails:
                raise RuntimeError(error)
            nbformat.write(nbformat.v4.new_notebook(), output)
        return run

    silent = "Kernel didn't respond in 60 seconds"
    for error in (KERNEL_DIED, silent):
        calls.clear()
        monkeypatch.setattr(papermill, "execute_notebook", flaky(1, error))
        assert execute_cell("nb.ipynb", str(out), {}, "r", str(tmp_path), 60, str(tmp_path))["wall_s"] >= 0
        assert len(calls) == 2
    for fails, error, raised, match in ((2, KERNEL_DIED, KernelStartError, "did not start in 2 attempts .* died"),
                                        (2, silent, KernelStartError, "did not start in 2 attempts .* did not answer"),
                                        (1, "Kernel error: boom", RuntimeError, "boom")):
        calls.clear()
        monkeypatch.setattr(papermill, "execute_notebook", flaky(fails, error))
        with pytest.raises(raised, match=match):
            execute_cell("nb.ipynb", str(out), {}, "r", str(tmp_path), 60, str(tmp_path))
        assert len(calls) == fails
