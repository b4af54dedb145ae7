"""Index-level building blocks: grounded fixed point, decomposition, small exact solver.

Everything here works on integer indices of ``ArgumentFramework._index``.
Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from crux_lab.argumentation.framework import ArgumentFramework


class Adjacency(Protocol):
    """Anything indexable by argument position giving neighbour positions."""

    def __getitem__(self, i: int, /) -> Sequence[int]: ...

    def __len__(self) -> int: ...


SMALL_LIMIT = 14
"""Components with at most this many arguments use the pure bitmask solver."""

UNDEC, IN, OUT = 0, 1, 2


def grounded_labels(succ: Sequence[Sequence[int]], pred: Sequence[Sequence[int]]) -> list[int]:
    """Grounded labelling in ``O(|A| + |R|)``: 0 = UNDEC, 1 = IN, 2 = OUT.

    >>> grounded_labels([[1], [2], []], [[], [0], [1]])
    [1, 2, 1]
    """
    n = len(succ)
    label = [UNDEC] * n
    live = [len(pred[i]) for i in range(n)]  # attackers not (yet) OUT
    stack = [i for i in range(n) if live[i] == 0]
    for i in stack:
        label[i] = IN
    while stack:
        a = stack.pop()
        for b in succ[a]:
            if label[b] != UNDEC:
                continue
            label[b] = OUT
            for c in succ[b]:
                live[c] -= 1
                if live[c] == 0 and label[c] == UNDEC:
                    label[c] = IN
                    stack.append(c)
    return label


def _grounded_csr(sptr: list[int], sidx: list[int], pptr: list[int]) -> list[int]:
    """:func:`grounded_labels` on CSR arrays (the hot path for large frameworks)."""
    n = len(sptr) - 1
    label = [UNDEC] * n
    live = [pptr[i + 1] - pptr[i] for i in range(n)]
    stack = [i for i in range(n) if live[i] == 0]
    for i in stack:
        label[i] = IN
    while stack:
        a = stack.pop()
        for b in sidx[sptr[a] : sptr[a + 1]]:
            if label[b] != UNDEC:
                continue
            label[b] = OUT
            for c in sidx[sptr[b] : sptr[b + 1]]:
                live[c] -= 1
                if live[c] == 0 and label[c] == UNDEC:
                    label[c] = IN
                    stack.append(c)
    return label


@dataclass(frozen=True)
class Component:
    """A weakly connected piece of a (reduced) framework in local indices.

    ``nodes[i]`` is the global index of local argument ``i``; ``pred``/``succ``
    only contain attacks inside the component.
    """

    nodes: tuple[int, ...]
    pred: tuple[tuple[int, ...], ...]
    succ: tuple[tuple[int, ...], ...]

    def __len__(self) -> int:
        return len(self.nodes)


@dataclass(frozen=True)
class Decomposition:
    """Grounded labelling plus the weakly connected components of the residual.

    ``components`` split ``members`` (all arguments when ``reduce`` was false,
    the UNDEC arguments otherwise).
    """

    labels: tuple[int, ...]
    components: tuple[Component, ...]


def weak_components(members: Sequence[int], succ: Adjacency, pred: Adjacency) -> list[Component]:
    """Split ``members`` into weakly connected components of the induced subgraph."""
    inside = dict.fromkeys(members, -1)
    comps: list[Component] = []
    for start in members:
        if inside[start] != -1:
            continue
        cid = len(comps)
        inside[start] = cid
        order = [start]
        for v in order:
            for w in succ[v]:
                if inside.get(w) == -1:
                    inside[w] = cid
                    order.append(w)
            for w in pred[v]:
                if inside.get(w) == -1:
                    inside[w] = cid
                    order.append(w)
        order.sort()
        local = {g: i for i, g in enumerate(order)}
        lpred = tuple(tuple(local[w] for w in pred[g] if w in local) for g in order)
        lsucc = tuple(tuple(local[w] for w in succ[g] if w in local) for g in order)
        comps.append(Component(tuple(order), lpred, lsucc))
    return comps


def grounded_of(af: ArgumentFramework) -> tuple[int, ...]:
    """Grounded labels of ``af`` by argument position (cached on the framework)."""
    memo = af._memo
    if "labels" not in memo:
        ix = af._index
        memo["labels"] = tuple(_grounded_csr(ix.succ.ptr, ix.succ.idx, ix.pred.ptr))
    return memo["labels"]


def decompose(af: ArgumentFramework, reduce: bool = True) -> Decomposition:
    """Grounded labelling and components (cached on the framework).

    With ``reduce`` the components cover only the grounded-UNDEC arguments:
    complete, preferred, stable and semi-stable extensions of ``af`` are exactly
    ``grounded ∪ E1 ∪ ... ∪ Ek`` with ``Ei`` an extension of component ``i``
    (modularization over the grounded reduct, then independence of components).
    """
    key = f"decomp:{reduce}"
    memo = af._memo
    if key in memo:
        return memo[key]
    ix = af._index
    labels = grounded_of(af)
    members = (
        [i for i, lab in enumerate(labels) if lab == UNDEC] if reduce else list(range(len(labels)))
    )
    dec = Decomposition(labels, tuple(weak_components(members, ix.succ, ix.pred)))
    memo[key] = dec
    return dec


# ---------------------------------------------------------------------------
# Pure bitmask solver for small components.
# ---------------------------------------------------------------------------


def _masks(comp: Component) -> tuple[list[int], list[int]]:
    att = [0] * len(comp)
    tgt = [0] * len(comp)
    for j, ps in enumerate(comp.pred):
        for i in ps:
            att[j] |= 1 << i
            tgt[i] |= 1 << j
    return att, tgt


def conflict_free_masks(comp: Component) -> Iterator[tuple[int, int]]:
    """Yield ``(S, S+)`` for every conflict-free set ``S`` (as bitmasks)."""
    att, tgt = _masks(comp)
    k = len(comp)
    conf = [att[i] | tgt[i] for i in range(k)]

    def rec(i: int, s: int, plus: int) -> Iterator[tuple[int, int]]:
        if i == k:
            yield s, plus
            return
        yield from rec(i + 1, s, plus)
        bit = 1 << i
        if not conf[i] & (s | bit):
            yield from rec(i + 1, s | bit, plus | tgt[i])

    yield from rec(0, 0, 0)


def complete_masks(comp: Component) -> list[tuple[int, int]]:
    """All complete extensions ``(S, S+)`` of a small component."""
    att, _ = _masks(comp)
    k = len(comp)
    out = []
    for s, plus in conflict_free_masks(comp):
        defended = 0
        for i in range(k):
            if att[i] & ~plus == 0:
                defended |= 1 << i
        if defended == s:
            out.append((s, plus))
    return out


def maximal_masks(masks: Sequence[int]) -> list[int]:
    """The ⊆-maximal elements of a list of bitmasks (duplicates removed).

    >>> maximal_masks([0b01, 0b11, 0b100])
    [3, 4]
    """
    uniq = sorted(set(masks), key=lambda m: -m.bit_count())
    keep: list[int] = []
    for m in uniq:
        if not any(m & k == m for k in keep):
            keep.append(m)
    return sorted(keep)


def small_extensions(comp: Component, semantics: str) -> list[int]:
    """Extensions of a small component as bitmasks (exact, by enumeration)."""
    full = (1 << len(comp)) - 1
    if semantics == "stage":
        cf = list(conflict_free_masks(comp))
        best = set(maximal_masks([s | p for s, p in cf]))
        return sorted({s for s, p in cf if (s | p) in best})
    co = complete_masks(comp)
    if semantics == "complete":
        return sorted(s for s, _ in co)
    if semantics == "preferred":
        return maximal_masks([s for s, _ in co])
    if semantics == "stable":
        return sorted(s for s, p in co if s | p == full)
    if semantics == "semi-stable":
        best = set(maximal_masks([s | p for s, p in co]))
        return sorted(s for s, p in co if (s | p) in best)
    raise ValueError(f"unknown semantics {semantics!r}")


def mask_to_nodes(comp: Component, mask: int) -> list[int]:
    """Global indices of the set bits of ``mask``."""
    return [comp.nodes[i] for i in range(len(comp)) if mask >> i & 1]
