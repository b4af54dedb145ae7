"""The simulator as a backend: its factory, registered with :func:`crux_lab.backends.backend`
(and one entry point in crux_lab's ``pyproject.toml``), with its options' hooks
(:mod:`crux_lab.llm.simulated.options`). The simulator itself (:mod:`.core`) is imported only
when it is built.
"""

from __future__ import annotations

from crux_lab.backends import backend
from crux_lab.llm.base import Backend
from crux_lab.llm.registry import BackendArgs
from crux_lab.llm.simulated.options import SimulatorKnobs, SimulatorOptions, for_debate, for_library


@backend(
    "simulated",
    description="deterministic persona simulator, offline, no API cost",
    billed=False,
    tiers="defaults",
    tiers_help="priced as the anthropic defaults",
    options=for_debate,
    options_model=SimulatorKnobs,
    library=for_library,
)
def build(args: BackendArgs) -> Backend:
    """The simulator the registry builds; ``args.options`` is a :class:`SimulatorOptions`."""
    from crux_lab.llm.simulated.core import SimulatedBackend

    options = args.options
    if not isinstance(options, SimulatorOptions):
        raise TypeError("the simulated backend is built from SimulatorOptions (its personas and knobs)")
    return SimulatedBackend(
        options.personas, options.propositions, seed=options.seed, knobs=options.knobs, realtime=args.realtime
    )
