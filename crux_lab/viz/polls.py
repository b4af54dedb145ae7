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
    Runs that asked the same question share its column (a sweep): a cell is then the mean
    answer (YES 1, NO -1), starred where most of them were decisive, and its hover counts them.

    >>> fig = poll_matrix_figure([{"crux_id": "c", "question": "Is gold money?", "status": "split",
    ...     "persona_id": "a", "answer": "YES", "decisive": True, "reason": "r"}], names={"a": "Ann"})
    >>> fig.data[0].z, fig.data[0].text
    (([1.0],), (['★'],))
    >>> rows = [{"run_id": r, "crux_id": "c", "question": q, "status": "split", "persona_id": "a", "answer": a, "decisive": d}
    ...         for r, q, a, d in (("r1", "Is gold money?", "YES", True), ("r2", "Is gold money", "NO", True),
    ...                            ("r2", "Is oil money?", "NO", False))]
    >>> fig = poll_matrix_figure(rows)
    >>> fig.data[0].z, fig.data[0].x, fig.data[0].text
    (([0.0, -1.0],), ('crux:<br>Is gold money? (2 runs)', 'crux:<br>Is oil money?'), (['★', ''],))
    """
    if isinstance(rows, DebateResult):
        names = {**rows.persona_names, **(names or {})}
        rows = poll_rows(rows)
    names = names or {}
    rows = [dict(r) for r in rows]
    if not rows:
        return no_figure("no poll in this run: no candidate crux was put to the personas")
    # one column per question: runs that asked the same question (a sweep) share it
    columns: dict[str, tuple[str, list[str], set[str]]] = {}
    personas: list[str] = []
    cells: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        key = " ".join(str(r["question"]).lower().rstrip("?.! ").split())
        _, statuses, runs = columns.setdefault(key, (str(r["question"]), [], set()))
        statuses.append(str(r.get("status") or ""))
        runs.add(str(r.get("run_id", "")))
        if r["persona_id"] not in personas:
            personas.append(r["persona_id"])
        cells.setdefault((r["persona_id"], key), []).append(r)
    keys = list(columns)
    z: list[list[float | None]] = [[None] * len(keys) for _ in personas]
    text = [[""] * len(keys) for _ in personas]
    hover = [["no answer"] * len(keys) for _ in personas]
    for (persona, key), mine in cells.items():
        i, j = personas.index(persona), keys.index(key)
        answers = [str(r["answer"]) for r in mine]
        decisive = sum(bool(r.get("decisive")) for r in mine)
        z[i][j] = sum(ANSWER_VALUE.get(a, 0.0) for a in answers) / len(answers)
        text[i][j] = "★" if 2 * decisive > len(mine) else ""
        said = (esc(answers[0]) if len(mine) == 1 else
                ", ".join(f"{esc(a)} in {answers.count(a)}" for a in ANSWER_VALUE if a in answers) + f" of {len(mine)} runs")
        reason = next((str(r.get("reason")) for r in mine if r.get("reason")), "")
        hover[i][j] = (f"<b>{esc(names.get(persona, persona))}</b>: {said}"
                       + ((" (decisive)" if decisive else "") if len(mine) == 1 else f" (decisive in {decisive})" if decisive else "")
                       + f"<br>{wrap(columns[key][0])}" + (f"<br><i>{wrap(reason)}</i>" if reason else ""))
    verdict = {"split": "crux", "unanimous": "common ground", "unsplit": "not split", "unpolled": "unpolled",
               "mixed": "crux in some runs"}
    labels = []
    crowded = len(keys) > 8  # wrapped labels side by side would overlap: one slanted line each
    for key in keys:
        question, statuses, runs = columns[key]
        status = statuses[0] if len(set(statuses)) == 1 else "mixed"
        asked = f" ({len(runs)} runs)" if len(runs) > 1 else ""
        label = (f"{esc(verdict.get(status, status))}: {esc(short_title(question, 48))}{asked}" if crowded
                 else f"{esc(verdict.get(status, status))}:<br>{wrap(short_title(question, 54), 20, 3)}{asked}")
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
