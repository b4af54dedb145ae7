"""Graph mode: the Dung semantics, the crux extraction and its mapping, and a full run's events in order."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from crux_lab.engines.blackboard.graph_state import (
    ArgMeta,
    add_arguments,
    add_attacks,
    contradictory_pairs,
    create_graph_state,
    deduplicate_attacks,
    extract_graph_output,
    map_to_debate_output,
    recompute_semantics,
)
from crux_lab.llm.base import LLMOutputError, LLMRequest, LLMResponse
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.llm.simulated.options import SimulatorKnobs
from crux_lab.models import (
    Argument,
    Attack,
    AttackTarget,
    AttackType,
    DebateConfig,
    DebateResult,
    Label,
    Tier,
    ValidationResult,
)
from crux_lab.personas.loader import load_decks, load_personas, propositions_for
from crux_lab.runner import run_debate
from tests.engines.sim_reader import Reader


def shipped_deck(n: int = 4) -> tuple[list[str], str]:
    decks = [d for d in load_decks() if len(d.persona_ids) >= n]
    if not decks:
        pytest.skip(f"no shipped deck with {n} personas")
    return decks[0].persona_ids[:n], decks[0].topics[0]


def graph_of(args: str, edges: list[tuple[str, str]], speakers: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    state = add_arguments(
        create_graph_state("t"),
        [Argument(id=a, speaker_id=(speakers or {}).get(a, "p"), claim=f"claim {a}") for a in args],
    )
    attacks = [Attack(id=f"k{i}", from_arg_id=x, to_arg_id=y, target=AttackTarget(arg_id=y)) for i, (x, y) in enumerate(edges)]
    state = add_attacks(state, attacks, [ValidationResult(attack_id=a.id, valid=True) for a in attacks])
    return recompute_semantics(state)


# ---------------------------------------------------------------------------
# Checklist 1: the Dung engine
# ---------------------------------------------------------------------------


def labels(state) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {a: lab.value for a, lab in sorted(state.labelling.items())}


def test_empty_graph() -> None:
    s = graph_of("", [])
    assert s.grounded == frozenset() and s.preferred == (frozenset(),) and s.preferred_count == 1


def test_single_argument_is_in() -> None:
    s = graph_of("a", [])
    assert labels(s) == {"a": "IN"} and s.preferred == (frozenset({"a"}),)


def test_chain() -> None:
    s = graph_of("abc", [("a", "b"), ("b", "c")])
    assert labels(s) == {"a": "IN", "b": "OUT", "c": "IN"}
    assert s.grounded == {"a", "c"} and s.preferred_count == 1


def test_mutual_attack_is_undecided_with_two_camps() -> None:
    s = graph_of("ab", [("a", "b"), ("b", "a")])
    assert labels(s) == {"a": "UNDEC", "b": "UNDEC"}
    assert set(s.preferred) == {frozenset({"a"}), frozenset({"b"})}


def test_odd_cycle_has_only_the_empty_preferred_extension() -> None:
    s = graph_of("abc", [("a", "b"), ("b", "c"), ("c", "a")])
    assert set(labels(s).values()) == {"UNDEC"}
    assert s.preferred == (frozenset(),)


def test_nixon_diamond() -> None:
    # quaker -> pacifist vs republican -> not pacifist, plus an uncontested fact.
    s = graph_of(["pacifist", "hawk", "nixon"], [("pacifist", "hawk"), ("hawk", "pacifist")])  # type: ignore[arg-type]
    assert s.grounded == {"nixon"}
    assert set(s.preferred) == {frozenset({"pacifist", "nixon"}), frozenset({"hawk", "nixon"})}


def test_unvalidated_attacks_never_enter_the_framework() -> None:
    state = add_arguments(create_graph_state("t"), [Argument(id=a, speaker_id="p", claim=a) for a in "ab"])
    atk = Attack(id="k", from_arg_id="a", to_arg_id="b", target=AttackTarget(arg_id="b"))
    state = recompute_semantics(add_attacks(state, [atk], [ValidationResult(attack_id="k", valid=False)]))
    assert state.attacks == () and labels(state) == {"a": "IN", "b": "IN"}


def test_deduplication_keeps_the_most_confident_per_target_component_index_type() -> None:
    def atk(i: str, to: str, conf: float, kind: AttackType = AttackType.rebut, index: int = 0) -> Attack:
        return Attack(id=i, from_arg_id="x" + i, to_arg_id=to, type=kind, confidence=conf,
                      target=AttackTarget(arg_id=to, index=index))
    kept = deduplicate_attacks([atk("1", "b", .4), atk("2", "b", .8), atk("3", "b", .9, AttackType.undermine), atk("4", "c", .1)])
    assert [a.id for a in kept] == ["2", "3", "4"]
    assert deduplicate_attacks([atk("5", "c", 1.0)], existing=kept) == []


# ---------------------------------------------------------------------------
# Checklist 2: the crux extractor and mapToDebateOutput
# ---------------------------------------------------------------------------


def two_camp_state():  # type: ignore[no-untyped-def]
    args = [
        Argument(id="s1", speaker_id="saylor", claim="Adoption is inevitable.", assumptions=["adoption is deterministic", "supply is fixed"], evidence=["e-s1"]),
        Argument(id="s2", speaker_id="saylor", claim="Volatility fades.", assumptions=["adoption is deterministic"], evidence=["e-s2"]),
        Argument(id="h1", speaker_id="hayes", claim="Adoption follows liquidity.", assumptions=["policy drives adoption"], evidence=["e-h1"]),
        Argument(id="h2", speaker_id="hayes", claim="Volatility persists.", assumptions=["policy drives adoption"]),
        Argument(id="x", speaker_id="hayes", claim="The ledger works.", assumptions=["the ledger works"]),
        Argument(id="w", speaker_id="saylor", claim="A weak point.", assumptions=[]),
    ]
    edges = [("s1", "h1"), ("h1", "s1"), ("s2", "h2"), ("h2", "s2"), ("s1", "h2"), ("h1", "s2"), ("x", "w")]
    state = add_arguments(create_graph_state("t"), args, {
        "s1": ArgMeta("c1", "pro"), "h1": ArgMeta("c1", "con"), "s2": ArgMeta("c2", "pro"), "h2": ArgMeta("c2", "con"),
    })
    attacks = [Attack(id=f"k{i}", from_arg_id=a, to_arg_id=b, target=AttackTarget(arg_id=b)) for i, (a, b) in enumerate(edges)]
    state = add_attacks(state, attacks, [ValidationResult(attack_id=a.id, valid=True) for a in attacks])
    return recompute_semantics(state)


def test_symmetric_difference_and_assumption_ranking() -> None:
    state = two_camp_state()
    report = extract_graph_output(state)
    assert set(report.common_ground) == {"x"}
    assert set(report.symmetric_difference) == {"s1", "s2", "h1", "h2"}
    ranked = [c.assumption for c in report.crux_assumptions]
    # Two dependents each come first (ties broken by centrality); the single-dependent one last.
    assert set(ranked[:2]) == {"adoption is deterministic", "policy drives adoption"}
    assert ranked[2] == "supply is fixed"
    assert all(c.settling_question.endswith("?") for c in report.crux_assumptions)


def test_map_to_debate_output_fills_the_common_fields() -> None:
    state = two_camp_state()
    result = DebateResult(run_id="r", config=DebateConfig(topic="t", persona_ids=["saylor", "hayes"]), engine="graph", backend="x")
    claims = {"c1": "Adoption is settled by fundamentals.", "c2": "Volatility is temporary."}
    fake = map_to_debate_output(extract_graph_output(state), state, ["saylor", "hayes"], result, claims)
    assert fake == []
    assert [c.statement for c in result.cruxes][:2] == [c.assumption for c in extract_graph_output(state).crux_assumptions][:2]
    assumed = [c for c in result.cruxes if c.source == "assumption"]
    assert len(assumed) == 3 and all(c.settling_question for c in assumed)
    # The claims the graph leaves split: shown as the two sides' claims, labelled by persona.
    split = {c.statement: c for c in result.cruxes if c.source == "symmetric_difference"}
    assert set(split) == set(claims.values())
    top = split["Adoption is settled by fundamentals."]
    assert [(s.persona_id, s.statement) for s in top.yes_side] == [("saylor", "Adoption is inevitable.")]
    assert [(s.persona_id, s.statement) for s in top.no_side] == [("hayes", "Adoption follows liquidity.")]
    top = result.cruxes[0]
    assert top.yes_side and top.no_side  # one camp each side
    assert {s.persona_id for s in top.yes_side} != {s.persona_id for s in top.no_side}
    # Camps are groups of personas (by the stances they argued), fault lines one per disputed claim.
    assert [c.persona_ids for c in result.camps] == [["hayes"], ["saylor"]]
    assert result.camps[1].label == "for: Adoption is settled by fundamentals; for: Volatility is temporary"
    assert result.fault_lines == ["saylor for, hayes against: Adoption is settled by fundamentals",
                                  "saylor for, hayes against: Volatility is temporary"]
    assert result.resolution_paths == [c.settling_question for c in assumed]
    assert result.evidence_ledger == {"saylor": ["e-s1", "e-s2"], "hayes": ["e-h1"]}
    assert "saylor" in result.flip_conditions and "w" in result.flip_conditions["saylor"][0] or "A weak point" in result.flip_conditions["saylor"][0]
    # x is grounded (plain Dung common ground) but attacks saylor's w: accepted, not agreed.
    assert result.common_ground == []
    assert [(w.argument_id, w.target_argument_ids) for w in result.accepted_claims] == [("x", ["w"])]
    assert result.regime.value in ("polarized", "partial") and result.graph.preferred_count == 2
    assert "2 preferred extensions" in result.regime_description and "camp" not in result.regime_description


def test_contradictions_without_an_edge_are_not_common_ground() -> None:
    state = add_arguments(
        create_graph_state("t"),
        [Argument(id="a", speaker_id="p", claim="X."), Argument(id="b", speaker_id="q", claim="Not X.")],
        {"a": ArgMeta("c1", "pro"), "b": ArgMeta("c1", "con")},
    )
    state = recompute_semantics(state)
    assert contradictory_pairs(state, state.grounded) == [("a", "b")]
    result = DebateResult(run_id="r", config=DebateConfig(topic="t", persona_ids=["p", "q"]), engine="graph", backend="x")
    assert map_to_debate_output(extract_graph_output(state), state, ["p", "q"], result) == [("a", "b")]
    assert result.common_ground == []


def test_attacked_and_defended_arguments_are_accepted_claims_not_common_ground() -> None:
    # q attacks p's a; p's d defeats the attacker b; u is never attacked by anyone.
    speakers = {"a": "p", "d": "p", "b": "q", "u": "q"}
    state = graph_of("abdu", [("b", "a"), ("d", "b")], speakers)
    assert set(state.grounded) == {"a", "d", "u"}
    result = DebateResult(run_id="r", config=DebateConfig(topic="t", persona_ids=["p", "q"]), engine="graph", backend="x")
    map_to_debate_output(extract_graph_output(state), state, ["p", "q"], result)
    assert [g.argument_id for g in result.common_ground] == ["u"]
    won = {w.argument_id: w for w in result.accepted_claims}
    assert set(won) == {"a", "d"}
    assert won["a"].attacked_by == ["q"] and won["a"].attacker_argument_ids == ["b"]
    assert won["a"].defender_argument_ids == ["d"]
    assert won["d"].target_argument_ids == ["b"] and won["d"].attacked_by == []
    assert "accepted but contested" in result.regime_description


def test_an_unattacked_argument_opposed_by_another_persona_is_not_common_ground() -> None:
    # r argued con on p1 and lost to a counter-argument; p and q's pro arguments stand unattacked.
    state = add_arguments(
        create_graph_state("t"),
        [Argument(id=i, speaker_id=s, claim=i) for i, s in (("a", "p"), ("b", "q"), ("c", "r"), ("k", "q"))],
        {"a": ArgMeta("c1", "pro"), "b": ArgMeta("c1", "pro"), "c": ArgMeta("c1", "con"), "k": ArgMeta("c2", "pro")},
    )
    attack = Attack(id="k0", from_arg_id="k", to_arg_id="c", target=AttackTarget(arg_id="c"))
    state = recompute_semantics(add_attacks(state, [attack], [ValidationResult(attack_id="k0", valid=True)]))
    result = DebateResult(run_id="r", config=DebateConfig(topic="t", persona_ids=["p", "q", "r"]), engine="graph", backend="x")
    map_to_debate_output(extract_graph_output(state), state, ["p", "q", "r"], result)
    assert result.common_ground == []
    won = {w.argument_id: w for w in result.accepted_claims}
    assert won["a"].opposing_argument_ids == ["c"] and won["k"].target_argument_ids == ["c"]


async def test_graph_reports_no_contested_proposition_as_common_ground_on_scenarios(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from crux_lab.analysis.scenarios import generate_scenarios, use_library, write_library

    scenarios = generate_scenarios(3, seed=0)
    write_library(scenarios, tmp_path)
    accepted = 0
    with use_library(tmp_path):
        for k, scenario in enumerate(scenarios):
            result = await run_debate(scenario.config("graph", seed=k))
            reader = Reader(result.config.persona_ids)
            contested = set(scenario.contested)
            # Read each common-ground statement for the belief it states, against the ground truth.
            said = {reader.proposition(g.statement) for g in result.common_ground}
            assert not said & contested, [g.statement for g in result.common_ground]
            accepted += len(result.accepted_claims)
    assert accepted > 0  # the contested winners are still reported, as accepted claims


def test_no_conflict_is_no_disagreement_found_and_agreement_needs_every_persona() -> None:
    args = [Argument(id=i, speaker_id=s, claim=f"claim {i}") for i, s in (("a", "p"), ("b", "q"))]
    result = DebateResult(run_id="r", config=DebateConfig(topic="t", persona_ids=["p", "q"]), engine="graph", backend="x")

    def run(meta: dict[str, ArgMeta]) -> DebateResult:
        state = recompute_semantics(add_arguments(create_graph_state("t"), args, meta))
        map_to_debate_output(extract_graph_output(state), state, ["p", "q"], result, {"c1": "Rents fall.", "c2": "Supply grows."})
        return result

    assert run({"a": ArgMeta("c1", "pro"), "b": ArgMeta("c2", "pro")}).regime.value == "no_disagreement_found"
    assert "no persona attacked" in result.regime_description
    agreed = run({"a": ArgMeta("c1", "pro"), "b": ArgMeta("c1", "pro")})
    assert agreed.regime.value == "consensus" and "Rents fall" in agreed.regime_description
    assert [g.persona_ids for g in agreed.common_ground] == [["p", "q"]]  # one item, both named


# ---------------------------------------------------------------------------
# Checklist 3: the orchestrator's event stream
# ---------------------------------------------------------------------------


ROUND = r"(status )?(attacks_generated ){2}(engine_error )*validation_complete (engine_error )*graph_update (agent_turn )*blackboard_update graph_convergence convergence_update "
QUIET_ROUND = r"status (attacks_generated ){2}graph_convergence convergence_update "  # nobody attacked
EXPECTED = re.compile(
    r"^debate_start table_assigned status claims_decomposed status "
    r"(arguments_submitted initial_stance ){2}graph_update "
    # then the poll (every candidate crux put to each persona alone) just before the end
    rf"({ROUND})*({QUIET_ROUND})?status (engine_error )?(status ((crux_polled|engine_error) )+status )?debate_complete $"
)


async def test_two_personas_emit_every_event_in_order() -> None:
    ids, topic = shipped_deck(2)
    result = await run_debate(DebateConfig(topic=topic, persona_ids=ids, engine="graph", seed=4))
    assert result.complete
    sequence = "".join(f"{e.type} " for e in result.events)
    assert EXPECTED.match(sequence), sequence
    assert "validation_complete" in sequence
    first_update = next(e for e in result.events if e.type == "graph_update")
    assert first_update.round == 0 and first_update.graph.attacks == []  # type: ignore[union-attr]
    for e in result.events:
        if e.type == "arguments_submitted":
            assert 2 <= len(e.arguments) <= 4


async def test_call_budget_is_20_calls_for_4_personas_and_3_rounds() -> None:
    ids, topic = shipped_deck(4)
    result = await run_debate(DebateConfig(topic=topic, persona_ids=ids, engine="graph", seed=1))
    # the debate's own calls; the poll's are ledgered apart, at most two per persona per candidate
    calls = Counter(c.purpose for c in result.llm_calls if c.purpose not in ("poll", "pivot"))
    polled = [c for c in result.llm_calls if c.purpose in ("poll", "pivot")]
    rounds = sum(1 for e in result.events if e.type == "validation_complete")
    assert calls == Counter({"decompose_claims": 1, "initial_arguments": 4, "generate_attacks": 4 * rounds, "validate_attacks": rounds})
    assert sum(calls.values()) <= 20  # 1 + 4 + 3 * (4 + 1)
    assert len(polled) <= 2 * 4 * (result.poll.polled if result.poll else 0)
    assert {c.tier for c in result.llm_calls if c.purpose in ("validate_attacks", "decompose_claims")} == {Tier.fast}
    assert {c.tier for c in result.llm_calls if c.purpose in ("initial_arguments", "generate_attacks")} == {Tier.strong}


async def test_attacks_target_opposing_arguments_and_cruxes_come_from_the_graph() -> None:
    ids, topic = shipped_deck(4)
    result = await run_debate(DebateConfig(topic=topic, persona_ids=ids, engine="graph", seed=2))
    graph = result.graph
    by_id = {a.id: a for a in graph.arguments}
    assert graph.attacks
    for atk in graph.attacks:
        assert by_id[atk.from_arg_id].speaker_id != by_id[atk.to_arg_id].speaker_id
        assert atk.target.arg_id == atk.to_arg_id
    agent_turns = [e for e in result.events if e.type == "agent_turn"]
    assert len(agent_turns) == len([a for a in graph.attacks if not a.id.endswith("r")])
    assert result.cruxes and all(c.source in ("assumption", "symmetric_difference") for c in result.cruxes)
    assert any(c.source == "assumption" for c in result.cruxes)
    assert set(result.graph.labelling) == set(by_id)
    assert result.regime.value in ("consensus", "polarized", "partial")


async def test_graph_without_symmetric_rebut_is_acyclic_and_always_one_camp() -> None:
    ids, topic = shipped_deck(4)
    config = DebateConfig(topic=topic, persona_ids=ids, engine="graph", seed=2, params={"symmetric_rebut": False})
    result = await run_debate(config)
    assert result.graph.attacks and result.graph.preferred_count == 1
    assert all(v is not Label.UNDEC for v in result.graph.labelling.values())


# ---------------------------------------------------------------------------
# Validation: bad replies, bad attacks, missed attacks
# ---------------------------------------------------------------------------


class BrokenValidator:
    """Simulator, except that validate_attacks returns garbage (or raises after repair)."""

    def __init__(self, inner: SimulatedBackend, mode: str) -> None:
        self.inner, self.mode, self.name = inner, mode, "broken-validator"

    def model_for(self, tier: Tier) -> str:
        return self.inner.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        if request.purpose != "validate_attacks":
            return await self.inner.generate(request)
        if self.mode == "raise":
            raise LLMOutputError("validate_attacks", "not JSON: 'Sure! All attacks look fine.'")
        return LLMResponse(text="Sure! All attacks look fine.", model="x", backend=self.name)


@pytest.mark.parametrize("mode", ["garbage", "raise"])
async def test_unrepairable_validation_drops_the_rounds_attacks_with_a_warning(mode: str) -> None:
    ids, topic = shipped_deck(2)
    sim = SimulatedBackend(load_personas(ids), propositions_for(ids), seed=0)
    result = await run_debate(DebateConfig(topic=topic, persona_ids=ids, engine="graph"), backend=BrokenValidator(sim, mode))
    assert result.complete and result.error is None
    warnings = [e for e in result.events if e.type == "engine_error" and e.purpose == "validate_attacks"]
    assert warnings and all(w.level == "warning" and "dropped" in w.error for w in warnings)  # type: ignore[union-attr]
    generated = sum(len(e.attacks) for e in result.events if e.type == "attacks_generated")  # type: ignore[union-attr]
    assert generated > 0
    assert result.graph.attacks == []  # never silently accepted
    verdicts = [r for e in result.events if e.type == "validation_complete" for r in e.results]  # type: ignore[union-attr]
    assert verdicts and not any(r.valid for r in verdicts)


async def test_drifting_personas_make_attacks_the_validator_rejects() -> None:
    ids, topic = shipped_deck(4)
    config = DebateConfig(topic=topic, persona_ids=ids, engine="graph", seed=7, backend_options=SimulatorKnobs(drift=1.0).as_options())
    result = await run_debate(config)
    rejected = [r for e in result.events if e.type == "validation_complete" for r in e.results if not r.valid]  # type: ignore[union-attr]
    assert rejected
    assert any("own argument" in r.corrections or "irrelevant" in r.corrections for r in rejected)
    by_id = {a.id: a for a in result.graph.arguments}
    for atk in result.graph.attacks:
        assert by_id[atk.from_arg_id].speaker_id != by_id[atk.to_arg_id].speaker_id


async def test_missed_attacks_leave_free_floating_claims_that_are_flagged() -> None:
    ids, topic = shipped_deck(4)
    config = DebateConfig(topic=topic, persona_ids=ids, engine="graph", seed=1, backend_options=SimulatorKnobs(missed_attack=1.0).as_options())
    result = await run_debate(config)
    assert result.graph.attacks == []
    convergence = [e for e in result.events if e.type == "graph_convergence"]
    assert len(convergence) == 1 and "no new edges" in convergence[0].reason  # type: ignore[union-attr]
    assert Counter(c.purpose for c in result.llm_calls)["validate_attacks"] == 0
    # Everything is IN, yet opposite stances (as the replies stated them) are not common ground.
    fake = [e for e in result.events if e.type == "engine_error" and "fake consensus" in e.error]  # type: ignore[union-attr]
    assert fake
    reader = Reader(ids)
    sides: dict[str | None, set[bool]] = {}
    for g in result.common_ground:
        sides.setdefault(reader.proposition(g.statement), set()).add(g.statement.startswith("It is not"))
    assert all(len(v) == 1 for p, v in sides.items() if p is not None), sides


async def test_graph_learns_who_argued_what_from_the_replies() -> None:
    ids, topic = shipped_deck(2)
    result = await run_debate(DebateConfig(topic=topic, persona_ids=ids, engine="graph", seed=3))
    claims = next(e for e in result.events if e.type == "claims_decomposed").claims  # type: ignore[union-attr]
    claim_ids = {f"c{i + 1}" for i in range(len(claims))}
    stances = [e for e in result.events if e.type == "initial_stance"]
    assert stances and all(set(e.stances) <= claim_ids for e in stances)  # type: ignore[union-attr]
    assert any(e.stances for e in stances)  # type: ignore[union-attr]
    assert result.transcript, "validated attacks are the transcript"
    for turn in result.transcript:
        assert turn.move is not None and turn.move.value == "CHALLENGE" and set(turn.proposition_ids) <= claim_ids
        assert "->" not in turn.dialogue and not any(a.id in turn.dialogue.split() for a in result.graph.arguments)
    assert all(a.proposition_id is None for a in result.graph.arguments)  # no ground truth on the graph
    assert result.camps and all(c.persona_ids for c in result.camps)
    final = [p for p in result.positions if p.at == "final"]
    assert final and all(set(p.stances) <= claim_ids for p in final)


class OffSchemaAttacks:
    """The simulator, except that one persona's attack replies stay off-schema after repair."""

    def __init__(self, inner: SimulatedBackend, persona_id: str) -> None:
        self.inner, self.persona_id, self.name = inner, persona_id, "off-schema"

    def model_for(self, tier: Tier) -> str:
        return self.inner.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        if request.purpose == "generate_attacks" and request.hints.speaker_id == self.persona_id:
            raise LLMOutputError("generate_attacks", "attacks.0.to_arg_id: Field required")
        return await self.inner.generate(request)


async def test_an_attack_reply_that_stays_off_schema_is_skipped_with_a_warning() -> None:
    ids, topic = shipped_deck(2)
    sim = SimulatedBackend(load_personas(ids), propositions_for(ids), seed=3)
    result = await run_debate(DebateConfig(topic=topic, persona_ids=ids, engine="graph", seed=3), backend=OffSchemaAttacks(sim, ids[0]))
    assert result.complete and result.error is None
    warnings = [e for e in result.events if e.type == "engine_error" and e.purpose == "generate_attacks"]  # type: ignore[union-attr]
    assert warnings and all(w.level == "warning" and ids[0] in w.error for w in warnings)  # type: ignore[union-attr]
    by_id = {a.id: a for a in result.graph.arguments}
    assert result.graph.attacks  # the other persona's attacks went on
    assert all(by_id[k.from_arg_id].speaker_id == ids[1] for k in result.graph.attacks if not k.id.endswith("r"))


class Hallucinating:
    """Simulator whose attackers also aim at an argument that does not exist and at their own
    first argument; ``trusting`` makes the validator approve everything."""

    def __init__(self, inner: SimulatedBackend, trusting: bool) -> None:
        self.inner, self.trusting, self.name = inner, trusting, "hallucinating"

    def model_for(self, tier: Tier) -> str:
        return self.inner.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        if request.purpose == "validate_attacks" and self.trusting:
            from crux_lab.engines.blackboard.graph import ValidationItem, ValidationReply

            reply = ValidationReply(results=[ValidationItem(attack_id=a["id"], valid=True) for a in request.hints.extra["attacks"]])
            return LLMResponse(text=reply.model_dump_json(), parsed=reply, model="x", backend=self.name)
        response = await self.inner.generate(request)
        if request.purpose != "generate_attacks":
            return response
        from crux_lab.engines.blackboard.graph import AttackDraft, AttacksReply

        me = request.hints.speaker_id
        own = next(a["id"] for a in request.hints.extra["arguments"] if a["speaker_id"] == me)
        extra = [
            AttackDraft(to_arg_id="a999", type=AttackType.rebut, counter_proposition="No."),
            AttackDraft(to_arg_id=own, type=AttackType.rebut, counter_proposition="I was wrong."),
        ]
        parsed = AttacksReply(attacks=[*response.parsed.attacks[:2], *extra])  # type: ignore[union-attr]
        return response.model_copy(update={"parsed": parsed, "text": parsed.model_dump_json()})


@pytest.mark.parametrize("trusting", [False, True])
async def test_attacks_on_missing_or_own_arguments_never_enter_the_graph(trusting: bool) -> None:
    ids, topic = shipped_deck(2)
    sim = SimulatedBackend(load_personas(ids), propositions_for(ids), seed=0)
    config = DebateConfig(topic=topic, persona_ids=ids, engine="graph", params={"max_rounds": 1})
    result = await run_debate(config, backend=Hallucinating(sim, trusting))
    assert result.complete
    by_id = {a.id: a for a in result.graph.arguments}
    assert result.graph.attacks
    for atk in result.graph.attacks:
        assert atk.to_arg_id in by_id and by_id[atk.to_arg_id].speaker_id != by_id[atk.from_arg_id].speaker_id
    verdicts = {r.attack_id: r for e in result.events if e.type == "validation_complete" for r in e.results}  # type: ignore[union-attr]
    generated = [a for e in result.events if e.type == "attacks_generated" for a in e.attacks]  # type: ignore[union-attr]
    bad = [a for a in generated if a.to_arg_id == "a999" or (a.to_arg_id in by_id and by_id[a.to_arg_id].speaker_id == a.speaker_id)]
    assert len(bad) == 2 * len(ids)
    if trusting:  # the engine's own guard catches what the validator let through
        warnings = [e for e in result.events if e.type == "engine_error" and "missing or own" in e.error]  # type: ignore[union-attr]
        assert warnings and all(a.id in warnings[0].error for a in bad)  # type: ignore[union-attr]
    else:
        assert all(not verdicts[a.id].valid for a in bad)
        assert any("does not exist" in verdicts[a.id].corrections for a in bad)
        assert any("own argument" in verdicts[a.id].corrections for a in bad)

