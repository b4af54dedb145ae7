"""Per-turn epistemic grounding: retrieve a persona's relevant beliefs.

Belief-node concepts and corpus chunks are embedded once per persona with
:func:`crux_lab.embed.get_embedder` (all-MiniLM-L6-v2, no torch, offline) and cached under
``data/cache/embeddings/`` keyed by a hash of the embedded texts and the embedder, so an edited
persona is re-embedded and an unchanged one never is. Per turn, :func:`retrieve` takes the
claim under discussion and returns the top-k nodes with their grounding chunks;
:func:`render_grounding` serialises them into a ~200–300-token block for the turn message.
When nothing clears the similarity threshold (or the persona has no belief graph) the result is
marked ``fallback`` and renders as "" — the persona speaks from its contract alone.

Any object with ``encode(list[str]) -> np.ndarray`` of L2-normalised rows can stand in for the
embedder (tests inject a small fake one).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from crux_lab.embed import get_embedder
from crux_lab.personas.models import BeliefEdge, BeliefNode, CorpusChunk, Persona
from crux_lab.personas.prompt import truncate_to_tokens
from crux_lab.tokens import count_tokens

DEFAULT_K = 6
# all-MiniLM-L6-v2 cosine: paraphrases of one claim score ~0.5–0.8, same-domain but off-topic
# ~0.2–0.35, unrelated text < 0.15. Below this nothing is "relevant" and the turn is contract-only.
DEFAULT_THRESHOLD = 0.3
GROUNDING_BUDGET = 300
ENV_CACHE = "CRUX_LAB_CACHE"


class TextEmbedder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


def cache_dir() -> Path:
    """Embedding cache folder: ``$CRUX_LAB_CACHE/embeddings`` or the repo's git-ignored ``data/cache/embeddings``."""
    env = os.environ.get(ENV_CACHE)
    base = Path(env).expanduser() if env else Path(__file__).resolve().parents[2] / "data" / "cache"
    return base / "embeddings"


def _embedder_key(embedder: TextEmbedder) -> str:
    return f"{type(embedder).__module__}.{type(embedder).__qualname__}"


def content_hash(texts: Sequence[str], embedder: TextEmbedder) -> str:
    """Hash of what determines the vectors: the embedder and every text, in order.

    >>> class E:
    ...     def encode(self, texts): ...
    >>> content_hash(["a"], E()) == content_hash(["a"], E()), content_hash(["a"], E()) == content_hash(["b"], E())
    (True, False)
    """
    h = hashlib.sha256(_embedder_key(embedder).encode())
    for t in texts:
        h.update(b"\x00")
        h.update(t.encode("utf-8"))
    return h.hexdigest()[:20]


def _default_embedder() -> TextEmbedder:
    return get_embedder()


def embed_cached(
    persona_id: str,
    texts: Sequence[str],
    *,
    embedder: TextEmbedder | None = None,
    directory: Path | None = None,
) -> np.ndarray:
    """Embeddings of ``texts``, from the cache when the same texts were embedded before.

    The cache file is ``<persona_id>-<content hash>.npy``; it is written atomically (temp file +
    ``os.replace``), so a crash never leaves a torn file that a later run would trust.
    """
    emb = embedder or _default_embedder()
    folder = directory or cache_dir()
    path = folder / f"{persona_id}-{content_hash(texts, emb)}.npy"
    if path.is_file():
        try:
            vecs = np.load(path)
            if vecs.shape[0] == len(texts):
                return vecs
        except (OSError, ValueError):
            pass  # unreadable cache: recompute and overwrite
    vecs = np.asarray(emb.encode(list(texts)), dtype=np.float32).reshape(len(texts), -1)
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".npy.tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, vecs)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return vecs


@dataclass
class RetrievedBelief:
    node: BeliefNode
    score: float
    chunks: list[CorpusChunk]
    supports: list[tuple[int, str]]  # (polarity, concept of the node this one points to)
    dependents: list[str]  # concepts downstream of this one (supported by it, up to two hops)


@dataclass
class Retrieval:
    persona_id: str
    query: str
    beliefs: list[RetrievedBelief] = field(default_factory=list)
    chunks: list[tuple[CorpusChunk, float]] = field(default_factory=list)
    fallback: bool = False
    reason: str = ""


@dataclass
class PersonaIndex:
    """Embedded belief nodes and corpus chunks of one persona."""

    persona: Persona
    node_vecs: np.ndarray
    chunk_vecs: np.ndarray
    embedder: TextEmbedder

    @classmethod
    def build(cls, persona: Persona, *, embedder: TextEmbedder | None = None, directory: Path | None = None) -> PersonaIndex:
        emb = embedder or _default_embedder()
        nodes = persona.beliefs.nodes if persona.beliefs else []
        node_vecs = embed_cached(persona.id, [n.concept for n in nodes], embedder=emb, directory=directory) if nodes else np.zeros((0, 1), np.float32)
        chunk_vecs = (
            embed_cached(persona.id, [c.text for c in persona.corpus], embedder=emb, directory=directory)
            if persona.corpus else np.zeros((0, 1), np.float32)
        )
        return cls(persona, node_vecs, chunk_vecs, emb)

    def search(self, query: str, *, k: int = DEFAULT_K, threshold: float = DEFAULT_THRESHOLD) -> Retrieval:
        """Top-``k`` belief nodes above ``threshold`` for ``query``, with their grounding."""
        p = self.persona
        out = Retrieval(persona_id=p.id, query=query)
        if p.beliefs is None or not p.beliefs.nodes:
            out.fallback, out.reason = True, "no belief graph: contract-only"
            return out
        if not query.strip():
            out.fallback, out.reason = True, "empty query: contract-only"
            return out
        q = np.asarray(self.embedder.encode([query]), dtype=np.float32).reshape(-1)
        node_scores = self.node_vecs @ q
        order = [int(i) for i in np.argsort(-node_scores, kind="stable") if node_scores[i] >= threshold][:k]
        if not order:
            best = float(node_scores.max()) if node_scores.size else 0.0
            out.fallback, out.reason = True, f"no belief above threshold {threshold:.2f} (best {best:.2f}): contract-only"
            return out
        chunks = {c.id: c for c in p.corpus}
        concept = {n.id: n.concept for n in p.beliefs.nodes}
        edges_from: dict[str, list[BeliefEdge]] = {}
        for e in p.beliefs.edges:
            edges_from.setdefault(e.from_, []).append(e)
        for i in order:
            node = p.beliefs.nodes[i]
            out.beliefs.append(RetrievedBelief(
                node=node,
                score=float(node_scores[i]),
                chunks=[chunks[c] for c in node.grounding if c in chunks],
                supports=[(e.polarity, concept.get(e.to, e.to)) for e in edges_from.get(node.id, [])],
                dependents=_downstream(node.id, edges_from, concept),
            ))
        if self.chunk_vecs.shape[0]:
            chunk_scores = self.chunk_vecs @ q
            for j in np.argsort(-chunk_scores, kind="stable")[:k]:
                if chunk_scores[j] >= threshold:
                    out.chunks.append((p.corpus[int(j)], float(chunk_scores[j])))
        return out


def _downstream(node_id: str, edges_from: dict[str, list[BeliefEdge]], concept: dict[str, str]) -> list[str]:
    """Concepts this node supports, directly or through one more supporting edge."""
    out: list[str] = []
    frontier = [node_id]
    for _ in range(2):
        nxt = [e.to for n in frontier for e in edges_from.get(n, []) if e.polarity == 1]
        out += [concept.get(t, t) for t in nxt if concept.get(t, t) not in out]
        frontier = nxt
    return out


_INDEXES: dict[tuple[str, int, str], PersonaIndex] = {}


def index_for(persona: Persona, *, embedder: TextEmbedder | None = None, directory: Path | None = None) -> PersonaIndex:
    """A :class:`PersonaIndex`, memoised per process (keyed by persona object and embedder)."""
    emb = embedder or _default_embedder()
    key = (persona.id, id(persona), _embedder_key(emb) + str(id(emb)))
    if key not in _INDEXES:
        _INDEXES[key] = PersonaIndex.build(persona, embedder=emb, directory=directory)
    return _INDEXES[key]


def retrieve(
    persona: Persona,
    query: str,
    *,
    k: int = DEFAULT_K,
    threshold: float = DEFAULT_THRESHOLD,
    embedder: TextEmbedder | None = None,
    directory: Path | None = None,
) -> Retrieval:
    """The persona's beliefs most relevant to ``query`` (the claim being discussed)."""
    if persona.beliefs is None or not persona.beliefs.nodes:
        return Retrieval(persona_id=persona.id, query=query, fallback=True, reason="no belief graph: contract-only")
    return index_for(persona, embedder=embedder, directory=directory).search(query, k=k, threshold=threshold)


# A belief the persona's own earlier turns already make is not retrieved again: shown the same
# beliefs every turn, Qwen2.5-Coder-1.5B said the top one again in each of its turns, and the
# echo guard kept them out. Each turn's grounding holds what the persona has not yet said.
VOICED_AT = 0.6  # share of a belief's words (four letters or more) one own turn holds that makes it said
_LONG_WORD = re.compile(r"[a-z0-9]{4,}")


def _long_words(text: str) -> set[str]:
    return set(_LONG_WORD.findall(text.lower()))


def voiced(belief: str, said: Sequence[str]) -> bool:
    """Whether one of the persona's own earlier turns ``said`` already makes ``belief``: it holds
    at least :data:`VOICED_AT` of the belief's words of four letters or more.

    >>> voiced("Gold has been money for five thousand years", ["As I said, gold has been money for five thousand years."])
    True
    >>> voiced("Gold has been money for five thousand years", ["Bitcoin's supply is capped at 21 million."])
    False
    """
    mine = _long_words(belief)
    return bool(mine) and any(len(mine & _long_words(s)) >= VOICED_AT * len(mine) for s in said)


def unsaid(retrieval: Retrieval, said: Sequence[str]) -> Retrieval:
    """``retrieval`` without the beliefs the persona's own turns ``said`` already make (and
    marked ``fallback`` when none is left: nothing new to ground the turn on)."""
    fresh = [b for b in retrieval.beliefs if not voiced(b.node.concept, said)]
    if fresh or retrieval.fallback:
        return replace(retrieval, beliefs=fresh)
    return replace(retrieval, beliefs=[], fallback=True, reason="every relevant belief already said")


_BRACKET_TAIL = re.compile(r"\s*\([^()]*\)\s*$")


def restates_belief(excerpt: str, beliefs: Sequence[str]) -> bool:
    """Whether a corpus excerpt only restates a belief already listed (the belief's own sentence,
    with at most a bracketed note after it): it adds nothing to read, and the note of a generated
    scenario names the proposition the persona answers, which a small model recited as its own.

    >>> restates_belief("Rents follow wages here. (New flats slow rents.)", ["Rents follow wages here"])
    True
    >>> restates_belief("Rents follow wages here, and the port sets the wages.", ["Rents follow wages here"])
    False
    """
    body = _long_words(_BRACKET_TAIL.sub("", excerpt))
    return bool(body) and any(body <= _long_words(b) for b in beliefs)


def _clip(text: str, words: int) -> str:
    parts = text.split()
    return text if len(parts) <= words else " ".join(parts[:words]) + " …"


def render_grounding(
    retrieval: Retrieval,
    *,
    tension: str | None = None,
    framing: str = "second",
    name: str = "",
    max_tokens: int = GROUNDING_BUDGET,
) -> str:
    """Serialise a retrieval into the per-turn reasoning anchors (≤ ``max_tokens``; "" on fallback).

    Each line names a belief, its corpus density, what it supports or undermines, and, for the
    top belief, the beliefs conceding it would abandon. The top grounding chunk
    is excerpted so the model reasons from the persona's own (paraphrased) material.
    """
    if retrieval.fallback or not retrieval.beliefs:
        return ""
    head = "Your relevant beliefs on this point" if framing == "second" else f"{name or 'The persona'}'s relevant beliefs on this point"
    belief_lines: list[str] = []
    flagged = False
    for rb in retrieval.beliefs:
        n = rb.node
        line = f'- "{_clip(n.concept, 25)}" [{n.type}, {len(n.grounding)} source(s), {n.confidence:.2f}]'
        if not flagged and len(rb.dependents) > 1:
            # Make the cost of a casual concession explicit.
            line += " → conceding it would weaken: " + "; ".join(f'"{_clip(d, 12)}"' for d in rb.dependents[:3])
            flagged = True
        elif rb.supports:
            pol, target = rb.supports[0]
            line += f' → {"supports" if pol == 1 else "undermines"} "{_clip(target, 18)}"'
        belief_lines.append(line)
    excerpts: list[str] = []
    seen: set[str] = set()
    shown = [rb.node.concept for rb in retrieval.beliefs]
    for rb in retrieval.beliefs:
        for c in rb.chunks:
            if c.id not in seen and not restates_belief(c.text, shown):
                seen.add(c.id)
                excerpts.append(f"- [{c.kind}, {c.date or 'undated'}] {_clip(c.text, 45)}")
    tail = [f"Tension: {tension}"] if tension else []

    def compose(n_beliefs: int, n_excerpts: int) -> str:
        lines = [f"{head} (from the corpus; confidence = corpus density):", *belief_lines[:n_beliefs]]
        if n_excerpts and excerpts:
            lines += ["Source material:", *excerpts[:n_excerpts]]
        return "\n".join(lines + tail)

    # Largest configuration that fits: shed the second excerpt, then the weakest beliefs.
    configs = [(len(belief_lines), 2)] + [(b, 1) for b in range(len(belief_lines), 0, -1)] + [(1, 0)]
    for nb, ne in configs:
        text = compose(nb, ne)
        if count_tokens(text) <= max_tokens:
            return text
    return truncate_to_tokens(compose(1, 0), max_tokens)


def grounding_for(
    persona: Persona,
    query: str,
    *,
    tension: str | None = None,
    opponent: str | None = None,
    framing: str = "second",
    k: int = DEFAULT_K,
    threshold: float = DEFAULT_THRESHOLD,
    max_tokens: int = GROUNDING_BUDGET,
    embedder: TextEmbedder | None = None,
    said: Sequence[str] = (),
) -> str:
    """One call for engines: the grounding block for ``query``, or "" (contract-only).

    ``said`` are the persona's own earlier turns: a belief they already make is left out
    (:func:`unsaid`), so each turn is grounded on what the persona has not said yet.

    ``query`` is the claim under discussion; with ``opponent`` (a display name) and no explicit
    ``tension``, the tension line names the persona's most relevant belief that the claim
    presses on. Falls back to "" with a warning, never an exception, when the embedding model is
    not installed: a debate must not fail because retrieval is unavailable.
    """
    try:
        r = unsaid(retrieve(persona, query, k=k, threshold=threshold, embedder=embedder), said)
    except (ImportError, OSError, RuntimeError) as exc:
        warnings.warn(f"belief retrieval unavailable ({exc}); {persona.id} speaks from its contract only", stacklevel=2)
        return ""
    if tension is None and opponent and r.beliefs:
        # Name the belief the opponent's claim presses on.
        tension = f'your belief "{_clip(r.beliefs[0].node.concept, 16)}" is challenged by {opponent}\'s claim: "{_clip(query, 30)}"'
    return render_grounding(r, tension=tension, framing=framing, name=persona.name, max_tokens=max_tokens)
