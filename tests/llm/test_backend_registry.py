"""One backend registry: every backend's code is where its entry says, the simulator's
options reach it through its entry, and a backend without options refuses them."""

from __future__ import annotations

import pytest

from crux_lab import backends, tiers
from crux_lab.llm import BACKENDS, backend_for_debate
from crux_lab.llm.registry import option_names, options_for
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.llm.simulated.options import SimulatorOptions
from crux_lab.models import PAID_BACKENDS, DebateConfig

TOPIC = "Is Bitcoin a better long-term store of value than gold?"
PAIR = ["michael-saylor", "peter-schiff"]


@pytest.mark.parametrize("name", list(backends.registered()))
def test_every_entry_names_code_that_exists(name: str) -> None:
    entry = backends.spec(name)
    for code in (entry.factory, entry.options, entry.describe, entry.options_model, entry.library):
        if code is not None:
            assert callable(code), code
    assert entry.description and "\n" not in entry.description


def test_the_cli_tiers_and_billing_read_the_registry() -> None:
    assert ("auto", *backends.registered()) == BACKENDS
    assert {n for n, s in backends.registered().items() if s.billed} == PAID_BACKENDS
    assert tiers.models_for("openai") == {}  # the explicit rule: no default model
    assert tiers.models_for("simulated") == tiers.default_models()
    assert "openai: --model-strong/--model-fast" in tiers.allocation_help()


def test_the_simulator_is_built_from_its_own_options() -> None:
    config = DebateConfig(topic=TOPIC, persona_ids=PAIR, engine="blitz", seed=3, backend_options={"drift": 0.5})
    options = options_for("simulated", config)
    assert isinstance(options, SimulatorOptions)
    assert sorted(options.personas) == sorted(PAIR) and options.seed == 3 and options.knobs.drift == 0.5
    backend = backend_for_debate(config)
    assert isinstance(backend, SimulatedBackend) and backend.knobs.drift == 0.5 and backend.seed == 3
    assert "drift" in option_names("simulated") and option_names("openai") == []


def test_a_backend_without_options_refuses_them() -> None:
    config = DebateConfig(topic=TOPIC, persona_ids=PAIR, backend="openai", backend_options={"drift": 0.5})
    with pytest.raises(ValueError, match="the openai backend takes no options"):
        options_for("openai", config)


def test_an_unknown_knob_is_refused_when_the_simulator_is_built() -> None:
    config = DebateConfig(topic=TOPIC, persona_ids=PAIR, backend_options={"drfit": 0.5})
    with pytest.raises(ValueError, match="drfit"):
        options_for("simulated", config)
