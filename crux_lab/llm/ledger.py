"""The call ledger: every call an engine makes becomes one LLMCall row.

Every call ends with one outcome: ``ok``, ``repaired`` (the answer needed the repair turn),
``error`` (an LLMError, or any other exception from the backend) or ``cancelled`` (the
call was still in flight when its task was cancelled: a sibling call failed, the run was
stopped, Ctrl-C). Retries and latency are what the call really took, for every outcome.
A row's ``backend`` is the backend that answered: ``replay`` only when a cassette answered.
A failed or cancelled call is charged to the backend it was sent to.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

from crux_lab.backends import answers_from_cassette
from crux_lab.llm.base import Backend, LLMError, LLMRequest, LLMResponse
from crux_lab.llm.pricing import cost_usd
from crux_lab.models.accounting import LLMCall, Usage, is_billed
from crux_lab.models.domain import Tier
from crux_lab.scrub import scrub

__all__ = ["Ledger", "cost_label", "is_billed", "live_backend", "run_backend"]




def live_backend(backend: Backend) -> str:
    """The backend that answers new calls: a recording cassette's inner backend, else itself.

    >>> class Sim:
    ...     name = "simulated"
    >>> class Recording:
    ...     name, mode, inner = "replay", "auto", Sim()
    >>> live_backend(Recording()), live_backend(Sim())
    ('simulated', 'simulated')
    """
    inner = getattr(backend, "inner", None)
    if getattr(backend, "mode", "replay") != "replay" and inner is not None:
        return live_backend(inner)
    return str(backend.name)


def run_backend(calls: Iterable[LLMCall], fallback: str) -> str:
    """A run's backend: the backends that answered its calls, joined with ``+`` when
    several did (``anthropic+replay`` for a resumed recording); ``fallback`` with no calls.

    >>> c = LLMCall(run_id="r", seq=0, purpose="p", backend="anthropic", model="m", tier="fast")
    >>> run_backend([c, c.model_copy(update={"backend": "replay"})], "x")
    'anthropic+replay'
    >>> run_backend([], "simulated")
    'simulated'
    """
    names = sorted({c.backend for c in calls if c.backend})
    return "+".join(names) if names else fallback


def cost_label(backend: str) -> str:
    """The one wording of what a cost means, shared by the CLI, the reports and the store.

    >>> cost_label("simulated")
    'modelled, not billed'
    """
    return "billed" if is_billed(backend) else "modelled, not billed"


class Ledger:
    """Wraps a backend; records one row per call, including failed ones.

    Engines receive a Ledger in place of the backend, so every call is counted in one place.
    """

    def __init__(self, backend: Backend, run_id: str = "") -> None:
        self.backend = backend
        self.name = backend.name
        self.run_id = run_id
        self.calls: list[LLMCall] = []
        self._open: dict[int, float] = {}  # seq -> perf_counter() at issue, until the call ends

    def model_for(self, tier: Tier) -> str:
        return self.backend.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        model = self.backend.model_for(request.tier)
        seq = len(self.calls)
        # Reserve the row now so concurrent calls keep their order of issue. Until the call
        # ends it reads 'cancelled': a row nobody finished was never answered.
        row = LLMCall(
            run_id=self.run_id,
            seq=seq,
            purpose=request.purpose,
            backend=live_backend(self.backend),
            model=model,
            tier=request.tier,
            request_hash=request.request_hash(model),
            outcome="cancelled",
        )
        self.calls.append(row)
        started = self._open[seq] = time.perf_counter()
        try:
            response = await self.backend.generate(request)
        except LLMError as exc:
            # A failed call still costs what it consumed (e.g. an answer that failed repair).
            self.calls[seq] = self._failed(row, "error", scrub(str(exc))[:500], exc, started)
            raise
        except (asyncio.CancelledError, KeyboardInterrupt, GeneratorExit) as exc:
            self.calls[seq] = self._failed(row, "cancelled", "cancelled before an answer", exc, started)
            raise
        except Exception as exc:
            detail = scrub(f"{type(exc).__name__}: {exc}")[:500]
            self.calls[seq] = self._failed(row, "error", detail, exc, started)
            raise
        finally:
            self._open.pop(seq, None)
        u = response.usage
        replayed = answers_from_cassette(response.backend)
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
                # A cassette answer took no HTTP attempt in this run: its latency is this
                # run's lookup, its retries 0 (the recording's own numbers stay in the cassette).
                "latency_s": round(time.perf_counter() - started, 6) if replayed else response.latency_s,
                "cost_usd": response.cost_usd,
                "retries": 0 if replayed else response.retries,
                "outcome": "repaired" if response.repaired else "ok",
            }
        )
        return response

    def _failed(self, row: LLMCall, outcome: str, error: str, exc: BaseException, started: float) -> LLMCall:
        """The row of a call that ended without an answer: what it consumed, its real
        retries (a backend attaches ``usage`` / ``retries`` to the exception) and latency."""
        spent = getattr(exc, "usage", None) or Usage(cache_read_tokens=None)  # nothing reported
        return row.model_copy(
            update={
                "outcome": outcome,
                "error": error,
                "input_tokens": spent.input_tokens,
                "output_tokens": spent.output_tokens,
                "cache_read_tokens": spent.cache_read_tokens,
                "cache_write_tokens": spent.cache_write_tokens,
                "cost_usd": cost_usd(row.model, spent),
                "retries": int(getattr(exc, "retries", 0) or 0),
                "latency_s": round(time.perf_counter() - started, 6),
            }
        )

    def snapshot(self) -> list[LLMCall]:
        """The rows as they stand now. A call still in flight (its task not yet unwound when
        the run is saved, e.g. on Ctrl-C) reads ``cancelled`` with the time it has run so far,
        never a zero latency."""
        now = time.perf_counter()
        return [
            c.model_copy(update={"error": "cancelled before an answer", "latency_s": round(now - self._open[i], 6)})
            if i in self._open
            else c
            for i, c in enumerate(self.calls)
        ]

    def outcomes(self) -> dict[str, int]:
        """Calls per outcome, e.g. ``{'ok': 40, 'error': 1}``."""
        counts: dict[str, int] = {}
        for c in self.calls:
            counts[c.outcome] = counts.get(c.outcome, 0) + 1
        return counts

    def usage(self) -> Usage:
        # cache reads stay unknown (None) unless some call reported a figure
        total = Usage(cache_read_tokens=None) if self.calls else Usage()
        for c in self.snapshot():
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
