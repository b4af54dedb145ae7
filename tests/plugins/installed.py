"""Install a plug-in package for one test, the way pip would: its modules and a ``.dist-info``
folder with its ``entry_points.txt`` on ``sys.path``. The registries read it through
:mod:`importlib.metadata` like any installed package; afterwards they are put back as they
were (entries, problems and the plug-in's modules)."""

from __future__ import annotations

import importlib
import shutil
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from crux_lab.analysis.metric_registry import METRICS
from crux_lab.backends import BACKENDS
from crux_lab.cli import COMMANDS
from crux_lab.engines import ENGINES
from crux_lab.registry import Registry

REGISTRIES: tuple[Registry[Any], ...] = (ENGINES, BACKENDS, METRICS, COMMANDS)


def write_dist(site: Path, package: str, entry_points: Mapping[str, Mapping[str, str]]) -> None:
    """A ``.dist-info`` folder for ``package`` with these entry points (group -> name -> value)."""
    info = site / f"{package.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1.0\n")
    lines = []
    for group, table in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {value}" for name, value in table.items()]
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines))


@contextmanager
def installed(
    site: Path,
    package: str,
    entry_points: Mapping[str, Mapping[str, str]],
    modules: Mapping[str, str] | None = None,
    source: Path | None = None,
) -> Iterator[Path]:
    """``package`` installed into ``site`` for the duration: ``modules`` (dotted name -> code)
    are written there, or the package folders under ``source`` are copied."""
    site.mkdir(parents=True, exist_ok=True)
    top: set[str] = set()
    for dotted, code in (modules or {}).items():
        path = site.joinpath(*dotted.split(".")).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code)
        top.add(dotted.split(".")[0])
    if source is not None:
        for folder in source.iterdir():
            if (folder / "__init__.py").is_file():
                shutil.copytree(folder, site / folder.name)
                top.add(folder.name)
    write_dist(site, package, entry_points)
    saved = [(r, dict(r.entries), dict(r._origin), set(r._sources), list(r.problems), r._loaded) for r in REGISTRIES]
    for registry in REGISTRIES:
        registry.load()  # crux_lab's own first, as in a fresh process
        registry.reload()
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        yield site
    finally:
        sys.path.remove(str(site))
        for name in [m for m in sys.modules if m.split(".")[0] in top]:
            del sys.modules[name]
        for registry, entries, origin, sources, problems, loaded in saved:
            registry.entries.clear()
            registry.entries.update(entries)
            registry._origin = origin
            registry._sources = sources
            registry.reload()
            registry.problems[:] = problems
            registry._loaded = loaded
