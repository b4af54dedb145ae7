"""`eval recovery` on any backend: scenarios folders with an answer key, resume from run
folders, intervals, and a stop that keeps what finished (server down, Ctrl-C)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx2
import pytest
from typer.testing import CliRunner

from crux_lab.analysis.scenarios import (
    ANSWER_KEY,
    ScenarioError,
    generate_scenarios,
    load_scenarios,
    write_library,
)
from crux_lab.eval.cli import app
from crux_lab.eval.recovery import LLMChoice, run_recovery_eval
from tests.llm.fake_openai import LOCAL_URL, FakeOpenAI, completion

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
MODELS = {"strong": "qwen", "fast": "qwen"}


def library(tmp_path: Path, n: int = 2) -> Path:
    return write_library(generate_scenarios(n, seed=4), tmp_path / "lib")


def test_the_answer_key_round_trips_with_the_personas_stances(tmp_path: Path) -> None:
    planted = generate_scenarios(2, seed=4)
    root = write_library(planted, tmp_path / "lib")
    loaded = load_scenarios(root)
    assert [s.id for s in loaded] == [s.id for s in planted]
    for mine, theirs in zip(loaded, planted, strict=True):
        assert mine.topic == theirs.topic and mine.persona_ids == theirs.persona_ids
        assert mine.contested == theirs.contested and mine.consensus == theirs.consensus
        assert mine.truth() == theirs.truth()
    assert '"pro"' not in (root / ANSWER_KEY).read_text()  # the key holds types; beliefs stay in the personas


def test_the_example_folder_loads() -> None:
    scenarios = load_scenarios(EXAMPLE)
    assert scenarios and all(s.contested for s in scenarios)


def _break(root: Path, case: str) -> str:
    """Damage a written library one way; returns what the error must name."""
    key = json.loads((root / ANSWER_KEY).read_text())
    first = key["scenarios"][0]
    persona = first["personaIds"][0]
    if case == "no answer key":
        (root / ANSWER_KEY).unlink()
        return f"{root / ANSWER_KEY}: file missing"
    if case == "no beliefs":
        (root / persona / "stances.json").write_text(json.dumps({"personaId": persona, "stances": []}))
        return f"{root / persona / 'stances.json'}: stances: no planted beliefs"
    if case == "bad type":
        first["propositions"][0]["type"] = "opinion"
        (root / ANSWER_KEY).write_text(json.dumps(key))
        return "scenarios[0].propositions[0].type: 'opinion' is not a type"
    assert case == "nobody opposes"
    first["propositions"][-1]["type"] = "values"  # a planted consensus: everyone holds it
    (root / ANSWER_KEY).write_text(json.dumps(key))
    return f"scenarios[0].propositions[{len(first['propositions']) - 1}].type"


@pytest.mark.parametrize("case", ["no answer key", "no beliefs", "bad type", "nobody opposes"])
def test_a_bad_scenarios_folder_is_one_line_exit_2_and_nothing_written(tmp_path: Path, case: str) -> None:
    root = library(tmp_path, n=1)
    expected = _break(root, case)
    with pytest.raises(ScenarioError) as err:
        load_scenarios(root)
    assert expected in str(err.value) and "\n" not in str(err.value)
    runs = tmp_path / "runs"
    out = CliRunner().invoke(app, ["recovery", "--engines", "direct", "--scenarios-dir", str(root),
                                   "--runs-dir", str(runs), "--db", str(tmp_path / "x.duckdb")])
    text = out.output.replace("\n", "")
    assert out.exit_code == 2 and expected in text and "Traceback" not in out.output
    assert not runs.exists() and not (tmp_path / "x.duckdb").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--engines", "dcg,nope"], "unknown engine(s) nope"),
    (["--backend", "replay"], "the replay backend needs --cassettes DIR"),
    (["--scenarios", "2", "--scenarios-dir", "."], "pass one of them"),
    (["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1"], "127.0.0.1:9"),
])
def test_bad_options_are_one_line_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    out = CliRunner().invoke(app, ["recovery", *args, "--runs-dir", str(tmp_path / "runs")])
    assert out.exit_code == 2 and message in out.output.replace("\n", " "), out.output
    assert not (tmp_path / "runs").exists()


def test_cli_reports_intervals_and_a_rerun_reuses_every_debate(tmp_path: Path) -> None:
    root = library(tmp_path)
    args = ["recovery", "--engines", "blitz,direct", "--scenarios-dir", str(root), "--seeds", "0,1",
            "--runs-dir", str(tmp_path / "runs"), "--db", str(tmp_path / "r.duckdb"), "--json", str(tmp_path / "s.json")]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "Crux recovery: 2 scenario(s) x seeds 0,1" in first.output and "(reused)" not in first.output
    data = json.loads((tmp_path / "s.json").read_text())
    rows = {r["engine"]: r for r in data["summary"]}
    canaries = {"canary:topic", "canary:vague", "canary:oracle"}
    assert set(rows) == {"blitz", "direct"} | canaries and rows["blitz"]["debates"] == 4  # 2 scenarios x 2 seeds
    assert (rows["canary:topic"]["f1"], rows["canary:vague"]["f1"], rows["canary:oracle"]["f1"]) == (0.0, 0.0, 1.0)
    low, high = rows["blitz"]["f1_ci"]
    assert low - 1e-4 <= rows["blitz"]["f1"] <= high + 1e-4 and rows["blitz"]["scenarios"] == 2 and rows["blitz"]["seeds"] == 2
    assert rows["blitz"]["f1"] > rows["direct"]["f1"]  # the simulator's blitz finds planted cruxes
    folders = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert len(folders) == 8
    second = CliRunner().invoke(app, args)
    assert second.exit_code == 0 and second.output.count("(reused)") == 8, second.output
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == folders


def test_an_edited_scenario_is_debated_again(tmp_path: Path) -> None:
    root = library(tmp_path, n=1)
    first = run_recovery_eval(load_scenarios(root), ["direct"], root, tmp_path / "runs")
    key = json.loads((root / ANSWER_KEY).read_text())
    key["scenarios"][0]["topic"] += " (edited)"
    (root / ANSWER_KEY).write_text(json.dumps(key))
    edited = load_scenarios(root)
    second = run_recovery_eval(edited, ["direct"], root, tmp_path / "runs")
    assert first.results[0].run_id != second.results[0].run_id


def test_a_server_that_goes_down_stops_the_eval_and_the_rerun_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import openai

    root = library(tmp_path)
    scenarios = load_scenarios(root)
    down = httpx2.ConnectError("Connection refused")
    api = FakeOpenAI([completion('{"cards": []}', model="qwen"), down])
    monkeypatch.setattr(openai, "DefaultAsyncHttpxClient", lambda *a, **k: api.client())
    llm = LLMChoice("openai", MODELS, LOCAL_URL)
    runs = tmp_path / "runs"
    run = run_recovery_eval(scenarios, ["direct"], root, runs, llm=llm)
    assert run.stopped is not None and not run.stopped.interrupted
    assert "direct/" in str(run.stopped) and "Connection" in (run.stopped.error or "")
    assert len(run.results) == 1 and [p.name for p in runs.iterdir()] == [run.results[0].run_id]
    api.replies[:] = [completion('{"cards": []}', model="qwen")]  # the server is back
    again = run_recovery_eval(scenarios, ["direct"], root, runs, llm=llm)
    assert again.stopped is None and len(again.results) == 2
    assert again.results[0].run_id == run.results[0].run_id and len(list(runs.iterdir())) == 2


def test_ctrl_c_keeps_finished_debates_and_exits_130(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import crux_lab.runs as runner  # the evaluation's own reference to run_debate

    real = runner.run_debate
    calls = {"n": 0}

    async def stopped_on_second(config, **kwargs):
        calls["n"] += 1
        result = await real(config, **kwargs)
        if calls["n"] == 2:  # as when Ctrl-C cancels the debate: incomplete, no error
            result.complete = False
        return result

    monkeypatch.setattr(runner, "run_debate", stopped_on_second)
    root = library(tmp_path)
    runs = tmp_path / "runs"
    out = CliRunner().invoke(app, ["recovery", "--engines", "direct", "--scenarios-dir", str(root),
                                   "--runs-dir", str(runs), "--no-store"])
    assert out.exit_code == 130, out.output
    assert "interrupted. 1 finished debate(s) are kept" in out.output.replace("\n", " ")
    assert len(list(runs.iterdir())) == 1


def test_a_debate_a_guard_ended_early_is_scored_kept_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model too weak to play ends its debate early with a named reason: the evaluation goes
    on to the next debate, scores what the ended one found, and a rerun reuses it."""
    import crux_lab.runs as runner  # the evaluation's own reference to run_debate

    real = runner.run_debate
    calls = {"n": 0}

    async def first_ended_by_a_guard(config, **kwargs):
        calls["n"] += 1
        result = await real(config, **kwargs)
        if calls["n"] == 1:  # as the runner records a TooWeakToPlay
            result.complete = False
            result.error = "debate ended early: the echo guard kept out 4 persona turns in a row (last: ...)"
        return result

    monkeypatch.setattr(runner, "run_debate", first_ended_by_a_guard)
    root = library(tmp_path)
    scenarios = load_scenarios(root)
    runs = tmp_path / "runs"
    run = run_recovery_eval(scenarios, ["direct"], root, runs)
    assert run.stopped is None and len(run.scores) == len(scenarios) == 2
    assert [r.complete for r in run.results] == [False, True] and len(list(runs.iterdir())) == 2
    again = run_recovery_eval(scenarios, ["direct"], root, runs)
    assert calls["n"] == 2 and again.stopped is None  # nothing ran again: both folders reused
    assert [r.run_id for r in again.results] == [r.run_id for r in run.results]


def test_replay_from_cassettes_gives_the_same_scores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import openai

    root = library(tmp_path, n=1)
    scenarios = load_scenarios(root)
    question = scenarios[0].propositions[0].question
    pids = scenarios[0].persona_ids
    card = {"cards": [{"question": question, "disagreement_type": "evidence", "diagnosis": "They read the data apart.",
                       "positions": [{"persona": pids[0], "position": "YES", "reasoning": "The pilots say so."},
                                     {"persona": pids[1], "position": "NO", "reasoning": "The pilots were small."}]}]}
    api = FakeOpenAI([completion(json.dumps(card), model="qwen")])
    monkeypatch.setattr(openai, "DefaultAsyncHttpxClient", lambda *a, **k: api.client())
    tapes = tmp_path / "tapes"
    live = run_recovery_eval(scenarios, ["direct"], root, tmp_path / "live", llm=LLMChoice("openai", MODELS, LOCAL_URL),
                             cassettes=tapes)
    assert live.stopped is None and (tapes / f"{scenarios[0].id}-direct-s0.jsonl").is_file()
    replayed = run_recovery_eval(scenarios, ["direct"], root, tmp_path / "replay", llm=LLMChoice("replay"),
                                 cassettes=tapes)
    assert replayed.stopped is None and replayed.results[0].backend == "replay"
    assert [s.metrics() for s in replayed.scores] == [s.metrics() for s in live.scores]
    shutil.rmtree(tapes)
    missing = run_recovery_eval(scenarios, ["direct"], root, tmp_path / "replay2", llm=LLMChoice("replay"),
                                cassettes=tapes)
    assert missing.stopped is not None and "cassette" in (missing.stopped.error or "")
