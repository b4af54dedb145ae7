"""The text-matching threshold, calibrated on a held-out paraphrase set.

Crux recovery (:mod:`crux_lab.analysis.recovery`) decides whether a crux an engine found is
a planted one by the cosine similarity of their embeddings. The threshold comes from
``crux_lab/data/calibration/paraphrases.jsonl``: 24 hand-written disputed claims from
domains that no deck and no evaluation scenario uses (public health, justice, farming,
migration, ...), each with two paraphrases (one a question, one a reworded "whether" clause),
two hard negatives from the same domain, and two near misses (``near``): questions about the
claim's own subject that ask another thing (its cost, its intent, a side effect), such as
"Is a sugar tax mainly meant to raise money for the government?" beside "A sugar tax reduces
childhood obesity." Nothing in it comes from the offline backend's paraphrases, so the
threshold is not tuned to their wording.

The near misses are what a model writes when it debates a claim without stating it, and what
a reader of the Qwen dev runs rejected most (``benchmarks/items/recovery-qwen-dev/reader.jsonl``:
"Does the fire service's charge for water affect the overall water bill?" for "Water 'lost' in
Thornmere includes water used unmetered by the fire service ..."). Without them the threshold
was 0.58, and the scorer matched 17 of the 53 items the reader labelled there, the reader 3.

The threshold maximises F0.5 over the 144 pairs: a recovery benchmark must not credit a crux
that was not found, so precision weighs more than recall.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from crux_lab.embed import get_embedder
from crux_lab.personas.retrieval import TextEmbedder as Encoder

PAIRS_FILE = Path(__file__).resolve().parents[1] / "data" / "calibration" / "paraphrases.jsonl"


@dataclass(frozen=True)
class Calibration:
    """The chosen threshold and how it does on the held-out pairs."""

    threshold: float
    precision: float
    recall: float
    f_half: float
    positives: int
    negatives: int

    def describe(self) -> str:
        return (
            f"text match: cosine >= {self.threshold:.2f}, calibrated on {self.positives + self.negatives} held-out "
            f"paraphrase pairs ({self.positives} paraphrases, {self.negatives} same-domain non-paraphrases): "
            f"precision {self.precision:.2f}, recall {self.recall:.2f}, F0.5 {self.f_half:.2f}"
        )


def load_pairs(path: Path = PAIRS_FILE) -> list[tuple[str, str, bool]]:
    """(anchor, other, is_paraphrase) pairs of the calibration file."""
    pairs: list[tuple[str, str, bool]] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            pairs += [(row["anchor"], p, True) for p in row["positives"]]
            pairs += [(row["anchor"], q, False) for q in [*row["negatives"], *row.get("near", [])]]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{n}: not a calibration row ({exc}); each line needs anchor, positives, negatives (and near)") from None
    return pairs


def best_threshold(scores: Sequence[float], labels: Sequence[bool], beta: float = 0.5) -> tuple[float, float, float, float]:
    """The threshold (on a 0.01 grid) with the best F-beta, and its precision, recall, F-beta.

    >>> best_threshold([0.9, 0.8, 0.4, 0.3], [True, True, False, False])
    (0.41, 1.0, 1.0, 1.0)
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=bool)
    best = (1.0, 0.0, 0.0, -1.0)
    for t in np.round(np.arange(0.30, 0.96, 0.01), 2):
        pred = s >= t
        tp = int((pred & y).sum())
        if tp == 0:
            continue
        p, r = tp / int(pred.sum()), tp / int(y.sum())
        f = (1 + beta**2) * p * r / (beta**2 * p + r)
        if f > best[3] + 1e-12:
            best = (float(t), p, r, f)
    return best[0], round(best[1], 4), round(best[2], 4), round(best[3], 4)


def calibrate(encoder: Encoder | None = None, path: Path = PAIRS_FILE) -> Calibration:
    """Embed the held-out pairs and pick the F0.5-best threshold."""
    if encoder is None:
        encoder = get_embedder()
    pairs = load_pairs(path)
    texts = list(dict.fromkeys([a for a, _, _ in pairs] + [b for _, b, _ in pairs]))
    vecs = np.asarray(encoder.encode(texts), dtype=float)
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    at = {t: i for i, t in enumerate(texts)}
    scores = [float(vecs[at[a]] @ vecs[at[b]]) for a, b, _ in pairs]
    labels = [y for _, _, y in pairs]
    t, p, r, f = best_threshold(scores, labels)
    return Calibration(t, p, r, f, sum(labels), len(labels) - sum(labels))


@lru_cache(maxsize=1)
def default_calibration() -> Calibration:
    """The calibration with the default embedder (computed once per process)."""
    return calibrate()
