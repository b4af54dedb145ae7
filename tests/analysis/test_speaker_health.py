"""benchmarks/speaker_health.py reads run folders: persona turns as guard_rates counts them, a
recited rejected side, a stance against the planted one, role flags, and bad input in one line."""

from __future__ import annotations

import doctest
import importlib.util
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from crux_lab.analysis.metrics import guard_rates
from crux_lab.analysis.restates import content_words
from crux_lab.analysis.scenarios import (
    Scenario,
    generate_scenarios,
    load_scenarios,
    use_library,
    write_library,
)
from crux_lab.embed import get_embedder
from crux_lab.engines.guards import containment, repeats
from crux_lab.eval.recovery import recovery_config
from crux_lab.models import EngineError
from crux_lab.runs import run_or_resume
from crux_lab.store.runfiles import load_result

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "speaker_health.py"
ENGINE = "classical"  # the quickest engine on the simulator whose claims tie to the planted propositions


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("speaker_health", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SH = _script()


@pytest.fixture(scope="module")
def debate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Scenario]:
    """One simulated debate of a generated scenario: (scenario folder, run folder, scenario)."""
    root = tmp_path_factory.mktemp("speaker_health")
    lib = write_library(generate_scenarios(1, seed=0, n_personas=2, n_contested=2, n_consensus=1), root / "lib")
    scenario = load_scenarios(lib)[0]
    with use_library(lib), pytest.MonkeyPatch.context() as mp:
        # the per-debate metrics (seconds of corpus embeddings) are not what the script reads
        mp.setattr("crux_lab.runner.run_metrics", lambda *a, **k: {})
        config = recovery_config(scenario, ENGINE, 0, deck=scenario.id, max_turns=4)
        done = run_or_resume(config, root / "runs", label=ENGINE, sweep_id="test")
    return lib, done.run_dir, scenario


@pytest.fixture(scope="module")
def base(debate: tuple[Path, Path, Scenario]) -> dict[str, Any]:
    """The unedited run's row."""
    lib, run, _ = debate
    return next(iter(SH.report([run.parent], lib)["rows"]))


def _copy(run: Path, dest: Path, change: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """A copy of ``run`` at ``dest``, its result.json edited by ``change``."""
    shutil.copytree(run, dest)
    if change is not None:
        data = json.loads((dest / "result.json").read_text(encoding="utf-8"))
        change(data)
        (dest / "result.json").write_text(json.dumps(data), encoding="utf-8")
    return dest


def _row(runs: Path, lib: Path, name: str) -> dict[str, Any]:
    return next(r for r in SH.report([runs], lib)["rows"] if r["run"] == name)


def test_persona_turns_and_echo_firings_are_guard_rates_own(debate: tuple[Path, Path, Scenario], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    lib, run, _ = debate
    skipped = EngineError(level="warning", purpose="guard_echo",
                          error='A: this turn only repeats the debate topic (the turn was skipped): "x"')
    plain = _copy(run, tmp_path / "runs" / "plain")
    echoed = _copy(run, tmp_path / "runs" / "echoed", lambda d: d["events"].append(skipped.model_dump(mode="json")))
    out = tmp_path / "health.json"
    assert SH.main([str(tmp_path / "runs"), "--scenarios", str(lib), "--out", str(out), "--label", "before"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    rows = {r["run"]: r for r in data["rows"]}
    for folder in (plain, echoed):
        assert rows[folder.name]["persona_turns"] == guard_rates([load_result(folder)])[ENGINE]["persona_turns"]
    kept = len(load_result(plain).transcript)
    assert rows["plain"]["persona_turns"] == kept and rows["echoed"]["persona_turns"] == kept + 1
    added = (rows["echoed"]["guard_echo"] - rows["plain"]["guard_echo"], rows["echoed"]["kept_out_echo"] - rows["plain"]["kept_out_echo"])
    assert added == (1, 1)  # the one skipped echo the test added
    assert rows["echoed"]["echo_rate"] == round(rows["echoed"]["guard_echo"] / (kept + 1), 4)
    both = guard_rates([load_result(plain), load_result(echoed)])[ENGINE]
    totals = data["totals"][ENGINE]
    assert (totals["runs"], totals["persona_turns"], totals["echo_rate"]) == (2, both["persona_turns"], both["echo_rate"])
    assert data["label"] == "before" and rows["plain"]["scenario"] == load_scenarios(lib)[0].id
    assert rows["plain"]["calls"] > 0 and rows["plain"]["prompt_tokens_per_persona_turn"] > 0
    printed = capsys.readouterr().out
    assert "| engine | runs | persona turns |" in printed and f"| {ENGINE} | 2 | {2 * kept + 1} |" in printed


def test_a_turn_stating_a_rejected_proposition_as_its_own_is_counted(debate: tuple[Path, Path, Scenario], base: dict[str, Any],
                                                                     tmp_path: Path) -> None:
    lib, run, scenario = debate
    turns = load_result(run).transcript
    rejected = {t.persona_id: [p for p in scenario.propositions if p.stances[t.persona_id] == "con"] for t in turns}
    k, turn = next((k, t) for k, t in enumerate(turns)
                   if rejected[t.persona_id] and all(containment(p.text, t.dialogue) < 0.6 for p in rejected[t.persona_id]))
    prop = rejected[turn.persona_id][0]

    def recite(d: dict[str, Any]) -> None:
        d["transcript"][k]["dialogue"] = f"{prop.text} That is what the numbers here show."

    row = _row(_copy(run, tmp_path / "edited" / "r", recite).parent, lib, "r")
    assert row["recites"] == base["recites"] + 1
    assert row["recites_asserted"] == base["recites_asserted"] + 1
    assert row["recites_rejected"] > base["recites_rejected"]
    assert {"speaker": turn.persona_id, "proposition": prop.id, "asserted": True} in [
        {k: x[k] for k in ("speaker", "proposition", "asserted")} for x in row["recites_examples"]]


def test_a_kept_turn_that_copies_an_earlier_one_with_words_put_in_is_a_kept_repeat(
        debate: tuple[Path, Path, Scenario], base: dict[str, Any], tmp_path: Path) -> None:
    """A copy that passes the guard's word triples (a local server's repeat penalty makes such
    copies) is counted by the content-word rule."""
    lib, run, _ = debate
    turns = load_result(run).transcript
    first = next(t.dialogue for t in turns if len(content_words(t.dialogue)) >= 12)
    words = first.split()
    copy = " ".join(w + (" really" if k % 2 else "") for k, w in enumerate(words))  # one word of its own
    assert containment(copy, first) < 0.8 and repeats(copy, first)

    def copy_first(d: dict[str, Any]) -> None:
        d["transcript"][-1]["dialogue"] = copy

    row = _row(_copy(run, tmp_path / "edited" / "t", copy_first).parent, lib, "t")
    assert row["kept_repeats"] == base["kept_repeats"] + 1
    assert row["repeat_rate"] == round((row["kept_out_echo"] + row["kept_repeats"]) / row["persona_turns"], 4)


def test_a_stance_against_the_planted_one_lowers_role_consistency(debate: tuple[Path, Path, Scenario], base: dict[str, Any],
                                                                  tmp_path: Path) -> None:
    lib, run, scenario = debate
    result = load_result(run)
    ties = SH.tie_claims(SH.claim_texts(result), scenario, get_embedder())
    assert base["role_n"] > 0
    k = next(k for k, t in enumerate(result.transcript) if t.stance in ("pro", "con") and any(
        i in ties and ties[i].stances[t.persona_id] == t.stance for i in t.proposition_ids[:1]))

    def flip(d: dict[str, Any]) -> None:
        d["transcript"][k]["stance"] = {"pro": "con", "con": "pro"}[d["transcript"][k]["stance"]]

    row = _row(_copy(run, tmp_path / "flipped" / "r", flip).parent, lib, "r")
    assert row["role_n"] == base["role_n"] and row["role_held"] == base["role_held"] - 1
    assert row["role_consistency"] < base["role_consistency"]


def test_role_flags_of_newer_runs_and_a_debate_ended_early(debate: tuple[Path, Path, Scenario], base: dict[str, Any],
                                                          tmp_path: Path) -> None:
    lib, run, _ = debate

    def newer(d: dict[str, Any]) -> None:
        d["transcript"][0]["role_flag"] = "stance against its brief"  # a field this DialogueTurn may not have
        d["error"] = "debate ended early: the echo guard kept out 4 persona turns in a row (last: x)"

    row = _row(_copy(run, tmp_path / "runs" / "r", newer).parent, lib, "r")
    assert (row["role_flags"], row["ended_early"]) == (1, True)
    assert (base["role_flags"], base["ended_early"]) == (0, False)


def test_bad_input_is_one_line_naming_the_path(debate: tuple[Path, Path, Scenario], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    lib, run, _ = debate
    empty = tmp_path / "empty"
    empty.mkdir()
    assert SH.main([str(empty), "--scenarios", str(lib), "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(empty) in err and "run folders" in err
    assert SH.main([str(run.parent), "--scenarios", str(empty), "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(empty) in err and "answer_key.json" in err
    assert not (tmp_path / "x.json").exists()


def test_the_scripts_examples_hold() -> None:
    result = doctest.testmod(SH)
    assert result.attempted > 0 and result.failed == 0


QWEN = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "speakers_qwen"


@pytest.mark.parametrize("stage", ["before", "first", "second", "after", "fresh", "answer", "no_own_points", "dry", "own_words",
                                   "own_words_len5", "dev_panel_before", "dev_panel_guard"])
def test_the_committed_qwen_figures_reproduce_from_the_committed_runs(stage: str) -> None:
    """benchmarks/README.md quotes these figures: recomputed from the committed run folders,
    each engine's totals are the committed ones."""
    committed = json.loads((QWEN / f"health_{stage}.json").read_text(encoding="utf-8"))
    paths = [QWEN / Path(p).relative_to("benchmarks/data/speakers_qwen") for p in committed["runs_dirs"]]
    again = SH.report(paths, QWEN.parents[1] / "scenarios" / "dev", label=stage)
    keys = ("persona_turns", "echo_rate", "kept_repeats", "repeat_rate", "role_consistency", "role_n", "recites_rejected",
            "ended_early", "calls", "prompt_tokens_per_persona_turn")
    for engine, totals in committed["totals"].items():
        assert {k: again["totals"][engine].get(k) for k in keys} == {k: totals.get(k) for k in keys}, engine
