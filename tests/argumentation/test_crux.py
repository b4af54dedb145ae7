"""Crux extraction: common ground, camps, symmetric difference, assumptions, regime, pivots."""

from __future__ import annotations

import random

from hypothesis import given, settings

from crux_lab.argumentation import (
    ArgumentFramework,
    classify_af_regime,
    count_extensions,
    df_quad,
    extension_space,
    extract_cruxes,
    grounded_extension,
    h_categorizer,
    preferred_extensions,
)
from crux_lab.argumentation.crux import compute_camps, pivot_arguments

from .oracle import all_semantics
from .test_properties import frameworks


def debate(n_disputes: int, seed: int = 0) -> tuple[ArgumentFramework, dict[str, str]]:
    """Disputes of two mutually attacking arguments, one per persona, plus a defeater chain."""
    rng = random.Random(seed)
    att = []
    speakers = {}
    for i in range(n_disputes):
        a, b = f"a{i}", f"b{i}"
        att += [(a, b), (b, a)]
        speakers[a], speakers[b] = "alice", "bob"
        if rng.random() < 0.3:
            c = f"c{i}"
            att.append((c, b))  # unattacked support for alice's side
            speakers[c] = "carol"
    return ArgumentFramework.from_edges(speakers, att), speakers


def test_seed_checklist_cases() -> None:
    empty = ArgumentFramework()
    assert grounded_extension(empty) == frozenset() and preferred_extensions(empty) == [frozenset()]
    single = ArgumentFramework.from_edges(["a"])
    assert preferred_extensions(single) == [frozenset({"a"})]
    chain = ArgumentFramework.from_edges("ab", [("a", "b")])
    assert grounded_extension(chain) == {"a"}
    odd = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "c"), ("c", "a")])
    rep = extract_cruxes(odd, {"a": "p", "b": "q", "c": "p"})
    assert rep.extension_count == 1 and rep.regime.regime == "consensus"
    assert rep.symmetric_difference == frozenset()


def test_nixon_diamond_two_camps() -> None:
    af = ArgumentFramework.from_edges(
        ["quaker", "republican", "pacifist", "not_pacifist"],
        [
            ("quaker", "republican"),
            ("republican", "quaker"),
            ("quaker", "not_pacifist"),
            ("republican", "pacifist"),
        ],
    )
    speakers = {"quaker": "ann", "pacifist": "ann", "republican": "ben", "not_pacifist": "ben"}
    assumptions = {
        "quaker": ["Religion decides"],
        "pacifist": ["Religion decides"],
        "republican": ["Party decides"],
    }
    rep = extract_cruxes(af, speakers, assumptions)
    assert rep.common_ground == frozenset()
    assert [c.personas for c in rep.camps] == [("ben",), ("ann",)] or [
        c.personas for c in rep.camps
    ] == [("ann",), ("ben",)]
    assert rep.symmetric_difference == af.arguments
    assert rep.crux_assumptions[0].assumption == "Religion decides"
    assert rep.crux_assumptions[0].dependent_args == ("pacifist", "quaker")
    assert rep.regime.regime == "polarized"
    assert {p.argument for p in rep.pivots} == af.arguments
    assert rep.contested == af.arguments


def test_large_debate_uses_factorized_space() -> None:
    af, speakers = debate(300, seed=3)
    rep = extract_cruxes(af, speakers)
    n_free = sum(1 for i in range(300) if f"c{i}" not in af.arguments)
    assert rep.extension_count == 2**n_free  # astronomically many, never materialised
    camps = {c.personas: c for c in rep.camps}
    assert set(camps) == {("alice",), ("bob",)}
    alice = camps[("alice",)].arguments
    assert all(f"a{i}" in alice for i in range(300))
    assert rep.symmetric_difference == frozenset(
        x for i in range(300) if f"c{i}" not in af.arguments for x in (f"a{i}", f"b{i}")
    )
    assert len(rep.pivots) == 2 * n_free
    assert sum(1 for s in rep.statuses.values() if s == "contested") == 2 * n_free


@settings(max_examples=60, deadline=None)
@given(frameworks(max_args=10))
def test_camps_are_preferred_and_statuses_match_oracle(af: ArgumentFramework) -> None:
    o = all_semantics(af)
    speakers = {a: f"p{a % 3}" for a in af.arguments}
    rep = extract_cruxes(af, speakers, max_camps=2)
    prefs = set(o["preferred"])
    assert all(c.arguments in prefs for c in rep.camps)
    assert rep.extension_count == len(prefs)
    cred = frozenset().union(*prefs)
    skep = frozenset.intersection(*prefs)
    for a, status in rep.statuses.items():
        assert status == ("accepted" if a in skep else "contested" if a in cred else "rejected")
    assert rep.common_ground == o["grounded"][0]
    # pivots: check the definition by brute force over all preferred extensions
    space = extension_space(af)
    claims = {p: [a for a in af.arguments if speakers[a] == p] for p in ("p0", "p1", "p2")}
    pivots = {p.argument: p for p in pivot_arguments(space, claims)}
    for comp in space.components:
        for x in comp.credulous - comp.skeptical:
            ins = [e for e in prefs if x in e]
            outs = [e for e in prefs if x not in e]

            def w(es: list[frozenset[int]], comp_args: frozenset[int] = comp.arguments) -> set[str]:
                inter = frozenset.intersection(*es)
                return {
                    p
                    for p, c in claims.items()
                    if set(c) & comp_args and set(c) & comp_args <= inter
                }

            assert (x in pivots) == (w(ins) != w(outs))


def test_compute_camps_without_speakers() -> None:
    af = ArgumentFramework.from_edges("abcd", [("a", "b"), ("b", "a"), ("c", "d"), ("d", "c")])
    camps = compute_camps(extension_space(af), None, max_camps=3)
    # No speakers, no groups of personas: one camp (no personas) stands for every extension seen.
    assert len(camps) == 1 and camps[0].personas == () and camps[0].extensions == 3
    assert count_extensions(af) == 4


def test_regime_thresholds() -> None:
    assert classify_af_regime(10, 1, 3).regime == "polarized"
    assert classify_af_regime(10, 5, 3, polarized_share=0.5).regime == "partial"
    assert classify_af_regime(0, 0, 1).regime == "consensus"


def test_gradual_semantics() -> None:
    af = ArgumentFramework.from_edges("abcd", [("a", "b"), ("b", "c"), ("c", "d"), ("d", "c")])
    h = h_categorizer(af)
    assert h["a"] == 1.0 and h["b"] == 0.5
    for a, v in h.items():
        assert abs(v - 1 / (1 + sum(h[b] for b in af.attackers(a)))) < 1e-9
    s = df_quad("xyz", [("x", "z")], [("y", "z")], {"x": 1.0, "y": 0.0, "z": 0.5})
    assert s["z"] == 0.0  # fully attacked, unsupported
    s = df_quad("xyz", [("x", "z")], [("y", "z")], {"x": 0.0, "y": 1.0, "z": 0.5})
    assert s["z"] == 1.0


def test_max_alternatives_budget() -> None:
    import pytest

    from crux_lab.argumentation import TooManyAlternatives

    # a chain of 10 mutual attacks joined one-way: one component with many alternatives
    att = []
    for i in range(10):
        a, b = f"a{i}", f"b{i}"
        att += [(a, b), (b, a)]
        if i:
            att.append((f"a{i - 1}", b))
    af = ArgumentFramework.from_edges([], att)
    total = count_extensions(af)
    assert total > 8
    with pytest.raises(TooManyAlternatives):
        extension_space(ArgumentFramework.from_edges([], att), "preferred", max_alternatives=8)
    assert count_extensions(ArgumentFramework.from_edges([], att), "preferred", total) == total
    rep = extract_cruxes(af, max_alternatives=total)
    assert rep.extension_count == total


def test_astronomical_counts_format_safely() -> None:
    from crux_lab.argumentation.cli import _int_str
    from crux_lab.argumentation.crux import format_count

    huge = 3 * 10**5000  # beyond Python's default 4300-digit int-to-str limit
    assert format_count(huge) == "~10^5000"
    assert classify_af_regime(10, 0, huge).description.startswith("Polarized: 0 of 10")
    assert len(_int_str(huge)) == 5001
