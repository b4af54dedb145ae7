"""Where the database and the run folders live by default.

The database is ``data/crux_lab.duckdb`` and run folders go under ``runs/``, both relative to
the project checkout this package lives in (so notebooks in ``notebooks/`` and the CLI at the
repository root share one database), else relative to the current directory.
``$CRUX_LAB_DB`` and ``$CRUX_LAB_RUNS`` override them; the CLI's ``--db`` overrides both.
"""

from __future__ import annotations

import os
from pathlib import Path

DB_ENV = "CRUX_LAB_DB"
RUNS_ENV = "CRUX_LAB_RUNS"


def project_root() -> Path:
    """The checkout holding this package (it has a pyproject.toml), else the current directory."""
    repo = Path(__file__).resolve().parents[2]
    if (repo / "pyproject.toml").is_file() and (repo / "crux_lab").is_dir():
        return repo
    return Path.cwd()


def default_db_path() -> Path:
    """``$CRUX_LAB_DB``, else ``<project>/data/crux_lab.duckdb``."""
    env = os.environ.get(DB_ENV)
    if env:
        return Path(env).expanduser()
    return project_root() / "data" / "crux_lab.duckdb"


def default_runs_dir() -> Path:
    """``$CRUX_LAB_RUNS``, else ``<project>/runs`` (git-ignored)."""
    env = os.environ.get(RUNS_ENV)
    if env:
        return Path(env).expanduser()
    return project_root() / "runs"


def resolve_db_path(db: str | Path | None) -> Path:
    """An explicit path wins; ``None`` means the default.

    >>> str(resolve_db_path("/tmp/x.duckdb"))
    '/tmp/x.duckdb'
    """
    return Path(db).expanduser() if db else default_db_path()
