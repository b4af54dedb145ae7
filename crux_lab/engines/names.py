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


def labels(persona_ids: Iterable[str], names: Mapping[str, str]) -> dict[str, str]:
    """How a prompt labels each persona: its display name, which :func:`persona_ref` reads back,
    or its id when a name is missing or two names read alike. A label is what the model copies
    into a reply: Qwen2.5-Coder-1.5B, shown "[scn001-skeptic]", wrote "The crux room between
    scn001-skeptic and scn001-organizer" into a card's sides.

    >>> labels(["a", "b"], {"a": "Peter Schiff", "b": "Michael Saylor"})
    {'a': 'Peter Schiff', 'b': 'Michael Saylor'}
    >>> labels(["a", "b", "c"], {"a": "The Skeptic", "b": "the skeptic"})  # alike: ids
    {'a': 'a', 'b': 'b', 'c': 'c'}
    >>> labels(["x"], {})
    {'x': 'x'}
    """
    ids = list(dict.fromkeys(persona_ids))
    shown = {pid: names.get(pid) or pid for pid in ids}
    keys = [_key(v) for v in shown.values()]
    if len(set(keys)) < len(keys) or any(persona_ref(v, shown) != pid for pid, v in shown.items()):
        return {pid: pid for pid in ids}
    return shown


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


# Who a question may ask about when it asks what someone believes, beyond the personas.
_GENERIC_HOLDERS = re.compile(
    r"you|they|he|she|both|both of them|either|each side|the people|the (?:two )?groups"
    r"|(?:the |each |one )?(?:(?:first|second|third|fourth|other|\d+(?:st|nd|rd|th)?) )?group(?: \d+)?"
)
# Verbs whose clause is the claim itself; the first two take it with or without "that".
_BELIEF_VERBS = r"(?P<verb>believe|think|agree|argue|hold|claim|say|expect|accept|feel|(?:dis)?agree with the (?:premise|claim|idea|view|statement))"
_ABOUT_PERSON = re.compile(
    r"^\s*(?:why\s+)?(?:do|does|did|would|will|could|can|should)\s+(?P<who>.{1,80}?)\s+(?:really\s+|still\s+)?"
    + _BELIEF_VERBS + r"s?\s+(?P<that>that\s+)?(?P<claim>[^?]+?)\s*\??\s*$",
    re.IGNORECASE,
)
# "Is the claim that S a premise of their disagreement?": a question about the debate, not S.
_ABOUT_DEBATE = re.compile(
    r"^\s*is\s+the\s+(?:claim|premise|idea|assumption|view|statement)\s+that\s+(?P<claim>.+?),?\s+"
    r"(?:(?:a|the)\s+(?:\w+\s+)?(?:premise|crux|point|source|root)\s+of|relevant\s+to|central\s+to|at\s+the\s+(?:heart|root|core)\s+of)"
    r"\s+(?:their|the)\s+(?:disagreement|debate|dispute)\s*\??\s*$",
    re.IGNORECASE,
)
# "Is Schiff correct in asserting that S?", "Is Schiff's claim that S valid?": asks for a verdict
# on a person, where the claim S is the question, with the same answer (not "wrong": a yes to
# "Is Schiff wrong that S?" is a no to S, and the card's positions would then read backwards).
_PERSON_RIGHT = re.compile(
    r"^\s*(?:is|are)\s+(?P<who>.{1,80}?)\s+(?:correct|right)\s+(?:in|to|when)\s+\w+\s+"
    r"(?P<that>that\s+)(?P<claim>[^?]+?)\s*\??\s*$",
    re.IGNORECASE,
)
# "Is Peter Schiff arguing that S?": what a person is saying, where S is the question.
_PERSON_SAYING = re.compile(
    r"^\s*(?:is|are)\s+(?P<who>.{1,80}?)\s+(?:still\s+|really\s+)?"
    r"(?:arguing|claiming|saying|suggesting|asserting|contending|insisting|maintaining)\s+"
    r"(?P<that>that\s+)(?P<claim>[^?]+?)\s*\??\s*$",
    re.IGNORECASE,
)
_PERSON_CLAIM_VALID = re.compile(
    r"^\s*is\s+(?P<who>.{1,80}?)['’]s?\s+(?:claim|argument|view|belief|assertion|premise|point)\s+(?P<that>that\s+)"
    r"(?P<claim>[^?]+?),?\s+(?:a\s+)?(?:valid|true|correct|right|sound)(?:\s+(?:argument|claim|point|one))?\s*\??\s*$",
    re.IGNORECASE,
)


def world_question(question: str, names: Mapping[str, str]) -> str | None:
    """The question about the world that a question about a person's belief stands for, or None.

    A crux names a premise, not what someone believes: a small model often writes "Does Peter
    Schiff believe that Bitcoin is a bubble?" and a reader would answer it about Schiff. When the
    question asks whether a persona (any reference :func:`persona_ref` resolves), "you" or a
    group believes, thinks, agrees, argues, holds, claims, says, expects, accepts or feels a
    clause, or asks whether "the claim that" it is a premise of (or relevant to) their
    disagreement, or whether a persona is right (or correct) in asserting "that" it, or whether a
    persona's claim "that" it is valid (true), or whether a persona is arguing (claiming, saying,
    …) "that" it, that clause becomes the question: "Is it true that
    Bitcoin is a bubble?". Anything else (no such verb, a subject that is no persona, "believe
    in", a verb other than believe or think without "that", "disagrees with", whose yes is a no
    to the clause) is None: the question is kept as it was written.

    >>> names = {"schiff": "Peter Schiff", "saylor": "Michael Saylor"}
    >>> world_question("Does Peter Schiff believe that Bitcoin will underperform treasuries? ", names)
    'Is it true that Bitcoin will underperform treasuries?'
    >>> world_question("Why does Saylor think gold is a melting ice cube?", names)
    'Is it true that gold is a melting ice cube?'
    >>> world_question("Do you agree that Bitcoin is a better store of value than gold?", names)
    'Is it true that Bitcoin is a better store of value than gold?'
    >>> world_question("Does the group believe that the crisis is permanent?", names)
    'Is it true that the crisis is permanent?'
    >>> world_question("Does the second group disagree with the premise that squatters rights should be protected?", names) is None
    True
    >>> world_question("Is the claim that football will keep attracting players a premise of their disagreement?", names)
    'Is it true that football will keep attracting players?'
    >>> world_question("Is the premise that Bitcoin became widely used to price goods, relevant to their disagreement?", names)
    'Is it true that Bitcoin became widely used to price goods?'
    >>> world_question("Is Peter-Schiff correct in asserting that Bitcoin has no intrinsic value?", names)
    'Is it true that Bitcoin has no intrinsic value?'
    >>> world_question("Is Peter Schiff's claim that Bitcoin lacks intrinsic value a valid argument?", names)
    'Is it true that Bitcoin lacks intrinsic value?'
    >>> world_question("Is Peter Schiff arguing that scarcity alone does not create value?", names)
    'Is it true that scarcity alone does not create value?'
    >>> world_question("Is Michael Saylor's claim that Bitcoin has no value correct, or is Peter Schiff's claim that "
    ...                "gold has real demand correct?", names) is None
    True
    >>> [world_question(q, names) for q in ["Is Bitcoin's supply fixed?", "Does Schiff believe in Bitcoin?",
    ...  "Does scarcity believe nothing?", "Does Schiff accept price momentum as proof?",
    ...  "Does the first group favor higher taxes?"]]
    [None, None, None, None, None]
    """
    if (m := _ABOUT_DEBATE.match(question)) is not None:
        return f"Is it true that {m.group('claim').strip().rstrip('.')}?"
    m = (_ABOUT_PERSON.match(question) or _PERSON_RIGHT.match(question) or _PERSON_CLAIM_VALID.match(question)
         or _PERSON_SAYING.match(question))
    if m is None:
        return None
    who = " ".join(m.group("who").lower().split())
    if not _GENERIC_HOLDERS.fullmatch(who) and persona_ref(who, names) is None:
        return None
    claim = m.group("claim").strip().rstrip(".")
    if m.groupdict().get("verb", "").lower().startswith("disagree"):
        return None  # a yes to it is a no to the claim: the card's positions would read backwards
    if not m.group("that") and (m.group("verb").lower() not in ("believe", "think") or _words(claim)[:1] in (["in"], ["about"], ["of"], ["so"])):
        return None
    if len(_words(claim)) < 2 or _EITHER_OR.search(claim):
        return None  # "Is A's claim that X correct, or is B's claim that Y correct?" holds two claims, not one
    return f"Is it true that {claim}?"


_EITHER_OR = re.compile(r",?\s+or\s+(?:is|are|does|do|did|was|were)\s", re.IGNORECASE)


_HOLDS = re.compile(
    r"^\s*(?P<who>.{1,80}?)\s+(?:still\s+|firmly\s+)?(?:believes|thinks|argues|holds|claims|says|maintains|insists|feels|contends)"
    r"\s+(?:that\s+)?(?P<claim>.+?)\s*$",
    re.IGNORECASE,
)


def world_claim(claim: str, names: Mapping[str, str]) -> str:
    """The claim about the world that a report of a speaker's belief stands for: "The Station
    Road Homeowner believes that the road is dangerous" becomes "The road is dangerous". A claim
    in a persona's name carries the name into every turn request that shows it, and a small model
    then narrates that speaker. Anything else is returned as it was.

    >>> names = {"home": "The Station Road Homeowner (Brackwater)", "b": "Bo Lee"}
    >>> world_claim("The Station Road Homeowner believes that the station road is already dangerous.", names)
    'The station road is already dangerous.'
    >>> world_claim("Bo Lee says rents will fall", names)
    'Rents will fall'
    >>> world_claim("Gold holds value", names)
    'Gold holds value'
    """
    m = _HOLDS.match(claim)
    if m is None or persona_ref(m.group("who"), names) is None or len(_words(m.group("claim"))) < 2:
        return claim
    rest = m.group("claim")
    return rest[:1].upper() + rest[1:]


def quote(text: str, limit: int = 120) -> str:
    """Refused text as a warning quotes it: in double quotes, shortened at a word.

    >>> quote('Speaker "X"')
    '"Speaker \\'X\\'"'
    """
    return '"' + clip(text.replace('"', "'"), limit) + '"'
