"""Store: migrations, run folders, ingest (idempotent, transactional), metrics, errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from crux_lab.models import DebateResult
from crux_lab.store import (
    RUN_TABLES,
    DatabaseUnavailable,
    IngestError,
    QueryError,
    RunFolderError,
    SchemaTooNew,
    StoreError,
    applied_migrations,
    connect,
    ingest,
    load_result,
    migration_names,
    query,
    read_events,
    read_manifest,
    record_metrics,
    table_counts,
    write_run,
)

REQUIRED_TABLES = {
    "runs", "debates", "events", "turns", "arguments", "attacks", "disputes", "stances",
    "reasons", "crux_cards", "positions", "llm_calls", "metrics",
}


def counts(db: Path) -> dict[str, int]:
    con = connect(db, read_only=True)
    try:
        return table_counts(con)
    finally:
        con.close()


# -- migrations ----------------------------------------------------------------------------


def test_migration_from_an_empty_file_creates_every_table(db_path: Path) -> None:
    con = connect(db_path)
    try:
        assert applied_migrations(con) == migration_names()
        tables = set(table_counts(con))
    finally:
        con.close()
    assert tables >= REQUIRED_TABLES
    assert all(n == 0 for n in counts(db_path).values())


def test_migrate_twice_applies_nothing_new(db_path: Path) -> None:
    connect(db_path).close()
    con = connect(db_path)
    try:
        rows = con.execute("SELECT count(*) FROM _migrations").fetchone()
    finally:
        con.close()
    assert rows == (len(migration_names()),)


def test_database_from_newer_schema_is_refused(db_path: Path) -> None:
    connect(db_path).close()
    raw = duckdb.connect(str(db_path))
    raw.execute("INSERT INTO _migrations (name) VALUES ('m999_from_the_future')")
    raw.close()
    with pytest.raises(SchemaTooNew, match="created by a newer crux_lab.*upgrade"):
        connect(db_path)
    with pytest.raises(SchemaTooNew, match="m999_from_the_future"):
        connect(db_path, read_only=True)


def test_corrupt_database_file_gets_a_clear_message(tmp_path: Path) -> None:
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(b"this is not duckdb" * 500)
    with pytest.raises(DatabaseUnavailable, match="damaged or not a DuckDB database.*move it aside.*db ingest.*--db"):
        connect(bad)
    assert bad.read_bytes().startswith(b"this is not duckdb")  # left untouched


def test_unwritable_database_path_gets_a_clear_message(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(DatabaseUnavailable, match="cannot create the folder"):
        connect(blocker / "sub" / "db.duckdb")
    with pytest.raises(DatabaseUnavailable, match="is a directory"):
        connect(tmp_path)


def test_read_only_open_of_a_missing_database_says_how_to_create_it(tmp_path: Path) -> None:
    with pytest.raises(DatabaseUnavailable, match="no database at .* yet"):
        connect(tmp_path / "missing.duckdb", read_only=True)
    assert not (tmp_path / "missing.duckdb").exists()


# -- run folders ---------------------------------------------------------------------------


def test_write_run_layout_and_round_trip(tmp_path: Path, result: DebateResult) -> None:
    run_dir = write_run(result, tmp_path)
    assert run_dir == tmp_path / result.run_id
    assert {p.name for p in run_dir.iterdir()} == {
        "manifest.json", "result.json", "events.jsonl", "transcript.md", "tables"
    }
    assert load_result(run_dir) == result
    assert list(read_events(run_dir)) == result.events
    manifest = read_manifest(run_dir)
    assert manifest.tables["turns"] == len(result.transcript)
    assert set(manifest.tables) == set(RUN_TABLES)
    transcript = (run_dir / "transcript.md").read_text()
    assert result.config.topic in transcript and "turn 1 by bob" in transcript
    # no temporary folders are left beside it
    assert [p.name for p in tmp_path.iterdir()] == [result.run_id]


def test_rewriting_a_run_replaces_the_folder_whole(tmp_path: Path, result: DebateResult) -> None:
    run_dir = write_run(result, tmp_path)
    (run_dir / "stray.txt").write_text("old")
    changed = result.model_copy(update={"regime_description": "rewritten"})
    assert write_run(changed, tmp_path) == run_dir
    assert not (run_dir / "stray.txt").exists()
    assert load_result(run_dir).regime_description == "rewritten"
    assert [p.name for p in tmp_path.iterdir()] == [result.run_id]


def test_failed_write_leaves_no_folder(tmp_path: Path, result: DebateResult, monkeypatch: pytest.MonkeyPatch) -> None:
    import crux_lab.store.runfiles as runfiles

    def boom(*_: object, **__: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(runfiles, "render_transcript", boom)
    with pytest.raises(OSError, match="disk full"):
        write_run(result, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_parquet_tables_carry_the_database_types(tmp_path: Path, result: DebateResult) -> None:
    run_dir = write_run(result, tmp_path)
    schema = pq.read_schema(run_dir / "tables" / "turns.parquet")
    assert str(schema.field("proposition_ids").type).startswith("list<")
    assert str(schema.field("confidence").type) == "double"
    assert not (run_dir / "tables" / "metrics.parquet").exists()  # metrics come later, from evaluation


# -- ingest --------------------------------------------------------------------------------


def test_ingest_twice_gives_the_same_row_counts(tmp_path: Path, db_path: Path, result: DebateResult) -> None:
    run_dir = write_run(result, tmp_path / "runs")
    first = ingest([run_dir], db_path)
    after_first = counts(db_path)
    second = ingest([run_dir], db_path)
    assert counts(db_path) == after_first
    assert first.rows == second.rows
    assert after_first["turns"] == len(result.transcript)
    assert after_first["events"] == len(result.events)
    assert after_first["llm_calls"] == len(result.llm_calls)
    assert after_first["crux_card_positions"] == 2
    assert after_first["runs"] == 1


def test_ingest_a_folder_of_runs_and_query_by_name(tmp_path: Path, db_path: Path, make: Callable[..., DebateResult]) -> None:
    runs = tmp_path / "runs"
    for seed in range(3):
        write_run(make(seed=seed), runs)
    report = ingest([runs], db_path)
    assert len(report.run_ids) == 3
    res = query("SELECT count(*) AS n, count(DISTINCT run_id) AS r FROM turns", db_path)
    assert res.columns == ["n", "r"] and res.rows == [(9, 3)]
    res = query("SELECT label, grounded FROM arguments WHERE id = 'a2' LIMIT 1", db_path)
    assert res.rows == [("IN", True)]
    row = query("SELECT run_dir FROM runs LIMIT 1", db_path).rows[0][0]
    assert Path(row).parent == runs.resolve()
    doc = json.loads(query("SELECT stances FROM positions LIMIT 1", db_path).rows[0][0])
    assert doc == {"p1": "pro"}


def test_reingest_replaces_changed_rows(tmp_path: Path, db_path: Path, result: DebateResult) -> None:
    runs = tmp_path / "runs"
    ingest([write_run(result, runs)], db_path)
    shorter = result.model_copy(update={"transcript": result.transcript[:1]})
    ingest([write_run(shorter, runs)], db_path)
    assert counts(db_path)["turns"] == 1


def test_failed_ingest_leaves_nothing_behind(tmp_path: Path, db_path: Path, make: Callable[..., DebateResult]) -> None:
    runs = tmp_path / "runs"
    good_a = write_run(make(seed=1), runs)
    corrupt = write_run(make(seed=2), runs)
    good_b = write_run(make(seed=3), runs)
    (corrupt / "tables" / "turns.parquet").write_bytes(b"not parquet at all")
    before = ingest([good_a], db_path)  # something already there stays as it was
    assert before.run_ids
    baseline = counts(db_path)
    # Validation refuses the damaged folder before anything is written.
    with pytest.raises(RunFolderError, match=r"turns\.parquet: unreadable Parquet.*rewrite the run"):
        ingest([good_a, corrupt, good_b], db_path)
    assert counts(db_path) == baseline


def test_truncated_table_is_caught_by_the_manifest_count(tmp_path: Path, db_path: Path, result: DebateResult) -> None:
    run_dir = write_run(result, tmp_path)
    table = pq.read_table(run_dir / "tables" / "turns.parquet")
    pq.write_table(table.slice(0, 1), run_dir / "tables" / "turns.parquet")
    with pytest.raises(RunFolderError, match="holds 1 row.*'tables.turns' says 3"):
        ingest([run_dir], db_path)
    assert not db_path.exists()  # refused before the database was even opened


def test_ingest_refuses_non_run_folders_before_touching_the_db(tmp_path: Path, db_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "manifest.json").write_text("{oops")
    with pytest.raises(RunFolderError, match="unreadable manifest"):
        ingest([tmp_path / "empty"], db_path)
    with pytest.raises(RunFolderError, match="no such run folder"):
        ingest([tmp_path / "nowhere"], db_path)
    assert not db_path.exists()


def test_run_folder_from_a_newer_crux_lab_is_refused(tmp_path: Path, db_path: Path, result: DebateResult) -> None:
    run_dir = write_run(result, tmp_path)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["migrations"].append("m999_future")
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SchemaTooNew, match="newer crux_lab"):
        ingest([run_dir], db_path)


# -- metrics -------------------------------------------------------------------------------


def test_record_metrics_replaces_by_name_and_survives_reingest(tmp_path: Path, db_path: Path, result: DebateResult) -> None:
    run_dir = write_run(result, tmp_path)
    ingest([run_dir], db_path)
    assert record_metrics(db_path, result.run_id, {"crux_f1": 0.5, "common_ground_precision": 1.0}) == 2
    record_metrics(db_path, result.run_id, {"crux_f1": 0.75}, details={"crux_f1": {"tp": 3}})
    ingest([run_dir], db_path)
    rows = query("SELECT name, value, detail FROM metrics ORDER BY name", db_path).rows
    assert rows == [("common_ground_precision", 1.0, None), ("crux_f1", 0.75, '{"tp": 3}')]


def test_record_metrics_bad_input(tmp_path: Path, db_path: Path, result: DebateResult) -> None:
    ingest([write_run(result, tmp_path)], db_path)
    with pytest.raises(StoreError, match="not in the database"):
        record_metrics(db_path, "nope", {"x": 1.0})
    with pytest.raises(StoreError, match="must be numbers: x"):
        record_metrics(db_path, result.run_id, {"x": "high"})  # type: ignore[dict-item]
    assert counts(db_path)["metrics"] == 0


def test_query_errors_are_one_line(db_path: Path) -> None:
    connect(db_path).close()
    with pytest.raises(QueryError, match="no_such_table"):
        query("SELECT * FROM no_such_table", db_path)
    with pytest.raises(QueryError, match="read-only"):
        query("DELETE FROM runs", db_path)


def test_query_result_json_handles_lists_and_timestamps(tmp_path: Path, db_path: Path, result: DebateResult) -> None:
    ingest([write_run(result, tmp_path)], db_path)
    out = json.loads(query("SELECT persona_ids, ingested_at FROM runs", db_path).to_json())
    assert out[0]["persona_ids"] == ["alice", "bob"]
    assert isinstance(out[0]["ingested_at"], str) and "T" in out[0]["ingested_at"]
    frame = query("SELECT persona_id, count(*) AS n FROM turns GROUP BY 1 ORDER BY 1", db_path).df()
    assert list(frame.columns) == ["persona_id", "n"] and frame["n"].tolist() == [2, 1]


def test_empty_result_writes_no_empty_tables_and_ingests(tmp_path: Path, db_path: Path) -> None:
    from crux_lab.models import DebateConfig

    config = DebateConfig(topic="Nothing happened?", persona_ids=["a", "b"])
    empty = DebateResult(run_id=config.run_id(), config=config, engine="dialogue", backend="simulated")
    run_dir = write_run(empty, tmp_path)
    assert sorted(p.stem for p in (run_dir / "tables").iterdir()) == ["debates", "runs"]
    assert read_manifest(run_dir).tables["turns"] == 0
    ingest([run_dir], db_path)
    got = counts(db_path)
    assert got["runs"] == 1 and got["debates"] == 1 and got["turns"] == 0


def test_older_run_files_missing_a_column_still_ingest_by_name(
    tmp_path: Path, db_path: Path, make: Callable[..., DebateResult]
) -> None:
    runs = tmp_path / "runs"
    old = write_run(make(seed=1), runs)
    write_run(make(seed=2), runs)
    path = old / "tables" / "turns.parquet"
    pq.write_table(pq.read_table(path).drop_columns(["confidence", "steering_hint"]), path)
    ingest([runs], db_path)
    rows = query("SELECT run_id, count(confidence) FROM turns GROUP BY 1 ORDER BY 2", db_path).rows
    assert [n for _, n in rows] == [0, 3]  # the old run's missing column is NULL, the new one's is filled


def test_an_older_database_is_upgraded_in_place(
    tmp_path: Path, db_path: Path, result: DebateResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    import crux_lab.store.migrations as migrations

    all_migrations = list(migrations.MIGRATIONS)
    assert len(all_migrations) >= 2
    monkeypatch.setattr(migrations, "MIGRATIONS", all_migrations[:1])
    import crux_lab.store.db as db

    monkeypatch.setattr(db, "MIGRATIONS", all_migrations[:1])
    old = connect(db_path)
    assert applied_migrations(old) == [all_migrations[0].__name__]
    old.close()
    monkeypatch.setattr(migrations, "MIGRATIONS", all_migrations)
    monkeypatch.setattr(db, "MIGRATIONS", all_migrations)
    ingest([write_run(result, tmp_path)], db_path)  # opening read-write applies the rest
    assert query("SELECT regime, n_turns FROM run_overview", db_path).rows == [("polarized", 3)]
    assert applied_migrations_of(db_path) == [m.__name__ for m in all_migrations]


def applied_migrations_of(path: Path) -> list[str]:
    con = connect(path, read_only=True)
    try:
        return applied_migrations(con)
    finally:
        con.close()


def test_a_database_in_use_by_another_process_names_the_lock(db_path: Path) -> None:
    import subprocess
    import sys

    connect(db_path).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('ok', flush=True); time.sleep(60)", str(db_path)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ok"
        with pytest.raises(DatabaseUnavailable, match="in use by another process; DuckDB allows one writer"):
            connect(db_path)
    finally:
        holder.kill()
        holder.wait()


def test_result_metrics_travel_with_the_run_folder(tmp_path: Path, db_path: Path, result: DebateResult) -> None:
    scored = result.model_copy(update={"metrics": {"crux_recall": 0.5, "n_cruxes": 1.0}})
    run_dir = write_run(scored, tmp_path)
    ingest([run_dir], db_path)
    record_metrics(db_path, result.run_id, {"judge_score": 0.9, "crux_recall": 0.1})
    ingest([run_dir], db_path)  # the run's own crux_recall wins again; judge_score stays
    rows = query("SELECT name, value FROM metrics ORDER BY name", db_path).rows
    assert rows == [("crux_recall", 0.5), ("judge_score", 0.9), ("n_cruxes", 1.0)]


def test_unreadable_metrics_file_fails_the_whole_ingest(tmp_path: Path, db_path: Path, result: DebateResult) -> None:
    run_dir = write_run(result.model_copy(update={"metrics": {"x": 1.0}}), tmp_path)
    (run_dir / "metrics.json").write_text('{"x": "high"}')
    with pytest.raises(IngestError, match="metrics.json: unreadable metrics"):
        ingest([run_dir], db_path)
    assert counts(db_path)["runs"] == 0 and counts(db_path)["metrics"] == 0


def test_a_model_field_newer_than_the_schema_lands_in_extra(
    tmp_path: Path, db_path: Path, result: DebateResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    import crux_lab.store.runfiles as runfiles
    from crux_lab.store.tables import result_rows

    def with_new_field(*args: object, **kwargs: object) -> dict[str, list[dict[str, object]]]:
        rows = result_rows(*args, **kwargs)  # type: ignore[arg-type]
        for i, row in enumerate(rows["turns"]):
            row["future_field"] = f"v{i}"
        return rows

    monkeypatch.setattr(runfiles, "result_rows", with_new_field)
    ingest([write_run(result, tmp_path)], db_path)
    rows = query("SELECT extra->>'future_field' FROM turns ORDER BY ord", db_path).rows
    assert rows == [("v0",), ("v1",), ("v2",)]
