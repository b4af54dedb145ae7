"""The metric registry: every per-debate metric registers here with :func:`metric`.

A metric is a function ``(result, inputs) -> float`` (or a mapping of several named values)
in any module listed in ``METRICS.plugins`` or named by an entry point of the group
``crux_lab.metrics`` (another package's: ``name = "module"`` or ``"module:function"``); :func:`crux_lab.analysis.metrics.compute_metrics`
runs them all in that order. ``nan`` means "not applicable" and is dropped when stored.

>>> from crux_lab.models import DebateConfig, DebateResult
>>> r = DebateResult(run_id="r", engine="dcg", backend="replay",
...                  config=DebateConfig(topic="t", persona_ids=["a", "b"], engine="dcg"))
>>> METRICS.get("n_crux_items").fn(r, MetricInputs())
0.0
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from crux_lab.models.result import DebateResult
from crux_lab.personas.models import Persona, Proposition
from crux_lab.registry import Registry

Truth = Mapping[str, Mapping[str, str]]  # persona id -> proposition id -> "pro"/"con"/"uncertain"


@dataclass(frozen=True)
class MetricInputs:
    """What a metric may read besides the result: the debate's personas, their planted
    stances (``truth``, from the personas' ``stances.json``) and the deck's propositions."""

    personas: Mapping[str, Persona] = field(default_factory=dict)
    truth: Truth = field(default_factory=dict)
    propositions: Sequence[Proposition] = ()


MetricFn = Callable[[DebateResult, MetricInputs], "float | Mapping[str, float]"]


@dataclass(frozen=True)
class Metric:
    name: str
    fn: MetricFn
    # Computed only when the personas are known (ground truth, or their corpora).
    needs_personas: bool = False


def _adopt(name: str, fn: object) -> Metric:
    """A function named by an entry point without ``@metric``: a metric under its entry's name."""
    if not callable(fn):
        raise TypeError("is not a function (result, inputs) -> float")
    return Metric(name, fn)


METRICS: Registry[Metric] = Registry(
    "metric", plugins=("crux_lab.analysis.metrics", "crux_lab.analysis.quality"),
    group="crux_lab.metrics", adopt=_adopt,
)


def metric(name: str, *, needs_personas: bool = False) -> Callable[[MetricFn], MetricFn]:
    """Decorator: register a per-debate metric under ``name``."""

    def add(fn: MetricFn) -> MetricFn:
        METRICS.add(name, Metric(name, fn, needs_personas), origin=fn.__module__, source=fn)
        return fn

    return add


def problems() -> list[str]:
    """One line per metric plug-in that was left out (failed to import, or a name clash)."""
    METRICS.load()
    return list(METRICS.problems)


__all__ = ["METRICS", "Metric", "MetricFn", "MetricInputs", "Truth", "metric", "problems"]
