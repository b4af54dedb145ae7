"""LLM backends behind one protocol, built from one registry (:mod:`crux_lab.backends`).

- ``simulated``: the deterministic persona simulator; offline, free, the default without a key.
- ``anthropic``: Claude through the Messages API; needs ``ANTHROPIC_API_KEY`` in the environment.
  Model ids per tier: ``$CRUX_LAB_MODEL_STRONG`` / ``$CRUX_LAB_MODEL_FAST``, else
  ``crux_lab/data/prices.json`` ``default_models``.
- ``replay``: answers only from a JSONL cassette (``--cassette PATH``), no API calls.
- ``openai``: any OpenAI-compatible server (OpenAI, OpenRouter, vLLM, Ollama, the llama.cpp
  server of ``crux-lab local-model start``): ``base_url`` and a model per tier; the key comes
  from ``OPENAI_API_KEY``, none for a server on this machine.
- ``auto``: anthropic when ``ANTHROPIC_API_KEY`` is set, else simulated.

:func:`tier_models` is the one allocation of models to the fast and strong tiers, per backend.

Passing a cassette with any live backend records into it (and replays what it already holds),
so a paid run can be reproduced later with ``--backend replay --cassette PATH``.
Call :func:`describe_backend_choice` to print the choice at the start of a run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from crux_lab import backends, tiers
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
from crux_lab.llm.keys import API_KEY_ENV, OPENAI_KEY_ENV
from crux_lab.models.config import DebateConfig
from crux_lab.models.domain import Tier
from crux_lab.models.result import StructuredCheck

MODEL_ENV = {Tier(t): name for t, name in tiers.MODEL_ENV.items()}


def tier_models(backend: str, models: Mapping[str, str] | None = None) -> dict[Tier, str]:
    """The one allocation (:mod:`crux_lab.tiers`): the model each tier of ``backend`` calls.

    Explicit ``models`` (``--model-strong`` / ``--model-fast``, ``DebateConfig.models``) win.
    For openai the mapping may be incomplete (see :func:`resolve_openai_models`).

    >>> tier_models("openai", {"strong": "qwen3", "fast": "qwen3"})[Tier.fast]
    'qwen3'
    >>> from crux_lab.llm.pricing import default_model
    >>> tier_models("simulated")[Tier.strong] == default_model(Tier.strong)
    True
    """
    return {Tier(t): m for t, m in tiers.models_for(backend, models).items()}


allocation_help = tiers.allocation_help


def resolve_openai_models(
    models: Mapping[str, str] | None, base_url: str | None
) -> dict[Tier, str]:
    """Both tiers' models for the openai backend: the given ones, the missing ones filled with
    the server's only model. Raises :class:`BackendUnavailable` (one line) when the server
    cannot be reached, or serves several models and none was named."""
    chosen = tier_models("openai", models)
    if all(t in chosen for t in Tier):
        return chosen
    from crux_lab.llm.openai_backend import resolve_base_url, served_models

    url = resolve_base_url(base_url)
    served = served_models(url)
    if len(served) != 1:
        listed = f"it lists {', '.join(served[:8])}" + (" ..." if len(served) > 8 else "") if served else "it lists none"
        raise BackendUnavailable(
            f"name the models for the openai backend: --model-strong M --model-fast M "
            f"(the server at {url} {listed})"
        )
    return {t: chosen.get(t, served[0]) for t in Tier}


class UnknownBackend(ValueError):
    pass


def resolve_backend_name(name: str) -> str:
    """``auto`` means anthropic when ANTHROPIC_API_KEY is set, else simulated.

    >>> resolve_backend_name("simulated")
    'simulated'
    """
    valid = backends.names()
    if name not in valid:
        raise UnknownBackend(f"unknown backend '{name}'. Valid backends: {', '.join(valid)}.")
    if name == backends.AUTO:
        return "anthropic" if os.environ.get(API_KEY_ENV) else "simulated"
    return name


def make_backend(
    name: str,
    *,
    options: Any = None,
    cassette: Path | None = None,
    realtime: bool = False,
    models: Mapping[str, str] | None = None,
    base_url: str | None = None,
    structured: str | None = None,
) -> Backend:
    """Build the backend called ``name`` (after resolving ``auto``) with its registered factory
    (:mod:`crux_lab.backends`). ``options`` is the backend's own options object
    (:func:`~crux_lab.llm.registry.options_for` for a debate); ``structured`` is the openai
    backend's structured-output mode (auto, json_schema, prompt; default auto).

    With a ``cassette``, ``replay`` answers only from it; any other backend is wrapped so
    that the cassette answers what it holds and new calls are recorded into it (``auto``
    mode): re-running a recorded debate costs nothing, and a new one becomes reproducible.
    """
    from crux_lab.llm.registry import BackendArgs, factory

    resolved = resolve_backend_name(name)
    args = BackendArgs(
        models=models, base_url=base_url, structured=structured, realtime=realtime, cassette=cassette, options=options
    )
    backend = factory(resolved)(args)
    if cassette is not None and backends.spec(resolved).records:
        from crux_lab.llm.replay import ReplayBackend

        return ReplayBackend(cassette, inner=backend, mode="auto")
    return backend


def backend_for_debate(config: DebateConfig, *, cassette: Path | None = None, realtime: bool = False) -> Backend:
    """The backend a debate runs on: its options from ``config`` (after the backend's own
    checks of the debate, which raise one-line errors before any call), then built."""
    from crux_lab.llm.registry import options_for

    resolved = resolve_backend_name(config.backend)
    return make_backend(
        resolved,
        options=options_for(resolved, config),
        cassette=cassette,
        realtime=realtime,
        models=config.models,
        base_url=config.base_url,
        structured=config.structured,
    )


def describe_backend_choice(
    name: str,
    *,
    cassette: Path | None = None,
    models: Mapping[str, str] | None = None,
    base_url: str | None = None,
) -> str:
    """One line saying which backend a run uses and why; print it at the start of a run.

    It never shows the key, only whether it is set.

    >>> describe_backend_choice("simulated")
    'backend: simulated (requested) - deterministic persona simulator, offline, no API cost'
    """
    resolved = resolve_backend_name(name)
    has_key = bool(os.environ.get(API_KEY_ENV, "").strip())
    if name == backends.AUTO:
        why = f"auto: {API_KEY_ENV} is {'set' if has_key else 'not set'}"
    else:
        why = "requested"
    entry = backends.spec(resolved)
    what = entry.describe(cassette, models, base_url) if entry.describe else entry.description
    line = f"backend: {resolved} ({why}) - {what}"
    if cassette is not None and entry.records:
        line += f"; cassette {cassette}: recorded calls replay, new ones are recorded"
    return line


__all__ = [
    "API_KEY_ENV",
    "BACKENDS",
    "MODEL_ENV",
    "OPENAI_KEY_ENV",
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
    "allocation_help",
    "backend_for_debate",
    "describe_backend_choice",
    "make_backend",
    "resolve_backend_name",
    "resolve_openai_models",
    "tier_models",
]


def __getattr__(name: str) -> Any:
    # BACKENDS: every name --backend accepts (auto and the registered backends), read from the
    # registry when asked for (its plug-ins import this package).
    if name == "BACKENDS":
        return backends.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


async def check_structured(backend: object) -> StructuredCheck | None:
    """How the server that answers new calls holds replies to their schema (it sends its
    canary once), or None for a backend without one (simulator, Anthropic, a cassette that
    answers every call). Looks through the ledger and a recording cassette to that server."""
    seen: object | None = backend
    while seen is not None:
        check = getattr(seen, "check_structured", None)
        if check is not None:
            result: StructuredCheck = await check()
            return result
        if getattr(seen, "mode", None) == "replay":
            return None
        seen = getattr(seen, "inner", None) or getattr(seen, "backend", None)
    return None
