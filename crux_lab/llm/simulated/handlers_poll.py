"""Simulator handlers for the poll (``crux_lab.engines.poll``): a persona answers one question
alone, as a provider's model would, from the request's text.

- ``poll``: who is asked is read from the system prompt it was given (the persona its prompt
  names first); the claim is recognised in the question's words (:meth:`SimContext.recognize`)
  and the question's polarity read from its wording ("Is it true that it is not the case that
  ..." asks the negation). The answer is that persona's own stance on the claim (its mind, as a
  system prompt is a real model's): YES for a claim it holds, NO for one it rejects, UNSURE when
  it is undecided. A question on a claim it has no stance on (or on none it recognises) it
  answers as its closest view that is not undecided, by shared words (a Polis persona asked a
  held-out statement answers from its mind); UNSURE when the question shares no word with any;
  its confidence, and its reason in its
  own words, in the poll's words (HOLD for yes, REJECT for no). ``drift`` makes it answer the
  opposite.
- ``pivot``: "Suppose it were settled that the answer is X. Would your answer to <topic>
  change?" The persona reads the topic in the question and its own stance on it: YES when the
  claim is the topic's own, or one of its flip conditions on the topic names the claim, or the
  two stances rest on two or more of the same beliefs, or on one that it holds firmly (0.8 or
  more); PARTLY on one shared belief held less firmly; NO otherwise.
"""

from __future__ import annotations

import re
from typing import Any

from crux_lab.llm.base import LLMRequest
from crux_lab.llm.purposes import Purpose
from crux_lab.llm.simulated.core import OPPOSITE, SimContext, handler, lower_first, read_stance
from crux_lab.personas.models import Persona, Proposition

_QUESTION = re.compile(r"^Question:\s*(.+)$", re.M)
_ANSWERED = re.compile(r"You answered (YES|NO) to this question:\s*(.+)$", re.M)
_TOPIC = re.compile(r'Would your answer to "(.+)" change\?')


def asked(ctx: SimContext, request: LLMRequest) -> Persona:
    """The persona a request's system prompt speaks to: the one it names first."""
    system = request.system.lower()
    named = [(system.find(p.name.lower()), pid) for pid, p in ctx.personas.items() if p.name.lower() in system]
    if named:
        return ctx.personas[min(named)[1]]
    return ctx.persona()  # a prompt that names no one: the request's speaker


def _own_view(ctx: SimContext, persona: Persona, question: str) -> tuple[Proposition | None, str, float, str]:
    """``(claim, answer, confidence, reason)``: the persona's answer to a yes/no question."""
    prop = ctx.recognize(question)
    truth = persona.stance_on(prop.id) if prop is not None else None
    if truth is None:  # a claim it has no view on: it answers as its closest view, by shared words
        held = [ctx.propositions[s.proposition_id] for s in persona.stances.stances
                if s.stance != "uncertain" and s.proposition_id in ctx.propositions]
        closest = max(held, key=lambda p: (ctx.relevance(p, question), p.id), default=None)
        if closest is not None and ctx.relevance(closest, question) > 0:
            prop, truth = closest, persona.stance_on(closest.id)
    if prop is None or truth is None:
        return prop, "UNSURE", 0.3, "I have no settled view on that question."
    stance = truth.stance
    if ctx.chance(ctx.knobs.drift):
        stance = OPPOSITE[stance]
    if read_stance(question) == "con":  # the question asks the claim's negation
        stance = OPPOSITE[stance]
    answer = {"pro": "YES", "con": "NO", "uncertain": "UNSURE"}[stance]
    reason = truth.reason.strip()
    return prop, answer, truth.confidence if answer != "UNSURE" else min(truth.confidence, 0.5), reason


@handler(Purpose.poll)
def poll(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """The asked persona's answer to the question, from its own stance."""
    persona = asked(ctx, request)
    m = _QUESTION.search(request.user)
    question = m.group(1).strip() if m else request.user
    _, answer, confidence, reason = _own_view(ctx, persona, question)
    return {"answer": {"YES": "HOLD", "NO": "REJECT"}.get(answer, answer), "reason": reason, "confidence": round(confidence, 2)}


def _nodes(persona: Persona, prop_id: str) -> set[str]:
    truth = persona.stance_on(prop_id)
    return {n for n in (truth.belief_node_ids if truth else []) if "-pos-" not in n}


@handler(Purpose.pivot)
def pivot(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Would the persona's answer on the topic change, were the claim settled against it?"""
    persona = asked(ctx, request)
    m, t = _ANSWERED.search(request.user), _TOPIC.search(request.user)
    question = m.group(2).strip() if m else ""
    topic = t.group(1).strip() if t else ctx.hints.topic
    prop = ctx.recognize(question) if question else None
    on_topic = ctx.recognize(topic) if topic else None
    if prop is None:
        return {"answer": "NO", "reason": "That question does not touch what I think about this."}
    if on_topic is not None and on_topic.id == prop.id:
        return {"answer": "YES", "reason": "That is the question itself, so settling it settles my answer."}
    held = persona.stance_on(on_topic.id) if on_topic is not None else None
    named = held is not None and any(f.proposition_id == prop.id for f in held.flip_conditions)
    shared = len(_nodes(persona, prop.id) & _nodes(persona, on_topic.id)) if on_topic is not None else 0
    mine = persona.stance_on(prop.id)
    if named or shared >= 2 or (shared == 1 and mine is not None and mine.confidence >= 0.8):
        return {"answer": "YES", "reason": f"My view on this rests on it: {lower_first(mine.reason) if mine else prop.text}"}
    if shared == 1:
        return {"answer": "PARTLY", "reason": "It would weaken one of my reasons, not the others."}
    return {"answer": "NO", "reason": "My answer stands on other grounds."}
