"""Consolidated persona prompts and the tiered debate history.

Three entry points, all pure (text in, text out, no I/O):

- :func:`build_system_prompt` — one system block per persona, at most ``SYSTEM_BUDGET``
  (2,200) tokens: Identity, How You Think, What Changes Your Mind, Where You Stand, Your Voice,
  Grounding, Debate Conduct. ``framing="third"`` gives the third-person (APR)
  framing ("Michael Saylor is known for ...") instead of "You are ...".
- :func:`build_history` — a :class:`HistoryContext` for one persona, with no transcript to
  continue: the claim to answer, the persona's own earlier points, older points as a summary,
  open contested claims and crux cards, and no other speaker's name.
- :func:`build_turn_message` — the per-turn user message, at most ``TURN_BUDGET`` (800)
  tokens: belief grounding, debate context, turn instruction, output format. It shrinks the
  history tier by tier (never the instruction) until the message fits.

Token counts use :func:`crux_lab.tokens.count_tokens`, the one counter the ledger uses too.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from crux_lab.models.domain import CruxCard, DialogueTurn
from crux_lab.personas.loader import PersonaError, propositions_for
from crux_lab.personas.models import Persona, Proposition
from crux_lab.tokens import count_tokens

Framing = Literal["second", "third"]

SYSTEM_BUDGET = 2200
TURN_BUDGET = 800
HISTORY_BUDGET = 450

# Per-section token caps of the system block. Grounding gets 320 rather than 200 because our
# anchors are paraphrase paragraphs, not tweets.
SECTION_CAPS = {
    "identity": 800,
    "thinking": 500,
    "flip": 200,
    "positions": 520,
    "voice": 300,
    "grounding": 320,
}

CONCESSION_RULE = (
    "Concede a point when the evidence or argument warrants it: you can and should grant what an "
    "opponent gets right, and say so plainly. Update a position only when you can name the "
    "specific claim or evidence that changed it, or when one of your flip conditions is met. "
    "Repetition, rhetorical force, politeness or being outnumbered are not reasons to update."
)

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_STYLE_PREFIX = re.compile(r"^\((style illustration|synthetic example)\)\s*", re.I)


# ---------------------------------------------------------------------------
# token budgeting helpers


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """Cut ``text`` to at most ``max_tokens``, at a sentence boundary when possible.

    >>> truncate_to_tokens("One. Two. Three.", 100)
    'One. Two. Three.'
    >>> truncate_to_tokens("Alpha beta. Gamma delta epsilon.", 3)
    'Alpha beta.'
    >>> count_tokens(truncate_to_tokens("word " * 50, 10)) <= 10
    True
    """
    if max_tokens <= 0:
        return ""
    if count_tokens(text) <= max_tokens:
        return text
    sentences = _SENTENCE.split(text.strip())
    kept: list[str] = []
    for s in sentences:
        candidate = " ".join([*kept, s])
        if count_tokens(candidate) > max_tokens:
            break
        kept.append(s)
    if kept:
        return " ".join(kept)
    # Not even one sentence fits: cut by words and mark the cut.
    words = text.split()
    lo, hi = 0, len(words)
    while lo < hi:  # largest prefix that fits with the ellipsis
        mid = (lo + hi + 1) // 2
        if count_tokens(" ".join(words[:mid]) + " …") <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return (" ".join(words[:lo]) + " …") if lo else ""


def _fit_lines(lines: Sequence[str], max_tokens: int) -> list[str]:
    """Longest prefix of ``lines`` whose joined text fits ``max_tokens``."""
    out: list[str] = []
    for line in lines:
        if count_tokens("\n".join([*out, line])) > max_tokens:
            break
        out.append(line)
    return out


# ---------------------------------------------------------------------------
# system prompt


@dataclass(frozen=True)
class _Voice:
    subject: str  # "You" / "Michael Saylor"
    possessive: str  # "Your" / "Michael Saylor's"
    verb_be: str  # "are" / "is"


def _voice(persona: Persona, framing: Framing) -> _Voice:
    if framing == "third":
        return _Voice(persona.name, f"{persona.name}'s", "is")
    return _Voice("You", "Your", "are")


# How a "Where You Stand" line gives a stance: first what the persona holds, in its own words
# (its reason), then its answer to the claim's question. Never the claim as a quoted sentence
# marked "Rejects": Qwen2.5-1.5B recited such a sentence, word for word, as its own view.
# The role guard and the one-call baselines read the answer back (:func:`read_stance_lines`).
ANSWER_WORDS = {"pro": "yes", "con": "no", "uncertain": "undecided"}
_ANSWER_STANCE = {word: stance for stance, word in ANSWER_WORDS.items()}
_STANCE_LINE = re.compile(
    r'^- (?P<reason>.*?) ?\((?:Your|.+?\'s) answer to "(?P<question>.+)": (?P<answer>yes|no|undecided), '
    r"confidence (?P<confidence>[0-9.]+)\.\)$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class StanceLine:
    """A "Where You Stand" line read back: the stance, the claim's question, the persona's own
    words for what it holds, and the line as the prompt shows it (without the bullet)."""

    stance: str
    question: str
    reason: str
    line: str


def stance_line(reason: str, question: str, stance: str, confidence: float, possessive: str = "Your") -> str:
    """One "Where You Stand" line.

    >>> line = stance_line("Gold has five thousand years behind it.", "Is Bitcoin better than gold?", "con", 0.9)
    >>> line
    '- Gold has five thousand years behind it. (Your answer to "Is Bitcoin better than gold?": no, confidence 0.90.)'
    >>> read_stance_lines(line)[0].stance
    'con'
    """
    held = " ".join(reason.split())
    return f'- {held + " " if held else ""}({possessive} answer to "{question}": {ANSWER_WORDS[stance]}, confidence {confidence:.2f}.)'


def read_stance_lines(text: str) -> list[StanceLine]:
    """Every "Where You Stand" line of a system prompt, in order.

    >>> third = stance_line("Rents follow wages.", "Do new flats cut rents?", "pro", 0.7, possessive="Ann Lee's")
    >>> [(s.stance, s.question, s.reason) for s in read_stance_lines("## Where Ann Lee Stands\\n" + third)]
    [('pro', 'Do new flats cut rents?', 'Rents follow wages.')]
    """
    return [
        StanceLine(_ANSWER_STANCE[m["answer"]], m["question"], m["reason"].strip(), m[0][2:])
        for m in _STANCE_LINE.finditer(text)
    ]


def _stance_line(persona: Persona, prop: Proposition | None, proposition_id: str, possessive: str) -> str | None:
    stance = persona.stance_on(proposition_id)
    if stance is None:
        return None
    if prop is None:  # no question to answer: what it holds, alone
        return f"- {stance.reason}" if stance.reason.strip() else None
    # a claim it holds, and has no words of its own for, is stated as its own
    reason = stance.reason if stance.reason.strip() or stance.stance != "pro" else prop.text
    return stance_line(reason, (prop.question or prop.text).strip(), stance.stance, stance.confidence, possessive)


def build_system_prompt(
    persona: Persona,
    *,
    framing: Framing = "second",
    propositions: Mapping[str, Proposition] | None = None,
    include_positions: bool = True,
    max_tokens: int = SYSTEM_BUDGET,
) -> str:
    """The persona's one consolidated system block (≤ ``max_tokens`` tokens).

    ``framing="second"`` addresses the model ("You are Michael Saylor"); ``"third"`` is the
    third-person (APR) framing ("The following describes Michael Saylor ..."), which tends to give
    more committed role-play for well-known people. ``propositions`` (id -> Proposition) lets
    "Where You Stand" quote each claim; when omitted they are looked up in the library's decks
    (:func:`crux_lab.personas.loader.propositions_for`), and failing that the stance reasons are
    listed alone. ``include_positions=False`` leaves the persona's deck positions out (engines
    that want positions to emerge only from the contract). A persona without a belief graph gets
    exactly the same contract-only prompt: belief grounding arrives per turn through
    :mod:`crux_lab.personas.retrieval`. Results are memoised on the persona's content, so
    calling this every turn costs a dictionary lookup.
    """
    if propositions is None:
        try:
            propositions = propositions_for([persona.id])
        except (PersonaError, OSError):
            propositions = {}
    key = (
        _persona_digest(persona),
        framing,
        include_positions,
        max_tokens,
        tuple(sorted((k, v.text) for k, v in propositions.items())),
    )
    cached = _SYSTEM_CACHE.get(key)
    if cached is None:
        cached = _build_system_prompt(persona, framing, propositions, include_positions, max_tokens)
        if len(_SYSTEM_CACHE) > 256:
            _SYSTEM_CACHE.clear()
        _SYSTEM_CACHE[key] = cached
    return cached


_SYSTEM_CACHE: dict[tuple[object, ...], str] = {}


def _persona_digest(persona: Persona) -> str:
    h = hashlib.sha256()
    for part in (persona.contract, persona.voice, persona.stances):
        h.update(part.model_dump_json().encode())
    return h.hexdigest()


def _build_system_prompt(
    persona: Persona,
    framing: Framing,
    propositions: Mapping[str, Proposition],
    include_positions: bool,
    max_tokens: int,
) -> str:
    c, v = persona.contract, persona.voice
    me = _voice(persona, framing)
    handle = f" ({c.handle})" if c.handle else ""
    real = c.kind == "real"
    if framing == "third":
        who = "a real public figure" if real else "a synthetic archetype (not a real person)"
        head = (
            f"The following describes {c.name}{handle}, {who}. In this debate you speak as {c.name} "
            f"would: in the first person, with {c.name}'s views, reasoning and voice."
        )
    else:
        head = f"You are {c.name}{handle}." + ("" if real else " You are a synthetic archetype, not a real person.")
    if real:
        head += (
            " The material below paraphrases publicly known positions; it is not a set of verbatim "
            "quotes. Never invent quotations or attribute exact words to anyone."
        )

    sections: list[tuple[str, str]] = []
    identity = " ".join([c.personality, f"Bias: {c.bias}", f"Stakes: {c.stakes}"])
    sections.append(("Identity", truncate_to_tokens(identity, SECTION_CAPS["identity"])))

    ev = c.evidence_policy
    thinking_parts = [c.epistemology, f"Time horizon: {c.time_horizon}"]
    if ev.accepts:
        thinking_parts.append("Evidence that counts: " + "; ".join(ev.accepts) + ".")
    if ev.rejects:
        thinking_parts.append("Evidence discounted: " + "; ".join(ev.rejects) + ".")
    if ev.weighting:
        thinking_parts.append(f"Weighting: {ev.weighting}")
    sections.append(("How You Think" if framing == "second" else f"How {c.name} Thinks",
                     truncate_to_tokens(" ".join(thinking_parts), SECTION_CAPS["thinking"])))

    flips = [c.flip_conditions]
    triggers = [t.description for s in persona.stances.stances for t in s.flip_conditions if t.kind == "evidence"]
    if triggers:
        flips.append("Concretely: " + "; ".join(dict.fromkeys(triggers)) + ".")
    sections.append((
        "What Changes Your Mind" if framing == "second" else f"What Changes {me.possessive} Mind",
        truncate_to_tokens(" ".join(flips), SECTION_CAPS["flip"]),
    ))

    if include_positions and persona.stances.stances:
        ordered = sorted(persona.stances.stances, key=lambda s: (s.stance == "uncertain", -s.confidence, s.proposition_id))
        lines = [
            ln for s in ordered
            if (ln := _stance_line(persona, propositions.get(s.proposition_id), s.proposition_id, me.possessive))
        ]
        lines = _fit_lines(lines, SECTION_CAPS["positions"])
        if lines:
            sections.append(("Where You Stand" if framing == "second" else f"Where {c.name} Stands", "\n".join(lines)))

    voice_lines: list[str] = []
    if v.speech_patterns:
        voice_lines.append("Speech patterns: " + "; ".join(v.speech_patterns) + ".")
    if v.rhetorical_fingerprint:
        voice_lines.append("Typical move sequence: " + " → ".join(v.rhetorical_fingerprint) + ".")
    if v.vocabulary:
        voice_lines.append("Characteristic vocabulary: " + ", ".join(v.vocabulary) + ".")
    voice_text = truncate_to_tokens("\n".join(voice_lines), SECTION_CAPS["voice"])
    examples = [f"- {_STYLE_PREFIX.sub('', e.text)}" for e in v.voice_examples[:3]]
    if examples:
        voice_text += "\nExamples of the register (style illustrations, not quotes):\n" + "\n".join(examples)
    if v.forbidden_phrases:
        voice_text += "\nNever say: " + "; ".join(f'"{p}"' for p in v.forbidden_phrases) + "."
    voice_text += (
        "\nLength follows the move: opening 3-5 sentences, direct reply 2-3, dismissal 1, key "
        "argument 4-6. Plain prose, no lists, no headings."
    )
    sections.append(("Your Voice" if framing == "second" else f"{me.possessive} Voice", voice_text))

    anchors = [f"- [{a.kind}] {a.text}" if a.kind == "synthetic" else f"- [{a.kind}; {a.source}] {a.text}"
               for a in c.anchor_excerpts[:5]]
    anchors = _fit_lines(anchors, SECTION_CAPS["grounding"])
    if anchors:
        sections.append(("Grounding", "\n".join(anchors)))

    sections.append(("Debate Conduct", CONCESSION_RULE))

    def render(parts: Sequence[tuple[str, str]]) -> str:
        return head + "\n\n" + "\n\n".join(f"## {title}\n{body.strip()}" for title, body in parts if body.strip())

    text = render(sections)
    # Over budget (a very verbose persona): shed the least essential material first.
    for drop in ("Grounding", "Where You Stand", "Where " + c.name + " Stands"):
        if count_tokens(text) <= max_tokens:
            break
        sections = [s for s in sections if s[0] != drop]
        text = render(sections)
    if count_tokens(text) > max_tokens:
        text = truncate_to_tokens(text, max_tokens - count_tokens(CONCESSION_RULE) - 8) + "\n\n## Debate Conduct\n" + CONCESSION_RULE
    return text


# ---------------------------------------------------------------------------
# tiered history
#
# A persona's turn request holds no transcript to continue. Shown a transcript, Qwen2.5-1.5B
# wrote its next line as whoever spoke last: 0.40-0.51 of its persona turns were echoes, and
# speakers narrated each other in the third person. So a turn request states the debate as the
# engine sees it: the one point to answer, as a claim; the persona's own earlier points, as its
# own; older points as a summary. No other speaker's name appears.

CLAIM_WORDS = 80  # words of another speaker's turn a request states as the claim to answer
POINT_WORDS = 30  # words of an earlier point (a first sentence) a request shows


@dataclass(frozen=True)
class RoundSummary:
    """A 1-2 sentence summary of a finished round (an engine's ``summarize`` call makes it)."""

    label: str
    summary: str


@dataclass(frozen=True)
class ContestedClaim:
    """An open (or resolved) disagreement, from disagreement detection or a crux card."""

    claim: str
    persona_ids: tuple[str, ...] = ()
    status: Literal["unresolved", "resolved"] = "unresolved"


def impersonal(text: str, names: Mapping[str, str], viewer: str | None) -> str:
    """``text`` with the speakers' names (and ids) replaced: the reader's by "you", the others'
    by "another speaker", so a request never names who said what.

    >>> impersonal("Peter Schiff's point is wrong: Ann is right.", {"schiff": "Peter Schiff", "ann": "Ann"}, "ann")
    "another speaker's point is wrong: you are right."
    >>> impersonal("The Small Builder argued it.", {"b": "The Small Builder (Brackwater)"}, "a")
    'another speaker argued it.'
    """
    for pid, name in sorted(names.items(), key=lambda kv: -len(kv[1])):
        mine = pid == viewer
        # the name as written, without its place in brackets ("The Small Builder (Brackwater)"), and the id
        for token in sorted({name, _BRACKETED.sub("", name).strip(), pid}, key=len, reverse=True):
            if len(token) <= 2:
                continue
            word = re.escape(token)
            text = re.sub(rf"(?<!\w){word}['’]s(?!\w)", "your" if mine else "another speaker's", text, flags=re.I)
            text = re.sub(rf"(?<!\w){word}(?!\w)", "you" if mine else "another speaker", text, flags=re.I)
    return _YOU_VERB.sub(lambda m: f"{m[1]} {_YOU_VERBS[m[2]]}", text)


_BRACKETED = re.compile(r"\s*\([^)]*\)\s*$")
_YOU_VERBS = {"is": "are", "was": "were", "has": "have", "does": "do"}
_YOU_VERB = re.compile(rf"\b([Yy]ou) ({'|'.join(_YOU_VERBS)})\b")


def claim_to_answer(text: str, names: Mapping[str, str] | None = None, viewer: str | None = None) -> str:
    """Another speaker's turn as the engine states it to the next speaker: one line, names
    replaced (:func:`impersonal`), at most :data:`CLAIM_WORDS` words.

    >>> claim_to_answer("Gold has held value  for 5,000 years.")
    'The claim to answer: Gold has held value for 5,000 years.'
    """
    words = " ".join(impersonal(text, names or {}, viewer).split()).split(" ")
    said = " ".join(words[:CLAIM_WORDS]) + ("…" if len(words) > CLAIM_WORDS else "")
    return f"The claim to answer: {said}"


def point(text: str, limit: int = POINT_WORDS) -> str:
    """An earlier point as a request lists it: its first sentence, at most ``limit`` words.

    >>> point("Rents follow wages here. Nothing else matters.")
    'Rents follow wages here.'
    >>> point("Sound money. Gold has been money for five thousand years.")  # a lead-in is no point
    'Gold has been money for five thousand years.'
    """
    sentences = _SENTENCE.split(" ".join(text.split())) if text.strip() else [""]
    first = next((x for x in sentences if len(x.split()) >= 4), sentences[0])
    words = first.split(" ")
    return " ".join(words[:limit]) + ("…" if len(words) > limit else "")


OWN_POINTS_HEAD = "Your earlier points (build on them; never repeat them):"
OTHER_POINTS_HEAD = "Points made against you earlier:"


OWN_POINTS = 3  # the viewer's own earlier points a turn request lists (the newest)


def speaker_view(
    viewer: str, turns: Sequence[DialogueTurn], names: Mapping[str, str], own: int = OWN_POINTS,
    answer: DialogueTurn | None = None,
) -> list[str]:
    """What a persona's turn request shows of ``turns`` (oldest first), with no transcript to
    continue: its own earlier points, as its own, and ``answer`` (by default the newest turn of
    another speaker) as the claim to answer, no speaker named (:func:`impersonal`).

    >>> t = [DialogueTurn(id="m0", turn_index=0, persona_id="a", dialogue="Gold holds value. Always.", phase="take"),
    ...      DialogueTurn(id="m1", turn_index=1, persona_id="b", dialogue="Ann is wrong: gold pays nothing.", phase="take")]
    >>> print("\\n".join(speaker_view("a", t, {"a": "Ann", "b": "Bo"})))
    Your earlier points (build on them; never repeat them):
    - Gold holds value.
    The claim to answer: you are wrong: gold pays nothing.
    """
    blocks = []
    mine = list(dict.fromkeys(point(t.dialogue) for t in turns if t.persona_id == viewer))[-own:] if own > 0 else []
    if mine:
        blocks.append(OWN_POINTS_HEAD + "\n" + "\n".join(f"- {m}" for m in mine))
    last = answer or next((t for t in reversed(turns) if t.persona_id != viewer), None)
    if last is not None:
        blocks.append(claim_to_answer(last.dialogue, names, viewer))
    return blocks


@dataclass
class HistoryContext:
    """What one persona's turn request shows of the debate so far, in tiers.

    Render with :meth:`render`; it drops the lowest-priority material first until the text
    fits: older points of others (or the round summaries), then the persona's own older points,
    then crux cards, then contested claims. The topic and the claim to answer always stay.
    """

    topic: str
    current_round: str | None = None
    contested: list[str] = field(default_factory=list)
    claim: str = ""  # "The claim to answer: ...", or empty when nobody else has spoken
    cards: list[str] = field(default_factory=list)
    own_claims: list[str] = field(default_factory=list)  # the persona's own points, oldest first
    summaries: list[str] = field(default_factory=list)  # older points of others, oldest first

    def _text(self) -> str:
        out = [f"Debate on: {self.topic}"]
        if self.current_round:
            out.append(f"Current round: {self.current_round}")
        if self.summaries:
            out.append(OTHER_POINTS_HEAD + "\n" + "\n".join(f"- {s}" for s in self.summaries))
        if self.contested:
            out.append("Open disagreements:\n" + "\n".join(f"- {s}" for s in self.contested))
        if self.cards:
            out.append("Crux cards so far:\n" + "\n".join(f"- {s}" for s in self.cards))
        if self.own_claims:
            out.append(OWN_POINTS_HEAD + "\n" + "\n".join(f"- {s}" for s in self.own_claims))
        if self.claim:
            out.append(self.claim)
        return "\n\n".join(out)

    def render(self, max_tokens: int = HISTORY_BUDGET) -> str:
        """The context as text within ``max_tokens`` (drops tiers' oldest items first)."""
        ctx = HistoryContext(self.topic, self.current_round, list(self.contested), self.claim,
                             list(self.cards), list(self.own_claims), list(self.summaries))
        text = ctx._text()
        while count_tokens(text) > max_tokens:
            if ctx.summaries:
                ctx.summaries.pop(0)
            elif ctx.own_claims:
                ctx.own_claims.pop(0)
            elif ctx.cards:
                ctx.cards.pop(0)
            elif ctx.contested:
                ctx.contested.pop()
            else:
                return truncate_to_tokens(text, max_tokens)
            text = ctx._text()
        return text


def card_line(card: CruxCard, names: Mapping[str, str] | None = None) -> str:
    """One-line summary of a crux card.

    >>> from crux_lab.models import CruxCard, CruxCardPosition
    >>> c = CruxCard(id="k1", question="Is adoption deterministic?", disagreement_type="premise",
    ...     diagnosis="d", personas={"a": CruxCardPosition(position="YES", reasoning="Network effects.")})
    >>> card_line(c)
    '[premise, open] Is adoption deterministic? a: YES (Network effects.)'
    """
    names = names or {}
    state = "resolved" if card.resolved else "open"
    sides = "; ".join(
        f"{names.get(pid, pid)}: {pos.position.value} ({point(pos.reasoning, 20)})" for pid, pos in card.personas.items()
    )
    return f"[{card.disagreement_type.value}, {state}] {card.question} {sides}".strip()


def build_history(
    persona_id: str,
    *,
    topic: str,
    turns: Sequence[DialogueTurn],
    names: Mapping[str, str] | None = None,
    round_summaries: Sequence[RoundSummary] = (),
    contested: Sequence[ContestedClaim] = (),
    cards: Sequence[CruxCard] = (),
    current_round: str | None = None,
    recent: int = 6,
) -> HistoryContext:
    """What one persona's turn request shows of the debate (``turns``, oldest first): no
    transcript to continue.

    - The claim to answer: the newest turn of another speaker, stated by the engine as a claim
      (:func:`claim_to_answer`).
    - Its own earlier points, as its own: the first sentence of each, the newest
      :data:`OWN_POINTS`.
    - Older points of others: the engine's ``round_summaries`` when it gave them, else the
      first sentence of each of the ``recent`` turns of others before the claim to answer.
    - Open disagreements and crux cards, their sides as "you" and "another speaker".

    No other speaker's name appears (:func:`impersonal`).
    """
    names = dict(names or {})
    others = [t for t in turns if t.persona_id != persona_id]
    last = others[-1] if others else None
    ctx = HistoryContext(topic=topic, current_round=current_round)
    if last is not None:
        ctx.claim = claim_to_answer(last.dialogue, names, persona_id)
    if round_summaries:
        ctx.summaries = [f"{r.label}: {impersonal(r.summary, names, persona_id)}" for r in round_summaries]
    else:
        earlier = others[:-1][-recent:] if recent > 0 else []
        ctx.summaries = list(dict.fromkeys(point(impersonal(t.dialogue, names, persona_id)) for t in earlier))

    def who(pid: str) -> str:
        return "you" if pid == persona_id else "another speaker"

    ctx.contested = [
        c.claim + (" (you are one side)" if persona_id in c.persona_ids else "")
        for c in contested if c.status == "unresolved"
    ]
    ctx.cards = [card_line(k, {pid: who(pid) for pid in k.personas}) for k in cards]
    ctx.own_claims = list(dict.fromkeys(point(t.dialogue) for t in turns if t.persona_id == persona_id))[-OWN_POINTS:]
    return ctx


# ---------------------------------------------------------------------------
# per-turn user message


def reanchor_line(persona: Persona, *, framing: Framing = "second", beliefs: int = 2) -> str:
    """Identity re-anchoring for the user message (every N turns: name + key beliefs).

    Uses the persona's ``beliefs`` most confident non-uncertain stance reasons.
    """
    held = sorted((s for s in persona.stances.stances if s.stance != "uncertain"), key=lambda s: (-s.confidence, s.proposition_id))
    reasons = "; ".join(s.reason.rstrip(".") for s in held[:beliefs])
    who = f"you are {persona.name}" if framing == "second" else f"you are speaking as {persona.name}"
    return f"Remember: {who}. Core commitments: {reasons}." if reasons else f"Remember: {who}."

DEFAULT_OUTPUT = 'Output ONLY JSON: {"utterance": "your response"}'


def build_turn_message(
    instruction: str,
    *,
    history: HistoryContext | str | None = None,
    grounding: str = "",
    reanchor: str = "",
    length: str = "2-4 sentences",
    output_format: str | None = DEFAULT_OUTPUT,
    max_tokens: int = TURN_BUDGET,
) -> str:
    """The per-turn user message (≤ ``max_tokens``).

    Order: belief grounding (from :func:`crux_lab.personas.retrieval.render_grounding`), then
    the debate context (``history``), then the turn instruction, the length hint and the output
    format. ``reanchor`` is the periodic identity re-anchoring line ("Remember: you
    hold X because Y"). The instruction and output format are never cut; the history shrinks
    tier by tier first, then the grounding.

    >>> msg = build_turn_message("Give your opening statement.", history="Debate on: money")
    >>> msg.startswith("Debate on: money") and msg.rstrip().endswith('"your response"}')
    True
    """
    tail_parts = [f"Turn: {instruction.strip()}"]
    if length:
        tail_parts.append(f"Length: {length}.")
    if output_format:
        tail_parts.append(output_format)
    tail = "\n".join(tail_parts)
    head = reanchor.strip()

    fixed = count_tokens("\n\n".join(p for p in (head, tail) if p))
    room = max(0, max_tokens - fixed - 8)
    ground = grounding.strip()
    if count_tokens(ground) > room // 2:
        ground = truncate_to_tokens(ground, room // 2)
    room_history = max(0, room - count_tokens(ground))
    if isinstance(history, HistoryContext):
        hist = history.render(room_history)
    else:
        hist = truncate_to_tokens((history or "").strip(), room_history)
    text = "\n\n".join(p for p in (ground, hist, head, tail) if p)
    if count_tokens(text) > max_tokens:  # an instruction alone over budget: cut it, keep format
        text = truncate_to_tokens(text, max_tokens)
    return text
