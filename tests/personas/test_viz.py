from __future__ import annotations

import html

import pytest

from crux_lab.personas.loader import get_deck, load_persona, load_personas
from crux_lab.personas.models import BeliefEdge, BeliefGraph, BeliefNode, CorpusChunk
from crux_lab.viz.belief_graph import (
    POLARITY_COLORS,
    TYPE_COLORS,
    belief_graph_figure,
    persona_belief_figure,
)
from crux_lab.viz.network import belief_network, deck_network

EVIL = '<img src=x onerror="alert(1)">'


def _evil_graph() -> tuple[BeliefGraph, list[CorpusChunk]]:
    nodes = [BeliefNode(id="a", concept=f"Claim {EVIL}", type="core_value", confidence=0.78, grounding=["c1"]),
             BeliefNode(id="b", concept="Effect", type="factual_claim", confidence=0.4, grounding=["c1"])]
    edges = [BeliefEdge.model_validate({"from": "a", "to": "b", "polarity": -1, "confidence": 0.4, "sourceChunks": ["c1"]})]
    return BeliefGraph(persona_id="x", nodes=nodes, edges=edges), [CorpusChunk(id="c1", text=f"text {EVIL}", source="s", kind="synthetic")]


def test_plotly_figure_encodes_type_confidence_polarity_and_grounding() -> None:
    p = load_persona("michael-saylor")
    fig = persona_belief_figure(p, highlight=["saylor-fixed"])
    node_traces = [t for t in fig.data if t.mode == "markers+text"]
    assert {t.name for t in node_traces} <= {k.replace("_", " ") for k in TYPE_COLORS}
    assert sum(len(t.x) for t in node_traces) == len(p.beliefs.nodes)  # type: ignore[union-attr]
    for t in node_traces:
        sizes = list(t.marker.size)
        assert min(sizes) >= 10 and max(sizes) <= 40
    edge_lines = [t for t in fig.data if t.mode == "lines"]
    assert {t.line.color for t in edge_lines} == set(POLARITY_COLORS.values())
    hovers = " ".join(h for t in node_traces for h in t.hovertext)
    assert "21 million" in hovers and "paraphrase" in hovers


def test_plotly_escapes_text() -> None:
    g, corpus = _evil_graph()
    fig = belief_graph_figure(g, corpus, title=EVIL)
    blob = fig.to_json()
    assert EVIL not in blob and "onerror=\\\"alert" not in blob
    assert html.escape("<img") in blob


def test_figure_without_beliefs_is_clear_error() -> None:
    p = load_persona("arthur-hayes")
    p.beliefs = None
    with pytest.raises(ValueError, match="personas build"):
        persona_belief_figure(p)


def test_inline_network_is_offline_and_isolated() -> None:
    g, corpus = _evil_graph()
    view = belief_network(g, corpus)
    assert "cdn.jsdelivr" not in view.document and 'src="http' not in view.document
    assert "vis.DataSet" in view.document and EVIL not in view.document
    frame = view._repr_html_()
    assert frame.startswith("<iframe srcdoc=") and "<script" not in frame


def test_deck_network_has_every_stance() -> None:
    deck = get_deck("housing")
    personas = load_personas(deck.persona_ids)
    view = deck_network(deck, personas)
    for prop in deck.propositions:
        assert prop.id in view.document
    assert "cdn.jsdelivr" not in view.document
