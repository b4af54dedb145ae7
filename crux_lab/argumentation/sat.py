"""SAT backend (python-sat) for one component of a framework.

Encodings (labelling based, Cerutti et al. "PrefSAT"): for argument ``a`` the
variable ``in(a) = a + 1`` and ``out(a) = k + a + 1``; a complete labelling
satisfies ``in(a) <-> AND_b out(b)`` and ``out(a) <-> OR_b in(b)`` over the
attackers ``b`` of ``a``. Stable adds ``in(a) OR out(a)``. Preferred extensions
are enumerated by iterated maximisation of the ``in`` set; semi-stable and
stage by maximisation of a range projection. Credulous acceptance is one SAT
call, skeptical preferred acceptance a counter-example guided loop.

No I/O. All extensions are returned as lists of local indices.

>>> from crux_lab.argumentation._core import Component
>>> c = Component((0, 1), ((1,), (0,)), ((1,), (0,)))   # a <-> b
>>> SatComponent(c).extensions("preferred")
[[0], [1]]
"""

from __future__ import annotations

from collections.abc import Iterator

from pysat.solvers import Solver

from crux_lab.argumentation._core import Component

SOLVER_NAME = "glucose4"
"""python-sat solver used for every component. clingo was benchmarked as the alternative
(benchmarks/argumentation/README.md): faster on single hard cores, but a new dependency
with a grounding step, while python-sat is already required and only ever sees the small
residual components left after the grounded reduct."""

__all__ = ["SOLVER_NAME", "SatComponent"]


class SatComponent:
    """Incremental SAT reasoning over one component (local indices ``0..k-1``)."""

    def __init__(self, comp: Component, solver_name: str = SOLVER_NAME) -> None:
        self.comp = comp
        self.k = len(comp)
        self.solver_name = solver_name
        self._top = 2 * self.k
        self._persistent: dict[bool, Solver] = {}

    def _query_solver(self, stable: bool) -> Solver:
        """A long-lived complete (or stable) labelling solver for assumption queries.

        Query-specific clauses are guarded by fresh activation literals, so one
        solver answers any number of acceptance questions.
        """
        if stable not in self._persistent:
            top = self._top
            self._persistent[stable] = self._complete_solver(stable=stable)
            self._top = max(top, self._top)
        return self._persistent[stable]

    def close(self) -> None:
        """Free the long-lived solvers."""
        for s in self._persistent.values():
            s.delete()
        self._persistent.clear()

    def __del__(self) -> None:
        self.close()

    # -- encodings --------------------------------------------------------
    def _inv(self, a: int) -> int:
        return a + 1

    def _outv(self, a: int) -> int:
        return self.k + a + 1

    def _complete_solver(self, stable: bool = False, with_range: bool = False) -> Solver:
        k = self.k
        s = Solver(name=self.solver_name)
        add = s.add_clause
        for a in range(k):
            ia, oa = a + 1, k + a + 1
            atts = self.comp.pred[a]
            add([-ia, -oa])
            add([ia] + [-(k + b + 1) for b in atts])
            add([-oa] + [b + 1 for b in atts])
            for b in atts:
                add([-ia, k + b + 1])
                add([-(b + 1), oa])
            if stable:
                add([ia, oa])
            if with_range:
                ra = 2 * k + a + 1
                add([-ra, ia, oa])
                add([ra, -ia])
                add([ra, -oa])
        self._top = max(self._top, 3 * k if with_range else 2 * k)
        return s

    def _cf_range_solver(self) -> Solver:
        """Conflict-free sets with range variables ``r(a) = k + a + 1``."""
        k = self.k
        s = Solver(name=self.solver_name)
        add = s.add_clause
        for a in range(k):
            ia, ra = a + 1, k + a + 1
            atts = self.comp.pred[a]
            for b in atts:
                add([-ia, -(b + 1)] if b != a else [-ia])
                add([ra, -(b + 1)])
            add([ra, -ia])
            add([-ra, ia] + [b + 1 for b in atts])
        self._top = max(self._top, 2 * k)
        return s

    def _fresh(self) -> int:
        self._top += 1
        return self._top

    # -- generic maximal-projection enumeration -----------------------------
    def _maximal(
        self, s: Solver, proj: list[int], exact_in: bool, limit: int | None = None
    ) -> Iterator[list[int]]:
        """Yield in-sets of models whose ``proj`` projection is ⊆-maximal.

        With ``exact_in`` every model with a maximal projection is reported
        (needed when ``proj`` is not the in-set itself).
        """
        k = self.k
        found = 0
        while s.solve():
            model = s.get_model()
            assert model is not None
            chosen = [v for v in proj if model[v - 1] > 0]
            while True:
                chosen_set = set(chosen)
                rest = [v for v in proj if v not in chosen_set]
                if not rest:
                    break
                act = self._fresh()
                s.add_clause([-act, *rest])
                ok = s.solve(assumptions=[*chosen, act])
                if ok:
                    model = s.get_model()
                    assert model is not None
                    chosen = [v for v in proj if model[v - 1] > 0]
                s.add_clause([-act])
                if not ok:
                    break
            chosen_set = set(chosen)
            rest = [v for v in proj if v not in chosen_set]
            if not exact_in:
                yield [a for a in range(k) if model[a] > 0]
                found += 1
            else:
                assume = chosen + [-v for v in rest]
                while s.solve(assumptions=assume):
                    m2 = s.get_model()
                    assert m2 is not None
                    ins = [a for a in range(k) if m2[a] > 0]
                    yield ins
                    found += 1
                    if limit is not None and found >= limit:
                        return
                    s.add_clause([-(a + 1) if m2[a] > 0 else a + 1 for a in range(k)])
            if limit is not None and found >= limit:
                return
            if not rest:
                return
            s.add_clause(rest)

    # -- public -----------------------------------------------------------
    def iter_extensions(self, semantics: str, limit: int | None = None) -> Iterator[list[int]]:
        """Yield extensions (lists of local indices) of this component."""
        k = self.k
        if semantics in ("complete", "stable"):
            with self._complete_solver(stable=semantics == "stable") as s:
                n = 0
                while s.solve():
                    m = s.get_model()
                    assert m is not None
                    ins = [a for a in range(k) if m[a] > 0]
                    yield ins
                    n += 1
                    if limit is not None and n >= limit:
                        return
                    if semantics == "stable":
                        block = [a + 1 for a in range(k) if m[a] <= 0]
                    else:
                        block = [-(a + 1) if m[a] > 0 else a + 1 for a in range(k)]
                    if not block:
                        return
                    s.add_clause(block)
        elif semantics == "preferred":
            with self._complete_solver() as s:
                yield from self._maximal(s, list(range(1, k + 1)), False, limit)
        elif semantics == "semi-stable":
            with self._complete_solver(with_range=True) as s:
                yield from self._maximal(s, list(range(2 * k + 1, 3 * k + 1)), True, limit)
        elif semantics == "stage":
            with self._cf_range_solver() as s:
                yield from self._maximal(s, list(range(k + 1, 2 * k + 1)), True, limit)
        else:
            raise ValueError(f"unknown semantics {semantics!r}")

    def extensions(self, semantics: str, limit: int | None = None) -> list[list[int]]:
        """All extensions (sorted), see :meth:`iter_extensions`."""
        return sorted(self.iter_extensions(semantics, limit))

    def has_extension(self, semantics: str) -> bool:
        """Whether the component has at least one extension."""
        if semantics != "stable":
            return True
        return bool(self._query_solver(True).solve())

    def credulous(self, a: int, semantics: str) -> bool:
        """Is local argument ``a`` in some complete/preferred (or stable) extension?"""
        return bool(self._query_solver(semantics == "stable").solve(assumptions=[a + 1]))

    def credulous_all(self, semantics: str) -> set[int]:
        """All credulously accepted local arguments, reusing every model found:
        each satisfying labelling certifies all of its IN arguments at once."""
        s = self._query_solver(semantics == "stable")
        known: set[int] = set()
        for a in range(self.k):
            if a in known:
                continue
            if s.solve(assumptions=[a + 1]):
                model = s.get_model()
                assert model is not None
                known.update(b for b in range(self.k) if model[b] > 0)
        return known

    def skeptical(self, a: int, semantics: str) -> bool:
        """Is ``a`` in every extension of the component?

        Complete/stable: no complete (stable) labelling leaves ``a`` out
        (vacuously true when there is no stable extension). Preferred: first
        one call asking for a complete labelling with ``a`` OUT (then ``a`` is
        outside the preferred extension that labelling grows into); otherwise a
        counter-example guided search over labellings with ``a`` UNDEC, each
        candidate maximised to a preferred extension.
        """
        if semantics in ("stable", "complete"):
            s = self._query_solver(semantics == "stable")
            return not s.solve(assumptions=[-(a + 1)])
        if semantics != "preferred":
            raise ValueError(f"unsupported semantics {semantics!r}")
        k = self.k
        s = self._query_solver(False)
        if s.solve(assumptions=[self._outv(a)]):
            return False
        guard = self._fresh()  # guards this query's blocking clauses
        try:
            while s.solve(assumptions=[guard, -(a + 1), -self._outv(a)]):
                model = s.get_model()
                assert model is not None
                chosen = [v for v in range(1, k + 1) if model[v - 1] > 0]
                while True:
                    cs = set(chosen)
                    rest = [v for v in range(1, k + 1) if v not in cs]
                    if not rest:
                        break
                    act = self._fresh()
                    s.add_clause([-act, *rest])
                    ok = s.solve(assumptions=[*chosen, act])
                    if ok:
                        m = s.get_model()
                        assert m is not None
                        chosen = [v for v in range(1, k + 1) if m[v - 1] > 0]
                    s.add_clause([-act])
                    if not ok:
                        break
                if a + 1 not in chosen:
                    return False
                cs = set(chosen)
                rest = [v for v in range(1, k + 1) if v not in cs]
                if not rest:
                    return True
                s.add_clause([-guard, *rest])
            return True
        finally:
            s.add_clause([-guard])
