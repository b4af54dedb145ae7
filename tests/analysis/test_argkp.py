"""ArgKP check: the KPA-2021 metric on hand-made cases, then the real test split."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crux_lab.analysis.argkp import (
    ArgKPDataError,
    ArgKPSplit,
    Argument,
    KeyPoint,
    average_precision,
    embedding_match_scores,
    kpa_map,
    load_split,
)

TEST_DATA = Path(__file__).resolve().parents[1] / "data" / "argkp2021" / "test_data"


def test_average_precision_hand_example() -> None:
    # Ranking: +, -, +, -, +  -> precisions at the hits 1/1, 2/3, 3/5.
    ap = average_precision([1, 0, 1, 0, 1], [5, 4, 3, 2, 1])
    assert ap == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 6)),  # small score range forces ties
        min_size=1,
        max_size=25,
    )
)
def test_average_precision_equals_scikit_learn(pairs: list[tuple[int, int]]) -> None:
    from sklearn.metrics import average_precision_score

    labels = [p[0] for p in pairs]
    scores = [float(p[1]) for p in pairs]
    ours = average_precision(labels, scores)
    if sum(labels) == 0:
        assert ours == 0.0
    else:
        assert ours == pytest.approx(average_precision_score(labels, scores))


def toy_split() -> ArgKPSplit:
    """Two (topic, stance) groups; one undecided pair; one argument without candidates."""
    args = tuple(
        [Argument(f"a{i}", f"text {i}", "T", 1) for i in range(6)]
        + [Argument(f"b{i}", f"text b{i}", "T", -1) for i in range(2)]
    )
    kps = (
        KeyPoint("k1", "kp one", "T", 1),
        KeyPoint("k2", "kp two", "T", 1),
        KeyPoint("n1", "", "T", -1),
    )
    labels = {
        ("a0", "k1"): 1,
        ("a1", "k2"): 0,
        # ("a2", "k1") undecided: strict counts it 0, relaxed 1
        ("a3", "k1"): 1,
        ("a4", "k2"): 1,
        ("a5", "k1"): 0,
        ("b0", "n1"): 1,
        ("b1", "n1"): 0,
    }
    return ArgKPSplit("toy", args, kps, labels)


def test_kpa_map_hand_computed_strict_and_relaxed() -> None:
    preds = {
        "a0": {"k1": 0.9, "k2": 0.2},  # best k1, match
        "a1": {"k1": 0.1, "k2": 0.8},  # best k2, no match
        "a2": {"k1": 0.7},  # undecided
        "a3": {"k1": 0.6},  # match, but rank 4 of 6 -> outside the top 50%
        "a4": {"k2": 0.5},
        "a5": {"k1": 0.4},
        "b0": {"n1": 0.3},
        "b1": {"n1": 0.9},
    }
    s = kpa_map(preds, toy_split())
    # Group (T, 1): top 3 = a0 (+), a1 (-), a2 (strict -, relaxed +).
    #   strict AP = 1.0 ; relaxed AP = (1 + 2/3) / 2
    # Group (T, -1): top 1 = b1 (-): AP 0.
    assert s.strict == pytest.approx((1.0 + 0.0) / 2)
    assert s.relaxed == pytest.approx(((1 + 2 / 3) / 2 + 0.0) / 2)
    assert s.predicted == 8 and s.arguments == 8
    assert [(g[0], g[1]) for g in s.per_group] == [("T", -1), ("T", 1)]


def test_kpa_map_unpredicted_arguments_get_the_placeholder() -> None:
    # a0 has no prediction: placeholder with score 0, never a match. It ranks last, so it
    # stays out of the top half unless the group is tiny.
    preds = {f"a{i}": {"k1": 1.0 - i / 10} for i in range(1, 6)}
    s = kpa_map(preds, toy_split())
    assert s.predicted == 5
    # Unknown key point ids are ignored like the shared task's script does.
    s2 = kpa_map({"a0": {"nope": 1.0}}, toy_split())
    assert s2.predicted == 0


@pytest.fixture(scope="module")
def split() -> ArgKPSplit:
    return load_split(TEST_DATA, "test")


def test_test_split_loads(split: ArgKPSplit) -> None:
    assert len(split.arguments) > 500 and len(split.key_points) > 20
    assert {a.stance for a in split.arguments} == {1, -1}
    assert len({a.topic for a in split.arguments}) == 3
    assert set(split.labels.values()) == {0, 1}
    assert all(split.candidates(a) for a in split.arguments)


def test_embedding_matcher_beats_random_on_the_real_test_split(split: ArgKPSplit) -> None:
    preds = embedding_match_scores(split)
    assert set(preds) == {a.arg_id for a in split.arguments}
    ours = kpa_map(preds, split)
    assert ours.strict <= ours.relaxed  # undecided pairs can only help in relaxed
    rnd = random.Random(0)
    random_scores = [
        kpa_map({a: {k: rnd.random() for k in kps} for a, kps in preds.items()}, split)
        for _ in range(5)
    ]
    random_strict = float(np.mean([r.strict for r in random_scores]))
    random_relaxed = float(np.mean([r.relaxed for r in random_scores]))
    # Floor, not a recorded result: a matcher that understands the arguments must beat
    # random key-point choice by a wide margin (0.2 mAP) on both scores.
    assert ours.strict > random_strict + 0.2
    assert ours.relaxed > random_relaxed + 0.2


def test_loader_errors_name_file_and_field(tmp_path: Path) -> None:
    with pytest.raises(ArgKPDataError, match="arguments_dev.csv: file missing"):
        load_split(tmp_path, "dev")
    (tmp_path / "arguments_x.csv").write_text("arg_id,argument,topic,stance\na,b,c,2\n")
    (tmp_path / "key_points_x.csv").write_text("key_point_id,key_point,topic,stance\n")
    (tmp_path / "labels_x.csv").write_text("arg_id,key_point_id,label\n")
    with pytest.raises(ArgKPDataError, match="row 2, field 'stance'"):
        load_split(tmp_path, "x")
    (tmp_path / "arguments_x.csv").write_text("arg_id,text\n")
    with pytest.raises(ArgKPDataError, match="column"):
        load_split(tmp_path, "x")
