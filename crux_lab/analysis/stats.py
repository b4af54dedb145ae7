"""Means and bootstrap intervals shared by the evaluations (pure)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["bootstrap_interval", "cell", "cluster_interval", "cohen_kappa", "nanmean", "with_interval"]


def cell(value: object, digits: int = 2) -> str:
    """A value as a Markdown table cell: a float to ``digits`` places, ``nan`` as a dash.

    >>> cell(0.756), cell(float("nan")), cell(12.3, 0), cell(7)
    ('0.76', '–', '12', '7')
    """
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def with_interval(mean: float, ci: tuple[float, float]) -> str:
    """``0.5 [0.2–0.8]``; the interval left out when it is undefined.

    >>> with_interval(0.5, (0.25, 0.75))
    '0.50 [0.25–0.75]'
    >>> with_interval(float("nan"), (float("nan"), float("nan")))
    '—'
    """
    if math.isnan(mean):
        return "—"
    if any(math.isnan(v) for v in ci):
        return f"{mean:.2f}"
    return f"{mean:.2f} [{ci[0]:.2f}–{ci[1]:.2f}]"


def nanmean(values: Sequence[float]) -> float:
    """The mean of the values that are not ``nan`` (``nan`` when none is).

    >>> nanmean([1.0, float("nan"), 3.0])
    2.0
    >>> math.isnan(nanmean([float("nan")]))
    True
    """
    vals = [v for v in values if not math.isnan(v)]
    return sum(vals) / len(vals) if vals else math.nan


def bootstrap_interval(values: Sequence[float], seed: int = 0, n: int = 2000) -> tuple[float, float]:
    """A 95% percentile bootstrap interval of the mean, ``nan`` values left out (``(nan, nan)``
    with fewer than two values). Seeded: the same values give the same interval.

    >>> bootstrap_interval([1.0, 1.0, 1.0])
    (1.0, 1.0)
    >>> low, high = bootstrap_interval([0.0, 1.0] * 10)
    >>> 0.2 < low < 0.5 < high < 0.8
    True
    """
    vals = np.array([v for v in values if not math.isnan(v)], dtype=float)
    if vals.size < 2:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = rng.choice(vals, size=(n, vals.size), replace=True).mean(axis=1)
    return (round(float(np.quantile(means, 0.025)), 4), round(float(np.quantile(means, 0.975)), 4))


def cluster_interval(values: Sequence[float], clusters: Sequence[str], seed: int = 0, n: int = 2000) -> tuple[float, float]:
    """A 95% percentile bootstrap interval of the mean that resamples whole clusters (the
    debates of one scenario, every seed), not single values: two seeds of one scenario are not
    two independent draws. ``nan`` values are left out; ``(nan, nan)`` with fewer than two
    clusters. Seeded.

    >>> cluster_interval([1.0, 1.0, 0.0, 0.0], ["a", "a", "b", "b"])
    (0.0, 1.0)
    >>> cluster_interval([0.5, 0.5], ["a", "a"])
    (nan, nan)
    """
    groups: dict[str, list[float]] = {}
    for v, c in zip(values, clusters, strict=True):
        if not math.isnan(v):
            groups.setdefault(c, []).append(v)
    if len(groups) < 2:
        return (math.nan, math.nan)
    sums = np.array([sum(g) for g in groups.values()])
    counts = np.array([len(g) for g in groups.values()])
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(groups), size=(n, len(groups)))
    means = sums[picks].sum(axis=1) / counts[picks].sum(axis=1)
    return (round(float(np.quantile(means, 0.025)), 4), round(float(np.quantile(means, 0.975)), 4))


def cohen_kappa(a: Sequence[object], b: Sequence[object]) -> float:
    """Cohen's kappa of two raters' labels of the same items: agreement beyond chance, 1 when
    they always agree, 0 at chance; ``nan`` with no items or when chance agreement is 1 (both
    raters gave one and the same label to everything).

    >>> cohen_kappa([1, 1, 0, 0], [1, 1, 0, 0])
    1.0
    >>> cohen_kappa([1, 0, 1, 0], [1, 1, 0, 0])
    0.0
    >>> round(cohen_kappa(["y", "y", "y", "n"], ["y", "y", "n", "n"]), 3)
    0.5
    """
    if len(a) != len(b):
        raise ValueError(f"two raters must label the same items ({len(a)} and {len(b)} labels)")
    n = len(a)
    if n == 0:
        return math.nan
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    labels = set(a) | set(b)
    chance = sum((list(a).count(k) / n) * (list(b).count(k) / n) for k in labels)
    return math.nan if chance == 1 else (observed - chance) / (1 - chance)
