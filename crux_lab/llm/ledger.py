"""The call ledger: every call an engine makes becomes one LLMCall row."""

from __future__ import annotations

import time

from crux_lab.llm.base import Backend, LLMError, LLMRequest, LLMResponse
from crux_lab.llm.pricing import cost_usd
from crux_lab.models import LLMCall, Tier, Usage


class Ledger:
    """Wraps a backend; records one row per call, including failed ones.

    Engines receive a Ledger in place of the backend, so every call is counted in one place.
    """

    def __init__(self, backend: Backend, run_id: str = "") -> None:
        self.backend = backend
        self.name = backend.name
        self.run_id = run_id
        self.calls: list[LLMCall] = []

    def model_for(self, tier: Tier) -> str:
        return self.backend.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        model = self.backend.model_for(request.tier)
        seq = len(self.calls)
        # Reserve the row now so concurrent calls keep their order of issue.
        row = LLMCall(
            run_id=self.run_id,
            seq=seq,
            purpose=request.purpose,
            backend=self.backend.name,
            model=model,
            tier=request.tier,
            request_hash=request.request_hash(model),
        )
        self.calls.append(row)
        started = time.perf_counter()
        try:
            response = await self.backend.generate(request)
        except LLMError as exc:
            # A failed call still costs what it consumed (e.g. an answer that failed repair).
            spent = exc.usage or Usage()
            self.calls[seq] = row.model_copy(
                update={
                    "outcome": "error",
                    "error": str(exc)[:500],
                    "input_tokens": spent.input_tokens,
                    "output_tokens": spent.output_tokens,
                    "cache_read_tokens": spent.cache_read_tokens,
                    "cache_write_tokens": spent.cache_write_tokens,
                    "cost_usd": cost_usd(model, spent),
                    "retries": exc.retries,
                    "latency_s": round(time.perf_counter() - started, 6),
                }
            )
            raise
        u = response.usage
        outcome = "repaired" if response.repaired else "ok"
        if response.backend == "replay":
            outcome = "replayed"
        self.calls[seq] = row.model_copy(
            update={
                # The backend that really answered: a recording ReplayBackend passes the
                # inner backend's responses through, a replaying one answers as "replay".
                "backend": response.backend,
                "model": response.model,
                "input_tokens": u.input_tokens,
                "output_tokens": u.output_tokens,
                "cache_read_tokens": u.cache_read_tokens,
                "cache_write_tokens": u.cache_write_tokens,
                "latency_s": response.latency_s,
                "cost_usd": response.cost_usd,
                "retries": response.retries,
                "outcome": outcome,
            }
        )
        return response

    def usage(self) -> Usage:
        total = Usage()
        for c in self.calls:
            total = total + Usage(
                calls=1,
                input_tokens=c.input_tokens,
                output_tokens=c.output_tokens,
                cache_read_tokens=c.cache_read_tokens,
                cache_write_tokens=c.cache_write_tokens,
                cost_usd=c.cost_usd,
                latency_s=c.latency_s,
            )
        return total
