"""The poll's persona × crux matrix: each persona's own answer to each candidate crux, asked
alone (green YES, red NO, grey UNSURE), decisive cells starred. The seeds' alignment matrix,
read from the personas' own answers rather than the debate's sides.

Input: rows as the store's ``crux_polls`` table holds them (``crux_lab.store.tables.poll_rows``
of one result, or a query over many runs); output: a plotly figure with every text escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import plotly.graph_objects as go

from crux_lab.models.result import DebateResult
from crux_lab.store.tables import poll_rows
from crux_lab.viz._text import HTMLBlock, esc, no_figure, short_title, wrap

ANSWER_VALUE = {"YES": 1.0, "NO": -1.0, "UNSURE": 0.0}
SCALE = [[0.0, "#d73027"], [0.5, "#d9d9d9"], [1.0, "#1a9850"]]


def poll_matrix_figure(rows: Iterable[Mapping[str, Any]] | DebateResult, *, names: Mapping[str, str] | None = None,
                       title: str = "Asked alone: each persona's answer to each candidate crux") -> go.Figure | HTMLBlock:
    """Rows personas, columns candidate cruxes; a cell is the persona's own answer, ★ where the
    crux is decisive for that persona (its answer on the topic would change were it settled
    the other way). Columns keep the poll's verdict: a crux, common ground, or not split.

    >>> fig = poll_matrix_figure([{"crux_id": "c", "question": "Is gold money?", "status": "split",
    ...     "persona_id": "a", "answer": "YES", "decisive": True, "reason": "r"}], names={"a": "Ann"})
    >>> fig.data[0].z, fig.data[0].text
    (([1.0],), (['★'],))
    """
    if isinstance(rows, DebateResult):
        names = {**rows.persona_names, **(names or {})}
        rows = poll_rows(rows)
    names = names or {}
    rows = [dict(r) for r in rows]
    if not rows:
        return no_figure("no poll in this run: no candidate crux was put to the personas")
    columns: dict[str, tuple[str, str]] = {}
    personas: list[str] = []
    for r in rows:
        key = f"{r.get('run_id', '')}|{r['crux_id']}"
        columns.setdefault(key, (str(r["question"]), str(r.get("status") or "")))
        if r["persona_id"] not in personas:
            personas.append(r["persona_id"])
    keys = list(columns)
    z: list[list[float | None]] = [[None] * len(keys) for _ in personas]
    text = [[""] * len(keys) for _ in personas]
    hover = [["no answer"] * len(keys) for _ in personas]
    for r in rows:
        i, j = personas.index(r["persona_id"]), keys.index(f"{r.get('run_id', '')}|{r['crux_id']}")
        z[i][j] = ANSWER_VALUE.get(str(r["answer"]), 0.0)
        text[i][j] = "★" if r.get("decisive") else ""
        hover[i][j] = (f"<b>{esc(names.get(r['persona_id'], r['persona_id']))}</b>: {esc(str(r['answer']))}"
                       + (" (decisive)" if r.get("decisive") else "") + f"<br>{wrap(str(r['question']))}"
                       + (f"<br><i>{wrap(str(r.get('reason') or ''))}</i>" if r.get("reason") else ""))
    verdict = {"split": "crux", "unanimous": "common ground", "unsplit": "not split", "unpolled": "unpolled"}
    labels = []
    crowded = len(keys) > 8  # wrapped labels side by side would overlap: one slanted line each
    for key in keys:
        question, status = columns[key]
        label = (f"{esc(verdict.get(status, status))}: {esc(short_title(question, 48))}" if crowded
                 else f"{esc(verdict.get(status, status))}:<br>{wrap(short_title(question, 54), 20, 3)}")
        n, base = 2, label
        while label in labels:
            label, n = f"{base} ({n})", n + 1
        labels.append(label)
    fig = go.Figure(go.Heatmap(
        z=z, x=labels, y=[esc(names.get(p, p)) for p in personas], zmin=-1, zmax=1, colorscale=SCALE,
        text=text, texttemplate="%{text}", textfont={"size": 22}, hovertext=hover, hoverinfo="text", xgap=2, ygap=2,
        colorbar={"tickvals": [-1, 0, 1], "ticktext": ["NO", "UNSURE", "YES"]},
    ))
    fig.update_layout(title=esc(title) + "<br><sup>★ decisive: its answer on the topic would change were this settled the other way</sup>",
                      height=max(300, 60 * len(personas) + 220) + (200 if crowded else 0), hoverlabel={"align": "left"}, plot_bgcolor="#ffffff",
                      xaxis={"tickangle": -40 if crowded else 0, "automargin": True, "showgrid": False}, yaxis={"showgrid": False},
                      margin={"l": 20, "r": 20, "t": 80, "b": 40})
    return fig
