"""The engine registry: ``available()`` lists engines, ``get(name)`` returns one.

An engine is one module that defines a class with the :class:`~crux_lab.engines.base.Engine`
shape and decorates it with :func:`register_engine`, plus one line in the entry-point group
``crux_lab.engines`` of its package's ``pyproject.toml`` (crux_lab's own are in crux_lab's;
``examples/plugins/`` shows another package's). The modules are imported on first lookup; an
engine whose module fails to import, or whose name is taken, is left out with one line in
:func:`problems` (``crux-lab engines`` prints it).
"""

from __future__ import annotations

from typing import Any

from crux_lab.engines.base import Engine, EngineConfigError
from crux_lab.registry import Registry, UnknownName


# Classes with the Engine shape (checked where they run: some declare `run` as an AsyncIterator).
# `order` is only the listing order of crux_lab's own engines (`crux-lab engines`, the console's
# choices); an engine not in it is listed after them, in the order its package was loaded.
def _adopt(name: str, obj: object) -> type[Any]:
    if not isinstance(obj, type) or getattr(obj, "name", None) != name:
        raise TypeError(f"is not an engine class whose `name` is {name!r}")
    return obj


ENGINES: Registry[type[Any]] = Registry(
    "engine",
    group="crux_lab.engines",
    adopt=_adopt,
    order=(
        "dialogue", "dcg", "panel", "crux_rooms", "blitz", "classical", "graph",
        # Baselines: one call from the topic and the personas' contracts to crux cards.
        "direct", "cot",
        # The worldview step alone (what panel and crux_rooms run before their debate).
        "worldview",
    ),
)

# The order compare runs crux_lab's own engines in (and shows them): the blackboard engines,
# then the dialogue, crux-room and one-call families; other engines follow in listing order.
COMPARE_ORDER: tuple[str, ...] = ("blitz", "classical", "graph", "dialogue", "dcg", "panel", "crux_rooms", "direct", "cot", "worldview")

# The quick pair the evaluations default to (notebook 07's small database): a blackboard engine
# (the first also takes the failure-knob sweep) and a dispute-graph one.
QUICK_EVAL: tuple[str, ...] = ("blitz", "dcg")

register_engine = ENGINES.register()
"""Class decorator: registers an engine class under its ``name``."""


def available() -> dict[str, str]:
    """Every engine, with a one-line description each."""
    return {name: cls().description for name, cls in ENGINES.items()}


def registered() -> list[str]:
    """The registered engines' names, in listing order."""
    return ENGINES.names()


def problems() -> list[str]:
    """One line per engine plug-in that was left out (failed to import, or a name clash)."""
    ENGINES.load()
    return list(ENGINES.problems)


def get(name: str) -> Engine:
    """The engine called ``name``; an unknown name gets an error listing the valid ones."""
    try:
        cls = ENGINES.get(name)
    except UnknownName as exc:
        raise EngineConfigError(f"unknown engine '{name}'. Valid engines: {', '.join(ENGINES.entries)}.") from exc
    engine: Engine = cls()
    return engine


__all__ = ["COMPARE_ORDER", "ENGINES", "QUICK_EVAL", "Engine", "EngineConfigError", "available", "get", "problems", "register_engine", "registered"]
