"""Belief confidence as corpus density.

A node's or edge's confidence is how many *independent* corpus chunks ground it, mapped to
[0, 1); it is never a number a model states about itself.
"""

from __future__ import annotations

DENSITY_BASE = 0.6  # each extra grounding chunk removes 40% of the remaining doubt


def density_confidence(n_chunks: int) -> float:
    """Confidence from the number of independent grounding chunks.

    >>> density_confidence(0), density_confidence(1), density_confidence(2), density_confidence(3)
    (0.0, 0.4, 0.64, 0.78)
    """
    if n_chunks <= 0:
        return 0.0
    return round(1.0 - DENSITY_BASE**n_chunks, 2)
