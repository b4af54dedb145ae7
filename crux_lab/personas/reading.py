"""Reading a debate's words against a deck: which proposition a text states, what a turn does,
and where each persona stands after the turns.

Pure text reading, stdlib only (beside the persona file formats): a text states a proposition
when it shares enough content words with its text, question and keywords
(:meth:`Reader.recognize`); a turn's move, stance and named reason come from its wording
(:func:`read_move`, :func:`read_stance`, :func:`named_reason_of`); a persona's stance after the
turns is its ground truth moved by its own concessions and by the flip conditions an
opponent's turn fires (:meth:`Reader.current_stance`, :func:`fired_trigger`).

The persona simulator reads its requests with it (its ``SimContext`` is a :class:`Reader` that
may misread), and the fake-consensus audit reads a finished debate with it
(:class:`DeckReader`, which never misreads).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from crux_lab.personas.models import (
    FlipTrigger,
    Persona,
    Proposition,
    PropositionStance,
    StanceValue,
)

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


class Said(Protocol):
    """A turn as a reader sees it: who spoke, the words, and its place in the debate."""

    @property
    def speaker_id(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def turn_index(self) -> int | None: ...


@dataclass
class ReadTurn:
    """A turn of the request as the simulator read it from the words alone: its move, its stance
    on the main proposition, the reason it names for a concession, and ``proposition_ids``
    (the deck propositions the text states, main one first)."""

    speaker_id: str
    text: str
    move: str | None = None
    stance: str | None = None
    named_reason: str | None = None
    turn_index: int | None = None
    proposition_ids: list[str] = field(default_factory=list)


# The words that show a turn's move, as the simulated speakers phrase them (``SimContext.utter``):
# a reader learns the move from the turn's words, never from the speaker's reply.
CONCEDE_CUES = ("i'll grant part of that", "you have met my condition", "you make a fair point")
VAGUE_MARKERS = ("see this differently", "different perspectives")  # the generic crux statements
MOVE_CUES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("CONCEDE", CONCEDE_CUES),
    ("PROPOSE_CRUX", ("the core disagreement is", *VAGUE_MARKERS)),
    ("REFRAME", ("the real question is",)),
    ("CHALLENGE", ("i disagree",)),
    ("CLARIFY", ("to be precise",)),
)
CONDITION = re.compile(r"You have met my condition: (.+?)\.?$")


def read_move(text: str) -> str:
    """The move a turn's words make (``CLAIM`` when no cue shows another).

    >>> read_move("I'll grant part of that on whether gold is money. I am not sure that gold is money.")
    'CONCEDE'
    >>> read_move("I disagree: gold is money.")
    'CHALLENGE'
    >>> read_move("Gold is money.")
    'CLAIM'
    """
    low = text.lower()
    return next((move for move, cues in MOVE_CUES if any(c in low for c in cues)), "CLAIM")


def named_reason_of(text: str) -> str | None:
    """The reason a concession names in its words ("You have met my condition: ..."), if any.

    >>> named_reason_of("I'll grant that. You have met my condition: a court rules against it.")
    'a court rules against it'
    """
    return next((m.group(1).strip() for s in split_sentences(text) if (m := CONDITION.search(s))), None)


RECOGNISE_AT = 0.28  # relevance a sentence needs to count as stating a proposition
# "I disagree: X" asserts X against the other side, so it is no negation of X.
_NEGATIONS = ("i don't accept that", "it is not the case that", "not true that", "i deny that", "is false")
_DOUBTS = ("i am not sure that", "i'm not sure", "not sure that", "uncertain whether")


def read_stance(text: str) -> StanceValue | None:
    """The stance a sentence takes on the claim it states, read from its wording.

    >>> read_stance("It is not the case that gold will outperform."), read_stance("I don't accept that gold will outperform.")
    ('con', 'con')
    >>> read_stance("I am not sure that rents fall.")
    'uncertain'
    >>> read_stance("Rents fall when supply grows.")
    'pro'
    >>> read_stance("I disagree: rents fall when supply grows.")
    'pro'
    """
    low = text.lower()
    if any(d in low for d in _DOUBTS):
        return "uncertain"
    if any(n in low for n in _NEGATIONS):
        return "con"
    return "pro"


def split_sentences(text: str) -> list[str]:
    """Sentences of a text (on . ! ? and line breaks).

    >>> split_sentences("One. Two? Three")
    ['One.', 'Two?', 'Three']
    """
    parts = re.split(r"(?<=[.!?])\s+|\n+", text.strip())
    return [p.strip() for p in parts if p.strip()]


def fired_trigger(truth: PropositionStance, turn: ReadTurn) -> FlipTrigger | None:
    """The first flip condition of ``truth`` that ``turn`` (an opponent's) satisfies, if any."""
    text = words(turn.text)
    for trig in truth.flip_conditions:
        if trig.proposition_id and trig.proposition_id not in turn.proposition_ids:
            continue
        if trig.kind == "concession":
            if turn.move == "CONCEDE" and trig.by in ("any", turn.speaker_id):
                return trig
            continue
        if trig.keywords and all(k.lower() in " ".join(sorted(text)) or k.lower() in turn.text.lower() for k in trig.keywords):
            return trig
    return None


class Reader:
    """Reads texts against a deck: ``personas`` (their ground truth), ``propositions`` (the
    deck's) and ``turns`` (the turns read so far). A subclass sets the three attributes; it may
    narrow the cast (:meth:`cast`) and misread (:meth:`misreads`)."""

    personas: Mapping[str, Persona]
    propositions: Mapping[str, Proposition]
    turns: list[ReadTurn]

    def cast(self) -> list[str]:
        """The personas whose deck a text is read against (here: all of them)."""
        return list(self.personas)

    def misreads(self, *key: str) -> bool:
        """True when the reader misreads what ``key`` names (here: never)."""
        return False

    # -- ground truth -----------------------------------------------------
    def truth(self, persona_id: str, proposition_id: str) -> PropositionStance | None:
        return self.personas[persona_id].stance_on(proposition_id) if persona_id in self.personas else None

    def current_stance(self, persona_id: str, proposition_id: str) -> StanceValue | None:
        """Ground-truth stance, updated by what happened in the turns so far (as read).

        A persona's own CONCEDE on a proposition moves it to ``uncertain``; a flip condition whose
        trigger appears in an opponent's turn moves it to the trigger's ``new_stance``.
        """
        truth = self.truth(persona_id, proposition_id)
        if truth is None:
            return None
        stance: StanceValue = truth.stance
        for turn in self.turns:
            if proposition_id not in turn.proposition_ids:
                continue
            if turn.speaker_id == persona_id:
                if turn.move == "CONCEDE":
                    stance = "uncertain"
                continue
            trig = fired_trigger(truth, turn)
            if trig is not None:
                stance = trig.new_stance
        return stance

    def deck_propositions(self, persona_ids: Sequence[str] | None = None) -> list[Proposition]:
        ids = list(persona_ids or self.cast())
        held = {s.proposition_id for pid in ids if pid in self.personas for s in self.personas[pid].stances.stances}
        return [p for pid, p in sorted(self.propositions.items()) if pid in held]

    # -- reading ----------------------------------------------------------
    def relevance(self, proposition: Proposition, text: str) -> float:
        q = words(text)
        if not q:
            return 0.0
        keys = words(" ".join([proposition.text, proposition.question, *proposition.keywords]))
        return len(q & keys) / (len(q) ** 0.5 * max(1, len(keys)) ** 0.5)

    def rank_propositions(self, text: str, persona_ids: Sequence[str] | None = None) -> list[Proposition]:
        """Deck propositions ordered by keyword relevance to ``text`` (ties by id, stable)."""
        props = self.deck_propositions(persona_ids)
        return sorted(props, key=lambda p: (-self.relevance(p, text), p.id))

    def recognize(self, text: str, *, at: float = RECOGNISE_AT) -> Proposition | None:
        """The deck belief a text states, by reading it: the most relevant proposition when it
        clears ``at``. A reader that misreads the text (:meth:`misreads`) takes the runner-up
        instead, or nothing when there is none."""
        if not text.strip():
            return None
        ranked = self.rank_propositions(text)
        scored = [(self.relevance(p, text), p) for p in ranked[:2]]
        hits = [p for score, p in scored if score >= at]
        if not hits:
            return None
        if self.misreads("recognize", text):
            return hits[1] if len(hits) > 1 else None
        return hits[0]

    def recognize_all(self, text: str) -> list[Proposition]:
        """Every deck belief a text states: the whole text's main one first, then any sentence
        that states another on its own."""
        main = self.recognize(text)
        found = [main] if main is not None else []
        for sentence in split_sentences(text):
            p = self.recognize(sentence, at=0.45)
            if p is not None and all(p.id != f.id for f in found):
                found.append(p)
        return found

    def read_turn(self, turn: Said) -> ReadTurn:
        """A turn as read from its words: the propositions its text states, its move, its stance
        on the main one (a concession's from the sentence that states where it now stands, else
        "uncertain"), and the reason a concession names."""
        props = self.recognize_all(turn.text)
        move = read_move(turn.text)
        stance: str | None = None
        if props:
            sentences = split_sentences(turn.text) or [turn.text]
            if move == "CONCEDE":  # where the speaker now stands: a sentence that states the claim
                sentences = [s for s in sentences if not any(c in s.lower() for c in CONCEDE_CUES)
                             and self.relevance(props[0], s) >= RECOGNISE_AT]
            if sentences:
                main_sentence = max(sentences, key=lambda s: self.relevance(props[0], s))
                stance = read_stance(main_sentence)
            if move == "CONCEDE":
                stance = stance or "uncertain"
        return ReadTurn(
            speaker_id=turn.speaker_id,
            text=turn.text,
            move=move,
            stance=stance,
            named_reason=named_reason_of(turn.text) if move == "CONCEDE" else None,
            turn_index=turn.turn_index,
            proposition_ids=[p.id for p in props],
        )


@dataclass
class DeckReader(Reader):
    """A reader of a finished debate against its personas' deck: it never misreads, and reads
    every persona's beliefs."""

    personas: Mapping[str, Persona]
    propositions: Mapping[str, Proposition]
    turns: list[ReadTurn] = field(default_factory=list)

    @classmethod
    def of(
        cls, personas: Mapping[str, Persona], propositions: Mapping[str, Proposition], turns: Sequence[Said]
    ) -> DeckReader:
        """A reader that has read ``turns`` in order."""
        reader = cls(personas=personas, propositions=propositions)
        reader.turns = [reader.read_turn(t) for t in turns]
        return reader
