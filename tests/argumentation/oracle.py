"""Brute-force oracle straight from the definitions (all 2^n subsets)."""

from __future__ import annotations

from itertools import combinations

from crux_lab.argumentation.framework import ArgumentFramework

Ext = frozenset[int]


def subsets(args: list[int]) -> list[Ext]:
    return [frozenset(c) for r in range(len(args) + 1) for c in combinations(args, r)]


def plus(af: ArgumentFramework, s: Ext) -> Ext:
    return frozenset(b for a, b in af.attacks if a in s)


def conflict_free(af: ArgumentFramework, s: Ext) -> bool:
    return not any(a in s and b in s for a, b in af.attacks)


def defends(af: ArgumentFramework, s: Ext, x: int) -> bool:
    p = plus(af, s)
    return all(a in p for a, b in af.attacks if b == x)


def admissible(af: ArgumentFramework, s: Ext) -> bool:
    return conflict_free(af, s) and all(defends(af, s, x) for x in s)


def complete(af: ArgumentFramework, s: Ext) -> bool:
    return admissible(af, s) and all(x in s for x in af.arguments if defends(af, s, x))


def maximal(sets: list[Ext]) -> list[Ext]:
    return [s for s in sets if not any(s < t for t in sets)]


def all_semantics(af: ArgumentFramework) -> dict[str, list[Ext]]:
    args = sorted(af.arguments)  # type: ignore[type-var]
    subs = subsets(args)
    cf = [s for s in subs if conflict_free(af, s)]
    adm = [s for s in cf if admissible(af, s)]
    co = [s for s in adm if complete(af, s)]
    pr = maximal(adm)
    st = [s for s in cf if (s | plus(af, s)) == af.arguments]
    rng = {s: s | plus(af, s) for s in cf}
    sst = [s for s in co if not any(rng[s] < rng[t] for t in co)]
    stg = [s for s in cf if not any(rng[s] < rng[t] for t in cf)]
    gr = min(co, key=len)
    skep = frozenset.intersection(*pr)
    ideal = max((s for s in adm if s <= skep), key=len)
    return {
        "admissible": adm,
        "complete": co,
        "preferred": pr,
        "stable": st,
        "semi-stable": sst,
        "stage": stg,
        "grounded": [gr],
        "ideal": [ideal],
    }
