"""Cross-debate crux recurrence: which cruxes come back across debates, as a graph of clusters.

Crux questions from many debates are embedded (all-MiniLM-L6-v2, :mod:`crux_lab.embed`) and
clustered by average-linkage agglomerative clustering on cosine distance, cut where the
average similarity inside a cluster falls below :data:`RECURRENCE_THRESHOLD`. A cluster whose
questions come from at least ``min_debates`` different debates is a *recurring crux*: a
structural fault line of the domain, not a one-debate artifact.

Threshold (0.62). Measured with ``benchmarks/panel_recurrence_threshold.py`` on the 38 crux
questions of the shipped decks and the test deck (703 pairs of *different* cruxes) and 10
hand-written paraphrase pairs of the same crux: at 0.62 all 10 paraphrases are joined and 1
of 703 different pairs is merged ("better long-term store of value than gold?" vs "will gold
outperform Bitcoin in the next crisis?", 0.70). At 0.65 two paraphrases are lost; at 0.55 nine
different pairs merge. Raise it for stricter recurrence, lower it to catch looser rewordings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from crux_lab.embed import get_embedder
from crux_lab.models.domain import Crux, CruxCard
from crux_lab.models.result import DebateResult

RECURRENCE_THRESHOLD = 0.62


class Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class CruxItem:
    debate_id: str
    crux_id: str
    question: str
    disagreement_type: str | None = None


@dataclass(frozen=True)
class RecurringCrux:
    """A cluster of similar crux questions seen in ``n_debates`` debates."""

    representative: str
    members: tuple[CruxItem, ...]
    debate_ids: tuple[str, ...]
    types: tuple[tuple[str, int], ...]
    mean_similarity: float

    @property
    def n_debates(self) -> int:
        return len(self.debate_ids)


def items_from(debates: Mapping[str, Sequence[CruxCard | Crux]]) -> list[CruxItem]:
    """Flatten ``{debate_id: cards or cruxes}`` into items."""
    out = []
    for debate_id, cruxes in debates.items():
        for c in cruxes:
            text = c.question if isinstance(c, CruxCard) else c.statement
            dtype = c.disagreement_type.value if c.disagreement_type is not None else None
            out.append(CruxItem(debate_id, c.id, text, dtype))
    return out


def items_from_results(results: Sequence[DebateResult]) -> list[CruxItem]:
    """Crux cards of each result (its cruxes when it has no cards), keyed by run id."""
    return items_from({r.run_id: (r.crux_cards or r.cruxes) for r in results})


def cluster(similarity: np.ndarray, threshold: float) -> list[int]:
    """Average-linkage clusters: labels such that each cluster's mean pairwise similarity stays
    at or above ``threshold``.

    >>> s = np.array([[1, .9, .1], [.9, 1, .2], [.1, .2, 1]])
    >>> cluster(s, 0.62)
    [0, 0, 1]
    """
    n = len(similarity)
    if n == 0:
        return []
    if n == 1:
        return [0]
    from sklearn.cluster import AgglomerativeClustering

    distance = np.clip(1.0 - similarity, 0.0, 2.0)
    np.fill_diagonal(distance, 0.0)
    model = AgglomerativeClustering(
        n_clusters=None,
        metric="precomputed",
        linkage="average",
        distance_threshold=1.0 - threshold + 1e-9,
    )
    raw = model.fit_predict(distance)
    order: dict[int, int] = {}
    return [order.setdefault(int(x), len(order)) for x in raw]


def crux_recurrence(
    items: Sequence[CruxItem],
    *,
    threshold: float = RECURRENCE_THRESHOLD,
    min_debates: int = 2,
    encoder: Encoder | None = None,
) -> list[RecurringCrux]:
    """Recurring cruxes across debates, most widespread first."""
    if not items:
        return []
    if encoder is None:
        encoder = get_embedder()
    vecs = np.asarray(encoder.encode([i.question for i in items]), dtype=np.float64)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = vecs / np.where(norms == 0, 1.0, norms)
    sim = vecs @ vecs.T
    labels = cluster(sim, threshold)
    out = []
    for label in sorted(set(labels)):
        idx = [k for k, lab in enumerate(labels) if lab == label]
        debates = tuple(dict.fromkeys(items[k].debate_id for k in idx))
        if len(debates) < min_debates:
            continue
        sub = sim[np.ix_(idx, idx)]
        centre = idx[int(np.argmax(sub.mean(axis=1)))]
        pairs = sub[np.triu_indices(len(idx), 1)]
        types = Counter(items[k].disagreement_type or "unknown" for k in idx)
        out.append(
            RecurringCrux(
                representative=items[centre].question,
                members=tuple(items[k] for k in idx),
                debate_ids=debates,
                types=tuple(types.most_common()),
                mean_similarity=round(float(pairs.mean()) if len(pairs) else 1.0, 4),
            )
        )
    out.sort(key=lambda r: (-r.n_debates, -len(r.members), r.representative))
    return out


def recurrence_rate(items: Sequence[CruxItem], recurring: Sequence[RecurringCrux]) -> float:
    """Share of crux items that belong to a recurring cluster (0 when there are none).

    >>> recurrence_rate([CruxItem("d1", "c", "q")], [])
    0.0
    """
    if not items:
        return 0.0
    inside = sum(len(r.members) for r in recurring)
    return round(inside / len(items), 4)
