"""The purposes engines send and the simulator answers are one list (crux_lab.llm.purposes)."""

from __future__ import annotations

from crux_lab.llm.base import ALLOCATION
from crux_lab.llm.purposes import Purpose
from crux_lab.llm.simulated.core import HANDLERS, _load_handlers


def test_every_purpose_has_one_simulator_handler_and_every_handler_a_purpose() -> None:
    _load_handlers()
    assert set(HANDLERS) == set(Purpose)
    assert all(isinstance(p, Purpose) for p in HANDLERS)  # registered by name, not by a bare string


def test_the_allocation_table_names_only_known_purposes() -> None:
    assert set(ALLOCATION) <= set(Purpose)
