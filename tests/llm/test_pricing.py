"""Cost arithmetic against a made-up price table (so price updates never break these tests)."""

from __future__ import annotations

from typing import Any

import pytest

from crux_lab.llm import pricing
from crux_lab.models import Tier, Usage

SHIPPED_TABLE = pricing.price_table  # captured before the fixture swaps it out

FAKE_TABLE: dict[str, Any] = {
    "models": {
        "flat": {"input": 3.0, "output": 15.0, "cache_write": 3.75, "cache_read": 0.30},
        "banded": {
            "input": 0.10,
            "output": 0.50,
            "cache_write": 0.125,
            "cache_read": 0.01,
            "long_prompt": {"threshold_tokens": 1000, "input": 0.50, "output": 2.50, "cache_write": 0.625, "cache_read": 0.05},
            "sampling_params": False,
            "effort": "low",
            "thinking_headroom": 512,
        },
    },
    "aliases": {"flat-20260101": "flat"},
    "default_models": {"strong": "flat", "fast": "banded"},
}


@pytest.fixture(autouse=True)
def fake_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pricing, "price_table", lambda: FAKE_TABLE)


def test_each_token_kind_has_its_own_rate() -> None:
    usage = Usage(input_tokens=2_000_000, output_tokens=100_000, cache_write_tokens=400_000, cache_read_tokens=1_000_000)
    # 2 M x 3.00 + 0.1 M x 15.00 + 0.4 M x 3.75 + 1 M x 0.30
    assert pricing.cost_usd("flat", usage) == pytest.approx(6.0 + 1.5 + 1.5 + 0.3)


def test_dated_alias_is_priced_like_its_model() -> None:
    usage = Usage(input_tokens=1234, output_tokens=567)
    assert pricing.cost_usd("flat-20260101", usage) == pricing.cost_usd("flat", usage) > 0


def test_prompt_band_counts_cache_tokens_and_reprices_everything() -> None:
    short = Usage(input_tokens=600, cache_read_tokens=400, output_tokens=100)  # prompt = 1000: not over
    assert pricing.cost_usd("banded", short) == pytest.approx((600 * 0.10 + 400 * 0.01 + 100 * 0.50) / 1e6)
    long = Usage(input_tokens=600, cache_read_tokens=401, output_tokens=100)  # prompt = 1001: over
    assert pricing.cost_usd("banded", long) == pytest.approx((600 * 0.50 + 401 * 0.05 + 100 * 2.50) / 1e6)


def test_unknown_model_costs_zero_and_gets_permissive_settings() -> None:
    assert pricing.cost_usd("mystery", Usage(input_tokens=10**6)) == 0.0
    settings = pricing.model_settings("mystery")
    assert settings.sampling_params and settings.effort is None and settings.thinking_headroom == 0


def test_settings_and_defaults_come_from_the_table() -> None:
    s = pricing.model_settings("banded")
    assert (s.sampling_params, s.effort, s.thinking_headroom) == (False, "low", 512)
    assert pricing.default_model(Tier.fast) == "banded"
    assert pricing.known_models() == ["banded", "flat"]


def test_the_shipped_table_is_complete() -> None:
    table = SHIPPED_TABLE()
    for model, row in table["models"].items():
        for key in ("input", "output", "cache_write", "cache_read"):
            assert row[key] >= 0, f"{model}.{key}"
        assert row["cache_read"] < row["input"] < row["output"], model
    for tier in ("strong", "fast"):
        assert table["default_models"][tier] in table["models"]
    for alias, target in table["aliases"].items():
        assert target in table["models"], alias
