"""The crux-like items of a debate in one shape: crux cards, cruxes, DCG disputes.

Below :mod:`.metrics` and :mod:`.quality`, which both read them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from crux_lab.models.result import DebateResult

__all__ = ["CruxText", "as_debated", "crux_texts", "pivot_answers"]


@dataclass(frozen=True)
class CruxText:
    """One crux-like item of a debate, in a common shape (card, crux or dispute)."""

    kind: str  # "card" | "crux" | "dispute"
    item_id: str
    text: str
    disagreement_type: str | None
    proposition_ids: tuple[str, ...]
    yes: tuple[str, ...] = ()  # persona ids the engine puts on YES (empty: it states no sides)
    no: tuple[str, ...] = ()


def crux_texts(result: DebateResult, *, include_disputes: bool = True) -> list[CruxText]:
    """The debate's crux questions: crux cards, then cruxes not mirroring a card, then disputes,
    each with the sides its engine states: a card's YES and NO positions (NUANCED is on neither
    side), a crux's yes and no sides, a dispute's stances.

    Cruxes with ``source == "card"`` repeat a card and are skipped, and so are disputes the poll
    ruled out (``DebateResult.poll.ruled_disputes``); a crux's ``settling_question``
    is not used (it is the *test*, not the crux).
    """
    out: list[CruxText] = []
    dtype: str | None
    for card in result.crux_cards:
        dtype = card.disagreement_type.value
        yes = tuple(pid for pid, pos in card.personas.items() if pos.position.value == "YES")
        no = tuple(pid for pid, pos in card.personas.items() if pos.position.value == "NO")
        out.append(CruxText("card", card.id, card.question, dtype, tuple(card.proposition_ids), yes, no))
    for c in result.cruxes:
        if c.source == "card":
            continue
        dtype = c.disagreement_type.value if c.disagreement_type else None
        yes, no = _ids(s.persona_id for s in c.yes_side), _ids(s.persona_id for s in c.no_side)
        out.append(CruxText("crux", c.id, c.statement, dtype, tuple(c.proposition_ids), yes, no))
    if include_disputes:
        mirrored = {c.dispute_id for c in result.cruxes if c.dispute_id}
        # a dispute whose crux the poll ruled out (its personas, asked alone, did not split on it)
        mirrored |= set(result.poll.ruled_disputes) if result.poll is not None else set()
        for d in result.dcg.disputes:
            if d.id in mirrored:
                continue
            dtype = d.disagreement_type.value if d.disagreement_type else None
            pids = (d.proposition_id,) if d.proposition_id else ()
            latest = {st.speaker_id: st.side.value for st in result.dcg.stances if st.dispute_id == d.id}  # last stance wins
            yes = _ids(pid for pid, side in latest.items() if side == "YES")
            no = _ids(pid for pid, side in latest.items() if side == "NO")
            out.append(CruxText("dispute", d.id, d.question, dtype, pids, yes, no))
    return out


def as_debated(result: DebateResult) -> list[CruxText]:
    """The candidate cruxes as the debate itself stated them, before the poll put each to the
    personas alone: what :func:`crux_texts` gives, with a polled item's sides put back to the
    debate's, then every candidate the poll ruled out (answered alike, or not split, or an open
    question), under the question it was asked, with the debate's sides. This is what the run
    would have shown with ``poll=false``, on the same debate; without a poll it is
    :func:`crux_texts`.
    """
    if result.poll is None or result.poll.status != "done":
        return crux_texts(result)
    polls = {c.id: c.poll for c in result.crux_cards if c.poll is not None}
    polls |= {c.id: c.poll for c in result.cruxes if c.poll is not None}
    out = []
    for t in crux_texts(result):
        poll = polls.get(t.item_id)
        if poll is not None and poll.status != "unpolled":
            t = replace(t, yes=_ids(s.persona_id for s in poll.debate_yes_side),
                        no=_ids(s.persona_id for s in poll.debate_no_side))
        out.append(t)
    ruled = [g.poll for g in result.common_ground if g.source == "poll" and g.poll is not None]
    for poll in [*ruled, *result.poll.not_split]:
        out.append(CruxText("crux", poll.item_id, poll.question, None, (),
                            _ids(s.persona_id for s in poll.debate_yes_side),
                            _ids(s.persona_id for s in poll.debate_no_side)))
    return out


def pivot_answers(result: DebateResult) -> dict[str, tuple[tuple[str, str], ...]]:
    """Per polled card or crux id, each persona's answer to the pivot test, in poll order:
    ``(persona id, "YES" | "NO" | "PARTLY")``; personas the test did not ask are left out."""
    polls = [(c.id, c.poll) for c in result.crux_cards] + [(c.id, c.poll) for c in result.cruxes]
    out: dict[str, tuple[tuple[str, str], ...]] = {}
    for item_id, poll in polls:
        answers = tuple((a.persona_id, a.pivot) for a in poll.answers if a.pivot is not None) if poll else ()
        if answers:
            out[item_id] = answers
    return out


def _ids(ids: Iterable[str]) -> tuple[str, ...]:
    """Persona ids in order, each once."""
    return tuple(dict.fromkeys(ids))
