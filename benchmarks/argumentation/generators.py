"""ICCMA-style framework generators for the argumentation benchmark (seeded, pure Python).

Every generator returns ``(n, attacks)`` with arguments ``0..n-1``; ``debate`` also
returns a speaker per argument.
"""

from __future__ import annotations

import math
import random

Attacks = list[tuple[int, int]]


def erdos_renyi(n: int, mean_out: float, seed: int = 0) -> tuple[int, Attacks]:
    """Uniform random attacks (no self-attacks) with the given mean out-degree."""
    rng = random.Random(seed)
    m = int(round(n * mean_out))
    seen: set[tuple[int, int]] = set()
    while len(seen) < m:
        a, b = rng.randrange(n), rng.randrange(n)
        if a != b:
            seen.add((a, b))
    return n, sorted(seen)


def barabasi_albert(n: int, k: int = 2, seed: int = 0, mutual: float = 0.2) -> tuple[int, Attacks]:
    """Preferential attachment; each undirected edge gets a random direction, some both."""
    rng = random.Random(seed)
    targets = list(range(k))
    repeated: list[int] = []
    att: set[tuple[int, int]] = set()
    for v in range(k, n):
        chosen: set[int] = set()
        while len(chosen) < k:
            chosen.add(rng.choice(repeated) if repeated else rng.choice(targets))
        for u in chosen:
            if rng.random() < 0.5:
                att.add((u, v))
            else:
                att.add((v, u))
            if rng.random() < mutual:
                att.add((u, v))
                att.add((v, u))
            repeated += [u, v]
    return n, sorted(att)


def grid(n: int, seed: int = 0, mutual: float = 0.3) -> tuple[int, Attacks]:
    """A ``√n × √n`` lattice: each cell attacks its right and lower neighbour, some mutually."""
    rng = random.Random(seed)
    side = max(1, math.isqrt(n))
    n = side * side
    att = []
    for i in range(side):
        for j in range(side):
            v = i * side + j
            for w in ((v + 1) if j + 1 < side else None, (v + side) if i + 1 < side else None):
                if w is None:
                    continue
                att.append((v, w))
                if rng.random() < mutual:
                    att.append((w, v))
    return n, sorted(set(att))


def debate(
    n: int, seed: int = 0, cross_per_100: float = 1.0
) -> tuple[int, Attacks, dict[int, str]]:
    """Many small disputes (6-12 arguments, two camps attacking each other) joined by a few
    cross-attacks (``cross_per_100`` per 100 arguments). Speakers rotate over four personas."""
    rng = random.Random(seed)
    att: set[tuple[int, int]] = set()
    speakers: dict[int, str] = {}
    disputes: list[list[int]] = []
    v = 0
    personas = ["p0", "p1", "p2", "p3"]
    while v < n:
        size = min(rng.randint(6, 12), n - v)
        members = list(range(v, v + size))
        v += size
        disputes.append(members)
        pa, pb = rng.sample(personas, 2)
        half = max(1, size // 2)
        yes, no = members[:half], members[half:]
        for a in yes:
            speakers[a] = pa
        for b in no:
            speakers[b] = pb
        if not no:
            continue
        # claim vs counter-claim is a rebuttal (mutual); the rest are one-way attacks,
        # some of them rebutted back
        att.add((yes[0], no[0]))
        att.add((no[0], yes[0]))
        for a in yes[1:]:
            b = rng.choice(no)
            att.add((a, b))
            if rng.random() < 0.4:
                att.add((b, a))
        for b in no[1:]:
            a = rng.choice(yes)
            att.add((b, a))
            if rng.random() < 0.4:
                att.add((a, b))
    for _ in range(int(n * cross_per_100 / 100)):
        d1, d2 = rng.sample(range(len(disputes)), 2) if len(disputes) > 1 else (0, 0)
        a, b = rng.choice(disputes[d1]), rng.choice(disputes[d2])
        if a != b:
            att.add((a, b))
    return n, sorted(att), speakers


FAMILIES = {
    "er_d1": lambda n, s: erdos_renyi(n, 1.0, s),
    "er_d2": lambda n, s: erdos_renyi(n, 2.0, s),
    "er_d4": lambda n, s: erdos_renyi(n, 4.0, s),
    "ba": lambda n, s: barabasi_albert(n, 2, s),
    "grid": lambda n, s: grid(n, s),
    "debate": lambda n, s: debate(n, s)[:2],
}
