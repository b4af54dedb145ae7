"""Falsifier concreteness: a documented text heuristic, pure and dependency-free.

A leaf module, so that both the quality metrics (:mod:`crux_lab.analysis.quality`) and the
simulated judge (:mod:`crux_lab.llm.simulated`) use the same rule without one importing the
other.
"""

from __future__ import annotations

import re

__all__ = ["WORD", "falsifier_score"]

#: A word or a number (with an optional %): the tokens the heuristics count.
WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d[\d.,]*%?")
_MEASURE = re.compile(
    r"\d|%|\bper ?cent\b|\b(rate|rates|price|prices|rent|rents|cost|costs|share|number|count|growth|decline|"
    r"increase|decrease|return|returns|output|supply|demand|wage|wages|deaths|emissions|median|average|ratio|"
    r"gdp|inflation|value|yield|yields|index|vote|votes|attack|attacks|incident|incidents|jobs|unemployment|"
    r"performance|outperform\w*|underperform\w*|adoption|usage|volume|default|defaults|crash|crisis)\b",
    re.I,
)
_BOUND = re.compile(
    r"\d|%|\b(above|below|more than|less than|exceed\w*|outperform\w*|underperform\w*|fell|fall|falls|rose|"
    r"rise|rises|drop\w*|doubl\w*|halv\w*|at least|at most|years?|decades?|months?|within|by 20\d\d|"
    r"successful|changed|held|widely)\b",
    re.I,
)
_GENERIC = re.compile(
    r"\b(new|better|compelling|convincing|strong|more) (evidence|arguments?|data)\b|\bproven wrong\b|"
    r"\bif the facts change\b|\bdata (showed|shows) otherwise\b|\bopen to\b|\bgood arguments?\b",
    re.I,
)
_STOP = frozenset(
    ["the", "a", "an", "of", "to", "in", "on", "and", "or", "is", "are", "be", "for", "with", "that", "this", "it", "as", "by", "at", "from", "if", "would", "were", "was", "i", "my", "me", "we", "they", "their"]
)


def falsifier_score(text: str) -> float:
    """Concreteness of one falsifier in [0, 1] (the heuristic used on the simulator): the mean
    of three checks. *Observable*: it names a measurable quantity or outcome (a number, a
    rate, prices, returns, an attack, a crisis...) or a named thing (a capitalised word past
    the first). *Bounded*: it says how much or when (a number, a threshold or direction word,
    a time span). *Specific*: 5+ content words and none of "new evidence", "better
    arguments", "if proven wrong", "open to".

    >>> falsifier_score("If Bitcoin underperformed inflation-adjusted treasuries over five or more years.")
    1.0
    >>> falsifier_score("New evidence.")
    0.0
    """
    tokens = WORD.findall(text)
    words = [w for w in tokens if w.lower() not in _STOP and len(w) > 2]
    named = any(w[:1].isupper() for w in tokens[1:])
    observable = bool(_MEASURE.search(text)) or named
    bounded = bool(_BOUND.search(text))
    specific = len(words) >= 5 and not _GENERIC.search(text)
    return round((observable + bounded + specific) / 3.0, 4)
