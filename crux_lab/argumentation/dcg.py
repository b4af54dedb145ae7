"""Dispute-centric graph (DCG).

``Dispute (binary question) -> Stance (YES/NO) -> Reason (SUPPORT/ATTACK)``
over the pydantic models of :mod:`crux_lab.models`. All functions are pure:
operations return a new :class:`~crux_lab.models.DCGState`.

Invariants (violations raise :class:`DCGInvariantError`, nothing is ever
silently repaired):

1. ``stance-dispute``: every Stance references an existing Dispute.
2. ``reason-stance``: every Reason references an existing Stance.
3. ``divergence``: a Dispute is *created* only with ≥1 YES and ≥1 NO stance.
   Reading: the rule guards against invented disputes ("real divergence when
   created"). It is checked when a dispute enters the graph
   (:func:`create_dispute`, ``new_disputes`` of :func:`apply_update`); later
   concessions may move every stance to one side, and exactly those disputes
   are common ground. A dispute that is split is a crux.
4. ``free-floating``: no free-floating claims: a Reason may only attack
   reasons of the same dispute; ids are unique; a speaker has at most one
   stance per dispute (concessions update it instead of adding a second).

Analysis functions: :func:`compute_cruxes`, :func:`compute_common_ground`,
:func:`classify_regime`.
Dung semantics are applied only *within* one dispute (:func:`analyze_dispute`).

>>> from crux_lab.models import Dispute, Stance, Side
>>> st = create_dispute(DCGState(), Dispute(id="d-0", question="Is BTC adoption deterministic?"),
...     [Stance(id="s-0", dispute_id="d-0", speaker_id="saylor", side=Side.YES, statement="yes"),
...      Stance(id="s-1", dispute_id="d-0", speaker_id="hayes", side=Side.NO, statement="no")])
>>> [c.dispute_id for c in compute_cruxes(st)], compute_common_ground(st)
(['d-0'], [])
>>> classify_regime(compute_cruxes(st), compute_common_ground(st), 1).regime
'polarized'
>>> st2 = concede(st, "s-1", Side.YES)
>>> [(c.dispute_id, c.agreed_side.value) for c in compute_common_ground(st2)]
[('d-0', 'YES')]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from crux_lab.argumentation.crux import RegimeResult
from crux_lab.argumentation.framework import ArgumentFramework, Extension
from crux_lab.argumentation.gradual import df_quad, h_categorizer
from crux_lab.argumentation.semantics import Labelling, grounded_labelling
from crux_lab.argumentation.space import Status, extension_space
from crux_lab.models.domain import DCGState, Dispute, Reason, Side, Stance

__all__ = [
    "DCGCommonGround",
    "DCGCrux",
    "DCGInvariantError",
    "DisputeAnalysis",
    "RankedReason",
    "add_reason",
    "analyze_dispute",
    "apply_update",
    "check_invariants",
    "classify_regime",
    "compute_common_ground",
    "compute_cruxes",
    "concede",
    "create_dispute",
    "dispute_framework",
    "reason_side",
    "remove_reason",
    "upsert_stance",
]


class DCGInvariantError(ValueError):
    """A DCG invariant is violated. ``invariant`` names which one."""

    def __init__(self, invariant: str, message: str) -> None:
        self.invariant = invariant
        self.message = message
        super().__init__(f"[{invariant}] {message}")


@dataclass(frozen=True)
class DCGCrux:
    """A split dispute: ≥1 YES and ≥1 NO stance."""

    dispute_id: str
    question: str
    yes_side: tuple[Stance, ...]
    no_side: tuple[Stance, ...]


@dataclass(frozen=True)
class DCGCommonGround:
    """A dispute whose stances all align to ``agreed_side``."""

    dispute_id: str
    question: str
    agreed_side: Side


# ---------------------------------------------------------------------------
# Invariants and operations
# ---------------------------------------------------------------------------


def _unique(kind: str, ids: Iterable[str]) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise DCGInvariantError("free-floating", f"duplicate {kind} id {i!r}")
        seen.add(i)


def check_invariants(state: DCGState, new_dispute_ids: Iterable[str] = ()) -> None:
    """Raise :class:`DCGInvariantError` unless ``state`` satisfies the invariants.

    The divergence invariant (3) is checked for ``new_dispute_ids`` only: the
    disputes being created by the current operation.

    >>> from crux_lab.models import Stance, Side
    >>> bad = DCGState(stances=[Stance(id="s", dispute_id="d-9", speaker_id="p",
    ...                                side=Side.YES, statement="x")])
    >>> check_invariants(bad)
    Traceback (most recent call last):
    ...
    crux_lab.argumentation.dcg.DCGInvariantError: [stance-dispute] stance 's' references unknown dispute 'd-9'
    """
    _unique("dispute", (d.id for d in state.disputes))
    _unique("stance", (s.id for s in state.stances))
    _unique("reason", (r.id for r in state.reasons))
    disputes = {d.id for d in state.disputes}
    stance_dispute: dict[str, str] = {}
    speakers: set[tuple[str, str]] = set()
    for s in state.stances:
        if s.dispute_id not in disputes:
            raise DCGInvariantError(
                "stance-dispute", f"stance {s.id!r} references unknown dispute {s.dispute_id!r}"
            )
        if (s.dispute_id, s.speaker_id) in speakers:
            raise DCGInvariantError(
                "free-floating",
                f"speaker {s.speaker_id!r} has two stances on dispute {s.dispute_id!r}",
            )
        speakers.add((s.dispute_id, s.speaker_id))
        stance_dispute[s.id] = s.dispute_id
    reason_dispute: dict[str, str] = {}
    for r in state.reasons:
        if r.stance_id not in stance_dispute:
            raise DCGInvariantError(
                "reason-stance", f"reason {r.id!r} references unknown stance {r.stance_id!r}"
            )
        reason_dispute[r.id] = stance_dispute[r.stance_id]
    for r in state.reasons:
        for t in r.attacks:
            if t not in reason_dispute:
                raise DCGInvariantError(
                    "free-floating", f"reason {r.id!r} attacks unknown reason {t!r}"
                )
            if reason_dispute[t] != reason_dispute[r.id]:
                raise DCGInvariantError(
                    "free-floating",
                    f"reason {r.id!r} attacks reason {t!r} of another dispute",
                )
    for did in new_dispute_ids:
        sides = {s.side for s in state.stances if s.dispute_id == did}
        if sides != {Side.YES, Side.NO}:
            raise DCGInvariantError(
                "divergence",
                f"dispute {did!r} created without real divergence "
                f"(needs ≥1 YES and ≥1 NO stance, has {sorted(x.value for x in sides)})",
            )


def apply_update(
    state: DCGState,
    new_disputes: Sequence[Dispute] = (),
    upsert_stances: Sequence[Stance] = (),
    new_reasons: Sequence[Reason] = (),
    removed_reason_ids: Sequence[str] = (),
    updated_disputes: Sequence[Dispute] = (),
) -> DCGState:
    """Apply one crystallizer update atomically.

    Stances with an existing id replace it (concessions); new ones are added.
    Removing a reason also removes reason-layer attacks that point at it.
    Raises :class:`DCGInvariantError` (and changes nothing) on any violation.
    """
    existing = {d.id for d in state.disputes}
    for d in new_disputes:
        if d.id in existing:
            raise DCGInvariantError("free-floating", f"dispute {d.id!r} already exists")
    updated = {d.id: d for d in updated_disputes}
    for did in updated:
        if did not in existing:
            raise DCGInvariantError("stance-dispute", f"updated dispute {did!r} does not exist")
    disputes = [updated.get(d.id, d) for d in state.disputes] + list(new_disputes)
    by_id = {s.id: s for s in upsert_stances}
    stances = [by_id.pop(s.id, s) for s in state.stances] + list(by_id.values())
    removed = set(removed_reason_ids)
    known = {r.id for r in state.reasons}
    for rid in removed:
        if rid not in known:
            raise DCGInvariantError("reason-stance", f"cannot remove unknown reason {rid!r}")
    reasons = [
        r.model_copy(update={"attacks": [t for t in r.attacks if t not in removed]})
        for r in state.reasons
        if r.id not in removed
    ] + list(new_reasons)
    new_state = DCGState(disputes=disputes, stances=stances, reasons=reasons)
    check_invariants(new_state, [d.id for d in new_disputes])
    return new_state


def create_dispute(
    state: DCGState, dispute: Dispute, stances: Sequence[Stance], reasons: Sequence[Reason] = ()
) -> DCGState:
    """Add a dispute with its opening stances (needs ≥1 YES and ≥1 NO).

    >>> from crux_lab.models import Dispute, Stance, Side
    >>> create_dispute(DCGState(), Dispute(id="d", question="q?"),
    ...     [Stance(id="s", dispute_id="d", speaker_id="p", side=Side.YES, statement="x")])
    Traceback (most recent call last):
    ...
    crux_lab.argumentation.dcg.DCGInvariantError: [divergence] dispute 'd' created without real divergence (needs ≥1 YES and ≥1 NO stance, has ['YES'])
    """
    return apply_update(state, [dispute], stances, reasons)


def upsert_stance(state: DCGState, stance: Stance) -> DCGState:
    """Add a stance to an existing dispute or replace one with the same id."""
    return apply_update(state, upsert_stances=[stance])


def concede(
    state: DCGState, stance_id: str, side: Side | None = None, statement: str | None = None
) -> DCGState:
    """Update a stance after a concession (may align a dispute: then it is common ground)."""
    for s in state.stances:
        if s.id == stance_id:
            upd: dict[str, object] = {}
            if side is not None:
                upd["side"] = side
            if statement is not None:
                upd["statement"] = statement
            return apply_update(state, upsert_stances=[s.model_copy(update=upd)])
    raise DCGInvariantError("reason-stance", f"unknown stance {stance_id!r}")


def add_reason(state: DCGState, reason: Reason) -> DCGState:
    """Attach a reason to an existing stance."""
    return apply_update(state, new_reasons=[reason])


def remove_reason(state: DCGState, reason_id: str) -> DCGState:
    """Remove a reason and the reason-layer attacks on it."""
    return apply_update(state, removed_reason_ids=[reason_id])


# ---------------------------------------------------------------------------
# Analysis
# ---------------------------------------------------------------------------


def _split(state: DCGState, dispute_id: str) -> tuple[list[Stance], list[Stance]]:
    stances = [s for s in state.stances if s.dispute_id == dispute_id]
    return [s for s in stances if s.side == Side.YES], [s for s in stances if s.side == Side.NO]


def compute_cruxes(state: DCGState) -> list[DCGCrux]:
    """Crux = dispute with ≥1 YES and ≥1 NO stance (seed ``computeCruxes``)."""
    out = []
    for d in state.disputes:
        yes, no = _split(state, d.id)
        if yes and no:
            out.append(DCGCrux(d.id, d.question, tuple(yes), tuple(no)))
    return out


def compute_common_ground(state: DCGState) -> list[DCGCommonGround]:
    """Common ground = dispute whose stances all align (seed ``computeCommonGround``)."""
    out = []
    for d in state.disputes:
        yes, no = _split(state, d.id)
        if yes and not no:
            out.append(DCGCommonGround(d.id, d.question, Side.YES))
        elif no and not yes:
            out.append(DCGCommonGround(d.id, d.question, Side.NO))
    return out


def classify_regime(
    cruxes: Sequence[DCGCrux], common_ground: Sequence[DCGCommonGround], active_disputes: int
) -> RegimeResult:
    """Seed ``classifyRegime``, verbatim (``active_disputes`` is accepted but unused there too).

    >>> classify_regime([], [], 0).regime
    'partial'
    """
    if not cruxes and common_ground:
        return RegimeResult(
            "consensus", f"Consensus: Both speakers agree on {len(common_ground)} dispute(s)."
        )
    if cruxes and not common_ground:
        return RegimeResult(
            "polarized", f"Polarized: {len(cruxes)} unresolved dispute(s), no common ground."
        )
    return RegimeResult("partial", f"Partial: {len(common_ground)} aligned, {len(cruxes)} split.")


# ---------------------------------------------------------------------------
# Dung within one dispute
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RankedReason:
    """A reason with its side, Dung status inside its dispute and gradual strength."""

    reason_id: str
    side: Side
    status: Status
    strength: float


@dataclass(frozen=True)
class DisputeAnalysis:
    """Dung analysis of one dispute at the reason layer."""

    dispute_id: str
    framework: ArgumentFramework
    grounded: Extension
    preferred: tuple[Extension, ...]
    labelling: Labelling
    yes_reasons: tuple[RankedReason, ...]
    no_reasons: tuple[RankedReason, ...]
    stance_strength: dict[str, float]


def reason_side(reason: Reason, stance: Stance) -> Side:
    """The side a reason argues for: SUPPORT keeps the stance's side, ATTACK flips it."""
    if reason.polarity == "SUPPORT":
        return stance.side
    return Side.NO if stance.side == Side.YES else Side.YES


def dispute_framework(state: DCGState, dispute_id: str) -> ArgumentFramework:
    """The reason-layer AF of one dispute.

    Arguments: the dispute's stance and reason ids. Attacks: YES and NO stances
    attack each other; an ATTACK reason attacks its stance; a SUPPORT reason
    attacks the stances of the other side; ``Reason.attacks`` are reason→reason.
    """
    stances = {s.id: s for s in state.stances if s.dispute_id == dispute_id}
    reasons = [r for r in state.reasons if r.stance_id in stances]
    args: list[str] = list(stances) + [r.id for r in reasons]
    att: set[tuple[str, str]] = set()
    for a in stances.values():
        for b in stances.values():
            if a.side != b.side:
                att.add((a.id, b.id))
    for r in reasons:
        st = stances[r.stance_id]
        if r.polarity == "ATTACK":
            att.add((r.id, st.id))
        else:
            att.update((r.id, o.id) for o in stances.values() if o.side != st.side)
        att.update((r.id, t) for t in r.attacks)
    return ArgumentFramework.from_edges(args, att)


def analyze_dispute(state: DCGState, dispute_id: str) -> DisputeAnalysis:
    """Grounded/preferred inside one dispute; reasons ranked per side.

    Ranking: skeptically accepted before contested before rejected (preferred
    semantics), then h-categorizer strength (desc), then id. Stance strengths
    are DF-QuAD scores with SUPPORT reasons as supporters and ATTACK reasons
    plus reason-layer attacks as attackers.

    >>> from crux_lab.models import Dispute, Reason, Stance, Side
    >>> st = create_dispute(DCGState(), Dispute(id="d", question="q?"),
    ...     [Stance(id="y", dispute_id="d", speaker_id="p", side=Side.YES, statement="yes"),
    ...      Stance(id="n", dispute_id="d", speaker_id="q", side=Side.NO, statement="no")],
    ...     [Reason(id="r1", stance_id="y", polarity="SUPPORT", claim="data"),
    ...      Reason(id="r2", stance_id="n", polarity="SUPPORT", claim="theory", attacks=["r1"])])
    >>> an = analyze_dispute(st, "d")
    >>> sorted(an.grounded), [r.reason_id for r in an.no_reasons]
    (['n', 'r2'], ['r2'])
    >>> an.yes_reasons[0].status
    'rejected'
    """
    af = dispute_framework(state, dispute_id)
    space = extension_space(af, "preferred")
    statuses = space.statuses()
    strength = h_categorizer(af)
    stances = {s.id: s for s in state.stances if s.dispute_id == dispute_id}
    reasons = [r for r in state.reasons if r.stance_id in stances]
    order = {"accepted": 0, "contested": 1, "rejected": 2}
    ranked: dict[Side, list[RankedReason]] = {Side.YES: [], Side.NO: []}
    for r in reasons:
        side = reason_side(r, stances[r.stance_id])
        ranked[side].append(RankedReason(r.id, side, statuses[r.id], strength[r.id]))
    for side in ranked:
        ranked[side].sort(key=lambda x: (order[x.status], -x.strength, x.reason_id))
    attacks = [(r.id, t) for r in reasons for t in r.attacks]
    attacks += [(r.id, r.stance_id) for r in reasons if r.polarity == "ATTACK"]
    supports = [(r.id, r.stance_id) for r in reasons if r.polarity == "SUPPORT"]
    dfq = df_quad(list(stances) + [r.id for r in reasons], attacks, supports)
    labelling: Labelling = grounded_labelling(af)
    return DisputeAnalysis(
        dispute_id=dispute_id,
        framework=af,
        grounded=space.fixed,
        preferred=tuple(space),
        labelling=labelling,
        yes_reasons=tuple(ranked[Side.YES]),
        no_reasons=tuple(ranked[Side.NO]),
        stance_strength={s: dfq[s] for s in stances},
    )
