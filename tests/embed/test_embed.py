"""The numpy MiniLM embedder against sentence-transformers reference vectors (offline)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from crux_lab.embed import DIMENSION, Embedder, EmbeddingModelError, cosine_matrix, get_embedder

REFERENCE = Path(__file__).with_name("reference_embeddings.json")


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return get_embedder()


@pytest.fixture(scope="module")
def reference() -> dict:
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


def test_matches_sentence_transformers_reference(embedder: Embedder, reference: dict) -> None:
    ours = embedder.encode(reference["sentences"])
    ref = np.asarray(reference["embeddings"], dtype=np.float64)
    assert ours.shape == ref.shape == (len(reference["sentences"]), DIMENSION)
    cosines = np.sum(ours * ref, axis=1) / np.linalg.norm(ref, axis=1)
    assert cosines.min() >= 0.9999, cosines


def test_batch_size_and_order_do_not_change_vectors(embedder: Embedder, reference: dict) -> None:
    sents = reference["sentences"]
    one_by_one = embedder.encode(sents, batch_size=1)
    reversed_batched = embedder.encode(sents[::-1], batch_size=64)[::-1]
    np.testing.assert_allclose(one_by_one, reversed_batched, atol=2e-5)


def test_output_contract(embedder: Embedder) -> None:
    vecs = embedder.encode(["a", "b c", ""])
    assert vecs.dtype == np.float32
    assert vecs.shape == (3, DIMENSION)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert embedder.encode([]).shape == (0, DIMENSION)


def test_truncation_at_256_word_pieces(embedder: Embedder) -> None:
    long_text = "carbon tax " * 400
    assert len(embedder.token_ids([long_text])[0]) == 256
    # Text past the 256th piece cannot change the vector.
    a, b = embedder.encode([long_text, long_text + " unrelated tail about football"])
    assert float(a @ b) > 0.99999


def test_similarity_ranks_paraphrase_above_unrelated(embedder: Embedder) -> None:
    para = embedder.similarity("Nuclear power is safe.", "Nuclear energy has a good safety record.")
    other = embedder.similarity("Nuclear power is safe.", "My cat likes tuna.")
    assert para > other + 0.3
    sims = embedder.similarity_matrix(
        ["Nuclear power is safe."], ["Nuclear energy is safe.", "Tuna."]
    )
    assert sims.shape == (1, 2) and sims[0, 0] > sims[0, 1]


def test_singleton_is_shared() -> None:
    assert get_embedder() is get_embedder()


def test_bad_input_is_named(embedder: Embedder) -> None:
    with pytest.raises(TypeError, match="sequence of texts"):
        embedder.encode("not a list")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        embedder.encode(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="batch_size"):
        embedder.encode(["ok"], batch_size=0)


def test_bad_model_folder_gives_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingModelError, match="config.json"):
        Embedder(model_path=tmp_path)


def test_cosine_matrix_rejects_mismatched_widths() -> None:
    with pytest.raises(ValueError, match="row widths differ"):
        cosine_matrix(np.ones((1, 3)), np.ones((1, 4)))
