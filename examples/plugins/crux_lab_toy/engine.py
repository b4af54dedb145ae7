"""A toy engine: the ``direct`` baseline's one call, asked for at most two crux cards.

An engine is a class with a ``name``, a one-line ``description``, its parameters' model, the
number of personas it takes and an async ``run`` that yields events; ``@register_engine``
registers it, and one entry-point line (``crux_lab.engines``) in this package's
``pyproject.toml`` tells crux_lab to import this module. It reuses a purpose the simulator
already answers (``direct_cards``), so it runs offline on ``--backend simulated``.
"""

from __future__ import annotations

from typing import ClassVar

from crux_lab.engines import register_engine
from crux_lab.engines.direct import DirectEngine

TOY_TASK = (
    "Write at most 2 crux cards (the two questions on which these people most clearly disagree; "
    "the run allows up to {max_cards}). Reply in the JSON schema given."
)


@register_engine
class ToyEngine(DirectEngine):
    """The direct baseline's one call, asked for the two clearest cruxes."""

    name: ClassVar[str] = "toy"
    description: ClassVar[str] = "Example plug-in: one call for the two clearest crux cards"
    task: ClassVar[str] = TOY_TASK
