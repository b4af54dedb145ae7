"""Simulator handler for the persona build pipeline (purpose ``extract_beliefs``).

The answer is derived deterministically from the passage and the persona's ground truth:

1. the passage is traced back to corpus chunk ids (``hints.extra["source_chunk_ids"]`` when a caller shows them, else by
   matching the text against the corpus);
2. with a ground-truth belief graph, the triples are the graph's edges whose ``sourceChunks``
   include one of those chunks, and the standalone beliefs its nodes grounded in them — so a
   build with the simulator reproduces the curated graph;
3. without one, each stance grounded in the chunk yields its reason as a belief and a triple
   reason -> proposition (polarity by stance), and "X because Y" sentences yield Y -> X.

The ``missed_attack`` knob drops triples with that probability (real extractors miss edges).
"""

from __future__ import annotations

import re
from typing import Any

from crux_lab.llm.base import LLMRequest
from crux_lab.llm.purposes import Purpose
from crux_lab.llm.simulated.core import SimContext, handler
from crux_lab.personas.models import Persona

_PASSAGE = re.compile(r'"""\n(.*)\n"""', re.DOTALL)
_BECAUSE = re.compile(r"([^.!?]{8,}?)\s+because\s+([^.!?]{8,})[.!?]", re.IGNORECASE)


def _passage(request: LLMRequest) -> str:
    m = _PASSAGE.search(request.user)
    return (m.group(1) if m else request.user).strip()


def _source_ids(ctx: SimContext, persona: Persona, passage: str) -> set[str]:
    given = ctx.hints.extra.get("source_chunk_ids")
    if given:
        return {str(x) for x in given}
    norm = " ".join(passage.split())
    out = set()
    for c in persona.corpus:
        text = " ".join(c.text.split())
        if text and (text in norm or norm in text):
            out.add(c.id)
    return out


@handler(Purpose.extract_beliefs)
def extract_beliefs(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    persona = ctx.persona()
    passage = _passage(request)
    ids = _source_ids(ctx, persona, passage)
    triples: list[dict[str, Any]] = []
    beliefs: list[dict[str, Any]] = []
    if persona.beliefs is not None and persona.beliefs.nodes:
        nodes = {n.id: n for n in persona.beliefs.nodes}
        for e in persona.beliefs.edges:
            if ids & set(e.source_chunks) and e.from_ in nodes and e.to in nodes:
                if ctx.chance(ctx.knobs.missed_attack):
                    continue
                a, b = nodes[e.from_], nodes[e.to]
                triples.append({"cause": a.concept, "effect": b.concept, "polarity": e.polarity,
                                "cause_type": a.type, "effect_type": b.type})
        for n in persona.beliefs.nodes:
            if ids & set(n.grounding):
                beliefs.append({"concept": n.concept, "type": n.type})
    else:
        for s in persona.stances.stances:
            if not ids & set(s.grounding):
                continue
            beliefs.append({"concept": s.reason, "type": "inference"})
            prop = ctx.propositions.get(s.proposition_id)
            if prop is not None and s.stance != "uncertain" and not ctx.chance(ctx.knobs.missed_attack):
                triples.append({"cause": s.reason, "effect": prop.text, "polarity": 1 if s.stance == "pro" else -1,
                                "cause_type": "inference", "effect_type": "inference"})
        for m in _BECAUSE.finditer(passage):
            effect, cause = m.group(1).strip(" ,;"), m.group(2).strip(" ,;")
            triples.append({"cause": cause, "effect": effect, "polarity": 1,
                            "cause_type": "factual_claim", "effect_type": "inference"})
    return {"triples": triples, "beliefs": beliefs}
