"""Blitz mode: tables, convergence metrics, the full run on the simulator."""

from __future__ import annotations

from collections import Counter

import pytest

from crux_lab.engines.blackboard.blitz import make_turn
from crux_lab.engines.blackboard.board import (
    BlackboardTurnReply,
    ConvergenceRule,
    check_convergence,
    confidence_distance,
    stance_entropy,
)
from crux_lab.engines.blackboard.claims import AgentStance, Claim, assign_tables
from crux_lab.engines.guards import Said, TurnGuard
from crux_lab.llm.base import LLMOutputError, LLMRequest, LLMResponse
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.llm.simulated.core import split_sentences
from crux_lab.models import DebateConfig, Tier
from crux_lab.personas.loader import load_decks, load_personas, propositions_for
from crux_lab.runner import run_debate
from tests.engines.sim_reader import Reader


def shipped_deck() -> tuple[list[str], str]:
    decks = [d for d in load_decks() if len(d.persona_ids) >= 4]
    if not decks:
        pytest.skip("no shipped deck with 4 personas")
    return decks[0].persona_ids[:4], decks[0].topics[0]


class OffSchema:
    """The simulator, except that one persona's replies for ``purpose`` stay off-schema after
    the backend's repair (a reply missing its ``stance``), as a weak model's might."""

    def __init__(self, inner: SimulatedBackend, purpose: str, persona_id: str) -> None:
        self.inner, self.purpose, self.persona_id, self.name = inner, purpose, persona_id, "off-schema"

    def model_for(self, tier: Tier) -> str:
        return self.inner.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        if request.purpose == self.purpose and request.hints.speaker_id == self.persona_id:
            raise LLMOutputError(request.purpose, "stance: Field required")
        return await self.inner.generate(request)


@pytest.mark.parametrize("n", range(2, 25))
def test_tables_hold_3_to_5_and_seat_everyone_once(n: int) -> None:
    ids = [f"p{i}" for i in range(n)]
    tables = assign_tables(ids, seed=n)
    seated = [p for t in tables for p in t]
    assert sorted(seated) == sorted(ids)
    if n >= 6:
        assert all(3 <= len(t) <= 5 for t in tables)
    else:
        assert tables == [ids]


def test_entropy_and_distance_bounds() -> None:
    assert stance_entropy(["pro"] * 4) == 0.0
    assert stance_entropy(["pro", "con", "uncertain"]) == pytest.approx(1.0)
    assert 0 < stance_entropy(["pro", "pro", "con"]) < 1
    a = {"c": AgentStance("c", "pro", 1.0)}
    b = {"c": AgentStance("c", "con", 1.0)}
    assert confidence_distance(a, b) == 1.0
    assert confidence_distance(a, {"c": AgentStance("c", "uncertain", 0.9)}) == 0.5


def test_convergence_stops_on_consensus_divergence_and_max_rounds() -> None:
    rule = ConvergenceRule(max_rounds=5, entropy_threshold=0.3, divergence_distance=0.4, divergence_rounds=2)
    assert check_convergence([0.9, 0.1], [0.6, 0.1], rule)[1].startswith("consensus")
    # Low mean entropy does not stop a table while someone is still pro and someone con.
    assert check_convergence([0.9, 0.1], [0.6, 0.1], rule, disputed=1) == (False, "")
    assert check_convergence([0.9, 0.9, 0.9], [0.6, 0.6, 0.6], rule)[1].startswith("divergence")
    # Distance shrinking: no divergence yet.
    assert check_convergence([0.9, 0.9, 0.9], [0.8, 0.6, 0.5], rule) == (False, "")
    assert check_convergence([0.9] * 6, [0.8, 0.7, 0.6, 0.5, 0.45, 0.41], rule)[1].startswith("max rounds")


async def test_blitz_run_follows_the_seed_pipeline() -> None:
    ids, topic = shipped_deck()
    result = await run_debate(DebateConfig(topic=topic, persona_ids=ids, engine="blitz", seed=3))
    assert result.complete and result.error is None
    types = [e.type for e in result.events]
    assert types[0] == "debate_start" and types[-1] == "debate_complete"
    assert types.index("claims_decomposed") < types.index("table_assigned") < types.index("initial_stance")
    assert types.count("initial_stance") == len(ids)
    assert max(i for i, t in enumerate(types) if t == "initial_stance") < types.index("agent_turn")

    claims = next(e for e in result.events if e.type == "claims_decomposed").claims  # type: ignore[union-attr]
    assert 2 <= len(claims) <= 4
    rounds = types.count("convergence_update")
    assert types.count("blackboard_update") == rounds >= 1
    # Parallel rounds: every agent posts once per round.
    assert types.count("agent_turn") == rounds * len(ids)
    updates = [e for e in result.events if e.type == "convergence_update"]
    assert updates[-1].converged and not any(u.converged for u in updates[:-1])  # type: ignore[union-attr]

    purposes = Counter(c.purpose for c in result.llm_calls)
    assert purposes["decompose_claims"] == 1 and purposes["final_output"] == 1
    assert purposes["initial_stance"] == len(ids)
    assert purposes["blackboard_turn"] == rounds * len(ids)
    assert purposes["blackboard_summary"] == rounds  # one table
    tiers = {c.purpose: c.tier for c in result.llm_calls}
    assert tiers["decompose_claims"] is Tier.fast and tiers["final_output"] is Tier.fast
    assert tiers["blackboard_summary"] is Tier.fast and tiers["initial_stance"] is Tier.strong
    assert len(result.transcript) == rounds * len(ids)  # built by the runner from agent_turn


async def test_blitz_cruxes_are_real_disagreements_and_common_ground_is_unanimous() -> None:
    ids, topic = shipped_deck()
    result = await run_debate(DebateConfig(topic=topic, persona_ids=ids, engine="blitz", seed=5))
    reader = Reader(ids)
    final = {p.persona_id: p for p in result.positions if p.at == "final"}
    assert set(final) == set(ids)
    claims = next(e for e in result.events if e.type == "claims_decomposed").claims  # type: ignore[union-attr]
    assert claims and all(reader.proposition(c) is not None for c in claims)  # decomposed from the topic
    planted = {p.text for p in reader.propositions.values()} | {p.question for p in reader.propositions.values()}
    assert not planted & set(claims)  # in the decomposer's own words, not the deck's
    assert result.cruxes, "a deck with contested propositions must yield cruxes"
    for crux in result.cruxes:
        assert crux.source == "blackboard" and not crux.proposition_ids
        assert crux.yes_side and crux.no_side
        assert {s.persona_id for s in crux.yes_side}.isdisjoint({s.persona_id for s in crux.no_side})
        # the summariser's text is a sentence the agents' posts said (which may be a persona's own
        # stance in the deck's words), never the topic
        said = {x for t in result.transcript for x in split_sentences(t.dialogue)}
        assert crux.statement in said and crux.statement.strip("?") != topic.strip("?")
        # Read against the ground truth: someone truly pro, someone truly con.
        assert reader.contested(reader.proposition(crux.statement)), crux.statement
    claim_id = {text: f"c{i + 1}" for i, text in enumerate(claims)}  # the engine's own ids
    for ground in result.common_ground:
        key = next(cid for text, cid in claim_id.items() if ground.statement.endswith(text))
        held = {final[p].stances[key] for p in ids}
        assert held == {"pro" if ground.agreed_side and ground.agreed_side.value == "YES" else "con"}
    assert result.regime.value in ("consensus", "polarized", "partial")
    assert result.fault_lines and result.resolution_paths
    assert set(result.flip_conditions) <= set(ids)


async def test_blitz_learns_stances_and_addressed_claims_from_the_replies() -> None:
    ids, topic = shipped_deck()
    result = await run_debate(DebateConfig(topic=topic, persona_ids=ids, engine="blitz", seed=1))
    assert result.complete and result.error is None
    claim_ids = {f"c{i + 1}" for i in range(len(next(e for e in result.events if e.type == "claims_decomposed").claims))}  # type: ignore[union-attr]
    assert result.transcript and all(t.stance in ("pro", "con", "uncertain") for t in result.transcript)
    assert all(t.proposition_ids and set(t.proposition_ids) <= claim_ids for t in result.transcript)
    assert all(t.move is not None for t in result.transcript)  # every reply stated its move
    for event in (e for e in result.events if e.type == "initial_stance"):
        assert set(event.stances) == claim_ids  # type: ignore[union-attr]


async def test_a_reply_that_stays_off_schema_skips_that_turn_with_a_warning() -> None:
    ids, topic = shipped_deck()
    sim = SimulatedBackend(load_personas(ids), propositions_for(ids), seed=1)
    config = DebateConfig(topic=topic, persona_ids=ids, engine="blitz", seed=1, params={"max_rounds": 2})
    result = await run_debate(config, backend=OffSchema(sim, "blackboard_turn", ids[1]))
    assert result.complete and result.error is None
    warnings = [e for e in result.events if e.type == "engine_error" and not e.purpose.startswith("guard_")]  # type: ignore[union-attr]
    assert warnings and all(w.level == "warning" and w.purpose == "blackboard_turn" for w in warnings)  # type: ignore[union-attr]
    assert all(ids[1] in w.error and "skipped" in w.error for w in warnings)  # type: ignore[union-attr]
    speakers = {t.persona_id for t in result.transcript}
    assert ids[1] not in speakers and speakers == set(ids) - {ids[1]}  # the others debated on
    assert [e.seq for e in result.events] == sorted(e.seq for e in result.events)


async def test_more_than_five_personas_sit_at_several_tables_with_their_own_blackboards() -> None:
    decks = load_decks()
    ids = [p for d in decks for p in d.persona_ids][:7]
    if len(ids) < 6:
        pytest.skip("fewer than 6 shipped personas")
    # No shipped deck seats 6: mix decks on an explicit simulator (the CLI's one-deck check is
    # for users; seating and blackboards do not depend on it).
    sim = SimulatedBackend(load_personas(ids), propositions_for(ids), seed=2)
    result = await run_debate(DebateConfig(topic=decks[0].topics[0], persona_ids=ids, engine="blitz", seed=2,
                                           params={"max_rounds": 2}), backend=sim)
    assert result.complete
    tables = next(e for e in result.events if e.type == "table_assigned").tables  # type: ignore[union-attr]
    assert len(tables) == 2 and all(3 <= len(t) <= 5 for t in tables)
    assert sorted(p for t in tables for p in t) == sorted(ids)
    updates = [e for e in result.events if e.type == "blackboard_update"]
    assert {u.summary.split(":")[0] for u in updates} == {"Table 1", "Table 2"}  # type: ignore[union-attr]
    summaries = Counter(c.purpose for c in result.llm_calls)["blackboard_summary"]
    assert summaries == len(updates)  # one summary per table per round
    assert Counter(c.purpose for c in result.llm_calls)["final_output"] == 1  # the final table consolidates
    assert {p.persona_id for p in result.positions if p.at == "final"} == set(ids)


async def test_failure_knobs_move_blitz_but_not_graph_cruxes() -> None:
    """Sycophancy drains stances; vague cruxes hit the generated output of blitz, while graph
    mode computes its cruxes from the graph and is immune to the vague-crux failure."""
    from crux_lab.llm.simulated.options import SimulatorKnobs

    ids, topic = shipped_deck()

    async def run(engine: str, **knobs: float):  # type: ignore[no-untyped-def]
        return await run_debate(DebateConfig(topic=topic, persona_ids=ids, engine=engine, seed=1, backend_options=SimulatorKnobs(**knobs).as_options()))

    def uncertain(result) -> int:  # type: ignore[no-untyped-def]
        return sum(1 for p in result.positions if p.at == "final" for s in p.stances.values() if s == "uncertain")

    base, syco, vague = await run("blitz"), await run("blitz", sycophancy=1.0), await run("blitz", vague_crux=1.0)
    assert uncertain(syco) > uncertain(base)
    assert any(t.move is not None and t.move.value == "CONCEDE" for t in syco.transcript)
    assert not any(t.move is not None and t.move.value == "CONCEDE" for t in base.transcript)
    assert base.cruxes and all(c.yes_side and c.no_side for c in base.cruxes)
    assert vague.cruxes and all(not c.yes_side and c.statement == "The participants weigh the issue differently." for c in vague.cruxes)
    graph_base, graph_vague = await run("graph"), await run("graph", vague_crux=1.0)
    assert [c.statement for c in graph_base.cruxes] == [c.statement for c in graph_vague.cruxes]


def test_a_post_states_its_stance_on_the_rounds_claim_whatever_else_it_names() -> None:
    """A post's format asks its stance on the round's claim; a reply that lists only another
    claim it addresses is still read, and recorded, on the round's claim first."""
    saylor = "Bitcoin's supply is capped at 21 million coins, and no central bank can print more of it."
    earlier = [Said("michael-saylor", "Michael Saylor", saylor, "pro", None, ("c1",))]
    reply = BlackboardTurnReply(
        content="Bitcoin is too young and too volatile to store anyone's savings for decades.",
        stance="con", confidence=0.7, addresses=["c2"],
    )
    turn = make_turn(3, "michael-saylor", reply, Claim("c1", "Bitcoin is a better store of value."), 1, ["c1", "c2"])
    assert turn.proposition_ids == ["c1", "c2"] and turn.stance == "con"
    on_round = TurnGuard("michael-saylor", "Bitcoin or gold?", earlier, stance_on=("c1",))
    found = on_round.check_reply(reply)
    assert found is not None and found.guard == "role"  # con on c1, where he said pro with no reason
    # read on the claims it lists instead, the same post contradicts nothing he said
    assert TurnGuard("michael-saylor", "Bitcoin or gold?", earlier).check_reply(reply) is None
