"""Sane bounds on numeric input, checked before any LLM call (CLI, runner, sweep files).

- Every whole number must fit the store's BIGINT (a signed 64-bit integer) and every
  float must be finite: a value that cannot be stored would otherwise run a whole debate
  and then lose its result.
- Cross-field rules: a parameter pair ``<x>_min`` / ``<x>_max`` (or ``min_<x>`` /
  ``max_<x>``) must satisfy min <= max.

Each error is one line naming the field and the fix.

>>> check_numbers({"max_rounds": 3, "weights": [0.5, 1.0]}, "params")
>>> check_numbers({"max_rounds": 10**20}, "params")
Traceback (most recent call last):
...
crux_lab.limits.BoundsError: params.max_rounds = 100000000000000000000 is out of range: whole numbers must lie within ±9223372036854775807; pass a smaller value.
>>> check_ranges({"cluster_min": 20, "cluster_max": 2}, "params")
Traceback (most recent call last):
...
crux_lab.limits.BoundsError: params.cluster_min = 20 is larger than params.cluster_max = 2: cluster_min must be <= cluster_max; lower cluster_min or raise cluster_max.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


class BoundsError(ValueError):
    """A number out of its sane range, or a cross-field rule broken."""


def check_numbers(value: Any, where: str) -> None:
    """Raise :class:`BoundsError` for any int outside int64 or any non-finite float inside
    ``value`` (dicts and lists are walked; ``where`` names the field)."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            raise BoundsError(
                f"{where} = {value} is out of range: whole numbers must lie within ±{INT64_MAX}; "
                f"pass a smaller value."
            )
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise BoundsError(f"{where} = {value} is not a finite number; pass a finite value.")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            check_numbers(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            check_numbers(item, f"{where}[{i}]")


def _pairs(names: set[str]) -> list[tuple[str, str]]:
    out = []
    for name in sorted(names):
        if name.endswith("_min") and f"{name[:-4]}_max" in names:
            out.append((name, f"{name[:-4]}_max"))
        elif name.startswith("min_") and f"max_{name[4:]}" in names:
            out.append((name, f"max_{name[4:]}"))
    return out


def check_ranges(params: Mapping[str, Any], where: str = "params") -> None:
    """Every ``<x>_min`` / ``<x>_max`` (and ``min_<x>`` / ``max_<x>``) pair of numbers has
    min <= max."""
    for low, high in _pairs(set(params)):
        lo, hi = params[low], params[high]
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (lo, hi))
        if numbers and lo > hi:
            raise BoundsError(
                f"{where}.{low} = {lo} is larger than {where}.{high} = {hi}: {low} must be <= "
                f"{high}; lower {low} or raise {high}."
            )


def check_params(params: Mapping[str, Any], where: str = "params") -> None:
    """Both checks on a mapping of engine parameters (after the engine's defaults apply)."""
    check_numbers(dict(params), where)
    check_ranges(params, where)


__all__ = ["INT64_MAX", "INT64_MIN", "BoundsError", "check_numbers", "check_params", "check_ranges"]
