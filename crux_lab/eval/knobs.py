"""Recovery runs on the offline backend: every engine on every planted scenario, scored by text
(:func:`run_recovery`), and the failure-knob sweep (:func:`knob_sweep`). The scoring is
:mod:`crux_lab.analysis.recovery`; this module runs the debates and saves them."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from crux_lab.analysis.metrics import record_recurrence
from crux_lab.analysis.recovery import (
    KNOBS,
    Encoder,
    RecoveryRun,
    RecoveryScore,
    record_recovery,
    score_recovery,
    summarize,
)
from crux_lab.analysis.scenarios import Scenario, generate_scenarios, use_library, write_library
from crux_lab.backends import OFFLINE
from crux_lab.embed import get_embedder
from crux_lab.engines import QUICK_EVAL
from crux_lab.llm.registry import option_names
from crux_lab.runner import run_debate
from crux_lab.runs import run_sync, save_runs
from crux_lab.store import StoreError

__all__ = ["evaluation_db", "knob_sweep", "prepare_evaluation_db", "run_recovery"]


def run_recovery(
    scenarios: Sequence[Scenario],
    engines: Sequence[str],
    library: str | Path,
    *,
    seed: int = 0,
    backend_options: Mapping[str, Any] | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    encoder: Encoder | None = None,
    runs_dir: str | Path | None = None,
    db: str | Path | None = None,
    store: bool = True,
    on_result: Callable[[RecoveryScore], None] | None = None,
) -> RecoveryRun:
    """Run every engine on every scenario (written to ``library``), score recovery, and, with
    ``store``, write the run folders, ingest them and record the recovery metrics.

    Debate ``k`` of a scenario runs with seed ``seed + scenario index``, so engines see the same
    seed on the same scenario. ``backend_options``: the offline backend's failure knobs.
    """
    started = time.perf_counter()
    write_library(scenarios, library)
    out = RecoveryRun()
    if encoder is None:
        encoder = get_embedder()
    params = params or {}
    with use_library(library):
        for k, scenario in enumerate(scenarios):
            for engine in engines:
                config = scenario.config(engine, seed=seed + k, backend_options=backend_options, **dict(params.get(engine, {})))
                try:
                    result = run_sync(run_debate(config))
                except Exception as exc:  # one engine's bug must not cost the others' runs
                    out.failures[f"{engine}/{scenario.id}"] = f"{type(exc).__name__}: {exc}"
                    continue
                score = score_recovery(result, scenario, encoder)
                out.results.append(result)
                out.scores.append(score)
                if on_result is not None:
                    on_result(score)
    if store and out.results:
        out.run_dirs, out.db_path = _store(out, runs_dir, db)
    out.wall_s = round(time.perf_counter() - started, 3)
    return out


def _store(out: RecoveryRun, runs_dir: str | Path | None, db: str | Path | None) -> tuple[list[Path], Path]:
    saved = save_runs(out.results, runs_dir, db=db, sweep_id="eval-recovery",
                      also=lambda con: record_recovery(con, out.scores))
    if saved.db_path is None:
        raise StoreError(saved.problem or "the runs were not ingested")
    return saved.run_dirs, saved.db_path


def _sweep_job(args: tuple[list[Scenario], list[str], str, int, dict[str, float]]) -> RecoveryRun:
    scenarios, engines, library, seed, knobs = args
    return run_recovery(scenarios, engines, library, seed=seed, backend_options=knobs, store=False)


def knob_sweep(
    scenarios: Sequence[Scenario],
    engines: Sequence[str],
    library: str | Path,
    levels: Mapping[str, Sequence[float]],
    *,
    seed: int = 0,
    db: str | Path | None = None,
    runs_dir: str | Path | None = None,
    store: bool = True,
    workers: int = 1,
) -> tuple[list[dict[str, Any]], list[RecoveryRun]]:
    """Recovery as each failure knob rises (the others at 0): one row per (knob, level,
    engine) with the :func:`summarize` columns. Level 0 is run once and shared by every knob.
    ``workers > 1`` runs the knob settings in parallel processes; storing happens here, in one
    process (the store's single-writer rule)."""
    known = option_names(OFFLINE)
    settings: list[dict[str, float]] = [{}]
    for knob, values in levels.items():
        if knob not in known:
            raise ValueError(f"unknown knob {knob!r}; known: {', '.join(known)}.")
        settings += [{knob: float(v)} for v in values if v > 0]
    jobs = [(list(scenarios), list(engines), str(Path(library) / f"setting{k}"), seed, s) for k, s in enumerate(settings)]
    if workers > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            runs = list(pool.map(_sweep_job, jobs))
    else:
        runs = [_sweep_job(j) for j in jobs]
    rows: list[dict[str, Any]] = []
    for setting, run in zip(settings, runs, strict=True):
        for knob in levels if not setting else list(setting):
            level = setting.get(knob, 0.0)
            for row in summarize(run.scores):
                rows.append({"knob": knob, "level": level, **row})
    if store:
        merged = RecoveryRun(
            scores=[s for r in runs for s in r.scores], results=[x for r in runs for x in r.results]
        )
        if merged.results:
            _store(merged, runs_dir, db)
    return rows, runs


def prepare_evaluation_db(
    db: str | Path,
    *,
    engines: Sequence[str],
    scenarios: int,
    seed: int = 0,
    knob_engines: Sequence[str] = (),
    knob_levels: Sequence[float] = (),
    workdir: str | Path | None = None,
) -> Path:
    """Run recovery (default knobs) for ``engines`` and a knob sweep for ``knob_engines`` on
    the same seeded scenarios, store runs, run metrics and recovery metrics in ``db``, and record
    cross-debate crux recurrence. Returns the database path."""
    planted = generate_scenarios(scenarios, seed=seed)
    with tempfile.TemporaryDirectory(prefix="crux-eval-") as tmp:
        work = Path(workdir) if workdir else Path(tmp)
        run = run_recovery(planted, engines, work / "lib", seed=seed, runs_dir=work / "runs", db=db)
        if run.failures and not run.results:
            key, err = next(iter(run.failures.items()))
            raise RuntimeError(f"every recovery run failed; first: {key}: {err}")
        if knob_engines and knob_levels:
            knob_sweep(planted, knob_engines, work / "lib", dict.fromkeys(KNOBS, knob_levels), seed=seed,
                       db=db, runs_dir=work / "runs")
        record_recurrence(db)
    return Path(db)


def evaluation_db(
    db: str | Path | None = None,
    *,
    engines: Sequence[str] = QUICK_EVAL,
    scenarios: int = 1,
    seed: int = 0,
    knob_engines: Sequence[str] = QUICK_EVAL[:1],
    knob_levels: Sequence[float] = (0.6,),
) -> Path:
    """The database notebook 07 reads: ``db`` when it names an existing file, else a fresh one
    (in a temp folder) filled by :func:`prepare_evaluation_db` with these small settings."""
    import tempfile

    if db and Path(db).is_file():
        return Path(db)
    path = Path(db) if db else Path(tempfile.mkdtemp(prefix="crux-eval-db-")) / "eval.duckdb"
    return prepare_evaluation_db(path, engines=engines, scenarios=scenarios, seed=seed,
                                 knob_engines=knob_engines, knob_levels=knob_levels)
