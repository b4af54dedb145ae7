"""The dialogue (v2) and dcg engines end to end on the persona simulator, and on bad input."""

from __future__ import annotations

import asyncio
import json
from functools import cache

import pytest
from pydantic import ValidationError

from crux_lab.argumentation import ArgumentFramework, grounded_extension, preferred_extensions
from crux_lab.argumentation.dcg import check_invariants
from crux_lab.engines import get as get_engine
from crux_lab.engines.base import EngineConfigError
from crux_lab.llm.base import LLMOutputError, LLMRequest, LLMResponse
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.models import (
    Crystallization,
    DCGUpdate,
    DebateConfig,
    DebateResult,
    DialogueTurnEvent,
    EngineComplete,
    EngineError,
    EngineStart,
    GraphUpdated,
    Move,
    PhaseStart,
    Tier,
)
from crux_lab.personas.loader import load_personas, propositions_for
from crux_lab.runner import DebateRun, run_debate

PAIR = ("michael-saylor", "arthur-hayes")
TOPIC = "Bitcoin is digital gold"


def config(engine: str, seed: int = 0, ids: tuple[str, ...] = PAIR, **kw) -> DebateConfig:  # type: ignore[no-untyped-def]
    return DebateConfig(topic=TOPIC, persona_ids=list(ids), engine=engine, seed=seed, **kw)


@cache
def debate(engine: str, seed: int = 0, ids: tuple[str, ...] = PAIR) -> DebateResult:
    return asyncio.run(run_debate(config(engine, seed, ids)))


def sim_backend(ids: tuple[str, ...] = PAIR, seed: int = 0) -> SimulatedBackend:
    return SimulatedBackend(load_personas(ids), propositions_for(ids), seed=seed)


# ---------------------------------------------------------------------------
# happy path
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["dialogue", "dcg"])
def test_debate_runs_through_four_phases_and_is_valid(engine: str) -> None:
    r = debate(engine)
    assert r.complete and r.error is None
    assert isinstance(r.events[0], EngineStart) and isinstance(r.events[-1], EngineComplete)
    assert [e.phase for e in r.events if isinstance(e, PhaseStart)] == [1, 2, 3, 4]
    assert [e.seq for e in r.events] == list(range(len(r.events)))
    # transcript is built by the runner from dialogue_turn events, once each
    turns = [e.turn for e in r.events if isinstance(e, DialogueTurnEvent)]
    assert r.transcript == turns
    assert [t.turn_index for t in r.transcript] == list(range(len(r.transcript)))
    assert len(r.transcript) <= r.config.max_turns
    assert all(t.move is not None for t in r.transcript)
    assert [t.phase for t in r.transcript[:2]] == ["opening", "opening"]
    assert [t.phase for t in r.transcript[-2:]] == ["resolution", "resolution"]
    # ledger-backed usage and duration
    assert r.usage.calls == len(r.llm_calls) > 0 and r.usage.input_tokens > 0 and r.duration_s > 0
    purposes = {c.purpose for c in r.llm_calls}
    assert {"opening", "dialogue_turn", "crystallize", "resolution"} <= purposes
    # dcg asks for discovery only once two speakers' reasons sit under one dispute, which this
    # short simulated debate does not reach; the Dung graph always has two speakers' arguments
    assert ("discovery" in purposes) == (engine == "dialogue")
    assert all(c.tier is Tier.strong for c in r.llm_calls)  # the dialogue engines run every call on the strong tier
    # the persisted result round-trips
    assert DebateResult.model_validate_json(r.model_dump_json()) == r
    assert r.regime.value != "unknown" and r.regime_description


def test_v2_graph_semantics_match_the_argumentation_library() -> None:
    r = debate("dialogue", 0)  # a seed whose simulated speakers hear each other disagree, so the graph has attacks
    g = r.graph
    assert len(g.arguments) >= 2 and g.attacks
    af = ArgumentFramework.from_edges([a.id for a in g.arguments], [(x.from_arg_id, x.to_arg_id) for x in g.attacks])
    assert set(g.grounded) == set(grounded_extension(af))
    assert sorted(map(sorted, g.preferred)) == sorted(map(sorted, preferred_extensions(af)))
    assert set(g.labelling) == {a.id for a in g.arguments}
    assert {c.argument_id for c in r.common_ground if c.source == "grounded"} == set(g.grounded)
    assert r.camps and all(set(c.argument_ids) <= {a.id for a in g.arguments} for c in r.camps)
    # every graph update event carries freshly computed semantics
    for ev in r.events:
        if isinstance(ev, GraphUpdated):
            sub = ArgumentFramework.from_edges([a.id for a in ev.graph.arguments],
                                               [(x.from_arg_id, x.to_arg_id) for x in ev.graph.attacks])
            assert set(ev.graph.grounded) == set(grounded_extension(sub))
            assert ev.in_count + ev.out_count + ev.undec_count == len(ev.graph.arguments)


def test_v2_proposed_crux_carries_proposers_and_acknowledgement() -> None:
    r = debate("dialogue")
    proposed = [c for c in r.cruxes if c.source == "proposed"]
    proposers = {t.persona_id for t in r.transcript if t.move is Move.PROPOSE_CRUX}
    assert proposers, "phase 3 steers toward PROPOSE_CRUX"
    assert len(proposed) == 1 and set(proposed[0].proposed_by) <= proposers
    if proposed[0].acknowledged:  # another speaker named the same question, as the crystallizer read it
        assert len(set(proposed[0].proposed_by)) >= 2
    props = propositions_for(PAIR)
    assert proposed[0].statement not in {p.question for p in props.values()}  # the crystallizer's own words


def test_dcg_state_respects_invariants_and_hard_rules() -> None:
    r = debate("dcg")
    check_invariants(r.dcg)
    assert r.dcg.disputes and not r.graph.arguments  # the dcg engine writes only the DCG
    turn_ids = {t.turn_index for t in r.transcript}
    for s in r.dcg.stances:
        assert s.derived_from_turns and set(s.derived_from_turns) <= turn_ids
    for reason in r.dcg.reasons:
        assert reason.derived_from_turns and set(reason.derived_from_turns) <= turn_ids
    seen: set[str] = set()
    for ev in r.events:
        if isinstance(ev, DCGUpdate):
            new = {d.id for d in ev.dcg.disputes} - seen
            assert len(new) <= 2  # hard rule 1: at most two new disputes per crystallization
            for did in new:  # created only with real divergence
                sides = {s.side.value for s in ev.dcg.stances if s.dispute_id == did}
                assert sides == {"YES", "NO"}
            seen |= new
    for crux in r.cruxes:
        if crux.source == "dispute":
            assert crux.yes_side and crux.no_side and crux.dispute_id
            assert {c.persona_id for c in crux.yes_side}.isdisjoint({c.persona_id for c in crux.no_side})


def test_three_personas_everyone_is_brought_in() -> None:
    ids = ("michael-saylor", "arthur-hayes", "peter-schiff")
    r = debate("dialogue", 0, ids)
    assert r.complete
    exchange = [t.persona_id for t in r.transcript if t.phase in ("free_exchange", "crux_seeking")]
    assert set(exchange) == set(ids)
    last_seen = {p: -1 for p in ids}
    for i, who in enumerate(exchange):
        last_seen[who] = i
        if i >= 4:
            assert all(i - last_seen[p] <= 3 for p in ids), f"someone silent 4+ turns at {i}"


def test_deterministic_for_a_seed() -> None:
    a = asyncio.run(run_debate(config("dcg", seed=5)))
    b = asyncio.run(run_debate(config("dcg", seed=5)))
    assert [t.dialogue for t in a.transcript] == [t.dialogue for t in b.transcript]
    assert a.dcg == b.dcg


# ---------------------------------------------------------------------------
# a backend that behaves like a real LLM: no annotations
# ---------------------------------------------------------------------------


class NoAnnotations:
    """Wraps the simulator like a real backend's failure modes: garbage text, or an error
    after the backend's one repair."""

    def __init__(self, inner: SimulatedBackend, garbage_for: str | None = None, raise_for: str | None = None) -> None:
        self.inner = inner
        self.name = "stub"
        self.garbage_for = garbage_for
        self.raise_for = raise_for

    def model_for(self, tier: Tier) -> str:
        return self.inner.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        if request.purpose == self.raise_for:
            raise LLMOutputError(request.purpose, "still invalid after one repair")
        resp = await self.inner.generate(request)
        if request.purpose == self.garbage_for:
            return resp.model_copy(update={"text": "Sure! Here is the graph: {{{ not json", "parsed": None})
        return resp


class MissingField:
    """A backend whose crystallizer reply leaves out a field the engine needs (a stance's
    ``side``) on the first ``bad`` calls: it repairs once (asks again), and when the repair is
    still off-schema raises, as the real backends do."""

    def __init__(self, inner: SimulatedBackend, bad: int) -> None:
        self.inner, self.name, self.bad, self.attempts = inner, "stub", bad, 0

    def model_for(self, tier: Tier) -> str:
        return self.inner.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        resp = await self.inner.generate(request)
        if request.purpose != "crystallize" or self.bad <= 0:
            return resp
        self.bad -= 1
        for attempt in range(2):  # the reply, then the one repair
            self.attempts += 1
            data = json.loads(resp.text)
            for st in data.get("upsert_stances", []):
                st.pop("side", None)
            data.setdefault("upsert_stances", []).append({"dispute_id": "new-1", "speaker_id": PAIR[0], "statement": "x"})
            try:
                return resp.model_copy(update={"parsed": request.output_schema.model_validate(data)})  # type: ignore[union-attr]
            except ValidationError as exc:
                if attempt == 1:
                    raise LLMOutputError(request.purpose, str(exc.errors()[0]["msg"])) from None
        raise AssertionError("unreachable")


def test_a_crystallizer_reply_missing_a_field_is_repaired_once_then_skipped_with_a_warning(tmp_path) -> None:  # type: ignore[no-untyped-def]
    backend = MissingField(sim_backend(), bad=1)
    r = asyncio.run(run_debate(config("dcg"), backend=backend))
    assert backend.attempts == 2  # the reply and its one repair
    warnings = [e for e in r.events if isinstance(e, EngineError)]
    # the crystallizer's reply skipped once; any other skip is a turn the echo guard kept out
    skipped = [w for w in warnings if "skipped" in w.error]
    assert [w.purpose for w in skipped if w.purpose == "crystallize"] == ["crystallize"]
    assert all(w.purpose == "guard_echo" or "echo guard" in w.error for w in skipped if w.purpose != "crystallize")
    assert all(w.level == "warning" for w in warnings)
    # the debate went on: later crystallizations landed and the debate completed
    assert r.complete and r.error is None and r.dcg.disputes
    assert [e.phase for e in r.events if isinstance(e, PhaseStart)] == [1, 2, 3, 4]
    assert [e.seq for e in r.events] == list(range(len(r.events)))
    DebateResult.model_validate_json(r.model_dump_json())
    for ev in r.events:  # every event of the log validates on its own
        type(ev).model_validate_json(ev.model_dump_json())


@pytest.mark.parametrize("engine", ["dialogue", "dcg"])
@pytest.mark.parametrize("mode", ["garbage", "raise"])
def test_unrepairable_crystallizer_reply_is_a_warning_not_a_crash(engine: str, mode: str) -> None:
    backend = NoAnnotations(sim_backend(), **({"garbage_for": "crystallize"} if mode == "garbage" else {"raise_for": "crystallize"}))
    r = asyncio.run(run_debate(config(engine), backend=backend))
    assert r.complete and r.error is None
    warnings = [e for e in r.events if isinstance(e, EngineError)]
    assert warnings and all(w.level == "warning" for w in warnings)
    assert any(w.purpose == "crystallize" and "skipped" in w.error for w in warnings)
    assert not any(isinstance(e, Crystallization) and e.turn_range != (0, 0) for e in r.events)
    assert not r.graph.arguments and not r.dcg.disputes
    assert isinstance(r.events[-1], EngineComplete)
    DebateResult.model_validate_json(r.model_dump_json())


# ---------------------------------------------------------------------------
# bad configuration
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["dialogue", "dcg"])
def test_one_persona_is_refused_clearly(engine: str) -> None:
    with pytest.raises(EngineConfigError, match=r"needs 2–6 personas; got 1"):
        DebateRun(config(engine, ids=("michael-saylor",)))


@pytest.mark.parametrize("engine", ["dialogue", "dcg"])
def test_duplicate_persona_is_refused_clearly(engine: str) -> None:
    with pytest.raises(EngineConfigError, match="duplicate persona.*michael-saylor"):
        DebateRun(config(engine, ids=("michael-saylor", "michael-saylor")))


def test_unknown_parameter_lists_the_accepted_ones() -> None:
    with pytest.raises(EngineConfigError, match="crystallize_every"):
        DebateRun(config("dialogue", params={"crystalize_every": 3}))
    with pytest.raises(EngineConfigError, match="max_new_disputes"):
        DebateRun(config("dcg", params={"max_new_disputes": 5}))


def test_registry_exposes_both_engines() -> None:
    assert get_engine("dialogue").name == "dialogue" and get_engine("dcg").name == "dcg"
    assert get_engine("dcg").max_personas >= 2 and get_engine("dialogue").min_personas == 2


# ---------------------------------------------------------------------------
# cancellation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["dialogue", "dcg"])
async def test_stop_mid_debate_gives_a_valid_partial_result(engine: str) -> None:
    run = DebateRun(config(engine))
    turns = 0
    async for ev in run.events():
        if isinstance(ev, DialogueTurnEvent):
            turns += 1
            if turns == 7:
                run.stop()
    r = run.result
    assert not r.complete
    assert len(r.transcript) == 7 == sum(isinstance(e, DialogueTurnEvent) for e in r.events)
    assert not any(isinstance(e, EngineComplete) for e in r.events)
    back = DebateResult.model_validate_json(r.model_dump_json())
    assert back == r
    ids = {a.id for a in r.graph.arguments}
    assert set(r.graph.grounded) <= ids
    check_invariants(r.dcg)


class Slow:
    def __init__(self, inner: SimulatedBackend) -> None:
        self.inner, self.name = inner, inner.name

    def model_for(self, tier: Tier) -> str:
        return self.inner.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        await asyncio.sleep(0.01)
        return await self.inner.generate(request)


async def test_task_cancel_gives_an_incomplete_valid_result() -> None:
    run = DebateRun(config("dcg"), backend=Slow(sim_backend()))

    async def consume() -> None:
        async for _ in run.events():
            pass

    task = asyncio.create_task(consume())
    for _ in range(3000):
        if len(run.result.transcript) >= 4 or task.done():
            break
        await asyncio.sleep(0.01)
    assert not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    r = run.result
    assert not r.complete
    assert 4 <= len(r.transcript) < 30
    assert DebateResult.model_validate_json(r.model_dump_json()) == r
    check_invariants(r.dcg)


def test_too_few_turns_is_refused_clearly() -> None:
    with pytest.raises(EngineConfigError, match="needs max_turns >= 4"):
        asyncio.run(run_debate(config("dialogue", max_turns=3)))
    r = asyncio.run(run_debate(config("dcg", max_turns=4)))
    assert r.complete and len(r.transcript) == 4
    assert [t.phase for t in r.transcript] == ["opening", "opening", "resolution", "resolution"]
