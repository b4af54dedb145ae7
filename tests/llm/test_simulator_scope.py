"""The simulator refuses what it cannot debate: a topic its deck's beliefs do not touch, and
personas from two decks. The refusal comes before any call or file, and names the way out."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from crux_lab.cli import app
from crux_lab.llm.simulated.scope import TopicOutsideDeck, check_simulated_topic
from crux_lab.models import DebateConfig
from crux_lab.personas.loader import load_decks
from crux_lab.runner import DebateRun


def test_in_deck_topics_pass_and_paraphrased_ones_too() -> None:
    decks = load_decks()
    check_simulated_topic("Is Bitcoin a better long-term store of value than gold?", ["michael-saylor", "peter-schiff"], decks)
    check_simulated_topic("Does rent control work?", ["yimby-economist", "tenant-organizer"], decks)


def test_an_unrelated_topic_is_refused_with_the_nearest_deck_topics() -> None:
    with pytest.raises(TopicOutsideDeck) as err:
        check_simulated_topic("What is the best pizza topping?", ["michael-saylor", "peter-schiff"], load_decks())
    msg = str(err.value)
    assert "Nearest deck topics" in msg and "Bitcoin" in msg
    assert "real model can debate any topic" in msg


def test_personas_of_two_decks_are_refused() -> None:
    with pytest.raises(TopicOutsideDeck, match="different decks"):
        check_simulated_topic("Is Bitcoin digital gold?", ["michael-saylor", "yimby-economist"], load_decks())


def test_debate_run_refuses_before_any_call() -> None:
    config = DebateConfig(topic="What is the best pizza topping?", persona_ids=["michael-saylor", "peter-schiff"],
                          engine="blitz", backend="simulated")
    with pytest.raises(TopicOutsideDeck):
        DebateRun(config)


def test_cli_exits_2_and_writes_no_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    db = tmp_path / "x.duckdb"
    out = CliRunner().invoke(app, ["debate", "--engine", "blitz", "--backend", "simulated",
                                   "--topic", "What is the best pizza topping?",
                                   "--personas", "michael-saylor,peter-schiff",
                                   "--runs-dir", str(runs), "--db", str(db)])
    assert out.exit_code == 2, out.output
    assert "cannot debate" in out.output
    assert not db.exists()
    assert not runs.exists() or not any(runs.iterdir())
