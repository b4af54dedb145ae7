"""Edges routed around the nodes they don't touch (pure geometry, no plotting).

A straight arrow between two arguments of a column passes through the arguments stacked
between them; :func:`route_edge` bends such an edge out to one side through one or two
waypoints, the smallest bend that clears every other node.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

Point = tuple[float, float]

# Bends tried, in units of the clearance: the smallest that clears wins.
BENDS = (1.6, 2.4, 3.5, 5.0, 7.0, 10.0)


def _scaled(p: Point, scale: Point) -> Point:
    return (p[0] * scale[0], p[1] * scale[1])


def _segment_distance(p: Point, a: Point, b: Point) -> float:
    """Distance from ``p`` to the segment ``a``-``b``.

    >>> _segment_distance((0, 1), (-1, 0), (1, 0)), _segment_distance((3, 0), (-1, 0), (1, 0))
    (1.0, 2.0)
    """
    dx, dy = b[0] - a[0], b[1] - a[1]
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2))
    return math.hypot(p[0] - (a[0] + t * dx), p[1] - (a[1] + t * dy))


def path_clearance(path: Sequence[Point], nodes: Iterable[Point], scale: Point = (1.0, 1.0)) -> float:
    """The smallest distance (after ``scale``) between the path and any node not at its ends
    (``inf`` when there is none).

    >>> path_clearance([(0, 0), (0, -3)], [(0, 0), (0, -1), (1, -1)])
    0.0
    """
    ends = {path[0], path[-1]}
    pts = [_scaled(p, scale) for p in path]
    best = math.inf
    for node in nodes:
        if node in ends:
            continue
        q = _scaled(node, scale)
        for a, b in zip(pts, pts[1:], strict=False):
            best = min(best, _segment_distance(q, a, b))
    return best


def route_edge(start: Point, end: Point, nodes: Iterable[Point], *, clearance: float = 1.0,
               scale: Point = (1.0, 1.0)) -> list[Point]:
    """The path of an edge from ``start`` to ``end``: ``[start, end]`` when the straight line
    keeps ``clearance`` from every other node, else bent out to one side through one waypoint
    (or two, for a long run past several nodes), the smallest bend that clears them all.
    Distances are measured after multiplying x and y by ``scale`` (say, pixels per unit of
    each axis), so ``clearance`` is in those units. When nothing clears, the straight line.

    A column of three nodes: the edge from the top to the bottom bends around the middle one,
    and no part of it comes nearer than the clearance; an edge with nothing in its way stays
    straight.

    >>> column = [(0.0, 0.0), (0.0, -1.0), (0.0, -2.0)]
    >>> path = route_edge((0.0, 0.0), (0.0, -2.0), column, clearance=0.2)
    >>> len(path), path[0], path[-1], path[1][0] != 0.0
    (3, (0.0, 0.0), (0.0, -2.0), True)
    >>> path_clearance(path, column) >= 0.2
    True
    >>> route_edge((0.0, 0.0), (1.0, 0.0), column, clearance=0.2)
    [(0.0, 0.0), (1.0, 0.0)]
    """
    nodes = list(nodes)
    straight = [start, end]
    if start == end or path_clearance(straight, nodes, scale) >= clearance:
        return straight
    (ax, ay), (bx, by) = _scaled(start, scale), _scaled(end, scale)
    length = math.hypot(bx - ax, by - ay)
    nx, ny = -(by - ay) / length, (bx - ax) / length  # the unit normal, in scaled units

    def point(t: float, offset: float) -> Point:
        x, y = ax + t * (bx - ax) + offset * nx, ay + t * (by - ay) + offset * ny
        return (x / scale[0], y / scale[1])

    for bend in BENDS:
        for sign in (1.0, -1.0):
            offset = sign * bend * clearance
            for path in ([start, point(0.5, offset), end], [start, point(0.2, offset), point(0.8, offset), end]):
                if path_clearance(path, nodes, scale) >= clearance:
                    return path
    return straight
