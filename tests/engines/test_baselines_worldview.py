"""The direct/cot baselines and the shared worldview step, on the simulator, through the
leak-checking backend: one channel holds, and what they find comes from what replies said."""

from __future__ import annotations

import asyncio

import pytest

from crux_lab.engines.base import EngineContext
from crux_lab.engines.direct.direct import (
    CardPositionReply,
    CardReply,
    CardsReply,
    cards_from_reply,
)
from crux_lab.engines.worldview import (
    TYPE_MAP,
    Conflict,
    ConflictsReply,
    PairConflicts,
    Position,
    Worldview,
    pair_conflicts,
    run_worldview,
    worldview_cruxes,
)
from crux_lab.llm.base import LLMRequest, LLMResponse
from crux_lab.llm.ledger import Ledger
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.models import DebateConfig, DebateResult, Regime
from crux_lab.personas.loader import load_personas, propositions_for
from crux_lab.runner import run_debate
from tests.engines.leakcheck import LeakCheckingBackend

TOPIC = "Is Bitcoin a better long-term store of value than gold?"
IDS = ["michael-saylor", "peter-schiff"]


def checked_backend(ids: list[str], topic: str = TOPIC, seed: int = 3) -> LeakCheckingBackend:
    personas = load_personas(ids)
    props = propositions_for(ids)
    return LeakCheckingBackend(SimulatedBackend(personas, props, seed=seed), props, topic=topic)


@pytest.mark.parametrize("engine", ["direct", "cot"])
async def test_baseline_writes_cards_in_one_call_without_leaks(engine: str) -> None:
    backend = checked_backend(IDS)
    result = await run_debate(DebateConfig(topic=TOPIC, persona_ids=IDS, engine=engine, seed=3), backend=backend)
    assert backend.violations == []
    assert result.usage.calls == 1 and len(backend.requests) == 1
    prompt = backend.requests[0].system + backend.requests[0].user
    assert "Peter Schiff" in prompt and "What would change their mind" in prompt
    # The simulated analyst reads only the contracts: it writes a card only where they state
    # opposite sides outright, and otherwise says it found nothing (never consensus).
    for card in result.crux_cards:
        assert {p.position.value for p in card.personas.values()} >= {"YES", "NO"}
        assert card.diagnosis and "{" not in card.diagnosis
    assert [c.statement for c in result.cruxes] == [c.question for c in result.crux_cards]
    expected = (Regime.polarized, Regime.partial) if result.crux_cards else (Regime.no_disagreement_found,)
    assert result.regime in expected


async def test_cot_keeps_the_premise_not_the_topic() -> None:
    result = await run_debate(DebateConfig(topic=TOPIC, persona_ids=IDS, engine="cot", seed=3), backend=checked_backend(IDS))
    assert any(e.type == "status" and e.message.startswith("reasoning:") for e in result.events)
    assert all("better" not in c.question.lower() or "gold" not in c.question.lower() for c in result.crux_cards)


def test_a_card_naming_an_unknown_persona_keeps_its_known_positions() -> None:
    reply = CardsReply(cards=[
        CardReply(question="Do rents fall?", disagreement_type="evidence", positions=[
            CardPositionReply(persona="a", position="YES"), CardPositionReply(persona="b", position="NO"),
            CardPositionReply(persona="zz", position="NO")]),
        CardReply(question="Is it fair?", disagreement_type="values", positions=[
            CardPositionReply(persona="a", position="YES"), CardPositionReply(persona="q", position="NO")]),
    ])
    cards, warnings = cards_from_reply(reply, ["a", "b"], 6, "direct")
    assert [c.question for c in cards] == ["Do rents fall?"] and set(cards[0].personas) == {"a", "b"}
    # card 1: the unknown persona's position dropped; card 2: an unknown persona, then the card.
    assert len(warnings) == 3 and all(w.level == "warning" for w in warnings)
    assert "zz" in warnings[0].error and "card 2 dropped" in warnings[2].error


def test_a_card_asking_what_a_persona_believes_asks_the_claim_instead() -> None:
    # Qwen 1.5B's direct cards on Saylor and Schiff: "Does Peter Schiff believe that ...?"
    sides = [CardPositionReply(persona="michael-saylor", position="NO"), CardPositionReply(persona="peter-schiff", position="YES")]
    reply = CardsReply(cards=[
        CardReply(question="Does Peter Schiff believe that Bitcoin will be used to price goods? ", disagreement_type="claim", positions=sides),
        CardReply(question="Is Bitcoin's supply fixed?", disagreement_type="evidence", positions=sides),
        CardReply(question="Does Michael Saylor believe Bitcoin will be used to price goods?", disagreement_type="claim", positions=sides),
        CardReply(question="Does the law affect Seattle?", disagreement_type="claim", positions=[
            CardPositionReply(persona="michael-saylor", position="NO"), CardPositionReply(persona="peter-schiff", position="NO")]),
    ])
    cards, warnings = cards_from_reply(reply, {"michael-saylor": "Michael Saylor", "peter-schiff": "Peter Schiff"}, 6, "direct")
    assert [c.question for c in cards] == ["Is it true that Bitcoin will be used to price goods?", "Is Bitcoin's supply fixed?"]
    assert "Does Peter Schiff believe" in warnings[0].error and "card 1" in warnings[0].error
    # the third card asks the first one's claim once rewritten: it is dropped, and said so
    assert "card 3 dropped: an earlier card asks the same question" in warnings[2].error
    # a card both answer NO to divides no one (Qwen's Seattle card)
    assert len(warnings) == 4 and "card 4 dropped: every persona answers NO" in warnings[3].error


async def test_a_reply_off_schema_is_a_warning_and_nothing_found() -> None:
    class Broken:
        name = "broken"

        def model_for(self, tier: object) -> str:
            return "m"

        async def generate(self, request: object) -> object:
            from crux_lab.llm.base import LLMOutputError

            raise LLMOutputError("direct_cards", "bad field")

    result = await run_debate(DebateConfig(topic=TOPIC, persona_ids=IDS, engine="direct"), backend=Broken())  # type: ignore[arg-type]
    assert any(e.type == "engine_error" and e.level == "warning" for e in result.events)
    assert result.regime is Regime.no_disagreement_found and "unusable" in result.regime_description
    assert result.error is None


def worldview_ctx(backend: LeakCheckingBackend, ids: list[str], topic: str) -> EngineContext:
    config = DebateConfig(topic=topic, persona_ids=ids, engine="direct", seed=3)
    return EngineContext(
        config=config, backend=Ledger(backend, run_id="r"), personas=load_personas(ids), run_id="r",
        result=DebateResult(run_id="r", config=config, engine="direct", backend="simulated"),
    )


@pytest.mark.parametrize(
    ("ids", "topic"),
    [(IDS, TOPIC), (["yimby-economist", "neighborhood-preservationist", "tenant-organizer"], "Will building more housing make the city affordable?")],
)
def test_worldview_finds_typed_conflicting_assumptions_per_pair(ids: list[str], topic: str) -> None:
    backend = checked_backend(ids, topic)
    view = asyncio.run(run_worldview(worldview_ctx(backend, ids, topic)))
    assert backend.violations == []
    purposes = [r.purpose for r in backend.requests]
    # one positions call per persona, one reader call per pair
    n_pairs = len(ids) * (len(ids) - 1) // 2
    assert purposes.count("worldview_positions") == len(ids) and purposes.count("crux_pairs") == n_pairs
    assert len(view.pairs) == len(ids) * (len(ids) - 1) // 2
    assert all(view.positions[p] and all(x.assumptions for x in view.positions[p]) for p in ids)
    conflicts = [c for pair in view.pairs for c in pair.conflicts]
    assert conflicts, "no conflicting assumption between opposed personas"
    cruxes = worldview_cruxes(view)
    assert cruxes and all(c.disagreement_type in TYPE_MAP.values() for c in cruxes)
    for c in cruxes:
        assert c.settling_question and c.yes_side and c.no_side
        assert c.statement.strip().lower() != topic.strip().lower()
    # The pair extractor saw only the positions text: its prompt names no planted question.
    pair_prompts = [r.user for r in backend.requests if r.purpose == "crux_pairs"]
    assert all("assumes:" in p for p in pair_prompts)
    # each reading shows two personas' positions, by name, and every pair is read once
    names = [p.name for p in load_personas(ids).values()]
    shown = [frozenset(n for n in names if p.count(f"{n}'s positions:") == 1) for p in pair_prompts]
    assert all(len(s) == 2 for s in shown) and len(set(shown)) == n_pairs


class _Conflicts:
    """Answers every conflicts call with one fixed reply (what a tiny real model wrote)."""

    name = "fixed"

    def __init__(self, reply: ConflictsReply) -> None:
        self.reply = reply

    def model_for(self, tier: object) -> str:
        return "m"

    async def generate(self, request: LLMRequest) -> LLMResponse:
        return LLMResponse(text=self.reply.model_dump_json(), parsed=self.reply, model="m", backend=self.name)


def test_a_conflict_with_one_assumption_on_both_sides_is_dropped_and_repeated_sides_are_listed_once() -> None:
    same, other = "The accepted value of a thing is what is claimed.", "The accepted value of a thing is the opposite of what is claimed."
    q = "Is the accepted value of a thing what is claimed?"
    reply = ConflictsReply(conflicts=[
        Conflict(assumption_a=same, assumption_b=same.lower().rstrip("."), type="value", settling_question=q),
        Conflict(assumption_a=other, assumption_b=same, type="value", settling_question=q),
        Conflict(assumption_a=other, assumption_b=same, type="value", settling_question=q),
    ])
    positions = {p: [Position(position="Bitcoin wins.", assumptions=["x"])] for p in IDS}
    ctx = worldview_ctx(_Conflicts(reply), IDS, TOPIC)  # type: ignore[arg-type]
    conflicts, warning = asyncio.run(pair_conflicts(ctx, IDS[0], IDS[1], positions, TOPIC))
    assert len(conflicts) == 2 and all(c.assumption_a == other for c in conflicts)
    assert warning is not None and warning.level == "warning" and "same assumption" in warning.error
    [crux] = worldview_cruxes(Worldview(pairs=[PairConflicts(IDS[0], IDS[1], conflicts)]))
    assert [(s.persona_id, s.statement) for s in crux.yes_side] == [(IDS[0], other)]
    assert [(s.persona_id, s.statement) for s in crux.no_side] == [(IDS[1], same)]
