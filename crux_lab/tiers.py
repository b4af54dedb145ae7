"""The one allocation of models to the fast and strong tiers, per backend.

Every engine asks for a *tier* per purpose (``crux_lab.llm.base.ALLOCATION``); this module
says which model a tier means on each backend, by the rule its registry entry names
(:mod:`crux_lab.backends`):

- **anthropic**: ``$CRUX_LAB_MODEL_STRONG`` / ``$CRUX_LAB_MODEL_FAST`` when set, else
  ``default_models`` in ``crux_lab/data/prices.json``;
- **openai**: ``--model-strong`` / ``--model-fast`` (``DebateConfig.models``); without them,
  the one model the server lists (``crux_lab.llm.resolve_openai_models``);
- **simulated** (and replay, for a tier its cassette never used): priced as the built-in
  Anthropic defaults, so offline runs report what a real run would cost.

Explicit models (``DebateConfig.models``) win on every backend, and the CLI records the
resolved ones there, so they land in each run's provenance (``runs.config``).
Standard library only: ``crux-lab debate --help`` prints :func:`allocation_help`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources

from crux_lab import backends

TIERS = ("strong", "fast")
MODEL_ENV = {"strong": "CRUX_LAB_MODEL_STRONG", "fast": "CRUX_LAB_MODEL_FAST"}


@lru_cache(maxsize=1)
def default_models() -> dict[str, str]:
    """The built-in Anthropic model per tier (``prices.json`` ``default_models``).

    >>> sorted(default_models())
    ['fast', 'strong']
    """
    text = resources.files("crux_lab").joinpath("data/prices.json").read_text(encoding="utf-8")
    table = json.loads(text)["default_models"]
    return {tier: str(table[tier]) for tier in TIERS}


def models_for(backend: str, models: Mapping[str, str] | None = None) -> dict[str, str]:
    """Tier -> model for ``backend``; ``models`` (explicit choices) win. May be incomplete for
    openai, which has no default.

    >>> models_for("openai", {"strong": "qwen3"})
    {'strong': 'qwen3'}
    >>> models_for("simulated") == default_models()
    True
    """
    chosen = {str(k): v.strip() for k, v in (models or {}).items() if v and v.strip()}
    unknown = sorted(set(chosen) - set(TIERS))
    if unknown:
        raise ValueError(f"unknown tier(s) {', '.join(unknown)}: the tiers are {', '.join(TIERS)}")
    known = backends.registered()
    rule = known[backend].tiers if backend in known else "defaults"
    if rule == "explicit":
        return {t: chosen[t] for t in TIERS if t in chosen}
    defaults = dict(default_models())
    if rule == "env":
        defaults = {t: os.environ.get(MODEL_ENV[t], "").strip() or defaults[t] for t in TIERS}
    return {**defaults, **chosen}


def allocation_help() -> str:
    """The allocation in two sentences, for ``crux-lab debate --help``."""
    a = models_for("anthropic")
    others = "; ".join(f"{name}: {b.tiers_help}" for name, b in backends.registered().items() if b.tiers_help)
    return (
        f"Tiers -> models: anthropic strong={a['strong']} fast={a['fast']} "
        f"(${MODEL_ENV['strong']}, ${MODEL_ENV['fast']}); {others}. "
        f"Each run records its models in the runs table (config.models)."
    )


# The openai backend's structured-output modes (--structured, --llm-config `structured`).
STRUCTURED_MODES: tuple[str, ...] = ("auto", "json_schema", "prompt")
STRUCTURED_HELP = (
    "openai backend: how replies are held to their JSON schema. auto (default): send the schema "
    "as response_format where a canary request shows the server enforces it, else state it in the "
    "prompt; json_schema: always send it; prompt: never send it."
)
