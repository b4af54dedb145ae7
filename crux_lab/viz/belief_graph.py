"""A persona's belief graph as a plotly figure, for reports (static HTML, no CDN needed by us).

Nodes are coloured by type, sized by confidence (corpus density) and carry their grounding
corpus text in the hover; edges are green (supports) or red (undermines), with the source
chunks in a hover at the edge midpoint. Layout: left-to-right layers of the graph's
topological generations when it is acyclic (reasoning flows toward the persona's positions),
else a seeded spring layout. Every text that reaches the figure is escaped (``esc``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import networkx as nx
import plotly.graph_objects as go

from crux_lab.personas.models import BeliefGraph, CorpusChunk, Persona
from crux_lab.viz._text import esc, wrap

TYPE_COLORS: dict[str, str] = {
    "core_value": "#7b3294",
    "assumption": "#e08214",
    "factual_claim": "#2166ac",
    "inference": "#5aae61",
}
POLARITY_COLORS: dict[int, str] = {1: "#1a9850", -1: "#d73027"}


def graph_layout(graph: BeliefGraph, how: Literal["layered", "spring"] = "layered", seed: int = 0) -> dict[str, tuple[float, float]]:
    """Node positions: layered by topological generation when acyclic, else spring.

    >>> from crux_lab.personas.models import BeliefNode, BeliefEdge
    >>> g = BeliefGraph(persona_id="p", nodes=[BeliefNode(id=i, concept=i, type="inference", confidence=.5) for i in "ab"],
    ...                 edges=[BeliefEdge.model_validate({"from": "a", "to": "b", "polarity": 1, "confidence": .4})])
    >>> pos = graph_layout(g); pos["a"][0] < pos["b"][0]
    True
    """
    g = nx.DiGraph()
    g.add_nodes_from(n.id for n in graph.nodes)
    g.add_edges_from((e.from_, e.to) for e in graph.edges if e.from_ in g and e.to in g)
    if how == "layered" and nx.is_directed_acyclic_graph(g) and g.number_of_nodes():
        for layer, nodes in enumerate(nx.topological_generations(g)):
            for n in nodes:
                g.nodes[n]["layer"] = layer
        raw = nx.multipartite_layout(g, subset_key="layer", align="vertical")
    else:
        raw = nx.spring_layout(g, seed=seed) if g.number_of_nodes() else {}
    return {k: (float(v[0]), float(v[1])) for k, v in raw.items()}


def belief_graph_figure(
    graph: BeliefGraph,
    corpus: Sequence[CorpusChunk] | Mapping[str, CorpusChunk] = (),
    *,
    title: str | None = None,
    highlight: Iterable[str] = (),
    layout: Literal["layered", "spring"] = "layered",
    height: int = 650,
) -> go.Figure:
    """A plotly figure of ``graph``; ``corpus`` supplies the grounding text for hovers.

    ``highlight`` node ids (e.g. the beliefs retrieved for a turn) get a black outline.
    """
    chunks = dict(corpus) if isinstance(corpus, Mapping) else {c.id: c for c in corpus}
    pos = graph_layout(graph, layout)
    marked = set(highlight)
    fig = go.Figure()
    for polarity, label in ((1, "supports"), (-1, "undermines")):
        xs: list[float | None] = []
        ys: list[float | None] = []
        mx, my, mtext = [], [], []
        for e in graph.edges:
            if e.polarity != polarity or e.from_ not in pos or e.to not in pos:
                continue
            (x0, y0), (x1, y1) = pos[e.from_], pos[e.to]
            xs += [x0, x1, None]
            ys += [y0, y1, None]
            mx.append((x0 + x1) / 2)
            my.append((y0 + y1) / 2)
            mtext.append(
                f"{esc(e.from_)} → {esc(e.to)}<br>{label}, confidence {e.confidence:.2f}"
                f"<br>sources: {esc(', '.join(e.source_chunks) or '—')}"
            )
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=f"edge: {label}",
                                 line={"color": POLARITY_COLORS[polarity], "width": 1.6}, hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=mx, y=my, mode="markers", showlegend=False,
                                 marker={"size": 7, "symbol": "triangle-right", "color": POLARITY_COLORS[polarity]},
                                 hovertext=mtext, hoverinfo="text"))
    for typ, color in TYPE_COLORS.items():
        nodes = [n for n in graph.nodes if n.type == typ and n.id in pos]
        if not nodes:
            continue
        hover = []
        for n in nodes:
            grounding = [
                f"<i>[{esc(chunks[c].kind)}; {esc(chunks[c].date or 'undated')}]</i> {wrap(chunks[c].text[:300], max_lines=1_000)}"
                for c in n.grounding[:3] if c in chunks
            ]
            missing = [esc(c) for c in n.grounding if c not in chunks]
            hover.append(
                f"<b>{wrap(n.concept, max_lines=1_000)}</b><br>{esc(n.type)} · confidence {n.confidence:.2f} "
                f"({len(n.grounding)} source(s))"
                + ("<br>" + "<br>".join(grounding) if grounding else "")
                + (f"<br>sources: {', '.join(missing)}" if missing else "")
            )
        fig.add_trace(go.Scatter(
            x=[pos[n.id][0] for n in nodes], y=[pos[n.id][1] for n in nodes], mode="markers+text",
            name=typ.replace("_", " "),
            text=[esc(n.concept[:28] + ("…" if len(n.concept) > 28 else "")) for n in nodes],
            textposition="top center", textfont={"size": 9},
            marker={"color": color, "size": [10 + 30 * n.confidence for n in nodes],
                    "line": {"color": ["#000000" if n.id in marked else "#ffffff" for n in nodes],
                             "width": [3 if n.id in marked else 1 for n in nodes]}},
            hovertext=hover, hoverinfo="text",
        ))
    fig.update_layout(
        title=esc(title or f"Belief graph: {graph.persona_id}"),
        height=height, showlegend=True, plot_bgcolor="#ffffff",
        xaxis={"visible": False}, yaxis={"visible": False},
        hoverlabel={"align": "left"}, margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )
    if graph.contradictions:
        fig.add_annotation(text=f"{len(graph.contradictions)} contradiction(s) flagged", showarrow=False,
                           xref="paper", yref="paper", x=0, y=0, font={"color": POLARITY_COLORS[-1]})
    return fig


def persona_belief_figure(persona: Persona, **kwargs: object) -> go.Figure:
    """:func:`belief_graph_figure` for a loaded persona (raises if it has no belief graph)."""
    if persona.beliefs is None:
        raise ValueError(f"{persona.id} has no belief graph; build it with `crux-lab personas build`.")
    title = kwargs.pop("title", None) or f"Belief graph: {persona.name} ({persona.contract.kind})"
    return belief_graph_figure(persona.beliefs, persona.corpus, title=str(title), **kwargs)  # type: ignore[arg-type]
