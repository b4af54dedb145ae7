"""Interactive networks for the notebook, rendered with pyvis in-line and isolated.

pyvis's default HTML loads vis-network and bootstrap from CDNs, which breaks offline notebooks
and exported reports. Here the vis-network JavaScript is inlined (``cdn_resources="in_line"``),
the two bootstrap CDN tags pyvis still emits are removed (they only style the page chrome),
and the document is shown inside an ``<iframe srcdoc=...>`` so its global script and CSS
cannot collide with JupyterLab or with another network on the same page. The result works with
no network access, survives nbconvert to HTML, and needs no widget extension (the reason this
module does not use ipysigma, which is also not installed).

Node and edge labels go into pyvis's JSON through Jinja's ``tojson`` (which escapes ``<``/``>``),
and vis-network shows string tooltips as plain text, so persona text cannot inject markup.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

from crux_lab.personas.models import BeliefGraph, CorpusChunk, Deck, Persona
from crux_lab.viz.belief_graph import POLARITY_COLORS, TYPE_COLORS

STANCE_COLORS = {"pro": "#1a9850", "con": "#d73027", "uncertain": "#999999"}
_CDN_TAG = re.compile(r"<(link|script)\b[^>]*https?://[^>]*>(\s*</script>)?", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class InlineNetwork:
    """A self-contained interactive network: ``document`` is a full offline HTML page."""

    document: str
    height: int = 600

    def iframe(self) -> str:
        """The network as an ``<iframe srcdoc>`` element.

        vis-network needs ``allow-same-origin`` to draw (a bare ``allow-scripts`` sandbox renders
        blank in Chromium). The document is ours: every label was escaped when it was built.
        """
        return (
            f'<iframe srcdoc="{html.escape(self.document, quote=True)}" '
            f'style="width:100%;height:{self.height + 20}px;border:0" sandbox="allow-scripts allow-same-origin"></iframe>'
        )

    def _repr_html_(self) -> str:  # Jupyter display hook
        return self.iframe()

    def save(self, path: Path | str) -> Path:
        p = Path(path)
        p.write_text(self.document, encoding="utf-8")
        return p


def render_network(graph: nx.DiGraph | nx.Graph, *, height: int = 600, physics: bool = True) -> InlineNetwork:
    """Render a networkx graph whose nodes/edges carry pyvis attributes (label, title, color,
    size, shape; edge color, title, width, dashes) into an :class:`InlineNetwork`."""
    from pyvis.network import Network

    net = Network(height=f"{height}px", width="100%", directed=graph.is_directed(), cdn_resources="in_line")
    for node, attrs in graph.nodes(data=True):
        net.add_node(str(node), **{k: v for k, v in attrs.items() if v is not None})
    for a, b, attrs in graph.edges(data=True):
        net.add_edge(str(a), str(b), **{k: v for k, v in attrs.items() if v is not None})
    net.toggle_physics(physics)
    doc = _CDN_TAG.sub("", net.generate_html())
    return InlineNetwork(doc, height)


def belief_network(
    graph: BeliefGraph,
    corpus: Sequence[CorpusChunk] | Mapping[str, CorpusChunk] = (),
    *,
    height: int = 600,
) -> InlineNetwork:
    """A persona's belief graph as an interactive network (drag, zoom, hover for grounding)."""
    chunks = dict(corpus) if isinstance(corpus, Mapping) else {c.id: c for c in corpus}
    g = nx.DiGraph()
    for n in graph.nodes:
        ground = "\n".join(f"[{chunks[c].kind}] {chunks[c].text[:220]}" for c in n.grounding[:2] if c in chunks)
        g.add_node(n.id, label=n.concept if len(n.concept) <= 40 else n.concept[:39] + "…",
                   title=f"{n.concept}\n{n.type} · confidence {n.confidence:.2f} ({len(n.grounding)} sources)\n{ground}",
                   color=TYPE_COLORS.get(n.type, "#888888"), size=10 + 25 * n.confidence, shape="dot")
    for e in graph.edges:
        if e.from_ in g and e.to in g:
            g.add_edge(e.from_, e.to, color=POLARITY_COLORS[e.polarity], width=1 + 3 * e.confidence,
                       title=f"{'supports' if e.polarity == 1 else 'undermines'} · sources {', '.join(e.source_chunks)}",
                       dashes=e.polarity == -1)
    return render_network(g, height=height)


def deck_network(deck: Deck, personas: Mapping[str, Persona], *, height: int = 600) -> InlineNetwork:
    """Personas and the deck's propositions; edges coloured by each persona's stance.

    Contested propositions are diamonds labelled with their disagreement type; common ground is
    a box. Researchers see at a glance which propositions split which personas.
    """
    g = nx.Graph()
    for pid in deck.persona_ids:
        if pid in personas:
            p = personas[pid]
            g.add_node(pid, label=p.name, title=f"{p.name} ({p.contract.kind})", color="#333333", shape="ellipse",
                       font={"color": "#ffffff"})
    for prop in deck.propositions:
        kind = prop.disagreement_type.value if prop.disagreement_type else "common ground"
        g.add_node(prop.id, label=f"{prop.id}\n{kind}", title=f"{prop.text}\n({kind})",
                   shape="diamond" if prop.disagreement_type else "box",
                   color="#fdb863" if prop.disagreement_type else "#b2abd2")
        for pid in deck.persona_ids:
            s = personas[pid].stance_on(prop.id) if pid in personas else None
            if s is not None:
                g.add_edge(pid, prop.id, color=STANCE_COLORS[s.stance], width=1 + 3 * s.confidence,
                           title=f"{pid}: {s.stance} ({s.confidence:.2f}) — {s.reason}", dashes=s.stance == "uncertain")
    return render_network(g, height=height)
