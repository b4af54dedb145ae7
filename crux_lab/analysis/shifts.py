"""Position shifts from opening to closing, and the position-shift timeline.

Inputs are plain observations: every stance a persona expressed on a proposition, in turn
order, with the crux room it was said in (if any) and the reason it named (if any). For each
persona and proposition the *opening* stance is the first one expressed and the *closing*
stance the last one. A proposition shift is a change between the two. Each shift is attributed
to the crux rooms that preceded it: rooms the persona took part in, on that proposition, that
began at or before the turn where the stance first changed.

The text of the opening and closing statements is also compared by embedding distance
(``1 - cosine`` of all-MiniLM-L6-v2 vectors). That distance measures how far the *content*
moved, not stance: measured on this model, a negated restatement of a claim is 0.17 away from
it, the same as a paraphrase (0.17), while a closing about a different claim is 0.55 away and
opposite conclusions with different reasons 0.46. So it is reported next to the stance
changes and used to call a shift only when a persona expressed no stance at all (a backend
that fills neither turn metadata nor the reply's ``stance`` field); then a distance above
:data:`TEXT_SHIFT_THRESHOLD` counts as a shift of position.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from crux_lab.models.domain import DialogueTurn, PositionShift, PropositionShift

StanceLit = Literal["pro", "con", "uncertain"]

# Between a paraphrase (0.17) and a closing that argues a different claim (0.46-0.55); see the
# module docstring. Used only when a persona expressed no stance at all.
TEXT_SHIFT_THRESHOLD = 0.35


class Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class StanceObservation:
    persona_id: str
    proposition_id: str
    stance: StanceLit
    turn_index: int
    room_id: str | None = None
    named_reason: str | None = None


@dataclass(frozen=True)
class RoomSpan:
    room_id: str
    personas: tuple[str, ...]
    start_index: int
    end_index: int
    proposition_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class TimelinePoint:
    """One point of the shift timeline: a stance, and whether it differs from the previous one."""

    persona_id: str
    proposition_id: str
    turn_index: int
    stance: StanceLit
    changed: bool
    room_id: str | None
    named_reason: str | None


def shift_timeline(observations: Iterable[StanceObservation]) -> list[TimelinePoint]:
    """Every stance in turn order, marking the points where a persona's stance on a proposition
    changed.

    >>> obs = [StanceObservation("a", "p", "pro", 0), StanceObservation("a", "p", "pro", 3),
    ...        StanceObservation("a", "p", "uncertain", 7, room_id="r1")]
    >>> [(t.turn_index, t.changed) for t in shift_timeline(obs)]
    [(0, False), (3, False), (7, True)]
    """
    last: dict[tuple[str, str], StanceLit] = {}
    out = []
    for o in sorted(observations, key=lambda o: o.turn_index):
        key = (o.persona_id, o.proposition_id)
        changed = key in last and last[key] != o.stance
        last[key] = o.stance
        out.append(
            TimelinePoint(
                o.persona_id,
                o.proposition_id,
                o.turn_index,
                o.stance,
                changed,
                o.room_id,
                o.named_reason,
            )
        )
    return out


def opening_closing(
    observations: Iterable[StanceObservation], persona_id: str
) -> tuple[dict[str, StanceLit], dict[str, StanceLit]]:
    """First and last stance per proposition of one persona.

    >>> obs = [StanceObservation("a", "p", "pro", 0), StanceObservation("a", "p", "con", 5)]
    >>> opening_closing(obs, "a")
    ({'p': 'pro'}, {'p': 'con'})
    """
    first: dict[str, StanceLit] = {}
    last: dict[str, StanceLit] = {}
    for o in sorted(observations, key=lambda o: o.turn_index):
        if o.persona_id != persona_id:
            continue
        first.setdefault(o.proposition_id, o.stance)
        last[o.proposition_id] = o.stance
    return first, last


def attribute(
    persona_id: str, proposition_id: str, change_index: int, rooms: Sequence[RoomSpan]
) -> list[str]:
    """Rooms that preceded a change: the persona was in them, they addressed the proposition
    (or carry no proposition metadata), and they began at or before the change.

    >>> attribute("a", "p", 9, [RoomSpan("r1", ("a", "b"), 4, 12, ("p",)), RoomSpan("r2", ("a", "c"), 2, 3, ("q",))])
    ['r1']
    """
    return [
        r.room_id
        for r in rooms
        if persona_id in r.personas
        and r.start_index <= change_index
        and (not r.proposition_ids or proposition_id in r.proposition_ids)
    ]


def embedding_distances(
    opening: Mapping[str, str], closing: Mapping[str, str], encoder: Encoder
) -> dict[str, float]:
    """``1 - cosine`` between each persona's opening and closing statement."""
    ids = [pid for pid in opening if pid in closing]
    if not ids:
        return {}
    vecs = np.asarray(
        encoder.encode([opening[p] for p in ids] + [closing[p] for p in ids]), dtype=np.float64
    )
    n = len(ids)
    out = {}
    for i, pid in enumerate(ids):
        a, b = vecs[i], vecs[n + i]
        cos = float(a @ b / ((np.linalg.norm(a) * np.linalg.norm(b)) or 1.0))
        out[pid] = round(1.0 - cos, 6)
    return out


def _shift_summary(
    label: str, changes: Sequence[PropositionShift], rooms_hit: Sequence[str], reasoned: bool,
    claims: Mapping[str, str], room_names: Mapping[str, str],
) -> str:
    """One sentence on a persona's stance changes, in words: each claim by its text, in curly
    quotes."""
    moves = "; ".join(
        (f"“{claims[c.proposition_id].strip().rstrip('.')}” " if claims.get(c.proposition_id) else "")
        + f"({c.before} -> {c.after})"
        for c in changes
    )
    shown = [f"“{room_names[r]}”" for r in rooms_hit if room_names.get(r)]
    if shown:
        where = f" in the crux room{'s' if len(shown) > 1 else ''} on {', '.join(shown)}"
    elif rooms_hit:
        where = " in a crux room"
    else:
        where = " outside any crux room"
    why = "with a named reason" if reasoned else "without a named reason"
    return f"{label} shifted on {moves}{where}, {why}." if moves.startswith("“") else f"{label} shifted {moves}{where}, {why}."


def detect_shifts(
    persona_ids: Sequence[str],
    observations: Sequence[StanceObservation],
    rooms: Sequence[RoomSpan] = (),
    *,
    opening: Mapping[str, str] | None = None,
    closing: Mapping[str, str] | None = None,
    encoder: Encoder | None = None,
    names: Mapping[str, str] | None = None,
    claims: Mapping[str, str] | None = None,
    room_names: Mapping[str, str] | None = None,
    text_threshold: float = TEXT_SHIFT_THRESHOLD,
) -> list[PositionShift]:
    """Position shift per persona, opening vs closing. The summary names personas, claims and
    rooms by ``names``, ``claims`` (claim id -> text) and ``room_names`` (room id -> its
    question), never by internal id; a claim or room without a text is left out of it.

    >>> obs = [StanceObservation("a", "p", "pro", 0), StanceObservation("b", "p", "con", 1),
    ...        StanceObservation("a", "p", "uncertain", 6, "r1", "you met my condition")]
    >>> s = detect_shifts(["a", "b"], obs, [RoomSpan("r1", ("a", "b"), 4, 9, ("p",))])
    >>> [(x.persona_id, x.shifted, x.attributed_rooms, x.named_reason) for x in s]
    [('a', True, ['r1'], 'you met my condition'), ('b', False, [], None)]
    >>> detect_shifts(["a"], obs, [RoomSpan("r1", ("a", "b"), 4, 9, ("p",))], names={"a": "Ann"},
    ...               claims={"p": "Rents fall."}, room_names={"r1": "Do rents fall?"})[0].summary
    'Ann shifted on “Rents fall” (pro -> uncertain) in the crux room on “Do rents fall?”, with a named reason.'
    """
    distances = (
        embedding_distances(opening or {}, closing or {}, encoder)
        if encoder and opening and closing
        else {}
    )
    timeline = shift_timeline(observations)
    out = []
    for pid in persona_ids:
        before, after = opening_closing(observations, pid)
        changes: list[PropositionShift] = []
        rooms_hit: list[str] = []
        reasons: list[str] = []
        for prop, first in before.items():
            last = after.get(prop)
            if last == first:
                continue
            changes.append(PropositionShift(proposition_id=prop, before=first, after=last))
            point = next(
                (
                    t
                    for t in timeline
                    if t.persona_id == pid and t.proposition_id == prop and t.changed
                ),
                None,
            )
            if point is not None:
                rooms_hit += [
                    r for r in attribute(pid, prop, point.turn_index, rooms) if r not in rooms_hit
                ]
                if point.named_reason:
                    reasons.append(point.named_reason)
        distance = distances.get(pid)
        has_stances = bool(before)
        shifted = bool(changes) or (
            not has_stances and distance is not None and distance > text_threshold
        )
        label = (names or {}).get(pid, pid)
        if changes:
            summary = _shift_summary(label, changes, rooms_hit, bool(reasons), claims or {}, room_names or {})
        elif shifted:
            summary = f"{label}'s closing statement moved away from the opening (distance {distance:.2f})."
        else:
            summary = f"{label} kept the same positions."
        out.append(
            PositionShift(
                persona_id=pid,
                shifted=shifted,
                embedding_distance=distance,
                proposition_shifts=changes,
                attributed_rooms=rooms_hit,
                named_reason=reasons[0] if reasons else None,
                summary=summary,
            )
        )
    return out


def observations_from_turns(turns: Iterable[DialogueTurn]) -> list[StanceObservation]:
    """Stance observations from a transcript's turn metadata (``proposition_ids`` + ``stance``),
    e.g. ``shift_timeline(observations_from_turns(result.transcript))`` in a notebook. Named
    reasons are not part of the transcript; ``result.position_shifts`` carries them.

    >>> t = DialogueTurn(id="m0", turn_index=0, persona_id="a", dialogue="x", phase="take",
    ...                  proposition_ids=["p"], stance="pro")
    >>> observations_from_turns([t])
    [StanceObservation(persona_id='a', proposition_id='p', stance='pro', turn_index=0, room_id=None, named_reason=None)]
    """
    return [
        StanceObservation(t.persona_id, pid, t.stance, t.turn_index, t.room_id)
        for t in turns
        if t.stance is not None
        for pid in t.proposition_ids
    ]


def room_spans_from_turns(turns: Iterable[DialogueTurn]) -> list[RoomSpan]:
    """Crux rooms of a transcript (turns grouped by ``room_id``), with the propositions they
    addressed.

    >>> ts = [DialogueTurn(id=f"m{i}", turn_index=i, persona_id=p, dialogue="x", phase="crux_room",
    ...                    room_id="r1", proposition_ids=["p"]) for i, p in ((3, "a"), (4, "b"))]
    >>> room_spans_from_turns(ts)
    [RoomSpan(room_id='r1', personas=('a', 'b'), start_index=3, end_index=4, proposition_ids=('p',))]
    """
    rooms: dict[str, list[DialogueTurn]] = {}
    for t in turns:
        if t.room_id:
            rooms.setdefault(t.room_id, []).append(t)
    out = []
    for rid, ts in rooms.items():
        props = tuple(dict.fromkeys(p for t in ts for p in t.proposition_ids))
        out.append(
            RoomSpan(
                rid,
                tuple(dict.fromkeys(t.persona_id for t in ts)),
                min(t.turn_index for t in ts),
                max(t.turn_index for t in ts),
                props,
            )
        )
    return out
