"""DuckDB and PyArrow, loaded on first use.

Importing :mod:`crux_lab.store` (its paths, errors and run-folder readers) must stay cheap:
``crux-lab --help`` and every CLI sub-app import it at start. DuckDB and PyArrow are loaded the
first time one of their attributes is read (a connection opened, a table written, an error
class checked).
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import TYPE_CHECKING


def _lazy(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa
else:
    duckdb = _lazy("duckdb")
    pa = _lazy("pyarrow")

__all__ = ["duckdb", "pa"]
