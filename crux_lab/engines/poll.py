"""The poll: every candidate crux put to each persona alone, and the pivot test.

A debate proposes cruxes; the personas decide who stands where. At the end of a run (the runner
calls :func:`run_poll` when the engine yields its final event, before the result is tidied and
logged), each candidate crux (a card's question, a crux's statement, a dcg dispute's question)
goes to every persona of the debate in a fresh request: the persona's own system prompt, the
same bytes its debate turns send (so a prompt cache written by the debate is read here), and
the question alone. No transcript, no other persona's words. The reply is a YES, NO or UNSURE,
a confidence and one sentence of reason in the persona's voice.

- The crux's sides become the poll's; the debate's sides and quotes stay as evidence
  (:class:`~crux_lab.models.CruxPoll`), and a persona whose answer is the opposite of the side
  the debate gave it is marked ``flipped``.
- A candidate every persona answers the same way (all YES or all NO) is no crux: it becomes
  common ground ("every persona answered YES when asked alone"). One the poll does not split
  otherwise (no YES against a NO) is dropped from the cruxes and kept in the run's poll summary.
- The pivot test: on a crux the poll splits, each persona on a side answers one more request,
  "Suppose it were settled that the answer is <the opposite of yours>. Would your answer to
  <the topic> change?" (YES, NO or PARTLY). The crux is *decisive* for a persona that says YES;
  decisive cruxes and cards are listed first.

At most two requests per persona per candidate. ``poll_max`` keeps the strongest candidates and
names how many were left with their debate sides. A reply that is neither YES, NO nor UNSURE
after the backend's one repair counts as UNSURE with the reply kept; a request that fails on a
server error leaves that candidate with its debate sides, marked unpolled, and the run goes on.
A debate with one persona is not polled.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, model_validator

from crux_lab.analysis.pivots import graph_pivots, pivot_agreement
from crux_lab.analysis.polled import decisive_line, unanimous_line
from crux_lab.engines.base import EngineContext, EngineParams, shaped
from crux_lab.llm.base import Hints, LLMError, LLMOutputError
from crux_lab.llm.purposes import Purpose
from crux_lab.models.domain import (
    CardPosition,
    CommonGround,
    Crux,
    CruxCard,
    CruxCardPosition,
    CruxPoll,
    CruxSide,
    PersonaPollAnswer,
    PollSummary,
    Side,
)
from crux_lab.models.events import CruxPolled, DebateEvent, EngineError, Status
from crux_lab.personas.loader import propositions_for
from crux_lab.personas.prompt import build_system_prompt

__all__ = [
    "answer_enum",
    "POLL_PROMPT",
    "ask_alone",
    "PIVOT_PROMPT",
    "PivotReply",
    "PollParams",
    "PollReply",
    "Candidate",
    "candidates",
    "decisive_line",
    "unanimous_line",
    "poll_request",
    "pivot_request",
    "persona_system",
    "run_poll",
]

POLL_MAX = 8


class PollParams(EngineParams):
    """The poll's parameters, shared by every engine that runs it."""

    poll: bool = Field(True, description="Put every candidate crux to each persona alone; its answers decide the sides.")
    poll_max: int = Field(POLL_MAX, ge=0, le=64, description="Candidates polled (the strongest first); the rest keep their debate sides, with a warning.")


# ---------------------------------------------------------------------------
# Replies
# ---------------------------------------------------------------------------

_ANSWER_WORD = re.compile(r"[A-Za-z]+")


def read_answer(text: str, allowed: Sequence[str]) -> str | None:
    """The answer a reply's field gives, when it is one of ``allowed`` (its first word, any
    case, punctuation ignored), else None.

    >>> read_answer(" yes.", ("YES", "NO", "UNSURE")), read_answer("Unsure", ("YES", "NO", "UNSURE"))
    ('YES', 'UNSURE')
    >>> read_answer("It depends", ("YES", "NO", "UNSURE")) is None
    True
    """
    m = _ANSWER_WORD.search(text or "")
    word = m.group(0).upper() if m else ""
    return word if word in allowed else None


class _OneRepair:
    """Sends an answer outside the allowed words back once (the backend's one repair); a second
    such answer validates, and the poll records it as UNSURE with the reply kept."""

    def __init__(self) -> None:
        self.sent_back = False


def _check_answer(answer: str, allowed: Sequence[str], info: ValidationInfo) -> None:
    guard = info.context.get("poll_answer") if isinstance(info.context, dict) else None
    if guard is not None and read_answer(answer, allowed) is None and not guard.sent_back:
        guard.sent_back = True
        raise ValueError(f'"answer" must be one of {", ".join(allowed)}; got {answer.strip()[:60]!r}')


def answer_enum(allowed: Sequence[str]) -> Any:
    """A schema shaper (for :func:`~crux_lab.engines.base.shaped`) that closes a reply's
    ``answer`` to the ``allowed`` words, as a server that enforces schemas makes a model write.

    >>> schema = {"properties": {"answer": {"type": "string"}}}
    >>> answer_enum(("YES", "NO"))(schema); schema["properties"]["answer"]["enum"]
    ['YES', 'NO']
    """

    def shape(schema: dict[str, Any]) -> None:
        schema["properties"]["answer"]["enum"] = list(allowed)

    return shape


class PollReply(BaseModel):
    """A persona's answer: HOLD (yes), REJECT (no) or UNSURE; YES and NO are read too."""

    answer: str = Field(description="HOLD (your answer is yes), REJECT (your answer is no) or UNSURE")
    reason: str = Field("", description="One sentence, in your own voice")
    confidence: float = Field(0.5, ge=0.0, le=1.0, description="How sure you are, 0 to 1")

    @model_validator(mode="after")
    def _answer(self, info: ValidationInfo) -> PollReply:
        _check_answer(self.answer, POLL_WORDS, info)
        return self

    @property
    def said(self) -> str | None:
        """YES, NO or UNSURE, or None for a word outside them.

        >>> PollReply(answer="hold").said, PollReply(answer="REJECT").said, PollReply(answer="no").said
        ('YES', 'NO', 'NO')
        """
        word = read_answer(self.answer, POLL_WORDS)
        return {"HOLD": "YES", "REJECT": "NO"}.get(word or "", word)


class PivotReply(BaseModel):
    answer: str = Field(description="YES, NO or PARTLY")
    reason: str = Field("", description="One sentence, in your own voice")

    @model_validator(mode="after")
    def _answer(self, info: ValidationInfo) -> PivotReply:
        _check_answer(self.answer, PIVOT_ANSWERS, info)
        return self


POLL_ANSWERS = ("YES", "NO", "UNSURE")
# The words a persona is asked to answer in. Put as a yes/no question, Qwen2.5-1.5B answered YES
# to every planted proposition of the dev scenario housing (24 of 24, the 9 its personas reject
# included); asked whether it holds or rejects the view, it answered 19 of 24 as its stance
# says, and 0.63 of the 126 answers on all six dev scenarios, half of them YES
# (benchmarks/poll_fidelity.py; benchmarks/README.md). YES and NO are read as well.
POLL_ENUM = ("HOLD", "REJECT", "UNSURE")
POLL_WORDS = (*POLL_ENUM, "YES", "NO")
PIVOT_ANSWERS = ("YES", "NO", "PARTLY")
# What a server that enforces schemas is shown: the answer from its closed list.
POLL_SCHEMA = shaped(PollReply, answer_enum(POLL_ENUM))
PIVOT_SCHEMA = shaped(PivotReply, answer_enum(PIVOT_ANSWERS))

POLL_PROMPT = """One question, put to you alone. Do you hold the view it asks about, or reject it? Answer as yourself, from your own views.

Question: {question}

Reply in JSON: "answer": HOLD (you hold it: your answer is yes) or REJECT (your answer is no), or UNSURE; "reason": one sentence, in your own voice; "confidence": how sure you are, 0 to 1."""

PIVOT_PROMPT = """One question, put to you alone. You answered {mine} to this question: {question}

Suppose it were settled that the answer is {other}. Would your answer to "{topic}" change?

Reply in JSON: "answer": YES, NO or PARTLY; "reason": one sentence, in your own voice."""


# ---------------------------------------------------------------------------
# Candidates
# ---------------------------------------------------------------------------


@dataclass
class Candidate:
    """One candidate crux: a card (with the cruxes that mirror it) or a crux, the question the
    personas are asked, and the side the debate gave each persona with its words there."""

    kind: Literal["card", "crux"]
    item_id: str
    question: str
    card: CruxCard | None = None
    cruxes: list[Crux] = field(default_factory=list)
    debate: dict[str, tuple[str, str]] = field(default_factory=dict)  # persona -> (YES|NO|NUANCED, words)
    order: int = 0
    # A crux worded as a speaker's stance ("I don't accept that X."): the claim X, which the
    # personas are asked and which the crux states once the poll has split it.
    claim: str = ""

    @property
    def split_in_debate(self) -> bool:
        sides = {s for s, _ in self.debate.values()}
        return {"YES", "NO"} <= sides

    def strength(self) -> tuple[int, float, int]:
        """Stronger first: a split the debate stated, then the crux's own score, then order."""
        score = max((c.score for c in self.cruxes if c.score is not None), default=0.0)
        return (0 if self.split_in_debate else 1, -score, self.order)


def as_question(text: str, names: Iterable[str] = ()) -> str:
    """A candidate's text as a yes/no question. A text that holds a question already is asked
    its first question alone (a small model's conflict often runs on into more questions or
    a comment: "Is X? If so, how serious is it?").

    >>> as_question("Rents fall when supply grows."), as_question("Do rents fall?")
    ('Is it true that rents fall when supply grows?', 'Do rents fall?')
    >>> as_question("Is every flat owed sunlight? If so, the cheque is unfair, which is not reasonable.")
    'Is every flat owed sunlight?'
    >>> as_question("Rents are high. Will new blocks lower them? If not, why not?")
    'Will new blocks lower them?'

    ``names``: words that are names (the topic's, :func:`names_in`), kept capitalised in front:

    >>> as_question("Thornmere's mains are old.", names_in("Should Thornmere raise its water bills?"))
    "Is it true that Thornmere's mains are old?"
    """
    text = " ".join(text.split()).strip()
    if "?" in text:
        return re.split(r"(?<=[.!;:])\s+", text[: text.index("?") + 1])[-1]
    body = text.rstrip(".!;:")
    return f"Is it true that {_lower_first(body, names)}?" if body else ""


_OPEN = re.compile(r"^(?:what|which|why|how|where|when|who|whom|whose|in what way|to what extent)\b", re.I)
_CONDITION = re.compile(r"^(?:if|when|once|given|assuming|suppose)\b[^,?]*,\s*", re.I)
OPEN_NOTE = "an open question: it has no yes and no no, so it was not put to the personas and is no crux"


def is_open(question: str) -> bool:
    """Whether a candidate's question is open (What, Which, Why, How ...), with no yes and no no
    to split the personas. Qwen's cards asked "Which of the two statements aligns more with ...?",
    and polled yes/no, the personas "split" on it.

    >>> is_open("Which of the two statements aligns more with economic principles?"), is_open("Is rent capped?")
    (True, False)

    A condition in front is read past (on dev, one of 43 Qwen candidates was "If the old mains
    are not expected to last 40 years, how will the river be protected?"):

    >>> is_open("If the mains fail, how will the river be protected?"), is_open("If the mains fail, will bills rise?")
    (True, False)
    """
    question = _CONDITION.sub("", question.strip(), count=1)
    return _OPEN.match(question) is not None


def names_in(text: str) -> frozenset[str]:
    """The capitalised words of ``text`` that do not begin a sentence: its names.

    >>> sorted(names_in("Should Fenwick Cross open a drug room? Ask the NHS."))
    ['Cross', 'Fenwick', 'NHS']
    """
    return frozenset(m.group(0) for m in re.finditer(r"(?<![.?!]\s)(?<!^)\b[A-Z][\w’'-]*", text.strip()))


def _lower_first(text: str, names: Iterable[str] = ()) -> str:
    """The text as the middle of a sentence: its first letter lower-cased, unless its first word
    looks like a name (capitalised again later in the text, two capitals as in an acronym, or "I").

    >>> _lower_first("Rents fall."), _lower_first("Bitcoin beats gold, and Bitcoin is money."), _lower_first("AI grows.")
    ('rents fall.', 'Bitcoin beats gold, and Bitcoin is money.', 'AI grows.')
    >>> _lower_first("NZ’s tax settings favour property.")
    'NZ’s tax settings favour property.'
    """
    first = text.split(" ", 1)[0].rstrip(",.;:").removesuffix("'s").removesuffix("’s")
    named = (first == "I" or first in set(names) or sum(c.isupper() for c in first) >= 2
             or re.search(rf"\s{re.escape(first)}\b", text) is not None)
    return text if named or not first else text[:1].lower() + text[1:]


# A speaker's stance around a claim: "I don't accept that X." rejects X; "I believe that X." holds it.
_STANCE_FRAME = re.compile(
    r"^(?:(?P<neg>i (?:don't|do not|cannot|can't) accept that|i disagree that|i reject (?:the (?:claim|idea|view) )?that|"
    r"i don't (?:believe|think) that|i do not (?:believe|think) that|it is not the case that)|"
    r"i (?:believe|think|hold|accept|agree) that)\s+", re.I)


def stated_claim(text: str) -> tuple[str, bool]:
    """The claim inside a sentence worded as a speaker's stance, and whether the stance rejects it.

    >>> stated_claim("I don't accept that companies should hold Bitcoin.")
    ('Companies should hold Bitcoin.', True)
    >>> stated_claim("I believe that gold is money."), stated_claim("Gold is money.")
    (('Gold is money.', False), ('Gold is money.', False))
    >>> stated_claim("I don't accept that Bitcoin is money.")
    ('Bitcoin is money.', True)
    """
    text = text.strip()
    m = _STANCE_FRAME.match(text)
    if m is None:
        return text, False
    rest = text[m.end():].strip()
    claim = rest if rest[:1].isupper() else rest[:1].upper() + rest[1:]
    return claim, m.group("neg") is not None


def _crux_claim(crux: Crux) -> tuple[str, bool]:
    """The claim a crux puts to the personas, and whether its sides stand on the claim's
    negation: a symmetric-difference crux ("A holds: X. B holds: Y.") asks its first side's
    claim; a crux worded as a speaker's stance asks the claim inside it."""
    if crux.source == "symmetric_difference":
        first = next((s.statement for s in crux.yes_side if s.statement.strip()), "")
        return stated_claim(first.split("; ")[0]) if first else ("", False)
    return stated_claim(crux.statement)


def candidates(cards: Sequence[CruxCard], cruxes: Sequence[Crux], topic: str = "") -> list[Candidate]:
    """Every candidate crux of a result: each card (the cruxes that mirror it go with it), then
    each crux that mirrors no card, in the result's order. The ``topic``'s names stay capitalised
    where a statement is turned into a question (on dev, 4 of 43 Qwen candidates began "Is it
    true that thornmere's ...")."""
    names = names_in(topic)
    out: list[Candidate] = []
    mirrored: set[str] = set()
    for card in cards:
        mirrors = [c for c in cruxes if c.source == "card" and (c.id == f"crux-{card.id}" or c.statement == card.question)]
        mirrored |= {c.id for c in mirrors}
        debate = {pid: (pos.position.value, pos.reasoning) for pid, pos in card.personas.items()}
        out.append(Candidate("card", card.id, as_question(card.question, names), card=card, cruxes=mirrors, debate=debate, order=len(out)))
    for crux in cruxes:
        if crux.id in mirrored or crux.source == "card" and any(c.card and c.card.question == crux.statement for c in out):
            continue
        claim, rejects = _crux_claim(crux)
        question = as_question(claim, names)
        if not question:
            continue
        sides: dict[str, tuple[str, str]] = {}
        for side, members in (("YES", crux.yes_side), ("NO", crux.no_side)):
            for s in members:  # a side of "I don't accept that X" is the other side of X
                sides.setdefault(s.persona_id, ({"YES": "NO", "NO": "YES"}[side] if rejects else side, s.statement))
        restated = crux.source != "symmetric_difference" and claim != crux.statement.strip()
        out.append(Candidate("crux", crux.id, question, cruxes=[crux], debate=sides, order=len(out), claim=claim if restated else ""))
    return out


# ---------------------------------------------------------------------------
# Requests
# ---------------------------------------------------------------------------


def persona_system(engine: object, ctx: EngineContext, persona_id: str) -> str:
    """The persona's system prompt as its debate turns send it: the engine's own
    ``persona_system(ctx, persona_id)`` when it has one, else the crux engines' (the deck's
    propositions quoted), which the worldview step and the one-call baselines share."""
    hook = getattr(engine, "persona_system", None)
    if callable(hook):
        return str(hook(ctx, persona_id))
    return build_system_prompt(ctx.personas[persona_id], propositions=propositions_for(ctx.persona_ids))


def poll_request(ctx: EngineContext, system: str, persona_id: str, question: str) -> Any:
    """The poll request: the persona's system prompt and the question alone."""
    return ctx.request(
        Purpose.poll, system, POLL_PROMPT.format(question=question), output_schema=POLL_SCHEMA,
        hints=Hints(speaker_id=persona_id, focus=question), cache_system=True,
        validation={"poll_answer": _OneRepair()},
    )


def pivot_request(ctx: EngineContext, system: str, persona_id: str, question: str, mine: str) -> Any:
    """The pivot test: would the persona's answer on the topic change were this settled against it?"""
    other = "NO" if mine == "YES" else "YES"
    topic = ctx.config.topic
    return ctx.request(
        Purpose.pivot, system, PIVOT_PROMPT.format(mine=mine, question=question, other=other, topic=topic),
        output_schema=PIVOT_SCHEMA, hints=Hints(speaker_id=persona_id, topic=topic, focus=question), cache_system=True,
        validation={"poll_answer": _OneRepair()},
    )


class _Failed(Exception):
    """A poll request that failed on the server (not an unreadable reply)."""


async def _ask(ctx: EngineContext, system: str, persona_id: str, question: str, debate: tuple[str, str] | None) -> PersonaPollAnswer:
    try:
        response = await ctx.call(poll_request(ctx, system, persona_id, question))
    except LLMOutputError as exc:  # unreadable after the one repair: UNSURE, the reply kept
        return _answer(persona_id, "UNSURE", 0.0, "", debate, raw=exc.detail[:500])
    except LLMError as exc:
        raise _Failed(str(exc)) from exc
    reply = response.parsed
    if not isinstance(reply, PollReply):
        return _answer(persona_id, "UNSURE", 0.0, "", debate, raw=response.text[:500])
    answer = reply.said
    raw = None if answer else response.text[:500]
    return _answer(persona_id, answer or "UNSURE", reply.confidence if answer else 0.0, reply.reason.strip(), debate, raw=raw)


async def ask_alone(ctx: EngineContext, persona_id: str, question: str) -> PersonaPollAnswer:
    """One persona asked one question alone, as the poll asks it: the crux engines' system prompt
    for that persona (its stances quoted) and the question. A failed request raises
    :class:`~crux_lab.llm.base.LLMError`; an unreadable reply is UNSURE with the reply kept."""
    try:
        return await _ask(ctx, persona_system(None, ctx, persona_id), persona_id, as_question(question), None)
    except _Failed as exc:
        raise LLMError(str(exc)) from exc


def _answer(pid: str, answer: str, confidence: float, reason: str, debate: tuple[str, str] | None, *, raw: str | None) -> PersonaPollAnswer:
    side, words = debate if debate is not None else (None, "")
    flipped = side in ("YES", "NO") and answer in ("YES", "NO") and side != answer
    return PersonaPollAnswer(
        persona_id=pid, answer=answer, confidence=confidence, reason=reason,
        debate_side=side, debate_statement=words, flipped=flipped, raw_reply=raw,
    )


async def _pivot(ctx: EngineContext, system: str, answer: PersonaPollAnswer, question: str) -> None:
    try:
        response = await ctx.call(pivot_request(ctx, system, answer.persona_id, question, answer.answer))
    except LLMOutputError as exc:
        answer.pivot_reason = f"(unreadable reply) {exc.detail[:200]}"
        return
    except LLMError as exc:
        raise _Failed(str(exc)) from exc
    reply = response.parsed
    pivot = read_answer(reply.answer, PIVOT_ANSWERS) if isinstance(reply, PivotReply) else None
    answer.pivot = "YES" if pivot == "YES" else "NO" if pivot == "NO" else "PARTLY" if pivot == "PARTLY" else None
    answer.pivot_reason = reply.reason.strip() if isinstance(reply, PivotReply) else ""
    if pivot is None:
        answer.pivot_reason = f"(unreadable reply) {response.text[:200]}"


# ---------------------------------------------------------------------------
# Applying the answers
# ---------------------------------------------------------------------------


def verdict(answers: Sequence[PersonaPollAnswer]) -> Literal["split", "unanimous", "unsplit"]:
    """What the answers make of a candidate.

    >>> a = lambda x: PersonaPollAnswer(persona_id=x[0], answer=x[1:])
    >>> verdict([a("aYES"), a("bNO")]), verdict([a("aYES"), a("bYES")]), verdict([a("aYES"), a("bUNSURE")])
    ('split', 'unanimous', 'unsplit')
    """
    said = {a.answer for a in answers}
    if {"YES", "NO"} <= said:
        return "split"
    if len(said) == 1 and said <= {"YES", "NO"}:
        return "unanimous"
    return "unsplit"


def _sides(poll: CruxPoll) -> tuple[list[CruxSide], list[CruxSide]]:
    """The poll's sides: each persona on its answer, with its words in the debate when the debate
    put it on the same side, else its reason asked alone."""
    out: dict[str, list[CruxSide]] = {"YES": [], "NO": []}
    for a in poll.answers:
        if a.answer in out:
            said = a.debate_statement if a.debate_side == a.answer and a.debate_statement.strip() else a.reason
            out[a.answer].append(CruxSide(persona_id=a.persona_id, statement=said))
    return out["YES"], out["NO"]


def _card_positions(card: CruxCard, poll: CruxPoll) -> dict[str, CruxCardPosition]:
    positions: dict[str, CruxCardPosition] = {}
    for a in poll.answers:
        new = CardPosition(a.answer) if a.answer in ("YES", "NO") else CardPosition.NUANCED
        old = card.personas.get(a.persona_id)
        if old is not None and old.position == new:
            positions[a.persona_id] = old
        else:
            positions[a.persona_id] = CruxCardPosition(position=new, reasoning=a.reason or (old.reasoning if old else ""))
    return positions


def _poll_record(cand: Candidate, answers: list[PersonaPollAnswer], status: str, note: str = "") -> CruxPoll:
    debate_yes = [CruxSide(persona_id=p, statement=w) for p, (s, w) in cand.debate.items() if s == "YES"]
    debate_no = [CruxSide(persona_id=p, statement=w) for p, (s, w) in cand.debate.items() if s == "NO"]
    decisive = [a.persona_id for a in answers if a.pivot == "YES"]
    not_decisive = [a.persona_id for a in answers if a.pivot in ("NO", "PARTLY")]
    return CruxPoll(
        status=status, question=cand.question, item_id=cand.item_id, answers=answers, decisive_for=decisive,
        not_decisive_for=not_decisive, debate_yes_side=debate_yes, debate_no_side=debate_no, note=note,
    )


# ---------------------------------------------------------------------------
# The step
# ---------------------------------------------------------------------------


async def run_poll(ctx: EngineContext, engine: object) -> AsyncIterator[DebateEvent]:
    """Poll the result's candidate cruxes, apply the answers to it, and yield what happened.
    The caller (the runner) has checked that the run's parameters turn the poll on."""
    result = ctx.result
    ids = ctx.persona_ids
    names = {pid: (ctx.personas[pid].name if pid in ctx.personas else pid) for pid in ids}
    params = ctx.params
    limit = int(getattr(params, "poll_max", POLL_MAX))
    found = candidates(result.crux_cards, result.cruxes, result.config.topic)
    summary = PollSummary(candidates=len(found))
    result.poll = summary
    if len(ids) < 2:
        summary.status, summary.note = "skipped", "one persona: there is no one to disagree with, so no candidate was put to a poll"
        yield Status(message=f"poll skipped: {summary.note}")
        return
    if not found:
        summary.note = "no candidate crux to poll"
        return
    ranked = sorted(found, key=Candidate.strength)
    chosen, rest = ranked[:limit], ranked[limit:]
    summary.over_limit = [c.question for c in rest]
    if rest:
        yield EngineError(
            level="warning", purpose=Purpose.poll,
            error=f"poll_max={limit}: {len(rest)} of {len(found)} candidate cruxes left unpolled, with their debate sides "
                  f"({'; '.join(c.question for c in rest[:3])}{' ...' if len(rest) > 3 else ''})",
        )
    yield Status(message=f"polling {len(chosen)} candidate crux(es): each persona answers alone")
    systems = {pid: persona_system(engine, ctx, pid) for pid in ids}
    polls: dict[str, CruxPoll] = {}
    for cand in chosen:
        if ctx.cancelled:
            break
        if is_open(cand.question):  # no yes and no no to ask: ruled out, not put to anyone
            polls[cand.item_id] = poll = _poll_record(cand, [], "unsplit", note=OPEN_NOTE)
            yield CruxPolled(item_id=cand.item_id, kind=cand.kind, poll=poll)
            continue
        try:
            answers = list(await asyncio.gather(*(_ask(ctx, systems[p], p, cand.question, cand.debate.get(p)) for p in ids)))
            status = verdict(answers)
            if status == "split":
                await asyncio.gather(*(_pivot(ctx, systems[a.persona_id], a, cand.question) for a in answers if a.answer in ("YES", "NO")))
        except _Failed as exc:
            poll = _poll_record(cand, [], "unpolled", note=f"a poll request failed, so the debate's sides stand: {exc}")
            summary.unpolled.append(cand.question)
            polls[cand.item_id] = poll
            yield EngineError(level="warning", purpose=Purpose.poll, error=f"left unpolled, with its debate sides: {cand.question} ({exc})")
            yield CruxPolled(item_id=cand.item_id, kind=cand.kind, poll=poll)
            continue
        poll = _poll_record(cand, answers, status)
        if status == "unanimous":
            poll.note = unanimous_line(poll)
        polls[cand.item_id] = poll
        summary.polled += 1
        summary.flips += len(poll.flips)
        for a in poll.answers:
            if a.raw_reply is not None:
                yield EngineError(level="warning", purpose=Purpose.poll,
                                  error=f"{names.get(a.persona_id, a.persona_id)} answered neither YES, NO nor UNSURE after one repair; recorded as UNSURE: {a.raw_reply[:120]}")
        yield CruxPolled(item_id=cand.item_id, kind=cand.kind, poll=poll)
    _apply(result, [c for c in chosen if c.item_id in polls], polls, ids, summary)
    _graph_agreement(result, summary)
    summary.decisive = sum(1 for p in polls.values() if p.status == "split" and p.decisive_for)
    flips = "; ".join(
        a.flip_line(names.get(a.persona_id, a.persona_id)) for p in polls.values() for a in p.flips
    )
    split, alike, unsplit = (sum(1 for p in polls.values() if p.status == s) for s in ("split", "unanimous", "unsplit"))
    summary.note = (
        f"{summary.polled} of {len(found)} candidates polled; {split} split, {alike} answered alike (common ground), "
        f"{unsplit} not split, {len(summary.unpolled)} unpolled, "
        f"{len(summary.over_limit)} over the limit; {summary.flips} side flip(s), {summary.decisive} decisive"
    )
    yield Status(message=f"poll: {summary.note}" + (f". {flips}" if flips else ""))
    if alike or unsplit:  # the engine's own description counted candidates the poll then ruled out
        result.regime_description = (result.regime_description + " " if result.regime_description else "") + after_poll_line(
            split, alike, unsplit)


def after_poll_line(split: int, alike: int, unsplit: int) -> str:
    """What the poll left of the candidates, for the end of the run's description.

    >>> after_poll_line(1, 2, 0)
    'Asked alone, the personas split 1 of the 3 candidates polled; 2 they answered alike are common ground, not cruxes.'
    >>> after_poll_line(0, 0, 2)
    'Asked alone, the personas split on none of the candidate cruxes; 2 without a YES against a NO were dropped.'
    """
    polled = split + alike + unsplit
    head = (f"Asked alone, the personas split {split} of the {polled} candidates polled" if split
            else "Asked alone, the personas split on none of the candidate cruxes")
    parts = ([f"{alike} they answered alike {'is' if alike == 1 else 'are'} common ground, not cruxes"] if alike else []) + (
        [f"{unsplit} without a YES against a NO {'was' if unsplit == 1 else 'were'} dropped"] if unsplit else [])
    return head + ("; " + "; ".join(parts) if parts else "") + "."


def _apply(result: Any, chosen: Sequence[Candidate], polls: Mapping[str, CruxPoll], ids: Sequence[str], summary: PollSummary) -> None:
    drop_cards: set[str] = set()
    drop_cruxes: set[str] = set()
    for cand in chosen:
        poll = polls[cand.item_id]
        if poll.status == "unpolled":
            for crux in cand.cruxes:
                crux.poll = poll
            if cand.card is not None:
                cand.card.poll = poll
            continue
        if poll.status == "split":
            yes, no = _sides(poll)
            for crux in cand.cruxes:
                crux.yes_side, crux.no_side, crux.poll = [s.model_copy() for s in yes], [s.model_copy() for s in no], poll
                crux.sides_known = None
                if cand.claim:  # the claim itself, not a speaker's stance on it
                    result.fault_lines = [cand.claim if f == crux.statement else f for f in result.fault_lines]
                    crux.statement = cand.claim
            if cand.card is not None:
                cand.card.personas = _card_positions(cand.card, poll)
                cand.card.poll = poll
                cand.card.resolved = False
            continue
        # not a crux: common ground when every persona gave the same YES or NO, else dropped
        if cand.card is not None:
            drop_cards.add(cand.card.id)
        drop_cruxes |= {c.id for c in cand.cruxes}
        summary.ruled_disputes.extend(c.dispute_id for c in cand.cruxes if c.dispute_id)
        if poll.status == "unanimous":
            side = Side(poll.answers[0].answer)
            if not any(g.statement == cand.question for g in result.common_ground):
                result.common_ground.append(CommonGround(
                    id=f"cg-poll-{cand.item_id}", statement=cand.question, source="poll", persona_ids=list(ids),
                    agreed_side=side, poll=poll,
                    dispute_id=next((c.dispute_id for c in cand.cruxes if c.dispute_id), None),
                    proposition_ids=list(dict.fromkeys(p for c in cand.cruxes for p in c.proposition_ids)),
                ))
        else:
            summary.not_split.append(poll)
    questions = {c.card.question for c in chosen if c.card is not None and c.card.id in drop_cards}
    questions |= {c.statement for c in result.cruxes if c.id in drop_cruxes}
    result.crux_cards = [c for c in result.crux_cards if c.id not in drop_cards]
    result.cruxes = [c for c in result.cruxes if c.id not in drop_cruxes]
    result.fault_lines = [f for f in result.fault_lines if f not in questions]

    def decisive_first(poll: CruxPoll | None) -> int:
        return 0 if poll is not None and poll.decisive_for else 1

    result.crux_cards = sorted(result.crux_cards, key=lambda c: decisive_first(c.poll))
    result.cruxes = sorted(result.cruxes, key=lambda c: decisive_first(c.poll))


def _graph_agreement(result: Any, summary: PollSummary) -> None:
    """Where the run keeps an argument graph: the share of (crux, persona) pairs where the graph's
    pivot and the persona's own pivot answer agree."""
    if not result.graph.arguments:
        return
    pivots = graph_pivots(result.graph)
    pairs = [
        (c.argument_ids, a.persona_id, a.pivot == "YES")
        for c in result.cruxes if c.poll is not None and c.poll.status == "split"
        for a in c.poll.answers if a.pivot is not None
    ]
    summary.graph_pivot_agreement, summary.graph_pivot_pairs = pivot_agreement(pairs, pivots)


def poll_on(params: object) -> bool:
    """Whether a run's parameters turn the poll on (engines without the poll's parameters: no)."""
    return bool(getattr(params, "poll", False))
