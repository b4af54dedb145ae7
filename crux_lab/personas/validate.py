"""Check a persona library against the format and the ground-truth design rules.

``crux-lab personas check`` runs :func:`check_library`. Errors break loading, grounding or the
simulator (a stance linking a node that does not exist, a persona missing from a deck's
folder); warnings break the design that benchmarks rely on (every pair of personas in a deck
opposed on >= 2 propositions and agreeing on >= 1; all six disagreement types covered; 8–12
propositions; 20–50 belief nodes; real people paraphrased, archetypes synthetic).
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass
from typing import Literal

from crux_lab.models.domain import DisagreementType
from crux_lab.personas.loader import PersonaError, list_personas, load_decks, load_persona
from crux_lab.personas.models import AnchorExcerpt, CorpusChunk, Deck, Persona

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Issue:
    severity: Severity
    where: str  # persona id, deck id or "deck/persona"
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.where}: {self.message}"


def stance_support(p: Persona, proposition_id: str) -> float | None:
    """Net support the belief graph gives a stance: the sum of polarity × confidence of the edges
    into the stance's first linked node (its position). None when there is nothing to sum.

    Positive means the persona's own beliefs back the side it takes; negative means the graph
    argues against its stated stance (a ground-truth bug, or a real tension worth a look).
    """
    s = p.stance_on(proposition_id)
    if s is None or p.beliefs is None or not s.belief_node_ids:
        return None
    target = s.belief_node_ids[0]
    into = [e for e in p.beliefs.edges if e.to == target]
    return round(sum(e.polarity * e.confidence for e in into), 3) if into else None


def check_persona(p: Persona) -> list[Issue]:
    """Integrity of one persona: links between stances, belief graph and corpus; excerpt kinds."""
    out: list[Issue] = []
    chunks = p.chunk_ids()
    if p.beliefs is None:
        out.append(Issue("warning", p.id, "no beliefs.json: contract-only prompts (run `crux-lab personas build`)"))
        nodes: set[str] = set()
    else:
        nodes = {n.id for n in p.beliefs.nodes}
        if len(nodes) != len(p.beliefs.nodes):
            out.append(Issue("error", p.id, "beliefs.json has duplicate node ids"))
        if not 20 <= len(p.beliefs.nodes) <= 50:
            out.append(Issue("warning", p.id, f"{len(p.beliefs.nodes)} belief nodes; 20–50 is the useful range for retrieval"))
        for n in p.beliefs.nodes:
            missing = [c for c in n.grounding if c not in chunks]
            if missing:
                out.append(Issue("error", p.id, f"node {n.id} is grounded in unknown corpus chunk(s) {missing}"))
            if not n.grounding:
                out.append(Issue("warning", p.id, f"node {n.id} has no grounding chunk"))
        for e in p.beliefs.edges:
            if e.from_ not in nodes or e.to not in nodes:
                out.append(Issue("error", p.id, f"edge {e.from_} -> {e.to} names an unknown node"))
            missing = [c for c in e.source_chunks if c not in chunks]
            if missing:
                out.append(Issue("error", p.id, f"edge {e.from_} -> {e.to} cites unknown chunk(s) {missing}"))
    for s in p.stances.stances:
        if p.beliefs is not None:
            dangling = [n for n in s.belief_node_ids if n not in nodes]
            if dangling:
                out.append(Issue("error", p.id, f"stance on {s.proposition_id} links unknown belief node(s) {dangling}"))
        missing = [c for c in s.grounding if c not in chunks]
        if missing:
            out.append(Issue("error", p.id, f"stance on {s.proposition_id} cites unknown chunk(s) {missing}"))
        support = stance_support(p, s.proposition_id)
        if s.stance != "uncertain" and support is not None and support < 0:
            out.append(Issue("warning", p.id, f"the belief graph argues against its {s.stance} stance on {s.proposition_id} (net support {support})"))
        for t in s.flip_conditions:
            if t.kind != "concession" and not t.keywords:
                out.append(Issue("error", p.id, f"flip condition {t.id} has no keywords, so it can never fire"))
            if t.proposition_id not in (None, s.proposition_id):
                out.append(Issue("warning", p.id, f"flip condition {t.id} is filed under {s.proposition_id} but names {t.proposition_id}"))
    texts: list[CorpusChunk | AnchorExcerpt] = [*p.corpus, *p.contract.anchor_excerpts, *p.voice.voice_examples]
    if p.contract.kind == "synthetic":
        wrong = {t.kind for t in texts} - {"synthetic"}
        if wrong:
            out.append(Issue("warning", p.id, f"synthetic archetype has text marked {sorted(wrong)}; mark it synthetic"))
    else:
        if any(t.kind == "synthetic" for t in texts):
            out.append(Issue("error", p.id, "a real person's text is marked synthetic; use paraphrase"))
        for x in texts:
            if x.kind == "quote" and not x.source.strip():
                out.append(Issue("error", p.id, "a verbatim quote without a source; add a verifiable source or mark it paraphrase"))
    return out


def check_deck(deck: Deck, personas: dict[str, Persona]) -> list[Issue]:
    """The ground-truth design of one deck."""
    out: list[Issue] = []
    if not 8 <= len(deck.propositions) <= 12:
        out.append(Issue("warning", deck.id, f"{len(deck.propositions)} propositions; the design asks for 8–12"))
    prop_ids = {pr.id for pr in deck.propositions}
    members = [personas[pid] for pid in deck.persona_ids if pid in personas]
    for pid in deck.persona_ids:
        if pid not in personas:
            out.append(Issue("error", deck.id, f"persona {pid} is listed but has no loadable folder"))
    for p in members:
        held = {s.proposition_id for s in p.stances.stances}
        missing = sorted(prop_ids - held)
        if missing:
            out.append(Issue("error", f"{deck.id}/{p.id}", f"no stance on {missing}"))
    for a, b in itertools.combinations(members, 2):
        opposed = agreed = 0
        for pid in prop_ids:
            sa, sb = a.stance_on(pid), b.stance_on(pid)
            if sa is None or sb is None:
                continue
            opposed += {sa.stance, sb.stance} == {"pro", "con"}
            agreed += sa.stance == sb.stance != "uncertain"
        if opposed < 2:
            out.append(Issue("warning", deck.id, f"{a.id} and {b.id} are opposed on only {opposed} proposition(s); aim for >= 2"))
        if agreed < 1:
            out.append(Issue("warning", deck.id, f"{a.id} and {b.id} agree on nothing; give them real common ground"))
    types = {pr.disagreement_type for pr in deck.propositions if pr.disagreement_type}
    missing_types = sorted(t.value for t in set(DisagreementType) - types)
    if missing_types:
        out.append(Issue("warning", deck.id, f"no contested proposition of type(s) {missing_types}"))
    for pr in deck.propositions:
        stances = {s.stance for p in members if (s := p.stance_on(pr.id)) is not None}
        if pr.disagreement_type is None and "con" in stances and "pro" in stances:
            out.append(Issue("warning", deck.id, f"{pr.id} is marked common ground but personas oppose each other on it"))
        if pr.disagreement_type is not None and not {"pro", "con"} <= stances:
            out.append(Issue("warning", deck.id, f"{pr.id} is marked contested ({pr.disagreement_type.value}) but nobody opposes"))
        for p in members:
            s = p.stance_on(pr.id)
            if s is not None and s.stance != "uncertain" and pr.disagreement_type and s.disagreement_type not in (None, pr.disagreement_type):
                out.append(Issue("warning", f"{deck.id}/{p.id}", f"stance on {pr.id} says {s.disagreement_type.value}, the deck says {pr.disagreement_type.value}"))
    return out


def check_library() -> list[Issue]:
    """All issues of the library at :func:`crux_lab.personas.loader.persona_root`."""
    out: list[Issue] = []
    personas: dict[str, Persona] = {}
    for pid in list_personas():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                personas[pid] = load_persona(pid)
        except PersonaError as exc:
            out.append(Issue("error", pid, str(exc)))
            continue
        out += check_persona(personas[pid])
    try:
        decks = load_decks()
    except PersonaError as exc:
        return [*out, Issue("error", "decks.json", str(exc))]
    in_decks = {pid for d in decks for pid in d.persona_ids}
    for pid in sorted(set(personas) - in_decks):
        out.append(Issue("warning", pid, "not in any deck of decks.json, so it has no propositions"))
    for d in decks:
        out += check_deck(d, personas)
    return out
