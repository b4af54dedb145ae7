"""Reading the names a model writes for personas and for ids it made up itself.

A real model names a persona in its own way: by id ("schiff"), by display name ("Peter
Schiff"), by a short form ("Schiff", "the pragmatist"), in any case. Every engine that reads
persona references from a reply resolves them here, so one rule holds everywhere: an
unambiguous reference is taken, an ambiguous or unknown one is refused (None) and the
engine records the refusal in a warning that quotes the refused text (:func:`quote`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from crux_lab.engines.base import clip

# Words that never identify a persona on their own.
_FILLER = frozenset({"the", "a", "an", "dr", "mr", "mrs", "ms", "prof", "speaker", "persona"})


def _words(text: str) -> list[str]:
    """Lower-case words of ``text``, possessives and punctuation dropped.

    >>> _words("  The Macro-Trader's  ")
    ['the', 'macro', 'trader']
    """
    text = re.sub(r"['’]s\b", "", text.lower())
    return re.findall(r"[a-z0-9]+", text)


def _key(text: str) -> str:
    """Words joined without separators: "protocol_dev", "Protocol Dev" and "protocol-dev" meet."""
    return "".join(_words(text))


def persona_ref(ref: str, names: Mapping[str, str]) -> str | None:
    """The persona id a model-written reference names; None when it is unknown or ambiguous.

    ``names`` maps each persona id to its display name. Tried in order, case-insensitive:
    the id, the display name (a leading "the" optional), then the persona whose name or id
    words contain every identifying word of the reference, when exactly one does.

    >>> names = {"schiff": "Peter Schiff", "saylor": "Michael Saylor", "prag": "The Pragmatist"}
    >>> [persona_ref(r, names) for r in ["SAYLOR", "Peter Schiff", "schiff's", "the pragmatist", "Pragmatist"]]
    ['saylor', 'schiff', 'schiff', 'prag', 'prag']
    >>> persona_ref("Michael", names), persona_ref("Hayes", names), persona_ref("", names)
    ('saylor', None, None)
    >>> persona_ref("Peter", {"a": "Peter Schiff", "b": "Peter Thiel"}) is None  # ambiguous
    True
    """
    key = _key(ref)
    if not key:
        return None
    for pid in names:
        if _key(pid) == key:
            return pid
    full = [pid for pid, name in names.items() if key in (_key(name), _key(f"the {name}"))]
    if len(full) == 1:
        return full[0]
    wanted = {w for w in _words(ref) if w not in _FILLER}
    if not wanted:
        return None
    hits = [pid for pid, name in names.items() if wanted <= set(_words(name)) | set(_words(pid))]
    return hits[0] if len(hits) == 1 else None


def persona_refs(refs: Iterable[str], names: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """``(resolved ids in order without repeats, refused references)``.

    >>> persona_refs(["Schiff", "saylor", "SCHIFF", "Hayes"], {"schiff": "Peter Schiff", "saylor": "Michael Saylor"})
    (['schiff', 'saylor'], ['Hayes'])
    """
    ids: list[str] = []
    refused: list[str] = []
    for ref in refs:
        pid = persona_ref(ref, names)
        if pid is None:
            refused.append(ref)
        elif pid not in ids:
            ids.append(pid)
    return ids, refused


def same_reply_id(ref: str, ids: Mapping[str, str], order: list[str] | None = None) -> str | None:
    """The id a reply's own provisional reference stands for: ``ids`` maps the handles the
    reply created (and the graph's existing ids) to their ids. Matched exactly, then ignoring
    case and separators ("New_1" is "new-1"), then, for "new-N" with no such handle, the N-th
    item the reply created (``order``), when that exists.

    >>> ids = {"n1": "d-4", "d-0": "d-0"}
    >>> same_reply_id("N1", ids), same_reply_id("new-1", ids, ["d-4"]), same_reply_id("new-2", ids, ["d-4"])
    ('d-4', 'd-4', None)
    >>> same_reply_id("D 0", ids)
    'd-0'
    """
    if ref in ids:
        return ids[ref]
    key = _key(ref)
    loose = {_key(k): v for k, v in ids.items()}
    if key in loose:
        return loose[key]
    m = re.fullmatch(r"new(\d+)", key)
    if m and order and 1 <= int(m.group(1)) <= len(order):
        return order[int(m.group(1)) - 1]
    return None


def quote(text: str, limit: int = 120) -> str:
    """Refused text as a warning quotes it: in double quotes, shortened at a word.

    >>> quote('Speaker "X"')
    '"Speaker \\'X\\'"'
    """
    return '"' + clip(text.replace('"', "'"), limit) + '"'
