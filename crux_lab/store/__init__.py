"""The store: run folders on disk, one DuckDB database, and the migrations between versions.

Typical use::

    from crux_lab.store import write_run, ingest, query, record_metrics
    run_dir = write_run(result)                 # runs/<run_id>/ (atomic)
    ingest([run_dir])                           # data/crux_lab.duckdb (or $CRUX_LAB_DB)
    query("SELECT regime, count(*) FROM debates GROUP BY regime").rows

DuckDB allows one writing process per database file: write run folders freely (in
parallel), and ingest from one process.
"""

from crux_lab.store.db import (
    DatabaseUnavailable,
    SchemaTooNew,
    StoreError,
    applied_migrations,
    check_schema,
    connect,
    migrate,
    open_db,
)
from crux_lab.store.ingest import IngestError, IngestReport, ingest, record_metrics
from crux_lab.store.migrations import MIGRATIONS, migration, migration_names
from crux_lab.store.paths import (
    DB_ENV,
    RUNS_ENV,
    default_db_path,
    default_runs_dir,
    resolve_db_path,
)
from crux_lab.store.queries import QueryError, QueryResult, query, schema_version, table_counts
from crux_lab.store.runfiles import (
    RunFolderError,
    RunManifest,
    find_run_dirs,
    load_result,
    read_events,
    read_manifest,
    render_transcript,
    write_run,
)
from crux_lab.store.tables import RUN_TABLES, result_rows

__all__ = [
    "DB_ENV",
    "MIGRATIONS",
    "RUNS_ENV",
    "RUN_TABLES",
    "DatabaseUnavailable",
    "IngestError",
    "IngestReport",
    "QueryError",
    "QueryResult",
    "RunFolderError",
    "RunManifest",
    "SchemaTooNew",
    "StoreError",
    "applied_migrations",
    "check_schema",
    "connect",
    "default_db_path",
    "default_runs_dir",
    "find_run_dirs",
    "ingest",
    "load_result",
    "migrate",
    "migration",
    "migration_names",
    "open_db",
    "query",
    "read_events",
    "read_manifest",
    "record_metrics",
    "render_transcript",
    "resolve_db_path",
    "result_rows",
    "schema_version",
    "table_counts",
    "write_run",
]
