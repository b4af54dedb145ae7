"""Build backends from the registry (:mod:`crux_lab.backends`): the one place that turns a
backend's name into its code.

:func:`build` calls the registered factory with :class:`BackendArgs`; :func:`options_for`
turns a debate's configuration into the options the backend takes (the simulator: its
personas, their deck and its knobs), running the backend's own checks on the debate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crux_lab import backends
from crux_lab.llm.base import Backend
from crux_lab.models.config import DebateConfig


@dataclass(frozen=True)
class BackendArgs:
    """What every factory receives. ``options`` is the backend's own options object (from
    :func:`options_for`, or built by the caller), None for a backend that takes none."""

    models: Mapping[str, str] | None = None
    base_url: str | None = None
    structured: str | None = None
    realtime: bool = False
    cassette: Path | None = None
    options: Any = None


def factory(name: str) -> Callable[[BackendArgs], Backend]:
    fn: Callable[[BackendArgs], Backend] = backends.spec(name).factory
    return fn


def options_for(name: str, config: DebateConfig) -> Any:
    """The options backend ``name`` is built with for the debate ``config``, after its own
    checks of that debate (which raise one-line errors). A backend without options refuses
    a config that sets some."""
    entry = backends.spec(name)
    if entry.options is None:
        if config.backend_options:
            raise ValueError(
                f"the {name} backend takes no options; the configuration sets "
                f"{', '.join(sorted(config.backend_options))} (they are the simulator's knobs: "
                "drop them, or run --backend simulated)."
            )
        return None
    return entry.options(config)


def option_names(name: str) -> list[str]:
    """The option keys backend ``name`` accepts (``DebateConfig.backend_options``).

    >>> option_names("simulated")[:2]
    ['sycophancy', 'missed_attack']
    >>> option_names("anthropic")
    []
    """
    entry = backends.spec(name)
    return list(entry.options_model.model_fields) if entry.options_model else []


def options_for_library(
    name: str, personas: Mapping[str, Any], propositions: Mapping[str, Any], seed: int = 0
) -> Any:
    """The options of backend ``name`` for a run that is not a debate (building a persona,
    judging), from a persona library; None for a backend that needs none."""
    entry = backends.spec(name)
    return entry.library(personas, propositions, seed) if entry.library else None
