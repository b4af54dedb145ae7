"""Read queries over the store (SQL in, columns and rows out)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from crux_lab.store._lazy import duckdb
from crux_lab.store.db import (
    DatabaseUnavailable,
    StoreError,
    applied_migrations,
    connect,
    corrupt_message,
    is_corruption,
)
from crux_lab.store.paths import resolve_db_path


class QueryError(StoreError):
    """The SQL did not run; the message carries DuckDB's first line."""


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r, strict=True)) for r in self.rows]

    def df(self) -> Any:
        """The rows as a pandas DataFrame (for notebooks)."""
        import pandas as pd

        return pd.DataFrame.from_records(self.rows, columns=self.columns)

    def to_json(self) -> str:
        """The rows as a JSON array of objects (dates as ISO text).

        >>> QueryResult(["a"], [(1,)]).to_json()
        '[{"a": 1}]'
        """
        return json.dumps(self.records(), default=_json_default, ensure_ascii=False)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return str(value)


def query(sql: str, db: str | Path | duckdb.DuckDBPyConnection | None = None, params: list[Any] | None = None) -> QueryResult:
    """Run one SQL statement. A path opens the database read-only (safe beside a writer's run folders)."""
    con = db if isinstance(db, duckdb.DuckDBPyConnection) else connect(db, read_only=True)
    try:
        try:
            cur = con.execute(sql, params or [])
            columns = [d[0] for d in cur.description] if cur.description else []
            rows = cur.fetchall() if cur.description else []
        except duckdb.Error as exc:
            if is_corruption(str(exc)):
                where = "the database" if isinstance(db, duckdb.DuckDBPyConnection) else resolve_db_path(db)
                raise DatabaseUnavailable(corrupt_message(where, str(exc))) from None
            raise QueryError(str(exc).strip().splitlines()[0]) from None
    finally:
        if con is not db:
            con.close()
    return QueryResult(columns, rows)


def table_counts(con: duckdb.DuckDBPyConnection, path: Path | str = "the database") -> dict[str, int]:
    """Row count of every table (views and the ``_migrations`` bookkeeping table excluded).

    A damaged block raises :class:`DatabaseUnavailable` naming ``path`` and the fix.
    """
    try:
        return _table_counts(con)
    except duckdb.Error as exc:
        if is_corruption(str(exc)):
            raise DatabaseUnavailable(corrupt_message(path, str(exc))) from None
        raise QueryError(str(exc).strip().splitlines()[0]) from None


def _table_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    names = [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = 'main' AND table_type = 'BASE TABLE' ORDER BY table_name"
        ).fetchall()
    ]
    out: dict[str, int] = {}
    for name in names:
        if name.startswith("_"):
            continue
        row = con.execute(f'SELECT count(*) FROM "{name}"').fetchone()
        out[name] = int(row[0]) if row else 0
    return out


def schema_version(con: duckdb.DuckDBPyConnection) -> str:
    """The last applied migration's name ('' for an empty database)."""
    applied = applied_migrations(con)
    return applied[-1] if applied else ""
