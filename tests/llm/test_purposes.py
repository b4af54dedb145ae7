"""The purposes engines send and the simulator answers are one list (crux_lab.llm.purposes), and
an engine outside that list declares its own purposes, and the simulator's answer to them, in
its own module."""

from __future__ import annotations

from typing import Any

import pytest

from crux_lab.llm import base, make_backend
from crux_lab.llm.base import ALLOCATION, LLMRequest, allocation_for, declare_purpose
from crux_lab.llm.purposes import Purpose
from crux_lab.llm.registry import options_for_library
from crux_lab.llm.simulated import core
from crux_lab.llm.simulated.core import HANDLERS, SimContext, _load_handlers, handler
from crux_lab.models.domain import Tier
from crux_lab.personas.loader import load_personas, propositions_for


def own_handlers() -> set[str]:
    """The purposes the simulator's own handler modules answer (a plug-in may add others)."""
    _load_handlers()
    return {p for p, fn in HANDLERS.items() if fn.__module__.startswith("crux_lab.llm.simulated.")}


def test_every_purpose_has_one_simulator_handler_and_every_handler_a_purpose() -> None:
    assert own_handlers() == set(Purpose)
    assert all(isinstance(p, Purpose) for p in own_handlers())  # registered by name, not by a bare string


def test_the_allocation_table_names_only_known_purposes() -> None:
    assert set(ALLOCATION) - set(base.DECLARED) <= set(Purpose)


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Declarations and handlers made in a test are forgotten after it."""
    _load_handlers()
    monkeypatch.setattr(base, "ALLOCATION", dict(base.ALLOCATION))
    monkeypatch.setattr(base, "DECLARED", dict(base.DECLARED))
    monkeypatch.setattr(core, "HANDLERS", dict(core.HANDLERS))


async def test_an_engine_declares_its_purpose_and_the_simulators_answer(fresh: None) -> None:
    purpose = declare_purpose("echo_line", Tier.fast, temperature=0.1, max_tokens=100, module=__name__)
    assert allocation_for(purpose).tier is Tier.fast and allocation_for(purpose).max_tokens == 100
    assert declare_purpose("echo_line", Tier.fast, temperature=0.1, max_tokens=100, module=__name__) == purpose

    @handler(purpose)
    def echo(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
        return {"line": request.user}

    ids = ["michael-saylor", "peter-schiff"]
    backend = make_backend("simulated", options=options_for_library("simulated", load_personas(ids), propositions_for(ids)))
    response = await backend.generate(LLMRequest(purpose=purpose, system="s", user="hello"))
    assert response.text == '{"line": "hello"}'


def test_a_purpose_crux_lab_owns_or_another_module_declared_is_refused(fresh: None) -> None:
    with pytest.raises(ValueError, match="'card' is crux_lab's own"):
        declare_purpose("card", Tier.fast, module=__name__)
    declare_purpose("echo_line", Tier.fast, module="elsewhere")
    with pytest.raises(ValueError, match="'echo_line' is already declared by elsewhere"):
        declare_purpose("echo_line", Tier.fast, module=__name__)

    def answer(ctx: SimContext, request: LLMRequest) -> str:
        return ""

    with pytest.raises(ValueError, match="answers the purpose 'card' itself"):
        handler(Purpose.card)(answer)
    assert HANDLERS[Purpose.card].__module__.startswith("crux_lab.llm.simulated.")
