"""Stance-matrix analysis on hand-made matrices whose camps, cruxes and common ground are known."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score

from crux_lab.analysis.alignment import (
    Camps,
    StanceMatrix,
    StanceMatrixError,
    alignment_matrix,
    camp_votes,
    consensus_statements,
    disagreement_by_category,
    disagreement_matrix,
    divisive_statements,
    find_camps,
)


def planted(
    seed: int = 0, per_camp: int = 8, missing: float = 0.25
) -> tuple[StanceMatrix, np.ndarray]:
    """Three camps over 16 propositions with 10% flipped votes and ``missing`` share unseen.

    Columns c0-c3 are camp 0's cause (camp 0 agrees, the others disagree), c4-c7 camp 1's,
    c8-c11 camp 2's; c12-c13 everybody agrees (common ground); c14-c15 are noise. The first
    four are "values" propositions, the rest "factual".
    """
    rng = np.random.default_rng(seed)
    profiles = -np.ones((3, 16))
    for camp in range(3):
        profiles[camp, 4 * camp : 4 * camp + 4] = 1
    profiles[:, 12:14] = 1
    truth = np.repeat(np.arange(3), per_camp)
    values = profiles[truth].copy()
    values[:, 14:] = rng.choice([-1.0, 0.0, 1.0], size=(len(truth), 2))
    flip = rng.random(values[:, :12].shape) < 0.1
    values[:, :12][flip] *= -1
    values[rng.random(values.shape) < missing] = np.nan
    rows = tuple(f"p{i}" for i in range(len(truth)))
    cols = tuple(f"c{j}" for j in range(values.shape[1]))
    cats = tuple("values" if j < 4 else "factual" for j in range(values.shape[1]))
    return StanceMatrix(values, rows, cols, cats), truth


@pytest.mark.parametrize("seed", range(6))
def test_find_camps_recovers_planted_camps_and_k(seed: int) -> None:
    m, truth = planted(seed)
    camps = find_camps(m)
    assert camps.k == 3
    assert set(camps.silhouette_by_k) >= {2, 3}
    assert camps.silhouette == pytest.approx(camps.silhouette_by_k[3])
    # With 10% flipped and 25% unseen votes a row can end up closer to another camp;
    # at most one such row in 24 (ARI 0.87) is tolerated.
    assert adjusted_rand_score(truth, camps.assignment) > 0.8


def test_find_camps_with_given_k_and_numbering_by_size() -> None:
    m, _ = planted(0)
    two = find_camps(m, k=2)
    assert two.k == 2 and two.silhouette_by_k == {}
    sizes = [len(two.members(c)) for c in range(2)]
    assert sizes == sorted(sizes, reverse=True)


def test_missing_votes_are_not_disagreement() -> None:
    # Camp A agrees with everything, camp B disagrees with everything. A sparse member of A
    # voted on 3 of 12 propositions. Were unseen votes read as "disagree", it would join B.
    full_a = {f"a{i}": {f"q{j}": 1 for j in range(12)} for i in range(5)}
    full_b = {f"b{i}": {f"q{j}": -1 for j in range(12)} for i in range(5)}
    sparse = {"sparse_a": {"q0": 1, "q1": 1, "q2": 1}}
    m = alignment_matrix({**full_a, **full_b, **sparse})
    camps = find_camps(m, k=2)
    a_camp = camps.assignment[m.row_labels.index("a0")]
    assert camps.assignment[m.row_labels.index("sparse_a")] == a_camp
    d = disagreement_matrix(m)
    i, j = m.row_labels.index("sparse_a"), m.row_labels.index("a0")
    assert d.disagreement[i, j] == 0.0 and d.shared[i, j] == 3


def test_rows_below_min_votes_are_unassigned() -> None:
    m = alignment_matrix(
        {
            **{f"a{i}": {"x": 1, "y": 1, "z": 1} for i in range(3)},
            **{f"b{i}": {"x": -1, "y": -1, "z": -1} for i in range(3)},
            "lurker": {"x": 1},
        }
    )
    camps = find_camps(m, min_votes=2)
    assert camps.assignment[m.row_labels.index("lurker")] == -1
    assert "lurker" not in sum(camps.as_lists(), [])
    assert camps.k == 2


def test_one_camp_when_everyone_agrees() -> None:
    m = alignment_matrix({f"p{i}": {"x": 1, "y": -1} for i in range(5)})
    camps = find_camps(m)
    assert camps.k == 1 and set(camps.assignment.tolist()) == {0}
    assert divisive_statements(m, camps) == []
    assert [s.label for s in consensus_statements(m, camps)] == ["x"]


def test_divisive_and_consensus_statements_on_planted_matrix() -> None:
    m, truth = planted(3, per_camp=10, missing=0.2)
    camps = Camps(m.row_labels, truth, 3, None)  # the planted camps themselves
    divisive = divisive_statements(m, camps)
    labels = {s.label for s in divisive}
    # The 12 planted crux columns, give or take an unlucky draw of flipped votes.
    assert len(labels & {f"c{j}" for j in range(12)}) >= 10
    assert not labels & {"c12", "c13"}
    for s in divisive:
        assert s.votes[s.most_for].mean_stance > 0 > s.votes[s.most_against].mean_stance
        assert 0 <= s.divisiveness <= 1
    assert [s.divisiveness for s in divisive] == sorted(
        (s.divisiveness for s in divisive), reverse=True
    )
    by_label = {s.label: s for s in divisive}
    assert by_label["c0"].most_for == 0 and by_label["c4"].most_for == 1

    consensus = consensus_statements(m, camps)
    assert {s.label for s in consensus} == {"c12", "c13"}
    assert all(s.min_agree_rate >= 0.6 for s in consensus)
    assert len(divisive_statements(m, camps, top=2)) == 2


def test_leaning_the_same_way_is_not_divisive() -> None:
    # Both camps agree, one strongly, one mildly: a difference of degree, not a crux.
    m = alignment_matrix(
        {
            "a1": {"p": 1, "s": 1},
            "a2": {"p": 1, "s": 1},
            "b1": {"p": 1, "s": -1},
            "b2": {"p": 0, "s": -1},
        }
    )
    camps = Camps(m.row_labels, np.array([0, 0, 1, 1]), 2, None)
    assert [s.label for s in divisive_statements(m, camps, min_divisiveness=0.0)] == ["s"]


def test_min_votes_per_camp_excludes_statements_a_camp_never_saw() -> None:
    m = alignment_matrix({"a1": {"p": 1, "q": 1}, "a2": {"p": 1}, "b1": {"p": -1}, "b2": {"p": -1}})
    camps = Camps(m.row_labels, np.array([0, 0, 1, 1]), 2, None)
    assert [s.label for s in divisive_statements(m, camps)] == ["p"]
    assert consensus_statements(m, camps) == []  # camp 1 never voted on q


def test_camp_votes_count_only_voters() -> None:
    m = alignment_matrix({"a": {"p": 1}, "b": {"p": 0}, "c": {}, "d": {"p": -1}}, columns=["p"])
    camps = Camps(m.row_labels, np.array([0, 0, 0, 1]), 2, None)
    v0, v1 = camp_votes(m, camps)[0]
    assert (v0.agree, v0.passed, v0.disagree, v0.n_votes) == (1, 1, 0, 2)
    assert v0.agree_rate == 0.5 and v1.disagree_rate == 1.0
    assert v0.smoothed_agree == pytest.approx(2 / 4)


def test_disagreement_split_by_category() -> None:
    m, truth = planted(0, missing=0.0)
    split = disagreement_by_category(m)
    assert set(split) == {"values", "factual"}
    # Camps 1 and 2 share their values (both reject c0-c3) but differ on facts (c4-c11).
    i, j = int(np.argmax(truth == 1)), int(np.argmax(truth == 2))
    assert split["values"].disagreement[i, j] < split["factual"].disagreement[i, j]
    assert split["values"].shared[i, j] == 4


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from([1.0, -1.0, 0.0, math.nan]), min_size=5, max_size=5),
        min_size=1,
        max_size=7,
    )
)
def test_disagreement_matrix_matches_pairwise_definition(rows: list[list[float]]) -> None:
    values = np.array(rows)
    m = StanceMatrix(values, tuple(f"r{i}" for i in range(len(rows))), tuple("abcde"))
    d = disagreement_matrix(m)
    for i in range(len(rows)):
        for j in range(len(rows)):
            both = ~np.isnan(values[i]) & ~np.isnan(values[j])
            assert d.shared[i, j] == both.sum()
            if both.any():
                expected = np.mean(np.abs(values[i][both] - values[j][both]) / 2)
                assert d.disagreement[i, j] == pytest.approx(expected)
            else:
                assert math.isnan(d.disagreement[i, j])


def test_alignment_matrix_from_triples_keeps_given_order_and_categories() -> None:
    m = alignment_matrix(
        [("bo", "p2", "con"), ("ada", "p1", "YES")],
        rows=["ada", "bo", "cy"],
        columns=["p1", "p2"],
        categories={"p1": "factual"},
        texts={"p1": "Nuclear is safe."},
    )
    assert m.row_labels == ("ada", "bo", "cy")
    assert m.categories == ("factual", "uncategorised")
    assert m.col_texts == ("Nuclear is safe.", "")
    assert np.isnan(m.values[2]).all()


@pytest.mark.parametrize(
    ("stances", "match"),
    [
        ({"a": {"p": "maybe"}}, "not a known stance"),
        ({"a": {"p": 2}}, "not \\+1, -1, 0"),
    ],
)
def test_bad_stances_are_named(stances: dict, match: str) -> None:
    with pytest.raises(StanceMatrixError, match=match):
        alignment_matrix(stances)


def test_bad_matrix_shapes_are_named() -> None:
    with pytest.raises(StanceMatrixError, match="row_labels"):
        StanceMatrix(np.zeros((2, 2)), ("a",), ("x", "y"))
    with pytest.raises(StanceMatrixError, match="repeats 'a'"):
        StanceMatrix(np.zeros((2, 1)), ("a", "a"), ("x",))
    with pytest.raises(StanceMatrixError, match="only \\+1, -1, 0 and NaN"):
        StanceMatrix(np.full((1, 1), 0.5), ("a",), ("x",))
    with pytest.raises(StanceMatrixError, match="entity 'z' is not in rows"):
        alignment_matrix([("z", "p", 1)], rows=["a"])
    m, _ = planted(0)
    other = alignment_matrix({"x": {"p": 1}})
    with pytest.raises(StanceMatrixError, match="another matrix"):
        camp_votes(other, find_camps(m))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 5))
def test_own_silhouette_matches_scikit_learn(seed: int, k: int) -> None:
    from sklearn.metrics import silhouette_score

    from crux_lab.analysis.alignment import _kmeans, _silhouette

    points = np.random.default_rng(seed).normal(size=(30, 2))
    labels = _kmeans(points, k, seed=seed)
    if len(np.unique(labels)) < 2:
        return
    assert _silhouette(points, labels) == pytest.approx(silhouette_score(points, labels), abs=1e-9)
