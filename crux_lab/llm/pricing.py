"""Cost arithmetic and per-model request settings from ``crux_lab/data/prices.json``.

The price table is a data file so that a price change is a one-line edit. It also says, per
model, whether the model accepts a sampling temperature and which ``effort`` to request
(models with adaptive thinking), because those decide what the Anthropic backend may send.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from crux_lab.models.accounting import Usage
from crux_lab.models.domain import Tier

PER_MILLION = 1_000_000


PRICES_ENV = "CRUX_LAB_PRICES"


class PriceTableInvalid(ValueError):
    """The user's price file cannot be read."""


def price_table() -> dict[str, Any]:
    """The built-in table with ``$CRUX_LAB_PRICES`` (a JSON file of the same shape) laid over it.

    The user's file adds or replaces whole model rows (``models``) and ``aliases`` (the
    default models per tier are :mod:`crux_lab.tiers`'s business): e.g. ``{"models": {"gpt-4.1": {"input": 2.0, "output": 8.0,
    "cache_write": 0, "cache_read": 0.5}}}``.
    """
    return _price_table(os.environ.get(PRICES_ENV, "").strip())


@lru_cache(maxsize=4)
def _price_table(user_file: str) -> dict[str, Any]:
    text = resources.files("crux_lab").joinpath("data/prices.json").read_text(encoding="utf-8")
    table: dict[str, Any] = json.loads(text)
    if not user_file:
        return table
    try:
        user = json.loads(Path(user_file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PriceTableInvalid(
            f"${PRICES_ENV}={user_file} is not a readable JSON price table ({exc}); "
            f"fix the file or unset {PRICES_ENV}"
        ) from None
    if not isinstance(user, dict) or not all(isinstance(user.get(k, {}), dict) for k in ("models", "aliases")):
        raise PriceTableInvalid(
            f"${PRICES_ENV}={user_file} must be a JSON object with a 'models' (and optionally "
            f"an 'aliases') mapping, like crux_lab/data/prices.json"
        )
    for key in ("models", "aliases"):
        table[key] = {**table.get(key, {}), **user.get(key, {})}
    return table


def default_model(tier: Tier) -> str:
    """Default Anthropic model id for a tier (``default_models``; :mod:`crux_lab.tiers` reads
    the same row for the one allocation).

    >>> default_model(Tier.fast).startswith("claude-")
    True
    """
    return str(price_table()["default_models"][tier.value])


def canonical_model(model: str) -> str:
    """The price-table key of ``model`` (dated ids map to their alias).

    >>> canonical_model("claude-haiku-4-5-20251001")
    'claude-haiku-4-5'
    >>> canonical_model("claude-unknown-9")
    'claude-unknown-9'
    """
    aliases: dict[str, str] = price_table().get("aliases", {})
    return aliases.get(model, model)


def model_entry(model: str) -> dict[str, Any] | None:
    """The price-table row of ``model``, or None when the table does not know it."""
    entry = price_table()["models"].get(canonical_model(model))
    return dict(entry) if entry is not None else None


def known_models() -> list[str]:
    """Model ids the price table covers (aliases excluded), sorted.

    >>> "claude-sonnet-5-5" in known_models()
    True
    """
    return sorted(price_table()["models"])


@dataclass(frozen=True)
class ModelSettings:
    """What the Anthropic backend may send to a model (runtime-only)."""

    sampling_params: bool = True
    effort: str | None = None
    thinking_headroom: int = 0
    # The model takes a JSON schema in ``output_config.format`` (Anthropic structured outputs).
    structured_outputs: bool = False


def model_settings(model: str) -> ModelSettings:
    """Request settings for ``model``; unknown models get the permissive defaults.

    >>> model_settings("claude-haiku-5-5").sampling_params
    False
    >>> model_settings("claude-sonnet-4-5").sampling_params
    True
    """
    entry = model_entry(model) or {}
    return ModelSettings(
        sampling_params=bool(entry.get("sampling_params", True)),
        effort=entry.get("effort"),
        thinking_headroom=int(entry.get("thinking_headroom", 0)),
        structured_outputs=bool(entry.get("structured_outputs", False)),
    )


def prompt_tokens(usage: Usage) -> int:
    """Tokens of the prompt as billed: uncached input plus cache reads and writes."""
    return usage.input_tokens + (usage.cache_read_tokens or 0) + usage.cache_write_tokens


def cost_usd(model: str, usage: Usage) -> float:
    """Cost of one call in USD. Unknown models cost 0 (and show as such in the ledger).

    ``usage.input_tokens`` counts uncached input only, as the Messages API reports it;
    cache writes and reads are priced separately. A model with a ``long_prompt`` band bills
    every token of a request at the band's rates once the prompt exceeds its threshold.

    >>> round(cost_usd("claude-sonnet-4-5", Usage(input_tokens=1_000_000, output_tokens=100_000)), 2)
    4.5
    >>> cost_usd("claude-haiku-5-5", Usage(input_tokens=1_000_000))
    0.5
    >>> cost_usd("no-such-model", Usage(input_tokens=10))
    0.0
    """
    entry = model_entry(model)
    if entry is None:
        return 0.0
    rates = entry
    band = entry.get("long_prompt")
    if band is not None and prompt_tokens(usage) > int(band["threshold_tokens"]):
        rates = band
    total = (
        usage.input_tokens * float(rates["input"])
        + usage.output_tokens * float(rates["output"])
        + usage.cache_write_tokens * float(rates["cache_write"])
        + (usage.cache_read_tokens or 0) * float(rates["cache_read"])
    )
    return round(total / PER_MILLION, 10)
