"""Content words, the simulator's unit of reading: its recognizer, its scope check and its
extractors compare texts by them. Stdlib only (a leaf of the simulator)."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    ["the", "a", "an", "of", "to", "in", "on", "and", "or", "is", "are", "be", "for", "with", "that", "this", "it", "as", "by", "at", "from", "will", "should", "can", "do", "does", "not", "no", "yes", "what", "how", "why", "whether", "which", "who", "than", "more", "less", "its", "into", "over"]
)


def words(text: str) -> set[str]:
    """Content words of a text, lower-cased.

    >>> sorted(words("Is Bitcoin a store of value?"))
    ['bitcoin', 'store', 'value']
    """
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}
