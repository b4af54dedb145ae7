"""The shipped library meets the ground-truth design the simulator and benchmarks rely on."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from crux_lab.models import DisagreementType
from crux_lab.personas.loader import list_personas, load_decks, load_persona, persona_root

DECKS = load_decks()
README = (Path(__file__).resolve().parents[2] / "data" / "personas" / "README.md").read_text()


def test_library_size() -> None:
    assert len(list_personas()) >= 10
    assert len(DECKS) >= 3
    assert {"crypto", "ai-policy"} <= {d.id for d in DECKS}
    in_decks = {pid for d in DECKS for pid in d.persona_ids}
    assert in_decks == set(list_personas())


@pytest.mark.parametrize("deck", DECKS, ids=lambda d: d.id)
def test_deck_ground_truth_design(deck) -> None:  # type: ignore[no-untyped-def]
    assert 8 <= len(deck.propositions) <= 12
    prop_ids = {p.id for p in deck.propositions}
    assert all(p.id.startswith(f"{deck.id}.") and p.question.endswith("?") and p.keywords for p in deck.propositions)
    personas = [load_persona(pid) for pid in deck.persona_ids]
    for p in personas:
        assert {s.proposition_id for s in p.stances.stances} == prop_ids, p.id
    for a, b in itertools.combinations(personas, 2):
        opposed = [pid for pid in prop_ids if {a.stance_on(pid).stance, b.stance_on(pid).stance} == {"pro", "con"}]  # type: ignore[union-attr]
        agreed = [pid for pid in prop_ids if a.stance_on(pid).stance == b.stance_on(pid).stance != "uncertain"]  # type: ignore[union-attr]
        assert len(opposed) >= 2, (a.id, b.id)
        assert len(agreed) >= 1, (a.id, b.id)
    contested_types = {p.disagreement_type for p in deck.propositions if p.disagreement_type}
    assert contested_types == set(DisagreementType)
    for prop in deck.propositions:
        stances = {p.stance_on(prop.id).stance for p in personas}  # type: ignore[union-attr]
        if prop.disagreement_type is None:  # consensus: real common ground, nobody opposed
            assert stances == {"pro"}, prop.id
        else:
            assert {"pro", "con"} <= stances, prop.id
            for p in personas:
                s = p.stance_on(prop.id)
                assert s is not None
                if s.stance != "uncertain":
                    assert s.disagreement_type == prop.disagreement_type


def test_saylor_hayes_seed_crux() -> None:
    saylor, hayes = load_persona("michael-saylor"), load_persona("arthur-hayes")
    s, h = saylor.stance_on("crypto.p2"), hayes.stance_on("crypto.p2")
    assert s is not None and h is not None and (s.stance, h.stance) == ("pro", "con")
    deck = next(d for d in DECKS if d.id == "crypto")
    p2 = next(p for p in deck.propositions if p.id == "crypto.p2")
    assert "deterministic" in p2.question and "policy" in p2.question


@pytest.mark.parametrize("pid", list_personas())
def test_persona_integrity(pid: str) -> None:
    p = load_persona(pid)
    assert p.beliefs is not None
    assert 20 <= len(p.beliefs.nodes) <= 50
    nodes = {n.id for n in p.beliefs.nodes}
    chunks = p.chunk_ids()
    assert len(nodes) == len(p.beliefs.nodes), "node ids are unique"
    for n in p.beliefs.nodes:
        assert n.grounding and set(n.grounding) <= chunks, n.id
    for e in p.beliefs.edges:
        assert e.from_ in nodes and e.to in nodes and set(e.source_chunks) <= chunks
    for s in p.stances.stances:
        assert s.belief_node_ids and set(s.belief_node_ids) <= nodes, s.proposition_id
        assert s.grounding and set(s.grounding) <= chunks
        for t in s.flip_conditions:
            assert t.proposition_id == s.proposition_id
            assert t.kind == "concession" or t.keywords
    expected = "paraphrase" if p.contract.kind == "real" else "synthetic"
    texts = [*p.corpus, *p.contract.anchor_excerpts, *p.voice.voice_examples]
    assert texts and all(t.kind == expected for t in texts), "real people: paraphrase only; archetypes: synthetic"
    if p.contract.kind == "real":
        assert all("paraphrase" in c.source for c in p.corpus)
    assert f"`{pid}`" in README and p.contract.kind in README


def test_library_root_has_only_persona_folders() -> None:
    root = persona_root()
    extra = [d.name for d in root.iterdir() if d.is_dir() and not d.name.startswith("_") and d.name not in list_personas()]
    assert extra == []


def test_designed_flips_are_reachable_from_opponents_reasons() -> None:
    """Some flip triggers fire on what an opponent actually argues (legitimate, attributable shifts)."""
    from crux_lab.llm.simulated.core import ReadTurn, fired_trigger

    cases = [("arthur-hayes", "peter-schiff", "crypto.p3"), ("michael-saylor", "arthur-hayes", "crypto.p9")]
    for target, speaker, prop in cases:
        truth = load_persona(target).stance_on(prop)
        said = load_persona(speaker).stance_on(prop)
        assert truth is not None and said is not None
        turn = ReadTurn(speaker_id=speaker, text=said.reason, proposition_ids=[prop], stance=said.stance)
        trig = fired_trigger(truth, turn)
        assert trig is not None and trig.new_stance == "uncertain", (target, prop)
        off_topic = ReadTurn(speaker_id=speaker, text=said.reason, proposition_ids=["crypto.p1"], stance=said.stance)
        assert fired_trigger(truth, off_topic) is None
