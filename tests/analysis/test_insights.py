"""Alignment matrix and camps from crux cards (crux_lab.analysis.insights)."""

from __future__ import annotations

import math

import numpy as np

from crux_lab.analysis import alignment
from crux_lab.analysis.insights import (
    CATEGORY,
    alignment_report,
    card_alignment,
    card_disagreement,
    card_positions,
    debate_camps,
    debate_matrix,
)
from crux_lab.models import (
    CruxCard,
    CruxCardPosition,
    DebateConfig,
    DebateResult,
    DisagreementType,
    PersonaPosition,
)


def card(cid: str, dtype: str, **positions: str) -> CruxCard:
    return CruxCard(
        id=cid, question=f"question {cid}?", disagreement_type=dtype, diagnosis="",  # type: ignore[arg-type]
        personas={p: CruxCardPosition(position=v, reasoning="") for p, v in positions.items()},  # type: ignore[arg-type]
    )


CARDS = [
    card("f1", "evidence", a="YES", b="NO"),
    card("f2", "premise", a="YES", c="NO"),
    card("v1", "values", a="YES", b="YES", c="NUANCED"),
    card("d1", "definition", b="NO", c="YES"),
]


def test_every_type_has_a_category() -> None:
    assert set(CATEGORY) == set(DisagreementType)
    assert CATEGORY[DisagreementType.values] == "values" and CATEGORY[DisagreementType.evidence] == "factual"


def test_alignment_matrix_cells_and_missing() -> None:
    m = card_alignment(CARDS, ["a", "b", "c", "d"])
    assert m.row_labels == ("a", "b", "c", "d") and m.col_labels == ("f1", "f2", "v1", "d1")
    assert m.categories == ("factual", "factual", "values", "definitional")
    assert m.values[0][:3].tolist() == [1.0, 1.0, 1.0] and math.isnan(m.values[0][3])
    assert math.isnan(m.values[1][1]) and m.values[2][2] == 0.0
    assert np.isnan(m.values[3]).all()  # d is in no room: missing, not disagreement
    pos = card_positions(CARDS, ["a", "d"])
    assert pos["a"] == {"f1": "YES", "f2": "YES", "v1": "YES", "d1": None} and set(pos["d"].values()) == {None}


def test_disagreement_split_factual_vs_values() -> None:
    split = card_disagreement(CARDS, ["a", "b", "c"])
    assert set(split) == {"factual", "values", "definitional"}
    fact, val = split["factual"], split["values"]
    assert fact.disagreement[0, 1] == 1.0 and fact.disagreement[0, 2] == 1.0
    assert math.isnan(fact.disagreement[1, 2]) and fact.shared[1, 2] == 0  # no shared factual card
    assert val.disagreement[0, 1] == 0.0 and val.disagreement[0, 2] == 0.5
    assert split["definitional"].disagreement[1, 2] == 1.0
    # the same numbers as the shared analysis computes directly
    direct = alignment.disagreement_matrix(card_alignment(CARDS, ["a", "b", "c"]), category="factual")
    assert np.array_equal(np.nan_to_num(direct.disagreement, nan=-1), np.nan_to_num(fact.disagreement, nan=-1))
    assert card_disagreement([], ["a"]) == {}


def test_camps_from_cards_and_stances() -> None:
    finals = {"a": {"p1": "pro", "p2": "pro"}, "b": {"p1": "pro", "p2": "pro"}, "c": {"p1": "con", "p2": "con"}, "d": {"p1": "con", "p2": "con"}}
    cards = [card("x", "evidence", a="YES", c="NO"), card("y", "values", b="YES", d="NO")]
    camps = debate_camps(["a", "b", "c", "d"], cards, finals, {"p1": "P one"})
    assert sorted(sorted(c.persona_ids) for c in camps) == [["a", "b"], ["c", "d"]]
    assert any("for '" in c.label for c in camps)
    m = debate_matrix(["a", "b", "c", "d"], cards, finals, {"p1": "P one"})
    assert m.col_labels == ("x", "y", "p1", "p2") and m.categories == ("factual", "values", "proposition", "proposition")
    assert debate_camps(["a", "b"], [], {}) == []


def test_alignment_report_of_a_result() -> None:
    cfg = DebateConfig(topic="t", persona_ids=["a", "b", "c", "d"])
    positions = [
        PersonaPosition(persona_id=p, at="closing", text="", stances={"p1": s, "p2": s})  # type: ignore[dict-item]
        for p, s in (("a", "pro"), ("b", "pro"), ("c", "con"), ("d", "con"))
    ]
    res = DebateResult(run_id="r", config=cfg, engine="panel", backend="simulated", crux_cards=CARDS, positions=positions)
    rep = alignment_report(res)
    assert rep.cards.shape == (4, 4) and rep.matrix.shape == (4, 6)
    assert rep.camps.k == 2 and sorted(map(sorted, rep.camps.as_lists())) == [["a", "b"], ["c", "d"]]
    assert {d.label for d in rep.divisive} >= {"p1", "p2"}


def test_two_persona_camps_split_only_on_disagreement() -> None:
    opposed = debate_camps(["a", "b"], [card("x", "values", a="YES", b="NO")], {})
    assert [c.persona_ids for c in opposed] == [["a"], ["b"]]
    agreeing = debate_camps(["a", "b"], [], {"a": {"p": "pro"}, "b": {"p": "pro"}})
    assert [c.persona_ids for c in agreeing] == [["a", "b"]]
    disjoint = debate_camps(["a", "b"], [], {"a": {"p": "pro"}, "b": {"q": "con"}})
    assert [c.persona_ids for c in disjoint] == [["a", "b"]]  # nothing shared: no evidence of a split
