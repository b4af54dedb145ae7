"""One channel, for every engine: a debate on the simulator, with each request and reply
checked by :class:`tests.engines.leakcheck.LeakCheckingBackend`, leaks no ground truth, and
still finds the disagreement from what the replies said."""

from __future__ import annotations

import pytest

from crux_lab.engines import available
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.models import DebateConfig
from crux_lab.personas.loader import load_personas, propositions_for
from crux_lab.runner import run_debate
from tests.engines.leakcheck import LeakCheckingBackend

TOPIC = "Is Bitcoin a better long-term store of value than gold?"
CONTRACT_ONLY = {"direct", "cot"}  # the one-call baselines: no debate, only the personas' contracts
PAIRS = {
    "panel": ["michael-saylor", "peter-schiff", "arthur-hayes"],
    "crux_rooms": ["michael-saylor", "peter-schiff", "arthur-hayes"],
}


@pytest.mark.parametrize("engine", sorted(available()))
async def test_no_ground_truth_reaches_a_hint_a_reply_or_an_extractor(engine: str) -> None:
    ids = PAIRS.get(engine, ["michael-saylor", "peter-schiff"])
    personas = load_personas(ids)
    props = propositions_for(ids)
    backend = LeakCheckingBackend(SimulatedBackend(personas, props, seed=3), props, topic=TOPIC)
    config = DebateConfig(topic=TOPIC, persona_ids=ids, engine=engine, max_turns=14, seed=3)
    result = await run_debate(config, backend=backend)
    assert backend.requests, "the engine made no call"
    assert backend.violations == []
    found = len(result.cruxes) + len(result.crux_cards) + len(result.dcg.disputes)
    # what the debate proposed and the poll then ruled out (asked alone, the personas did not split)
    found += len(result.poll.not_split) + sum(g.poll is not None for g in result.common_ground) if result.poll else 0
    if engine in CONTRACT_ONLY:
        # One call that sees only the contracts: on the simulator it finds what they state
        # outright, and says so when that is nothing (never consensus).
        assert found > 0 or result.regime.value == "no_disagreement_found"
        return
    # From what the replies said alone, a debating engine still finds where these two disagree.
    assert found > 0, f"{engine} found no disagreement between two opposed personas"
