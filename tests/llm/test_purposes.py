"""Every engine declares its own purposes (crux_lab's own in ``crux_lab/engines/<family>/purposes.py``,
a plug-in in its module) and the simulator's answer to them beside the engine; only the shared
purposes are one list (crux_lab.llm.purposes), answered by the simulator's own modules. A
second module declaring or answering a purpose another declared is refused, by name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from crux_lab.engines.crux_room.purposes import CARD
from crux_lab.llm import base, make_backend
from crux_lab.llm.base import ALLOCATION, LLMRequest, allocation_for, declare_purpose
from crux_lab.llm.purposes import Purpose
from crux_lab.llm.registry import options_for_library
from crux_lab.llm.simulated import core
from crux_lab.llm.simulated.core import HANDLERS, SimContext, _load_handlers, handler
from crux_lab.models.domain import Tier
from crux_lab.personas.loader import load_personas, propositions_for


def own_handlers() -> dict[str, str]:
    """The purposes crux_lab answers, each with the module that answers it (a plug-in may add
    others), after the simulator loaded its handlers and every registered engine."""
    _load_handlers()
    return {p: fn.__module__ for p, fn in HANDLERS.items() if fn.__module__.startswith("crux_lab.")}


def own_declared() -> dict[str, str]:
    """The purposes crux_lab's own engines declared, each with the declaring module."""
    _load_handlers()
    return {p: m for p, m in base.DECLARED.items() if m.startswith("crux_lab.")}


def test_every_purpose_has_one_simulator_handler_and_every_handler_a_purpose() -> None:
    answered = own_handlers()
    assert set(answered) == set(Purpose) | set(own_declared())
    for purpose, module in answered.items():
        if module.startswith("crux_lab.llm.simulated."):  # the shared purposes, by their names
            assert isinstance(purpose, Purpose), purpose
        else:  # an engine's, answered from the package that declared it
            assert module.rpartition(".")[0] == own_declared()[purpose].rpartition(".")[0], (purpose, module)


def test_an_engines_purposes_keep_their_allocation() -> None:
    _load_handlers()
    assert allocation_for(CARD) == base.Allocation(Tier.strong, 0.3, 1200)
    assert allocation_for("dialogue_turn") == base.Allocation(Tier.strong, 0.85, 300, own_words=True)  # a persona speaks
    assert allocation_for("dialogue_turn", {"dialogue_turn": {"tier": "fast"}}).own_words  # an override keeps it
    assert allocation_for("validate_attacks") == base.Allocation(Tier.fast, 0.2, 1500)
    assert allocation_for("direct_cards") == base.DEFAULT_ALLOCATION


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
    with pytest.raises(ValueError, match=r"'card' is crux_lab's own \(declared by crux_lab.engines.crux_room.purposes\)"):
        declare_purpose("card", Tier.fast, module=__name__)
    with pytest.raises(ValueError, match="'poll' is crux_lab's own"):
        declare_purpose("poll", Tier.fast, module=__name__)
    declare_purpose("echo_line", Tier.fast, module="elsewhere")
    with pytest.raises(ValueError, match="'echo_line' is already declared by elsewhere"):
        declare_purpose("echo_line", Tier.fast, module=__name__)

    def answer(ctx: SimContext, request: LLMRequest) -> str:
        return ""

    with pytest.raises(ValueError, match="'card' is declared by crux_lab.engines.crux_room.purposes"):
        handler(CARD)(answer)
    with pytest.raises(ValueError, match="answers the purpose 'poll' itself"):
        handler(Purpose.poll)(answer)
    assert HANDLERS[CARD].__module__ == "crux_lab.engines.crux_room.sim"


def test_a_plug_in_is_refused_an_engines_purpose_before_the_engine_is_imported() -> None:
    """In a fresh process nothing has imported the dialogue engine yet: crux_lab's own engines
    declare first, so the plug-in's declaration is still refused, by name."""
    code = (
        "import sys\n"
        "from crux_lab.llm.base import declare_purpose\n"
        "from crux_lab.models.domain import Tier\n"
        "assert 'crux_lab.engines.dialogue.purposes' not in sys.modules\n"
        "declare_purpose('dialogue_turn', Tier.fast, module='crux_lab_plugin.engine')\n"
    )
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, cwd=repo)
    assert done.returncode != 0
    assert "the purpose 'dialogue_turn' is crux_lab's own (declared by crux_lab.engines.dialogue.purposes)" in done.stderr
