"""The example plug-in of ``examples/plugins`` (a toy engine and a toy backend, each one module
plus one entry-point line), installed the way pip installs it (its package and a ``.dist-info``
with its entry points on ``sys.path``), with no edit to crux_lab: it appears in
``crux-lab engines`` and ``crux-lab backends``, in the console's choices, in ``compare`` and in
``eval recovery``."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crux_lab import backends, engines
from crux_lab.cli import app
from tests.plugins.installed import installed

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "plugins"
TOPIC = "Is Bitcoin a better long-term store of value than gold?"
PAIR = ["michael-saylor", "peter-schiff"]


@pytest.fixture
def toy(tmp_path: Path) -> Iterator[Path]:
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    with installed(tmp_path / "site", project["name"], project["entry-points"], source=EXAMPLE) as site:
        yield site


def test_the_example_declares_one_module_and_one_entry_point_each() -> None:
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"] == {
        "crux_lab.engines": {"toy": "crux_lab_toy.engine:ToyEngine"},
        "crux_lab.backends": {"toy_sim": "crux_lab_toy.backend:toy_sim"},
    }


def test_it_appears_in_the_listings_and_the_console(toy: Path) -> None:
    result = CliRunner().invoke(app, ["engines", "--json"])
    assert result.exit_code == 0 and result.stderr == ""
    assert json.loads(result.stdout)["toy"] == "Example plug-in: one call for the two clearest crux cards"
    result = CliRunner().invoke(app, ["backends", "--json"])
    assert result.exit_code == 0 and "toy_sim" in json.loads(result.stdout)
    assert not backends.spec("toy_sim").billed

    from crux_lab.widgets import DebateConsole

    console = DebateConsole()
    assert "toy" in console.engine.options and "toy_sim" in console.backend.options
    console.backend.value = "toy_sim"
    assert console.server_box.layout.display == "none" and "(modelled, not billed)" in console.cost.value


def test_a_debate_and_compare_run_it(toy: Path, tmp_path: Path) -> None:
    from crux_lab.eval.compare import all_engines, run_comparison

    assert "toy" in all_engines()
    out = run_comparison(TOPIC, PAIR, ["toy", "direct"], seed=0, backend="toy_sim", store=False,
                         runs_dir=tmp_path / "runs")
    assert out.skipped == {} and [r.engine for r in out.results] == ["toy", "direct"]
    toy_result = out.results[0]
    assert toy_result.complete and toy_result.error is None and toy_result.regime_description
    result = CliRunner().invoke(app, [
        "debate", "--engine", "toy", "--backend", "toy_sim", "--topic", TOPIC, "--personas", ",".join(PAIR),
        "--runs-dir", str(tmp_path / "cli-runs"), "--no-ingest", "--no-progress",
    ])
    assert result.exit_code == 0, result.output
    assert "backend: toy_sim (requested) - example plug-in" in result.stderr


def test_eval_recovery_scores_it(toy: Path, tmp_path: Path) -> None:
    scores = tmp_path / "scores.json"
    result = CliRunner().invoke(app, [
        "eval", "recovery", "--engines", "toy", "--backend", "toy_sim", "--scenarios", "1",
        "--runs-dir", str(tmp_path / "runs"), "--library", str(tmp_path / "lib"), "--no-store",
        "--json", str(scores),
    ])
    assert result.exit_code == 0, result.output
    assert "toy" in scores.read_text(encoding="utf-8")


def test_without_it_crux_lab_is_as_before() -> None:
    assert "toy" not in engines.registered() and "toy_sim" not in backends.registered()
