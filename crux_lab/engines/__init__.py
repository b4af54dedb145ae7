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


def _load(name: str) -> Engine:
    module_name, _, cls_name = _REGISTRY[name].partition(":")
    engine: Engine = getattr(importlib.import_module(module_name), cls_name)()
    return engine


def available() -> dict[str, str]:
    """Every engine, with a one-line description each."""
    return {name: _load(name).description for name in _REGISTRY}


def get(name: str) -> Engine:
    """The engine called ``name``; an unknown name gets an error listing the valid ones."""
    if name not in _REGISTRY:
        raise EngineConfigError(f"unknown engine '{name}'. Valid engines: {', '.join(_REGISTRY)}.")
    return _load(name)


__all__ = ["Engine", "EngineConfigError", "available", "get"]
