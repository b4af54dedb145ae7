"""The engine registry: ``available()`` lists engines, ``get(name)`` returns one.

An engine is one module that defines a class with the :class:`~crux_lab.engines.base.Engine`
shape and decorates it with :func:`register_engine`; the module is listed once in
``ENGINES.plugins`` below (imported on first lookup, in that order, which is the order of
``crux-lab engines``).
"""

from __future__ import annotations

from typing import Any

from crux_lab.engines.base import Engine, EngineConfigError
from crux_lab.registry import Registry, UnknownName

# Classes with the Engine shape (checked where they run: some declare `run` as an AsyncIterator).
ENGINES: Registry[type[Any]] = Registry(
    "engine",
    plugins=(
        "crux_lab.engines.dialogue",  # dialogue, dcg
        "crux_lab.engines.panel",
        "crux_lab.engines.crux_rooms",
        "crux_lab.engines.blitz",
        "crux_lab.engines.classical",
        "crux_lab.engines.graph",
        # Baselines: one call from the topic and the personas' contracts to crux cards.
        "crux_lab.engines.direct",  # direct, cot
        "crux_lab.engines.worldview",  # the worldview step alone
    ),
)

register_engine = ENGINES.register()
"""Class decorator: registers an engine class under its ``name``."""


def available() -> dict[str, str]:
    """Every engine, with a one-line description each."""
    return {name: cls().description for name, cls in ENGINES.items()}


def get(name: str) -> Engine:
    """The engine called ``name``; an unknown name gets an error listing the valid ones."""
    try:
        cls = ENGINES.get(name)
    except UnknownName as exc:
        raise EngineConfigError(f"unknown engine '{name}'. Valid engines: {', '.join(ENGINES.entries)}.") from exc
    engine: Engine = cls()
    return engine


__all__ = ["ENGINES", "Engine", "EngineConfigError", "available", "get", "register_engine"]
