"""Simulator handlers for the shared purposes of the worldview step and the judges.

Purposes:

- ``worldview_positions`` (a persona speaks): its positions on the topic from its own ground
  truth (the propositions most relevant to the topic on which it holds a view), each with the
  assumptions it rests on (the stance's reason and the beliefs it links);
- ``crux_pairs`` (an extractor): reads the two personas' positions text it is shown, recognises
  which claim each position states (:meth:`SimContext.recognize`) and its stance from the
  wording, and lists the claims the two state with opposite stances as conflicting assumptions,
  typed by its own classification of the question and with a settling question in its own
  words (:meth:`SimContext.paraphrase`). As the prompt asks, a conflict that only restates the
  topic is left out.

And the judges (``judge``, ``judge_falsifiers``), which score from the planted ground truth
and say so. The one-call baselines' answer is beside their engine
(:mod:`crux_lab.engines.direct.sim`).
"""

from __future__ import annotations

import re
from typing import Any

from crux_lab.falsifiers import falsifier_score
from crux_lab.llm.base import LLMRequest
from crux_lab.llm.purposes import Purpose
from crux_lab.llm.simulated.core import (
    OPPOSITE,
    SimContext,
    deny,
    handler,
)
from crux_lab.models.domain import DisagreementType
from crux_lab.personas.models import Proposition

# Extractor's classification -> the worldview step's assumption types.
ASSUMPTION_TYPE = {
    DisagreementType.evidence: "empirical",
    DisagreementType.claim: "empirical",
    DisagreementType.premise: "causal",
    DisagreementType.horizon: "temporal",
    DisagreementType.values: "value",
    DisagreementType.definition: "boundary",
}

_NEG = re.compile(r"\b(not|no|never|nor|isn't|aren't|won't|doesn't|don't|cannot|can't|bubble|mania)\b", re.I)
_DOUBT = re.compile(r"\b(not sure|unsure|uncertain|undecided)\b", re.I)


def stance_of(sentence: str) -> str:
    """The stance a sentence takes on the claim it states: a doubt word reads as uncertain, a
    negation (or a dismissal: bubble, mania) as against, anything else as for.

    >>> stance_of("Bitcoin is a speculative mania, not a store of value."), stance_of("Rents fall.")
    ('con', 'pro')
    """
    if _DOUBT.search(sentence):
        return "uncertain"
    return "con" if _NEG.search(sentence) else "pro"


def read_as_topic(ctx: SimContext, prop: Proposition, topic: str) -> bool:
    """Does this claim merely restate the topic? (The reader recognises the topic as it: a
    check by meaning, where :func:`core.restates_in_words` checks by words.)"""
    hit = ctx.recognize(topic) if topic.strip() else None
    return hit is not None and hit.id == prop.id


# ---------------------------------------------------------------------------
# The worldview step
# ---------------------------------------------------------------------------


@handler(Purpose.worldview_positions)
def worldview_positions(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """The speaker's positions on the topic, from its ground truth, with their assumptions."""
    persona = ctx.persona()
    m = re.search(r"up to (\d+) claims", request.user)
    n = int(m.group(1)) if m else 4
    held = [p for p in ctx.rank_propositions(ctx.hints.topic) if (t := persona.stance_on(p.id)) and t.stance != "uncertain"]
    # The most relevant claims first, then the most confident: what the persona would lead with.
    top = sorted(held[: max(n * 2, n)], key=lambda p: -(persona.stance_on(p.id).confidence if persona.stance_on(p.id) else 0.0))[:n]  # type: ignore[union-attr]
    positions = []
    nodes = {x.id: x for x in persona.beliefs.nodes} if persona.beliefs is not None else {}
    for prop in top:
        truth = persona.stance_on(prop.id)
        assert truth is not None
        stance = truth.stance
        if ctx.chance(ctx.knobs.drift):
            stance = OPPOSITE[stance]
        body = prop.text.rstrip(".")
        text = body + "." if stance == "pro" else deny(body)
        assumptions = [truth.reason]
        assumptions += [nodes[i].concept for i in truth.belief_node_ids[:2] if i in nodes and nodes[i].concept != truth.reason]
        positions.append({"position": text, "assumptions": assumptions})
    return {"positions": positions}


def _read_positions(text: str) -> list[tuple[str, list[str]]]:
    """Numbered positions and the 'assumes:' lines under each, as shown in the prompt."""
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        s = line.strip()
        if m := re.match(r"\d+\.\s+(.*)", s):
            out.append((m.group(1), []))
        elif s.lower().startswith("assumes:") and out:
            out[-1][1].append(s.split(":", 1)[1].strip())
    return out


@handler(Purpose.crux_pairs)
def crux_pairs(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Conflicting assumptions between the two personas whose positions text it is shown."""
    shown: dict[str, str] = dict(ctx.hints.extra.get("positions", {}))
    ids = list(shown)
    if len(ids) < 2:
        return {"conflicts": []}
    read: dict[str, dict[str, tuple[str, list[str]]]] = {}
    for pid in ids:
        for position, assumptions in _read_positions(shown[pid]):
            prop = ctx.recognize(position)
            if prop is not None:
                read.setdefault(pid, {}).setdefault(prop.id, (stance_of(position), assumptions))
    conflicts = []
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            conflicts.extend(_conflicts(ctx, read.get(a, {}), read.get(b, {})))
    return {"conflicts": conflicts}


def _conflicts(
    ctx: SimContext, a: dict[str, tuple[str, list[str]]], b: dict[str, tuple[str, list[str]]]
) -> list[dict[str, Any]]:
    out = []
    for prop_id, (stance_a, assumptions_a) in a.items():
        other = b.get(prop_id)
        if other is None or {stance_a, other[0]} != {"pro", "con"}:
            continue
        prop = ctx.propositions[prop_id]
        if read_as_topic(ctx, prop, ctx.hints.topic):
            continue  # the prompt asks for the premise under the topic, not the topic again
        # framed from the first persona's side, as Qwen's reader frames it (the engine puts the
        # first of the pair on YES): its own sentence, which the other's contradicts
        question = ctx.paraphrase(prop, "question", stance=stance_a)
        if ctx.chance(ctx.knobs.vague_crux):
            question = "Whether they simply weigh things differently"
        out.append(
            {
                "assumption_a": (assumptions_a or ["(unstated)"])[0],
                "assumption_b": (other[1] or ["(unstated)"])[0],
                "type": ASSUMPTION_TYPE[ctx.classify(question)],
                "settling_question": question,
            }
        )
    return out


# ---------------------------------------------------------------------------
# Judges (the arena, falsifier concreteness)
# ---------------------------------------------------------------------------

SIMULATED_JUDGE = "Simulated judge: scored from the planted ground truth, not by reading quality."


def simulated_set_score(ctx: SimContext, cards: list[dict[str, Any]]) -> tuple[float, dict[str, int]]:
    """A card set's score from the planted ground truth: per distinct deck claim the set's
    questions name (as read), +1 if the debate's personas really split on it, -1 if it is the
    topic restated, +0.5 when the card's type is the planted type; +0.25 x the mean falsifier
    concreteness; -0.25 per card that names no planted claim."""
    ids = list(ctx.cast())
    topic_prop = ctx.recognize(ctx.hints.topic) if ctx.hints.topic else None
    seen: set[str] = set()
    tally = {"contested": 0, "restated": 0, "typed": 0, "unplanted": 0}
    score = 0.0
    for card in cards:
        prop = ctx.recognize(str(card.get("question", "")))
        if prop is None:
            tally["unplanted"] += 1
            score -= 0.25
            continue
        if prop.id in seen:
            continue
        seen.add(prop.id)
        if topic_prop is not None and prop.id == topic_prop.id:
            tally["restated"] += 1
            score -= 1.0
            continue
        stances = {ctx.current_stance(p, prop.id) for p in ids}
        if {"pro", "con"} <= stances:
            tally["contested"] += 1
            score += 1.0
        if prop.disagreement_type is not None and card.get("type") == prop.disagreement_type.value:
            tally["typed"] += 1
            score += 0.5
    falsifiers = [f for card in cards for f in card.get("falsifiers", [])]
    if falsifiers:
        score += 0.25 * sum(falsifier_score(f) for f in falsifiers) / len(falsifiers)
    return score, tally


@handler(Purpose.judge)
def judge(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """The arena's judge on the simulator: compares the two sets' ground-truth scores."""
    first, f_tally = simulated_set_score(ctx, list(ctx.hints.extra.get("first", [])))
    second, s_tally = simulated_set_score(ctx, list(ctx.hints.extra.get("second", [])))
    verdict = "tie" if abs(first - second) < 0.25 else "first" if first > second else "second"

    def say(t: dict[str, int]) -> str:
        return (f"{t['contested']} planted contested premise(s), {t['restated']} topic restatement(s), "
                f"{t['typed']} planted type(s) matched, {t['unplanted']} card(s) naming no planted claim")

    reason = f"{SIMULATED_JUDGE} Set 1: {say(f_tally)} (score {first:.2f}). Set 2: {say(s_tally)} (score {second:.2f})."
    return {"verdict": verdict, "reason": reason}


@handler(Purpose.judge_falsifiers)
def judge_falsifiers(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Falsifier concreteness on the simulator: the documented heuristic, and it says so."""
    falsifiers = [str(f) for f in ctx.hints.extra.get("falsifiers", [])]
    return {
        "concrete": [falsifier_score(f) >= 2 / 3 for f in falsifiers],
        "basis": "Simulated judge: the falsifier_score heuristic (observable, bounded, specific; "
        "concrete at 2 of 3 checks), not a reading.",
    }
