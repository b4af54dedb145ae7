"""Stance-matrix analysis: alignment matrices, camps, divisive and consensus statements.

One path for every "who stands where" question of the workbench. The rows of a
:class:`StanceMatrix` are entities (personas, Polis participants), its columns propositions
(deck propositions, crux cards, Polis comments), and each cell one of

- ``+1`` agree / YES / pro,
- ``-1`` disagree / NO / con,
- ``0`` pass / NUANCED / uncertain,
- ``NaN`` missing: the entity never took a position.

**Missing is not disagreement.** Every function here treats NaN as "no information":

- :func:`disagreement_matrix` compares two rows only over the columns both voted on, and
  reports how many there were;
- :func:`find_camps` clusters on a mean-imputed matrix (NaN -> the column's mean vote, so a
  missing vote pulls toward the centre instead of toward "disagree"), projects on the leading
  principal components and scales each row's projection by ``sqrt(n_columns / n_voted)``
  (Polis's correction, so sparse voters are not all collapsed into the centre); rows with
  fewer than ``min_votes`` votes are left unassigned (camp ``-1``);
- per-camp agree rates count only the camp members who voted on the statement.

Typical use (engines build the matrix from persona stances or crux-card positions)::

    m = alignment_matrix(records, categories={"p1": "factual", "p2": "values"})
    camps = find_camps(m)
    cruxes = divisive_statements(m, camps)
    common = consensus_statements(m, camps)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from crux_lab.models.domain import Camp

if TYPE_CHECKING:
    from crux_lab.models.domain import Camp

__all__ = [
    "Camps",
    "CampVotes",
    "ConsensusStatement",
    "DisagreementMatrix",
    "DivisiveStatement",
    "StanceMatrix",
    "StanceMatrixError",
    "alignment_matrix",
    "camp_votes",
    "consensus_statements",
    "disagreement_by_category",
    "disagreement_matrix",
    "divisive_statements",
    "find_camps",
    "stance_value",
]

_VALUE_NAMES: dict[str, float] = {
    "agree": 1.0,
    "yes": 1.0,
    "pro": 1.0,
    "disagree": -1.0,
    "no": -1.0,
    "con": -1.0,
    "pass": 0.0,
    "nuanced": 0.0,
    "uncertain": 0.0,
    "neutral": 0.0,
}


class StanceMatrixError(ValueError):
    """A stance matrix or its inputs are malformed (the message names the field and the fix)."""


def stance_value(value: object) -> float:
    """Map a stance to +1 / -1 / 0, or NaN for missing.

    Accepts numbers in {1, -1, 0}, the words agree/disagree/pass, YES/NO/NUANCED,
    pro/con/uncertain (any case, also enum members with such a ``.value``), and None/NaN.

    >>> [stance_value(v) for v in ("YES", "con", "nuanced", 1, -1.0, 0)]
    [1.0, -1.0, 0.0, 1.0, -1.0, 0.0]
    >>> math.isnan(stance_value(None))
    True
    """
    raw = getattr(value, "value", value)
    if raw is None:
        return math.nan
    if isinstance(raw, str):
        key = raw.strip().lower()
        if key in _VALUE_NAMES:
            return _VALUE_NAMES[key]
        raise StanceMatrixError(
            f"stance {raw!r} is not a known stance; use one of agree/disagree/pass, "
            "YES/NO/NUANCED, pro/con/uncertain, +1/-1/0 or None for missing."
        )
    if isinstance(raw, int | float | np.integer | np.floating):
        number = float(raw)
        if math.isnan(number) or number in (1.0, -1.0, 0.0):
            return number
    raise StanceMatrixError(
        f"stance {raw!r} is not +1, -1, 0 or missing; map agree to 1, disagree to -1, "
        "pass to 0 and leave missing votes out (or None)."
    )


@dataclass(frozen=True)
class StanceMatrix:
    """Entities x propositions stance values (+1, -1, 0, NaN = missing), with labels.

    ``categories`` optionally gives each column a category (e.g. ``factual`` / ``values``,
    or a crux type) for the split disagreement matrices.
    """

    values: np.ndarray
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    categories: tuple[str, ...] | None = None
    col_texts: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        vals = np.asarray(self.values, dtype=np.float64)
        if vals.ndim != 2:
            raise StanceMatrixError(
                f"StanceMatrix.values must be 2-D (entities x propositions), got shape {vals.shape}."
            )
        if vals.shape != (len(self.row_labels), len(self.col_labels)):
            raise StanceMatrixError(
                f"StanceMatrix.values has shape {vals.shape} but there are "
                f"{len(self.row_labels)} row_labels and {len(self.col_labels)} col_labels; "
                "give one label per row and per column."
            )
        observed = vals[~np.isnan(vals)]
        bad = observed[~np.isin(observed, (-1.0, 0.0, 1.0))]
        if bad.size:
            raise StanceMatrixError(
                f"StanceMatrix.values holds {bad[0]!r}; only +1, -1, 0 and NaN (missing) are allowed."
            )
        for name, labels in (("row_labels", self.row_labels), ("col_labels", self.col_labels)):
            if len(set(labels)) != len(labels):
                dup = next(x for x in labels if labels.count(x) > 1)
                raise StanceMatrixError(
                    f"StanceMatrix.{name} repeats {dup!r}; labels must be unique."
                )
        for name, extra in (("categories", self.categories), ("col_texts", self.col_texts)):
            if extra is not None and len(extra) != len(self.col_labels):
                raise StanceMatrixError(
                    f"StanceMatrix.{name} has {len(extra)} entries for {len(self.col_labels)} "
                    "columns; give one per column."
                )
        vals.setflags(write=False)
        object.__setattr__(self, "values", vals)

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.row_labels), len(self.col_labels))

    @property
    def observed(self) -> np.ndarray:
        """Boolean mask of cells with a vote (pass included)."""
        return ~np.isnan(self.values)

    def select_rows(self, keep: np.ndarray | Sequence[bool]) -> StanceMatrix:
        """The matrix restricted to the rows where ``keep`` is true."""
        mask = np.asarray(keep, dtype=bool)
        return StanceMatrix(
            self.values[mask],
            tuple(lbl for lbl, k in zip(self.row_labels, mask, strict=True) if k),
            self.col_labels,
            self.categories,
            self.col_texts,
        )

    def select_columns(self, keep: np.ndarray | Sequence[bool]) -> StanceMatrix:
        """The matrix restricted to the columns where ``keep`` is true."""
        mask = np.asarray(keep, dtype=bool)

        def pick(items: tuple[str, ...] | None) -> tuple[str, ...] | None:
            return (
                None if items is None else tuple(x for x, k in zip(items, mask, strict=True) if k)
            )

        return StanceMatrix(
            self.values[:, mask],
            self.row_labels,
            pick(self.col_labels) or (),
            pick(self.categories),
            pick(self.col_texts),
        )


def alignment_matrix(
    stances: Iterable[tuple[str, str, object]] | Mapping[str, Mapping[str, object]],
    *,
    rows: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    categories: Mapping[str, str] | None = None,
    texts: Mapping[str, str] | None = None,
) -> StanceMatrix:
    """Build the entities x propositions alignment matrix from stances.

    ``stances`` is either ``(entity, proposition, stance)`` triples or a mapping
    ``{entity: {proposition: stance}}``; a stance is anything :func:`stance_value` accepts.
    Pairs never given are missing (NaN). ``rows``/``columns`` fix the order (and may add
    entities or propositions with no stance); otherwise order of first appearance.
    ``categories`` maps a proposition to its category (missing ones get ``"uncategorised"``).

    >>> m = alignment_matrix({"ada": {"p1": "YES", "p2": "NO"}, "bo": {"p1": "NUANCED"}})
    >>> m.row_labels, m.col_labels
    (('ada', 'bo'), ('p1', 'p2'))
    >>> m.values.tolist()
    [[1.0, -1.0], [0.0, nan]]
    """
    if isinstance(stances, Mapping):
        triples = [(e, p, s) for e, per in stances.items() for p, s in per.items()]
        first_rows = list(stances)  # keeps entities with no stance at all
    else:
        triples = list(stances)
        first_rows = [t[0] for t in triples]
    row_order = list(rows) if rows is not None else list(dict.fromkeys(first_rows))
    col_order = list(columns) if columns is not None else list(dict.fromkeys(t[1] for t in triples))
    row_index = {r: i for i, r in enumerate(row_order)}
    col_index = {c: j for j, c in enumerate(col_order)}
    values = np.full((len(row_order), len(col_order)), np.nan)
    for entity, prop, stance in triples:
        if entity not in row_index:
            raise StanceMatrixError(f"alignment_matrix: entity {entity!r} is not in rows; add it.")
        if prop not in col_index:
            raise StanceMatrixError(
                f"alignment_matrix: proposition {prop!r} is not in columns; add it."
            )
        values[row_index[entity], col_index[prop]] = stance_value(stance)
    cats = (
        tuple(categories.get(c, "uncategorised") for c in col_order)
        if categories is not None
        else None
    )
    col_texts = tuple(texts.get(c, "") for c in col_order) if texts is not None else None
    return StanceMatrix(values, tuple(row_order), tuple(col_order), cats, col_texts)


# -- pairwise disagreement --------------------------------------------------------------


@dataclass(frozen=True)
class DisagreementMatrix:
    """Entity x entity disagreement over co-voted propositions.

    ``disagreement[i, j]`` is the mean of ``|v_i - v_j| / 2`` over the propositions both
    voted on: 1 = opposite votes everywhere, 0.5 = pass against a side, 0 = identical.
    NaN where ``shared[i, j]`` (the number of co-voted propositions) is 0.
    """

    labels: tuple[str, ...]
    disagreement: np.ndarray
    shared: np.ndarray
    category: str | None = None


def disagreement_matrix(matrix: StanceMatrix, *, category: str | None = None) -> DisagreementMatrix:
    """Pairwise disagreement of the rows of ``matrix`` (optionally one column category only).

    >>> m = alignment_matrix({"a": {"x": 1, "y": 1}, "b": {"x": -1}, "c": {"y": 0}})
    >>> d = disagreement_matrix(m)
    >>> d.disagreement.round(2).tolist()
    [[0.0, 1.0, 0.5], [1.0, 0.0, nan], [0.5, nan, 0.0]]
    >>> d.shared.tolist()
    [[2, 1, 1], [1, 1, 0], [1, 0, 1]]
    """
    if category is not None:
        if matrix.categories is None:
            raise StanceMatrixError(
                "disagreement_matrix: category given but the matrix has no categories; "
                "build it with alignment_matrix(..., categories=...)."
            )
        matrix = matrix.select_columns([c == category for c in matrix.categories])
    obs = matrix.observed.astype(np.float64)
    filled = np.nan_to_num(matrix.values)
    shared = obs @ obs.T
    # sum over co-voted columns of |a-b|, expanded for values in {-1, 0, 1}:
    # |a-b| = (a-b)^2 when |a-b| <= 1, and 2 for opposite signs; (a-b)^2 = 4 there, so use
    # |a-b| = (a-b)^2 - 2*[a*b == -1].
    sq = (filled**2) @ obs.T + obs @ (filled**2).T - 2 * filled @ filled.T
    opposite = (np.clip(-filled, 0, 1) @ np.clip(filled, 0, 1).T) + (
        np.clip(filled, 0, 1) @ np.clip(-filled, 0, 1).T
    )
    abs_sum = sq - 2 * opposite
    with np.errstate(invalid="ignore", divide="ignore"):
        dis = np.where(shared > 0, abs_sum / (2 * shared), np.nan)
    dis = np.clip(dis, 0.0, 1.0)
    return DisagreementMatrix(matrix.row_labels, dis, shared.astype(np.int64), category)


def disagreement_by_category(matrix: StanceMatrix) -> dict[str, DisagreementMatrix]:
    """One :class:`DisagreementMatrix` per column category (e.g. factual vs values).

    >>> m = alignment_matrix({"a": {"f": 1, "v": 1}, "b": {"f": 1, "v": -1}},
    ...                      categories={"f": "factual", "v": "values"})
    >>> {k: float(d.disagreement[0, 1]) for k, d in disagreement_by_category(m).items()}
    {'factual': 0.0, 'values': 1.0}
    """
    if matrix.categories is None:
        raise StanceMatrixError(
            "disagreement_by_category: the matrix has no categories; build it with "
            "alignment_matrix(..., categories=...)."
        )
    return {
        cat: disagreement_matrix(matrix, category=cat) for cat in dict.fromkeys(matrix.categories)
    }


# -- camps ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Camps:
    """A partition of the rows into camps.

    ``assignment[i]`` is row i's camp (0..k-1) or -1 when the row voted on fewer than
    ``min_votes`` propositions and was left out. ``silhouette_by_k`` holds the silhouette
    score of each k tried when k was chosen automatically.
    """

    row_labels: tuple[str, ...]
    assignment: np.ndarray
    k: int
    silhouette: float | None
    silhouette_by_k: dict[int, float] = field(default_factory=dict)
    method: str = "pca-kmeans"

    def members(self, camp: int) -> tuple[str, ...]:
        """Row labels of one camp."""
        return tuple(
            lbl for lbl, a in zip(self.row_labels, self.assignment, strict=True) if a == camp
        )

    def as_lists(self) -> list[list[str]]:
        """Row labels per camp, camp 0 first (unassigned rows omitted)."""
        return [list(self.members(c)) for c in range(self.k)]

    def as_models(self) -> list[Camp]:
        """The camps as :class:`crux_lab.models.Camp` records (rows taken as persona ids).

        >>> Camps(("ada", "bo"), np.array([0, 0]), 1, None).as_models()[0].persona_ids
        ['ada', 'bo']
        """
        return [Camp(index=c, persona_ids=list(self.members(c))) for c in range(self.k)]


def _embed_rows(values: np.ndarray, n_components: int) -> np.ndarray:
    """Mean-impute missing votes, project on leading PCs, rescale sparse voters (Polis)."""
    obs = ~np.isnan(values)
    n_obs = obs.sum(axis=0)
    col_mean = np.divide(
        np.nansum(values, axis=0), n_obs, out=np.zeros(values.shape[1]), where=n_obs > 0
    )
    imputed = np.where(obs, values, col_mean)
    centred = imputed - col_mean
    n_comp = max(1, min(n_components, min(centred.shape) - 1 if min(centred.shape) > 1 else 1))
    # SVD gives the principal axes; sign of axes is arbitrary and does not matter to k-means.
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    proj = centred @ vt[:n_comp].T
    votes = np.maximum(obs.sum(axis=1), 1)
    return proj * np.sqrt(values.shape[1] / votes)[:, None]


def _kmeans(
    points: np.ndarray, k: int, *, seed: int, n_init: int = 10, max_iter: int = 100
) -> np.ndarray:
    """Lloyd's k-means with k-means++ seeding, best of ``n_init`` restarts (lowest inertia).

    Plain numpy, deterministic for a seed (no thread pool: the analysis runs inside sweeps
    that already use every core).

    >>> pts = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
    >>> lab = _kmeans(pts, 2, seed=0)
    >>> bool(lab[0] == lab[1] != lab[2] == lab[3])
    True
    """
    rng = np.random.default_rng(seed)
    n = len(points)
    best_labels = np.zeros(n, dtype=np.int64)
    best_inertia = math.inf
    for _ in range(n_init):
        centres = [points[rng.integers(n)]]
        for _ in range(1, k):
            d2 = np.min(((points[:, None, :] - np.array(centres)[None]) ** 2).sum(-1), axis=1)
            total = d2.sum()
            pick = rng.choice(n, p=d2 / total) if total > 0 else rng.integers(n)
            centres.append(points[pick])
        c = np.array(centres, dtype=np.float64)
        labels = np.zeros(n, dtype=np.int64)
        for it in range(max_iter):
            d2 = ((points[:, None, :] - c[None]) ** 2).sum(-1)
            new = np.argmin(d2, axis=1)
            if it and np.array_equal(new, labels):
                break
            labels = new
            for j in range(k):
                members = points[labels == j]
                if len(members):
                    c[j] = members.mean(axis=0)
        inertia = float(((points - c[labels]) ** 2).sum())
        if inertia < best_inertia - 1e-12:
            best_inertia, best_labels = inertia, labels.copy()
    return best_labels


def _silhouette(points: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette coefficient (Euclidean), as scikit-learn's ``silhouette_score``.

    Points alone in their cluster score 0.

    >>> pts = np.array([[0.0], [1.0], [10.0], [11.0]])
    >>> round(_silhouette(pts, np.array([0, 0, 1, 1])), 4)
    0.8997
    """
    dist = np.sqrt(np.maximum(((points[:, None, :] - points[None]) ** 2).sum(-1), 0.0))
    uniq = np.unique(labels)
    onehot = (labels[:, None] == uniq[None]).astype(np.float64)
    sizes = onehot.sum(axis=0)
    sums = dist @ onehot  # (n, clusters): sum of distances to each cluster
    own = np.searchsorted(uniq, labels)
    own_size = sizes[own]
    a = np.divide(
        sums[np.arange(len(labels)), own],
        own_size - 1,
        out=np.zeros(len(labels)),
        where=own_size > 1,
    )
    mean_other = sums / sizes
    mean_other[np.arange(len(labels)), own] = np.inf
    b = mean_other.min(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sil = np.where(own_size > 1, (b - a) / np.maximum(a, b), 0.0)
    return float(np.nan_to_num(sil).mean())


def find_camps(
    matrix: StanceMatrix,
    k: int | None = None,
    *,
    k_max: int = 5,
    min_votes: int = 1,
    n_components: int = 2,
    seed: int = 0,
) -> Camps:
    """Cluster the rows of ``matrix`` into camps of like-minded entities.

    Method (``pca-kmeans``, as Polis does it): missing votes are imputed with the column's
    mean vote (missing is not disagreement), the matrix is projected on its first
    ``n_components`` principal components, each row's projection is scaled by
    ``sqrt(n_columns / n_voted)`` so sparse voters are not pulled into the centre, and
    k-means (k-means++ seeding, best of 10 restarts, ``seed``) clusters the projections. When ``k`` is None it is chosen
    in ``2..k_max`` by the best silhouette score. Rows with fewer than ``min_votes`` votes get
    camp -1. Fewer than 3 eligible rows, or all eligible rows identical: one camp (k=1).
    Camps are numbered by size, largest first.

    >>> m = alignment_matrix({
    ...     "a": {"p": 1, "q": 1, "r": -1}, "b": {"p": 1, "q": 1, "r": -1},
    ...     "c": {"p": -1, "q": -1, "r": 1}, "d": {"p": -1, "q": -1},
    ... })
    >>> find_camps(m).as_lists()
    [['a', 'b'], ['c', 'd']]
    """
    if k is not None and k < 1:
        raise StanceMatrixError(f"find_camps: k must be >= 1 or None, got {k}.")
    if k_max < 2:
        raise StanceMatrixError(f"find_camps: k_max must be >= 2, got {k_max}.")
    n_rows = matrix.shape[0]
    votes = matrix.observed.sum(axis=1)
    eligible = votes >= max(min_votes, 1)
    assignment = np.full(n_rows, -1, dtype=np.int64)
    sub = matrix.values[eligible]
    n_eligible = int(eligible.sum())

    if n_eligible == 0:
        return Camps(matrix.row_labels, assignment, 0, None)
    points = _embed_rows(sub, n_components) if sub.shape[1] else np.zeros((n_eligible, 1))
    n_distinct = len(np.unique(points.round(9), axis=0))
    if k is None and (n_eligible < 3 or n_distinct < 2):
        assignment[eligible] = 0
        return Camps(matrix.row_labels, assignment, 1, None)
    if k is not None and k > n_distinct:
        raise StanceMatrixError(
            f"find_camps: k={k} but the rows take only {n_distinct} distinct positions; "
            "lower k or pass k=None to choose it by silhouette."
        )

    def cluster(n_clusters: int) -> np.ndarray:
        return _kmeans(points, n_clusters, seed=seed)

    scores: dict[int, float] = {}
    if k is None:
        candidates: dict[int, np.ndarray] = {}
        for kk in range(2, min(k_max, n_distinct, n_eligible - 1) + 1):
            trial = cluster(kk)
            if len(np.unique(trial)) < 2:
                continue
            candidates[kk] = trial
            scores[kk] = float(_silhouette(points, trial))
        if candidates:
            labels = candidates[max(scores, key=lambda kk: (scores[kk], -kk))]
        else:  # degenerate geometry: k-means never separated the points
            labels = np.zeros(n_eligible, dtype=np.int64)
    else:
        labels = cluster(k) if k > 1 else np.zeros(n_eligible, dtype=np.int64)

    # Renumber camps by size (largest first), ties by first row, so results are stable.
    uniq = np.unique(labels)
    order = sorted(uniq, key=lambda c: (-int((labels == c).sum()), int(np.argmax(labels == c))))
    remap = {int(old): new for new, old in enumerate(order)}
    assignment[eligible] = [remap[int(x)] for x in labels]
    n_camps = len(uniq)
    sil = float(_silhouette(points, labels)) if 1 < n_camps < n_eligible else None
    return Camps(matrix.row_labels, assignment, n_camps, sil, scores)


# -- per-camp statement profiles ----------------------------------------------------------


@dataclass(frozen=True)
class CampVotes:
    """Votes of one camp on one statement (only members who voted count)."""

    camp: int
    agree: int
    disagree: int
    passed: int

    @property
    def n_votes(self) -> int:
        return self.agree + self.disagree + self.passed

    @property
    def agree_rate(self) -> float:
        """Share of the camp's votes that agree; NaN when nobody in the camp voted."""
        return self.agree / self.n_votes if self.n_votes else math.nan

    @property
    def disagree_rate(self) -> float:
        return self.disagree / self.n_votes if self.n_votes else math.nan

    @property
    def mean_stance(self) -> float:
        """(agree - disagree) / votes, in [-1, 1]; NaN without votes."""
        return (self.agree - self.disagree) / self.n_votes if self.n_votes else math.nan

    @property
    def smoothed_agree(self) -> float:
        """Laplace-smoothed agree probability (A + 1) / (S + 2), as Polis uses for consensus."""
        return (self.agree + 1) / (self.n_votes + 2)


def _check_camps(matrix: StanceMatrix, camps: Camps) -> None:
    if camps.row_labels != matrix.row_labels:
        raise StanceMatrixError(
            "camps were computed on another matrix (row labels differ); call find_camps on "
            "this matrix or build Camps with its row_labels."
        )


def camp_votes(matrix: StanceMatrix, camps: Camps) -> list[tuple[CampVotes, ...]]:
    """Per statement (column), the votes of each camp (camp 0 first).

    >>> m = alignment_matrix({"a": {"p": 1}, "b": {"p": 0}, "c": {"p": -1}})
    >>> c = Camps(m.row_labels, np.array([0, 0, 1]), 2, None)
    >>> [(v.agree, v.passed, v.disagree) for v in camp_votes(m, c)[0]]
    [(1, 1, 0), (0, 0, 1)]
    """
    _check_camps(matrix, camps)
    vals = matrix.values
    out: list[tuple[CampVotes, ...]] = []
    per_camp = [camps.assignment == c for c in range(camps.k)]
    counts = []
    for rows in per_camp:
        block = vals[rows]
        counts.append(
            ((block == 1).sum(axis=0), (block == -1).sum(axis=0), (block == 0).sum(axis=0))
        )
    for j in range(vals.shape[1]):
        out.append(
            tuple(
                CampVotes(c, int(a[j]), int(d[j]), int(p[j])) for c, (a, d, p) in enumerate(counts)
            )
        )
    return out


@dataclass(frozen=True)
class DivisiveStatement:
    """A statement that divides camps: some camp leans for it, another against.

    ``divisiveness`` = (max camp mean stance - min camp mean stance) / 2, in [0, 1]:
    1 when one camp agrees unanimously and another disagrees unanimously.
    """

    label: str
    text: str
    category: str | None
    divisiveness: float
    most_for: int
    most_against: int
    votes: tuple[CampVotes, ...]


@dataclass(frozen=True)
class ConsensusStatement:
    """A statement every camp agrees with.

    ``consensus`` is Polis's group-informed consensus: the product over camps of the
    smoothed agree probability (A + 1) / (S + 2). ``min_agree_rate`` is the lowest camp's
    raw agree rate.
    """

    label: str
    text: str
    category: str | None
    consensus: float
    min_agree_rate: float
    votes: tuple[CampVotes, ...]


def _column_meta(matrix: StanceMatrix, j: int) -> tuple[str, str, str | None]:
    text = matrix.col_texts[j] if matrix.col_texts is not None else ""
    cat = matrix.categories[j] if matrix.categories is not None else None
    return matrix.col_labels[j], text, cat


def divisive_statements(
    matrix: StanceMatrix,
    camps: Camps,
    *,
    min_divisiveness: float = 0.5,
    min_votes_per_camp: int = 1,
    top: int | None = None,
) -> list[DivisiveStatement]:
    """Statements that divide camps, most divisive first.

    A statement qualifies when every camp has at least ``min_votes_per_camp`` votes on it,
    some camp's mean stance is > 0 and another's < 0 (they lean opposite ways, not just
    more or less in favour), and its divisiveness is at least ``min_divisiveness``.
    With ``top``, at most that many are returned.

    >>> m = alignment_matrix({"a": {"p": 1, "q": 1}, "b": {"p": 1, "q": 1},
    ...                       "c": {"p": -1, "q": 1}, "d": {"p": -1, "q": 1}})
    >>> camps = Camps(m.row_labels, np.array([0, 0, 1, 1]), 2, None)
    >>> [(s.label, s.divisiveness, s.most_for, s.most_against) for s in divisive_statements(m, camps)]
    [('p', 1.0, 0, 1)]
    """
    _check_camps(matrix, camps)
    found: list[DivisiveStatement] = []
    if camps.k < 2:
        return found
    for j, votes in enumerate(camp_votes(matrix, camps)):
        if any(v.n_votes < max(min_votes_per_camp, 1) for v in votes):
            continue
        means = [v.mean_stance for v in votes]
        hi, lo = int(np.argmax(means)), int(np.argmin(means))
        if not (means[hi] > 0 > means[lo]):
            continue
        div = (means[hi] - means[lo]) / 2
        if div < min_divisiveness:
            continue
        label, text, cat = _column_meta(matrix, j)
        found.append(DivisiveStatement(label, text, cat, div, hi, lo, votes))
    found.sort(key=lambda s: (-s.divisiveness, s.label))
    return found[:top] if top is not None else found


def consensus_statements(
    matrix: StanceMatrix,
    camps: Camps,
    *,
    min_agree_rate: float = 0.6,
    min_votes_per_camp: int = 1,
    top: int | None = None,
) -> list[ConsensusStatement]:
    """Statements every camp agrees with, strongest consensus first.

    A statement qualifies when every camp has at least ``min_votes_per_camp`` votes on it
    and every camp's agree rate is at least ``min_agree_rate``. Ordered by group-informed
    consensus (see :class:`ConsensusStatement`). With one camp this is plain majority
    agreement. With ``top``, at most that many are returned.

    >>> m = alignment_matrix({"a": {"p": 1, "q": 1}, "b": {"p": 1, "q": -1},
    ...                       "c": {"p": 1, "q": -1}, "d": {"p": 1, "q": -1}})
    >>> camps = Camps(m.row_labels, np.array([0, 0, 1, 1]), 2, None)
    >>> [s.label for s in consensus_statements(m, camps)]
    ['p']
    """
    _check_camps(matrix, camps)
    found: list[ConsensusStatement] = []
    if camps.k < 1:
        return found
    for j, votes in enumerate(camp_votes(matrix, camps)):
        if any(v.n_votes < max(min_votes_per_camp, 1) for v in votes):
            continue
        rates = [v.agree_rate for v in votes]
        if min(rates) < min_agree_rate:
            continue
        label, text, cat = _column_meta(matrix, j)
        consensus = float(np.prod([v.smoothed_agree for v in votes]))
        found.append(ConsensusStatement(label, text, cat, consensus, min(rates), votes))
    found.sort(key=lambda s: (-s.consensus, s.label))
    return found[:top] if top is not None else found
