"""Position shifts: each persona's opening → closing stance per proposition, with the crux
rooms each shift is attributed to, and the stance timeline over the debate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from crux_lab.analysis.shifts import TimelinePoint
from crux_lab.models.domain import PersonaPosition, PositionShift
from crux_lab.viz._text import esc, short_title, wrap

STANCE_X: dict[str, float] = {"con": -1.0, "uncertain": 0.0, "pro": 1.0}


def shift_rows(positions: Sequence[PersonaPosition]) -> list[tuple[str, str, str | None, str | None]]:
    """(persona, proposition, opening stance, closing stance) for every pair with a stance.

    >>> o = PersonaPosition(persona_id="a", at="opening", text="", stances={"p": "pro"})
    >>> c = PersonaPosition(persona_id="a", at="closing", text="", stances={"p": "con"})
    >>> shift_rows([o, c])
    [('a', 'p', 'pro', 'con')]
    """
    opening: dict[tuple[str, str], str] = {}
    closing: dict[tuple[str, str], str] = {}
    for p in positions:
        target = opening if p.at in ("opening", "initial") else closing
        for prop, stance in p.stances.items():
            target[(p.persona_id, prop)] = stance
    keys = sorted(set(opening) | set(closing))
    return [(pid, prop, opening.get((pid, prop)), closing.get((pid, prop))) for pid, prop in keys]


def position_shift_figure(
    positions: Sequence[PersonaPosition],
    shifts: Sequence[PositionShift] = (),
    *,
    names: Mapping[str, str] | None = None,
    texts: Mapping[str, str] | None = None,
    title: str = "Position shifts: opening → closing",
) -> go.Figure:
    """A dumbbell per persona × proposition: hollow = opening, filled = closing, on a
    con (-1) … uncertain (0) … pro (+1) axis. Shifts are red, with the crux rooms they are
    attributed to and the named reason in the hover. ``texts`` maps proposition ids to their
    text (rows show a short title of it)."""
    names = names or {}
    texts = texts or {}
    by_persona = {s.persona_id: s for s in shifts}
    rows = shift_rows(positions)
    fig = go.Figure()
    ys = [f"{esc(names.get(pid, pid))} · {esc(short_title(texts.get(prop, prop), 44))}" for pid, prop, _, _ in rows]
    for y, (_pid, _prop, before, after) in zip(ys, rows, strict=True):
        if before is None or after is None:
            continue
        moved = before != after
        fig.add_trace(go.Scatter(x=[STANCE_X[before], STANCE_X[after]], y=[y, y], mode="lines",
                                 line={"color": "#d73027" if moved else "#bbbbbb", "width": 3},
                                 hoverinfo="skip", showlegend=False))
    hover = []
    for pid, prop, before, after in rows:
        s = by_persona.get(pid)
        rooms = ", ".join(s.attributed_rooms) if s and s.attributed_rooms else "none"
        reason = s.named_reason if s and s.named_reason else "—"
        hover.append(f"<b>{esc(names.get(pid, pid))}</b> on {wrap(texts.get(prop, prop))}<br>{esc(before)} → {esc(after)}"
                     f"<br>attributed rooms: {esc(rooms)}<br>named reason: {wrap(reason)}")
    fig.add_trace(go.Scatter(x=[STANCE_X.get(b or "") for _, _, b, _ in rows], y=ys, mode="markers", name="opening",
                             marker={"symbol": "circle-open", "size": 13, "color": "#333"}, hovertext=hover, hoverinfo="text"))
    fig.add_trace(go.Scatter(x=[STANCE_X.get(a or "") for _, _, _, a in rows], y=ys, mode="markers", name="closing",
                             marker={"size": 10, "color": ["#d73027" if b != a else "#2166ac" for _, _, b, a in rows]},
                             hovertext=hover, hoverinfo="text"))
    summaries = [f"{esc(names.get(s.persona_id, s.persona_id))}: {esc(s.summary)}" for s in shifts if s.shifted]
    fig.update_layout(
        title=esc(title), height=max(300, 26 * len(rows) + 160), hoverlabel={"align": "left"},
        xaxis={"tickvals": [-1, 0, 1], "ticktext": ["con", "uncertain", "pro"], "range": [-1.4, 1.4]},
        yaxis={"autorange": "reversed"}, margin={"l": 20, "r": 20, "t": 50, "b": 40 + 18 * min(len(summaries), 6)},
    )
    for i, text in enumerate(summaries[:6]):
        fig.add_annotation(text=text[:160], xref="paper", yref="paper", x=0, y=-0.08 - 0.05 * i, showarrow=False,
                           xanchor="left", font={"size": 10})
    return fig


def shift_timeline_figure(points: Sequence[TimelinePoint], *, names: Mapping[str, str] | None = None,
                          texts: Mapping[str, str] | None = None, title: str = "Stance timeline") -> go.Figure:
    """Stance per persona × proposition over turns; changes are marked, crux-room turns diamond."""
    names = names or {}
    texts = texts or {}
    series: dict[tuple[str, str], list[TimelinePoint]] = {}
    for p in points:
        series.setdefault((p.persona_id, p.proposition_id), []).append(p)
    fig = go.Figure()
    for (pid, prop), pts in sorted(series.items()):
        fig.add_trace(go.Scatter(
            x=[p.turn_index for p in pts], y=[STANCE_X[p.stance] for p in pts], mode="lines+markers",
            name=f"{esc(names.get(pid, pid))} · {esc(short_title(texts.get(prop, prop), 36))}", line={"shape": "hv"},
            marker={"symbol": ["diamond" if p.room_id else "circle" for p in pts],
                    "size": [12 if p.changed else 7 for p in pts]},
            hovertext=[f"turn {p.turn_index}: {esc(p.stance)}" + (f" in room {esc(p.room_id)}" if p.room_id else "")
                       + (" (changed)" if p.changed else "") for p in pts],
            hoverinfo="text",
        ))
    fig.update_layout(title=esc(title), height=360, xaxis_title="turn",
                      yaxis={"tickvals": [-1, 0, 1], "ticktext": ["con", "uncertain", "pro"]},
                      margin={"l": 50, "r": 20, "t": 50, "b": 40})
    return fig
