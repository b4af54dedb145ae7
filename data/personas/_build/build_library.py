"""Expand the deck specs in this folder into ``data/personas/<id>/*`` and ``decks.json``.

Run from the repo root: ``.venv/bin/python data/personas/_build/build_library.py``.
Every file is validated with crux_lab's pydantic models before it is written, and the deck
design rules (each pair disagrees on >= 2 propositions and agrees on >= 1, all six
disagreement types covered, stances on every proposition) are checked.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT.parent.parent))

from spec import DeckSpec, PersonaSpec  # noqa: E402

from crux_lab.personas.density import density_confidence  # noqa: E402
from crux_lab.personas.models import (  # noqa: E402
    AnchorExcerpt,
    BeliefEdge,
    BeliefGraph,
    BeliefNode,
    CorpusChunk,
    Deck,
    DeckFile,
    EvidencePolicy,
    FlipTrigger,
    PersonaContract,
    PersonaStances,
    Proposition,
    PropositionStance,
    VoiceProfile,
)

CURATED_AT = "2026-11-22T00:00:00+00:00"
STYLE_SOURCE = "style illustration written for crux_lab (not a quote)"


def excerpt_kind(p: PersonaSpec) -> str:
    return "paraphrase" if p.kind == "real" else "synthetic"


def chunk_id(p: PersonaSpec, key: str) -> str:
    return f"{p.prefix}-{key}"


def node_id(p: PersonaSpec, key: str, deck: DeckSpec) -> str:
    if key in {pr.key for pr in deck.propositions}:
        return f"{p.prefix}-pos-{key}"
    return f"{p.prefix}-{key}"


def prop_id(deck: DeckSpec, key: str) -> str:
    return f"{deck.id}.{key}"


def build_persona(p: PersonaSpec, deck: DeckSpec) -> dict[str, str]:
    kind = excerpt_kind(p)
    corpus = [
        CorpusChunk(id=chunk_id(p, k), text=t, source=src, date=date, kind=kind)  # type: ignore[arg-type]
        for k, (t, src, date) in p.corpus.items()
    ]
    by_key = {k: c for k, c in zip(p.corpus, corpus, strict=True)}
    anchors = [AnchorExcerpt(text=by_key[k].text, source=by_key[k].source, date=by_key[k].date, kind=kind) for k in p.anchors]  # type: ignore[arg-type]
    contract = PersonaContract(
        persona_id=p.id, name=p.name, handle=p.handle, kind=p.kind, version="1.0",  # type: ignore[arg-type]
        personality=p.personality, bias=p.bias, stakes=p.stakes, epistemology=p.epistemology,
        time_horizon=p.time_horizon, flip_conditions=p.flip_conditions,
        evidence_policy=EvidencePolicy(accepts=p.accepts, rejects=p.rejects, weighting=p.weighting),
        anchor_excerpts=anchors,
    )
    voice = VoiceProfile(
        speech_patterns=p.speech_patterns, vocabulary=p.vocabulary, forbidden_phrases=p.forbidden_phrases,
        voice_examples=[AnchorExcerpt(text=t, source=STYLE_SOURCE, date="", kind=kind) for t in p.voice_examples],  # type: ignore[arg-type]
        rhetorical_fingerprint=p.fingerprint,
    )
    props = {pr.key: pr for pr in deck.propositions}
    missing = set(props) - set(p.stances)
    if missing:
        raise SystemExit(f"{p.id}: no stance on {sorted(missing)}")

    def cids(keys: list[str]) -> list[str]:
        for k in keys:
            if k not in p.corpus:
                raise SystemExit(f"{p.id}: unknown chunk {k}")
        return [chunk_id(p, k) for k in dict.fromkeys(keys)]

    nodes: list[BeliefNode] = []
    for k, (concept, typ, chunks) in p.nodes.items():
        g = cids(chunks)
        nodes.append(BeliefNode(id=node_id(p, k, deck), concept=concept, type=typ, confidence=density_confidence(len(g)), grounding=g))  # type: ignore[arg-type]
    # One position node per proposition: the persona's own directional statement of its stance.
    for key, st in p.stances.items():
        g = cids(st.chunks)
        nodes.append(BeliefNode(id=node_id(p, key, deck), concept=st.reason, type="inference",
                                confidence=density_confidence(len(g)), grounding=g))
    node_ids = {n.id for n in nodes}
    edges: list[BeliefEdge] = []
    for a, b, pol, chunks in p.edges:
        ia, ib = node_id(p, a, deck), node_id(p, b, deck)
        if ia not in node_ids or ib not in node_ids:
            raise SystemExit(f"{p.id}: edge {a}->{b} names an unknown node")
        # Spec polarity is relative to the proposition's claim; the position node states the
        # persona's own side, so a 'con' stance flips it.
        if b in props and p.stances[b].stance == "con":
            pol = -pol
        g = cids(chunks)
        edges.append(BeliefEdge.model_validate({"from": ia, "to": ib, "polarity": pol, "confidence": density_confidence(len(g)), "sourceChunks": g}))
    beliefs = BeliefGraph(persona_id=p.id, nodes=nodes, edges=edges, extracted_at=CURATED_AT)
    stances = PersonaStances(persona_id=p.id, stances=[])
    for key, st in p.stances.items():
        pr = props[key]
        pid = prop_id(deck, key)
        triggers = [
            FlipTrigger(id=f"{p.prefix}.{key}.f{i}", kind=kind_, description=desc, proposition_id=pid,  # type: ignore[arg-type]
                        keywords=kws, new_stance=new)  # type: ignore[arg-type]
            for i, (kind_, desc, kws, new) in enumerate(st.triggers, start=1)
        ]
        for nk in st.nodes:
            if node_id(p, nk, deck) not in node_ids:
                raise SystemExit(f"{p.id}: stance {key} names unknown node {nk}")
        stances.stances.append(PropositionStance(
            proposition_id=pid, stance=st.stance, confidence=st.confidence, reason=st.reason,  # type: ignore[arg-type]
            flip_conditions=triggers,
            disagreement_type=pr.disagreement_type if st.stance != "uncertain" and pr.disagreement_type else None,  # type: ignore[arg-type]
            belief_node_ids=[node_id(p, key, deck)] + [node_id(p, nk, deck) for nk in st.nodes],
            grounding=cids(st.chunks),
        ))
    n = len(nodes)
    if not 20 <= n <= 50:
        raise SystemExit(f"{p.id}: {n} belief nodes (need 20–50)")
    dump = lambda m: json.dumps(m.model_dump(mode="json", by_alias=True), indent=2, ensure_ascii=False) + "\n"  # noqa: E731
    return {
        "contract.json": dump(contract),
        "voice.json": dump(voice),
        "beliefs.json": dump(beliefs),
        "stances.json": dump(stances),
        "corpus.jsonl": "".join(json.dumps(c.model_dump(mode="json", by_alias=True), ensure_ascii=False) + "\n" for c in corpus),
    }


def check_deck(deck: DeckSpec) -> None:
    types = {pr.disagreement_type for pr in deck.propositions if pr.disagreement_type}
    if not 8 <= len(deck.propositions) <= 12:
        raise SystemExit(f"{deck.id}: {len(deck.propositions)} propositions (need 8–12)")
    for a, b in itertools.combinations(deck.personas, 2):
        dis = [k for k in a.stances if {a.stances[k].stance, b.stances[k].stance} == {"pro", "con"}]
        agree = [k for k in a.stances if a.stances[k].stance == b.stances[k].stance != "uncertain"]
        if len(dis) < 2 or len(agree) < 1:
            raise SystemExit(f"{deck.id}: {a.id} vs {b.id} disagree on {dis}, agree on {agree}")
        print(f"  {a.id:>22} vs {b.id:<22} disagree {len(dis):>2}  agree {len(agree):>2}")
    print(f"  {deck.id}: disagreement types {sorted(types)}")


def main() -> None:
    import ai_policy
    import crypto
    import housing

    decks = [crypto.DECK, ai_policy.DECK, housing.DECK]
    deck_models: list[Deck] = []
    for deck in decks:
        check_deck(deck)
        for p in deck.personas:
            folder = ROOT / p.id
            folder.mkdir(exist_ok=True)
            for name, text in build_persona(p, deck).items():
                (folder / name).write_text(text, encoding="utf-8")
            print(f"  wrote {folder.relative_to(ROOT.parent.parent)}")
        deck_models.append(Deck(
            id=deck.id, name=deck.name, description=deck.description, persona_ids=[p.id for p in deck.personas],
            topics=deck.topics,
            propositions=[Proposition(id=prop_id(deck, pr.key), text=pr.text, question=pr.question, keywords=pr.keywords,
                                      aspect=pr.aspect, disagreement_type=pr.disagreement_type)  # type: ignore[arg-type]
                          for pr in deck.propositions],
        ))
    out = DeckFile(decks=deck_models)
    (ROOT / "decks.json").write_text(json.dumps(out.model_dump(mode="json", by_alias=True), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print("  wrote data/personas/decks.json")


if __name__ == "__main__":
    main()
