"""A hand-built DebateResult that fills every table the store writes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from crux_lab.models import (
    Argument,
    ArgumentGraph,
    Attack,
    AttackTarget,
    Camp,
    CommonGround,
    Concession,
    ConcessionKind,
    Crux,
    CruxCard,
    CruxCardPosition,
    CruxSide,
    DCGState,
    DebateConfig,
    DebateResult,
    DialogueTurn,
    DialogueTurnEvent,
    Dispute,
    EngineComplete,
    EngineStart,
    Label,
    LLMCall,
    Move,
    PersonaPosition,
    PositionShift,
    PropositionShift,
    Reason,
    Regime,
    Stance,
    Tier,
    Usage,
)


def make_result(topic: str = "Is Bitcoin a store of value?", seed: int = 0) -> DebateResult:
    config = DebateConfig(topic=topic, persona_ids=["alice", "bob"], engine="fake", seed=seed, max_turns=4)
    rid = config.run_id()
    turns = [
        DialogueTurn(id=f"t{i}", turn_index=i, persona_id=p, dialogue=f"turn {i} by {p}", move=Move.CLAIM,
                     phase="opening", proposition_ids=["p1"], stance="pro" if p == "alice" else "con", confidence=0.7)
        for i, p in enumerate(["alice", "bob", "alice"])
    ]
    events = [EngineStart(seq=0, engine="fake", topic=topic, persona_ids=["alice", "bob"])]
    events += [DialogueTurnEvent(seq=i + 1, turn=t) for i, t in enumerate(turns)]
    events.append(EngineComplete(seq=len(events), regime=Regime.polarized))
    args = [Argument(id="a1", speaker_id="alice", claim="BTC holds value", premises=["scarce"], derived_from_turns=[0]),
            Argument(id="a2", speaker_id="bob", claim="BTC is volatile", evidence=["2022 drawdown"])]
    attack = Attack(id="x1", from_arg_id="a2", to_arg_id="a1", target=AttackTarget(arg_id="a1"), speaker_id="bob")
    card = CruxCard(
        id="c1", question="Does volatility disqualify a store of value?", disagreement_type="definition",
        diagnosis="They define store of value differently.",
        personas={"alice": CruxCardPosition(position="NO", reasoning="horizon matters"),
                  "bob": CruxCardPosition(position="YES", reasoning="drawdowns", falsifier="10y low vol")},
    )
    return DebateResult(
        run_id=rid, config=config, engine="fake", backend="simulated", complete=True,
        transcript=turns, events=events,
        graph=ArgumentGraph(arguments=args, attacks=[attack], grounded=["a2"], preferred=[["a2"]], preferred_count=1,
                            labelling={"a1": Label.OUT, "a2": Label.IN}),
        dcg=DCGState(
            disputes=[Dispute(id="d1", question="Is BTC a store of value?", created_from_turns=[0, 1])],
            stances=[Stance(id="s1", dispute_id="d1", speaker_id="alice", side="YES", statement="yes")],
            reasons=[Reason(id="r1", stance_id="s1", polarity="SUPPORT", claim="scarcity")],
        ),
        cruxes=[Crux(id="k1", statement="volatility vs value", source="card", yes_side=[CruxSide(persona_id="bob")])],
        crux_cards=[card],
        common_ground=[CommonGround(id="g1", statement="BTC is scarce", source="grounded", persona_ids=["alice", "bob"])],
        camps=[Camp(index=0, persona_ids=["alice"]), Camp(index=1, persona_ids=["bob"])],
        concession_trail=[Concession(turn_index=2, persona_id="alice", type=ConcessionKind.partial, conceded_claim="volatile")],
        regime=Regime.polarized, regime_description="two camps",
        positions=[PersonaPosition(persona_id="alice", at="opening", text="pro", stances={"p1": "pro"}, confidence={"p1": 0.8})],
        position_shifts=[PositionShift(persona_id="alice", shifted=True,
                                       proposition_shifts=[PropositionShift(proposition_id="p1", before="pro", after="uncertain")])],
        usage=Usage(calls=2, input_tokens=100, output_tokens=50, cost_usd=0.01),
        llm_calls=[LLMCall(run_id=rid, seq=i, purpose="opening", backend="simulated", model="sim", tier=Tier.strong,
                           input_tokens=50, output_tokens=25) for i in range(2)],
        duration_s=0.5,
    )


@pytest.fixture
def make() -> Callable[..., DebateResult]:
    """The factory itself, for tests that need several distinct results."""
    return make_result


@pytest.fixture
def result() -> DebateResult:
    return make_result()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "db" / "test.duckdb"
