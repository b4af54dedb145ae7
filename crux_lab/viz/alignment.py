"""Alignment figures: persona × crux heatmap, persona × persona disagreement, crux types.

Inputs are the analysis layer's matrices (:mod:`crux_lab.analysis.alignment`,
:mod:`crux_lab.analysis.insights`); outputs are plotly figures with every text escaped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from crux_lab.analysis.alignment import DisagreementMatrix, StanceMatrix
from crux_lab.models.domain import Crux, CruxCard
from crux_lab.viz._text import HTMLBlock, esc, no_figure, short_title, wrap

STANCE_SCALE = [[0.0, "#d73027"], [0.5, "#f7f7f7"], [1.0, "#1a9850"]]
STANCE_NAMES = {1.0: "YES / pro", -1.0: "NO / con", 0.0: "nuanced / uncertain"}


def crux_heatmap(matrix: StanceMatrix, *, names: Mapping[str, str] | None = None, title: str = "Persona × crux") -> go.Figure:
    """Rows personas, columns cruxes (and propositions); green = YES/pro, red = NO/con,
    white = nuanced, blank = no position. Hover shows the full crux question."""
    names = names or {}
    texts = matrix.col_texts or matrix.col_labels
    cats = matrix.categories or ("",) * len(matrix.col_labels)
    hover = [
        [
            f"<b>{esc(names.get(r, r))}</b><br>{wrap(texts[j])}<br>({esc(cats[j])}) → "
            + ("no position" if np.isnan(v) else STANCE_NAMES[float(v)])
            for j, v in enumerate(row)
        ]
        for r, row in zip(matrix.row_labels, matrix.values, strict=True)
    ]
    fig = go.Figure(go.Heatmap(
        z=matrix.values.tolist(), x=column_labels(texts, cats), y=[esc(names.get(r, r)) for r in matrix.row_labels],
        zmin=-1, zmax=1, colorscale=STANCE_SCALE, hovertext=hover, hoverinfo="text", xgap=2, ygap=2,
        colorbar={"tickvals": [-1, 0, 1], "ticktext": ["NO / con", "nuanced", "YES / pro"]},
    ))
    fig.update_layout(title=esc(title), height=max(300, 60 * len(matrix.row_labels) + 200), hoverlabel={"align": "left"},
                      plot_bgcolor="#ffffff", xaxis={"tickangle": 0, "automargin": True, "showgrid": False},
                      yaxis={"showgrid": False}, margin={"l": 20, "r": 20, "t": 50, "b": 40})
    return fig


def column_labels(texts: Sequence[str], categories: Sequence[str]) -> list[str]:
    """Readable, distinct column labels: what the column is (a crux card, or the closing stance
    on a proposition) and a short title of its text, wrapped over three lines.

    >>> column_labels(["Is gold money?", "Gold is money."], ["values", "proposition"])
    ['crux card (values):<br>Is gold money?', 'closing stance:<br>Gold is money']
    """
    out: list[str] = []
    for text, cat in zip(texts, categories, strict=True):
        kind = "closing stance" if cat == "proposition" else (f"crux card ({cat})" if cat else "crux")
        label = f"{esc(kind)}:<br>{wrap(short_title(text, 54), 20, 3)}"
        n, base = 2, label
        while label in out:  # plotly merges equal category labels: keep every column
            label, n = f"{base} ({n})", n + 1
        out.append(label)
    return out


def disagreement_heatmap(dm: DisagreementMatrix, *, names: Mapping[str, str] | None = None, title: str | None = None) -> go.Figure:
    """Persona × persona disagreement (0 = identical, 1 = opposite on every shared crux)."""
    names = names or {}
    labels = [esc(names.get(x, x)) for x in dm.labels]
    hover = [
        [
            f"{labels[i]} vs {labels[j]}: "
            + ("no shared crux" if np.isnan(dm.disagreement[i, j]) else f"{dm.disagreement[i, j]:.2f}")
            + f" over {int(dm.shared[i, j])} shared"
            for j in range(len(labels))
        ]
        for i in range(len(labels))
    ]
    fig = go.Figure(go.Heatmap(z=dm.disagreement.tolist(), x=labels, y=labels, zmin=0, zmax=1,
                               colorscale="Reds", hovertext=hover, hoverinfo="text", xgap=2, ygap=2))
    name = title or ("Persona × persona disagreement" + (f" ({esc(dm.category)})" if dm.category else ""))
    fig.update_layout(title=esc(name), height=max(280, 60 * len(labels) + 140), margin={"l": 20, "r": 20, "t": 50, "b": 60},
                      plot_bgcolor="#ffffff", xaxis={"showgrid": False}, yaxis={"showgrid": False})
    return fig


def disagreement_figure(by_category: Mapping[str, DisagreementMatrix], *, names: Mapping[str, str] | None = None,
                        limit: int = 4) -> go.Figure | HTMLBlock:
    """Persona × persona disagreement, one heatmap per crux category side by side (at most
    ``limit``), on one colour scale; a note when the run has no crux cards to split by."""
    from plotly.subplots import make_subplots

    names = names or {}
    mats = list(by_category.values())[:limit]
    if not mats:
        return no_figure("Persona × persona disagreement: this run has no crux cards to split by category.")
    fig = make_subplots(rows=1, cols=len(mats), subplot_titles=[esc(m.category or "all") for m in mats],
                        horizontal_spacing=0.12)
    for i, dm in enumerate(mats):
        one = disagreement_heatmap(dm, names=names)
        trace = one.data[0]
        trace.update(showscale=(i == len(mats) - 1), colorbar={"title": "disagreement"})
        fig.add_trace(trace, row=1, col=i + 1)
    n = max(len(m.labels) for m in mats)
    fig.update_xaxes(showgrid=False)
    fig.update_yaxes(showgrid=False)
    fig.update_layout(title="Persona × persona disagreement by crux category (0 same, 1 opposite; blank: no shared crux)",
                      plot_bgcolor="#ffffff",
                      height=max(320, 60 * n + 180), margin={"l": 20, "r": 20, "t": 80, "b": 40})
    return fig


def crux_types_figure(cruxes: Sequence[Crux] = (), cards: Sequence[CruxCard] = (), *,
                      title: str = "Crux types") -> go.Figure | HTMLBlock:
    """How many cruxes (and crux cards) of each disagreement type a run found.

    >>> from crux_lab.models import Crux
    >>> fig = crux_types_figure([Crux(id="c", statement="s", source="proposed", disagreement_type="values")])
    >>> list(fig.data[0].x), list(fig.data[0].y)
    (['values'], [1])
    """
    if not cruxes and not cards:
        return no_figure(f"{title}: this run found no cruxes.")
    fig = go.Figure()
    for name, items in (("cruxes", [c.disagreement_type.value if c.disagreement_type else "untyped" for c in cruxes]),
                        ("crux cards", [c.disagreement_type.value for c in cards])):
        if items:
            counts = Counter(items)
            kinds = sorted(counts)
            fig.add_trace(go.Bar(x=kinds, y=[counts[k] for k in kinds], name=name))
    fig.update_layout(title=esc(title), barmode="group", height=300, yaxis_title="count",
                      margin={"l": 50, "r": 20, "t": 50, "b": 40})
    return fig
