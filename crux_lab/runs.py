"""One debate of an evaluation: reused when its run folder is complete, run and written
otherwise; a debate that stops early (the server failed, Ctrl-C) stops the evaluation. A
debate that a guard ended early (the model could not play its personas) is finished: it is
written, scored on what it found, and reused by a rerun.

Shared by ``crux-lab eval recovery`` and ``crux-lab eval polis``. The run folders are the
truth, as in sweeps: a rerun of the same command skips every finished debate.

:func:`save_runs` is the one way a finished debate is kept: its run folder written, then
ingested into DuckDB (one writer, one transaction). The CLI's ``debate``, the workbench, the
live console, ``compare`` and recovery all save through it; :func:`run_and_save` runs a
debate to the end first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crux_lab.analysis.metrics import GUARD_ENDED
from crux_lab.llm import LLMError
from crux_lab.models.config import DebateConfig
from crux_lab.models.result import DebateResult
from crux_lab.runner import run_debate
from crux_lab.store import StoreError, connect, load_result, resolve_db_path, write_run
from crux_lab.store import ingest as ingest_runs
from crux_lab.store.db import DatabaseLocked
from crux_lab.store.runfiles import run_folder_status

__all__ = [
    "DebateStopped", "Finished", "Saved", "cassette_path", "ended_by_guard", "run_and_save", "run_or_resume", "save_runs",
]


class DebateStopped(RuntimeError):
    """A debate ended before its end: ``error`` says why (a failed backend, a cassette miss), or
    ``None`` when Ctrl-C stopped it. Nothing of it is written; finished debates stay."""

    def __init__(self, label: str, error: str | None) -> None:
        why = error if error is not None else "interrupted"
        super().__init__(f"{label}: {why}")
        self.label = label
        self.error = error

    @property
    def interrupted(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class Finished:
    """A finished debate and where its run folder is; ``resumed``: read back, not run."""

    result: DebateResult
    run_dir: Path
    resumed: bool


def cassette_path(cassettes: str | Path | None, *parts: object) -> Path | None:
    """The cassette of one debate in a cassettes folder, named by its parts.

    >>> str(cassette_path("tapes", "scn000", "dcg", "s1"))
    'tapes/scn000-dcg-s1.jsonl'
    >>> cassette_path(None, "x") is None
    True
    """
    if cassettes is None:
        return None
    return Path(cassettes) / ("-".join(str(p) for p in parts) + ".jsonl")


def run_sync(coro: Coroutine[Any, Any, DebateResult]) -> DebateResult:
    """Run a coroutine to the end, also from inside a running event loop (a Jupyter kernel),
    where ``asyncio.run`` is refused: then it runs in a worker thread with its own loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def run_or_resume(
    config: DebateConfig,
    runs_dir: str | Path,
    *,
    label: str,
    sweep_id: str,
    cassette: Path | None = None,
) -> Finished:
    """The finished debate of ``config``: read from ``runs_dir/<run_id>/`` when that folder is
    complete and valid, else run (recording into or replaying ``cassette``) and written there.

    Raises :class:`DebateStopped` (named by ``label``) when the debate did not finish or its
    backend could not start; an engine's crash propagates as it is.
    """
    folder = Path(runs_dir)
    run_dir = folder / config.run_id()
    if is_finished(run_dir):
        return Finished(load_result(run_dir), run_dir, True)
    if cassette is not None:
        cassette.parent.mkdir(parents=True, exist_ok=True)
    try:
        result = run_sync(run_debate(config, cassette=cassette))
    except LLMError as exc:  # the backend could not even start: a missing cassette, no key
        raise DebateStopped(label, str(exc)) from None
    if not result.complete and not ended_by_guard(result):
        raise DebateStopped(label, result.error)
    return Finished(result, write_run(result, folder, sweep_id=sweep_id), False)


def is_finished(run_dir: str | Path) -> bool:
    """Whether ``run_dir`` holds a finished debate: complete and valid, or ended early by a
    guard with its named reason (a rerun would only end the same way)."""
    status = run_folder_status(run_dir)
    return status is None or (status.startswith("incomplete") and ended_by_guard(load_result(run_dir)))


def ended_by_guard(result: DebateResult) -> bool:
    """True when a guard ended the debate early (its documented end, with a named reason)."""
    return not result.complete and (result.error or "").startswith(GUARD_ENDED)


@dataclass
class Saved:
    """Where finished debates went: their run folders, and the database when they were
    ingested (``db_path`` None otherwise). ``problem``: the store's one line on why they were
    not ingested (``crux-lab db ingest`` retries); ``busy``: another process held the database
    (they wait in their folders)."""

    run_dirs: list[Path]
    db_path: Path | None = None
    problem: str | None = None
    busy: bool = False


def save_runs(
    results: Sequence[DebateResult],
    runs_dir: str | Path | None = None,
    *,
    db: str | Path | None = None,
    ingest: bool = True,
    sweep_id: str | None = None,
    also: Callable[[Any], object] | None = None,
) -> Saved:
    """Write each result's run folder under ``runs_dir`` (default: the runs folder), then,
    with ``ingest``, load them into the database ``db`` in one transaction; ``also(con)``
    runs on the same open connection after the ingest (e.g. recording evaluation metrics).

    A folder that cannot be written raises ``OSError`` (nothing is ingested); a database that
    refuses them is reported in :attr:`Saved.problem`, the folders kept.
    """

    dirs = [write_run(r, runs_dir, sweep_id=sweep_id) for r in results]
    if not ingest or not dirs:
        return Saved(dirs)
    path = resolve_db_path(db)
    try:
        con = connect(path)
        try:
            ingest_runs(dirs, con)
            if also is not None:
                also(con)
        finally:
            con.close()
    except DatabaseLocked as exc:
        return Saved(dirs, problem=str(exc), busy=True)
    except StoreError as exc:
        return Saved(dirs, problem=str(exc))
    return Saved(dirs, path)


def run_and_save(
    config: DebateConfig,
    runs_dir: str | Path | None = None,
    *,
    db: str | Path | None = None,
    ingest: bool = True,
    sweep_id: str | None = None,
    save: bool = True,
) -> tuple[DebateResult, Saved | None]:
    """Run ``config`` to the end (also from inside a notebook's event loop), then save it
    with :func:`save_runs` (unless ``save`` is False)."""

    result = run_sync(run_debate(config))
    return result, (save_runs([result], runs_dir, db=db, ingest=ingest, sweep_id=sweep_id) if save else None)
