"""Fill a DebateResult's insight fields at the end of a crux engine run.

- ``crux_cards`` and ``cruxes`` (``source="card"``);
- ``common_ground``: only what is real — claims the debate listed (the topic, the contested
  claims) on which every persona's last stated stance is the same side, and cards on which every
  persona of the debate holds the same position. Nothing is inferred from silence;
- ``camps`` from the personas' stance matrix (cards and listed claims), via the shared
  stance-matrix analysis;
- ``positions`` (opening/closing) and ``position_shifts`` (:mod:`crux_lab.analysis.shifts`);
- ``regime``: ``no_disagreement_found`` when detection found nothing and no persona stated
  agreement on a named claim; ``consensus`` only on that positive evidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from crux_lab.analysis.insights import debate_camps
from crux_lab.analysis.restates import same_wording
from crux_lab.analysis.shifts import RoomSpan, StanceObservation, detect_shifts, opening_closing
from crux_lab.embed import get_embedder
from crux_lab.engines.base import EngineContext
from crux_lab.engines.crux_room.context import DebateMemory
from crux_lab.engines.crux_room.room import RoomOutcome
from crux_lab.engines.crux_room.speaker import Speakers
from crux_lab.engines.guards import TOPIC_KEY
from crux_lab.models.domain import (
    CommonGround,
    Concession,
    ConcessionKind,
    Crux,
    CruxCard,
    CruxSide,
    Move,
    PersonaPosition,
    PositionShift,
    Regime,
    Side,
)


@dataclass
class RoomRecord:
    outcome: RoomOutcome
    aspect_id: str = ""


def sentence(text: str) -> str:
    """``text`` stripped and ending in a full stop (or its own ``?``/``!``).

    >>> sentence("I would change my mind if fees fall"), sentence("Would it? "), sentence("Done.;")
    ('I would change my mind if fees fall.', 'Would it?', 'Done.')
    """
    text = text.strip().rstrip(";, ")
    return text if text.endswith((".", "?", "!")) else f"{text}."


def card_to_crux(card: CruxCard, acknowledged: bool, names: Mapping[str, str] | None = None) -> Crux:
    yes = [CruxSide(persona_id=p, statement=v.reasoning) for p, v in card.personas.items() if v.position.value == "YES"]
    no = [CruxSide(persona_id=p, statement=v.reasoning) for p, v in card.personas.items() if v.position.value == "NO"]
    falsifiers = [f"{(names or {}).get(p, p)}: {sentence(v.falsifier)}" for p, v in card.personas.items() if v.falsifier]
    return Crux(
        id=f"crux-{card.id}",
        statement=card.question,
        source="card",
        disagreement_type=card.disagreement_type,
        proposed_by=list(card.personas),
        acknowledged=acknowledged,
        yes_side=yes,
        no_side=no,
        settling_question=" ".join(falsifiers) or None,
    )


def observations(sp: Speakers) -> list[StanceObservation]:
    return [
        StanceObservation(r.persona_id, r.proposition_id, r.stance, r.turn_index, r.room_id, r.named_reason)
        for r in sp.tracker.records
    ]


def room_spans(rooms: Sequence[RoomRecord]) -> list[RoomSpan]:
    spans = []
    for r in rooms:
        o = r.outcome
        if not o.turns:
            continue
        spans.append(RoomSpan(o.room_id, tuple(o.personas), o.turns[0].turn_index, o.turns[-1].turn_index, (o.claim_id,)))
    return spans


def common_ground(
    persona_ids: Sequence[str], obs: Sequence[StanceObservation], cards: Sequence[CruxCard], statements: Mapping[str, str]
) -> list[CommonGround]:
    """Real common ground only: ``statements`` are the claims the debate listed, by engine id.

    >>> obs = [StanceObservation("a", "p1", "pro", 0), StanceObservation("b", "p1", "pro", 1),
    ...        StanceObservation("a", "p2", "pro", 2), StanceObservation("b", "p2", "con", 3)]
    >>> [(g.statement, g.agreed_side) for g in common_ground(["a", "b"], obs, [], {"p1": "P one"})]
    [('P one', <Side.YES: 'YES'>)]
    >>> obs[2] = StanceObservation("a", "p2", "con", 2)
    >>> [g.statement for g in common_ground(["a", "b"], obs, [], {"p1": "P one", "p2": "Is P two?"})]
    ['P one', 'All answer NO: Is P two?']
    """
    out: list[CommonGround] = []
    last = {pid: opening_closing(obs, pid)[1] for pid in persona_ids}
    props = sorted({o.proposition_id for o in obs})
    for prop in props:
        sides = {last[pid].get(prop) for pid in persona_ids}
        if len(sides) == 1 and next(iter(sides)) in ("pro", "con") and prop in statements:
            side = Side.YES if next(iter(sides)) == "pro" else Side.NO
            # a claim all hold reads as itself; one all reject says so in words, as dcg's do
            text = statements[prop] if side is Side.YES else f"All answer NO: {statements[prop]}"
            out.append(
                CommonGround(
                    id=f"cg-{prop}", statement=text, source="stances", persona_ids=list(persona_ids),
                    agreed_side=side,
                )
            )
    for card in cards:
        positions = {card.personas[p].position.value for p in persona_ids if p in card.personas}
        if set(persona_ids) <= set(card.personas) and len(positions) == 1 and positions != {"NUANCED"}:
            side = Side.YES if positions == {"YES"} else Side.NO
            out.append(
                CommonGround(
                    id=f"cg-{card.id}", statement=card.question, source="card", persona_ids=list(persona_ids),
                    agreed_side=side,
                )
            )
    return out


def concessions(sp: Speakers) -> list[Concession]:
    """Every CONCEDE turn, with the reason it named (None = a concession without a named claim
    or met flip condition, i.e. what the sycophancy rate counts)."""
    out = []
    for t in sorted(sp.turns, key=lambda t: t.turn_index):
        if t.move is not Move.CONCEDE:
            continue
        out.append(
            Concession(
                turn_index=t.turn_index,
                persona_id=t.persona_id,
                type=ConcessionKind.partial,
                conceded_claim=t.dialogue,
                effect=f"stance now {t.stance}" if t.stance else "",
                reason=sp.named_reasons.get(t.id),
            )
        )
    return out


def regime(
    detected: bool,
    cards: Sequence[CruxCard],
    n_camps: int,
    agreed: Sequence[CommonGround] = (),
    opposed: bool = False,
    assumptions: int = 0,
) -> tuple[Regime, str]:
    """The debate's regime. Consensus needs positive evidence: no disagreement detected, no
    opposed stances, no conflicting assumptions, and every persona took the same side on at
    least one named claim (``agreed``). With nothing detected and no card, conflicting
    assumptions from the worldview step make it ``partial``; without them or agreement it is
    ``no_disagreement_found``. Polarized when cards exist, none was resolved and the personas
    fall into 2+ camps; partial otherwise.

    >>> regime(False, [], 1)[0]
    <Regime.no_disagreement_found: 'no_disagreement_found'>
    >>> regime(False, [], 1, assumptions=2)
    (<Regime.partial: 'partial'>, 'No claim was contested in the debate itself, but the personas hold 2 conflicting assumption(s) under their positions.')
    """
    if not detected and not cards and assumptions:
        return Regime.partial, (
            f"No claim was contested in the debate itself, but the personas hold {assumptions} "
            "conflicting assumption(s) under their positions."
        )
    if not detected and not cards:
        if agreed and not opposed:
            claims = "; ".join(f'"{g.statement}"' for g in agreed[:3])
            return Regime.consensus, f"No disagreement was detected, and every persona took the same side on {claims}."
        why = (
            "the personas took opposite sides on some claims, but no detection vote named a specific claim they oppose on"
            if opposed
            else "no pair of personas was found opposing each other on a specific claim, and they stated no shared position"
        )
        return Regime.no_disagreement_found, f"No disagreement was found: {why}. This is not a consensus."
    unresolved = [c for c in cards if not c.resolved]
    if cards and len(unresolved) == len(cards) and n_camps >= 2:
        return Regime.polarized, f"{len(cards)} crux card(s), none resolved; the personas split into {n_camps} groups."
    return Regime.partial, f"{len(cards)} crux card(s), {len(cards) - len(unresolved)} resolved."


def merge_assumptions(cruxes: Sequence[Crux], assumptions: Sequence[Crux]) -> list[Crux]:
    """The worldview cruxes that add a premise: one worded like a crux already found (see
    :func:`~crux_lab.analysis.restates.same_wording`) is not listed again; its conflicting
    assumptions join that crux's ``assumptions``.

    >>> card = Crux(id="c1", statement="Will gold beat Bitcoin in a crisis?", source="card")
    >>> twin = Crux(id="wv1", statement="Is it the case that gold will beat Bitcoin in a crisis?",
    ...     source="assumption", assumptions=["Gold held up in 2020."])
    >>> [c.id for c in merge_assumptions([card], [twin])], card.assumptions
    ([], ['Gold held up in 2020.'])
    """
    kept: list[Crux] = []
    for a in assumptions:
        twin = next((c for c in [*cruxes, *kept] if same_wording(c.statement, a.statement)), None)
        if twin is None:
            kept.append(a)
        else:
            twin.assumptions.extend(x for x in a.assumptions if x not in twin.assumptions)
    return kept


def finish(
    ctx: EngineContext,
    sp: Speakers,
    rooms: Sequence[RoomRecord],
    cards: Sequence[CruxCard],
    memory: DebateMemory,
    *,
    opening: Mapping[str, str],
    closing: Mapping[str, str],
    embeddings: bool,
    detected: bool,
    assumptions: Sequence[Crux] = (),
) -> list[PositionShift]:
    """Fill ``ctx.result`` and return the position shifts. ``assumptions`` are the worldview
    step's cruxes; they follow the cards' cruxes."""
    ids = ctx.persona_ids
    obs = observations(sp)
    encoder = None
    if embeddings:
        encoder = get_embedder()
    shifts = detect_shifts(
        ids, obs, room_spans(rooms), opening=opening, closing=closing, encoder=encoder, names=sp.names,
        claims={TOPIC_KEY: memory.topic, **memory.claims.texts},
        room_names={r.outcome.room_id: r.outcome.question for r in rooms},
    )
    result = ctx.result
    positions = []
    for pid in ids:
        first, last = opening_closing(obs, pid)
        if pid in opening:
            positions.append(PersonaPosition(persona_id=pid, at="opening", text=opening[pid], stances=first))
        if pid in closing:
            positions.append(PersonaPosition(persona_id=pid, at="closing", text=closing[pid], stances=last))
    result.positions = positions
    result.position_shifts = shifts
    result.crux_cards = list(cards)
    converged = {r.outcome.room_id: r.outcome.converged for r in rooms}
    # a clash card (no room) was settled by a concession both sides saw: acknowledged
    result.cruxes = [card_to_crux(c, converged.get(c.crux_room_id, not c.crux_room_id), sp.names) for c in cards]
    assumptions = merge_assumptions(result.cruxes, assumptions)
    result.cruxes.extend(assumptions)
    statements = {TOPIC_KEY: memory.topic, **memory.claims.texts}
    result.common_ground = common_ground(ids, obs, cards, statements)
    finals = {pid: dict(opening_closing(obs, pid)[1]) for pid in ids}
    result.camps = debate_camps(ids, cards, finals, statements)
    opposed = any(
        {finals[a].get(k), finals[b].get(k)} == {"pro", "con"}
        for i, a in enumerate(ids) for b in ids[i + 1 :] for k in finals[a]
    )
    agreed = [g for g in result.common_ground if g.source == "stances"]
    result.regime, result.regime_description = regime(
        detected, cards, len(result.camps), agreed, opposed, assumptions=len(assumptions)
    )
    result.concession_trail = concessions(sp)
    # the result fields every engine fills
    result.fault_lines = [f"{c.question} [{c.disagreement_type.value}]" for c in cards] + [
        f"{c.statement} [{c.disagreement_type.value}]" for c in assumptions if c.disagreement_type
    ]
    result.flip_conditions = {
        pid: list(dict.fromkeys(f for c in cards if pid in c.personas and (f := c.personas[pid].falsifier)))
        for pid in ids
    }
    result.resolution_paths = [c.resolution for c in cards if c.resolution]
    # the evidence each persona's card positions rest on: the cited words and their source
    result.evidence_ledger = {
        pid: list(dict.fromkeys(
            f'"{g.text}" ({g.source})' if g.source else f'"{g.text}"'
            for c in cards if pid in c.personas for g in c.personas[pid].grounding
        ))
        for pid in ids
    }
    return shifts
