"""Immutable abstract argumentation frameworks (Dung 1995).

An :class:`ArgumentFramework` is a pair ``(arguments, attacks)``. Arguments are
any hashable values (strings in debates, the integers ``1..N`` in ICCMA files).
The object is immutable; an integer-indexed adjacency view used by the
algorithms is built lazily and cached.

>>> af = ArgumentFramework.from_edges(["a", "b", "c"], [("a", "b"), ("b", "c")])
>>> len(af), af.attacks_count
(3, 2)
>>> sorted(af.attackers("c"))
['b']
>>> af.to_networkx().number_of_edges()
2
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from typing import Any

import networkx as nx
import numpy as np

Arg = Hashable
"""An argument: any hashable value."""

Extension = frozenset[Any]
"""A set of arguments."""

__all__ = ["Arg", "ArgumentFramework", "Extension", "sort_args", "sorted_extensions"]


def sort_args(args: Iterable[Arg]) -> list[Arg]:
    """Sort arguments naturally (numbers numerically), falling back to ``repr``.

    >>> sort_args([10, 2, 1])
    [1, 2, 10]
    >>> sort_args(["b", "a"])
    ['a', 'b']
    """
    items = list(args)
    try:
        return sorted(items)  # type: ignore[type-var]
    except TypeError:
        return sorted(items, key=lambda a: (type(a).__name__, repr(a)))


def sorted_extensions(exts: Iterable[Iterable[Arg]]) -> list[Extension]:
    """Return extensions as frozensets in a deterministic order.

    >>> sorted_extensions([{"b"}, {"a"}, set()])
    [frozenset(), frozenset({'a'}), frozenset({'b'})]
    """
    frozen = {frozenset(e) for e in exts}
    keyed = [(sort_args(e), e) for e in frozen]
    try:
        keyed.sort(key=lambda t: t[0])
    except TypeError:
        keyed.sort(key=lambda t: [repr(a) for a in t[0]])
    return [e for _, e in keyed]


def _all_int(args: Sequence[Arg]) -> bool:
    return all(type(a) is int for a in args)


class _Adj:
    """Adjacency lists stored as CSR: ``adj[i]`` is the list of neighbours of ``i``."""

    __slots__ = ("idx", "ptr")

    def __init__(self, ptr: list[int], idx: list[int]) -> None:
        self.ptr = ptr
        self.idx = idx

    def __getitem__(self, i: int) -> list[int]:
        return self.idx[self.ptr[i] : self.ptr[i + 1]]

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def degree(self, i: int) -> int:
        return self.ptr[i + 1] - self.ptr[i]


@dataclass(frozen=True)
class _Index:
    """Integer view: ``args[i]`` is argument ``i``; ``succ``/``pred`` are CSR adjacency."""

    args: tuple[Arg, ...]
    pos: dict[Arg, int]
    succ: _Adj
    pred: _Adj


def _csr(n: int, src: np.ndarray, dst: np.ndarray) -> _Adj:
    order = np.argsort(src, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return _Adj(ptr.tolist(), dst[order].tolist())


@dataclass(frozen=True)
class ArgumentFramework:
    """An abstract argumentation framework ``(A, R)`` with ``R ⊆ A × A``.

    ``attacks`` holds pairs ``(attacker, target)``. Both endpoints must be
    arguments of the framework.

    >>> af = ArgumentFramework(frozenset({1, 2}), frozenset({(1, 2), (2, 1)}))
    >>> af.attacks_count
    2
    >>> ArgumentFramework(frozenset({1}), frozenset({(1, 2)}))
    Traceback (most recent call last):
    ...
    ValueError: attack (1, 2) mentions an unknown argument
    """

    arguments: frozenset[Arg] = field(default_factory=frozenset)
    attacks: frozenset[tuple[Arg, Arg]] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if not isinstance(self.arguments, frozenset):
            object.__setattr__(self, "arguments", frozenset(self.arguments))
        if not isinstance(self.attacks, frozenset):
            object.__setattr__(self, "attacks", frozenset(tuple(p) for p in self.attacks))
        args = self.arguments
        ends = list(chain.from_iterable(self.attacks))
        if len(ends) != 2 * len(self.attacks) or not args.issuperset(ends):
            for pair in self.attacks:
                if len(pair) != 2 or pair[0] not in args or pair[1] not in args:
                    raise ValueError(f"attack {pair!r} mentions an unknown argument")

    def __getstate__(self) -> dict[str, Any]:
        # caches (index, decompositions, live SAT solvers) are not pickled
        return {"arguments": self.arguments, "attacks": self.attacks}

    def __setstate__(self, state: dict[str, Any]) -> None:
        object.__setattr__(self, "arguments", state["arguments"])
        object.__setattr__(self, "attacks", state["attacks"])

    # -- constructors -----------------------------------------------------
    @classmethod
    def from_edges(
        cls, arguments: Iterable[Arg] = (), attacks: Iterable[tuple[Arg, Arg]] = ()
    ) -> ArgumentFramework:
        """Build from argument ids and ``(attacker, target)`` pairs.

        Arguments that only occur in attacks are added automatically.

        >>> ArgumentFramework.from_edges([], [("x", "y")]).arguments == {"x", "y"}
        True
        """
        att = frozenset(map(tuple, attacks))
        if any(len(p) != 2 for p in att):
            bad = next(p for p in att if len(p) != 2)
            raise ValueError(f"attack {bad!r} is not a pair")
        args = set(arguments)
        args.update(chain.from_iterable(att))
        # every endpoint is an argument by construction: skip re-validation
        af = object.__new__(cls)
        object.__setattr__(af, "arguments", frozenset(args))
        object.__setattr__(af, "attacks", att)
        return af

    @classmethod
    def from_networkx(cls, graph: nx.DiGraph) -> ArgumentFramework:
        """Build from a directed graph: nodes are arguments, edges are attacks.

        >>> g = nx.DiGraph([("a", "b")]); g.add_node("c")
        >>> sorted(ArgumentFramework.from_networkx(g).arguments)
        ['a', 'b', 'c']
        """
        return cls(frozenset(graph.nodes), frozenset((u, v) for u, v in graph.edges))

    def to_networkx(self) -> nx.DiGraph:
        """Return a new ``networkx.DiGraph`` with one node per argument."""
        g = nx.DiGraph()
        g.add_nodes_from(self._index.args)
        g.add_edges_from(self.attacks)
        return g

    # -- views ------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.arguments)

    def __iter__(self) -> Iterator[Arg]:
        return iter(self._index.args)

    def __contains__(self, arg: object) -> bool:
        return arg in self.arguments

    @property
    def attacks_count(self) -> int:
        """Number of attacks."""
        return len(self.attacks)

    @cached_property
    def _memo(self) -> dict[str, Any]:
        """Per-instance cache for derived structures (decompositions, spaces)."""
        return {}

    @cached_property
    def _index(self) -> _Index:
        args = tuple(sort_args(self.arguments))
        n = len(args)
        pos = dict(zip(args, range(n), strict=True))
        m = len(self.attacks)
        ends = chain.from_iterable(self.attacks)
        if n and args[0] in (0, 1) and args[-1] == n - 1 + args[0] and _all_int(args):
            # arguments are exactly 0..n-1 or 1..n: positions need no lookup
            flat = np.fromiter(ends, dtype=np.int64, count=2 * m) - args[0]
        else:
            flat = np.fromiter(map(pos.__getitem__, ends), dtype=np.int64, count=2 * m)
        src, dst = flat[0::2], flat[1::2]
        return _Index(args, pos, _csr(n, src, dst), _csr(n, dst, src))

    def attackers(self, arg: Arg) -> frozenset[Arg]:
        """Arguments attacking ``arg``."""
        ix = self._index
        return frozenset(ix.args[i] for i in ix.pred[ix.pos[arg]])

    def targets(self, arg: Arg) -> frozenset[Arg]:
        """Arguments attacked by ``arg``."""
        ix = self._index
        return frozenset(ix.args[i] for i in ix.succ[ix.pos[arg]])

    def restrict(self, arguments: Iterable[Arg]) -> ArgumentFramework:
        """The sub-framework induced by ``arguments``.

        >>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "c")])
        >>> sorted(af.restrict("bc").attacks)
        [('b', 'c')]
        """
        keep = frozenset(arguments) & self.arguments
        return ArgumentFramework(
            keep, frozenset(p for p in self.attacks if p[0] in keep and p[1] in keep)
        )

    def attacked_by_set(self, ext: Iterable[Arg]) -> frozenset[Arg]:
        """``S+``: arguments attacked by some member of ``ext``."""
        ix = self._index
        out: set[Arg] = set()
        for a in ext:
            out.update(ix.args[j] for j in ix.succ[ix.pos[a]])
        return frozenset(out)

    def degree(self, arg: Arg) -> int:
        """Attack degree: number of attacks in which ``arg`` takes part."""
        ix = self._index
        i = ix.pos[arg]
        return ix.succ.degree(i) + ix.pred.degree(i)

    def ordered(self, args: Iterable[Arg]) -> Sequence[Arg]:
        """Return ``args`` in the framework's canonical order."""
        pos = self._index.pos
        return sorted(args, key=pos.__getitem__)
