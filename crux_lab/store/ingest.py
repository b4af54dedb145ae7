"""Load run folders into DuckDB: one transaction, idempotent by run id.

Every run folder is validated first (:func:`~crux_lab.store.runfiles.validate_run`: manifest,
``result.json``, ``events.jsonl``, table row counts), so a truncated file is refused before
anything is written. ``ingest`` replaces every row of each run it loads (delete, then ``INSERT ... BY NAME``
from the runs' Parquet files, one statement per table for a batch of runs) inside a single
transaction: if any run folder is unreadable,
nothing of that call is left in the database. A run's own per-debate metrics (its
``metrics.json``) are loaded into ``metrics``; other ``metrics`` rows are written after ingest
by evaluation (:func:`record_metrics`) and survive a re-ingest.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from crux_lab.scrub import scrub_data
from crux_lab.store._lazy import duckdb
from crux_lab.store.db import (
    DatabaseUnavailable,
    SchemaTooNew,
    StoreError,
    connect,
    corrupt_message,
    is_corruption,
)
from crux_lab.store.migrations import LEGACY_OPTIONS_SQL, billed_sql, migration_names
from crux_lab.store.paths import resolve_db_path
from crux_lab.store.runfiles import (
    METRICS,
    RunFolderError,
    RunManifest,
    find_run_dirs,
    validate_run,
)
from crux_lab.store.tables import RUN_TABLES, to_arrow

DB: TypeAlias = "str | Path | duckdb.DuckDBPyConnection | None"


class IngestError(StoreError):
    """A run folder could not be loaded; nothing of the ingest call was kept."""


@dataclass
class IngestReport:
    run_ids: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    duplicates: list[Path] = field(default_factory=list)

    @property
    def total_rows(self) -> int:
        return sum(self.rows.values())


def _manifests(paths: Sequence[str | Path]) -> tuple[list[RunManifest], list[Path]]:
    known = set(migration_names())
    by_id: dict[str, RunManifest] = {}
    duplicates: list[Path] = []
    for run_dir in find_run_dirs(list(paths)):
        m = validate_run(run_dir)  # result.json, events.jsonl and tables checked before any write
        newer = [name for name in m.migrations if name not in known]
        if newer:
            raise SchemaTooNew(
                f"{run_dir} was written by a newer crux_lab (schema migrations {', '.join(newer)}); "
                f"upgrade crux_lab to ingest it."
            )
        if m.run_id in by_id:
            duplicates.append(by_id[m.run_id].run_dir)
        by_id[m.run_id] = m  # the last folder named wins
    return list(by_id.values()), duplicates


CHUNK = 256  # runs per batch of INSERTs (progress is reported per chunk)


def _bad_file(paths: Sequence[Path]) -> tuple[Path, str] | None:
    """The first Parquet file DuckDB cannot read, with its error (probed on a scratch connection)."""
    probe = duckdb.connect(":memory:")
    try:
        for path in paths:
            try:
                probe.execute("SELECT count(*) FROM read_parquet(?)", [str(path)]).fetchone()
            except duckdb.Error as exc:
                return path, str(exc).strip().splitlines()[0]
    finally:
        probe.close()
    return None


def _load_chunk(con: duckdb.DuckDBPyConnection, manifests: Sequence[RunManifest], report: IngestReport) -> None:
    """Replace the rows of these runs: one DELETE and one INSERT ... BY NAME per table."""
    ids = [m.run_id for m in manifests]
    for table in RUN_TABLES:
        con.execute(f'DELETE FROM "{table}" WHERE run_id IN (SELECT unnest(?::VARCHAR[]))', [ids])
    for table in RUN_TABLES:
        files = [m.table_path(table) for m in manifests if m.tables.get(table, 0) > 0]
        if not files:
            continue
        try:
            con.execute(
                f'INSERT INTO "{table}" BY NAME SELECT * FROM read_parquet(?::VARCHAR[], union_by_name = true) '
                "WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
                [[str(f) for f in files], ids],
            )
        except duckdb.Error as exc:
            found = _bad_file(files)
            where, why = found if found else (files[0].parent, str(exc).strip().splitlines()[0])
            raise IngestError(f"{where}: cannot load ({why}); rewrite or remove this run folder.") from None
        got = dict(
            con.execute(
                f'SELECT run_id, count(*) FROM "{table}" WHERE run_id IN (SELECT unnest(?::VARCHAR[])) GROUP BY run_id',
                [ids],
            ).fetchall()
        )
        for m in manifests:
            expected, inserted = m.tables.get(table, 0), int(got.get(m.run_id, 0))
            if inserted != expected:
                raise IngestError(
                    f"{m.table_path(table)}: holds {inserted} row(s) for run {m.run_id} but the manifest "
                    f"says {expected}; the folder is damaged: rewrite or remove it."
                )
            report.rows[table] = report.rows.get(table, 0) + inserted
    for table in ("debates", "llm_calls"):  # run folders written before the billed column
        con.execute(
            f'UPDATE "{table}" SET billed = {billed_sql()} '
            "WHERE billed IS NULL AND run_id IN (SELECT unnest(?::VARCHAR[]))",
            [ids],
        )
    con.execute(  # run folders written with the simulator's knobs in `sim`
        f"UPDATE runs SET backend_options = {LEGACY_OPTIONS_SQL} "
        "WHERE backend_options IS NULL AND sim IS NOT NULL AND run_id IN (SELECT unnest(?::VARCHAR[]))",
        [ids],
    )
    _load_run_metrics(con, manifests)
    con.executemany(
        "UPDATE runs SET run_dir = ?, ingested_at = current_timestamp WHERE run_id = ?",
        [[str(m.run_dir.resolve()), m.run_id] for m in manifests],
    )
    report.run_ids.extend(ids)


def _load_run_metrics(con: duckdb.DuckDBPyConnection, manifests: Sequence[RunManifest]) -> None:
    """The runs' own per-debate metrics (``metrics.json``) replace those names in ``metrics``;
    metrics recorded later under other names (evaluation) are kept."""
    rows: list[dict[str, Any]] = []
    for m in manifests:
        path = m.run_dir / METRICS
        if not path.is_file():
            continue
        try:
            values = json.loads(path.read_text(encoding="utf-8"))
            rows += [{"run_id": m.run_id, "name": str(k), "value": float(v)} for k, v in values.items()]
        except (json.JSONDecodeError, AttributeError, TypeError, ValueError) as exc:
            raise IngestError(f"{path}: unreadable metrics ({exc}); it must map names to numbers.") from None
    if not rows:
        return
    con.executemany("DELETE FROM metrics WHERE run_id = ? AND name = ?", [[r["run_id"], r["name"]] for r in rows])
    con.register("_run_metrics", to_arrow("metrics", rows).drop_columns(["recorded_at"]))
    con.execute("INSERT INTO metrics BY NAME SELECT * FROM _run_metrics")
    con.unregister("_run_metrics")


@contextmanager
def _writing(db: DB) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection inside one transaction: committed on success, rolled back on any error.

    A connection we opened is closed afterwards; one passed in belongs to the caller.
    """
    con = db if isinstance(db, duckdb.DuckDBPyConnection) else connect(db)
    where = "the database" if isinstance(db, duckdb.DuckDBPyConnection) else resolve_db_path(db)
    try:
        con.execute("BEGIN TRANSACTION")
        try:
            yield con
            con.execute("COMMIT")
        except BaseException as exc:
            with suppress(duckdb.Error):
                con.execute("ROLLBACK")
            if isinstance(exc, duckdb.Error):
                if is_corruption(str(exc)):
                    raise DatabaseUnavailable(corrupt_message(where, str(exc))) from None
                raise IngestError(f"{where}: {str(exc).strip().splitlines()[0]}; nothing was written.") from None
            raise
    finally:
        if con is not db:
            con.close()


def ingest(
    paths: Sequence[str | Path],
    db: DB = None,
    *,
    on_run: Callable[[Path], None] | None = None,
) -> IngestReport:
    """Load run folders (or folders containing them) into the database, all or nothing.

    ``db`` is a path (default :func:`~crux_lab.store.paths.default_db_path`) or an open
    read-write connection. Raises :class:`IngestError`, :class:`RunFolderError` or
    :class:`SchemaTooNew` with the offending folder named; the database is then unchanged.
    """
    manifests, duplicates = _manifests(paths)
    report = IngestReport(duplicates=duplicates)
    with _writing(db) as con:
        for i in range(0, len(manifests), CHUNK):
            chunk = manifests[i : i + CHUNK]
            _load_chunk(con, chunk, report)
            if on_run is not None:
                for m in chunk:
                    on_run(m.run_dir)
    return report


def record_metrics(
    db: DB,
    run_id: str,
    metrics: Mapping[str, float],
    details: Mapping[str, Any] | None = None,
) -> int:
    """Store ``metrics`` (name -> value) for an ingested run; re-recording a name replaces it.

    ``details`` optionally maps a metric name to JSON-able detail (per-crux scores, ...).
    Returns the number of rows written.
    """
    bad = [k for k, v in metrics.items() if not isinstance(v, int | float) or isinstance(v, bool)]
    if bad:
        raise StoreError(f"metric value(s) must be numbers: {', '.join(bad)}.")
    details = details or {}
    unknown = set(details) - set(metrics)
    if unknown:
        raise StoreError(f"details given for metrics not recorded: {', '.join(sorted(unknown))}.")
    rows = [
        {"run_id": run_id, "name": name, "value": None if math.isnan(v) else float(v),
         "detail": scrub_data(details.get(name))}
        for name, v in metrics.items()
    ]
    arrow_rows = to_arrow("metrics", rows).drop_columns(["recorded_at"])
    with _writing(db) as con:
        found = con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchone()
        if not found or not found[0]:
            raise StoreError(f"run {run_id} is not in the database; ingest its run folder first.")
        con.execute(
            "DELETE FROM metrics WHERE run_id = ? AND name IN (SELECT unnest(?))",
            [run_id, list(metrics)],
        )
        con.register("_new_metrics", arrow_rows)
        con.execute("INSERT INTO metrics BY NAME SELECT * FROM _new_metrics")
        con.unregister("_new_metrics")
    return len(rows)


__all__ = ["IngestError", "IngestReport", "RunFolderError", "ingest", "record_metrics"]
