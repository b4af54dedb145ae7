"""A toy engine: the ``direct`` baseline's one call, asked for at most two crux cards.

An engine is a class with a ``name``, a one-line ``description``, its parameters' model, the
number of personas it takes and an async ``run`` that yields events; ``@register_engine``
registers it, and one entry-point line (``crux_lab.engines``) in this package's
``pyproject.toml`` tells crux_lab to import this module.

Its call has its own purpose, declared here with its tier (``declare_purpose``), and the
simulator's answer to it, registered here too (``@handler``: the simulator's analyst, as it
answers the direct baseline), so it runs offline on ``--backend simulated`` with no edit to
crux_lab; crux_lab's own engines declare theirs the same way. A purpose no handler answers
gets the simulator's named refusal.
"""

from __future__ import annotations

from typing import ClassVar

from crux_lab.engines import register_engine
from crux_lab.engines.direct.direct import DirectEngine
from crux_lab.engines.direct.sim import baseline_cards
from crux_lab.llm.base import LLMRequest, declare_purpose
from crux_lab.llm.simulated import SimContext, handler
from crux_lab.llm.simulated.core import HandlerResult
from crux_lab.models.domain import Tier

# The toy's one call: the direct baseline's allocation (strong tier, steady, room for cards).
TOY_CARDS = declare_purpose("toy_cards", Tier.strong, temperature=0.3, max_tokens=3000, module=__name__)


@handler(TOY_CARDS)
def answer_toy_cards(ctx: SimContext, request: LLMRequest) -> HandlerResult:
    """The simulator's answer: its analyst drafts crux cards as for the direct baseline."""
    return baseline_cards(ctx, request)

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
    purpose: ClassVar[str] = TOY_CARDS
