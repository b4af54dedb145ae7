from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from crux_lab.personas.loader import load_persona
from crux_lab.personas.retrieval import (
    PersonaIndex,
    embed_cached,
    render_grounding,
    retrieve,
)
from crux_lab.tokens import count_tokens

from .fakes import FakeEmbedder


def test_retrieves_relevant_nodes_with_grounding(tmp_path: Path) -> None:
    p = load_persona("vitalik-buterin")
    r = retrieve(p, "Does proof of stake slashing give security equivalent to proof of work?",
                 embedder=FakeEmbedder(), directory=tmp_path, threshold=0.2)
    assert not r.fallback and r.beliefs
    top = r.beliefs[0]
    assert any(w in top.node.concept.lower() for w in ("stake", "slashing", "proof of work"))
    assert top.chunks and {c.id for c in top.chunks} <= set(top.node.grounding)
    assert [b.score for b in r.beliefs] == sorted((b.score for b in r.beliefs), reverse=True)
    text = render_grounding(r, tension="Saylor says energy is what secures the ledger")
    assert text.startswith("Your relevant beliefs") and "Tension:" in text
    assert 0 < count_tokens(text) <= 300


def test_fallback_when_nothing_relevant(tmp_path: Path) -> None:
    p = load_persona("michael-saylor")
    r = retrieve(p, "pineapple pizza recipes", embedder=FakeEmbedder(), directory=tmp_path, threshold=0.3)
    assert r.fallback and "contract-only" in r.reason and r.beliefs == []
    assert render_grounding(r) == ""


def test_fallback_without_belief_graph(tmp_path: Path) -> None:
    p = load_persona("michael-saylor")
    p.beliefs = None
    emb = FakeEmbedder()
    r = retrieve(p, "store of value", embedder=emb, directory=tmp_path)
    assert r.fallback and "no belief graph" in r.reason and emb.calls == 0


def test_cache_is_reused_and_keyed_by_content(tmp_path: Path) -> None:
    emb = FakeEmbedder()
    texts = ["alpha beta gamma", "delta epsilon zeta"]
    first = embed_cached("x", texts, embedder=emb, directory=tmp_path)
    assert emb.calls == 1 and len(list(tmp_path.glob("x-*.npy"))) == 1
    again = embed_cached("x", texts, embedder=emb, directory=tmp_path)
    assert emb.calls == 1 and np.array_equal(first, again)
    embed_cached("x", [*texts, "eta theta"], embedder=emb, directory=tmp_path)
    assert emb.calls == 2 and len(list(tmp_path.glob("x-*.npy"))) == 2
    assert not list(tmp_path.glob("*.tmp"))


def test_corrupt_cache_is_recomputed(tmp_path: Path) -> None:
    emb = FakeEmbedder()
    embed_cached("x", ["alpha beta"], embedder=emb, directory=tmp_path)
    (path,) = tmp_path.glob("x-*.npy")
    path.write_bytes(b"garbage")
    vecs = embed_cached("x", ["alpha beta"], embedder=emb, directory=tmp_path)
    assert emb.calls == 2 and vecs.shape[0] == 1


def test_index_embeds_each_persona_once(tmp_path: Path) -> None:
    p = load_persona("peter-schiff")
    emb = FakeEmbedder()
    PersonaIndex.build(p, embedder=emb, directory=tmp_path)
    n = emb.texts_encoded
    assert n == len(p.beliefs.nodes) + len(p.corpus)  # type: ignore[union-attr]
    PersonaIndex.build(p, embedder=emb, directory=tmp_path)
    assert emb.texts_encoded == n


def test_real_embedder_separates_topics(tmp_path: Path) -> None:
    pytest.importorskip("crux_lab.embed")
    p = load_persona("michael-saylor")
    on_topic = retrieve(p, "Proof of stake is as secure as proof of work and uses far less energy", directory=tmp_path)
    off_topic = retrieve(p, "Rent control and zoning in expensive cities", directory=tmp_path)
    assert not on_topic.fallback and "proof of work" in on_topic.beliefs[0].node.concept.lower()
    assert off_topic.fallback


def test_grounding_for_degrades_to_contract_only_when_embedder_fails(tmp_path: Path) -> None:
    from crux_lab.personas.retrieval import grounding_for

    class Broken:
        def encode(self, texts):  # type: ignore[no-untyped-def]
            raise RuntimeError("model files missing")

    p = load_persona("arthur-hayes")
    with pytest.warns(UserWarning, match="contract only"):
        assert grounding_for(p, "liquidity drives the price", embedder=Broken()) == ""
    text = grounding_for(p, "central bank liquidity balance sheet drives Bitcoin price", embedder=FakeEmbedder(), threshold=0.2)
    assert "liquidity" in text.lower()


def test_tension_names_the_belief_an_opponent_presses_on() -> None:
    from crux_lab.personas.retrieval import grounding_for

    p = load_persona("michael-saylor")
    text = grounding_for(p, "Proof of stake secures a chain with slashing and no energy waste",
                         opponent="Vitalik Buterin", embedder=FakeEmbedder(), threshold=0.2)
    assert "Tension: your belief" in text and "challenged by Vitalik Buterin's claim" in text
