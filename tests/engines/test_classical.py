"""Classical mode: urgency-selected sequential turns with intent tracking."""

from __future__ import annotations

from collections import Counter
from typing import get_args

import pytest

from crux_lab.engines.blackboard.board import Blackboard
from crux_lab.engines.blackboard.classical import Intent, UrgencyReply, pick_speaker
from crux_lab.llm.base import LLMRequest, LLMResponse
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.models import DebateConfig, Tier
from crux_lab.personas.loader import load_decks, load_personas, propositions_for
from crux_lab.runner import run_debate


def shipped_deck() -> tuple[list[str], str]:
    decks = [d for d in load_decks() if len(d.persona_ids) >= 4]
    if not decks:
        pytest.skip("no shipped deck with 4 personas")
    return decks[0].persona_ids[:4], decks[0].topics[0]


class FixedUrgency:
    """Simulator for everything but urgency, which follows a fixed ranking per persona."""

    def __init__(self, inner: SimulatedBackend, ranking: dict[str, float]) -> None:
        self.inner, self.ranking, self.name = inner, ranking, "fixed-urgency"
        self.spoken: list[str] = []

    def model_for(self, tier: Tier) -> str:
        return self.inner.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        if request.purpose != "urgency":
            return await self.inner.generate(request)
        me = request.hints.speaker_id or ""
        last = request.hints.turns[-1].speaker_id if request.hints.turns else None
        score = 0.0 if me == last else self.ranking[me]
        reply = UrgencyReply(urgency=score, intent="challenge", claim_id="c1")
        return LLMResponse(text=reply.model_dump_json(), parsed=reply, model="fixed", backend=self.name)


def test_pick_speaker_takes_the_most_urgent_then_the_least_recent() -> None:
    board = Blackboard(0, ["a", "b", "c"], [])
    scores = {"a": UrgencyReply(urgency=0.2), "b": UrgencyReply(urgency=0.9), "c": UrgencyReply(urgency=0.5)}
    assert pick_speaker(board, scores) == "b"
    tie = {p: UrgencyReply(urgency=0.5) for p in "abc"}
    assert pick_speaker(board, tie) == "a"


async def test_classical_run_is_sequential_and_tracks_intent() -> None:
    ids, topic = shipped_deck()
    result = await run_debate(DebateConfig(topic=topic, persona_ids=ids, engine="classical", seed=2))
    assert result.complete and result.error is None
    turns = [e for e in result.events if e.type == "agent_turn"]
    assert turns
    purposes = Counter(c.purpose for c in result.llm_calls)
    # Every turn costs one urgency call per agent (the mode's known cost) and one post.
    assert purposes["urgency"] == len(turns) * len(ids)
    assert purposes["blackboard_turn"] == len(turns)
    assert all(c.tier is Tier.fast for c in result.llm_calls if c.purpose == "urgency")
    assert [t.turn.turn_index for t in turns] == list(range(len(turns)))  # type: ignore[union-attr]
    intents = set(get_args(Intent))
    for event in turns:
        assert event.intent in intents  # type: ignore[union-attr]
        assert event.urgency is not None and 0.0 <= event.urgency <= 1.0  # type: ignore[union-attr]
    speakers = [t.turn.persona_id for t in turns]  # type: ignore[union-attr]
    assert all(a != b for a, b in zip(speakers, speakers[1:], strict=False)), "nobody wants the floor twice in a row"
    # A round is one turn per agent; each ends with a blackboard update and a convergence check.
    rounds = [e for e in result.events if e.type == "convergence_update"]
    assert len(turns) == len(rounds) * len(ids)
    assert rounds[-1].converged  # type: ignore[union-attr]
    assert result.cruxes and result.regime.value != "unknown"


async def test_the_most_urgent_agent_speaks() -> None:
    ids, topic = shipped_deck()
    sim = SimulatedBackend(load_personas(ids), propositions_for(ids), seed=0)
    ranking = {pid: 0.9 - 0.2 * i for i, pid in enumerate(ids)}
    backend = FixedUrgency(sim, ranking)
    config = DebateConfig(topic=topic, persona_ids=ids, engine="classical", seed=0, params={"max_rounds": 1})
    result = await run_debate(config, backend=backend)
    speakers = [t.persona_id for t in result.transcript]
    # Highest ranked speaks; next turn they are silent (score 0) so the runner-up speaks, and so on.
    assert speakers == [ids[0], ids[1], ids[0], ids[1]]


async def test_classical_posts_state_their_claim_and_the_urgency_call_sees_no_positions() -> None:
    ids, topic = shipped_deck()
    sim = SimulatedBackend(load_personas(ids), propositions_for(ids), seed=2)
    seen: list[LLMRequest] = []

    class Recording:
        name = "recording"

        def model_for(self, tier: Tier) -> str:
            return sim.model_for(tier)

        async def generate(self, request: LLMRequest) -> LLMResponse:
            seen.append(request)
            return await sim.generate(request)

    result = await run_debate(DebateConfig(topic=topic, persona_ids=ids, engine="classical", seed=2), backend=Recording())
    claim_ids = {f"c{i + 1}" for i in range(len(next(e for e in result.events if e.type == "claims_decomposed").claims))}  # type: ignore[union-attr]
    assert result.transcript and all(set(t.proposition_ids) <= claim_ids and t.proposition_ids for t in result.transcript)
    # Urgency decides when to speak: its prompt holds the persona's contract, not its deck positions.
    planted = [p.text.rstrip(".") for p in propositions_for(ids).values()]
    urgency = [r for r in seen if r.purpose == "urgency"]
    assert urgency and not any(w in r.system for r in urgency for w in planted)
    intents = {e.intent for e in result.events if e.type == "agent_turn"}  # type: ignore[union-attr]
    assert len(intents) > 1  # the agents' stated intents vary with the posts they read


async def test_classical_respects_the_turn_budget() -> None:
    ids, topic = shipped_deck()
    config = DebateConfig(topic=topic, persona_ids=ids, engine="classical", max_turns=3, params={"max_rounds": 5})
    result = await run_debate(config)
    assert result.complete and len(result.transcript) == 3
    assert any(e.type == "status" and "Turn budget" in e.message for e in result.events)  # type: ignore[union-attr]
