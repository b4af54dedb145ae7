"""Cross-debate crux recurrence (crux_lab.analysis.recurrence)."""

from __future__ import annotations

import numpy as np
import pytest

from crux_lab.analysis.recurrence import (
    RECURRENCE_THRESHOLD,
    CruxItem,
    cluster,
    crux_recurrence,
    items_from,
    items_from_results,
    recurrence_rate,
)
from crux_lab.models import Crux, CruxCard, CruxCardPosition, DebateConfig, DebateResult


def card(cid: str, question: str, dtype: str = "evidence") -> CruxCard:
    return CruxCard(
        id=cid, question=question, disagreement_type=dtype, diagnosis="",  # type: ignore[arg-type]
        personas={"a": CruxCardPosition(position="YES", reasoning="")},
    )


class Axis:
    """Encoder placing each question on a unit vector chosen by a keyword (exact similarities)."""

    def encode(self, texts: list[str]) -> np.ndarray:
        out = []
        for t in texts:
            v = np.zeros(3)
            v[0 if "supply" in t else 1 if "custody" in t else 2] = 1.0
            out.append(v)
        return np.array(out)


def test_recurring_cluster_needs_two_debates() -> None:
    items = items_from({
        "d1": [card("c1", "supply A"), card("c2", "custody A")],
        "d2": [card("c3", "supply B", "premise")],
        "d3": [card("c4", "supply C"), card("c5", "other")],
    })
    rec = crux_recurrence(items, encoder=Axis())
    assert len(rec) == 1
    r = rec[0]
    assert r.debate_ids == ("d1", "d2", "d3") and r.n_debates == 3
    assert {m.crux_id for m in r.members} == {"c1", "c3", "c4"}
    assert dict(r.types) == {"evidence": 2, "premise": 1}
    assert r.mean_similarity == 1.0
    assert recurrence_rate(items, rec) == 0.6
    # the same crux twice in one debate is not recurrence
    same_debate = items_from({"d1": [card("x", "supply 1"), card("y", "supply 2")]})
    assert crux_recurrence(same_debate, encoder=Axis()) == []
    assert crux_recurrence(same_debate, encoder=Axis(), min_debates=1)[0].n_debates == 1


def test_cluster_average_linkage_threshold() -> None:
    s = np.array([[1.0, 0.7, 0.6], [0.7, 1.0, 0.6], [0.6, 0.6, 1.0]])
    assert cluster(s, 0.65) == [0, 0, 1]
    assert cluster(s, 0.55) == [0, 0, 0]
    assert cluster(np.ones((1, 1)), 0.6) == [0] and cluster(np.zeros((0, 0)), 0.6) == []


def test_real_embeddings_join_paraphrases_not_different_cruxes() -> None:
    items = [
        CruxItem("d1", "a", "Does a fixed supply make bitcoin a superior store of value?"),
        CruxItem("d2", "b", "Whether bitcoin's capped supply makes it a better store of value"),
        CruxItem("d3", "c", "Can government custody of bitcoin be made secure?"),
        CruxItem("d4", "d", "Should frontier AI training runs require a license?"),
        CruxItem("d5", "e", "Whether governments should license large AI training runs"),
    ]
    rec = crux_recurrence(items)
    groups = sorted(sorted(m.crux_id for m in r.members) for r in rec)
    assert groups == [["a", "b"], ["d", "e"]]
    assert all(r.mean_similarity >= RECURRENCE_THRESHOLD for r in rec)


def test_items_from_results_prefers_cards() -> None:
    cfg = DebateConfig(topic="t", persona_ids=["a", "b"])
    with_cards = DebateResult(run_id="r1", config=cfg, engine="panel", backend="simulated", crux_cards=[card("c", "q1")])
    with_cruxes = DebateResult(
        run_id="r2", config=cfg, engine="dcg", backend="simulated",
        cruxes=[Crux(id="x", statement="q2", source="dispute")],
    )
    items = items_from_results([with_cards, with_cruxes])
    assert [(i.debate_id, i.question, i.disagreement_type) for i in items] == [("r1", "q1", "evidence"), ("r2", "q2", None)]


@pytest.mark.parametrize("threshold", [0.5, 0.62, 0.8])
def test_empty_input(threshold: float) -> None:
    assert crux_recurrence([], threshold=threshold, encoder=Axis()) == []
