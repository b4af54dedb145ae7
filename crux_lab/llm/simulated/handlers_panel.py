"""Simulator handlers for the panel and crux-room engines.

Purposes: ``decompose``, ``detect_disagreement``, ``exit_check``, ``card``, ``summarize`` and
``anti_sycophancy_check``. Speech itself (opening, take, rebuttal, crux_turn, closing,
channel_message) is answered by :mod:`handlers_speech`.

Every answer is derived from the personas' ground truth and the hints' turn metadata
(``proposition_ids``/``stance`` copied from earlier replies), never from the prompt text, and
with a little seeded noise so that majority votes and exit checks have work to do.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import combinations
from typing import Any

from crux_lab.llm.base import LLMRequest
from crux_lab.llm.simulated.core import ReadTurn, SimContext, fired_trigger, handler, lower_first
from crux_lab.personas.models import Proposition

# Probability that one detection vote misses a real opposition, or invents a vague one.
DETECT_MISS = 0.15
DETECT_SPURIOUS = 0.1
# Probability that an exit check answers wrongly.
EXIT_NOISE = 0.1

CARD_POSITION = {"pro": "YES", "con": "NO"}
_CONCEDE = re.compile(r"\b(i'll grant|you're right|you are right|i now agree|fair point|i concede)\b", re.I)


def _schema_fields(request: LLMRequest) -> set[str]:
    return set(request.output_schema.model_fields) if request.output_schema is not None else set()


def _name(ctx: SimContext, pid: str) -> str:
    return ctx.personas[pid].name if pid in ctx.personas else pid


def _opposed_pairs(ctx: SimContext, turns: list[ReadTurn]) -> list[tuple[str, str, Proposition]]:
    """(a, b, proposition) for each pair of speakers whose turns took opposite sides on one
    proposition, in order of first appearance."""
    last: dict[tuple[str, str], str] = {}
    for t in turns:
        for pid in t.proposition_ids:
            if t.stance:
                last[(t.speaker_id, pid)] = t.stance
    speakers = list(dict.fromkeys(t.speaker_id for t in turns))
    out = []
    for a, b in combinations(speakers, 2):
        for (spk, pid), stance in last.items():
            if spk != a or pid not in ctx.propositions:
                continue
            other = last.get((b, pid))
            if {stance, other} == {"pro", "con"}:
                out.append((a, b, ctx.propositions[pid]))
                break
    return out


@handler("decompose")
def decompose(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Aspects from the deck's proposition aspects, most relevant to the topic first."""
    n = int(ctx.hints.extra.get("n_aspects", 3))
    props = ctx.rank_propositions(ctx.hints.topic)
    groups: dict[str, list[Proposition]] = {}
    for p in props:
        groups.setdefault(p.aspect or p.question, []).append(p)
    aspects = []
    for i, (label, members) in enumerate(list(groups.items())[:n], start=1):
        questions = "; ".join(lower_first(m.question.rstrip("?")) for m in members[:3])
        aspects.append({"id": f"a{i}", "label": label, "description": f"Whether {questions}."})
    if not aspects:
        aspects = [{"id": "a1", "label": ctx.hints.topic, "description": "The topic as a whole."}]
    return {"aspects": aspects}


@handler("detect_disagreement")
def detect(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Boolean decomposition from the takes' metadata: a pair with opposite stances on one
    proposition is a direct, specific opposition; relevance is keyword overlap with the topic."""
    items = []
    context = f"{ctx.hints.topic} {ctx.hints.aspect or ''}"
    for a, b, prop in _opposed_pairs(ctx, ctx.turns):
        if ctx.chance(DETECT_MISS):
            continue
        items.append(
            {
                "has_direct_opposition": True,
                "has_specific_claim": not ctx.chance(ctx.knobs.vague_crux),
                "topic_relevant": ctx.relevance(prop, context) > 0 or bool(prop.aspect and prop.aspect == ctx.hints.aspect),
                "personas": [a, b],
                "claim": prop.question,
            }
        )
    speakers = list(dict.fromkeys(t.speaker_id for t in ctx.turns))
    if len(speakers) >= 2 and ctx.chance(DETECT_SPURIOUS):
        a, b = ctx.rng.sample(speakers, 2)
        items.append(
            {
                "has_direct_opposition": True,
                "has_specific_claim": False,
                "topic_relevant": True,
                "personas": [a, b],
                "claim": "they see the issue differently",
            }
        )
    return {"disagreements": items}


def _room_props(ctx: SimContext) -> list[str]:
    counts = Counter(pid for t in ctx.turns for pid in t.proposition_ids)
    if (focus := ctx.recognize(ctx.hints.focus or "")) is not None:
        counts[focus.id] += 1000
    return [pid for pid, _ in counts.most_common()]


@handler("exit_check")
def exit_check(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Exit check and convergence check, answered from the room's turns."""
    turns = ctx.turns
    last_by: dict[str, ReadTurn] = {}
    for t in turns:
        last_by[t.speaker_id] = t
    finals = list(last_by.values())[-2:]
    if "same_core" in _schema_fields(request):
        same = len(finals) == 2 and bool(set(finals[0].proposition_ids) & set(finals[1].proposition_ids))
        if ctx.chance(EXIT_NOISE):
            same = not same
        core = ""
        if same and finals[0].proposition_ids and finals[0].proposition_ids[0] in ctx.propositions:
            core = ctx.propositions[finals[0].proposition_ids[0]].question
        return {"same_core": same, "core": core}
    exchange = int(ctx.hints.extra.get("exchange_turns", len(turns)))
    conceded = any(t.move == "CONCEDE" for t in turns[-2:])
    shared = len(finals) == 2 and bool(set(finals[0].proposition_ids) & set(finals[1].proposition_ids))
    opposed = shared and {finals[0].stance, finals[1].stance} == {"pro", "con"}
    narrowing = any(t.move in ("PROPOSE_CRUX", "REFRAME") for t in turns[-2:])
    surfaced = conceded or (opposed and (exchange >= 4 or narrowing))
    if ctx.chance(EXIT_NOISE):
        surfaced = not surfaced
    return {"crux_surfaced": surfaced, "reason": "positions narrowed to one claim" if surfaced else "still broad"}


@handler("card")
def card(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """A crux card built from the room's turns and the personas' ground truth."""
    room = list(ctx.hints.persona_ids)
    ranked = _room_props(ctx)
    prop = ctx.propositions.get(ranked[0]) if ranked else None
    vague = ctx.chance(ctx.knobs.vague_crux)
    personas = []
    dtype = None
    stances: dict[str, str | None] = {}
    for pid in room:
        persona = ctx.persona(pid)
        truth = persona.stance_on(prop.id) if prop else None
        stance = ctx.current_stance(pid, prop.id) if prop else None
        stances[pid] = stance
        if truth is not None and truth.disagreement_type is not None and dtype is None:
            dtype = truth.disagreement_type.value
        falsifier = truth.flip_conditions[0].description if truth and truth.flip_conditions else persona.contract.flip_conditions
        personas.append(
            {
                "persona_id": pid,
                "position": CARD_POSITION.get(stance or "", "NUANCED"),
                "reasoning": truth.reason if truth else "No stated view.",
                "falsifier": falsifier or None,
                "grounding_quotes": list(truth.grounding) if truth else [],
            }
        )
    moved = [
        pid for pid in room if prop and (t := ctx.truth(pid, prop.id)) is not None and stances[pid] != t.stance
    ]
    resolved = bool(moved) and {s for s in stances.values()} != {"pro", "con"}
    if vague or prop is None:
        question = "Whether they see the issue differently"
        diagnosis = "They have different perspectives on the topic."
        dtype = "claim"
    else:
        question = prop.question
        names = " and ".join(_name(ctx, p) for p in room)
        diagnosis = f"{names} split on {lower_first(prop.question.rstrip('?'))}; the split is a {dtype or 'claim'} dispute."
    resolution = None
    if resolved:
        resolution = f"{', '.join(_name(ctx, p) for p in moved)} moved after a named argument."
    elif dtype == "values":
        resolution = "Irreducible: a difference of values, which can only be acknowledged."
    return {
        "question": question,
        "disagreement_type": dtype or "claim",
        "diagnosis": diagnosis,
        "resolved": resolved,
        "resolution": resolution,
        "personas": personas,
    }


@handler("summarize")
def summarize(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """One or two sentences: who argued what, and where they clashed."""
    firsts: dict[str, ReadTurn] = {}
    for t in ctx.turns:
        firsts.setdefault(t.speaker_id, t)
    parts = []
    for pid, t in list(firsts.items())[:4]:
        prop = ctx.propositions.get(t.proposition_ids[0]) if t.proposition_ids else None
        if prop is not None and t.stance in ("pro", "con"):
            verb = "affirmed" if t.stance == "pro" else "denied"
            parts.append(f"{_name(ctx, pid)} {verb} that {lower_first(prop.text.rstrip('.'))}")
    text = ("; ".join(parts) + ".") if parts else "The panel restated general views."
    clashes = _opposed_pairs(ctx, ctx.turns)
    if clashes:
        a, b, prop = clashes[0]
        text += f" {_name(ctx, a)} and {_name(ctx, b)} clashed on {lower_first(prop.question.rstrip('?'))}."
    return {"summary": text}


@handler("anti_sycophancy_check")
def anti_sycophancy_check(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Judge the last turn: does it capitulate, and if so, for a named reason or a met condition?"""
    if not ctx.turns:
        return {"capitulates": False}
    turn = ctx.turns[-1]
    me = ctx.hints.speaker_id or turn.speaker_id
    capitulates = turn.move == "CONCEDE" or bool(_CONCEDE.search(turn.text))
    named = "met my condition" in turn.text.lower()
    met = False
    previous = [t for t in ctx.turns[:-1] if t.speaker_id != me]
    if previous and turn.proposition_ids and me in ctx.personas:
        truth = ctx.truth(me, turn.proposition_ids[0])
        met = truth is not None and fired_trigger(truth, previous[-1]) is not None
    return {"capitulates": capitulates, "names_specific_claim": named, "flip_condition_met": met}
