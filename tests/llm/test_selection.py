"""Backend selection: auto, explicit names, missing key, cassettes, and the printed choice."""

from __future__ import annotations

from pathlib import Path

import pytest

from crux_lab.llm import (
    BackendUnavailable,
    UnknownBackend,
    describe_backend_choice,
    make_backend,
    resolve_backend_name,
)
from crux_lab.llm.anthropic_backend import AnthropicBackend
from crux_lab.llm.pricing import default_model
from crux_lab.llm.registry import options_for_library
from crux_lab.llm.replay import ReplayBackend
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.models import Tier

from .fake_api import FAKE_KEY
from .tiny_panel import tiny_panel


def build(name: str, **kwargs: object) -> object:
    """A backend by name, with the simulator's options from a tiny persona library (the
    registry hands them only to a backend that takes them)."""
    personas, propositions = tiny_panel()
    resolved = resolve_backend_name(name)
    options = options_for_library(resolved, personas, propositions)
    return make_backend(name, options=options, **kwargs)  # type: ignore[arg-type]


def test_auto_is_simulated_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert resolve_backend_name("auto") == "simulated"
    assert isinstance(build("auto"), SimulatedBackend)
    line = describe_backend_choice("auto")
    assert line.startswith("backend: simulated (auto: ANTHROPIC_API_KEY is not set)")


def test_auto_is_anthropic_with_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    assert resolve_backend_name("auto") == "anthropic"
    assert isinstance(build("auto"), AnthropicBackend)
    line = describe_backend_choice("auto")
    assert line.startswith("backend: anthropic (auto: ANTHROPIC_API_KEY is set)")
    assert "claude-" in line and FAKE_KEY not in line


@pytest.mark.parametrize("blank", ["", "   "])
def test_anthropic_without_a_key_says_how_to_set_it(monkeypatch: pytest.MonkeyPatch, blank: str) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", blank)
    with pytest.raises(BackendUnavailable) as info:
        build("anthropic")
    assert "export ANTHROPIC_API_KEY=" in str(info.value)
    assert "--backend simulated" in str(info.value)
    assert "unavailable" in describe_backend_choice("anthropic")


def test_unknown_backend_lists_the_valid_ones() -> None:
    with pytest.raises(UnknownBackend, match="Valid backends: auto, simulated, anthropic, openai, replay"):
        build("gemini")
    with pytest.raises(UnknownBackend):
        describe_backend_choice("gemini")


def test_replay_needs_a_cassette(tmp_path: Path) -> None:
    with pytest.raises(BackendUnavailable, match="--cassette"):
        build("replay")
    cassette = tmp_path / "c.jsonl"
    cassette.write_text("")
    backend = build("replay", cassette=cassette)
    assert isinstance(backend, ReplayBackend) and backend.mode == "replay"
    assert str(cassette) in describe_backend_choice("replay", cassette=cassette)


def test_a_cassette_wraps_a_live_backend_in_auto_mode(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    backend = build("simulated", cassette=tmp_path / "new.jsonl")
    assert isinstance(backend, ReplayBackend)
    assert backend.mode == "auto" and isinstance(backend.inner, SimulatedBackend)
    assert "recorded" in describe_backend_choice("simulated", cassette=tmp_path / "new.jsonl")


def test_models_per_tier_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("CRUX_LAB_MODEL_FAST", "claude-haiku-4-5")
    monkeypatch.delenv("CRUX_LAB_MODEL_STRONG", raising=False)
    backend = build("anthropic")
    assert isinstance(backend, AnthropicBackend)
    assert backend.model_for(Tier.fast) == "claude-haiku-4-5"
    assert backend.model_for(Tier.strong) == default_model(Tier.strong)
    assert "fast=claude-haiku-4-5" in describe_backend_choice("anthropic")
