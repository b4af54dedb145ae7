"""A persona turn whose reply stays off-schema after the backend's repair is skipped with a
warning event, and the debate goes on (what a small real model does now and then)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from crux_lab.llm.base import LLMOutputError, LLMRequest, LLMResponse
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.models import DebateConfig, DebateResult, EngineError
from crux_lab.personas.loader import load_personas, propositions_for
from crux_lab.runner import run_debate
from tests.engines.leakcheck import Wrapped

TOPIC = "Is Bitcoin a better long-term store of value than gold?"


@dataclass
class BreaksFirst(Wrapped):
    """The simulator, except that the first request of each listed purpose fails for good."""

    purposes: set[str] = field(default_factory=set)
    broken: list[str] = field(default_factory=list)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        if request.purpose in self.purposes and request.purpose not in self.broken:
            self.broken.append(request.purpose)
            raise LLMOutputError(request.purpose, "not valid JSON: the reply looped until max_tokens")
        return await self.inner.generate(request)


async def run_with_breaks(engine: str, ids: list[str], purposes: set[str], **params: object) -> tuple[DebateResult, BreaksFirst]:
    backend = BreaksFirst(SimulatedBackend(load_personas(ids), propositions_for(ids), seed=1), purposes)
    config = DebateConfig(topic=TOPIC, persona_ids=ids, engine=engine, max_turns=8, seed=1, params=dict(params))
    return await run_debate(config, backend=backend), backend


@pytest.mark.parametrize(
    ("engine", "ids", "purposes", "params"),
    [
        ("panel", ["michael-saylor", "peter-schiff", "arthur-hayes"], {"opening", "take", "rebuttal"}, {"n_aspects": 1}),
        ("crux_rooms", ["michael-saylor", "peter-schiff", "arthur-hayes"], {"channel_message"}, {}),
        ("dialogue", ["michael-saylor", "peter-schiff"], {"dialogue_turn", "opening", "resolution"}, {}),
    ],
)
async def test_an_unrepairable_turn_is_skipped_with_a_warning(engine: str, ids: list[str], purposes: set[str], params: dict[str, object]) -> None:
    result, backend = await run_with_breaks(engine, ids, purposes, **params)
    assert backend.broken, "no turn was broken: the test did not exercise the path"
    assert result.error is None and result.complete
    warnings = [e for e in result.events if isinstance(e, EngineError) and e.level == "warning"]
    assert any("skipped" in w.error for w in warnings)
    assert result.transcript, "the debate went on after the skipped turn"
