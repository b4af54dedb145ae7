"""Open the DuckDB database with clear errors, and bring its schema up to date.

DuckDB allows **one writing process** per database file (readers in other processes must
open it read-only, and cannot while a writer holds it). crux_lab therefore writes through
one step only: debates and sweep cells write their own run folders, and :func:`ingest`
loads them. A notebook holding a read-write connection blocks the CLI's ingest until that
connection is closed; the error says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from crux_lab.store._lazy import duckdb
from crux_lab.store.migrations import MIGRATIONS, migration_names
from crux_lab.store.paths import resolve_db_path

MIGRATIONS_TABLE = "_migrations"


class StoreError(Exception):
    """Base of the store's errors; the message says what to do."""


class DatabaseUnavailable(StoreError):
    """The database file cannot be opened (corrupt, unwritable, locked, missing)."""


class SchemaTooNew(StoreError):
    """The database (or a run folder) was written by a newer crux_lab."""


class DatabaseLocked(DatabaseUnavailable):
    """Another process holds the database (a writer, or readers while we want to write)."""


CORRUPT_MARKERS = (
    "not a valid duckdb database",
    "corrupt",
    "checksum",
    "could not read enough bytes",
    "invalid block",
    "serializ",
    "failed to read",
    "database file",
)


def is_corruption(text: str) -> bool:
    """True when a DuckDB error says the file itself is damaged (not a lock, not bad SQL).

    >>> is_corruption("Corrupt database file: computed checksum 1 does not match")
    True
    >>> is_corruption("Conflicting lock is held in /x (PID 3)")
    False
    """
    low = text.lower()
    return any(marker in low for marker in CORRUPT_MARKERS)


def corrupt_message(path: Path | str, detail: str) -> str:
    """The one-line error for a damaged database file, with the two fixes."""
    first = detail.strip().splitlines()[0][:160] if detail.strip() else "unreadable"
    return (
        f"{path} is damaged or not a DuckDB database ({first}). Fix: restore it from a backup, "
        f"or move it aside (mv {path} {path}.damaged) and rebuild it from the run folders "
        f"with `crux-lab db ingest` (every run is kept in its run folder), or use another "
        f"file with --db / CRUX_LAB_DB."
    )


def _describe_open_error(path: Path, exc: Exception) -> str:
    text = str(exc)
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    if is_lock_error(exc):
        return (
            f"{path} is in use by another process; DuckDB allows one writer at a time. "
            f"Close the other program (a notebook or another crux-lab command holding the "
            f"database) and retry. ({first})"
        )
    if "version" in text.lower() and "storage" in text.lower():
        return f"{path} was written by a newer DuckDB than this one; upgrade duckdb. ({first})"
    if is_corruption(text):
        return corrupt_message(path, text)
    return f"cannot open the database {path}: {first}. Pass a writable path with --db / CRUX_LAB_DB."


def is_lock_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "conflicting lock" in text or "could not set lock" in text


def _check_path(path: Path, read_only: bool) -> None:
    if path.is_dir():
        raise DatabaseUnavailable(
            f"{path} is a directory, not a database file. Pass a file path with --db / CRUX_LAB_DB."
        )
    if read_only:
        if not path.exists():
            raise DatabaseUnavailable(
                f"no database at {path} yet. Run a debate or `crux-lab db ingest RUN_DIR` first, "
                f"or pass another path with --db / CRUX_LAB_DB."
            )
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatabaseUnavailable(
            f"cannot create the folder for the database {path} ({exc.strerror or exc}). "
            f"Pass a writable path with --db / CRUX_LAB_DB."
        ) from None


def connect(
    db: str | Path | None = None, *, read_only: bool = False, migrate_schema: bool = True
) -> duckdb.DuckDBPyConnection:
    """Open the database (default: :func:`~crux_lab.store.paths.default_db_path`).

    A read-write connection is migrated to the current schema. Any database holding a
    migration this crux_lab does not know raises :class:`SchemaTooNew`, read-only or not.
    """
    path = resolve_db_path(db)
    _check_path(path, read_only)
    try:
        con = duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as exc:
        error = DatabaseLocked if is_lock_error(exc) else DatabaseUnavailable
        raise error(_describe_open_error(path, exc)) from None
    try:
        if read_only or not migrate_schema:
            check_schema(con, path)
        else:
            migrate(con, path)
    except duckdb.Error as exc:  # the file opened, but its catalog or a block is damaged
        con.close()
        raise DatabaseUnavailable(_describe_open_error(path, exc)) from None
    except BaseException:
        con.close()
        raise
    return con


@contextmanager
def open_db(
    db: str | Path | None = None, *, read_only: bool = False
) -> Iterator[duckdb.DuckDBPyConnection]:
    """``with open_db(path) as con:`` a migrated connection, closed afterwards."""
    con = connect(db, read_only=read_only)
    try:
        yield con
    finally:
        con.close()


def applied_migrations(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Names recorded in ``_migrations`` (empty for a fresh database)."""
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [MIGRATIONS_TABLE]
    ).fetchone()
    if not exists or not exists[0]:
        return []
    rows = con.execute(f"SELECT name FROM {MIGRATIONS_TABLE} ORDER BY applied_at, name").fetchall()
    return [str(r[0]) for r in rows]


def check_schema(con: duckdb.DuckDBPyConnection, path: Path | str = "the database") -> list[str]:
    """Raise :class:`SchemaTooNew` when the database knows migrations we do not."""
    applied = applied_migrations(con)
    unknown = [name for name in applied if name not in set(migration_names())]
    if unknown:
        raise SchemaTooNew(
            f"{path} was created by a newer crux_lab (schema migrations unknown to this "
            f"version: {', '.join(unknown)}); upgrade crux_lab (git pull && make demo, or "
            f"pip install -U crux_lab), or pass another database with --db / CRUX_LAB_DB."
        )
    return applied


def migrate(con: duckdb.DuckDBPyConnection, path: Path | str = "the database") -> list[str]:
    """Apply the pending migrations in order; returns the names applied now."""
    applied = set(check_schema(con, path))
    con.execute(
        f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} "
        "(name VARCHAR PRIMARY KEY, applied_at TIMESTAMP DEFAULT current_timestamp)"
    )
    done: list[str] = []
    for fn in MIGRATIONS:
        if fn.__name__ in applied:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            fn(con)
            con.execute(f"INSERT INTO {MIGRATIONS_TABLE} (name) VALUES (?)", [fn.__name__])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        done.append(fn.__name__)
    return done
