"""Say a declarative sentence in other words: a question or claim frame and a few synonyms.

Used where a text must be restated without copying it: the persona simulator's extractors
answer in their own words, and the topic-restatement calibration (``analysis/restates.py``)
builds its paraphrased questions with it. Standard library only.
"""

from __future__ import annotations

import random
import re

_SYNONYMS: dict[str, str] = {
    "better": "superior", "long-term": "lasting", "store of value": "way to preserve wealth",
    "outperform": "do better than", "will": "is going to", "increase": "raise", "reduce": "cut",
    "lower": "bring down", "raise": "push up", "growth": "expansion", "prices": "price levels",
    "companies": "firms", "government": "the state", "regulation": "rules", "risk": "danger",
    "important": "central", "main": "chief",
    "should": "ought to", "must": "has to", "cannot": "can't", "most": "the bulk of",
    "large": "big", "small": "modest", "rapidly": "quickly", "significant": "substantial",
    "deterministic": "inevitable", "safe": "secure",
    "require": "need", "requires": "needs", "allow": "let", "increases": "raises",
    "reduces": "cuts", "lowers": "brings down", "new": "fresh", "build": "construct",
    "building": "construction", "housing": "homes", "models": "systems", "open": "public",
}
_NAMES = frozenset({"Bitcoin", "Ethereum", "Solana", "Gold's", "Congress", "Europe", "America", "China"})
_QUESTION_FORMS = (
    "whether {s}",
    "Is it really the case that {s}?",
    "Does the record support the view that {s}?",
    "At issue: {s} — true or not?",
)
_CLAIM_FORMS = ("{S}.", "In short, {s}.", "The point is that {s}.")


def paraphrase(text: str, form: str, rng: random.Random) -> str:
    """Say a declarative ``text`` in other words: a question (or claim) frame and a few
    synonyms, each swapped at most once.

    >>> p = paraphrase("Gold will outperform Bitcoin in the next crisis.", "question", random.Random(1))
    >>> p != "Gold will outperform Bitcoin in the next crisis." and "gold" in p.lower()
    True
    """
    body = text.strip().rstrip("?.").strip()
    body = re.split(r":\s+|;\s+", body)[0]  # the claim, without its gloss
    chosen = [w for w in sorted(_SYNONYMS, key=len, reverse=True) if rng.random() < 0.5]
    if chosen:
        pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in chosen) + r")\b", re.I)
        body = pattern.sub(lambda m: _SYNONYMS[m.group(1).lower()], body)
    first, _, rest = body.partition(" ")
    second = rest.split(" ", 1)[0] if rest else ""
    # an acronym ("AI"), a known name, or a two-word name ("Cedar Falls") keeps its capital
    named = (len(first) > 1 and first.isupper()) or first.rstrip("'s") in _NAMES or second[:1].isupper()
    s = (first if named else first.lower()) + (f" {rest}" if rest else "")
    forms = _QUESTION_FORMS if form == "question" else _CLAIM_FORMS
    out = forms[rng.randrange(len(forms))].format(s=s, S=s[:1].upper() + s[1:])
    return out[:1].upper() + out[1:]
