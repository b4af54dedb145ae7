"""DCG invariants, seed analysis functions, Dung within a dispute; Hypothesis properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crux_lab.argumentation.dcg import (
    DCGInvariantError,
    add_reason,
    analyze_dispute,
    apply_update,
    check_invariants,
    classify_regime,
    compute_common_ground,
    compute_cruxes,
    concede,
    create_dispute,
    remove_reason,
    upsert_stance,
)
from crux_lab.models import DCGState, Dispute, Reason, Side, Stance


def stance(sid: str, did: str, who: str, side: Side) -> Stance:
    return Stance(id=sid, dispute_id=did, speaker_id=who, side=side, statement=f"{who} {side}")


def bitcoin() -> DCGState:
    return create_dispute(
        DCGState(),
        Dispute(id="d-0", question="Is Bitcoin adoption deterministic?"),
        [stance("s-0", "d-0", "saylor", Side.YES), stance("s-1", "d-0", "hayes", Side.NO)],
    )


def test_seed_bitcoin_example_is_polarized_not_consensus() -> None:
    st_ = bitcoin()
    cr, cg = compute_cruxes(st_), compute_common_ground(st_)
    assert [c.dispute_id for c in cr] == ["d-0"] and cg == []
    assert [s.speaker_id for s in cr[0].yes_side] == ["saylor"]
    reg = classify_regime(cr, cg, 1)
    assert reg.regime == "polarized"
    assert reg.description == "Polarized: 1 unresolved dispute(s), no common ground."


def test_regime_matches_seed_code() -> None:
    st_ = bitcoin()
    st_ = create_dispute(
        st_,
        Dispute(id="d-1", question="Is volatility a feature?"),
        [stance("s-2", "d-1", "saylor", Side.YES), stance("s-3", "d-1", "hayes", Side.NO)],
    )
    st_ = concede(st_, "s-3", Side.YES)
    cr, cg = compute_cruxes(st_), compute_common_ground(st_)
    assert classify_regime(cr, cg, 2).description == "Partial: 1 aligned, 1 split."
    st_ = concede(st_, "s-1", Side.YES)
    cr, cg = compute_cruxes(st_), compute_common_ground(st_)
    assert (
        classify_regime(cr, cg, 2).description == "Consensus: Both speakers agree on 2 dispute(s)."
    )


@pytest.mark.parametrize(
    ("mutate", "invariant"),
    [
        (lambda s: upsert_stance(s, stance("s-9", "d-x", "p", Side.YES)), "stance-dispute"),
        (
            lambda s: add_reason(s, Reason(id="r", stance_id="s-x", polarity="SUPPORT", claim="c")),
            "reason-stance",
        ),
        (
            lambda s: create_dispute(
                s, Dispute(id="d-2", question="q"), [stance("s-5", "d-2", "p", Side.NO)]
            ),
            "divergence",
        ),
        (lambda s: create_dispute(s, Dispute(id="d-3", question="q"), []), "divergence"),
        (
            lambda s: add_reason(
                s, Reason(id="r", stance_id="s-0", polarity="SUPPORT", claim="c", attacks=["zz"])
            ),
            "free-floating",
        ),
        (lambda s: upsert_stance(s, stance("s-7", "d-0", "saylor", Side.NO)), "free-floating"),
        (lambda s: remove_reason(s, "nope"), "reason-stance"),
        (lambda s: concede(s, "nope", Side.YES), "reason-stance"),
    ],
)
def test_invariant_violations_raise(mutate, invariant: str) -> None:  # type: ignore[no-untyped-def]
    base = bitcoin()
    with pytest.raises(DCGInvariantError) as info:
        mutate(base)
    assert info.value.invariant == invariant
    # nothing changed
    check_invariants(base)


def test_cross_dispute_reason_attack_is_rejected() -> None:
    st_ = create_dispute(
        bitcoin(),
        Dispute(id="d-1", question="q"),
        [stance("s-2", "d-1", "saylor", Side.YES), stance("s-3", "d-1", "hayes", Side.NO)],
    )
    st_ = add_reason(st_, Reason(id="r0", stance_id="s-0", polarity="SUPPORT", claim="a"))
    with pytest.raises(DCGInvariantError, match="another dispute"):
        add_reason(
            st_, Reason(id="r1", stance_id="s-2", polarity="SUPPORT", claim="b", attacks=["r0"])
        )


def test_remove_reason_cascades_attacks() -> None:
    st_ = add_reason(bitcoin(), Reason(id="r0", stance_id="s-0", polarity="SUPPORT", claim="a"))
    st_ = add_reason(
        st_, Reason(id="r1", stance_id="s-1", polarity="SUPPORT", claim="b", attacks=["r0"])
    )
    st2 = remove_reason(st_, "r0")
    assert [r.id for r in st2.reasons] == ["r1"] and st2.reasons[0].attacks == []


def test_dung_within_dispute_ranks_reasons() -> None:
    st_ = bitcoin()
    for r in [
        Reason(id="y1", stance_id="s-0", polarity="SUPPORT", claim="fixed supply"),
        Reason(id="y2", stance_id="s-0", polarity="SUPPORT", claim="network effects"),
        Reason(id="n1", stance_id="s-1", polarity="SUPPORT", claim="policy", attacks=["y2"]),
        Reason(id="n2", stance_id="s-0", polarity="ATTACK", claim="regulation", attacks=["y1"]),
        Reason(id="y3", stance_id="s-0", polarity="SUPPORT", claim="rebuttal", attacks=["n2"]),
    ]:
        st_ = add_reason(st_, r)
    an = analyze_dispute(st_, "d-0")
    assert [r.reason_id for r in an.no_reasons][0] in {"n1", "n2"}
    assert {r.side for r in an.yes_reasons} == {Side.YES}
    assert {r.side for r in an.no_reasons} == {Side.NO}
    assert "y3" in an.grounded
    assert an.labelling["y3"].value == "IN"
    assert set(an.stance_strength) == {"s-0", "s-1"}
    assert all(0.0 <= v <= 1.0 for v in an.stance_strength.values())
    # ranking is by status first
    order = {"accepted": 0, "contested": 1, "rejected": 2}
    for side in (an.yes_reasons, an.no_reasons):
        assert [order[r.status] for r in side] == sorted(order[r.status] for r in side)


# -- Hypothesis: contradictory stances are never common ground -----------------

SPEAKERS = ["p0", "p1", "p2", "p3"]


@st.composite
def dcg_histories(draw: st.DrawFn) -> DCGState:
    state = DCGState()
    n_disputes = draw(st.integers(0, 5))
    sid = 0
    for d in range(n_disputes):
        who = draw(st.lists(st.sampled_from(SPEAKERS), min_size=2, max_size=4, unique=True))
        sides = draw(
            st.lists(st.sampled_from([Side.YES, Side.NO]), min_size=len(who), max_size=len(who))
        )
        stances = []
        for w, s in zip(who, sides, strict=True):
            stances.append(stance(f"s-{sid}", f"d-{d}", w, s))
            sid += 1
        dispute = Dispute(id=f"d-{d}", question=f"q{d}?")
        if set(sides) != {Side.YES, Side.NO}:
            with pytest.raises(DCGInvariantError):
                create_dispute(state, dispute, stances)
            continue
        state = create_dispute(state, dispute, stances)
    # later concessions / stance flips
    for _ in range(draw(st.integers(0, 6))):
        if not state.stances:
            break
        s = draw(st.sampled_from(state.stances))
        state = concede(state, s.id, draw(st.sampled_from([Side.YES, Side.NO])))
    return state


@settings(max_examples=200, deadline=None)
@given(dcg_histories())
def test_contradictory_stances_never_common_ground(state: DCGState) -> None:
    check_invariants(state)
    cruxes = {c.dispute_id for c in compute_cruxes(state)}
    common = compute_common_ground(state)
    for cg in common:
        sides = {s.side for s in state.stances if s.dispute_id == cg.dispute_id}
        assert sides == {cg.agreed_side}  # every stance on the agreed side
        assert cg.dispute_id not in cruxes
    for d in state.disputes:
        sides = {s.side for s in state.stances if s.dispute_id == d.id}
        if sides == {Side.YES, Side.NO}:
            assert d.id in cruxes
            assert d.id not in {c.dispute_id for c in common}
    reg = classify_regime(compute_cruxes(state), common, len(state.disputes))
    if cruxes:
        assert reg.regime != "consensus"


@settings(max_examples=100, deadline=None)
@given(dcg_histories())
def test_created_disputes_are_split_at_creation(state: DCGState) -> None:
    # Re-creating each dispute from its *current* stances succeeds iff it is split now.
    for d in state.disputes:
        stances = [s for s in state.stances if s.dispute_id == d.id]
        split = {s.side for s in stances} == {Side.YES, Side.NO}
        try:
            apply_update(DCGState(), [d], stances)
            assert split
        except DCGInvariantError as exc:
            assert not split and exc.invariant == "divergence"
