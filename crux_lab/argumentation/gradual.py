"""Gradual semantics: h-categorizer and DF-QuAD strengths in ``[0, 1]``.

Used to rank reasons by strength inside a dispute, where Dung's extensions
only say IN/OUT/UNDEC.

>>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "c")])
>>> {k: round(v, 3) for k, v in sorted(h_categorizer(af).items())}
{'a': 1.0, 'b': 0.5, 'c': 0.667}
>>> {k: round(v, 3) for k, v in sorted(df_quad("abc", [("a", "b")], [("c", "b")]).items())}
{'a': 0.5, 'b': 0.5, 'c': 0.5}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from crux_lab.argumentation.framework import Arg, ArgumentFramework

__all__ = ["df_quad", "h_categorizer"]


def h_categorizer(
    af: ArgumentFramework, tol: float = 1e-10, max_iter: int = 10_000
) -> dict[Arg, float]:
    """Besnard & Hunter's h-categorizer: ``h(a) = 1 / (1 + Σ_{b attacks a} h(b))``.

    The unique fixed point (Pu et al. 2014) is reached by iteration from 1.

    >>> af = ArgumentFramework.from_edges("ab", [("a", "b"), ("b", "a")])
    >>> {k: round(v, 4) for k, v in sorted(h_categorizer(af).items())}
    {'a': 0.618, 'b': 0.618}
    """
    ix = af._index
    n = len(ix.args)
    h = [1.0] * n
    for _ in range(max_iter):
        new = [1.0 / (1.0 + sum(h[b] for b in ix.pred[a])) for a in range(n)]
        delta = max((abs(x - y) for x, y in zip(new, h, strict=True)), default=0.0)
        h = new
        if delta < tol:
            break
    return {ix.args[i]: h[i] for i in range(n)}


def _aggregate(values: Iterable[float]) -> float:
    prod = 1.0
    for v in values:
        prod *= 1.0 - v
    return 1.0 - prod


def df_quad(
    arguments: Iterable[Arg],
    attacks: Iterable[tuple[Arg, Arg]],
    supports: Iterable[tuple[Arg, Arg]] = (),
    base_scores: Mapping[Arg, float] | None = None,
    tol: float = 1e-10,
    max_iter: int = 10_000,
) -> dict[Arg, float]:
    """DF-QuAD strengths (Rago et al. 2016) for a bipolar framework.

    ``v_a = F(attackers)``, ``v_s = F(supporters)`` with ``F(x1..xn) = 1 - Π(1 - xi)``;
    if ``v_a >= v_s`` the strength is ``τ - τ·(v_a - v_s)``, else
    ``τ + (1 - τ)·(v_s - v_a)``, ``τ`` the base score (default 0.5).
    Exact on acyclic graphs (evaluated to a fixed point in ``depth`` sweeps);
    on cyclic graphs the synchronous iteration stops after ``max_iter``.

    >>> s = df_quad("abc", [("a", "c")], [("b", "c")], {"a": 0.2, "b": 0.8, "c": 0.5})
    >>> round(s["c"], 2)
    0.8
    """
    args = list(dict.fromkeys(arguments))
    att: dict[Arg, list[Arg]] = {a: [] for a in args}
    sup: dict[Arg, list[Arg]] = {a: [] for a in args}
    for x, y in attacks:
        att[y].append(x)
    for x, y in supports:
        sup[y].append(x)
    tau = {a: (base_scores or {}).get(a, 0.5) for a in args}
    s = dict(tau)
    for _ in range(max_iter):
        new = {}
        for a in args:
            va = _aggregate(s[b] for b in att[a])
            vs = _aggregate(s[b] for b in sup[a])
            t = tau[a]
            new[a] = t - t * (va - vs) if va >= vs else t + (1.0 - t) * (vs - va)
        delta = max((abs(new[a] - s[a]) for a in args), default=0.0)
        s = new
        if delta < tol:
            break
    return s
