"""The DCG side of the crystallizer: apply a DCG reply under the DCG's hard rules.

Every mutation goes through :func:`crux_lab.argumentation.dcg.apply_update`, which enforces
the four invariants and raises :class:`DCGInvariantError` on a violation. Each logical unit
(a new dispute with its opening stances, one stance upsert, one reason) is applied on its
own, so one bad item is refused with a note and the rest of the reply still lands.

Hard rules of the DCG prompt, enforced here as well as asked for in the prompt:

1. at most ``max_new_disputes`` (2) new disputes per call;
2. no free-floating claims: a stance must name an existing dispute (or one created in the
   same reply), a reason an existing stance;
3. a dispute is created only with real divergence (≥1 YES and ≥1 NO stance);
4. every stance and reason carries ``derived_from_turns``;
5. a second stance of the same speaker on a dispute updates the first (upsert, no duplicate);
   a new dispute worded like one in the graph is that dispute (its stances update it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from crux_lab.argumentation.dcg import (
    DCGInvariantError,
    analyze_dispute,
    apply_update,
    check_invariants,
    classify_regime,
    compute_common_ground,
    compute_cruxes,
)
from crux_lab.engines.dialogue.schemas import (
    DCGCrystallizationResult,
    ReasonAttack,
    StanceUpsert,
)
from crux_lab.engines.guards import norm_words
from crux_lab.engines.names import quote, same_reply_id
from crux_lab.models.domain import (
    Camp,
    CommonGround,
    Crux,
    CruxSide,
    DCGState,
    DisagreementType,
    Dispute,
    Reason,
    Regime,
    Side,
    Stance,
)


@dataclass
class DCGChange:
    """What one DCG crystallization did, and what it refused (with why)."""

    new_dispute_ids: list[str] = field(default_factory=list)
    upserted_stance_ids: list[str] = field(default_factory=list)
    flipped_stance_ids: list[str] = field(default_factory=list)
    softened_stance_ids: list[str] = field(default_factory=list)
    new_reason_ids: list[str] = field(default_factory=list)
    removed_reason_ids: list[str] = field(default_factory=list)
    updated_dispute_ids: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # the reply's provisional ids -> DCG ids

    @property
    def changed(self) -> bool:
        return bool(
            self.new_dispute_ids
            or self.upserted_stance_ids
            or self.new_reason_ids
            or self.removed_reason_ids
            or self.updated_dispute_ids
        )


def _disagreement_type(value: str | None) -> DisagreementType | None:
    try:
        return DisagreementType(value) if value else None
    except ValueError:
        return None


def _new_stance(stance_id: str, dispute_id: str, up: StanceUpsert) -> Stance:
    """A first stance of a speaker on a dispute, from the crystallizer's upsert."""
    return Stance(
        id=stance_id,
        dispute_id=dispute_id,
        speaker_id=up.speaker_id,
        side=up.side,
        statement=up.statement,
        confidence=up.confidence,
        derived_from_turns=sorted(set(up.derived_from_turns)),
    )


@dataclass
class DCGHolder:
    """The current DCG plus id counters; replaced wholesale on every successful mutation.

    >>> from crux_lab.engines.dialogue.schemas import DCGCrystallizationResult as R
    >>> h = DCGHolder()
    >>> ch = h.apply(R.model_validate({
    ...   "new_disputes": [{"id": "n1", "question": "Is adoption deterministic?"}],
    ...   "upsert_stances": [
    ...     {"dispute_id": "n1", "speaker_id": "saylor", "side": "YES", "statement": "yes", "derived_from_turns": [0]},
    ...     {"dispute_id": "n1", "speaker_id": "hayes", "side": "NO", "statement": "no", "derived_from_turns": [1]}]}))
    >>> ch.new_dispute_ids, [s.side.value for s in h.state.stances]
    (['d-0'], ['YES', 'NO'])
    >>> ch = h.apply(R.model_validate({"upsert_stances": [
    ...     {"dispute_id": "d-7", "speaker_id": "hayes", "side": "YES", "statement": "x", "derived_from_turns": [2]}]}))
    >>> print(*ch.refused)
    stance of hayes "x": its dispute 'd-7' is not in the graph, and the reply does not create it in new_disputes
    >>> ch = h.apply(R.model_validate({
    ...   "new_disputes": [{"id": "n1", "question": "Is supply fixed?"}],
    ...   "upsert_stances": [
    ...     {"dispute_id": "new-1", "speaker_id": "saylor", "side": "YES", "statement": "yes", "derived_from_turns": [0]},
    ...     {"dispute_id": "N1", "speaker_id": "hayes", "side": "NO", "statement": "no", "derived_from_turns": [1]}]}))
    >>> ch.new_dispute_ids, ch.refused
    (['d-1'], [])
    """

    state: DCGState = field(default_factory=DCGState)
    max_new_disputes: int = 2
    next_dispute: int = 0
    next_stance: int = 0
    next_reason: int = 0

    def _try(self, change: DCGChange, what: str, **update: object) -> bool:
        try:
            self.state = apply_update(self.state, **update)  # type: ignore[arg-type]
        except DCGInvariantError as exc:
            change.refused.append(f"{what}: {exc}")
            return False
        return True

    def stance_of(self, dispute_id: str, speaker_id: str) -> Stance | None:
        for s in self.state.stances:
            if s.dispute_id == dispute_id and s.speaker_id == speaker_id:
                return s
        return None

    def dispute_ref(self, reply: DCGCrystallizationResult, ref: str) -> str | None:
        """The graph id or the reply's own new-dispute handle that ``ref`` stands for
        (:func:`same_reply_id`), None when it names neither."""
        ids = {d.id: d.id for d in self.state.disputes} | {nd.id: nd.id for nd in reply.new_disputes}
        return same_reply_id(ref, ids, [nd.id for nd in reply.new_disputes])

    def _dispute_refs(self, reply: DCGCrystallizationResult) -> DCGCrystallizationResult:
        """``reply`` with each dispute reference written as the id it stands for: a graph id or
        a handle of a dispute the same reply creates, matched leniently (:func:`same_reply_id`:
        "New_1" is "new-1", and "new-2" is the reply's second new dispute when no handle is
        "new-2"). A reference matching nothing is left as written (and refused later)."""
        def ref(x: str) -> str:
            found = self.dispute_ref(reply, x)
            return x if found is None else found

        return reply.model_copy(update={
            "upsert_stances": [u.model_copy(update={"dispute_id": ref(u.dispute_id)}) for u in reply.upsert_stances],
            "new_reasons": [r.model_copy(update={"dispute_id": ref(r.dispute_id)}) for r in reply.new_reasons],
            "updated_disputes": [d.model_copy(update={"id": ref(d.id)}) for d in reply.updated_disputes],
        })

    def apply(self, reply: DCGCrystallizationResult, *, known_turns: set[int] | None = None) -> DCGChange:
        """Apply one crystallizer reply; returns what changed and what was refused."""
        change = DCGChange()
        reply = self._dispute_refs(reply)
        alias: dict[str, str] = {d.id: d.id for d in self.state.disputes}
        stances_for: dict[str, list] = {}
        for up in reply.upsert_stances:
            stances_for.setdefault(up.dispute_id, []).append(up)

        def turns_ok(turns: list[int], what: str) -> bool:
            if not turns:
                change.refused.append(f"{what}: derivedFromTurns is required (hard rule 4)")
                return False
            if known_turns is not None and not set(turns) <= known_turns:
                change.refused.append(f"{what}: derivedFromTurns {turns} name turns that do not exist")
                return False
            return True

        # 1. new disputes, each with its opening stances (atomic: divergence is checked here)
        for n, nd in enumerate(reply.new_disputes):
            if n >= self.max_new_disputes:
                change.refused.append(
                    f"dispute {nd.question!r}: more than {self.max_new_disputes} new disputes in one call (hard rule 1)"
                )
                continue
            same = next((d.id for d in self.state.disputes if norm_words(d.question) == norm_words(nd.question)), None)
            if same is not None:
                # Qwen's second crystallization created again, word for word, a dispute the
                # first had created: its stances update that dispute instead of a twin.
                alias[nd.id] = same
                stances_for[same] = stances_for.get(same, []) + stances_for.pop(nd.id, [])
                continue
            did = f"d-{self.next_dispute}"
            opening: list[Stance] = []
            seen: set[str] = set()
            later: list[StanceUpsert] = []
            for up in stances_for.pop(nd.id, []):
                if up.speaker_id in seen:
                    later.append(up)  # a later upsert of the same pair updates the opening one
                    continue
                if not turns_ok(up.derived_from_turns, f"stance of {up.speaker_id}"):
                    continue
                seen.add(up.speaker_id)
                opening.append(_new_stance(f"s-{self.next_stance + len(opening)}", did, up))
            dispute = Dispute(
                id=did,
                question=nd.question,
                horizon=nd.horizon,
                resolution_criteria=list(nd.resolution_criteria),
                created_from_turns=sorted(set(nd.created_from_turns) | {t for s in opening for t in s.derived_from_turns}),
                disagreement_type=_disagreement_type(nd.disagreement_type),
            )
            if self._try(change, f"dispute {nd.question!r}", new_disputes=[dispute], upsert_stances=opening):
                self.next_dispute += 1
                self.next_stance += len(opening)
                alias[nd.id] = did
                change.new_dispute_ids.append(did)
                change.upserted_stance_ids += [s.id for s in opening]
                if later:
                    stances_for[did] = later + stances_for.get(did, [])

        # 2. stance upserts on existing disputes (concessions update, never duplicate)
        for key, ups in stances_for.items():
            for up in ups:
                did = alias.get(key, key)
                what = f"stance of {up.speaker_id} {quote(up.statement)}"
                if not any(d.id == did for d in self.state.disputes):
                    change.refused.append(f"{what}: its dispute {key!r} is not in the graph, and the reply does not create it in new_disputes")
                    continue
                if not turns_ok(up.derived_from_turns, what):
                    continue
                old = self.stance_of(did, up.speaker_id)
                if old is not None:
                    new = old.model_copy(
                        update={
                            "side": up.side,
                            "statement": up.statement,
                            "confidence": up.confidence if up.confidence is not None else old.confidence,
                            "derived_from_turns": sorted(set(old.derived_from_turns) | set(up.derived_from_turns)),
                        }
                    )
                else:
                    new = _new_stance(f"s-{self.next_stance}", did, up)
                if new == old:
                    continue
                if self._try(change, what, upsert_stances=[new]):
                    if old is None:
                        self.next_stance += 1
                    elif old.side != new.side:
                        change.flipped_stance_ids.append(new.id)
                    else:
                        change.softened_stance_ids.append(new.id)
                    change.upserted_stance_ids.append(new.id)

        # 3. reasons, attached to a stance named by dispute + speaker
        reason_alias: dict[str, str] = {r.id: r.id for r in self.state.reasons}
        for nr in reply.new_reasons:
            did = alias.get(nr.dispute_id, nr.dispute_id)
            stance = self.stance_of(did, nr.speaker_id)
            what = f"reason {nr.claim[:60]!r}"
            if not turns_ok(nr.derived_from_turns, what):
                continue
            if stance is None:
                change.refused.append(
                    f"{what}: no stance of {nr.speaker_id} on dispute {nr.dispute_id!r} (free-floating claim)"
                )
                continue
            if any(r.stance_id == stance.id and r.claim == nr.claim and r.polarity == nr.polarity for r in self.state.reasons):
                continue  # same reason again: nothing new
            rid = f"r-{self.next_reason}"
            reason = Reason(
                id=rid,
                stance_id=stance.id,
                polarity=nr.polarity,
                claim=nr.claim,
                assumptions=list(nr.assumptions),
                evidence=list(nr.evidence),
                derived_from_turns=sorted(set(nr.derived_from_turns)),
                attacks=[reason_alias[t] for t in nr.attacks if t in reason_alias],
            )
            if self._try(change, what, new_reasons=[reason]):
                self.next_reason += 1
                if nr.id:
                    reason_alias[nr.id] = rid
                change.new_reason_ids.append(rid)

        change.aliases = dict(alias)

        # 4. removals and dispute updates
        for rid in reply.removed_reason_ids:
            if self._try(change, f"removing reason {rid!r}", removed_reason_ids=[rid]):
                change.removed_reason_ids.append(rid)
        for ud in reply.updated_disputes:
            did = alias.get(ud.id, ud.id)
            old_d = next((d for d in self.state.disputes if d.id == did), None)
            if old_d is None:
                change.refused.append(f"update of dispute {ud.id!r}: no such dispute")
                continue
            upd = {k: v for k, v in ud.model_dump(exclude={"id"}).items() if v is not None}
            new_d = old_d.model_copy(update=upd)
            if new_d != old_d and self._try(change, f"update of dispute {did!r}", updated_disputes=[new_d]):
                change.updated_dispute_ids.append(did)
        return change

    def add_reason_attacks(self, attacks: list[ReasonAttack]) -> DCGChange:
        """Reason-layer attacks (Dung within a dispute). Refused, each with its reason: an
        attack naming a reason not in the graph, a reason attacking itself, and a cross-dispute
        attack. A repeated attack is skipped silently."""
        change = DCGChange()
        for ra in attacks:
            by_id = {r.id: r for r in self.state.reasons}
            src = by_id.get(ra.from_reason_id)
            unknown = [x for x in (ra.from_reason_id, ra.to_reason_id) if x not in by_id]
            if unknown:
                change.refused.append(f"a reason attack names {', '.join(repr(x) for x in unknown)}, not a reason in the graph")
                continue
            if ra.from_reason_id == ra.to_reason_id:
                change.refused.append(f"reason {ra.from_reason_id!r} cannot attack itself")
                continue
            if src is None or ra.to_reason_id in src.attacks:
                continue
            new = src.model_copy(update={"attacks": [*src.attacks, ra.to_reason_id]})
            candidate = self.state.model_copy(
                update={"reasons": [new if r.id == src.id else r for r in self.state.reasons]}
            )
            try:
                check_invariants(candidate)
            except DCGInvariantError as exc:
                change.refused.append(f"attack {src.id}->{ra.to_reason_id}: {exc}")
                continue
            self.state = candidate
            change.new_reason_ids.append(src.id)
        return change

    def frontier(self) -> frozenset[str]:
        """The contested frontier of a DCG: the disputes that are split."""
        return frozenset(c.dispute_id for c in compute_cruxes(self.state))

    def compact_table(self) -> str:
        s = self.state
        if not s.disputes:
            return "(no disputes yet)"
        lines = ["Disputes:"]
        for d in s.disputes:
            lines.append(f"{d.id} | {d.question} | {'active' if d.active else 'retired'}")
        lines.append("Stances:")
        for st in s.stances:
            lines.append(f"{st.id} | {st.dispute_id} | {st.speaker_id} | {st.side.value} | {st.statement}")
        lines.append("Reasons:")
        for r in s.reasons or []:
            att = f" attacks {','.join(r.attacks)}" if r.attacks else ""
            lines.append(f"{r.id} | {r.stance_id} | {r.polarity} | {r.claim}{att}")
        if not s.reasons:
            lines.append("(none)")
        return "\n".join(lines)


def dcg_insights(
    state: DCGState, persona_ids: list[str]
) -> tuple[list[Crux], list[CommonGround], list[Camp], Regime, str]:
    """Cruxes, common ground and regime from the DCG, camps by side.

    Cruxes carry each side's strongest reasons, ranked by Dung semantics inside the dispute.
    """
    disputes = {d.id: d for d in state.disputes}
    raw_cruxes = compute_cruxes(state)
    raw_common = compute_common_ground(state)
    reasons = {r.id: r for r in state.reasons}
    cruxes: list[Crux] = []
    for c in raw_cruxes:
        d = disputes[c.dispute_id]
        analysis = analyze_dispute(state, c.dispute_id)
        # Dung within the dispute ranks each side's reasons; the two strongest per side are
        # listed (YES first) as the crux's assumptions, their ids as argument_ids.
        top = [*analysis.yes_reasons[:2], *analysis.no_reasons[:2]]
        best = [reasons[r.reason_id].claim for r in top]
        cruxes.append(
            Crux(
                id=f"crux-{c.dispute_id}",
                statement=c.question,
                source="dispute",
                disagreement_type=d.disagreement_type,
                yes_side=[CruxSide(persona_id=s.speaker_id, statement=s.statement) for s in c.yes_side],
                no_side=[CruxSide(persona_id=s.speaker_id, statement=s.statement) for s in c.no_side],
                settling_question="; ".join(d.resolution_criteria) or None,
                dispute_id=c.dispute_id,
                assumptions=best,
                argument_ids=[r.reason_id for r in top],
                score=float(len(analysis.yes_reasons) + len(analysis.no_reasons)),
            )
        )
    common = [
        CommonGround(
            id=f"cg-{g.dispute_id}",
            statement=f"All answer {g.agreed_side.value}: {g.question}",
            source="dispute",
            persona_ids=sorted({s.speaker_id for s in state.stances if s.dispute_id == g.dispute_id}),
            dispute_id=g.dispute_id,
            agreed_side=g.agreed_side,
        )
        for g in raw_common
    ]
    active = sum(1 for d in state.disputes if d.active)
    if not state.disputes:
        regime = Regime.no_disagreement_found
        description = (
            "No disagreement found: the crystallizer saw no question on which the personas took "
            "opposite sides, so no dispute was recorded. This is not consensus: nobody stated "
            "agreement on a named claim either."
        )
    else:
        rr = classify_regime(raw_cruxes, raw_common, active)
        regime, description = Regime(rr.regime), rr.description
    camps = _side_camps(state, persona_ids)
    return cruxes, common, camps, regime, description


def _side_camps(state: DCGState, persona_ids: list[str]) -> list[Camp]:
    """Personas grouped by their sides on the split disputes (same sides = same camp)."""
    split = [c.dispute_id for c in compute_cruxes(state)]
    if not split:
        return []
    profile: dict[str, tuple[str, ...]] = {}
    for pid in persona_ids:
        sides = []
        for did in split:
            s = next((x for x in state.stances if x.dispute_id == did and x.speaker_id == pid), None)
            sides.append(s.side.value if s else "-")
        profile[pid] = tuple(sides)
    groups: dict[tuple[str, ...], list[str]] = {}
    for pid, prof in profile.items():
        if any(x != "-" for x in prof):
            groups.setdefault(prof, []).append(pid)
    return [
        Camp(
            index=i,
            persona_ids=members,
            label=", ".join(members),
        )
        for i, (prof, members) in enumerate(groups.items())
    ]


__all__ = ["DCGChange", "DCGHolder", "Side", "dcg_insights"]
