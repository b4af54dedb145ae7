"""Position shift detection and the shift timeline (crux_lab.analysis.shifts)."""

from __future__ import annotations

import numpy as np
import pytest

from crux_lab.analysis.shifts import (
    TEXT_SHIFT_THRESHOLD,
    RoomSpan,
    StanceObservation,
    attribute,
    detect_shifts,
    embedding_distances,
    opening_closing,
    shift_timeline,
)

Obs = StanceObservation


class FakeEncoder:
    """Maps each text to a fixed vector so distances are known exactly."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.array([self.vectors[t] for t in texts], dtype=float)


def test_first_and_last_stance_per_proposition() -> None:
    obs = [Obs("a", "p", "pro", 5), Obs("a", "q", "con", 1), Obs("a", "p", "uncertain", 9), Obs("b", "p", "con", 2)]
    assert opening_closing(obs, "a") == ({"q": "con", "p": "pro"}, {"q": "con", "p": "uncertain"})
    assert opening_closing(obs, "nobody") == ({}, {})


def test_timeline_marks_each_change_in_turn_order() -> None:
    obs = [Obs("a", "p", "uncertain", 8, "r1", "met"), Obs("a", "p", "pro", 1), Obs("a", "p", "pro", 4), Obs("a", "p", "con", 12)]
    points = shift_timeline(obs)
    assert [p.turn_index for p in points] == [1, 4, 8, 12]
    assert [p.changed for p in points] == [False, False, True, True]
    assert points[2].room_id == "r1" and points[2].named_reason == "met"


def test_attribution_needs_participation_topic_and_precedence() -> None:
    rooms = [
        RoomSpan("before_on_topic", ("a", "b"), 3, 7, ("p",)),
        RoomSpan("other_topic", ("a", "b"), 3, 7, ("q",)),
        RoomSpan("not_in_it", ("b", "c"), 3, 7, ("p",)),
        RoomSpan("after", ("a", "b"), 20, 25, ("p",)),
        RoomSpan("no_metadata", ("a", "c"), 0, 2, ()),
    ]
    assert attribute("a", "p", 10, rooms) == ["before_on_topic", "no_metadata"]


def test_shift_with_named_reason_attributed_to_room() -> None:
    obs = [Obs("a", "p", "pro", 0), Obs("b", "p", "con", 1), Obs("a", "p", "pro", 4),
           Obs("a", "p", "uncertain", 6, "r1", "drawdowns shrank across halvings"), Obs("a", "p", "uncertain", 11)]
    shifts = detect_shifts(["a", "b"], obs, [RoomSpan("r1", ("a", "b"), 5, 9, ("p",))], names={"a": "Ann"})
    a, b = shifts
    assert a.shifted and a.attributed_rooms == ["r1"] and a.named_reason == "drawdowns shrank across halvings"
    assert [(s.proposition_id, s.before, s.after) for s in a.proposition_shifts] == [("p", "pro", "uncertain")]
    assert "Ann shifted" in a.summary and "with a named reason" in a.summary
    assert not b.shifted and b.proposition_shifts == []


def test_unjustified_shift_outside_rooms_is_reported_as_such() -> None:
    obs = [Obs("a", "p", "pro", 0), Obs("a", "p", "con", 3)]
    (s,) = detect_shifts(["a"], obs, [RoomSpan("r1", ("a", "b"), 5, 9, ("p",))])
    assert s.shifted and s.attributed_rooms == [] and s.named_reason is None
    assert "outside any crux room" in s.summary and "without a named reason" in s.summary


def test_return_to_opening_stance_is_not_a_shift() -> None:
    obs = [Obs("a", "p", "pro", 0), Obs("a", "p", "uncertain", 3), Obs("a", "p", "pro", 7)]
    (s,) = detect_shifts(["a"], obs)
    assert not s.shifted


def test_embedding_distance_and_text_fallback() -> None:
    enc = FakeEncoder({"open-a": [1, 0], "close-a": [0, 1], "open-b": [1, 0], "close-b": [1, 0.1]})
    d = embedding_distances({"a": "open-a", "b": "open-b"}, {"a": "close-a", "b": "close-b"}, enc)
    assert d["a"] == pytest.approx(1.0) and d["b"] == pytest.approx(1 - 1 / np.sqrt(1.01), abs=1e-6)
    # no stance data at all: the text distance decides
    shifts = detect_shifts(["a", "b"], [], opening={"a": "open-a", "b": "open-b"}, closing={"a": "close-a", "b": "close-b"}, encoder=enc)
    assert [s.shifted for s in shifts] == [True, False]
    assert shifts[0].embedding_distance is not None and shifts[0].embedding_distance > TEXT_SHIFT_THRESHOLD
    # with stance data the distance is reported but does not decide
    (s,) = detect_shifts(["a"], [Obs("a", "p", "pro", 0), Obs("a", "p", "pro", 5)], opening={"a": "open-a"}, closing={"a": "close-a"}, encoder=enc)
    assert not s.shifted and s.embedding_distance == pytest.approx(1.0)


def test_real_embedder_separates_topic_change_from_restatement() -> None:
    from crux_lab.embed import get_embedder

    opening = {"a": "Bitcoin's fixed supply makes it a superior store of value.", "b": "Bitcoin's fixed supply makes it a superior store of value."}
    closing = {"a": "Scarcity is why bitcoin is the best store of value.", "b": "Government custody of bitcoin can be made secure against theft."}
    d = embedding_distances(opening, closing, get_embedder())
    assert d["a"] < TEXT_SHIFT_THRESHOLD < d["b"]
