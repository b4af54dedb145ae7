"""The anti-sycophancy stack: measures against a persona giving in to social pressure rather than
to an argument, one switch per measure.

- ``anonymize_history``: the belief grounding leaves out the line on which belief the other
  side's claim presses (off: "your belief ... is challenged by the other side's claim"). A turn
  request names no other speaker in any case: it states the point to answer as a claim, with no
  transcript, so deference to a named opponent has nothing to attach to;
- ``position_statement``: each turn opens with the persona's committed position, so drift is
  visible;
- ``belief_anchoring``: the persona's relevant belief-graph nodes, with "conceding X would
  mean abandoning Y and Z", so a casual concession shows its cost;
- ``post_check``: a regex for politeness and capitulation patterns, then a fast-tier check;
  a capitulation with no named reason is regenerated once;
- ``update_rule``: the prompt allows updates only on a named claim or a met flip condition,
  and the position tracker refuses stance changes without one (repetition, rhetorical force or
  being outnumbered are no reason).

The switches live in the engines' parameters (:class:`AntiSycophancyParams`), so a sweep can
turn each off and measure its effect.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from crux_lab.personas.models import BeliefNode, Persona
from crux_lab.personas.retrieval import voiced
from crux_lab.tokens import count_tokens

# Surface patterns of AI politeness and capitulation ("great point", "I now agree"...).
POLITENESS = re.compile(
    r"\b(great|good|fair|excellent|valid) point\b"
    r"|\byou make a (good|great|valid|fair) (point|argument)\b"
    r"|\bI (completely |totally |fully )?agree( with you)?\b"
    r"|\byou'?re (absolutely |completely )?right\b|\byou are (absolutely )?right\b"
    r"|\bI understand your perspective\b|\bI see where you'?re coming from\b"
    r"|\bI now agree\b|\bI'?ll grant\b|\bI concede\b|\byou'?ve convinced me\b"
    r"|\bthat'?s a (great|good|fair) (point|argument)\b",
    re.IGNORECASE,
)
# Phrases that name the reason for an update (used when the fast-tier check is switched off).
NAMED_REASON = re.compile(
    r"met my condition|because you (showed|showed that|demonstrated)|the specific claim|changed my mind because|flip condition",
    re.IGNORECASE,
)


class AntiSycophancyParams(BaseModel):
    """One switch per measure (all on by default)."""

    anonymize_history: bool = True
    position_statement: bool = True
    belief_anchoring: bool = True
    post_check: bool = True
    update_rule: bool = True
    anchor_budget: int = Field(250, ge=50, le=600, description="Token budget of the belief anchor block.")


def looks_sycophantic(text: str, move: str | None = None) -> bool:
    """Cheap first stage of the post-generation check.

    >>> looks_sycophantic("That's a great point, I now agree.")
    True
    >>> looks_sycophantic("No. The halving data says otherwise.")
    False
    >>> looks_sycophantic("Fine.", move="CONCEDE")
    True
    """
    return move == "CONCEDE" or bool(POLITENESS.search(text))


def names_reason(text: str) -> bool:
    """Does the text name the reason for an update?

    >>> names_reason("You have met my condition: drawdowns shrank.")
    True
    """
    return bool(NAMED_REASON.search(text))


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 3}


def relevant_nodes(
    persona: Persona, focus: str, proposition_ids: Iterable[str] = (), k: int = 2, said: Sequence[str] = ()
) -> list[BeliefNode]:
    """The persona's belief nodes most relevant to ``focus``: the nodes its stances on
    ``proposition_ids`` rest on first, then the nodes that share words with ``focus``, those
    other beliefs rest on (conceding them would cost the most) before the rest. A node its own
    earlier turns ``said`` already make is not among them (:func:`voiced`)."""
    if persona.beliefs is None:
        return []
    nodes = {n.id: n for n in persona.beliefs.nodes if not voiced(n.concept, said)}
    chosen: list[BeliefNode] = []
    for pid in proposition_ids:
        stance = persona.stance_on(pid)
        if stance is not None:
            chosen += [nodes[i] for i in stance.belief_node_ids if i in nodes and nodes[i] not in chosen]
    q = _words(focus)
    supports = {e.from_ for e in persona.beliefs.edges if e.polarity == 1}
    ranked = sorted(
        nodes.values(),
        key=lambda n: (not q & _words(n.concept), n.id not in supports, -len(q & _words(n.concept)), -n.confidence, n.id),
    )
    for n in ranked:
        if len(chosen) >= k:
            break
        if n not in chosen and q & _words(n.concept):
            chosen.append(n)
    return chosen[:k]


def downstream(persona: Persona, node_id: str, limit: int = 3) -> list[BeliefNode]:
    """Nodes that depend on ``node_id`` through supporting edges (breadth first)."""
    if persona.beliefs is None:
        return []
    nodes = {n.id: n for n in persona.beliefs.nodes}
    out: list[BeliefNode] = []
    frontier = [node_id]
    seen = {node_id}
    while frontier and len(out) < limit:
        nxt = []
        for nid in frontier:
            for e in persona.beliefs.edges:
                if e.from_ == nid and e.polarity == 1 and e.to not in seen and e.to in nodes:
                    seen.add(e.to)
                    out.append(nodes[e.to])
                    nxt.append(e.to)
        frontier = nxt
    return out[:limit]


def _firmness(confidence: float) -> str:
    """How firmly a belief is held, in words.

    >>> _firmness(0.95), _firmness(0.7), _firmness(0.4)
    ('firmly', 'fairly firmly', 'tentatively')
    """
    return "firmly" if confidence >= 0.8 else "fairly firmly" if confidence >= 0.6 else "tentatively"


def belief_anchor(
    persona: Persona, focus: str, proposition_ids: Iterable[str] = (), budget: int = 250, said: Sequence[str] = ()
) -> str:
    """Commitment anchors: 'You hold, firmly: "X". Conceding this would mean abandoning your
    beliefs about Y and Z.' In words only: a real model (Qwen2.5-Coder-1.5B) copied the
    confidence numbers and corpus ids this once showed into its turns. Empty when the persona
    has no relevant nodes not yet ``said`` in its own turns."""
    lines = []
    for node in relevant_nodes(persona, focus, proposition_ids, said=said):
        lines.append(f'- You hold, {_firmness(node.confidence)}: "{node.concept}"')
        deps = downstream(persona, node.id)
        if deps:
            lines.append(
                "  Conceding this would mean abandoning your beliefs about "
                + " and ".join(f'"{d.concept}"' for d in deps)
                + "."
            )
    if not lines:
        return ""
    text = "Your reasoning anchors on this:\n" + "\n".join(lines)
    while len(text) > budget and count_tokens(text) > budget and len(lines) > 1:
        lines.pop()
        text = "Your reasoning anchors on this:\n" + "\n".join(lines)
    return text
