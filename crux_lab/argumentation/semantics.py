"""Dung semantics: grounded, complete, preferred, stable, semi-stable, stage, ideal.

All functions are exact and pure. Large frameworks are handled by

1. the grounded fixed point (linear time),
2. the grounded reduct split into independent (weakly connected) components,
   whose extensions combine as a product (see :mod:`.space`),
3. per component: a pure bitmask enumerator for small components and a SAT
   backend (:mod:`.sat`) for larger ones.

>>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "a"), ("b", "c")])
>>> sorted(grounded_extension(af))
[]
>>> [sorted(e) for e in preferred_extensions(af)]
[['a', 'c'], ['b']]
>>> credulously_accepted(af, "c", "preferred"), skeptically_accepted(af, "c", "preferred")
(True, False)
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from crux_lab.argumentation._core import (
    IN,
    OUT,
    SMALL_LIMIT,
    UNDEC,
    Component,
    decompose,
    grounded_of,
    small_extensions,
)
from crux_lab.argumentation.components import (
    component_extensions,
    component_has_stable,
    grounded_extension,
)
from crux_lab.argumentation.framework import Arg, ArgumentFramework, Extension, sorted_extensions
from crux_lab.argumentation.sat import SatComponent
from crux_lab.argumentation.space import extension_space, ideal_extension

__all__ = [
    "SEMANTICS",
    "Label",
    "Labelling",
    "component_extensions",
    "complete_extensions",
    "complete_labellings",
    "credulously_accepted",
    "credulous_set",
    "grounded_extension",
    "grounded_labelling",
    "ideal_extension",
    "is_admissible",
    "is_complete",
    "is_conflict_free",
    "is_stable",
    "labelling_of",
    "preferred_extensions",
    "semi_stable_extensions",
    "skeptical_set",
    "skeptically_accepted",
    "stable_extensions",
    "stage_extensions",
]

SEMANTICS = ("grounded", "complete", "preferred", "stable", "semi-stable", "stage", "ideal")
"""Names accepted by the ``semantics`` parameters."""


class Label(StrEnum):
    """Caminada labels."""

    IN = "IN"
    OUT = "OUT"
    UNDEC = "UNDEC"


Labelling = dict[Arg, Label]
"""A labelling: argument -> label."""

_LAB = {IN: Label.IN, OUT: Label.OUT, UNDEC: Label.UNDEC}


# ---------------------------------------------------------------------------
# Properties of sets
# ---------------------------------------------------------------------------


def is_conflict_free(af: ArgumentFramework, ext: Iterable[Arg]) -> bool:
    """No member attacks a member.

    >>> af = ArgumentFramework.from_edges("ab", [("a", "b")])
    >>> is_conflict_free(af, {"a", "b"}), is_conflict_free(af, {"a"})
    (False, True)
    """
    s = frozenset(ext)
    return not (af.attacked_by_set(s) & s)


def _defends(af: ArgumentFramework, s: frozenset[Arg], plus: frozenset[Arg], a: Arg) -> bool:
    return af.attackers(a) <= plus


def is_admissible(af: ArgumentFramework, ext: Iterable[Arg]) -> bool:
    """Conflict-free and defends each member.

    >>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "c")])
    >>> is_admissible(af, {"c"}), is_admissible(af, {"a", "c"})
    (False, True)
    """
    s = frozenset(ext)
    plus = af.attacked_by_set(s)
    return not (plus & s) and all(_defends(af, s, plus, a) for a in s)


def is_complete(af: ArgumentFramework, ext: Iterable[Arg]) -> bool:
    """Admissible and contains every argument it defends.

    >>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "c")])
    >>> is_complete(af, {"a"}), is_complete(af, {"a", "c"})
    (False, True)
    """
    s = frozenset(ext)
    plus = af.attacked_by_set(s)
    if plus & s:
        return False
    defended = {a for a in af.arguments if _defends(af, s, plus, a)}
    return defended == s


def is_stable(af: ArgumentFramework, ext: Iterable[Arg]) -> bool:
    """Conflict-free and attacks every argument outside it.

    >>> af = ArgumentFramework.from_edges("ab", [("a", "b"), ("b", "a")])
    >>> is_stable(af, {"a"}), is_stable(af, set())
    (True, False)
    """
    s = frozenset(ext)
    plus = af.attacked_by_set(s)
    return not (plus & s) and (s | plus) == af.arguments


# ---------------------------------------------------------------------------
# Grounded
# ---------------------------------------------------------------------------


def grounded_labelling(af: ArgumentFramework) -> Labelling:
    """The grounded labelling (least fixed point), in ``O(|A| + |R|)``.

    >>> af = ArgumentFramework.from_edges("abcd", [("a", "b"), ("b", "c"), ("d", "d")])
    >>> {a: lab.value for a, lab in sorted(grounded_labelling(af).items())}
    {'a': 'IN', 'b': 'OUT', 'c': 'IN', 'd': 'UNDEC'}
    """
    labels = grounded_of(af)
    args = af._index.args
    return {args[i]: _LAB[lab] for i, lab in enumerate(labels)}


def labelling_of(af: ArgumentFramework, ext: Iterable[Arg]) -> Labelling:
    """The Caminada labelling of a complete extension: IN = ext, OUT = ext+, rest UNDEC.

    >>> af = ArgumentFramework.from_edges("ab", [("a", "b")])
    >>> {a: lab.value for a, lab in sorted(labelling_of(af, {"a"}).items())}
    {'a': 'IN', 'b': 'OUT'}
    """
    s = frozenset(ext)
    plus = af.attacked_by_set(s)
    return {a: Label.IN if a in s else Label.OUT if a in plus else Label.UNDEC for a in af}


def _space_exts(af: ArgumentFramework, semantics: str) -> list[Extension]:
    return sorted_extensions(extension_space(af, semantics))


def complete_extensions(af: ArgumentFramework) -> list[Extension]:
    """All complete extensions, sorted.

    >>> af = ArgumentFramework.from_edges("ab", [("a", "b"), ("b", "a")])
    >>> [sorted(e) for e in complete_extensions(af)]
    [[], ['a'], ['b']]
    """
    return _space_exts(af, "complete")


def complete_labellings(af: ArgumentFramework) -> list[Labelling]:
    """The Caminada labelling of every complete extension (same order).

    >>> af = ArgumentFramework.from_edges("ab", [("a", "b"), ("b", "a")])
    >>> [lab["a"].value for lab in complete_labellings(af)]
    ['UNDEC', 'IN', 'OUT']
    """
    return [labelling_of(af, e) for e in complete_extensions(af)]


def preferred_extensions(af: ArgumentFramework) -> list[Extension]:
    """All preferred extensions (maximal admissible sets), sorted.

    >>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "c"), ("c", "a")])
    >>> preferred_extensions(af)
    [frozenset()]
    """
    return _space_exts(af, "preferred")


def stable_extensions(af: ArgumentFramework) -> list[Extension]:
    """All stable extensions (possibly none), sorted.

    >>> stable_extensions(ArgumentFramework.from_edges("a", [("a", "a")]))
    []
    """
    return _space_exts(af, "stable")


def semi_stable_extensions(af: ArgumentFramework) -> list[Extension]:
    """Complete extensions with ⊆-maximal range ``E ∪ E+``, sorted.

    >>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "a"), ("b", "c"), ("c", "c")])
    >>> [sorted(e) for e in semi_stable_extensions(af)]
    [['b']]
    """
    return _space_exts(af, "semi-stable")


def stage_extensions(af: ArgumentFramework) -> list[Extension]:
    """Conflict-free sets with ⊆-maximal range, sorted.

    >>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "c"), ("c", "a")])
    >>> [sorted(e) for e in stage_extensions(af)]
    [['a'], ['b'], ['c']]
    """
    return _space_exts(af, "stage")


# ---------------------------------------------------------------------------
# Acceptance (targeted: no enumeration)
# ---------------------------------------------------------------------------

_ACCEPT = ("complete", "preferred", "stable")


def _locate(af: ArgumentFramework, arg: Arg) -> tuple[int, Component | None, int]:
    """(grounded label, component holding ``arg`` or None, local index)."""
    g = af._index.pos[arg]
    lab = grounded_of(af)[g]
    if lab != UNDEC:
        return lab, None, -1
    dec = decompose(af)
    key = "comp_of"
    memo = af._memo
    if key not in memo:
        where: dict[int, tuple[int, int]] = {}
        for ci, comp in enumerate(dec.components):
            for li, node in enumerate(comp.nodes):
                where[node] = (ci, li)
        memo[key] = where
    ci, li = memo[key][g]
    return lab, dec.components[ci], li


def _sat(af: ArgumentFramework, comp: Component) -> SatComponent:
    """The cached SAT reasoner of a component (solvers persist across queries)."""
    memo = af._memo.setdefault("sat", {})
    key = comp.nodes[0]
    if key not in memo:
        memo[key] = SatComponent(comp)
    return memo[key]


def _stable_exists_elsewhere(af: ArgumentFramework, skip: Component | None) -> bool:
    """Does every component other than ``skip`` have a stable extension? (cached)"""
    memo = af._memo
    if "stable_missing" not in memo:
        memo["stable_missing"] = frozenset(
            c.nodes[0] for c in decompose(af).components if not component_has_stable(c)
        )
    missing: frozenset[int] = memo["stable_missing"]
    return not (missing - ({skip.nodes[0]} if skip is not None else set()))


def credulously_accepted(af: ArgumentFramework, arg: Arg, semantics: str = "preferred") -> bool:
    """Is ``arg`` in at least one extension? (complete = preferred here.)

    >>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "c"), ("c", "a")])
    >>> credulously_accepted(af, "a", "preferred"), credulously_accepted(af, "a", "stable")
    (False, False)
    """
    if semantics not in _ACCEPT:
        raise ValueError(f"acceptance supports {_ACCEPT}, not {semantics!r}")
    lab, comp, li = _locate(af, arg)
    if lab == OUT:
        return False
    if semantics == "stable" and not _stable_exists_elsewhere(af, comp):
        return False
    if lab == IN:
        return True
    assert comp is not None
    if len(comp) <= SMALL_LIMIT:
        sem = "stable" if semantics == "stable" else "complete"
        return any(m >> li & 1 for m in small_extensions(comp, sem))
    return _sat(af, comp).credulous(li, semantics)


def skeptically_accepted(af: ArgumentFramework, arg: Arg, semantics: str = "preferred") -> bool:
    """Is ``arg`` in every extension? Stable with no extension: vacuously ``True``.

    >>> af = ArgumentFramework.from_edges(
    ...     "abcd", [("a", "b"), ("b", "a"), ("a", "c"), ("b", "c"), ("c", "d")])
    >>> skeptically_accepted(af, "d", "preferred"), skeptically_accepted(af, "d", "complete")
    (True, False)
    """
    if semantics not in _ACCEPT:
        raise ValueError(f"acceptance supports {_ACCEPT}, not {semantics!r}")
    lab, comp, li = _locate(af, arg)
    if semantics == "stable" and not _stable_exists_elsewhere(af, comp):
        return True
    if lab == IN:
        return True
    if lab == OUT or semantics == "complete":
        return False
    assert comp is not None
    if len(comp) <= SMALL_LIMIT:
        exts = small_extensions(comp, semantics)
        return all(m >> li & 1 for m in exts)
    return _sat(af, comp).skeptical(li, semantics)


def credulous_set(af: ArgumentFramework, semantics: str = "preferred") -> frozenset[Arg]:
    """All credulously accepted arguments.

    For complete/preferred/stable nothing is enumerated: small components are
    solved exactly, larger ones by SAT queries that reuse every model found.
    Other semantics go through the factorized space.

    >>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "a"), ("c", "c")])
    >>> sorted(credulous_set(af, "preferred")), sorted(credulous_set(af, "stable"))
    (['a', 'b'], [])
    """
    if semantics not in _ACCEPT:
        return extension_space(af, semantics).credulous()
    stable = semantics == "stable"
    if stable and not _stable_exists_elsewhere(af, None):
        return frozenset()
    args = af._index.args
    out = {args[i] for i, lab in enumerate(grounded_of(af)) if lab == IN}
    for comp in decompose(af).components:
        if len(comp) <= SMALL_LIMIT:
            union = 0
            for m in small_extensions(comp, "stable" if stable else "complete"):
                union |= m
            out.update(args[comp.nodes[i]] for i in range(len(comp)) if union >> i & 1)
        else:
            out.update(args[comp.nodes[i]] for i in _sat(af, comp).credulous_all(semantics))
    return frozenset(out)


def skeptical_set(af: ArgumentFramework, semantics: str = "preferred") -> frozenset[Arg]:
    """All skeptically accepted arguments (stable with no extension: all arguments).

    For complete/preferred/stable, candidates are the credulously accepted
    arguments of each component, each checked by :func:`skeptically_accepted`.

    >>> af = ArgumentFramework.from_edges(
    ...     "abcd", [("a", "b"), ("b", "a"), ("a", "c"), ("b", "c"), ("c", "d")])
    >>> sorted(skeptical_set(af, "preferred")), sorted(skeptical_set(af, "complete"))
    (['d'], [])
    """
    if semantics not in _ACCEPT:
        return extension_space(af, semantics).skeptical()
    if semantics == "stable" and not _stable_exists_elsewhere(af, None):
        return af.arguments
    args = af._index.args
    grounded = {args[i] for i, lab in enumerate(grounded_of(af)) if lab == IN}
    if semantics == "complete":
        return frozenset(grounded)
    cand = credulous_set(af, semantics) - grounded
    return frozenset(grounded | {a for a in cand if skeptically_accepted(af, a, semantics)})
