"""LLM backends: anthropic, simulated (the embedded default) and replay, behind one protocol.

- ``simulated``: the deterministic persona simulator; offline, free, the default without a key.
- ``anthropic``: Claude through the Messages API; needs ``ANTHROPIC_API_KEY`` in the environment.
  Model ids per tier: ``$CRUX_LAB_MODEL_STRONG`` / ``$CRUX_LAB_MODEL_FAST``, else
  ``crux_lab/data/prices.json`` ``default_models``.
- ``replay``: answers only from a JSONL cassette (``--cassette PATH``), no API calls.
- ``auto``: anthropic when ``ANTHROPIC_API_KEY`` is set, else simulated.

Passing a cassette with any live backend records into it (and replays what it already holds),
so a paid run can be reproduced later with ``--backend replay --cassette PATH``.
Call :func:`describe_backend_choice` to print the choice at the start of a run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from crux_lab.llm.base import (
    Backend,
    BackendUnavailable,
    CassetteMiss,
    Hints,
    LLMCallFailed,
    LLMError,
    LLMOutputError,
    LLMRequest,
    LLMResponse,
    TurnHint,
)
from crux_lab.models import SimulatorKnobs, Tier
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
    """Build the backend called ``name`` (after resolving ``auto``).

    With a ``cassette``, ``replay`` answers only from it; any other backend is wrapped so
    that the cassette answers what it holds and new calls are recorded into it (``auto``
    mode): re-running a recorded debate costs nothing, and a new one becomes reproducible.
    """
    resolved = resolve_backend_name(name)
    if resolved == "replay":
        if cassette is None:
            raise BackendUnavailable(
                "the replay backend needs a cassette file: pass --cassette PATH "
                "(recorded by an earlier run with --cassette)."
            )
        from crux_lab.llm.replay import ReplayBackend

        return ReplayBackend(cassette, mode="replay")
    backend: Backend
    if resolved == "simulated":
        from crux_lab.llm.simulated import SimulatedBackend

        backend = SimulatedBackend(personas, propositions, seed=seed, knobs=knobs, realtime=realtime)
    else:
        if not os.environ.get(API_KEY_ENV, "").strip():
            from crux_lab.llm.anthropic_backend import MISSING_KEY_MESSAGE

            raise BackendUnavailable(MISSING_KEY_MESSAGE)
        from crux_lab.llm.anthropic_backend import AnthropicBackend

        backend = AnthropicBackend()
    if cassette is not None:
        from crux_lab.llm.replay import ReplayBackend

        return ReplayBackend(cassette, inner=backend, mode="auto")
    return backend


def describe_backend_choice(name: str, *, cassette: Path | None = None) -> str:
    """One line saying which backend a run uses and why; print it at the start of a run.

    It never shows the key, only whether it is set.

    >>> describe_backend_choice("simulated")
    'backend: simulated (requested) - deterministic persona simulator, offline, no API cost'
    """
    resolved = resolve_backend_name(name)
    has_key = bool(os.environ.get(API_KEY_ENV, "").strip())
    if name == "auto":
        why = f"auto: {API_KEY_ENV} is {'set' if has_key else 'not set'}"
    else:
        why = "requested"
    if resolved == "simulated":
        what = "deterministic persona simulator, offline, no API cost"
    elif resolved == "replay":
        what = f"answers from the cassette {cassette}, no API calls" if cassette else (
            "answers from a recorded cassette (pass --cassette PATH), no API calls"
        )
    elif not has_key:
        what = f"unavailable: {API_KEY_ENV} is not set (export {API_KEY_ENV}=sk-ant-... first)"
    else:
        from crux_lab.llm.anthropic_backend import configured_models

        chosen = configured_models()
        models = ", ".join(f"{t.value}={chosen[t]}" for t in (Tier.strong, Tier.fast))
        what = f"Claude via the Anthropic API ({models}); calls are billed to your key"
    line = f"backend: {resolved} ({why}) - {what}"
    if cassette is not None and resolved != "replay":
        line += f"; cassette {cassette}: recorded calls replay, new ones are recorded"
    return line


__all__ = [
    "API_KEY_ENV",
    "BACKENDS",
    "Backend",
    "BackendUnavailable",
    "CassetteMiss",
    "Hints",
    "LLMCallFailed",
    "LLMError",
    "LLMOutputError",
    "LLMRequest",
    "LLMResponse",
    "TurnHint",
    "UnknownBackend",
    "describe_backend_choice",
    "make_backend",
    "resolve_backend_name",
]
