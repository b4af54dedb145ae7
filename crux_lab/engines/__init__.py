"""The engine registry: ``available()`` lists engines, ``get(name)`` returns one."""

from __future__ import annotations

import importlib

from crux_lab.engines.base import Engine, EngineConfigError

# name -> "module:Class". Modules are imported on first use.
_REGISTRY: dict[str, str] = {
    "dialogue": "crux_lab.engines.dialogue:DialogueEngine",
    "dcg": "crux_lab.engines.dialogue:DCGEngine",
    "panel": "crux_lab.engines.panel:PanelEngine",
    "crux_rooms": "crux_lab.engines.crux_rooms:CruxRoomsEngine",
    "blitz": "crux_lab.engines.blitz:BlitzEngine",
    "classical": "crux_lab.engines.classical:ClassicalEngine",
    "graph": "crux_lab.engines.graph:GraphEngine",
    # Baselines: one call from the topic and the personas' contracts to crux cards.
    "direct": "crux_lab.engines.direct:DirectEngine",
    "cot": "crux_lab.engines.direct:CotEngine",
}


def _load(name: str) -> Engine | None:
    module_name, _, cls_name = _REGISTRY[name].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None  # not built yet
        raise
    engine: Engine = getattr(module, cls_name)()
    return engine


def available() -> dict[str, str]:
    """Engines that are installed, with a one-line description each."""
    out: dict[str, str] = {}
    for name in _REGISTRY:
        engine = _load(name)
        if engine is not None:
            out[name] = engine.description
    return out


def get(name: str) -> Engine:
    """The engine called ``name``; an unknown name gets an error listing the valid ones."""
    engine = _load(name) if name in _REGISTRY else None
    if engine is None:
        valid = ", ".join(available()) or "(none installed)"
        raise EngineConfigError(f"unknown engine '{name}'. Valid engines: {valid}.")
    return engine


__all__ = ["Engine", "EngineConfigError", "available", "get"]
