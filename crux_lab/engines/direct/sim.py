"""The simulator's answer to the one-call baselines (``direct_cards`` / ``cot_cards``), registered
by :mod:`crux_lab.engines.direct.direct`, which declares the two purposes.

One analyst call, an extractor: it knows only what its prompt shows, the topic and each
persona's contract (informed: each persona's system prompt, whose stance lines it reads as they
say: the persona's answer, yes, no or undecided, to a claim's question). It reads which claims the topic and the contracts
state (:meth:`SimContext.recognize`, misread at the ``misread`` rate) and each persona's stance
on a claim from the wording of the contract sentence that states it (a persona whose contract
says nothing on a claim is NUANCED). It never looks at a persona's planted stances, so on the
simulator it finds only what the contracts say outright. ``direct`` reads whole sentences;
``cot`` reasons first, so it also reads clauses and, as its prompt asks, drops a question that
merely restates the topic when it has found a premise under it. Questions are in its own words
(:meth:`SimContext.paraphrase`), types its own classification, falsifiers read from each
contract's "would change their mind" line.
"""

from __future__ import annotations

import re
from typing import Any

from crux_lab.llm.base import LLMRequest
from crux_lab.llm.simulated.core import SimContext, split_sentences
from crux_lab.llm.simulated.handlers_worldview import _DOUBT, _NEG, read_as_topic
from crux_lab.models.domain import DisagreementType
from crux_lab.personas.prompt import read_stance_lines


def _contract_claims(ctx: SimContext, text: str, clauses: bool) -> dict[str, str]:
    """Proposition id -> the contract sentence (or clause) that states it, as read; a stance
    line (an informed call's system prompt) is read whole, its question naming the claim."""
    found: dict[str, str] = {}
    for line in read_stance_lines(text):
        text = text.replace("- " + line.line, "")
        prop = ctx.recognize(line.question)
        if prop is not None and prop.id not in found:
            found[prop.id] = line.line
    for sentence in split_sentences(text):
        parts = re.split(r";\s+|:\s+", sentence) if clauses else [sentence]
        for part in parts:
            prop = ctx.recognize(part)
            if prop is not None and prop.id not in found:
                found[prop.id] = part
    return found


def _falsifier(text: str) -> str | None:
    """The contract's own 'what would change their mind' line, if it has one."""
    for line in text.splitlines():
        if line.lower().startswith("what would change their mind:"):
            return line.split(":", 1)[1].strip() or None
    return None


def _read_stance(stated: dict[str, str], prop_id: str) -> str:
    """A persona's stance on a claim as its description words it: a stance line of an informed
    call's system prompt as it answers, else from the sentence's wording; uncertain when it
    says nothing."""
    sentence = stated.get(prop_id)
    if sentence is not None and (lines := read_stance_lines("- " + sentence)):
        return lines[0].stance
    if sentence is None or _DOUBT.search(sentence):
        return "uncertain"
    return "con" if _NEG.search(sentence) else "pro"


def baseline_cards(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Crux cards for the claims the call considers on which imagined stances split."""
    careful = request.purpose == "cot_cards"
    contracts: dict[str, str] = dict(ctx.hints.extra.get("contracts", {}))
    ids = [pid for pid in contracts if pid in ctx.personas]
    names = {pid: ctx.personas[pid].name for pid in ids}
    m = re.search(r"at most (\d+) crux cards", request.user)
    max_cards = int(m.group(1)) if m else 6
    stated = {pid: _contract_claims(ctx, contracts[pid], clauses=careful) for pid in ids}
    gist = ctx.recognize(ctx.hints.topic)
    considered = [gist.id] if gist is not None else []
    for pid in ids:
        considered += [x for x in stated[pid] if x not in considered]
    cards: list[dict[str, Any]] = []
    for prop_id in considered:
        stances = {pid: _read_stance(stated[pid], prop_id) for pid in ids}
        if not {"pro", "con"} <= set(stances.values()):
            continue
        prop = ctx.propositions[prop_id]
        question = ctx.paraphrase(prop, "question")
        if ctx.chance(ctx.knobs.vague_crux):
            question = "Whether they see the issue differently"
        dtype = ctx.classify(question)
        positions = []
        for pid in ids:
            stance = stances[pid]
            said = stated[pid].get(prop_id, "").strip().rstrip(".")
            reasoning = {
                "pro": f"{names[pid]} would say yes; the description says: {said}",
                "con": f"{names[pid]} would say no; the description says: {said}",
            }.get(stance, f"{names[pid]}'s view on this is not clear from the description.")
            positions.append(
                {
                    "persona": pid,
                    "position": {"pro": "YES", "con": "NO"}.get(stance, "NUANCED"),
                    "reasoning": reasoning,
                    "falsifier": _falsifier(contracts[pid]),
                }
            )
        yes = [names[p] for p in ids if stances[p] == "pro"]
        no = [names[p] for p in ids if stances[p] == "con"]
        turn = "the claim itself" if dtype is DisagreementType.claim else f"a question of {dtype.value}"
        verb = {True: "answer", False: "answers"}
        diagnosis = (
            f"{' and '.join(yes)} {verb[len(yes) > 1]} yes where {' and '.join(no)} "
            f"{verb[len(no) > 1]} no; the split is {turn}."
        )
        cards.append(
            {
                "question": question,
                "disagreement_type": dtype.value,
                "diagnosis": diagnosis,
                "positions": positions,
                "_restates": read_as_topic(ctx, prop, ctx.hints.topic),
            }
        )
    if careful and any(not c["_restates"] for c in cards):
        cards = [c for c in cards if not c["_restates"]]
    for c in cards:
        del c["_restates"]
    out: dict[str, Any] = {"cards": cards[:max_cards]}
    if careful:
        out["reasoning"] = (
            f"I considered {len(considered)} claims that bear on the topic or that the descriptions "
            f"state; on {len(cards)} of them the people described take opposite sides."
        )
    return out
