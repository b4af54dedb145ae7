"""Which LLM calls ran concurrently, so wall time can be compared with the critical path.

Engines wrap each parallel round in :meth:`Timeline.parallel` and each sequential call in a
chain of its own. Every call records its ledger sequence number in the chain of the task that
issued it (a context variable, so concurrent tasks keep separate chains). The critical path is
then the sum over stages of the longest chain in that stage.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from crux_lab.engines.guards import in_order

T = TypeVar("T")

_CHAIN: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("crux_chain", default=None)


@dataclass
class Stage:
    name: str
    chains: list[list[int]] = field(default_factory=list)
    wall_s: float | None = None  # measured for parallel stages


@dataclass
class Timeline:
    stages: list[Stage] = field(default_factory=list)

    def record(self, seq: int) -> None:
        """Note that ledger call ``seq`` was issued by the current task."""
        chain = _CHAIN.get()
        if chain is not None:
            chain.append(seq)
        else:
            self.stages.append(Stage("sequential", [[seq]]))

    async def parallel(self, name: str, awaitables: Sequence[Awaitable[T]]) -> list[T]:
        """Run ``awaitables`` truly concurrently, one chain each; persona turns among them
        settle their guards in the order given (:func:`crux_lab.engines.guards.in_order`)."""
        stage = Stage(name)
        self.stages.append(stage)

        async def run(aw: Awaitable[T]) -> T:
            chain: list[int] = []
            stage.chains.append(chain)
            _CHAIN.set(chain)
            return await aw

        started = time.perf_counter()
        try:
            return await in_order([run(a) for a in awaitables])
        finally:
            stage.wall_s = time.perf_counter() - started

    def critical_path(self, latency: Sequence[float]) -> float:
        """Sum over stages of the slowest chain, given each call's latency by ledger seq.

        >>> t = Timeline([Stage("p", [[0], [1, 2]]), Stage("s", [[3]])])
        >>> t.critical_path([1.0, 0.5, 0.7, 2.0])
        3.2
        """
        total = 0.0
        for stage in self.stages:
            total += max((sum(latency[i] for i in chain if i < len(latency)) for chain in stage.chains), default=0.0)
        return round(total, 6)

    def serial_time(self, latency: Sequence[float]) -> float:
        return round(sum(latency[i] for s in self.stages for c in s.chains for i in c if i < len(latency)), 6)
