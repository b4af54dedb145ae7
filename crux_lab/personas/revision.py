"""Belief revision, the practical kind.

No AGM, no Bayesian propagation: each persona keeps two proposition lists,
``claims_accepted`` and ``claims_rejected``, updated after crux cards, plus a position history.
Every change of stance is recorded with the reason given for it; a change made *without a
named reason* (no specific claim or evidence, only "good point", "fair enough", ...) is flagged,
which is how sycophantic drift becomes visible and countable.

Everything here is pure: functions take a :class:`BeliefState` and return a new one.

A claim key is a proposition id when one is known (``crypto.p2``), otherwise the text of the
claim (a crux card's question). A card position ``YES`` accepts the card's propositions (card
questions are the propositions' yes/no questions: YES = pro), ``NO`` rejects them and
``NUANCED`` leaves them undecided.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from crux_lab.models.domain import CardPosition, Concession, ConcessionKind, CruxCard, DialogueTurn
from crux_lab.personas.models import Persona

Stance = Literal["pro", "con", "uncertain"]
Source = Literal["initial", "turn", "card", "concession"]

# Phrases that carry no reason of their own (rhetorical force, politeness and being outnumbered
# are not reasons to change a position).
_GENERIC = re.compile(
    r"\b(that'?s a (great|good|fair|valid) point|good point|great point|fair point|fair enough|you('?re| are) right|"
    r"i (can )?see (where|what) you|i understand (your|the) (perspective|point)|i agree( with you)?|"
    r"you make a (good|great|strong|fair) (point|case)|well said|you('?ve| have) convinced me|"
    r"i stand corrected|point taken|i concede)\b",
    re.IGNORECASE,
)
_MARKERS = re.compile(
    r"\b(because|since|given|data|evidence|shows?|showed|study|studies|record|measured|if|unless|"
    r"example|case of|fell|rose|percent|\d)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")
_STOP = frozenset(["the", "a", "an", "of", "to", "in", "on", "and", "or", "is", "are", "be", "for", "with", "that", "this", "it", "as", "by", "at", "from", "i", "you", "we", "they"])


def is_named_reason(text: str | None) -> bool:
    """Does ``text`` name a specific claim or piece of evidence (not just social agreement)?

    >>> is_named_reason("That's a great point, I agree.")
    False
    >>> is_named_reason("The March 2020 data show Bitcoin fell twice as far as gold, so I revise.")
    True
    >>> is_named_reason(None)
    False
    """
    if not text:
        return False
    rest = _GENERIC.sub(" ", text)
    content = [w for w in _WORD.findall(rest) if w.lower() not in _STOP]
    return len(content) >= 5 and bool(_MARKERS.search(rest))


@dataclass(frozen=True)
class PositionRecord:
    """One observation of a persona's stance on a claim."""

    claim: str
    stance: Stance
    source: Source
    turn_index: int | None = None
    reason: str | None = None
    ref: str | None = None  # turn id, card id, ...


@dataclass(frozen=True)
class StanceChange:
    """A change of stance between two consecutive records of the same claim."""

    persona_id: str
    claim: str
    before: Stance
    after: Stance
    source: Source
    turn_index: int | None
    reason: str | None
    named_reason: bool
    ref: str | None = None
    flip_condition: str | None = None  # id of the persona's FlipTrigger the reason satisfies

    @property
    def flagged(self) -> bool:
        """Changed without naming a reason (the drift that position tracking makes detectable)."""
        return not self.named_reason


@dataclass(frozen=True)
class BeliefState:
    persona_id: str
    claims_accepted: frozenset[str] = frozenset()
    claims_rejected: frozenset[str] = frozenset()
    history: tuple[PositionRecord, ...] = ()
    changes: tuple[StanceChange, ...] = field(default=())
    # claim -> ((trigger id, keywords), ...): the persona's machine-checkable flip conditions
    flip_conditions: Mapping[str, tuple[tuple[str, tuple[str, ...]], ...]] = field(default_factory=dict)

    def stance(self, claim: str) -> Stance | None:
        """Current stance on ``claim`` (the latest record), or None if never recorded."""
        for rec in reversed(self.history):
            if rec.claim == claim:
                return rec.stance
        return None

    @property
    def unexplained_changes(self) -> list[StanceChange]:
        return [c for c in self.changes if c.flagged]


def initial_state(persona: Persona) -> BeliefState:
    """State from the persona's stances: pro -> accepted, con -> rejected."""
    flips = {
        s.proposition_id: tuple((t.id, tuple(k.lower() for k in t.keywords)) for t in s.flip_conditions if t.keywords)
        for s in persona.stances.stances
    }
    state = BeliefState(persona_id=persona.id, flip_conditions=flips)
    for s in persona.stances.stances:
        state = _record(state, PositionRecord(s.proposition_id, s.stance, "initial", reason=s.reason))
    return state


def _lists(accepted: frozenset[str], rejected: frozenset[str], claim: str, stance: Stance) -> tuple[frozenset[str], frozenset[str]]:
    accepted, rejected = accepted - {claim}, rejected - {claim}
    if stance == "pro":
        accepted |= {claim}
    elif stance == "con":
        rejected |= {claim}
    return accepted, rejected


def _satisfied_flip(state: BeliefState, claim: str, reason: str | None) -> str | None:
    """Id of a flip condition whose keywords all appear in ``reason`` (a met flip condition is one
    of the two legitimate reasons to update; a specific challenge to a premise is the other)."""
    text = (reason or "").lower()
    for trigger_id, keywords in state.flip_conditions.get(claim, ()):
        if keywords and all(k in text for k in keywords):
            return trigger_id
    return None


def _record(state: BeliefState, rec: PositionRecord) -> BeliefState:
    before = state.stance(rec.claim)
    changes = state.changes
    if before is not None and before != rec.stance:
        flip = _satisfied_flip(state, rec.claim, rec.reason)
        changes = (*changes, StanceChange(
            persona_id=state.persona_id, claim=rec.claim, before=before, after=rec.stance, source=rec.source,
            turn_index=rec.turn_index, reason=rec.reason,
            named_reason=flip is not None or is_named_reason(rec.reason), ref=rec.ref, flip_condition=flip,
        ))
    accepted, rejected = _lists(state.claims_accepted, state.claims_rejected, rec.claim, rec.stance)
    return replace(state, claims_accepted=accepted, claims_rejected=rejected, history=(*state.history, rec), changes=changes)


def record_turn(state: BeliefState, turn: DialogueTurn, *, reason: str | None = None) -> BeliefState:
    """Record the stance a turn takes (``turn.stance`` on each of ``turn.proposition_ids``).

    ``reason`` is the reason the engine extracted for an update; without one, the turn's own
    text is judged (a CONCEDE turn that only says "good point" is flagged).
    """
    if turn.persona_id != state.persona_id or turn.stance is None:
        return state
    for pid in turn.proposition_ids:
        state = _record(state, PositionRecord(pid, turn.stance, "turn", turn.turn_index, reason or turn.dialogue, turn.id))
    return state


_CARD_STANCE: dict[CardPosition, Stance] = {CardPosition.YES: "pro", CardPosition.NO: "con", CardPosition.NUANCED: "uncertain"}


def apply_card(state: BeliefState, card: CruxCard) -> BeliefState:
    """Update the lists from a crux card's position for this persona (no-op if absent)."""
    pos = card.personas.get(state.persona_id)
    if pos is None:
        return state
    stance = _CARD_STANCE[CardPosition(pos.position)]
    claims = card.proposition_ids or [card.question]
    for claim in claims:
        state = _record(state, PositionRecord(claim, stance, "card", None, pos.reasoning, card.id))
    return state


def apply_concession(state: BeliefState, concession: Concession) -> BeliefState:
    """Record a concession: a full one moves the claim to ``uncertain`` (the persona no longer
    holds its stance); partial and scope concessions keep the stance (they narrow it) but enter
    the history with their reason."""
    if concession.persona_id != state.persona_id:
        return state
    claim = concession.proposition_id or concession.conceded_claim
    current = state.stance(claim) or "uncertain"
    after: Stance = "uncertain" if concession.type == ConcessionKind.full else current
    return _record(state, PositionRecord(claim, after, "concession", concession.turn_index, concession.reason, None))


def track(
    personas: Mapping[str, Persona],
    *,
    turns: Sequence[DialogueTurn] = (),
    cards: Iterable[CruxCard] = (),
    concessions: Iterable[Concession] = (),
    reasons: Mapping[str, str] | None = None,
) -> dict[str, BeliefState]:
    """Replay a debate into one :class:`BeliefState` per persona.

    Turns and concessions are applied in turn order; cards after all turns (they summarise a
    finished crux room). ``reasons`` maps a turn id to an extracted update reason.
    """
    reasons = reasons or {}
    states = {pid: initial_state(p) for pid, p in personas.items()}
    events: list[tuple[int, int, DialogueTurn | Concession]] = [(t.turn_index, 0, t) for t in turns]
    events += [(c.turn_index, 1, c) for c in concessions]
    for _, _, ev in sorted(events, key=lambda e: (e[0], e[1])):
        if isinstance(ev, DialogueTurn):
            if ev.persona_id in states:
                states[ev.persona_id] = record_turn(states[ev.persona_id], ev, reason=reasons.get(ev.id))
        elif ev.persona_id in states:
            states[ev.persona_id] = apply_concession(states[ev.persona_id], ev)
    for card in cards:
        for pid in list(states):
            states[pid] = apply_card(states[pid], card)
    return states
