"""Sweeps: ``experiments/<name>.yaml`` -> grid cells -> papermill runs -> run folders -> DuckDB.

    from crux_lab.sweep import load_sweep, run_sweep
    spec = load_sweep("experiments/demo.yaml")
    report = run_sweep(spec, ingest=lambda run_dir: ingest([run_dir], con))

The CLI is ``crux-lab sweep experiments/<name>.yaml [--workers N] [--executor local|dask|dask://host:port]``.
"""

from crux_lab.sweep.runner import (
    CellOutcome,
    Manifest,
    NotebookParameterError,
    SweepReport,
    check_parameters,
    notebook_defaults,
    notebook_parameters,
    run_sweep,
    summarize_timings,
)
from crux_lab.sweep.spec import (
    Cell,
    SweepSpec,
    SweepSpecError,
    cell_run_id,
    config_from_params,
    load_sweep,
)

__all__ = [
    "Cell",
    "CellOutcome",
    "Manifest",
    "NotebookParameterError",
    "SweepReport",
    "SweepSpec",
    "SweepSpecError",
    "cell_run_id",
    "check_parameters",
    "config_from_params",
    "load_sweep",
    "notebook_defaults",
    "notebook_parameters",
    "run_sweep",
    "summarize_timings",
]
