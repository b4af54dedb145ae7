"""Which planted proposition does a text state? Decided by its words alone.

Every score that compares what a debate found with what was planted (crux recovery, fake
consensus, validated cruxes, coverage) matches by text: the cosine similarity of MiniLM
embeddings between the text (or its best sentence) and a proposition's text or question, at
the threshold calibrated on held-out paraphrases (:mod:`crux_lab.analysis.calibration`).
Never by ids a backend put on an item.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from crux_lab.analysis.calibration import default_calibration
from crux_lab.embed import get_embedder
from crux_lab.personas.models import Proposition
from crux_lab.personas.retrieval import TextEmbedder as Encoder

_NEGATION = re.compile(r"\b(?:no|not|never|nobody|nothing|neither|nor|cannot|disagree|reject|deny|doubt)\b|n['’]t\b", re.IGNORECASE)


def negations(text: str) -> int:
    """How many negations ``text`` has ("not", "n't", "no", "disagree", ...): the echo guard
    tells a denial from a copy by them, the recovery scorer the polarity of a verbatim item.

    >>> negations("No, it is not reasonable, and I don't doubt it."), negations("Yes, it is reasonable.")
    (4, 0)
    """
    return len(_NEGATION.findall(text))


_VECTORS: dict[str, np.ndarray] = {}
_CACHE_LIMIT = 50_000


def unit_vectors(texts: Sequence[str], encoder: Encoder | None = None) -> np.ndarray:
    """Unit-length embeddings of ``texts``; with the default encoder, cached per text for the
    process (debates repeat much of their wording)."""
    if not texts:
        return np.zeros((0, 384))
    if encoder is not None:
        v = np.asarray(encoder.encode(list(texts)), dtype=float)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    missing = list(dict.fromkeys(t for t in texts if t not in _VECTORS))
    if missing:
        if len(_VECTORS) + len(missing) > _CACHE_LIMIT:
            _VECTORS.clear()
        v = np.asarray(get_embedder().encode(missing), dtype=float)
        v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        _VECTORS.update(zip(missing, v, strict=True))
    return np.stack([_VECTORS[t] for t in texts])


def proposition_similarity(texts: Sequence[str], propositions: Sequence[Proposition], encoder: Encoder | None = None) -> np.ndarray:
    """``len(texts) x len(propositions)``: the larger similarity of each text with a
    proposition's text and with its question."""
    if not texts or not propositions:
        return np.zeros((len(texts), len(propositions)))
    items = unit_vectors(list(texts), encoder)
    targets = unit_vectors([p.text for p in propositions] + [p.question for p in propositions], encoder)
    sim = items @ targets.T
    n = len(propositions)
    return np.maximum(sim[:, :n], sim[:, n:])


def _sentences(text: str) -> list[str]:
    parts = [p.strip() for p in re.split(r"(?<=[.!?])\s+", text.strip()) if len(p.strip()) > 12]
    return parts or [text]


def name_propositions(
    texts: Sequence[str],
    propositions: Sequence[Proposition],
    *,
    threshold: float | None = None,
    by_sentence: bool = False,
    encoder: Encoder | None = None,
) -> list[str | None]:
    """For each text, the id of the proposition it states (best match at or above the
    calibrated threshold), else ``None``. ``by_sentence`` scores a long text (a turn) by its
    best sentence."""
    if threshold is None:
        threshold = default_calibration().threshold
    if not texts or not propositions:
        return [None] * len(texts)
    if not by_sentence:
        sim = proposition_similarity(texts, propositions, encoder)
    else:
        rows = []
        for text in texts:
            s = proposition_similarity(_sentences(text), propositions, encoder)
            rows.append(s.max(axis=0))
        sim = np.stack(rows)
    out: list[str | None] = []
    for row in sim:
        k = int(np.argmax(row))
        out.append(propositions[k].id if row[k] >= threshold else None)
    return out
