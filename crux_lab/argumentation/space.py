"""Factorized extension spaces.

For complete, preferred, stable and semi-stable semantics every extension of a
framework is ``G ∪ E1 ∪ ... ∪ Ek`` where ``G`` is the grounded extension and
``Ei`` is one *alternative* of the ``i``-th independent component of the
grounded reduct. (Stage uses the components of the whole framework and
``G = ∅``.) So the extension set is the product of per-component choices: it
can be counted, summarised (credulous/skeptical sets, per-persona best
extensions) and queried without materialising ``∏ |alternatives|`` sets.

>>> from crux_lab.argumentation.framework import ArgumentFramework
>>> af = ArgumentFramework.from_edges(
...     "abcdz", [("a", "b"), ("b", "a"), ("c", "d"), ("d", "c"), ("z", "a")])
>>> sp = extension_space(af, "preferred")
>>> sp.count(), sorted(sp.fixed), len(sp.components)
(2, ['b', 'z'], 1)
>>> af2 = ArgumentFramework.from_edges("abcd", [("a", "b"), ("b", "a"), ("c", "d"), ("d", "c")])
>>> count_extensions(af2, "preferred"), [sorted(e) for e in iter_extensions(af2, limit=2)]
(4, [['a', 'c'], ['a', 'd']])
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from crux_lab.argumentation._core import IN, SMALL_LIMIT, decompose
from crux_lab.argumentation.components import component_extensions, grounded_extension
from crux_lab.argumentation.framework import Arg, ArgumentFramework, Extension, sort_args
from crux_lab.argumentation.sat import SatComponent

__all__ = [
    "ComponentSpace",
    "ExtensionSpace",
    "Status",
    "TooManyAlternatives",
    "count_extensions",
    "extension_space",
    "ideal_extension",
    "iter_extensions",
    "some_extension",
]

Status = Literal["accepted", "contested", "rejected"]

_REDUCIBLE = ("complete", "preferred", "stable", "semi-stable")


@dataclass(frozen=True)
class ComponentSpace:
    """One independent component and its alternatives (its own extensions)."""

    arguments: frozenset[Arg]
    alternatives: tuple[Extension, ...]

    @property
    def credulous(self) -> frozenset[Arg]:
        """Arguments in at least one alternative."""
        return frozenset().union(*self.alternatives)

    @property
    def skeptical(self) -> frozenset[Arg]:
        """Arguments in every alternative (all arguments when there is none)."""
        if not self.alternatives:
            return self.arguments
        return frozenset.intersection(*self.alternatives)


@dataclass(frozen=True)
class ExtensionSpace:
    """The extensions of ``af`` as ``fixed`` × product of component alternatives."""

    af: ArgumentFramework
    semantics: str
    fixed: Extension
    components: tuple[ComponentSpace, ...]

    def exists(self) -> bool:
        """Whether at least one extension exists (only stable can fail)."""
        return all(c.alternatives for c in self.components)

    def count(self) -> int:
        """Exact number of extensions (product of per-component counts)."""
        return math.prod(len(c.alternatives) for c in self.components)

    def __iter__(self) -> Iterator[Extension]:
        return self.iter_extensions()

    def iter_extensions(self, limit: int | None = None) -> Iterator[Extension]:
        """Yield extensions (lexicographic over components), at most ``limit``."""
        if not self.exists():
            return
        it = itertools.product(*(c.alternatives for c in self.components))
        for choice in itertools.islice(it, limit):
            yield self.fixed.union(*choice)

    def credulous(self) -> frozenset[Arg]:
        """Arguments in some extension (empty if none exists)."""
        if not self.exists():
            return frozenset()
        return self.fixed.union(*(c.credulous for c in self.components))

    def skeptical(self) -> frozenset[Arg]:
        """Arguments in every extension (all arguments if none exists)."""
        if not self.exists():
            return self.af.arguments
        return self.fixed.union(*(c.skeptical for c in self.components))

    def component_index(self, arg: Arg) -> int | None:
        """Index of the component holding ``arg`` (None for fixed/rejected)."""
        where = self._where
        return where.get(arg)

    @property
    def _where(self) -> dict[Arg, int]:
        memo = self.af._memo
        key = f"where:{self.semantics}"
        if key not in memo:
            memo[key] = {a: i for i, c in enumerate(self.components) for a in c.arguments}
        return memo[key]

    def status(self, arg: Arg) -> Status:
        """``accepted`` (skeptical), ``contested`` (credulous only) or ``rejected``."""
        if not self.exists():
            return "rejected"
        if arg in self.fixed:
            return "accepted"
        ci = self.component_index(arg)
        if ci is None:
            return "rejected"
        comp = self.components[ci]
        if arg in comp.skeptical:
            return "accepted"
        return "contested" if arg in comp.credulous else "rejected"

    def statuses(self) -> dict[Arg, Status]:
        """Status of every argument."""
        out: dict[Arg, Status] = {}
        if not self.exists():
            return dict.fromkeys(sort_args(self.af.arguments), "rejected")
        for a in self.af:
            out[a] = "rejected"
        for a in self.fixed:
            out[a] = "accepted"
        for comp in self.components:
            cred, skep = comp.credulous, comp.skeptical
            for a in cred:
                out[a] = "accepted" if a in skep else "contested"
        return out


class TooManyAlternatives(RuntimeError):
    """A component has more alternatives than the caller's ``max_alternatives`` budget."""

    def __init__(self, component_size: int, limit: int) -> None:
        self.component_size = component_size
        self.limit = limit
        super().__init__(
            f"a component of {component_size} arguments has more than {limit} alternatives"
        )


def extension_space(
    af: ArgumentFramework, semantics: str = "preferred", max_alternatives: int | None = None
) -> ExtensionSpace:
    """The factorized extension space of ``af`` (cached on the framework).

    ``semantics`` is one of grounded, complete, preferred, stable,
    semi-stable, stage, ideal. Grounded and ideal give a single extension.
    With ``max_alternatives``, a component with more alternatives raises
    :class:`TooManyAlternatives` instead of being enumerated in full (the
    number of extensions may still be astronomically large: it is a product).

    >>> from crux_lab.argumentation.framework import ArgumentFramework
    >>> af = ArgumentFramework.from_edges("ab", [("a", "b"), ("b", "a")])
    >>> extension_space(af, "stable").count()
    2
    """
    key = f"space:{semantics}"
    memo = af._memo
    if key in memo:
        cached: ExtensionSpace = memo[key]
        if max_alternatives is not None:
            for c in cached.components:
                if len(c.alternatives) > max_alternatives:
                    raise TooManyAlternatives(len(c.arguments), max_alternatives)
        return cached
    args = af._index.args
    if semantics in _REDUCIBLE:
        dec = decompose(af, reduce=True)
        fixed = frozenset(args[i] for i, lab in enumerate(dec.labels) if lab == IN)
        comps = dec.components
    elif semantics == "stage":
        dec = decompose(af, reduce=False)
        fixed = frozenset()
        comps = dec.components
    elif semantics == "grounded":
        sp = ExtensionSpace(af, semantics, grounded_extension(af), ())
        memo[key] = sp
        return sp
    elif semantics == "ideal":
        sp = ExtensionSpace(af, semantics, ideal_extension(af), ())
        memo[key] = sp
        return sp
    else:
        raise ValueError(f"unknown semantics {semantics!r}")
    spaces = []
    for comp in comps:
        cap = None
        if max_alternatives is not None and len(comp) > SMALL_LIMIT:
            cap = max_alternatives + 1
        exts = component_extensions(comp, semantics, cap)
        if max_alternatives is not None and len(exts) > max_alternatives:
            raise TooManyAlternatives(len(comp), max_alternatives)
        alts = tuple(frozenset(args[g] for g in ext) for ext in exts)
        spaces.append(ComponentSpace(frozenset(args[g] for g in comp.nodes), alts))
        if semantics == "stable" and not alts:
            break  # no stable extension at all: one empty component suffices
    sp = ExtensionSpace(af, semantics, fixed, tuple(spaces))
    memo[key] = sp
    return sp


def count_extensions(
    af: ArgumentFramework, semantics: str = "preferred", max_alternatives: int | None = None
) -> int:
    """Exact number of extensions, computed as a product over components.

    >>> from crux_lab.argumentation.framework import ArgumentFramework
    >>> af = ArgumentFramework.from_edges("a", [("a", "a")])
    >>> count_extensions(af, "preferred"), count_extensions(af, "stable")
    (1, 0)
    """
    return extension_space(af, semantics, max_alternatives).count()


def iter_extensions(
    af: ArgumentFramework, semantics: str = "preferred", limit: int | None = None
) -> Iterator[Extension]:
    """Yield up to ``limit`` extensions without materialising the product."""
    return extension_space(af, semantics).iter_extensions(limit)


def some_extension(af: ArgumentFramework, semantics: str = "preferred") -> Extension | None:
    """One extension (the first per component), or ``None`` if none exists.

    Each component is asked for a single witness, so nothing is enumerated.

    >>> from crux_lab.argumentation.framework import ArgumentFramework
    >>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "a"), ("c", "c")])
    >>> sorted(some_extension(af, "preferred")), some_extension(af, "stable")
    (['a'], None)
    """
    if semantics not in _REDUCIBLE:
        return next(iter(extension_space(af, semantics)), None)
    key = f"space:{semantics}"
    if key in af._memo:
        return next(iter(af._memo[key]), None)
    args = af._index.args
    dec = decompose(af, reduce=True)
    out = {args[i] for i, lab in enumerate(dec.labels) if lab == IN}
    for comp in dec.components:
        if len(comp) <= SMALL_LIMIT:
            exts = component_extensions(comp, semantics)
        else:
            exts = [
                [comp.nodes[i] for i in e] for e in SatComponent(comp).iter_extensions(semantics, 1)
            ]
        if not exts:
            return None
        out.update(args[g] for g in exts[0])
    return frozenset(out)


def ideal_extension(af: ArgumentFramework) -> Extension:
    """The ideal extension: the ⊆-greatest admissible subset of ∩ preferred.

    Computed from the skeptically preferred arguments by removing arguments
    that are not defended until a fixed point is reached.

    >>> af = ArgumentFramework.from_edges(
    ...     "abcd", [("a", "b"), ("b", "a"), ("a", "c"), ("b", "c"), ("c", "d"), ("d", "c")])
    >>> sorted(ideal_extension(af))
    ['d']
    """
    cand = set(extension_space(af, "preferred").skeptical())
    while True:
        plus = af.attacked_by_set(cand)
        keep = {a for a in cand if af.attackers(a) <= plus}
        if keep == cand:
            return frozenset(cand)
        cand = keep
