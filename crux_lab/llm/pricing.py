"""Cost arithmetic from the price table kept in ``crux_lab/data/prices.json``."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from crux_lab.models import Tier, Usage


@lru_cache(maxsize=1)
def price_table() -> dict[str, Any]:
    text = resources.files("crux_lab").joinpath("data/prices.json").read_text()
    table: dict[str, Any] = json.loads(text)
    return table


def default_model(tier: Tier) -> str:
    """Default Anthropic model id for a tier.

    >>> default_model(Tier.fast).startswith("claude-")
    True
    """
    return str(price_table()["default_models"][tier.value])


def cost_usd(model: str, usage: Usage) -> float:
    """Cost of one call. Unknown models cost 0 (and are visible as such in the ledger).

    ``usage.input_tokens`` counts uncached input only, as the Messages API reports it.

    >>> round(cost_usd("claude-sonnet-4-5", Usage(input_tokens=1_000_000, output_tokens=100_000)), 2)
    4.5
    """
    prices = price_table()["models"].get(model)
    if prices is None:
        return 0.0
    per = 1_000_000
    return (
        usage.input_tokens * prices["input"]
        + usage.output_tokens * prices["output"]
        + usage.cache_write_tokens * prices["cache_write"]
        + usage.cache_read_tokens * prices["cache_read"]
    ) / per
