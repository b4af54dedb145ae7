"""Test helpers for the crux engines: a backend wrapper that scripts or breaks chosen purposes.

:class:`ScriptedBackend` wraps any backend (normally the simulator). Per purpose it can
replace the reply (``script``), raise an unrepairable-output error (``fail``) or edit the parsed
reply (``edit``). It records every request and the peak number of concurrent calls per purpose.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel

from crux_lab.llm.base import Backend, LLMOutputError, LLMRequest, LLMResponse
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.llm.simulated.options import SimulatorKnobs
from crux_lab.models import Tier
from crux_lab.personas.loader import load_personas, propositions_for
from tests.engines.crux_deck import PERSONA_IDS

Script = Callable[[LLMRequest, int], dict[str, Any]]


class ScriptedBackend:
    def __init__(
        self,
        inner: Backend,
        *,
        script: dict[str, Script] | None = None,
        fail: Iterable[str] = (),
        edit: dict[str, Callable[[BaseModel], BaseModel]] | None = None,
        overlap: bool = True,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.script = script or {}
        self.fail = set(fail)
        self.edit = edit or {}
        self.overlap = overlap  # False: a call answers without yielding, as a replay does
        self.requests: list[LLMRequest] = []
        self.counts: dict[str, int] = {}
        self.in_flight: dict[str, int] = {}
        self.peak: dict[str, int] = {}

    def model_for(self, tier: Tier) -> str:
        return self.inner.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        p = request.purpose
        self.requests.append(request)
        n = self.counts.get(p, 0)
        self.counts[p] = n + 1
        self.in_flight[p] = self.in_flight.get(p, 0) + 1
        self.peak[p] = max(self.peak.get(p, 0), self.in_flight[p])
        try:
            if self.overlap:
                await asyncio.sleep(0)  # let sibling tasks of a gather start, so overlap is visible
            if p in self.fail:
                raise LLMOutputError(p, "scripted unrepairable reply")
            if p in self.script:
                data = self.script[p](request, n)
                parsed = request.output_schema.model_validate(data) if request.output_schema else None
                return LLMResponse(
                    text=json.dumps(data),
                    parsed=parsed, model=self.model_for(request.tier), backend=self.name,
                )
            response = await self.inner.generate(request)
            if p in self.edit and response.parsed is not None:
                edited = self.edit[p](response.parsed)
                response = response.model_copy(update={"parsed": edited, "text": edited.model_dump_json()})
            return response
        finally:
            self.in_flight[p] -= 1

    def users(self, purpose: str) -> list[str]:
        return [r.user for r in self.requests if r.purpose == purpose]


def deck_simulator(seed: int = 0, knobs: SimulatorKnobs | None = None) -> SimulatedBackend:
    """The simulator over the test deck's personas (``CRUX_LAB_PERSONAS`` must point at it)."""
    ids = list(PERSONA_IDS)
    return SimulatedBackend(load_personas(ids), propositions_for(ids), seed=seed, knobs=knobs)
