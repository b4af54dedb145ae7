"""The contested claims of a debate, keyed by their text.

Detection replies name a claim in the model's own words, and a model words the same claim
differently from one call to the next. The detection prompt therefore lists the claims already
found, by id, and a reply reuses the id when it means one of them. When it does not,
:class:`ClaimIndex` maps the new wording to the most similar known claim if the two are the same
claim, else gives it a new id (``c1``, ``c2``...). Two wordings are the same claim when their
content words overlap (Jaccard >= 0.5) or, once question frames ("Is it the case that...",
"Whether...") are stripped, their embeddings (:mod:`crux_lab.embed`) have cosine >= 0.75;
without the embedder, word overlap alone.

Threshold 0.75: on six rewordings of each of the crypto deck's 12 claims it keeps 98.3% of
same-claim pairs together and merges 1.0% of different-claim pairs (0.82: 98.3% and 0%; 0.70
merges 1.7%); on the held-out hand-written paraphrases of :mod:`crux_lab.analysis.calibration`
it joins 46% of paraphrases and no non-paraphrase (0.70: 75%, still none). MiniLM puts a
different claim about the same two assets (gold beating Bitcoin in a crisis vs Bitcoin the
better store of value) at 0.79, which is why the key is stricter than recovery's 0.58 and why
the reply's own id comes first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from crux_lab.embed import get_embedder

SAME_CLAIM = 0.75
SAME_CLAIM_WORDS = 0.5  # Jaccard fallback without the embedder
TOPIC_ID = "topic"

_STOP = frozenset(
    ["the", "a", "an", "of", "to", "in", "on", "and", "or", "is", "are", "be", "for", "with", "that", "this", "it", "as", "by", "at", "from", "will", "should", "can", "do", "does", "not", "no", "yes", "what", "how", "why", "whether", "which", "who", "than", "more", "less", "its", "into", "over", "really", "case", "true", "record", "support", "view", "issue", "at"]
)

Encode = Callable[[Sequence[str]], np.ndarray]
_VECTORS: dict[tuple[int, str], np.ndarray] = {}  # (encoder, text) -> unit vector, shared by every index


_FRAME = re.compile(
    r"^\s*(is it (really )?(the case|true) that|does the (record|evidence|data) (support|show) (the view )?that|"
    r"whether|at issue:|the question is whether)\s*",
    re.I,
)
_TAIL = re.compile(r"\s*(\u2014|-|,)?\s*(true or not)?\s*[?.!]*\s*$", re.I)


def core(text: str) -> str:
    """A claim without its question frame.

    >>> core("Is it really the case that gold beats bitcoin in a crisis?")
    'gold beats bitcoin in a crisis'
    """
    return _TAIL.sub("", _FRAME.sub("", text.strip()))


def content_words(text: str) -> frozenset[str]:
    """Content words of a claim (lower case, crude plural folding).

    >>> sorted(content_words("Is the supply of coins capped?"))
    ['capped', 'coin', 'supply']
    """
    out = set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if w in _STOP or len(w) < 3:
            continue
        out.add(w[:-1] if w.endswith("s") and len(w) > 4 else w)
    return frozenset(out)


def _default_encoder() -> Encode | None:
    try:
        embedder = get_embedder()
    except Exception:  # no model installed: fall back to word overlap
        return None
    return embedder.encode


@dataclass
class ClaimIndex:
    """Claims by engine id, with a text key that survives rewording.

    >>> idx = ClaimIndex(encode=None)
    >>> idx.key("Is the bitcoin supply capped at 21 million?")
    'c1'
    >>> idx.key("Whether the supply of bitcoin is capped at 21 million coins")
    'c1'
    >>> idx.key("Should a treasury hold volatile assets?")
    'c2'
    >>> idx.text("c1")
    'Is the bitcoin supply capped at 21 million?'
    """

    encode: Encode | None = field(default_factory=_default_encoder)
    threshold: float = SAME_CLAIM
    texts: dict[str, str] = field(default_factory=dict)  # id -> first wording
    _seen: dict[str, str] = field(default_factory=dict)  # wording -> id

    @property
    def _owner(self) -> int:
        # the embedder behind a bound ``encode`` (a singleton), so the cache outlives this index
        return id(getattr(self.encode, "__self__", self.encode))

    def prepare(self, texts: Sequence[str]) -> None:
        """Embed every text not embedded yet, in one batch (the model is slow one text at a time)."""
        if self.encode is None:
            return
        new = list(dict.fromkeys(core(t) for t in [*texts, *self.texts.values()] if (self._owner, core(t)) not in _VECTORS))
        if new:
            vecs = np.asarray(self.encode(new), dtype=float)
            for t, v in zip(new, vecs, strict=True):
                _VECTORS[(self._owner, t)] = v / max(float(np.linalg.norm(v)), 1e-12)

    def _vector(self, text: str) -> np.ndarray:
        key = (self._owner, text)
        if key not in _VECTORS:
            assert self.encode is not None
            v = np.asarray(self.encode([text]), dtype=float)[0]
            _VECTORS[key] = v / max(float(np.linalg.norm(v)), 1e-12)
        return _VECTORS[key]

    def similarity(self, a: str, b: str) -> float:
        wa, wb = content_words(a), content_words(b)
        words = len(wa & wb) / len(wa | wb) if wa | wb else 0.0
        if self.encode is None or words >= 0.6:  # a near-verbatim rewording needs no embedding
            return words if self.encode is None else max(words, self.threshold)
        return float(self._vector(core(a)) @ self._vector(core(b)))

    def same(self, a: str, b: str) -> bool:
        """Do ``a`` and ``b`` state the same claim (e.g. a card question and the topic)?"""
        return self.similarity(a, b) >= (self.threshold if self.encode is not None else SAME_CLAIM_WORDS)

    def find(self, text: str) -> str | None:
        """The id of the known claim ``text`` words, or None."""
        text = text.strip()
        if text in self._seen:
            return self._seen[text]
        limit = self.threshold if self.encode is not None else SAME_CLAIM_WORDS
        best: tuple[float, str] | None = None
        for cid, known in self.texts.items():
            s = self.similarity(text, known)
            if s >= limit and (best is None or s > best[0]):
                best = (s, cid)
        return best[1] if best else None

    def key(self, text: str) -> str:
        """The id of the claim ``text`` words; a new id when it is a new claim."""
        text = text.strip()
        cid = self.find(text)
        if cid is None:
            cid = f"c{len(self.texts) + 1}"
            self.texts[cid] = text
        self._seen[text] = cid
        return cid

    def text(self, cid: str) -> str:
        return self.texts[cid]
