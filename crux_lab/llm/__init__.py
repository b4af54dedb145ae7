"""LLM backends: anthropic, simulated (the embedded default) and replay, behind one protocol."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from crux_lab.llm.base import (
    Backend,
    BackendUnavailable,
    Hints,
    LLMError,
    LLMOutputError,
    LLMRequest,
    LLMResponse,
    TurnHint,
)
from crux_lab.models import SimulatorKnobs
from crux_lab.personas.models import Persona, Proposition

BACKENDS = ("auto", "simulated", "anthropic", "replay")
API_KEY_ENV = "ANTHROPIC_API_KEY"


class UnknownBackend(ValueError):
    pass


def resolve_backend_name(name: str) -> str:
    """``auto`` means anthropic when ANTHROPIC_API_KEY is set, else simulated.

    >>> resolve_backend_name("simulated")
    'simulated'
    """
    if name not in BACKENDS:
        raise UnknownBackend(f"unknown backend '{name}'. Valid backends: {', '.join(BACKENDS)}.")
    if name == "auto":
        return "anthropic" if os.environ.get(API_KEY_ENV) else "simulated"
    return name


def make_backend(
    name: str,
    *,
    personas: Mapping[str, Persona],
    propositions: Mapping[str, Proposition],
    seed: int = 0,
    knobs: SimulatorKnobs | None = None,
    cassette: Path | None = None,
    realtime: bool = False,
) -> Backend:
    """Build the backend called ``name`` (after resolving ``auto``)."""
    resolved = resolve_backend_name(name)
    if resolved == "simulated":
        from crux_lab.llm.simulated import SimulatedBackend

        return SimulatedBackend(personas, propositions, seed=seed, knobs=knobs, realtime=realtime)
    if resolved == "anthropic":
        if not os.environ.get(API_KEY_ENV):
            raise BackendUnavailable(
                f"the anthropic backend needs an API key: set it in the environment, e.g. "
                f"`export {API_KEY_ENV}=sk-ant-...`, or use --backend simulated."
            )
        from crux_lab.llm.anthropic_backend import AnthropicBackend

        return AnthropicBackend()
    # replay
    if cassette is None:
        raise BackendUnavailable("the replay backend needs a cassette file: pass --cassette PATH.")
    from crux_lab.llm.replay import ReplayBackend

    return ReplayBackend(cassette)


__all__ = [
    "BACKENDS",
    "Backend",
    "BackendUnavailable",
    "Hints",
    "LLMError",
    "LLMOutputError",
    "LLMRequest",
    "LLMResponse",
    "TurnHint",
    "UnknownBackend",
    "make_backend",
    "resolve_backend_name",
]
