"""Console helpers shared by the ``crux-lab`` command and its sub-apps.

The two consoles, :func:`fail` (one-line error, exit code) and :func:`note`, and the runs-folder
check. A leaf under every CLI module, so a sub-app never imports :mod:`crux_lab.cli` (which
mounts it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from crux_lab.scrub import scrub
from crux_lab.store import default_runs_dir

__all__ = ["check_runs_dir", "err_console", "fail", "note", "out_console"]

out_console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: message`` on stderr and exit (2 = bad input, 1 = the run failed)."""
    err_console.print(f"[bold red]error:[/] {escape(scrub(message))}")
    raise typer.Exit(code)


def note(message: str) -> None:
    err_console.print(scrub(message))


def check_runs_dir(runs_dir: Path | None) -> Path:
    """The runs folder to write to (``runs_dir`` or the default), created and writable."""
    # Lazy: the store loads DuckDB, which `crux-lab --help` does not need.

    folder = runs_dir or default_runs_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot create the runs folder {folder} ({exc.strerror or exc}); pass a writable --runs-dir or set CRUX_LAB_RUNS.")
    if not os.access(folder, os.W_OK):
        fail(f"the runs folder {folder} is not writable; pass a writable --runs-dir or set CRUX_LAB_RUNS.")
    return folder
