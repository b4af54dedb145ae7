"""Belief graph build pipeline: corpus -> causal triples -> ``beliefs.json``.

1. Chunk the corpus into ~280-token pieces (a long chunk is split at sentence boundaries; its
   pieces keep the original chunk id as their grounding, so confidence still counts
   *independent* corpus chunks).
2. Per piece, one ``extract_beliefs`` call (fast tier) returns causal triples
   ``(cause, effect, polarity)`` and standalone beliefs the author clearly holds.
3. Aggregate: deduplicate nodes by normalised concept and edges by (cause, effect); merge their
   grounding; confidence = corpus density (:func:`crux_lab.personas.density.density_confidence`)
   — any number the model states is ignored; an edge seen with both polarities is kept with the
   majority polarity and flagged in ``contradictions`` (interesting, not an error).
4. Write ``beliefs.json`` atomically (temp file + ``os.replace``): an interrupted build leaves
   the old file intact.

Node ids of an existing ``beliefs.json`` are kept for concepts that are rebuilt unchanged, so
``stances.json`` links (``beliefNodeIds``) survive a rebuild; links that no longer resolve are
reported.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from crux_lab.llm.base import Backend, Hints, LLMError, LLMRequest, allocation_for
from crux_lab.llm.purposes import Purpose
from crux_lab.personas.density import density_confidence
from crux_lab.personas.loader import PersonaFileError, load_persona_dir
from crux_lab.personas.models import BeliefEdge, BeliefGraph, BeliefNode, CorpusChunk, Persona
from crux_lab.tokens import count_tokens

NodeType = Literal["factual_claim", "inference", "core_value", "assumption"]
CHUNK_TOKENS = 280
MAX_NODES = 50
PURPOSE = Purpose.extract_beliefs


class EmptyCorpus(PersonaFileError):
    """The persona's corpus has no usable text."""


# ---------------------------------------------------------------------------
# extraction schema and prompt


class ExtractedBelief(BaseModel):
    concept: str = Field(min_length=1)
    type: NodeType = "inference"


class CausalTriple(BaseModel):
    cause: str = Field(min_length=1)
    effect: str = Field(min_length=1)
    polarity: Literal[1, -1] = 1
    cause_type: NodeType = "inference"
    effect_type: NodeType = "inference"
    confidence: float | None = Field(default=None, description="Model-stated; ignored (confidence is corpus density).")


class ExtractionReply(BaseModel):
    triples: list[CausalTriple] = Field(default_factory=list)
    beliefs: list[ExtractedBelief] = Field(default_factory=list)


EXTRACT_SYSTEM = """You extract the beliefs an author clearly holds from one passage of their public material.

Return JSON: {"triples": [{"cause": "...", "effect": "...", "polarity": 1 or -1,
"cause_type": T, "effect_type": T}], "beliefs": [{"concept": "...", "type": T}]}
where T is one of factual_claim, inference, core_value, assumption.

- A triple is a causal or supporting relationship the author expressed: cause supports (+1) or
  undermines (-1) effect. Write each concept as a short declarative clause (under 15 words),
  in the author's sense, reusing the same wording for the same idea.
- "beliefs" lists other claims the author clearly holds in the passage that are not part of a triple.
- Only extract what the author clearly holds. Do not infer beliefs they have not expressed,
  and do not extract views the author reports in order to reject them as their own."""


def extraction_user(persona: Persona, text: str) -> str:
    return f'Passage by {persona.name} ({persona.contract.kind}; {"paraphrased public positions" if persona.contract.kind == "real" else "synthetic archetype"}):\n"""\n{text}\n"""'


# ---------------------------------------------------------------------------
# chunking

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class BuildChunk:
    id: str
    text: str
    source_ids: tuple[str, ...]  # corpus chunk ids this piece comes from (grounding)
    tokens: int


def chunk_corpus(corpus: Sequence[CorpusChunk], target_tokens: int = CHUNK_TOKENS) -> list[BuildChunk]:
    """Split corpus chunks longer than ``target_tokens`` at sentence boundaries.

    Short chunks are kept whole and never merged: each stays one independent source.

    >>> c = CorpusChunk(id="c1", text="One. Two.", source="s", kind="synthetic")
    >>> [(b.id, b.source_ids) for b in chunk_corpus([c])]
    [('c1', ('c1',))]
    >>> long = CorpusChunk(id="c2", text="Word " * 200 + ". " + "Other " * 200 + ".", source="s", kind="synthetic")
    >>> [b.id for b in chunk_corpus([long], 250)]
    ['c2#1', 'c2#2']
    """
    out: list[BuildChunk] = []
    for c in corpus:
        text = c.text.strip()
        if not text:
            continue
        n = count_tokens(text)
        if n <= target_tokens:
            out.append(BuildChunk(c.id, text, (c.id,), n))
            continue
        pieces: list[str] = []
        current: list[str] = []
        for sentence in _SENTENCE.split(text):
            if current and count_tokens(" ".join([*current, sentence])) > target_tokens:
                pieces.append(" ".join(current))
                current = []
            current.append(sentence)
        if current:
            pieces.append(" ".join(current))
        for i, piece in enumerate(pieces, start=1):
            out.append(BuildChunk(f"{c.id}#{i}", piece, (c.id,), count_tokens(piece)))
    return out


# ---------------------------------------------------------------------------
# aggregation

_NORM = re.compile(r"[^a-z0-9]+")


def concept_key(concept: str) -> str:
    """Normalised concept for deduplication.

    >>> concept_key("  Bitcoin's supply is FIXED. ") == concept_key("bitcoin s supply is fixed")
    True
    """
    return _NORM.sub(" ", concept.lower()).strip()


@dataclass
class _NodeAcc:
    concepts: Counter[str] = field(default_factory=Counter)
    types: Counter[str] = field(default_factory=Counter)
    grounding: set[str] = field(default_factory=set)


@dataclass
class _EdgeAcc:
    polarity: Counter[int] = field(default_factory=Counter)
    chunks: set[str] = field(default_factory=set)
    by_polarity: dict[int, set[str]] = field(default_factory=dict)


def aggregate(
    persona_id: str,
    extractions: Sequence[tuple[BuildChunk, ExtractionReply]],
    *,
    existing: BeliefGraph | None = None,
    max_nodes: int = MAX_NODES,
    extracted_at: str | None = None,
) -> BeliefGraph:
    """Merge per-chunk extractions into one grounded :class:`BeliefGraph`.

    Node and edge confidence = density of independent grounding chunks. When more than
    ``max_nodes`` concepts come out, the best-grounded are kept (those with the most
    independent grounding sources).
    """
    nodes: dict[str, _NodeAcc] = {}
    edges: dict[tuple[str, str], _EdgeAcc] = {}

    def touch(concept: str, typ: str, sources: Sequence[str]) -> str:
        key = concept_key(concept)
        acc = nodes.setdefault(key, _NodeAcc())
        acc.concepts[concept.strip()] += 1
        acc.types[typ] += 1
        acc.grounding.update(sources)
        return key

    for chunk, reply in extractions:
        for b in reply.beliefs:
            if concept_key(b.concept):
                touch(b.concept, b.type, chunk.source_ids)
        for t in reply.triples:
            if not concept_key(t.cause) or not concept_key(t.effect):
                continue
            a = touch(t.cause, t.cause_type, chunk.source_ids)
            b2 = touch(t.effect, t.effect_type, chunk.source_ids)
            if a == b2:
                continue
            e = edges.setdefault((a, b2), _EdgeAcc())
            e.polarity[t.polarity] += 1
            e.chunks.update(chunk.source_ids)
            e.by_polarity.setdefault(t.polarity, set()).update(chunk.source_ids)

    ranked = sorted(nodes, key=lambda k: (-len(nodes[k].grounding), k))
    keep = set(ranked[:max_nodes])
    old_ids = {concept_key(n.concept): n.id for n in existing.nodes} if existing else {}
    prefix = persona_id.split("-")[0]
    ids: dict[str, str] = {}
    used: set[str] = set(old_ids.values())
    for key in ranked:
        if key not in keep:
            continue
        if key in old_ids:
            ids[key] = old_ids[key]
        else:
            nid = f"{prefix}-b{hashlib.sha1(key.encode()).hexdigest()[:8]}"
            while nid in used:
                nid += "x"
            used.add(nid)
            ids[key] = nid
    out_nodes: list[BeliefNode] = []
    for key in ranked:
        if key not in keep:
            continue
        acc = nodes[key]
        concept = sorted(acc.concepts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        typ = sorted(acc.types.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        grounding = sorted(acc.grounding)
        out_nodes.append(BeliefNode(id=ids[key], concept=concept, type=typ,
                                    confidence=density_confidence(len(grounding)), grounding=grounding))
    out_edges: list[BeliefEdge] = []
    contradictions: list[list[str]] = []
    for (cause, effect), eacc in sorted(edges.items()):
        if cause not in keep or effect not in keep:
            continue
        polarity = 1 if eacc.polarity[1] >= eacc.polarity[-1] else -1
        if eacc.polarity[1] and eacc.polarity[-1]:
            contradictions.append([ids[cause], ids[effect]])
        support = sorted(eacc.by_polarity.get(polarity, set()))
        out_edges.append(BeliefEdge.model_validate({
            "from": ids[cause], "to": ids[effect], "polarity": polarity,
            "confidence": density_confidence(len(support)), "sourceChunks": sorted(eacc.chunks),
        }))
    return BeliefGraph(
        persona_id=persona_id, nodes=out_nodes, edges=out_edges,
        extracted_at=extracted_at or datetime.now(UTC).replace(microsecond=0).isoformat(),
        contradictions=contradictions,
    )


@dataclass(frozen=True)
class GraphDiff:
    """What a rebuild changed, by concept (node ids may differ between builds)."""

    added_nodes: tuple[str, ...]
    removed_nodes: tuple[str, ...]
    added_edges: tuple[tuple[str, str], ...]
    removed_edges: tuple[tuple[str, str], ...]
    flipped_edges: tuple[tuple[str, str], ...]

    def summary(self) -> str:
        return (f"+{len(self.added_nodes)}/-{len(self.removed_nodes)} nodes, +{len(self.added_edges)}/"
                f"-{len(self.removed_edges)} edges, {len(self.flipped_edges)} edge(s) changed polarity")


def diff_graphs(old: BeliefGraph | None, new: BeliefGraph) -> GraphDiff:
    """Compare two belief graphs by normalised concept.

    >>> from crux_lab.personas.models import BeliefNode
    >>> a = BeliefGraph(persona_id="p", nodes=[BeliefNode(id="x", concept="A", type="inference", confidence=.4)])
    >>> diff_graphs(a, BeliefGraph(persona_id="p")).summary()
    '+0/-1 nodes, +0/-0 edges, 0 edge(s) changed polarity'
    """
    def concepts(g: BeliefGraph | None) -> dict[str, str]:
        return {n.id: concept_key(n.concept) for n in g.nodes} if g else {}

    def edges(g: BeliefGraph | None) -> dict[tuple[str, str], int]:
        c = concepts(g)
        return {(c.get(e.from_, e.from_), c.get(e.to, e.to)): e.polarity for e in g.edges} if g else {}

    on, nn = set(concepts(old).values()), set(concepts(new).values())
    oe, ne = edges(old), edges(new)
    return GraphDiff(
        tuple(sorted(nn - on)), tuple(sorted(on - nn)),
        tuple(sorted(set(ne) - set(oe))), tuple(sorted(set(oe) - set(ne))),
        tuple(sorted(k for k in set(oe) & set(ne) if oe[k] != ne[k])),
    )


# ---------------------------------------------------------------------------
# the pipeline


def write_json_atomic(path: Path, model: BaseModel) -> None:
    """Write ``model`` as JSON to ``path`` via a temp file in the same folder + ``os.replace``."""
    text = json.dumps(model.model_dump(mode="json", by_alias=True), indent=2, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass
class BuildResult:
    persona_id: str
    path: Path
    graph: BeliefGraph
    chunks: int
    calls: int
    failed_chunks: list[str]
    dangling_stance_links: list[str]
    diff: GraphDiff | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


ProgressFn = Callable[[int, int], None]


def load_for_build(folder: Path) -> Persona:
    """Load a persona folder for building (a missing beliefs.json is expected, not warned)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        persona = load_persona_dir(folder)
    if not any(c.text.strip() for c in persona.corpus):
        raise EmptyCorpus(
            folder / "corpus.jsonl",
            "the corpus is empty: add one JSON object per line with id, text, source, date and kind "
            "before building a belief graph.",
            "text",
        )
    return persona


def extraction_request(persona: Persona, chunk: BuildChunk) -> LLMRequest:
    alloc = allocation_for(PURPOSE)
    return LLMRequest(
        purpose=PURPOSE,
        system=EXTRACT_SYSTEM,
        user=extraction_user(persona, chunk.text),
        tier=alloc.tier,
        temperature=alloc.temperature,
        max_tokens=alloc.max_tokens,
        output_schema=ExtractionReply,
        hints=Hints(speaker_id=persona.id),  # the passage is in the prompt; its chunk ids are not
    )


async def build_beliefs(
    folder: Path,
    backend: Backend,
    *,
    concurrency: int = 4,
    max_nodes: int = MAX_NODES,
    progress: ProgressFn | None = None,
    write: bool = True,
) -> BuildResult:
    """Build ``<folder>/beliefs.json`` from ``<folder>/corpus.jsonl`` with ``backend``.

    A chunk whose extraction fails (invalid output after the backend's repair) is skipped and
    listed in ``failed_chunks``; if every chunk fails nothing is written and the last error is
    raised. The file is replaced atomically only after all calls finished.
    """
    folder = Path(folder)
    persona = load_for_build(folder)
    chunks = chunk_corpus(persona.corpus)
    sem = asyncio.Semaphore(max(1, concurrency))
    done = 0
    results: dict[str, ExtractionReply] = {}
    failed: list[str] = []
    last_error: Exception | None = None
    tokens = [0, 0]
    cost = [0.0]

    async def one(chunk: BuildChunk) -> None:
        nonlocal done, last_error
        async with sem:
            try:
                resp = await backend.generate(extraction_request(persona, chunk))
                reply = resp.parsed if isinstance(resp.parsed, ExtractionReply) else ExtractionReply.model_validate_json(resp.text)
                results[chunk.id] = reply
                tokens[0] += resp.usage.input_tokens
                tokens[1] += resp.usage.output_tokens
                cost[0] += resp.cost_usd
            except (LLMError, ValueError) as exc:
                failed.append(chunk.id)
                last_error = exc
            finally:
                done += 1
                if progress is not None:
                    progress(done, len(chunks))

    await asyncio.gather(*(one(c) for c in chunks))
    if not results and last_error is not None:
        raise last_error
    ordered = [(c, results[c.id]) for c in chunks if c.id in results]
    graph = aggregate(persona.id, ordered, existing=persona.beliefs, max_nodes=max_nodes)
    node_ids = {n.id for n in graph.nodes}
    dangling = sorted({nid for s in persona.stances.stances for nid in s.belief_node_ids if nid not in node_ids})
    path = folder / "beliefs.json"
    if write:
        write_json_atomic(path, graph)
    return BuildResult(persona.id, path, graph, len(chunks), len(results) + len(failed), sorted(failed), dangling,
                       diff_graphs(persona.beliefs, graph), tokens[0], tokens[1], round(cost[0], 6))
