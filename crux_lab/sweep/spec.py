"""Sweep definitions: ``experiments/<name>.yaml`` -> a list of cells.

A sweep file holds base parameters, a grid, seeds (repeats), the notebook to run and the
executor::

    name: demo
    notebook: notebooks/01_debate.ipynb
    executor: local          # local | dask | dask://host:port
    workers: 2
    base:
      personas: [michael-saylor, arthur-hayes]
      backend: simulated
      max_turns: 12
    grid:
      engine: [dialogue, dcg]
      topic: ["Bitcoin is a good store of value", "..."]
    seeds: [0, 1]            # or: repeats: 2  (seeds 0..repeats-1)
    kernel_start_s: 120      # a kernel not answering by then is killed and started once more

Each cell is base + one grid combination + one seed. Its ``run_id`` is the hash of its
parameters and seed (the same hash as :meth:`crux_lab.models.DebateConfig.run_id` when the
parameters describe a debate), so a rerun skips what is done.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from crux_lab.limits import INT64_MAX, BoundsError, check_numbers, check_ranges
from crux_lab.models.config import MAX_TURNS, DebateConfig

MAX_WORKERS = 256
MAX_REPEATS = 10_000
MAX_TIMEOUT_S = 7 * 24 * 3600.0
# A kernel that has not answered within this many seconds is killed and started once more
# (then the cell fails naming its stderr). Generous: two cold kernels on a loaded 2-core
# machine answered in 6 s; papermill's own default is 60 s.
KERNEL_START_S = 120.0
MAX_KERNEL_START_S = 3600.0

TOP_KEYS = {
    "name": "a short name (letters, digits, - or _)",
    "notebook": "a path to a .ipynb with a cell tagged 'parameters'",
    "executor": "local, dask, or dask://host:port",
    "workers": f"a whole number from 1 to {MAX_WORKERS}",
    "base": "a mapping of parameter names to values",
    "grid": "a mapping of parameter names to lists of values",
    "seeds": f"a list of whole numbers from 0 to {2**63 - 1}",
    "repeats": f"a whole number from 1 to {MAX_REPEATS} (seeds 0..repeats-1)",
    "description": "free text",
    "timeout_s": f"seconds per cell (a number > 0, at most {MAX_TIMEOUT_S:.0f})",
    "kernel_start_s": f"seconds a cell's kernel may take to start (a number from 1 to {MAX_KERNEL_START_S:.0f})",
}
DEBATE_KEYS = {
    "topic", "personas", "engine", "backend", "seed", "max_turns", "sim", "backend_options", "params",
    "deck", "base_url", "structured",
}


class SweepSpecError(ValueError):
    """A malformed sweep file: names the file, the line, the key and the expected form."""

    def __init__(self, path: Path, line: int | None, key: str, expected: str, got: str = "") -> None:
        where = f"{path}:{line}" if line else str(path)
        msg = f"{where}: key '{key}' — expected {expected}"
        if got:
            msg += f", got {got}"
        super().__init__(msg)
        self.path, self.line, self.key, self.expected = path, line, key, expected


@dataclass(frozen=True)
class Cell:
    """One run of the sweep (runtime structure)."""

    run_id: str
    params: dict[str, Any]
    seed: int


@dataclass
class SweepSpec:
    name: str
    path: Path
    notebook: Path
    executor: str = "local"
    workers: int = 1
    base: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)
    seeds: list[int] = field(default_factory=lambda: [0])
    timeout_s: float = 600.0
    description: str = ""
    kernel_start_s: float = KERNEL_START_S

    @property
    def out_dir(self) -> Path:
        """``experiments/<name>/`` beside the YAML file."""
        return self.path.parent / self.name

    def cells(self, defaults: Mapping[str, Any] | None = None) -> list[Cell]:
        """Every cell: base + one grid combination + one seed. ``defaults`` (the notebook's
        declared parameter values) fill the debate parameters the sweep leaves out, so each
        cell's run_id is the hash of what the notebook actually runs.

        >>> spec = SweepSpec(name="s", path=Path("s.yaml"), notebook=Path("n.ipynb"),
        ...                  base={"topic": "t", "personas": ["a", "b"]}, grid={"engine": ["dcg", "blitz"]}, seeds=[0, 1])
        >>> [(c.params["engine"], c.seed) for c in spec.cells()]
        [('dcg', 0), ('dcg', 1), ('blitz', 0), ('blitz', 1)]
        >>> spec.cells({"max_turns": 8})[0].params["max_turns"], spec.cells()[0].run_id != spec.cells({"max_turns": 8})[0].run_id
        (8, True)
        """
        keys = sorted(self.grid)
        combos = itertools.product(*(self.grid[k] for k in keys)) if keys else [()]
        filled = {k: v for k, v in (defaults or {}).items() if k in DEBATE_KEYS and k != "seed"}
        out: list[Cell] = []
        for combo in combos:
            for seed in self.seeds:
                params = {**filled, **self.base, **dict(zip(keys, combo, strict=True)), "seed": seed}
                out.append(Cell(run_id=cell_run_id(params), params=params, seed=seed))
        return out


def config_from_params(params: dict[str, Any]) -> DebateConfig:
    """The DebateConfig a debate notebook builds from its parameters.

    >>> c = config_from_params({"topic": "t", "personas": ["a", "b"], "engine": "dcg", "seed": 3})
    >>> (c.engine, c.seed, c.persona_ids)
    ('dcg', 3, ['a', 'b'])
    """
    personas = params.get("personas", [])
    if isinstance(personas, str):
        personas = [p.strip() for p in personas.split(",") if p.strip()]
    return DebateConfig(
        topic=params["topic"],
        persona_ids=list(personas),
        engine=params.get("engine", "dialogue"),
        backend=params.get("backend", "simulated"),
        seed=int(params.get("seed", 0)),
        max_turns=int(params.get("max_turns", 30)),
        # The backend's own options; `sim` is the simulator's knobs, as sweeps have named them.
        backend_options=dict(params.get("backend_options") or params.get("sim") or {}),
        params=dict(params.get("params") or {}),
        deck=params.get("deck") or None,
        base_url=params.get("base_url") or None,
        structured=params.get("structured") or None,
    )


def cell_run_id(params: dict[str, Any]) -> str:
    """Hash of a cell's parameters and seed; equal to the debate's run_id for debate cells.

    >>> p = {"topic": "t", "personas": ["a", "b"], "seed": 1}
    >>> cell_run_id(p) == config_from_params(p).run_id()
    True
    """
    if set(params) <= DEBATE_KEYS and "topic" in params:
        try:
            return config_from_params(params).run_id()
        except (ValidationError, TypeError, ValueError):
            pass
    blob = json.dumps(params, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _line(node: yaml.Node | None) -> int | None:
    return node.start_mark.line + 1 if node is not None else None


def load_sweep(path: str | Path) -> SweepSpec:
    """Parse and validate a sweep file; every problem names the line, the key and the form."""
    path = Path(path)
    if not path.exists():
        raise SweepSpecError(path, None, "(file)", "an existing YAML file", "no such file")
    text = path.read_text(encoding="utf-8")
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise SweepSpecError(path, line, "(syntax)", "valid YAML", str(getattr(exc, "problem", exc))) from None
    if not isinstance(data, dict) or not isinstance(root, yaml.MappingNode):
        raise SweepSpecError(path, 1, "(top level)", "a mapping of keys: " + ", ".join(TOP_KEYS))
    nodes = {k.value: v for k, v in root.value}
    key_lines = {k.value: _line(k) for k, _ in root.value}

    def fail(key: str, got: Any = None) -> SweepSpecError:
        return SweepSpecError(path, _line(nodes.get(key)) or key_lines.get(key), key, TOP_KEYS.get(key, "a known key"), repr(got) if got is not None else "")

    for key in data:
        if key not in TOP_KEYS:
            raise SweepSpecError(path, key_lines.get(key), key, "one of " + ", ".join(TOP_KEYS), "an unknown key")
    for required in ("name", "notebook"):
        if required not in data:
            raise SweepSpecError(path, None, required, TOP_KEYS[required], "nothing (missing)")
    name = data["name"]
    if not isinstance(name, str) or not name.replace("-", "").replace("_", "").isalnum():
        raise fail("name", name)
    notebook = data["notebook"]
    if not isinstance(notebook, str) or not notebook.endswith(".ipynb"):
        raise fail("notebook", notebook)
    nb_path = Path(notebook)
    if not nb_path.is_absolute():
        # Relative to the repository root (the YAML's parent's parent), else to the YAML.
        candidates = [path.parent.parent / nb_path, path.parent / nb_path, Path.cwd() / nb_path]
        nb_path = next((c for c in candidates if c.exists()), candidates[0])
    executor = data.get("executor", "local")
    if not isinstance(executor, str) or not (executor in ("local", "dask") or executor.startswith("dask://")):
        raise fail("executor", executor)
    workers = data.get("workers", 1)
    if not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= MAX_WORKERS:
        raise fail("workers", workers)
    base = data.get("base", {}) or {}
    if not isinstance(base, dict):
        raise fail("base", base)
    grid = data.get("grid", {}) or {}
    if not isinstance(grid, dict):
        raise fail("grid", grid)
    grid_nodes = {k.value: v for k, v in nodes["grid"].value} if "grid" in nodes and isinstance(nodes["grid"], yaml.MappingNode) else {}
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SweepSpecError(path, _line(grid_nodes.get(key)), f"grid.{key}", "a non-empty list of values", repr(values))
    if "seeds" in data and "repeats" in data:
        raise SweepSpecError(path, key_lines.get("repeats"), "repeats", "either seeds or repeats, not both")
    if "repeats" in data:
        repeats = data["repeats"]
        if not isinstance(repeats, int) or isinstance(repeats, bool) or not 1 <= repeats <= MAX_REPEATS:
            raise fail("repeats", repeats)
        seeds = list(range(repeats))
    else:
        seeds = data.get("seeds", [0])
        if not isinstance(seeds, list) or not seeds or not all(
            isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= INT64_MAX for s in seeds
        ):
            raise fail("seeds", seeds)
    timeout = data.get("timeout_s", 600.0)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or not 0 < timeout <= MAX_TIMEOUT_S:
        raise fail("timeout_s", timeout)
    kernel_start = data.get("kernel_start_s", KERNEL_START_S)
    if not isinstance(kernel_start, int | float) or isinstance(kernel_start, bool) or not 1 <= kernel_start <= MAX_KERNEL_START_S:
        raise fail("kernel_start_s", kernel_start)
    _check_values(path, base, grid, key_lines, grid_nodes)
    return SweepSpec(
        name=name,
        path=path,
        notebook=nb_path,
        executor=executor,
        workers=workers,
        base=dict(base),
        grid={k: list(v) for k, v in grid.items()},
        seeds=[int(s) for s in seeds],
        timeout_s=float(timeout),
        description=str(data.get("description", "")),
        kernel_start_s=float(kernel_start),
    )


def _check_values(path: Path, base: dict[str, Any], grid: dict[str, list[Any]],
                  key_lines: dict[str, int | None], grid_nodes: dict[str, yaml.Node]) -> None:
    """Numbers fit the store (int64, finite), ``max_turns`` is within the debate's bounds, and
    every combination of engine ``params`` keeps ``<x>_min <= <x>_max``: checked when the file
    is loaded, before any cell runs."""
    values = {**{k: [v] for k, v in base.items()}, **grid}
    for key, options in values.items():
        line = _line(grid_nodes.get(key)) if key in grid else key_lines.get("base")
        where = f"grid.{key}" if key in grid else f"base.{key}"
        for option in options:
            try:
                check_numbers(option, where)
            except BoundsError as exc:
                raise SweepSpecError(path, line, where, "numbers that fit a 64-bit integer (finite floats)", str(exc)) from None
            if key == "max_turns" and not (isinstance(option, int) and not isinstance(option, bool) and 0 < option <= MAX_TURNS):
                raise SweepSpecError(path, line, where, f"a whole number of turns from 1 to {MAX_TURNS:,}", repr(option))
    for option in values.get("params", [{}]):
        if isinstance(option, dict):  # a grid's params replace the base's whole (see cells)
            try:
                check_ranges(option, "params")
            except BoundsError as exc:
                line = _line(grid_nodes.get("params")) if "params" in grid else key_lines.get("base")
                raise SweepSpecError(path, line, "params", "min <= max for every <x>_min / <x>_max pair", str(exc)) from None
