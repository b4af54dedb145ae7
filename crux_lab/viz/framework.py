"""The argument structure of a run, as a reader sees it.

- Dung argument graphs (dialogue, graph engines): one column per persona, each argument a
  node labelled with a short title (the full claim on hover), coloured by its grounded label
  (IN / OUT / UNDEC, with UNDEC arguments that some preferred extension accepts shown as
  "defensible"), attacks as arrows from attacker to target, crux arguments ringed; a slider
  steps through the crystallizations (the graph growing, then shrinking under concession).
- Dispute graphs (dcg): :func:`dispute_view`, one row per dispute with the stances and their
  reasons under each side.
- Crux cards (panel, crux_rooms): :func:`card_map`, cards × personas.
- :func:`structure_figure` picks the view a run has; :func:`graph_stats_figure` plots the
  structure's growth over the debate for every engine.

Pure builders: events, graphs or results in, plotly figures out; every text is escaped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from crux_lab.argumentation.framework import ArgumentFramework
from crux_lab.argumentation.semantics import credulous_set, grounded_labelling
from crux_lab.models.domain import (
    ArgumentGraph,
    Camp,
    CommonGround,
    Crux,
    CruxCard,
    DCGState,
    Label,
)
from crux_lab.models.events import (
    AgentTurn,
    CruxCardPosted,
    CruxMessage,
    CruxProposed,
    DCGUpdate,
    DebateEvent,
    DialogueTurnEvent,
    GraphUpdate,
    GraphUpdated,
    MessagePosted,
)
from crux_lab.models.result import DebateResult
from crux_lab.viz._text import HTMLBlock, esc, no_figure, short_title, wrap
from crux_lab.viz.routing import route_edge

LABEL_COLORS: dict[str, str] = {"IN": "#1a9850", "OUT": "#d73027", "UNDEC": "#9e9e9e"}
DEFENSIBLE_COLOR = "#a6d96a"
CRUX_OUTLINE = "#f1a340"
# Node categories in legend order: (trace name, colour, what it means).
NODE_KINDS: tuple[tuple[str, str, str], ...] = (
    ("IN", LABEL_COLORS["IN"], "accepted: every attack on it is defeated"),
    ("OUT", LABEL_COLORS["OUT"], "defeated by an accepted argument"),
    ("UNDEC defensible", DEFENSIBLE_COLOR, "undecided, but some consistent position (preferred extension) accepts it"),
    ("UNDEC", LABEL_COLORS["UNDEC"], "undecided"),
)
SIDE_COLORS = {"YES": "#1a9850", "NO": "#d73027"}
EDGE_COLOR = "rgba(80,80,80,0.6)"
# The argument graph's geometry in pixels, for routing edges around nodes: the width a notebook
# output usually has, the height of a row, and how far an edge keeps from a node it does not touch.
FIGURE_WIDTH_PX = 900
ROW_PX = 56
NODE_CLEARANCE_PX = 14
SUBTITLE_CHARS = 110  # a subtitle line that fits the figure's width


@dataclass(frozen=True)
class FrameworkStep:
    """The graph after one crystallization (or graph update), with its label counts."""

    seq: int
    label: str
    graph: ArgumentGraph
    in_count: int
    out_count: int
    undec_count: int


def _af(graph: ArgumentGraph) -> ArgumentFramework:
    ids = {a.id for a in graph.arguments}
    return ArgumentFramework.from_edges(
        ids, [(x.from_arg_id, x.to_arg_id) for x in graph.attacks if x.from_arg_id in ids and x.to_arg_id in ids]
    )


def labelling_of(graph: ArgumentGraph) -> dict[str, Label]:
    """The graph's stored labelling, or the grounded labelling computed from its attacks."""
    if graph.labelling or not graph.arguments:
        return dict(graph.labelling)
    return {str(a): Label(v.value) for a, v in grounded_labelling(_af(graph)).items()}


def node_kinds(graph: ArgumentGraph) -> dict[str, str]:
    """argument id -> one of :data:`NODE_KINDS`' names: the grounded label, with UNDEC split
    by whether some preferred extension accepts the argument.

    >>> from crux_lab.models import Argument, Attack, AttackTarget
    >>> g = ArgumentGraph(arguments=[Argument(id=i, speaker_id="p", claim=i) for i in "ab"],
    ...                   attacks=[Attack(id=f"{x}{y}", from_arg_id=x, to_arg_id=y, target=AttackTarget(arg_id=y))
    ...                            for x, y in ("ab", "ba")])
    >>> node_kinds(g)
    {'a': 'UNDEC defensible', 'b': 'UNDEC defensible'}
    """
    lab = labelling_of(graph)
    undec = [a.id for a in graph.arguments if lab.get(a.id, Label.UNDEC) == Label.UNDEC]
    if graph.preferred:
        credulous = {x for ext in graph.preferred for x in ext}
    elif undec:
        credulous = {str(x) for x in credulous_set(_af(graph), "preferred")}
    else:
        credulous = set()
    out = {}
    for a in graph.arguments:
        label = lab.get(a.id, Label.UNDEC).value
        out[a.id] = "UNDEC defensible" if label == "UNDEC" and a.id in credulous else label
    return out


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


# ---------------------------------------------------------------------------
# Graph statistics over the debate
# ---------------------------------------------------------------------------

_TURN_EVENTS = (DialogueTurnEvent, AgentTurn, MessagePosted, CruxMessage)


def _running_counts(events: Sequence[DebateEvent]) -> tuple[list[int], dict[str, list[int]]]:
    """Cumulative counts of turns, proposed cruxes, crux cards and detected disagreements at
    every event that changes one of them (engines without a graph: panel, crux rooms, blitz)."""
    names = {"turns": _TURN_EVENTS, "proposed cruxes": (CruxProposed,), "crux cards": (CruxCardPosted,)}
    xs: list[int] = []
    series: dict[str, list[int]] = {n: [] for n in [*names, "disagreements detected", "crux rooms opened"]}
    running: Counter[str] = Counter()
    for e in events:
        key = next((n for n, kinds in names.items() if isinstance(e, kinds)), None)
        if key is None and e.type == "disagreement_detected":
            key = "disagreements detected"
        if key is None and e.type == "crux_room_spawning":
            key = "crux rooms opened"
        if key is None:
            continue
        running[key] += 1
        xs.append(e.seq)
        for n in series:
            series[n].append(running[n])
    return xs, {n: ys for n, ys in series.items() if ys and ys[-1] > 0}


# Running-count lines often coincide (as many cruxes as disputes): each line gets its own dash
# and marker, and lines drawn earlier are wider, so one drawn later never hides another.
LINE_DASHES = ("solid", "dash", "dot", "dashdot", "longdash")
LINE_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x")


def distinct_lines(fig: go.Figure) -> go.Figure:
    """Give every line of ``fig`` its own dash and marker, wider the earlier it is drawn, so
    that lines with the same values stay visible one over the other.

    >>> f = go.Figure([go.Scatter(x=[0, 1], y=[1, 2]), go.Scatter(x=[0, 1], y=[1, 2])])
    >>> [(t.line.dash, t.line.width, t.marker.symbol) for t in distinct_lines(f).data]
    [('solid', 5.0, 'circle'), ('dash', 2.0, 'square')]
    """
    n = len(fig.data)
    for i, trace in enumerate(fig.data):
        trace.line.dash = LINE_DASHES[i % len(LINE_DASHES)]
        trace.line.width = 2.0 + 3.0 * (n - 1 - i) / max(1, n - 1)
        trace.marker.symbol = LINE_SYMBOLS[i % len(LINE_SYMBOLS)]
        trace.marker.size = 6 + 5 * (n - 1 - i) / max(1, n - 1)
    return fig


def graph_stats_figure(events: Sequence[DebateEvent]) -> go.Figure:
    """The debate's structure as it grew: IN/OUT/UNDEC counts and attacks for an argument
    graph; disputes, stances, reasons, cruxes and common ground for a dispute graph; turns,
    disagreements, crux rooms and crux cards for the other engines."""
    fig = go.Figure()
    steps = framework_steps(events)
    dcg = [e for e in events if isinstance(e, DCGUpdate)]
    if steps:
        xs = [s.seq for s in steps]
        for name, ys in (
            ("IN", [s.in_count for s in steps]),
            ("OUT", [s.out_count for s in steps]),
            ("UNDEC", [s.undec_count for s in steps]),
        ):
            fig.add_trace(go.Scatter(x=xs, y=ys, name=name, mode="lines+markers", line={"color": LABEL_COLORS[name]}))
        fig.add_trace(go.Scatter(x=xs, y=[len(s.graph.attacks) for s in steps], name="attacks",
                                 mode="lines+markers", line={"dash": "dot", "color": "#555"}))
        title = "Argument graph over the debate"
    elif dcg:
        xs = [e.seq for e in dcg]
        for name, color, ys in (
            ("disputes", "#1f77b4", [len(e.dcg.disputes) for e in dcg]),
            ("stances", "#ff7f0e", [len(e.dcg.stances) for e in dcg]),
            ("reasons", "#2ca02c", [len(e.dcg.reasons) for e in dcg]),
            ("cruxes", "#d62728", [len(e.cruxes) for e in dcg]),
            ("common ground", "#9467bd", [len(e.common_ground) for e in dcg]),
        ):
            fig.add_trace(go.Scatter(x=xs, y=ys, name=name, mode="lines+markers", line={"color": color}))
        title = "Dispute graph over the debate"
    else:
        xs, series = _running_counts(events)
        for name, ys in series.items():
            fig.add_trace(go.Scatter(x=xs, y=ys, name=name, mode="lines", line={"shape": "hv"}))
        title = "The debate as it went: turns, disagreements, crux rooms and cards" if series else "No events in this run"
    distinct_lines(fig)
    fig.update_layout(hovermode="x unified", title=title, height=320, xaxis_title="event number", yaxis_title="count (running total)",
                      margin={"l": 50, "r": 20, "t": 50, "b": 40})
    return fig


# ---------------------------------------------------------------------------
# The Dung argument graph
# ---------------------------------------------------------------------------


def _layout(graphs: Sequence[ArgumentGraph], order: Sequence[str]) -> tuple[dict[str, tuple[float, float]], list[str]]:
    """Fixed positions over all states: one column per persona, arguments stacked in order of
    first appearance."""
    speaker: dict[str, str] = {}
    for g in graphs:
        for a in g.arguments:
            speaker.setdefault(a.id, a.speaker_id)
    columns = [p for p in order if p in speaker.values()]
    columns += [p for p in dict.fromkeys(speaker.values()) if p not in columns]
    rows: Counter[str] = Counter()
    pos: dict[str, tuple[float, float]] = {}
    for arg_id, pid in speaker.items():
        pos[arg_id] = (float(columns.index(pid)), -float(rows[pid]))
        rows[pid] += 1
    return pos, columns


def _title_of(arg: Any, n: int) -> str:
    title = getattr(arg, "title", None)  # a model-written title, when the engine gives one
    return short_title(title or arg.claim, n)


def _dung_traces(graph: ArgumentGraph, pos: Mapping[str, tuple[float, float]], crux_args: set[str],
                 names: Mapping[str, str], title_chars: int,
                 scale: tuple[float, float] = (1.0, 1.0)) -> tuple[list[go.Scatter], list[dict[str, Any]]]:
    """The graph's traces (its routed edges first, under the nodes, then one trace per node
    kind and the crux legend entry: always the same traces, so frames animate) and its arrows.
    An edge that would pass through another node is bent around it (:func:`route_edge`): the
    bent part is a line, the arrow its last leg."""
    kinds = node_kinds(graph)
    present = {a.id: a for a in graph.arguments}

    def who(arg_id: str) -> str:
        a = present[arg_id]
        return f"{_title_of(a, 40)} ({names.get(a.speaker_id, a.speaker_id)})"

    attacked_by: dict[str, list[str]] = {a: [] for a in present}
    attacks: dict[str, list[str]] = {a: [] for a in present}
    arrows: list[dict[str, Any]] = []
    edge_x: list[float | None] = []
    edge_y: list[float | None] = []
    nodes = [pos[a] for a in present]
    for att in graph.attacks:
        if att.from_arg_id not in present or att.to_arg_id not in present:
            continue
        why = f" — {att.rationale or att.counter_proposition}" if (att.rationale or att.counter_proposition) else ""
        attacked_by[att.to_arg_id].append(f"{att.type.value} by {who(att.from_arg_id)}{why}")
        attacks[att.from_arg_id].append(f"{att.type.value}s {who(att.to_arg_id)}")
        path = route_edge(pos[att.from_arg_id], pos[att.to_arg_id], nodes, clearance=NODE_CLEARANCE_PX, scale=scale)
        if len(path) > 2:  # the legs up to the last waypoint as a line; the arrow draws the last leg
            edge_x += [p[0] for p in path[:-1]] + [None]
            edge_y += [p[1] for p in path[:-1]] + [None]
        (x0, y0), (x1, y1) = path[-2], path[-1]
        arrows.append({"x": x1, "y": y1, "ax": x0, "ay": y0, "xref": "x", "yref": "y", "axref": "x", "ayref": "y",
                       "text": "", "showarrow": True, "arrowhead": 2, "arrowsize": 1.2, "arrowwidth": 1.2,
                       "arrowcolor": EDGE_COLOR, "standoff": 10, "startstandoff": 9 if len(path) == 2 else 0})
    traces = [go.Scatter(x=edge_x, y=edge_y, mode="lines", line={"color": EDGE_COLOR, "width": 1.2},
                         hoverinfo="skip", showlegend=False, name="attacks")]
    for kind, color, meaning in NODE_KINDS:
        args = [a for a in graph.arguments if kinds[a.id] == kind]
        hover = []
        for a in args:
            lines = [f"<b>{esc(names.get(a.speaker_id, a.speaker_id))}</b> · {esc(kind)}" + (" · <b>crux</b>" if a.id in crux_args else ""),
                     wrap(a.claim)]
            if a.premises:
                lines.append("<i>because:</i> " + wrap("; ".join(a.premises)))
            lines += [f"<i>attacked:</i> {wrap(x, max_lines=3)}" for x in attacked_by[a.id][:4]]
            lines += [f"<i>attacks:</i> {wrap(x, max_lines=2)}" for x in attacks[a.id][:4]]
            hover.append("<br>".join(lines))
        traces.append(go.Scatter(
            x=[pos[a.id][0] for a in args], y=[pos[a.id][1] for a in args], mode="markers+text",
            name=f"{kind}: {meaning}", legendgroup=kind, meta=kind,
            text=[esc(_title_of(a, title_chars)) for a in args], textposition="top center", textfont={"size": 11},
            marker={"size": 16, "color": color,
                    "line": {"color": [CRUX_OUTLINE if a.id in crux_args else "#ffffff" for a in args],
                             "width": [4 if a.id in crux_args else 1 for a in args]}},
            hovertext=hover, hoverinfo="text", cliponaxis=False,
        ))
    # A legend entry for the crux ring (no data of its own).
    traces.append(go.Scatter(x=[None], y=[None], mode="markers", name="crux argument (orange ring)",
                             marker={"size": 14, "color": "#ffffff", "line": {"color": CRUX_OUTLINE, "width": 4}}))
    return traces, arrows


def _step_kind(steps: Sequence[FrameworkStep]) -> str:
    """What the steps are ("crystallization", "round"), when they are all of one kind."""
    kinds = {s.label.rsplit(" ", 1)[0] for s in steps}
    return kinds.pop() if len(kinds) == 1 else "step"


def step_subtitle(step: FrameworkStep, total: int) -> list[str]:
    """The figure's subtitle for one step, in escaped lines that fit the figure's width: the
    step, its arguments and attacks, and what the colours say when nothing is accepted.

    >>> from crux_lab.models import Argument
    >>> g = ArgumentGraph(arguments=[Argument(id="a", speaker_id="p", claim="c")])
    >>> step_subtitle(FrameworkStep(3, "crystallization 1", g, 1, 0, 0), 4)
    ['crystallization 1 of 4: 1 argument, 0 attacks (arrow: attacker → target)']
    """
    graph = step.graph
    kinds = Counter(node_kinds(graph).values())
    n, m = len(graph.arguments), len(graph.attacks)
    where = f"{step.label} of {total}: " if total > 1 else ""
    text = f"{where}{n} argument{'s' * (n != 1)}, {m} attack{'s' * (m != 1)} (arrow: attacker → target)"
    if graph.arguments and kinds["IN"] == 0 and kinds["OUT"] == 0:
        text += ("; no argument is accepted outright: every attack is answered by a counter-attack"
                 + (", but the light-green ones belong to a consistent position" if kinds["UNDEC defensible"] else ""))
    return wrap(text, SUBTITLE_CHARS, 4).split("<br>")


def argument_framework_figure(
    graph: ArgumentGraph,
    *,
    camps: Sequence[Camp] = (),
    cruxes: Sequence[Crux] = (),
    names: Mapping[str, str] | None = None,
    title: str = "Argument graph",
    height: int | None = None,
) -> go.Figure | HTMLBlock:
    """The final argument graph: one column per persona, arrows from attacker to target."""
    return framework_steps_figure([FrameworkStep(0, "final", graph, *_counts(graph))], camps=camps, cruxes=cruxes,
                                  names=names, title=title, height=height)


def framework_steps_figure(
    steps: Sequence[FrameworkStep],
    *,
    camps: Sequence[Camp] = (),
    cruxes: Sequence[Crux] = (),
    names: Mapping[str, str] | None = None,
    title: str = "Argument graph, step by step",
    height: int | None = None,
) -> go.Figure | HTMLBlock:
    """One frame per step with a slider (and play button): the graph grows as crystallizations
    add arguments and shrinks as concessions remove them. Positions are fixed across frames."""
    names = names or {}
    crux_args = {a for c in cruxes for a in c.argument_ids}
    if not any(s.graph.arguments for s in steps):
        return no_figure(f"{title}: this run has no argument graph")
    order = list(dict.fromkeys([*names, *(p for c in camps for p in c.persona_ids)]))
    pos, columns = _layout([s.graph for s in steps], order)
    title_chars = max(16, min(44, 130 // max(1, len(columns))))
    nrows = max((int(-y) for _, y in pos.values()), default=0) + 1
    stepped = len(steps) > 1
    height = height or max(380, ROW_PX * nrows + (300 if stepped else 180))
    subtitles = [step_subtitle(s, len(steps)) for s in steps]
    lines = max(len(t) for t in subtitles)
    top, bottom = 80 + 16 * lines, (200 if stepped else 80)
    # pixels per unit of each axis, so that edges keep clear of nodes on screen
    scale = ((FIGURE_WIDTH_PX - 50) / max(1, len(columns)), (height - top - bottom) / (nrows + 0.2))

    def subtitle(i: int) -> dict[str, Any]:  # above the column heads, following the slider
        return {"text": "<br>".join(subtitles[i]), "xref": "paper", "yref": "paper", "x": 0, "xanchor": "left",
                "y": 1, "yanchor": "bottom", "yshift": 30, "align": "left", "showarrow": False,
                "font": {"size": 12, "color": "#444"}}

    last = steps[-1]
    data, arrows = _dung_traces(last.graph, pos, crux_args, names, title_chars, scale)
    fig = go.Figure(data=data)
    heads = [{"text": f"<b>{esc(names.get(p, p))}</b>", "x": i, "xref": "x", "xanchor": "center", "y": 1.0, "yref": "paper",
              "yanchor": "bottom", "showarrow": False, "font": {"size": 13}} for i, p in enumerate(columns)]
    if stepped:
        frames = []
        for i, s in enumerate(steps):
            fdata, farrows = _dung_traces(s.graph, pos, crux_args, names, title_chars, scale)
            frames.append(go.Frame(data=fdata, layout={"annotations": [subtitle(i), *heads, *farrows]}, name=str(i)))
        fig.frames = frames
        kind = _step_kind(steps)
        fig.update_layout(
            sliders=[{
                "active": len(steps) - 1, "x": 0.04, "len": 0.86, "y": 0, "yanchor": "top", "pad": {"t": 95, "l": 10},
                "currentvalue": {"prefix": f"showing {kind} ", "suffix": f" of {len(steps)}"},
                "steps": [
                    {"label": str(i + 1), "method": "animate",
                     "args": [[str(i)], {"mode": "immediate", "frame": {"duration": 0, "redraw": True}}]}
                    for i in range(len(steps))
                ],
            }],
            updatemenus=[{"type": "buttons", "showactive": False, "x": 1.0, "xanchor": "right", "y": 0, "yanchor": "top",
                          "pad": {"t": 60}, "buttons": [
                {"label": "play", "method": "animate",
                 "args": [None, {"frame": {"duration": 700, "redraw": True}, "fromcurrent": True}]},
            ]}],
        )
    fig.update_layout(
        annotations=[subtitle(len(steps) - 1), *heads, *arrows], height=height,
        title={"text": esc(title), "yref": "container", "y": 1, "yanchor": "top", "pad": {"t": 12}, "x": 0.01,
               "xanchor": "left"},
        plot_bgcolor="#ffffff", hoverlabel={"align": "left"},
        legend={"orientation": "h", "y": -0.02, "yanchor": "top", "x": 0, "font": {"size": 11}},
        xaxis={"visible": False, "range": [-0.5, len(columns) - 0.5], "fixedrange": True},
        yaxis={"visible": False, "range": [-(nrows - 0.5), 0.7], "fixedrange": True},
        margin={"l": 20, "r": 30, "t": top, "b": bottom},
    )
    return fig


# ---------------------------------------------------------------------------
# The dispute graph (dcg) and crux cards (panel, crux rooms)
# ---------------------------------------------------------------------------


def dispute_view(
    dcg: DCGState,
    *,
    cruxes: Sequence[Crux] = (),
    common_ground: Sequence[CommonGround] = (),
    names: Mapping[str, str] | None = None,
    title: str = "Disputes: who holds which side, and why",
) -> go.Figure | HTMLBlock:
    """One row per dispute: its question and status (crux, common ground or open), then under
    YES and under NO each persona's stance with its reasons (+ supports, − attacks)."""
    names = names or {}
    if not dcg.disputes:
        return no_figure(f"{title}: this run has no disputes")
    crux_disputes = {c.dispute_id for c in cruxes if c.dispute_id}
    agreed = {g.dispute_id for g in common_ground if g.dispute_id}
    reasons: dict[str, list[str]] = {}
    for r in dcg.reasons:
        mark = "+" if r.polarity == "SUPPORT" else "−"
        reasons.setdefault(r.stance_id, []).append(f"&nbsp;&nbsp;{mark} {wrap(r.claim, 52, 3).replace('<br>', '<br>&nbsp;&nbsp;&nbsp;&nbsp;')}")
    cols: dict[str, list[str]] = {"question": [], "status": [], "YES": [], "NO": []}
    fills: list[str] = []
    lines: list[int] = []
    for d in dcg.disputes:
        status = "crux" if d.id in crux_disputes else ("common ground" if d.id in agreed else "open")
        cols["question"].append(f"<b>{wrap(d.question, 34, 4)}</b>")
        cols["status"].append(status + (f"<br>({esc(d.disagreement_type.value)})" if d.disagreement_type else ""))
        fills.append("#fff3e0" if status == "crux" else ("#eef8ee" if status == "common ground" else "#ffffff"))
        row_lines = [cols["question"][-1].count("<br>") + 1]
        for side in ("YES", "NO"):
            parts = []
            for s in (x for x in dcg.stances if x.dispute_id == d.id and x.side.value == side):
                parts.append(f"<b>{esc(names.get(s.speaker_id, s.speaker_id))}</b>: {wrap(s.statement, 52, 3)}")
                parts.extend(reasons.get(s.id, []))
            text = "<br>".join(parts) or "<i>(nobody)</i>"
            cols[side].append(text)
            row_lines.append(text.count("<br>") + 1)
        lines.append(max(row_lines))
    header = ["dispute", "status", "<b>YES</b> side: stances and reasons", "<b>NO</b> side: stances and reasons"]
    fig = go.Figure(go.Table(
        columnwidth=[2.2, 1, 3.4, 3.4],
        header={"values": header, "align": "left", "fill": {"color": "#e8e8e8"}, "font": {"size": 12}},
        cells={"values": [cols["question"], cols["status"], cols["YES"], cols["NO"]], "align": "left",
               "fill": {"color": [fills, fills, fills, fills]}, "font": {"size": 11}, "height": 22},
    ))
    fig.update_layout(title=esc(title), height=min(2400, 120 + 15 * sum(lines) + 10 * len(lines)),
                      margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig


POSITION_VALUE = {"YES": 1.0, "NUANCED": 0.0, "NO": -1.0}


def card_map(cards: Sequence[CruxCard], *, names: Mapping[str, str] | None = None,
             title: str = "Crux cards: where each persona stands") -> go.Figure | HTMLBlock:
    """Crux cards × personas: green YES, red NO, white NUANCED, blank = no position; hover
    shows the question, the diagnosis and the persona's reasoning and falsifier."""
    names = names or {}
    if not cards:
        return no_figure(f"{title}: this run posted no crux cards")
    personas = list(dict.fromkeys(p for c in cards for p in c.personas))
    z: list[list[float | None]] = []
    text: list[list[str]] = []
    hover: list[list[str]] = []
    for c in cards:
        zr: list[float | None] = []
        tr, hr = [], []
        for p in personas:
            pos = c.personas.get(p)
            zr.append(POSITION_VALUE[pos.position.value] if pos else None)
            tr.append(pos.position.value if pos else "")
            h = f"<b>{esc(names.get(p, p))}</b>: {esc(pos.position.value) if pos else 'no position'}<br>{wrap(c.question)}"
            if pos:
                h += f"<br><i>reasoning:</i> {wrap(pos.reasoning, max_lines=4)}"
                if pos.falsifier:
                    h += f"<br><i>would change if:</i> {wrap(pos.falsifier, max_lines=3)}"
            hr.append(h)
        z.append(zr)
        text.append(tr)
        hover.append(hr)
    ylabels = [f"{esc(short_title(c.question, 46))} [{esc(c.disagreement_type.value)}]" for c in cards]
    # Two cards with the same short title stay distinct rows.
    seen: Counter[str] = Counter()
    for i, label in enumerate(ylabels):
        seen[label] += 1
        if seen[label] > 1:
            ylabels[i] = f"{label} ({seen[label]})"
    fig = go.Figure(go.Heatmap(
        z=z, x=[esc(names.get(p, p)) for p in personas], y=ylabels, text=text, texttemplate="%{text}",
        zmin=-1, zmax=1, colorscale=[[0.0, "#d73027"], [0.5, "#f7f7f7"], [1.0, "#1a9850"]], showscale=False,
        hovertext=hover, hoverinfo="text", xgap=3, ygap=3,
    ))
    fig.update_layout(title=esc(title), height=max(260, 44 * len(cards) + 150), hoverlabel={"align": "left"},
                      plot_bgcolor="#ffffff", xaxis={"side": "top", "showgrid": False},
                      yaxis={"autorange": "reversed", "automargin": True, "showgrid": False},
                      margin={"l": 10, "r": 20, "t": 90, "b": 20})
    return fig


def structure_figure(result: DebateResult, *, names: Mapping[str, str] | None = None, steps: bool = False) -> Any:
    """The argument structure a run has: its argument graph (with a slider through the
    crystallizations when ``steps``), else its dispute graph, else its crux cards; else a
    short note that the engine keeps none of them."""
    if result.graph.arguments:
        if steps:
            return framework_steps_figure(framework_steps(result.events) or
                                          [FrameworkStep(0, "final", result.graph, *_counts(result.graph))],
                                          camps=result.camps, cruxes=result.cruxes, names=names)
        return argument_framework_figure(result.graph, camps=result.camps, cruxes=result.cruxes, names=names)
    if result.dcg.disputes:
        return dispute_view(result.dcg, cruxes=result.cruxes, common_ground=result.common_ground, names=names)
    if result.crux_cards:
        return card_map(result.crux_cards, names=names)
    return HTMLBlock(f"<div><i>The {esc(result.engine)} engine keeps no argument graph, dispute graph or crux cards; "
                     "its cruxes are listed below.</i></div>")
