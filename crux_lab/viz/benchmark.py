"""Engine comparison over a sweep: means with confidence intervals over seeds, regime
distribution and per-seed distributions. Input: one record (mapping) per run, as returned by
:func:`crux_lab.workbench.sweep_table`; output: plotly figures."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from crux_lab.viz._text import esc, fmt_number

Record = Mapping[str, Any]
REGIME_COLORS = {
    "consensus": "#1a9850", "partial": "#fdb863", "polarized": "#d73027",
    "no_disagreement_found": "#4575b4", "unknown": "#bbbbbb",
}


# The range a metric can take, where the interval must stay: counts and costs are never
# negative, shares lie in [0, 1]. Metrics not named here keep the plain t-interval.
_UNIT_SHARES = frozenset({"fake_consensus"})
_NONNEGATIVE = frozenset({"calls", "tokens", "input_tokens", "output_tokens", "cost_usd", "wall_s", "latency_s"})


def metric_bounds(metric: str) -> tuple[float, float] | None:
    """The values ``metric`` can take, as (low, high), or None where it is not known.

    >>> metric_bounds("n_cruxes"), metric_bounds("fake_consensus"), metric_bounds("shift")
    ((0.0, inf), (0.0, 1.0), None)
    """
    if metric in _UNIT_SHARES:
        return (0.0, 1.0)
    if metric in _NONNEGATIVE or metric.startswith("n_"):
        return (0.0, math.inf)
    return None


def mean_ci(
    values: Sequence[float], level: float = 0.95, bounds: tuple[float, float] | None = None
) -> tuple[float, float, float]:
    """Mean and the two-sided Student-t confidence interval (the interval is the mean itself
    for fewer than two values), cut to ``bounds`` where the metric cannot go beyond them (a
    count of cruxes is never negative).

    >>> mean_ci([1.0, 2.0, 3.0])[0]
    2.0
    >>> lo, hi = mean_ci([1.0, 2.0, 3.0])[1:]; round(lo, 3), round(hi, 3)
    (-0.484, 4.484)
    >>> lo, hi = mean_ci([1.0, 2.0, 3.0], bounds=(0.0, math.inf))[1:]; round(lo, 3), round(hi, 3)
    (0.0, 4.484)
    """
    xs = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not xs:
        return (math.nan, math.nan, math.nan)
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return (m, m, m)
    from scipy import stats  # lazy: scipy.stats costs ~2 s of import time in every kernel

    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    half = float(stats.t.ppf(0.5 + level / 2, len(xs) - 1)) * sd / math.sqrt(len(xs))
    low, high = bounds if bounds is not None else (-math.inf, math.inf)
    return (m, max(low, m - half), min(high, m + half))


def _by(records: Sequence[Record], key: str) -> dict[str, list[Record]]:
    out: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        out[str(r.get(key))].append(r)
    return dict(sorted(out.items()))


def engine_comparison_figure(
    records: Sequence[Record],
    metrics: Sequence[str] = ("calls", "tokens", "cost_usd", "n_cruxes", "fake_consensus"),
    *,
    group: str = "engine",
    level: float = 0.95,
    title: str = "Engine comparison (mean and 95% CI over runs)",
) -> go.Figure:
    """One panel per metric: the mean per engine with its confidence interval over seeds. A
    metric that cannot go below 0 gets an axis from 0 (a share, from 0 to 1), so a metric that
    is 0 in every run draws no axis below zero.

    >>> fig = engine_comparison_figure([{"engine": "dcg", "calls": 9, "fake_consensus": 0.0, "shift": -0.2}],
    ...                                ("calls", "fake_consensus", "shift"))
    >>> fig.layout.yaxis.rangemode, list(fig.layout.yaxis2.range), fig.layout.yaxis3.rangemode
    ('tozero', [0, 1.05], None)
    """
    groups = _by(records, group)
    cols = min(3, max(1, len(metrics)))
    nrows = math.ceil(len(metrics) / cols)
    fig = make_subplots(rows=nrows, cols=cols, subplot_titles=[esc(m) for m in metrics])
    for i, metric in enumerate(metrics):
        names, means, err_hi, err_lo, hover = [], [], [], [], []
        for name, rows in groups.items():
            m, lo, hi = mean_ci([r.get(metric) for r in rows], level, metric_bounds(metric))  # type: ignore[misc]
            names.append(esc(name))
            means.append(m)
            err_hi.append(0 if math.isnan(hi) else hi - m)
            err_lo.append(0 if math.isnan(lo) else m - lo)
            hover.append(f"{esc(name)}: {esc(metric)} mean {fmt_number(m)} [{fmt_number(lo)}, {fmt_number(hi)}], n={len(rows)}")
        fig.add_trace(
            go.Bar(x=names, y=means, name=esc(metric), showlegend=False, hovertext=hover, hoverinfo="text",
                   error_y={"type": "data", "symmetric": False, "array": err_hi, "arrayminus": err_lo}),
            row=i // cols + 1, col=i % cols + 1,
        )
        bounds = metric_bounds(metric)
        if bounds is not None:  # a count or a share: the axis starts at 0, and a share ends at 1
            axis = {"range": [0, 1.05]} if bounds[1] == 1.0 else {"rangemode": "tozero"}
            fig.update_yaxes(row=i // cols + 1, col=i % cols + 1, **axis)
    fig.update_layout(title=esc(title), height=300 * nrows + 60, margin={"l": 40, "r": 20, "t": 70, "b": 40})
    fig.update_yaxes(tickformat="~r", exponentformat="none")
    return fig


def regime_figure(records: Sequence[Record], *, group: str = "engine", title: str = "Regime distribution") -> go.Figure:
    """Share of runs per regime (consensus / partial / polarized / no disagreement found /
    unknown) for each engine; a regime this figure does not know counts as unknown, so each
    bar sums to 1.

    >>> fig = regime_figure([{"engine": "a", "regime": "polarized"}, {"engine": "a", "regime": "no_disagreement_found"}])
    >>> sorted((t.name, list(t.y)) for t in fig.data)
    [('consensus', [0.0]), ('no disagreement found', [0.5]), ('partial', [0.0]), ('polarized', [0.5]), ('unknown', [0.0])]
    """
    groups = _by(records, group)
    fig = go.Figure()
    for regime, color in REGIME_COLORS.items():
        ys = []
        for rows in groups.values():
            counts = Counter(
                str(r.get("regime")) if r.get("regime") in REGIME_COLORS else "unknown" for r in rows
            )
            ys.append(counts[regime] / len(rows))
        fig.add_trace(go.Bar(x=[esc(g) for g in groups], y=ys, name=regime.replace("_", " "), marker_color=color))
    fig.update_layout(title=esc(title), barmode="stack", height=320, yaxis={"title": "share of runs", "range": [0, 1]},
                      margin={"l": 50, "r": 20, "t": 50, "b": 40})
    return fig


def seed_distribution_figure(records: Sequence[Record], metric: str, *, group: str = "engine",
                             title: str | None = None) -> go.Figure:
    """The distribution of one metric over seeds (and topics), per engine: box plus points."""
    fig = go.Figure()
    for name, rows in _by(records, group).items():
        fig.add_trace(go.Box(
            y=[r.get(metric) for r in rows], name=esc(name), boxpoints="all", jitter=0.4, pointpos=0,
            hovertext=[f"seed {r.get('seed')} · {esc(r.get('topic', ''))[:60]}" for r in rows], hoverinfo="y+text",
        ))
    fig.update_layout(title=esc(title or f"{metric} over seeds"), height=320, showlegend=False,
                      yaxis={"title": esc(metric), "exponentformat": "none"}, margin={"l": 50, "r": 20, "t": 50, "b": 40})
    return fig
