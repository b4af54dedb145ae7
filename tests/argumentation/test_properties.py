"""Hypothesis: random frameworks (<= 12 arguments) against the brute-force oracle."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crux_lab.argumentation import semantics as S
from crux_lab.argumentation.framework import ArgumentFramework
from crux_lab.argumentation.space import count_extensions, extension_space

from .oracle import all_semantics


@st.composite
def frameworks(draw: st.DrawFn, max_args: int = 12) -> ArgumentFramework:
    n = draw(st.integers(0, max_args))
    if n == 0:
        return ArgumentFramework()
    pairs = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
    attacks = draw(st.lists(pairs, max_size=3 * n))
    return ArgumentFramework(frozenset(range(n)), frozenset(attacks))


def as_set(exts: list[frozenset[int]]) -> set[frozenset[int]]:
    return set(exts)


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(frameworks())
def test_against_brute_force(af: ArgumentFramework) -> None:
    o = all_semantics(af)
    co = S.complete_extensions(af)
    assert as_set(co) == as_set(o["complete"])
    # grounded is the least complete extension
    g = S.grounded_extension(af)
    assert g == o["grounded"][0]
    assert all(g <= e for e in co)
    pr = S.preferred_extensions(af)
    assert as_set(pr) == as_set(o["preferred"])  # maximal admissible sets
    stb = S.stable_extensions(af)
    assert as_set(stb) == as_set(o["stable"])
    assert as_set(stb) <= as_set(pr)  # stable ⊆ preferred
    assert as_set(S.semi_stable_extensions(af)) == as_set(o["semi-stable"])
    assert as_set(S.stage_extensions(af)) == as_set(o["stage"])
    assert S.ideal_extension(af) == o["ideal"][0]
    for sem in ("complete", "preferred", "stable", "semi-stable", "stage"):
        assert count_extensions(af, sem) == len(o[sem])  # factorized counts


@SETTINGS
@given(frameworks(), st.data())
def test_acceptance_against_brute_force(af: ArgumentFramework, data: st.DataObject) -> None:
    if not af.arguments:
        return
    o = all_semantics(af)
    a = data.draw(st.sampled_from(sorted(af.arguments)))
    for sem in ("complete", "preferred", "stable"):
        exts = o[sem]
        assert S.credulously_accepted(af, a, sem) == any(a in e for e in exts)
        assert S.skeptically_accepted(af, a, sem) == all(a in e for e in exts)


@settings(max_examples=60, deadline=None)
@given(frameworks(max_args=9), frameworks(max_args=9))
def test_product_of_independent_parts(left: ArgumentFramework, right: ArgumentFramework) -> None:
    """Disjoint union: extension counts multiply."""
    shifted = ArgumentFramework(
        frozenset(a + 100 for a in right.arguments),
        frozenset((a + 100, b + 100) for a, b in right.attacks),
    )
    union = ArgumentFramework(left.arguments | shifted.arguments, left.attacks | shifted.attacks)
    for sem in ("preferred", "stable", "complete"):
        assert count_extensions(union, sem) == count_extensions(left, sem) * count_extensions(
            shifted, sem
        )


@settings(max_examples=60, deadline=None)
@given(frameworks())
def test_sat_backend_matches_small_solver(af: ArgumentFramework) -> None:
    from crux_lab.argumentation._core import decompose
    from crux_lab.argumentation.sat import SatComponent

    for comp in decompose(af).components:
        for sem in ("complete", "preferred", "stable", "semi-stable"):
            small = S.component_extensions(comp, sem)
            sat = sorted(
                sorted(comp.nodes[i] for i in e) for e in SatComponent(comp).extensions(sem)
            )
            assert small == sat
    sp = extension_space(af, "preferred")
    assert sp.count() == len(list(sp.iter_extensions()))


@SETTINGS
@given(frameworks(), st.data())
def test_sat_acceptance_against_brute_force(af: ArgumentFramework, data: st.DataObject) -> None:
    """The same acceptance questions, forced through the SAT backend."""
    import pytest

    import crux_lab.argumentation.semantics as sem_mod
    import crux_lab.argumentation.space as space_mod

    if not af.arguments:
        return
    o = all_semantics(af)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sem_mod, "SMALL_LIMIT", 0)
        mp.setattr(space_mod, "SMALL_LIMIT", 0)
        args = data.draw(st.lists(st.sampled_from(sorted(af.arguments)), min_size=1, max_size=4))
        for a in args:  # several queries on one framework reuse the cached solvers
            for sem in ("complete", "preferred", "stable"):
                exts = o[sem]
                assert S.credulously_accepted(af, a, sem) == any(a in e for e in exts)
                assert S.skeptically_accepted(af, a, sem) == all(a in e for e in exts)
