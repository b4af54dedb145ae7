"""Accounting: token usage, the call ledger's rows, and which backends are billed."""

from __future__ import annotations

from typing import Any, Literal

from crux_lab.backends import billed_names
from crux_lab.models.base import Model
from crux_lab.models.domain import Tier


def add_known(a: int | None, b: int | None) -> int | None:
    """Sum of two counts where None is unknown: unknown only when both are.

    >>> add_known(None, None) is None, add_known(None, 3), add_known(2, 3)
    (True, 3, 5)
    """
    return None if a is None and b is None else (a or 0) + (b or 0)


class Usage(Model):
    calls: int = 0
    input_tokens: int = 0  # uncached input (cache reads and writes are counted apart)
    output_tokens: int = 0
    # None: the backend reported no cache figures (unknown, not 0). A total is unknown only
    # when every call's is; otherwise it sums the calls that reported one.
    cache_read_tokens: int | None = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=add_known(self.cache_read_tokens, other.cache_read_tokens),
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cost_usd=round(self.cost_usd + other.cost_usd, 10),
            latency_s=self.latency_s + other.latency_s,
        )


class LLMCall(Model):
    """One row of the call ledger."""

    run_id: str
    seq: int
    purpose: str
    backend: str
    model: str
    tier: Tier
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int | None = 0  # None: the server reported no cache figures (unknown)
    cache_write_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    retries: int = 0
    # "replayed" only in runs written before the ledger recorded the answering backend instead.
    outcome: Literal["ok", "repaired", "error", "cancelled", "replayed"] = "ok"
    error: str | None = None
    request_hash: str = ""


def __getattr__(name: str) -> Any:
    # PAID_BACKENDS: the backends whose calls are billed to an API key (the backend registry
    # says which, read when asked for: its plug-ins import this module); the others model what
    # a call would cost.
    if name == "PAID_BACKENDS":
        return frozenset(billed_names())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_billed(backend: str) -> bool:
    """True when a run's (or call's) backend includes a paid API: the one rule behind the CLI
    summary, the reports and the store's ``billed`` columns.

    >>> is_billed("anthropic"), is_billed("replay"), is_billed("anthropic+replay")
    (True, False, True)
    """
    paid = billed_names()
    return any(part in paid for part in backend.split("+"))
