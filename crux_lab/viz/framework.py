"""The argument framework of a run: nodes coloured IN/OUT/UNDEC, grouped by camp, cruxes
highlighted, and a slider that steps through the crystallizations (the graph growing, then
shrinking under concession). Pure builders: events or graphs in, plotly figures out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import plotly.graph_objects as go

from crux_lab.argumentation.framework import ArgumentFramework
from crux_lab.argumentation.semantics import grounded_labelling
from crux_lab.models import (
    ArgumentGraph,
    Camp,
    Crux,
    DCGUpdate,
    DebateEvent,
    GraphUpdate,
    GraphUpdated,
    Label,
)
from crux_lab.viz._text import clip, esc, wrap

LABEL_COLORS: dict[str, str] = {"IN": "#1a9850", "OUT": "#d73027", "UNDEC": "#9e9e9e"}
CRUX_OUTLINE = "#f1a340"


@dataclass(frozen=True)
class FrameworkStep:
    """The graph after one crystallization (or graph update), with its label counts."""

    seq: int
    label: str
    graph: ArgumentGraph
    in_count: int
    out_count: int
    undec_count: int


def labelling_of(graph: ArgumentGraph) -> dict[str, Label]:
    """The graph's stored labelling, or the grounded labelling computed from its attacks."""
    if graph.labelling or not graph.arguments:
        return dict(graph.labelling)
    ids = {a.id for a in graph.arguments}
    af = ArgumentFramework.from_edges(
        ids, [(x.from_arg_id, x.to_arg_id) for x in graph.attacks if x.from_arg_id in ids and x.to_arg_id in ids]
    )
    return {str(a): Label(v.value) for a, v in grounded_labelling(af).items()}


def _counts(graph: ArgumentGraph) -> tuple[int, int, int]:
    lab = labelling_of(graph)
    values = [lab.get(a.id, Label.UNDEC) for a in graph.arguments]
    return values.count(Label.IN), values.count(Label.OUT), values.count(Label.UNDEC)


def framework_steps(events: Iterable[DebateEvent]) -> list[FrameworkStep]:
    """Every argument-graph state a run went through, in order (``graph_updated`` events of the
    dialogue engine, ``graph_update`` of graph mode)."""
    steps: list[FrameworkStep] = []
    for e in events:
        if isinstance(e, GraphUpdated):
            steps.append(FrameworkStep(e.seq, f"crystallization {len(steps) + 1}", e.graph, e.in_count, e.out_count, e.undec_count))
        elif isinstance(e, GraphUpdate):
            i, o, u = _counts(e.graph)
            steps.append(FrameworkStep(e.seq, f"round {e.round}", e.graph, i, o, u))
    return steps


def graph_stats_figure(events: Sequence[DebateEvent]) -> go.Figure:
    """Live graph statistics over the debate: IN/OUT/UNDEC counts and graph size per step; for
    the DCG engine, disputes, stances and reasons per update."""
    fig = go.Figure()
    steps = framework_steps(events)
    if steps:
        xs = [s.seq for s in steps]
        for name, ys in (
            ("IN", [s.in_count for s in steps]),
            ("OUT", [s.out_count for s in steps]),
            ("UNDEC", [s.undec_count for s in steps]),
        ):
            fig.add_trace(go.Scatter(x=xs, y=ys, name=name, mode="lines+markers", line={"color": LABEL_COLORS[name]}))
        fig.add_trace(go.Scatter(x=xs, y=[len(s.graph.attacks) for s in steps], name="attacks",
                                 mode="lines", line={"dash": "dot", "color": "#555"}))
        title = "Argument graph over the debate"
    else:
        dcg = [e for e in events if isinstance(e, DCGUpdate)]
        xs = [e.seq for e in dcg]
        for name, ys in (
            ("disputes", [len(e.dcg.disputes) for e in dcg]),
            ("stances", [len(e.dcg.stances) for e in dcg]),
            ("reasons", [len(e.dcg.reasons) for e in dcg]),
            ("cruxes", [len(e.cruxes) for e in dcg]),
            ("common ground", [len(e.common_ground) for e in dcg]),
        ):
            fig.add_trace(go.Scatter(x=xs, y=ys, name=name, mode="lines+markers"))
        title = "Dispute graph over the debate" if dcg else "No graph events in this run"
    fig.update_layout(title=title, height=320, xaxis_title="event #", yaxis_title="count",
                      margin={"l": 50, "r": 20, "t": 50, "b": 40})
    return fig


def _groups(graph: ArgumentGraph, camps: Sequence[Camp]) -> dict[str, str]:
    """argument id -> group name (its camp, else its speaker's camp, else its speaker)."""
    by_arg = {a: f"camp {c.index + 1}" + (f": {c.label}" if c.label else "") for c in camps for a in c.argument_ids}
    by_persona = {p: f"camp {c.index + 1}" + (f": {c.label}" if c.label else "") for c in camps for p in c.persona_ids}
    return {a.id: by_arg.get(a.id) or by_persona.get(a.speaker_id) or a.speaker_id for a in graph.arguments}


def _layout(graphs: Sequence[ArgumentGraph], camps: Sequence[Camp]) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """Fixed positions over all states: one column per group, arguments stacked in order."""
    seen: dict[str, str] = {}
    for g in graphs:
        for arg_id, group in _groups(g, camps).items():
            seen.setdefault(arg_id, group)
    columns = list(dict.fromkeys(seen.values()))
    rows: dict[str, int] = dict.fromkeys(columns, 0)
    pos: dict[str, tuple[float, float]] = {}
    for arg_id, group in seen.items():
        col = columns.index(group)
        # Alternate a small horizontal offset so labels of neighbours do not overlap.
        pos[arg_id] = (col + (0.18 if rows[group] % 2 else -0.18), -float(rows[group]))
        rows[group] += 1
    return pos, columns


def _traces(graph: ArgumentGraph, pos: dict[str, tuple[float, float]], crux_args: set[str]) -> list[go.Scatter]:
    lab = labelling_of(graph)
    present = {a.id for a in graph.arguments}
    ex: list[float | None] = []
    ey: list[float | None] = []
    hx, hy, htext = [], [], []
    for att in graph.attacks:
        if att.from_arg_id not in present or att.to_arg_id not in present:
            continue
        (x0, y0), (x1, y1) = pos[att.from_arg_id], pos[att.to_arg_id]
        ex += [x0, x1, None]
        ey += [y0, y1, None]
        hx.append(x0 + 0.75 * (x1 - x0))
        hy.append(y0 + 0.75 * (y1 - y0))
        htext.append(f"{esc(att.from_arg_id)} {esc(att.type.value)}s {esc(att.to_arg_id)}<br>{wrap(att.rationale or att.counter_proposition)}")
    traces = [
        go.Scatter(x=ex, y=ey, mode="lines", line={"color": "#888", "width": 1}, hoverinfo="skip", name="attacks", showlegend=False),
        go.Scatter(x=hx, y=hy, mode="markers", marker={"symbol": "x", "size": 7, "color": "#555"},
                   hovertext=htext, hoverinfo="text", name="attack", showlegend=False),
    ]
    for label in ("IN", "OUT", "UNDEC"):
        args = [a for a in graph.arguments if lab.get(a.id, Label.UNDEC).value == label]
        traces.append(go.Scatter(
            x=[pos[a.id][0] for a in args], y=[pos[a.id][1] for a in args], mode="markers+text", name=label,
            text=[clip(a.claim, 26) for a in args], textposition="middle right", textfont={"size": 9},
            marker={"size": 16, "color": LABEL_COLORS[label],
                    "line": {"color": [CRUX_OUTLINE if a.id in crux_args else "#ffffff" for a in args],
                             "width": [4 if a.id in crux_args else 1 for a in args]}},
            hovertext=[
                f"<b>{esc(a.id)}</b> ({esc(a.speaker_id)}, {label})"
                + (" <b>crux</b>" if a.id in crux_args else "")
                + f"<br>{wrap(a.claim)}"
                + (f"<br><i>premises:</i> {wrap('; '.join(a.premises))}" if a.premises else "")
                for a in args
            ],
            hoverinfo="text",
        ))
    return traces


def argument_framework_figure(
    graph: ArgumentGraph,
    *,
    camps: Sequence[Camp] = (),
    cruxes: Sequence[Crux] = (),
    title: str = "Argument framework",
    height: int = 560,
) -> go.Figure:
    """The framework: IN green, OUT red, UNDEC grey; columns = camps; crux arguments outlined."""
    return framework_steps_figure(
        [FrameworkStep(0, "final", graph, *_counts(graph))], camps=camps, cruxes=cruxes, title=title, height=height
    )


def framework_steps_figure(
    steps: Sequence[FrameworkStep],
    *,
    camps: Sequence[Camp] = (),
    cruxes: Sequence[Crux] = (),
    title: str = "Argument framework, step by step",
    height: int = 560,
) -> go.Figure:
    """One frame per step with a slider (and play button): the graph grows as crystallizations
    add arguments and shrinks as concessions remove them. Positions are fixed across frames."""
    crux_args = {a for c in cruxes for a in c.argument_ids}
    if not any(s.graph.arguments for s in steps):
        fig = go.Figure()
        fig.update_layout(title=esc(title) + ": no Dung argument graph in this run (the engine keeps a dispute "
                          "graph or a blackboard; see the graph statistics)", height=160,
                          xaxis={"visible": False}, yaxis={"visible": False})
        return fig
    pos, columns = _layout([s.graph for s in steps], camps)
    last = steps[-1]
    fig = go.Figure(data=_traces(last.graph, pos, crux_args))
    if len(steps) > 1:
        fig.frames = [go.Frame(data=_traces(s.graph, pos, crux_args), name=str(i)) for i, s in enumerate(steps)]
        fig.update_layout(
            sliders=[{
                "active": len(steps) - 1,
                "currentvalue": {"prefix": "step: "},
                "steps": [
                    {"label": f"{esc(s.label)} ({len(s.graph.arguments)} args, IN {s.in_count})", "method": "animate",
                     "args": [[str(i)], {"mode": "immediate", "frame": {"duration": 0, "redraw": True}}]}
                    for i, s in enumerate(steps)
                ],
            }],
            updatemenus=[{"type": "buttons", "showactive": False, "x": 0, "y": -0.08, "buttons": [
                {"label": "play", "method": "animate", "args": [None, {"frame": {"duration": 700, "redraw": True}, "fromcurrent": True}]},
            ]}],
        )
    fig.update_layout(
        title=esc(title), height=height, plot_bgcolor="#ffffff", hoverlabel={"align": "left"},
        xaxis={"tickvals": list(range(len(columns))), "ticktext": [clip(c, 30) for c in columns],
               "range": [-0.6, len(columns) + 0.4], "showgrid": False, "zeroline": False},
        yaxis={"visible": False}, margin={"l": 20, "r": 20, "t": 50, "b": 80},
    )
    return fig
