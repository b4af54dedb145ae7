"""Per-component building blocks below :mod:`.space` and :mod:`.semantics`.

The grounded extension, and the extensions of one independent component of the
grounded reduct (a pure bitmask enumerator for small components, SAT for larger
ones). Both :mod:`.space` (the product of components) and :mod:`.semantics` use
these; neither is imported here, so the two never import each other.

>>> from crux_lab.argumentation._core import decompose
>>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "a"), ("c", "c")])
>>> sorted(grounded_extension(af))
[]
>>> [component_has_stable(c) for c in decompose(af).components]
[True, False]
"""

from __future__ import annotations

from crux_lab.argumentation._core import IN, SMALL_LIMIT, Component, grounded_of, small_extensions
from crux_lab.argumentation.framework import ArgumentFramework, Extension
from crux_lab.argumentation.sat import SatComponent

__all__ = ["component_extensions", "component_has_stable", "grounded_extension"]


def grounded_extension(af: ArgumentFramework) -> Extension:
    """The grounded extension: the least complete extension.

    >>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "c")])
    >>> sorted(grounded_extension(af))
    ['a', 'c']
    """
    labels = grounded_of(af)
    args = af._index.args
    return frozenset(args[i] for i, lab in enumerate(labels) if lab == IN)


def component_extensions(
    comp: Component, semantics: str, limit: int | None = None
) -> list[list[int]]:
    """Extensions of one component as sorted lists of *global* indices."""
    if len(comp) <= SMALL_LIMIT:
        out = []
        for mask in small_extensions(comp, semantics):
            out.append([comp.nodes[i] for i in range(len(comp)) if mask >> i & 1])
        return sorted(out)[:limit]
    local = SatComponent(comp).extensions(semantics, limit)
    return sorted([comp.nodes[i] for i in ext] for ext in local)


def component_has_stable(comp: Component) -> bool:
    """Does one component have a stable extension? (SAT above the small-component limit.)"""
    if len(comp) <= SMALL_LIMIT:
        return bool(small_extensions(comp, "stable"))
    return SatComponent(comp).has_extension("stable")
