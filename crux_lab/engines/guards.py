"""Guards for what real model text does, shared by every engine that makes persona turns,
crux cards or disputes. Each guard is model-agnostic (plain string checks, no model call).

- **Echo**: a persona turn that largely repeats an earlier turn (its own or another
  speaker's) or the debate topic: :func:`containment` of its word triples in that text is at
  least :data:`ECHO_AT`, or that share of its content words is there and it adds at most
  :data:`ECHO_NEW_WORDS` of its own (:func:`repeats`); for an earlier turn, also when it is
  that turn in other words (:func:`rewords`).
- **Role confusion**: a persona turn whose stance contradicts the position that persona
  holds on the same claim (pro against con), with no named reason for changing it. The
  position is the one the persona's own system prompt gives it on the debate topic
  (:func:`briefed_positions`), else its first stated stance on the claim.
- **Grounded sides**: every side of a card or dispute quotes what that persona said; the
  quote must be found, after normalising case, whitespace and punctuation, in that persona's
  own turns (:func:`quote_found`). A quote of the other speaker is a swapped side.

A guard takes the backend's one repair: the engine passes the guard as the pydantic
validation context of the reply (``LLMRequest.validation_context``), the reply's validator
raises once with the problem in words the model can act on, and the backend sends its usual
repair turn. The request's text and hash do not change. A second reply with the same problem
validates, and the engine skips the turn (or drops the side) with a warning event; a turn whose
second reply still contradicts its persona's position is kept, with a role flag
(``DialogueTurn.role_flag``), never silently dropped.

Every firing is one warning event (``purpose`` ``guard_echo``, ``guard_role`` or
``guard_sides``), counted per run by :func:`crux_lab.analysis.metrics.guard_counts`. Guards
that keep out :data:`GIVE_UP_AFTER` persona turns in a row, every speaker's among them, end
the debate with :class:`TooWeakToPlay`: the model cannot play, and repairs would only loop.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from crux_lab.analysis.restates import content_words, topic_coverage_of, within_topic
from crux_lab.analysis.textmatch import negations
from crux_lab.engines.base import ANSWER_STANCE_PROMPT, TURN_FIELDS_PROMPT, TurnReply, stance_of
from crux_lab.llm.base import LLMError
from crux_lab.models.domain import DialogueTurn
from crux_lab.models.events import EngineError
from crux_lab.personas.prompt import ANSWER_WORDS, read_stance_lines
from crux_lab.personas.retrieval import voiced

ECHO_AT = 0.8  # containment of a turn's word triples in an earlier text that makes it an echo
ECHO_NEW_WORDS = 2  # the content words of its own that a copy by content words may add (repeats)
ECHO_MIN_WORDS = 8  # the content words a turn needs before that rule applies
REWORD_AT = 0.7  # share of each text's content words the other holds that makes a turn a reworded copy
REWORD_NEW_WORDS = 8  # the content words of its own that a reworded copy may add (rewords)
MIN_QUOTE_WORDS = 3  # a side's quote: at least this many words (or a whole shorter turn)
MAX_QUOTABLE = 40  # sentences per participant a narrowed schema offers as a quote (the latest)
QUOTE_AT = 0.8  # containment of a longer quote's word triples in one turn that grounds it
GIVE_UP_AFTER = 4  # persona turns in a row kept out by a guard before the debate ends
GUARDS = ("echo", "role", "sides")

_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")


class TooWeakToPlay(LLMError):
    """Guards kept out :data:`GIVE_UP_AFTER` persona turns in a row, every speaker's among them.
    ``events`` are the warnings of the last turn, which the runner records before the error."""

    def __init__(self, message: str, events: Sequence[EngineError] = ()) -> None:
        super().__init__(message)
        self.events = list(events)


def norm_words(text: str) -> list[str]:
    """The words of ``text``: lower case, punctuation and extra whitespace gone.

    >>> norm_words("  Gold held -- its VALUE, for 5,000 years!  ")
    ['gold', 'held', 'its', 'value', 'for', '5', '000', 'years']
    """
    return [w.replace("’", "'") for w in _WORD.findall(text.lower())]


def triples(text: str) -> set[tuple[str, ...]]:
    """The word triples of ``text`` (one triple of its words when it has fewer than three)."""
    w = norm_words(text)
    if len(w) < 3:
        return {tuple(w)} if w else set()
    return {tuple(w[i : i + 3]) for i in range(len(w) - 2)}


def containment(text: str, source: str) -> float:
    """The share of ``text``'s word triples that ``source`` also has (0 for an empty text).

    >>> containment("Gold has been money for five thousand years.", "As I said, gold has been money for five thousand years, and it will stay so.")
    1.0
    >>> containment("Bitcoin is scarce by design.", "Gold has been money for five thousand years.")
    0.0
    """
    mine = triples(text)
    return len(mine & triples(source)) / len(mine) if mine else 0.0


def quote_found(quote: str, said: Iterable[str]) -> bool:
    """True when ``quote`` (at least :data:`MIN_QUOTE_WORDS` words, or a whole shorter turn)
    occurs in one of the texts ``said``, ignoring case, whitespace and punctuation, or when at
    least :data:`QUOTE_AT` of its word triples occur in one of them (a quote that skips a
    clause or changes a word still counts; a quote of words nobody said does not).

    >>> quote_found('"GOLD has been money,"', ["Gold has been money for millennia."])
    True
    >>> quote_found("Gold has real industrial and jewellery demand", ["Gold has served as money for millennia and has real industrial and jewellery demand."])
    True
    >>> quote_found("gold", ["Gold has been money for millennia."])
    False
    >>> quote_found("Bitcoin is scarce", ["Gold has been money for millennia."])
    False
    """
    q = norm_words(quote)
    if not q:
        return False
    needle = " " + " ".join(q) + " "
    for text in said:
        w = norm_words(text)
        if len(q) < MIN_QUOTE_WORDS and q != w:
            continue
        if needle in " " + " ".join(w) + " ":
            return True
        if len(q) > MIN_QUOTE_WORDS and containment(quote, text) >= QUOTE_AT:
            return True
    return False


@dataclass(frozen=True)
class Finding:
    """One firing of a guard: which guard, whose text, and the problem in plain words."""

    guard: str
    persona_id: str
    problem: str
    text: str = ""
    key: str = ""  # the card or dispute a side belongs to


@dataclass(frozen=True)
class Said:
    """An earlier turn as a guard sees it: who said it (id and display name), the words,
    and the turn fields the engine parsed from it."""

    persona_id: str
    name: str
    text: str
    stance: str | None = None
    named_reason: str | None = None
    addresses: tuple[str, ...] = ()
    from_brief: bool = False  # the position the persona's system prompt gives it, not a turn


def said_of(turns: Sequence[DialogueTurn], names: Mapping[str, str]) -> list[Said]:
    """Transcript turns as :class:`Said` records (a name falls back to the id)."""
    return [
        Said(t.persona_id, names.get(t.persona_id, t.persona_id), t.dialogue, t.stance, t.named_reason, tuple(t.proposition_ids))
        for t in turns
    ]


# What a turn request tells the model about its reply's fields. Qwen2.5-1.5B once wrote a turn
# of these words ("Your answer to the claim you address"): 1 of the 10 turns of the crux_rooms
# cassette, 0 of 354 turns in the committed Qwen runs (dev and the speaker stages). Each engine
# adds its own request's instructions and format (``TurnGuard.form``): a dcg debate on Qwen wrote
# a turn of its format's example ("your words, in your own voice") and a closing of its round's
# instruction ("you now agree on... what you still disagree on...").
FORM_WORDS = f"{TURN_FIELDS_PROMPT} {ANSWER_STANCE_PROMPT}"


_LABEL = re.compile(r"\s*[\"']?([A-Za-z][A-Za-z' ]{2,60}?)\s*:\s+(?=\S)")


def form_label_dropped(text: str, form: str = "") -> str:
    """``text`` without a label at its start that its request's words hold ("The claim in a few
    words: ..."): a small model puts the format's example value, or the request's own heading,
    before its words. The label is two or more words, found in ``form`` read with
    :data:`FORM_WORDS` (case and spacing aside); any other opening stays.

    >>> form_label_dropped("The claim in a few words: I can't agree with that.", '"answers": "the claim in a few words"')
    "I can't agree with that."
    >>> form_label_dropped("The claim to answer: foot patrols work.", "Answer the claim to answer directly.")
    'foot patrols work.'
    >>> form_label_dropped("I stand by my earlier point: it will not pay.", "Answer the claim to answer directly.")
    'I stand by my earlier point: it will not pay.'
    >>> form_label_dropped("Stance: yes, gold is money.")  # one word: not taken for a heading
    'Stance: yes, gold is money.'
    """
    m = _LABEL.match(text)
    if m is None or len(m.group(1).split()) < 2:
        return text
    label = " ".join(m.group(1).lower().split())
    return text[m.end():] if label in " ".join(f"{FORM_WORDS} {form}".lower().split()) else text


def echo_problem(
    text: str, earlier: Sequence[Said], topic: str, me: str, stance: str | None = None, form: str = ""
) -> str | None:
    """What a turn repeats, in words for the model; None when it says something new. A turn
    whose ``stance`` is the opposite of another speaker's earlier turn, and whose negations
    differ from that turn's (:func:`negations`), is a denial of it: the content-word rule of
    :func:`repeats` is not applied between the two, only the word triples are. (Not so against
    the speaker's own turns, nor for a copy with the same negations: on a small model a copy
    comes back with its stance field flipped.) ``form`` is the engine's own request instructions
    and format, read with :data:`FORM_WORDS`: a turn made of them copies the request. The problem names no other speaker: it goes
    back to the model, and a repair told "this turn repeats <name>'s earlier turn" came back on
    Qwen as "<name> says, '...'" (narration, with the copy inside it).

    >>> e = [Said("schiff", "Peter Schiff", "Gold has been money for five thousand years and bitcoin has not.")]
    >>> print(echo_problem("Gold has been money for five thousand years and bitcoin has not.", e, "Is gold better?", "saylor"))
    this turn repeats an earlier point nearly word for word (that point: "Gold has been money for five thousand years and bitcoin has not."); say what you think, in new words
    >>> echo_problem("Is gold better?", e, "Is gold better?", "saylor")
    'this turn only repeats the debate topic; answer it with your own argument'
    >>> echo_problem("Bitcoin's supply is capped at 21 million coins.", e, "Is gold better?", "saylor") is None
    True
    >>> echo_problem("  ", e, "Is gold better?", "saylor")
    'this turn is empty; say what you think of the claim in front of you'
    >>> echo_problem("Your answer to the claim you address", e, "Is gold better?", "saylor")
    "this turn copies the instructions for the reply's fields; say what you think of the claim in front of you"
    >>> echo_problem("your words, in your own voice", e, "Is gold better?", "saylor", form='{"dialogue": "your words, in your own voice"}')
    "this turn copies the instructions for the reply's fields; say what you think of the claim in front of you"
    """
    if not text.strip():
        return "this turn is empty; say what you think of the claim in front of you"
    if repeats(text, topic) or asks_topic(text, topic):
        return "this turn only repeats the debate topic; answer it with your own argument"
    if containment(text, f"{FORM_WORDS} {form}") >= ECHO_AT:
        return "this turn copies the instructions for the reply's fields; say what you think of the claim in front of you"
    for s in reversed(earlier):
        denial = s.persona_id != me and (stance, s.stance) in _OPPOSED and negations(text) != negations(s.text)
        if containment(text, s.text) >= ECHO_AT if denial else (repeats(text, s.text) or rewords(text, s.text)):
            whose = "your own earlier point" if s.persona_id == me else "an earlier point"
            return f'this turn repeats {whose} nearly word for word (that point: "{clipped(s.text, QUOTE_WORDS)}"); say what you think, in new words'
    return None


def repeats(text: str, source: str) -> bool:
    """Whether ``text`` repeats ``source``: at least :data:`ECHO_AT` of its word triples are in
    it, or that share of its content words (at least :data:`ECHO_MIN_WORDS` of them) is, and
    it adds at most :data:`ECHO_NEW_WORDS` of its own. The second rule catches a copy with a
    word changed every few words, which is what a local server's penalty on verbatim repeats
    (``own_words``) makes of a copy: Qwen2.5-1.5B
    then restated the topic as "Should Brackwater allow six-storey apartment buildings around
    its railway station?", and two more of its 13 panel turns were such copies of earlier turns.
    The echo guard applies both rules to the topic and to every earlier turn (only the triples to
    another speaker's turn of the opposite stance with other negations: :func:`echo_problem`). On dev (Qwen2.5-1.5B,
    panel, seed 0, all six scenarios) the second rule alone caught 15 of 82 turns, each read as a
    copy of an earlier turn with words changed ("I don't believe raising water bills to replace
    the old mains would be justified." after the same speaker's "I don't believe raising water
    bills to replace old mains would be justified. While it may seem …"); before, only the
    speakers' benchmark counted them ("kept repeats").

    >>> topic = "Should Brackwater allow six-storey apartment blocks around its railway station?"
    >>> repeats("Should Brackwater allow six-storey apartment buildings around its railway station?", topic)
    True
    >>> claim = "New apartment blocks near Brackwater station would slow rent rises in the streets around them."
    >>> repeats("I doubt new flats near the station will slow rent rises: they let at top prices.", claim)
    False
    """
    if containment(text, source) >= ECHO_AT:
        return True
    mine = content_words(text)
    if len(mine) < ECHO_MIN_WORDS:  # a short stance ("Bitcoin is still the better store of value.") answers
        return False
    shared = mine & content_words(source)
    return len(shared) >= ECHO_AT * len(mine) and len(mine - shared) <= ECHO_NEW_WORDS


def rewords(text: str, source: str) -> bool:
    """Whether ``text`` is ``source`` said again in other words: each holds at least
    :data:`REWORD_AT` of the other's content words, ``text`` has at least
    :data:`ECHO_MIN_WORDS` of them and adds at most :data:`REWORD_NEW_WORDS`. :func:`repeats`
    lets such a copy through when it adds three words or more. The echo guard applies it to
    earlier turns, not to the topic (a stance with one reason uses most of the topic's words).
    Dev figure (Qwen2.5-1.5B, the committed dev runs of ``benchmarks/data/speakers_qwen`` and
    two crux_rooms runs, 226 kept turns of 8 content words or more that :func:`repeats` let
    through): it flags 20, 19 of them read as copies of an earlier turn with words changed
    (Gullhaven's crux room, four speakers in a row: "The claim suggests that the busy season
    extends into spring and autumn, which contradicts ..."), 1 as the earlier point with a
    condition added ("Brackwater can allow six-story apartment blocks, but only after
    addressing the safety concerns, ..."); 2 of the 20 are another speaker's opposite stance with other
    negations, which :func:`echo_problem` reads as denials and does not apply it to. At 0.6 it
    would flag 47, with denials ("It's not fair if ..." answered by "I believe it's fair if
    ...") among them.

    >>> a = "The claim suggests that the busy season is extending into spring and autumn, which contradicts the evidence that visitors are still empty in October and the previous year."
    >>> rewords("The claim suggests that the busy season extends into spring and autumn, which contradicts not only the evidence that visitors are empty in the month of October but also the previous year.", a)
    True
    >>> rewords("Visitors use our roads, toilets and bins, and it is residents paying to fix them.", a)
    False
    """
    mine = content_words(text)
    if len(mine) < ECHO_MIN_WORDS:
        return False
    theirs = content_words(source)
    shared = mine & theirs
    return (len(shared) >= REWORD_AT * len(mine) and len(shared) >= REWORD_AT * len(theirs)
            and len(mine - shared) <= REWORD_NEW_WORDS)


TOPIC_COVERED = 0.75  # share of the topic's content words a one-question turn must use to restate it


def asks_topic(text: str, topic: str) -> bool:
    """Whether a turn is the topic asked back: one question that uses at least
    :data:`TOPIC_COVERED` of the topic's content words (a hyphen read as a space) and adds at
    most :data:`ECHO_NEW_WORDS` of its own. :func:`repeats` misses such a turn: it has fewer
    content words than its word rule needs, and a local server's repeat penalty changes a word
    or two. On dev (Qwen2.5-1.5B, panel, seed 0) three of the twelve turns of ``housing`` were
    such questions, and none of the 28 turns of ``public-health`` and ``water``.

    >>> topic = "Should Brackwater allow six-storey apartment blocks around its railway station?"
    >>> asks_topic("Should Brackwater allow six storey apartment buildings near its railway station?", topic)
    True
    >>> asks_topic("Should Brackwater allow six-storey blocks if rents then fall?", topic)
    False
    >>> asks_topic("Brackwater should allow six-storey apartment blocks around its railway station?  No.", topic)
    False
    """
    text = " ".join(text.split())
    if not text.endswith("?") or re.search(r"[.!?]\s", text[:-1]):
        return False
    mine, theirs = content_words(text.replace("-", " ")), content_words(topic.replace("-", " "))
    return len(mine & theirs) >= TOPIC_COVERED * len(theirs) and len(mine - theirs) <= ECHO_NEW_WORDS


# Nouns that, after "The", make a sentence speak about the talk rather than state a point in it.
_TALK = re.compile(
    r"^\W*(?:the|this)\s+(?:debate|discussion|disagreement|dispute|claim|argument|belief|statement|question|issue|"
    r"conversation|speakers?|participants?|groups?)\b",
    re.IGNORECASE,
)


def narrates(text: str) -> bool:
    """Whether ``text`` speaks about the talk (the debate, a claim, a belief, the speakers)
    instead of stating a point in it. On Qwen the dcg extractor wrote its disputes so: on dev
    (seed 0), two of its four disputes on the six scenarios, ``tourism``'s ("The argument that
    the tax would encourage visitors to explore other areas of the country is supported by the
    evidence that ...") and ``farming``'s ("The claim that arable fields should be turned into
    wetland", refused already as the topic), and not the two others; on the held-out
    Polis conversations "The debate is on whether the BG should focus solely on downtown or
    include other areas" and "The claim directly addresses the economic benefits of raising
    the minimum wage in Seattle". None of the planted propositions or Polis statements
    vendored here reads so.

    >>> narrates("The debate is on whether the BG should focus solely on downtown.")
    True
    >>> narrates("The belief that staggered closing times reduce fighting is speculative.")
    True
    >>> narrates("The minimum wage raises unemployment among teenagers.")
    False
    >>> narrates("Does the claim of a fixed supply make Bitcoin scarce?")
    False
    """
    return bool(_TALK.match(text))


QUOTE_WORDS = 60  # words of the repeated turn a repair quotes back (a model may not have been shown it)


def clipped(text: str, words: int) -> str:
    """``text`` on one line, cut after ``words`` words with an ellipsis.

    >>> clipped("a  b   c d", 3)
    'a b c…'
    """
    w = text.split()
    return " ".join(w) if len(w) <= words else " ".join(w[:words]) + "…"


_OPPOSED = {("pro", "con"), ("con", "pro")}


class BriefSide(NamedTuple):
    """A "Where You Stand" line of a persona prompt, read back."""

    stance: str
    claim: str  # the claim's question, as the line asks it
    reason: str  # what the persona holds, in its own words
    line: str  # as the prompt shows it, without the bullet


def topic_side(system: str, topic: str) -> BriefSide | None:
    """The "Where You Stand" line (:mod:`crux_lab.personas.prompt`)
    of a persona's own system prompt whose question is the debate topic in its own words (only
    topic words, and most of them). None when the prompt states none, or states it more than
    once with different stances.

    >>> brief = '## Where You Stand\\n- It has no intrinsic value. (Your answer to "Is Bitcoin a better long-term store of value than gold?": no, confidence 0.95.)'
    >>> topic_side(brief, "Is Bitcoin a better long-term store of value than gold?").reason
    'It has no intrinsic value.'
    >>> topic_side(brief, "Should the US create a strategic Bitcoin reserve?") is None
    True
    """
    found = [
        BriefSide(s.stance, s.question, s.reason, s.line) for s in read_stance_lines(system)
        if within_topic(s.question, topic) and topic_coverage_of(s.question, topic) >= 0.8
    ]
    return found[0] if len({s.stance for s in found}) == 1 else None


TOPIC_KEY = "topic"  # the id the debate topic has among the claims a turn may address

SIDE_AT = 0.6  # share of a stance line's question words the question in front of a persona must use


def side_on(system: str, question: str) -> BriefSide | None:
    """The "Where You Stand" line of a persona's own system prompt whose question is the one in
    front of it (a round's aspect, a clash's claim, a room's crux): the line whose question's
    content words ``question`` uses most, at least :data:`SIDE_AT` of them. None when no line
    does, or when the best lines differ in stance.

    >>> brief = ('## Where You Stand\\n- Rents follow wages. (Your answer to "Would new flats near the station slow rent rises?": no, confidence 0.80.)\\n'
    ...          '- Light is not worth a home. (Your answer to "Do households that lose sunlight deserve compensation?": no, confidence 0.65.)')
    >>> side_on(brief, "Is it really the case that new flats near the station would slow rent rises?").reason
    'Rents follow wages.'
    >>> side_on(brief, "Should the council fund a new footpath?") is None
    True
    """
    asked = content_words(question)
    scored = []
    for s in read_stance_lines(system):
        mine = content_words(s.question)
        if mine:
            scored.append((len(mine & asked) / len(mine), BriefSide(s.stance, s.question, s.reason, s.line)))
    best = max((share for share, _ in scored), default=0.0)
    top = [side for share, side in scored if share == best]
    return top[0] if best >= SIDE_AT and len({t.stance for t in top}) == 1 else None


# The persona's answer, then its reason in its own words (never the claim it denies as a sentence),
# last in its turn request, next to what it is asked: earlier in the request, a builder whose brief
# answers yes answered no in 2 of 3 replies on Qwen2.5-1.5B; placed last, yes in 6 of 6.
TOPIC_ANSWER = "Your answer to the debate question: {answer}. Your reason: {reason}"
QUESTION_ANSWER = "Your answer to this question: {answer}. Your reason: {reason}"
# where the request shows a claim to answer rather than a question, the brief's question is named
QUOTED_ANSWER = 'Your answer to "{question}": {answer}. Your reason: {reason}'
REASON_GIVEN = "you have given it already; give another."


def answer_line(
    system: str, topic: str, question: str = "", said: Sequence[str] = (), *, topic_held: bool = True, quote: bool = False,
) -> str:
    """The line that tells a persona its own answer to the question in front of it, from its own
    system prompt: its line on ``question`` (:func:`side_on`) when that is not the topic, else
    its line on the topic (:func:`topic_side`) while it still holds it (``topic_held``); "" when
    its brief gives neither. A reason its own turns ``said`` already give is not shown again
    (it would be said again, word for word). ``quote``: ``question`` is a claim (another
    speaker's point), so the line names the brief's own question rather than "this question".

    >>> brief = '## Where You Stand\\n- Rents follow wages. (Your answer to "Would new flats near the station slow rent rises?": no, confidence 0.80.)'
    >>> answer_line(brief, "Should the town allow flats?", "Would new flats near the station slow rent rises at all?")
    'Your answer to this question: no. Your reason: Rents follow wages.'
    >>> answer_line(brief, "Should the town allow flats?", "Would new flats near the station slow rent rises?", ["Rents follow wages, as I said."])
    'Your answer to this question: no. Your reason: you have given it already; give another.'
    >>> answer_line(brief, "Should the town allow flats?", "Is the footpath safe?")
    ''
    >>> answer_line(brief, "Should the town allow flats?", "New flats by the station will slow rent rises.", quote=True)
    'Your answer to "Would new flats near the station slow rent rises?": no. Your reason: Rents follow wages.'
    """
    on = side_on(system, question) if question and question != topic else None
    side = topic_side(system, topic)
    template = QUESTION_ANSWER
    if on is None or (side is not None and on.claim == side.claim):
        if side is None or not topic_held:
            return ""
        on, template = side, TOPIC_ANSWER
    elif quote:
        template = QUOTED_ANSWER
    reason = REASON_GIVEN if voiced(on.reason, said) else on.reason.strip().rstrip(".") + "."
    return template.format(answer=ANSWER_WORDS[on.stance], reason=reason, question=on.claim)


def answer_to_claim(system: str, topic: str, claim: str, turns: Sequence[Said], me: str, flips: str | None = None) -> str:
    """:func:`answer_line` for a persona shown a claim rather than a question (the claim to
    answer, a round's claim; "" for none), after the debate's ``turns``: its own turns' reasons
    are not shown again, and the topic's line stays until a reason it heard moves it
    (:func:`still_holds`; ``flips`` read from ``system`` when not given)."""
    held = still_holds(turns, me, brief_flips(system) if flips is None else flips, topic)
    said = [t.text for t in turns if t.persona_id == me]
    return answer_line(system, topic, claim, said, topic_held=held, quote=True)


def answer_lines(system: str, topic: str, claims: Sequence[str]) -> str:
    """The persona's own answers from its brief to each of ``claims`` its brief asks (quoted,
    :func:`answer_line`), and to the debate question, one line each, for a request that lists
    several claims at once (graph's arguments and attacks).

    >>> brief = ('## Where You Stand\\n- Rents follow wages. (Your answer to "Would new flats near the station slow rent rises?": no, confidence 0.80.)\\n'
    ...          '- Homes first. (Your answer to "Should the town allow flats?": yes, confidence 0.9.)')
    >>> print(answer_lines(brief, "Should the town allow flats?", ["New flats near the station will slow rent rises.", "The footpath is safe."]))
    Your answer to "Would new flats near the station slow rent rises?": no. Your reason: Rents follow wages.
    Your answer to the debate question: yes. Your reason: Homes first.
    """
    lines = [answer_line(system, topic, c, quote=True) for c in claims] + [answer_line(system, topic)]
    return "\n".join(dict.fromkeys(line for line in lines if line))


def briefed_positions(system: str, topic: str, me: str, name: str, key: str) -> dict[str, Said]:
    """The position on the debate topic that ``me``'s own system prompt gives it
    (:func:`topic_side`), under the topic's claim id ``key``; empty when it gives none.

    >>> brief = '## Where You Stand\\n- It has no intrinsic value. (Your answer to "Is Bitcoin a better long-term store of value than gold?": no, confidence 0.95.)'
    >>> briefed_positions(brief, "Is Bitcoin a better long-term store of value than gold?", "schiff", "Peter Schiff", "topic")["topic"].stance
    'con'
    """
    side = topic_side(system, topic)
    if side is None:
        return {}
    return {key: Said(me, name, side.line, side.stance, None, (key,), from_brief=True)}


_FLIPS = re.compile(r"^## What Changes .*?Mind\n(.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)


def brief_flips(system: str) -> str:
    """What the persona's own system prompt says would change its mind ("What Changes Your
    Mind"); empty when it has no such section.

    >>> brief_flips("## Identity\\nA trader.\\n\\n## What Changes Your Mind\\nA rate cut.\\n\\n## Your Voice\\nPlain.")
    'A rate cut.'
    """
    m = _FLIPS.search(system)
    return m[1].strip() if m else ""


def reason_heard(reason: str, heard: Sequence[str], flips: str, topic: str) -> bool:
    """Whether a named reason names something the persona heard from another speaker, or one of
    its own conditions for changing its mind: at least two of its words beyond the topic's, and
    a third of them, are in those texts. Qwen2.5-Coder-1.5B filled the reason with its own
    argument, or with the round's description, while it switched sides.

    >>> reason_heard("Your point that the supply is fixed at 21 million moved me", ["The supply is fixed at 21 million coins."], "", "Is Bitcoin better than gold?")
    True
    >>> reason_heard("The debate points out its decentralized nature and high returns", ["The supply is fixed at 21 million coins."], "", "Is Bitcoin better than gold?")
    False
    """
    words = content_words(reason) - content_words(topic)
    shared = words & content_words(" ".join([*heard, flips]))
    return len(shared) >= 2 and len(shared) >= len(words) / 3


def still_holds(turns: Sequence[Said], me: str, flips: str, topic: str) -> bool:
    """Whether ``me`` still holds its brief's side: none of its turns named a reason for a
    change that names what another speaker said before it, or one of its own conditions
    (:func:`reason_heard`). Qwen2.5-Coder-1.5B gave "I agree with you" as a reason.

    >>> a = Said("schiff", "Peter Schiff", "Fixed supply.", "pro", None, ())
    >>> b = Said("saylor", "Michael Saylor", "Fine.", "con", "I agree with you", ())
    >>> still_holds([a, b], "saylor", "", "Is Bitcoin better than gold?")
    True
    >>> moved = Said("saylor", "Michael Saylor", "Fine.", "con", "Your point that the supply is fixed moved me", ())
    >>> still_holds([a, moved], "saylor", "", "Is Bitcoin better than gold?")
    False
    """
    for i, t in enumerate(turns):
        if t.persona_id == me and t.named_reason:
            heard = [o.text for o in turns[:i] if o.persona_id != me]
            if reason_heard(t.named_reason, heard, flips, topic):
                return False
    return True


def declared_positions(earlier: Sequence[Said], me: str, briefed: Mapping[str, Said] | None = None) -> dict[str, Said]:
    """Per claim id, where ``me`` stands on it: the position its ``briefed`` prompt gives it,
    else its first stance on the claim; replaced only by a later stance that named a reason
    for the change."""
    out: dict[str, Said] = dict(briefed or {})
    for s in earlier:
        if s.persona_id != me or s.stance not in ("pro", "con", "uncertain"):
            continue
        for key in s.addresses:
            if key not in out or (s.named_reason and s.stance != out[key].stance):
                out[key] = s
    return out


def role_problem(
    stance: str | None,
    named_reason: str | None,
    addresses: Sequence[str],
    declared: Mapping[str, Said],
    *,
    heard: bool = True,
    reason_is_heard: bool = True,
) -> str | None:
    """The position a turn contradicts without a named reason, restated; None when it holds.
    Leaving a briefed position takes a reason the persona heard (``reason_is_heard``,
    :func:`reason_heard`); before it has ``heard`` anyone else, nothing can have moved it
    (Qwen2.5-Coder-1.5B, told of the escape, opened Schiff with "Yes, Bitcoin is a better
    store of value" and a "reason" that argued the opposite).

    >>> d = {"c1": Said("saylor", "Michael Saylor", "Bitcoin's supply is fixed.", "pro", None, ("c1",))}
    >>> role_problem("con", None, ["c1"], d)
    'your stance "con" on [c1] contradicts your position (you declared "pro": "Bitcoin\\'s supply is fixed.") and names no reason for the change; keep your own position, or say in named_reason what argument changed your mind'
    >>> role_problem("con", "the 2022 drawdown", ["c1"], d) is None
    True
    >>> role_problem("pro", None, ["c1"], d) is None
    True
    >>> b = {"topic": Said("schiff", "Peter Schiff", 'Gold has no rival. (Your answer to "Is Bitcoin better?": no, confidence 0.95.)', "con", None, ("topic",), from_brief=True)}
    >>> print(role_problem("pro", "I changed my mind", ["topic"], b, heard=False))
    your stance "pro" on [topic] contradicts your position (your brief says where you stand: Gold has no rival. (Your answer to "Is Bitcoin better?": no, confidence 0.95.)); nobody else has spoken yet, so nothing can have changed your mind: keep your own position
    """
    if stance not in ("pro", "con"):
        return None
    for key in addresses:
        held = declared.get(key)
        if held is None or (held.stance, stance) not in _OPPOSED:
            continue
        if held.from_brief and not heard:
            why = "; nobody else has spoken yet, so nothing can have changed your mind: keep your own position"
        elif held.from_brief and named_reason and not reason_is_heard:
            why = (", and the reason you name is neither what another speaker said nor one of your conditions for "
                   "changing your mind: keep your own position, or name the argument of theirs that moved you")
        elif named_reason:
            continue
        else:
            why = " and names no reason for the change; keep your own position, or say in named_reason what argument changed your mind"
        words = " ".join(held.text.split())
        words = words if len(words) <= 320 else words[:317].rsplit(" ", 1)[0] + "…"
        where = f"your brief says where you stand: {words}" if held.from_brief else f'you declared "{held.stance}": "{words}"'
        return f'your stance "{stance}" on [{key}] contradicts your position ({where}){why}'
    return None


def words_field(reply: Any) -> str | None:
    """The name of a turn reply's words: its first text field that is not one of the shared turn fields."""
    for name in type(reply).model_fields:
        if name not in TurnReply.model_fields and isinstance(getattr(reply, name, None), str):
            return str(name)
    return None


def turn_words(reply: Any) -> str:
    """A turn reply's words (:func:`words_field`)."""
    name = words_field(reply)
    return str(getattr(reply, name)) if name is not None else ""


@dataclass
class TurnGuard:
    """The echo and role-confusion guards for one persona turn. Passed as the reply's
    validation context (:meth:`context`): the first reply that trips a guard is sent back
    for the backend's one repair; the engine then asks :meth:`verdict` of the final reply."""

    persona_id: str
    topic: str
    earlier: Sequence[Said]
    # the claims its stance answers whatever the reply lists: an opening's stance is its answer
    # to the debate question, and a blackboard post's to the round's claim, as their formats
    # ask, even when the reply names claims it addresses
    stance_on: tuple[str, ...] = ()
    # where the persona's own system prompt says it stands (:func:`briefed_positions`), and
    # what it says would change its mind (:func:`brief_flips`)
    briefed: Mapping[str, Said] = field(default_factory=dict)
    flips: str = ""
    # the engine's own request instructions and format (read with FORM_WORDS): a turn made of them copies the request
    form: str = ""
    fired: list[Finding] = field(default_factory=list)
    asked: bool = False
    # the role problem of a turn kept after its one repair (:func:`turn_outcome`): the engine
    # keeps the turn with this flag (``DialogueTurn.role_flag``), never drops it silently
    flagged: Finding | None = None

    def context(self) -> dict[str, Any]:
        return {"turn_guard": self}

    def check(self, text: str, stance: str | None, named_reason: str | None, addresses: Sequence[str]) -> Finding | None:
        problem = echo_problem(text, self.earlier, self.topic, self.persona_id, stance, self.form)
        if problem is not None:
            return Finding("echo", self.persona_id, problem, text)
        others = [s.text for s in self.earlier if s.persona_id != self.persona_id]
        declared = declared_positions(self.earlier, self.persona_id, self.briefed)
        grounded = named_reason is not None and reason_heard(named_reason, others, self.flips, self.topic)
        problem = role_problem(stance, named_reason, addresses, declared, heard=bool(others), reason_is_heard=grounded)
        if problem is not None:
            return Finding("role", self.persona_id, problem, text)
        return None

    def check_reply(self, reply: Any) -> Finding | None:
        stance = getattr(reply, "stance", None)
        reason = getattr(reply, "named_reason", None)
        addresses = list(self.stance_on) or [str(a) for a in getattr(reply, "addresses", None) or []]
        stance = stance_of(stance)
        reason = reason.strip() if isinstance(reason, str) and reason.strip().lower() not in ("", "null", "none") else None
        return self.check(turn_words(reply), stance, reason, addresses)

    def tidy(self, reply: Any) -> None:
        """Drop a label copied from the request at the start of the reply's words
        (:func:`form_label_dropped`), before any check and in the turn as kept."""
        name = words_field(reply)
        if name is not None:
            setattr(reply, name, form_label_dropped(getattr(reply, name), self.form))

    def on_validate(self, reply: Any) -> None:
        """Called by the reply's validator: raise the problem once, so the backend repairs."""
        self.tidy(reply)
        if self.asked:
            return
        found = self.check_reply(reply)
        if found is not None:
            self.asked = True
            self.fired.append(found)
            raise ValueError(found.problem)

    def verdict(self, reply: Any) -> Finding | None:
        """The final reply's problem (the turn is then skipped), recorded as a firing."""
        found = self.check_reply(reply)
        if found is not None and (not self.fired or self.fired[-1] != found):
            self.fired.append(found)
        return found


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def quotable_sentences(text: str) -> list[str]:
    """The sentences of ``text`` a side may quote: each of at least :data:`MIN_QUOTE_WORDS`
    words, as written (so each is :func:`quote_found` in ``text``); the whole text when none is.

    >>> quotable_sentences("Gold has been money for millennia!  Is Bitcoin?  It is not, yet.")
    ['Gold has been money for millennia!', 'It is not, yet.']
    >>> quotable_sentences("Never.")
    ['Never.']
    """
    return _sentences(text, MIN_QUOTE_WORDS) or ([text.strip()] if text.strip() else [])


POSITION_WORDS = 6  # a sentence offered as the one that shows a position: at least this many words


def position_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that can show a position: each of at least
    :data:`POSITION_WORDS` words; :func:`quotable_sentences` when none is. Offered whole sentences
    of any length, Qwen2.5-Coder-1.5B quoted each speaker's opener ("I disagree with you.",
    "I'm afraid you're incorrect, Peter.") as the words that showed the side.

    >>> position_sentences("I disagree with you. Gold's supply keeps growing every year.")
    ["Gold's supply keeps growing every year."]
    >>> position_sentences("I disagree with you.")
    ['I disagree with you.']
    """
    return _sentences(text, POSITION_WORDS) or quotable_sentences(text)


def _sentences(text: str, least: int) -> list[str]:
    parts = [p.strip() for p in _SENTENCE_END.split(text.strip())]
    return [p for p in parts if len(norm_words(p)) >= least]


@dataclass(frozen=True)
class Side:
    """One side of a card or dispute as a guard sees it: whose (as the reply named it, and
    resolved to a persona id) and the quote it gives."""

    ref: str
    persona_id: str | None
    quote: str
    key: str = ""  # the card or dispute it is a side of


@dataclass
class SideGuard:
    """The grounded-sides guard for one card or crystallization reply. ``sides`` reads the
    reply's sides; ``said`` holds each persona's turns the extractor was shown."""

    sides: Callable[[Any], list[Side]]
    said: Mapping[str, Sequence[str]]
    names: Mapping[str, str]
    # other problems of the reply to send back with the same one repair (a crystallization's
    # stances on a dispute it never declared); they are not firings of this guard
    more: Callable[[Any], list[str]] | None = None
    fired: list[Finding] = field(default_factory=list)
    asked: bool = False
    # the role problem of a turn kept after its one repair (:func:`turn_outcome`): the engine
    # keeps the turn with this flag (``DialogueTurn.role_flag``), never drops it silently
    flagged: Finding | None = None

    def context(self) -> dict[str, Any]:
        return {"side_guard": self}

    def problem(self, side: Side) -> str | None:
        if side.persona_id is None or side.persona_id not in self.said:
            return None  # an unknown name is the name reader's business, not this guard's
        who = self.names.get(side.persona_id, side.persona_id)
        if not side.quote.strip():
            return f"the side of {who} has no quote; copy a few of {who}'s own words from the transcript"
        if quote_found(side.quote, self.said[side.persona_id]):
            return None
        others = [p for p in self.said if p != side.persona_id and quote_found(side.quote, self.said[p])]
        if others:
            return f"the side of {who} quotes {self.names.get(others[0], others[0])}, not {who}; give {who}'s side in {who}'s own words"
        return f"the quote of {who}'s side is not in anything {who} said; copy a few of {who}'s own words exactly"

    def ungrounded(self, reply: Any) -> list[tuple[Side, str]]:
        return [(s, p) for s in self.sides(reply) if (p := self.problem(s)) is not None]

    def on_validate(self, reply: Any) -> None:
        if self.asked:
            return
        bad = self.ungrounded(reply)
        other = self.more(reply) if self.more is not None else []
        if bad or other:
            self.asked = True
            for s, p in bad:
                self.fired.append(Finding("sides", s.persona_id or "", p, s.quote, s.key))
            raise ValueError("; ".join([*(p for _, p in bad), *other]))

    def verdict(self, reply: Any) -> list[tuple[Side, str]]:
        """The final reply's ungrounded sides (the engine drops them), recorded as firings."""
        bad = self.ungrounded(reply)
        for s, p in bad:
            self.fired.append(Finding("sides", s.persona_id or "", p, s.quote, s.key))
        return bad


def guard_from(info_context: Any, key: str) -> Any:
    """The guard a validation context carries under ``key`` (None without one)."""
    return info_context.get(key) if isinstance(info_context, dict) else None


def check_sides(reply: Any, info_context: Any) -> None:
    """For a card or crystallization reply's validator: the :class:`SideGuard` the engine
    passed as the validation context sends a side whose quote is not its persona's own words
    back once (nothing without a guard)."""
    guard = guard_from(info_context, "side_guard")
    if guard is not None:
        guard.on_validate(reply)


@dataclass
class GuardTally:
    """A run's guard firings and the streak of persona turns kept out (in ``ctx.scratch``)."""

    fired: dict[str, int] = field(default_factory=lambda: dict.fromkeys(GUARDS, 0))
    streak: int = 0
    speakers: set[str] = field(default_factory=set)  # every persona that has taken a turn
    failed: set[str] = field(default_factory=set)  # the personas whose turns the streak holds

    def events(self, findings: Sequence[Finding], outcome: str, names: Mapping[str, str]) -> list[EngineError]:
        """One warning event per firing; ``outcome`` says what became of the text."""
        out = []
        for f in findings:
            self.fired[f.guard] = self.fired.get(f.guard, 0) + 1
            who = names.get(f.persona_id, f.persona_id)
            shown = " ".join(f.text.split())
            shown = shown if len(shown) <= 160 else shown[:157] + "…"
            out.append(EngineError(level="warning", purpose=f"guard_{f.guard}", error=f"{who}: {f.problem} ({outcome}): \"{shown}\""))
        return out

    def turn_done(self, persona_id: str, kept_out: Finding | None) -> None:
        """Count a persona turn; :class:`TooWeakToPlay` when guards kept out at least
        :data:`GIVE_UP_AFTER` turns in a row and, among them, a turn of every speaker.

        >>> t = GuardTally()
        >>> t.turn_done("a", None)
        >>> t.turn_done("b", None)
        >>> for _ in range(5):
        ...     t.turn_done("a", Finding("echo", "a", "a copy"))
        >>> t.streak  # one speaker failing alone never ends a debate
        5
        >>> t.turn_done("b", Finding("echo", "b", "a copy"))
        Traceback (most recent call last):
        ...
        crux_lab.engines.guards.TooWeakToPlay: debate ended early: every speaker's turns were kept out, 6 persona turns in a row (last: the echo guard: a copy); the model does not play its personas
        """
        self.speakers.add(persona_id)
        if kept_out is None:
            self.streak, self.failed = 0, set()
            return
        self.streak += 1
        self.failed.add(persona_id)
        if self.streak >= GIVE_UP_AFTER and self.failed >= self.speakers:
            raise TooWeakToPlay(
                f"debate ended early: every speaker's turns were kept out, {self.streak} persona turns in a row "
                f"(last: the {kept_out.guard} guard: {kept_out.problem}); the model does not play its personas"
            )


T = TypeVar("T")
# the event of the parallel turn started just before this one (set by in_order)
_BEFORE: ContextVar[asyncio.Event | None] = ContextVar("guard_turn_before", default=None)


async def in_order(awaitables: Sequence[Awaitable[T]]) -> list[T]:
    """``asyncio.gather`` for persona turns run in parallel, whose guard outcomes settle in the
    order the turns were started (:func:`my_turn`), not the order their replies came back: a
    guard's streak, and so whether a debate ends early, never depends on a server's timing
    (a cassette replays the recording's order).

    >>> async def turn(i, delay, seen):
    ...     await asyncio.sleep(delay)
    ...     await my_turn()
    ...     seen.append(i)
    >>> seen = []
    >>> _ = asyncio.run(in_order([turn(0, 0.02, seen), turn(1, 0.0, seen)]))
    >>> seen
    [0, 1]
    """
    done = [asyncio.Event() for _ in awaitables]

    async def run(i: int, aw: Awaitable[T]) -> T:
        _BEFORE.set(done[i - 1] if i else None)
        try:
            return await aw
        finally:  # set whatever happened, so a later turn never waits for ever
            done[i].set()

    return list(await asyncio.gather(*(run(i, a) for i, a in enumerate(awaitables))))


async def my_turn() -> None:
    """Wait until the parallel turns started before this one have settled (at once outside
    :func:`in_order`). Call it after the reply, before :func:`turn_outcome`."""
    before = _BEFORE.get()
    if before is not None:
        await before.wait()


def tally(scratch: dict[str, Any]) -> GuardTally:
    """The run's :class:`GuardTally` (created on first use)."""
    found = scratch.get("guards")
    if not isinstance(found, GuardTally):
        found = scratch["guards"] = GuardTally()
    return found


def _last_per_guard(findings: Sequence[Finding]) -> list[Finding]:
    """One finding per guard and persona (the last), so a guard counts once per text."""
    last: dict[tuple[str, str, str], Finding] = {}
    for f in findings:
        last[(f.guard, f.persona_id, f.key)] = f
    return list(last.values())


def turn_outcome(
    scratch: dict[str, Any], guard: TurnGuard, reply: Any | None, names: Mapping[str, str]
) -> tuple[Finding | None, list[EngineError]]:
    """After a persona turn's call: the final reply's problem (skip the turn when not None)
    and one warning event per guard that fired on it. ``reply`` is None when the call failed.
    Raises :class:`TooWeakToPlay` when guards have kept out too many turns in a row."""
    t = tally(scratch)
    final = guard.verdict(reply) if reply is not None else None
    if final is not None and final.guard == "role":  # kept, flagged: a side is never silently dropped
        guard.flagged, final = final, None
        outcome = "sent back once, still so: the turn was kept with a role flag"
    elif reply is None:
        outcome = "sent back once; the reply still failed and the turn was skipped"
    elif final is None:
        outcome = "sent back once; the repaired turn was kept"
    elif guard.asked:
        outcome = "sent back once, still so: the turn was skipped"
    else:
        outcome = "the turn was skipped"
    events = t.events(_last_per_guard(guard.fired), outcome, names)
    kept_out = final if final is not None else (guard.fired[-1] if reply is None and guard.fired else None)
    try:
        t.turn_done(guard.persona_id, kept_out)
    except TooWeakToPlay as exc:
        exc.events = events
        raise
    return final, events


def stop_if_too_weak(scratch: dict[str, Any]) -> None:
    """Raise the :class:`TooWeakToPlay` a parallel turn recorded (``scratch["guard_stop"]``)
    once the engine has yielded every turn's warnings."""
    stop = scratch.pop("guard_stop", None)
    if isinstance(stop, TooWeakToPlay):
        raise stop


def side_outcome(
    scratch: dict[str, Any], guard: SideGuard, reply: Any | None, names: Mapping[str, str]
) -> tuple[set[tuple[str, str]], list[EngineError]]:
    """After a card or crystallization call: the sides to drop, as (key, persona id), and one
    warning event per side the guard fired on (a side repaired into a good quote included)."""
    t = tally(scratch)
    bad = guard.verdict(reply) if reply is not None else []
    drop = {(s.key, s.persona_id) for s, _ in bad if s.persona_id is not None}
    findings = _last_per_guard(guard.fired)
    events = t.events([f for f in findings if (f.key, f.persona_id) not in drop], "sent back once; the repaired side was kept", names)
    events += t.events([f for f in findings if (f.key, f.persona_id) in drop], "the side was dropped", names)
    return drop, events


__all__ = [
    "ECHO_AT",
    "ECHO_MIN_WORDS",
    "ECHO_NEW_WORDS",
    "GIVE_UP_AFTER",
    "GUARDS",
    "Finding",
    "GuardTally",
    "Said",
    "Side",
    "SideGuard",
    "TooWeakToPlay",
    "TurnGuard",
    "check_sides",
    "containment",
    "declared_positions",
    "echo_problem",
    "repeats",
    "quote_found",
    "role_problem",
    "said_of",
    "side_outcome",
    "stop_if_too_weak",
    "tally",
    "turn_outcome",
]
