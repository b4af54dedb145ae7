"""The engine registry: listing, lookup, and engine-specific parameters refused elsewhere."""

from __future__ import annotations

import pytest

from crux_lab import engines
from crux_lab.engines.base import EngineConfigError, check_personas, validate_params
from crux_lab.models import DebateConfig

MINE = ("blitz", "classical", "graph")


def test_available_lists_each_engine_with_one_line() -> None:
    listed = engines.available()
    for name in MINE:
        assert name in listed
    for name, description in listed.items():
        assert description.strip() and "\n" not in description, name
        assert engines.get(name).name == name


def test_unknown_engine_names_the_valid_ones() -> None:
    with pytest.raises(EngineConfigError) as err:
        engines.get("blits")
    message = str(err.value)
    assert "blits" in message and all(name in message for name in MINE)


@pytest.mark.parametrize("name", MINE)
def test_every_comparison_engine_takes_max_rounds(name: str) -> None:
    engine = engines.get(name)
    params = validate_params(engine, DebateConfig(topic="t", persona_ids=["a", "b"], engine=name, params={"max_rounds": 2}))
    assert params.max_rounds == 2  # type: ignore[attr-defined]


def test_aspects_on_blitz_is_refused_with_a_clear_error() -> None:
    blitz = engines.get("blitz")
    config = DebateConfig(topic="t", persona_ids=["a", "b"], engine="blitz", params={"aspects": 3})
    with pytest.raises(EngineConfigError) as err:
        validate_params(blitz, config)
    message = str(err.value)
    assert "'blitz'" in message and "aspects" in message and "max_rounds" in message


def test_max_rounds_on_panel_is_refused_with_a_clear_error() -> None:
    panel = engines.get("panel")
    config = DebateConfig(topic="t", persona_ids=["a", "b", "c"], engine="panel", params={"max_rounds": 3})
    with pytest.raises(EngineConfigError) as err:
        validate_params(panel, config)
    assert "'panel'" in str(err.value) and "max_rounds" in str(err.value)


@pytest.mark.parametrize("name", MINE)
def test_out_of_range_parameters_are_refused(name: str) -> None:
    engine = engines.get(name)
    with pytest.raises(EngineConfigError, match="max_rounds"):
        validate_params(engine, DebateConfig(topic="t", persona_ids=["a", "b"], engine=name, params={"max_rounds": 0}))


@pytest.mark.parametrize("name", MINE)
def test_persona_count_and_duplicates_are_checked(name: str) -> None:
    engine = engines.get(name)
    with pytest.raises(EngineConfigError, match="needs"):
        check_personas(engine, ["solo"])
    with pytest.raises(EngineConfigError, match="duplicate"):
        check_personas(engine, ["a", "a"])


@pytest.mark.parametrize("name", MINE)
async def test_same_seed_same_debate_and_the_event_log_carries_the_output(name: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from crux_lab.engines.base import debate_output
    from crux_lab.models import parse_event
    from crux_lab.personas.loader import load_decks
    from crux_lab.runner import run_debate

    deck = next((d for d in load_decks() if len(d.persona_ids) >= 3), None)
    if deck is None:
        pytest.skip("no shipped deck")
    config = DebateConfig(topic=deck.topics[0], persona_ids=deck.persona_ids[:3], engine=name, seed=11,
                          params={"max_rounds": 2})
    log = tmp_path / "events.jsonl"
    first = await run_debate(config, event_log=log)
    second = await run_debate(config)
    assert first.run_id == second.run_id
    assert [t.dialogue for t in first.transcript] == [t.dialogue for t in second.transcript]
    assert debate_output(first) == debate_output(second)
    assert first.graph == second.graph
    replayed = [parse_event(line) for line in log.read_text().splitlines()]
    assert replayed[-1].type == "debate_complete"
    assert replayed[-1].output == debate_output(first)  # type: ignore[union-attr]
    assert first.cruxes  # every comparison engine finds cruxes on a contested deck


def test_engines_are_listed_in_the_order_of_the_plugin_list() -> None:
    # `crux-lab engines` and the --engine choices keep their order, whichever module loaded first.
    assert list(engines.available()) == ["dialogue", "dcg", "panel", "crux_rooms", "blitz", "classical", "graph", "direct", "cot", "worldview"]


def test_a_registry_orders_by_plugin_and_refuses_a_name_taken_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    from crux_lab.registry import DuplicateName, Registry, UnknownName

    for name in ("plug_a", "plug_b"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    things: Registry[str] = Registry("thing", plugins=("plug_a", "plug_b"))
    things.add("b", "from b", origin="plug_b")  # plug_b happened to be imported first
    things.add("a", "from a", origin="plug_a")
    assert things.names() == ["a", "b"]
    things.add("a", "reloaded", origin="plug_a")  # the same module again replaces it
    assert things.get("a") == "reloaded"
    with pytest.raises(DuplicateName, match="plug_a and plug_b"):
        things.add("a", "impostor", origin="plug_b")
    with pytest.raises(UnknownName, match="unknown thing 'c'. Valid things: a, b."):
        things.get("c")
