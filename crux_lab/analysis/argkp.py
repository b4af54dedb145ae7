"""ArgKP check: match real arguments to key points with the embedder, score as KPA-2021 did.

Data: IBM Debater ArgKP-2021 (``shared/data/argkp2021``, copy of the test split in
``tests/data/argkp2021``; CDLA-Sharing 1.0; Bar-Haim et al., ACL 2020; Friedman et al.,
ArgMining 2021). Each argument has a topic and a stance; the key points of the same topic and
stance are its candidates. Matching a crowd argument to the key point it makes is the
distillation step a crystallizer or a card extractor performs.

Matcher: cosine similarity of the all-MiniLM-L6-v2 embeddings (:mod:`crux_lab.embed`) of the
argument and each candidate key point; no training, no threshold.

Metric (track 1 of the shared task, re-implemented from its evaluation script): for each
argument keep only its best-scoring key point; within each (topic, stance) keep the top 50%
of arguments by that score; average precision of "the chosen key point is a match" over
them; mean over (topic, stance). Labels missing from ``labels_*.csv`` (annotators undecided)
count as non-matches in the *strict* score and as matches in the *relaxed* score.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from crux_lab.embed import get_embedder

if TYPE_CHECKING:
    from crux_lab.embed import Embedder

__all__ = [
    "ArgKPDataError",
    "ArgKPScore",
    "ArgKPSplit",
    "Argument",
    "KeyPoint",
    "average_precision",
    "embedding_match_scores",
    "kpa_map",
    "load_split",
]

DUMMY_KP = "dummy_id"  # the shared task's placeholder for an argument with no prediction


class ArgKPDataError(ValueError):
    """An ArgKP file is missing or malformed (message names file, field and fix)."""


@dataclass(frozen=True)
class Argument:
    arg_id: str
    text: str
    topic: str
    stance: int


@dataclass(frozen=True)
class KeyPoint:
    key_point_id: str
    text: str
    topic: str
    stance: int


@dataclass(frozen=True)
class ArgKPSplit:
    """One split: arguments, key points and gold labels ``{(arg_id, kp_id): 0 or 1}``."""

    name: str
    arguments: tuple[Argument, ...]
    key_points: tuple[KeyPoint, ...]
    labels: Mapping[tuple[str, str], int]

    def candidates(self, arg: Argument) -> list[KeyPoint]:
        """Key points with the argument's topic and stance."""
        return [k for k in self.key_points if k.topic == arg.topic and k.stance == arg.stance]


def _read(path: Path, fields: Sequence[str]) -> list[dict[str, str]]:
    if not path.is_file():
        raise ArgKPDataError(
            f"{path}: file missing; an ArgKP split folder holds arguments_<split>.csv, "
            "key_points_<split>.csv and labels_<split>.csv."
        )
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [f for f in fields if f not in (reader.fieldnames or [])]
        if missing:
            raise ArgKPDataError(
                f"{path}: column(s) {missing} missing; expected {list(fields)} as in the "
                "original ArgKP-2021 release."
            )
        return list(reader)


def _stance(path: Path, row_no: int, raw: str) -> int:
    try:
        value = int(float(raw))
    except ValueError:
        value = 0
    if value not in (1, -1):
        raise ArgKPDataError(f"{path}: row {row_no}, field 'stance' is {raw!r}; expected 1 or -1.")
    return value


def load_split(folder: Path, split: str = "test") -> ArgKPSplit:
    """Load ``arguments_<split>.csv``, ``key_points_<split>.csv``, ``labels_<split>.csv``."""
    folder = Path(folder)
    a_path = folder / f"arguments_{split}.csv"
    k_path = folder / f"key_points_{split}.csv"
    l_path = folder / f"labels_{split}.csv"
    args = tuple(
        Argument(r["arg_id"], r["argument"], r["topic"], _stance(a_path, i + 2, r["stance"]))
        for i, r in enumerate(_read(a_path, ("arg_id", "argument", "topic", "stance")))
    )
    kps = tuple(
        KeyPoint(r["key_point_id"], r["key_point"], r["topic"], _stance(k_path, i + 2, r["stance"]))
        for i, r in enumerate(_read(k_path, ("key_point_id", "key_point", "topic", "stance")))
    )
    labels: dict[tuple[str, str], int] = {}
    for i, r in enumerate(_read(l_path, ("arg_id", "key_point_id", "label"))):
        if r["label"] not in ("0", "1"):
            raise ArgKPDataError(
                f"{l_path}: row {i + 2}, field 'label' is {r['label']!r}; expected 0 or 1."
            )
        labels[(r["arg_id"], r["key_point_id"])] = int(r["label"])
    return ArgKPSplit(split, args, kps, labels)


def embedding_match_scores(
    split: ArgKPSplit, embedder: Embedder | None = None
) -> dict[str, dict[str, float]]:
    """Cosine similarity of each argument with each candidate key point (same topic, stance)."""
    emb = embedder or get_embedder()
    arg_vecs = emb.encode([a.text for a in split.arguments])
    kp_vecs = emb.encode([k.text for k in split.key_points])
    kp_index = {k.key_point_id: i for i, k in enumerate(split.key_points)}
    scores: dict[str, dict[str, float]] = {}
    for i, arg in enumerate(split.arguments):
        cands = split.candidates(arg)
        if not cands:
            continue
        sims = kp_vecs[[kp_index[k.key_point_id] for k in cands]] @ arg_vecs[i]
        scores[arg.arg_id] = {k.key_point_id: float(s) for k, s in zip(cands, sims, strict=True)}
    return scores


def average_precision(
    labels: Sequence[float] | np.ndarray, scores: Sequence[float] | np.ndarray
) -> float:
    """Average precision of ranking ``labels`` (1 = relevant) by ``scores``, high first.

    Same definition as scikit-learn's ``average_precision_score``: the sum over distinct
    score thresholds of (recall gain) x (precision at that threshold); tied scores form one
    threshold. No relevant item gives 0.0 (the shared task's convention).

    >>> average_precision([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1])  # (1/2)*1 + (1/2)*(2/3)
    0.8333333333333333
    >>> average_precision([0, 1], [0.5, 0.5])  # one threshold holding both: precision 1/2
    0.5
    >>> average_precision([0, 0], [0.3, 0.2])
    0.0
    """
    y = np.asarray(labels, dtype=np.float64)
    s = np.asarray(scores, dtype=np.float64)
    if y.shape != s.shape or y.ndim != 1:
        raise ValueError(
            f"average_precision: labels {y.shape} and scores {s.shape} must be 1-D and equal."
        )
    positives = y.sum()
    if positives == 0:
        return 0.0
    order = np.argsort(-s, kind="stable")
    y, s = y[order], s[order]
    tp = np.cumsum(y)
    # last index of each run of equal scores = one threshold
    ends = np.r_[np.nonzero(np.diff(s))[0], len(s) - 1]
    tp_at = tp[ends]
    precision = tp_at / (ends + 1)
    recall = tp_at / positives
    gains = np.diff(np.r_[0.0, recall])
    return float(np.sum(gains * precision))


@dataclass(frozen=True)
class ArgKPScore:
    """mAP strict and relaxed, with the per-(topic, stance) average precisions."""

    strict: float
    relaxed: float
    per_group: tuple[tuple[str, int, float, float], ...]  # topic, stance, AP strict, AP relaxed
    arguments: int
    predicted: int


def kpa_map(
    predictions: Mapping[str, Mapping[str, float]],
    split: ArgKPSplit,
    top_fraction: float = 0.5,
) -> ArgKPScore:
    """Score match predictions ``{arg_id: {key_point_id: score}}`` with the KPA-2021 metric.

    For each argument the best-scoring key point (among those of the split) is taken; an
    argument with no prediction gets the placeholder key point (score 0, never a match).

    >>> split = ArgKPSplit("toy",
    ...     tuple(Argument(f"a{i}", "", "t", 1) for i in range(4)),
    ...     (KeyPoint("k1", "", "t", 1), KeyPoint("k2", "", "t", 1)),
    ...     {("a0", "k1"): 1, ("a1", "k1"): 0, ("a2", "k2"): 1})
    >>> preds = {"a0": {"k1": 0.9, "k2": 0.1}, "a1": {"k1": 0.8}, "a2": {"k2": 0.7}, "a3": {"k2": 0.2}}
    >>> s = kpa_map(preds, split)   # top 50% = a0 (match), a1 (no match): AP = 1.0
    >>> (s.strict, s.relaxed)
    (1.0, 1.0)
    """
    if not 0 < top_fraction <= 1:
        raise ValueError(f"kpa_map: top_fraction must be in (0, 1], got {top_fraction}.")
    valid_kps = {k.key_point_id for k in split.key_points}
    groups: dict[tuple[str, int], list[tuple[float, str, float, float]]] = {}
    predicted = 0
    for arg in split.arguments:
        cands = {k: v for k, v in predictions.get(arg.arg_id, {}).items() if k in valid_kps}
        if cands:
            predicted += 1
            kp, score = max(cands.items(), key=lambda kv: kv[1])
            gold = split.labels.get((arg.arg_id, kp))
            strict = float(gold) if gold is not None else 0.0
            relaxed = float(gold) if gold is not None else 1.0
        else:
            kp, score, strict, relaxed = DUMMY_KP, 0.0, 0.0, 0.0
        groups.setdefault((arg.topic, arg.stance), []).append((score, kp, strict, relaxed))
    per_group: list[tuple[str, int, float, float]] = []
    for (topic, stance), rows in sorted(groups.items()):
        top = int(len(rows) * top_fraction)
        kept = sorted(rows, key=lambda r: -r[0])[:top]
        # As the shared task's script: placeholders left in the top get score 0.99.
        scores = [0.99 if kp == DUMMY_KP else sc for sc, kp, _, _ in kept]
        ap_strict = average_precision([r[2] for r in kept], scores) if kept else 0.0
        ap_relaxed = average_precision([r[3] for r in kept], scores) if kept else 0.0
        per_group.append((topic, stance, ap_strict, ap_relaxed))
    if not per_group:
        return ArgKPScore(math.nan, math.nan, (), 0, 0)
    return ArgKPScore(
        strict=float(np.mean([g[2] for g in per_group])),
        relaxed=float(np.mean([g[3] for g in per_group])),
        per_group=tuple(per_group),
        arguments=len(split.arguments),
        predicted=predicted,
    )
