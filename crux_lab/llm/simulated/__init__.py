"""The deterministic persona simulator (see core.py)."""

from crux_lab.llm.simulated.core import HANDLERS, SimContext, SimulatedBackend, handler

__all__ = ["HANDLERS", "SimContext", "SimulatedBackend", "handler"]
