"""The crux-lab CLI: debate end to end on a fake engine, bad input, personas, engines, db."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import typer
from typer.testing import CliRunner

from crux_lab.cli import app, load_subapp, parse_pairs
from crux_lab.models import DebateResult
from crux_lab.store import connect, table_counts


def files_under(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.exists() else []


def flat(text: str) -> str:
    """Output with whitespace collapsed (rich may wrap long lines)."""
    return re.sub(r"\s+", " ", text)


def debate_args(env: dict[str, Path], *extra: str, personas: str = "ada,bo", engine: str = "fake") -> list[str]:
    return [
        "debate", "--topic", "Is the tide rising?", "--personas", personas, "--engine", engine,
        "--max-turns", "6", "--db", str(env["db"]), "--runs-dir", str(env["runs"]),
        "--out", str(env["out"]), "--no-progress", *extra,
    ]


def db_counts(path: Path) -> dict[str, int]:
    con = connect(path, read_only=True)
    try:
        return table_counts(con)
    finally:
        con.close()


# -- the happy path ------------------------------------------------------------------------


def test_debate_writes_run_folder_db_rows_and_json(runner: CliRunner, env: dict[str, Path]) -> None:
    res = runner.invoke(app, debate_args(env))
    assert res.exit_code == 0, res.output
    out = flat(res.output)
    assert "backend: simulated (auto: ANTHROPIC_API_KEY is not set)" in out
    assert "regime: polarized" in out and "Is the tide rising?" in out
    result = DebateResult.model_validate_json(env["out"].read_text())
    assert result.complete and result.engine == "fake" and len(result.transcript) == 2
    run_dir = env["runs"] / result.run_id
    assert f"transcript: {run_dir / 'transcript.md'}" in out
    assert (run_dir / "transcript.md").is_file()
    counts = db_counts(env["db"])
    assert counts["runs"] == 1 and counts["turns"] == 2 and counts["cruxes"] == 1
    assert counts["llm_calls"] == result.usage.calls == 2
    assert f"calls: {result.usage.calls}" in out


def test_debate_params_and_sim_knobs_reach_the_run(runner: CliRunner, env: dict[str, Path]) -> None:
    res = runner.invoke(app, debate_args(env, "--param", "rounds=2", "--param", "style=terse", "--sim", "drift=1.0", "--seed", "7"))
    assert res.exit_code == 0, res.output
    result = DebateResult.model_validate_json(env["out"].read_text())
    assert len(result.transcript) == 4
    assert result.config.params == {"rounds": 2, "style": "terse"}
    assert result.config.backend_options == {"drift": 1.0} and result.config.seed == 7


def test_rerunning_the_same_debate_is_idempotent_in_the_db(runner: CliRunner, env: dict[str, Path]) -> None:
    assert runner.invoke(app, debate_args(env)).exit_code == 0
    first = db_counts(env["db"])
    assert runner.invoke(app, debate_args(env)).exit_code == 0
    assert db_counts(env["db"]) == first
    assert len([p for p in env["runs"].iterdir()]) == 1


def test_engine_crash_saves_partial_run_and_exits_1(runner: CliRunner, env: dict[str, Path]) -> None:
    res = runner.invoke(app, debate_args(env, engine="broken"))
    assert res.exit_code == 1
    assert "crashed: RuntimeError: engine bug" in flat(res.output)
    assert "Traceback" not in res.output
    result = DebateResult.model_validate_json(env["out"].read_text())
    assert result.complete is False and result.error
    assert db_counts(env["db"])["runs"] == 1


def test_no_api_key_in_any_artifact(runner: CliRunner, env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-ant-test-SECRET-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    res = runner.invoke(app, debate_args(env, "--backend", "simulated"))
    assert res.exit_code == 0, res.output
    written = files_under(env["runs"]) + files_under(env["out"].parent) + [env["db"]]
    assert len(written) > 5
    for path in written:
        assert key.encode() not in path.read_bytes(), path
    assert key not in res.output


# -- bad input: clear message, exit 2, nothing written ---------------------------------------

BAD_INPUT = [
    (["--personas", "ada,zed"], r"unknown persona\(s\): zed\. Valid persona ids .*: ada, bo"),
    (["--engine", "nope"], r"unknown engine 'nope'\. Valid engines: .*fake"),
    (["--backend", "gpt"], r"unknown backend 'gpt'\. Valid backends: auto, simulated, anthropic, openai, replay"),
    (["--topic", "   "], r"topic is empty"),
    (["--max-turns", "0"], r"--max-turns must be a whole number of turns from 1 to 10,000; got 0"),
    (["--max-turns", "-3"], r"--max-turns must be a whole number of turns from 1 to 10,000; got -3"),
    (["--backend", "anthropic"], r"needs an API key .*export ANTHROPIC_API_KEY=.*--backend simulated"),
    (["--backend", "replay"], r"needs a cassette: pass --cassette PATH"),
    (["--sim", "drift"], r"--sim expects KEY=VALUE .*Known keys: sycophancy, missed_attack, vague_crux, drift"),
    (["--sim", "chaos=0.2"], r"unknown key 'chaos'\. Known keys: sycophancy, missed_attack, vague_crux, drift"),
    (["--sim", "drift=2"], r"probability between 0 and 1"),
    (["--param", "rounds"], r"--param expects KEY=VALUE .*Known keys: rounds, style"),
    (["--param", "speed=3"], r"unknown key 'speed'\. Known keys: rounds, style"),
    (["--param", "rounds=many"], r"does not accept these parameters .*rounds"),
    (["--personas", "ada,ada"], r"duplicate persona"),
    (["--personas", "ada"], r"needs 2.4 personas; got 1"),
    (["--personas", " , "], r"--personas is empty"),
]


@pytest.mark.parametrize(("extra", "message"), BAD_INPUT, ids=[" ".join(a) for a, _ in BAD_INPUT])
def test_bad_input_is_refused_cleanly(runner: CliRunner, env: dict[str, Path], extra: list[str], message: str) -> None:
    args = debate_args(env)
    for flag, value in zip(extra[::2], extra[1::2], strict=True):
        if flag in args and flag not in ("--sim", "--param"):
            args[args.index(flag) + 1] = value
        else:
            args += [flag, value]
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert re.search(message, flat(res.output)), res.output
    assert "Traceback" not in res.output
    assert files_under(env["runs"]) == [] and not env["out"].exists()
    assert not env["db"].exists()


def _corrupt_db(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"garbage" * 1000)


def _newer_db(path: Path) -> None:
    connect(path).close()
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO _migrations (name) VALUES ('m999_future')")
    con.close()


@pytest.mark.parametrize(
    ("make_db", "message"),
    [(_corrupt_db, r"not a valid DuckDB database"), (_newer_db, r"created by a newer crux_lab .*upgrade")],
    ids=["corrupt", "newer-schema"],
)
def test_bad_database_is_refused_before_the_debate(runner: CliRunner, env: dict[str, Path], make_db, message: str) -> None:  # type: ignore[no-untyped-def]
    make_db(env["db"])
    before = env["db"].read_bytes()
    res = runner.invoke(app, debate_args(env))
    assert res.exit_code == 2, res.output
    assert re.search(message, flat(res.output)), res.output
    assert env["db"].read_bytes() == before
    assert files_under(env["runs"]) == [] and not env["out"].exists()


def test_unwritable_database_path_is_refused(runner: CliRunner, env: dict[str, Path], tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    env = dict(env, db=blocker / "db.duckdb")
    res = runner.invoke(app, debate_args(env))
    assert res.exit_code == 2
    assert "cannot create the folder for the database" in flat(res.output)
    assert files_under(env["runs"]) == [] and not env["out"].exists()


def test_unwritable_runs_dir_is_refused(runner: CliRunner, env: dict[str, Path], tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    env = dict(env, runs=blocker / "runs")
    res = runner.invoke(app, debate_args(env))
    assert res.exit_code == 2 and "cannot create the runs folder" in flat(res.output)
    assert not env["out"].exists() and not env["db"].exists()


def test_out_must_be_a_file(runner: CliRunner, env: dict[str, Path], tmp_path: Path) -> None:
    env = dict(env, out=tmp_path)
    res = runner.invoke(app, debate_args(env))
    assert res.exit_code == 2 and "is a directory" in flat(res.output)
    assert files_under(env["runs"]) == []


def test_parse_pairs_keeps_equals_signs_in_values() -> None:
    assert parse_pairs(["q=a=b"], "--param", ["q"], "q=1") == {"q": "a=b"}


# -- personas, engines ---------------------------------------------------------------------


# The mounted `personas` sub-app (crux_lab.persona_tools.cli).
PERSONAS_APPS = [(app, ["personas"])]


@pytest.mark.parametrize(("cli", "prefix"), PERSONAS_APPS, ids=["mounted"])
def test_personas_list_json(runner: CliRunner, persona_library: Path, cli: typer.Typer, prefix: list[str]) -> None:
    res = runner.invoke(cli, [*prefix, "list", "--json"])
    assert res.exit_code == 0
    assert json.loads(res.stdout) == ["ada", "bo"]


@pytest.mark.parametrize(("cli", "prefix"), PERSONAS_APPS, ids=["mounted"])
def test_personas_list_and_show(runner: CliRunner, persona_library: Path, cli: typer.Typer, prefix: list[str]) -> None:
    res = runner.invoke(cli, [*prefix, "list"])
    assert res.exit_code == 0 and "Ada" in res.output and "tides" in res.output
    res = runner.invoke(cli, [*prefix, "show", "bo", "--json"])
    assert res.exit_code == 0
    assert json.loads(res.stdout)["stances"]["stances"][0]["stance"] == "con"
    res = runner.invoke(cli, [*prefix, "show", "zed"])
    assert res.exit_code == 2 and "valid ids: ada, bo" in flat(res.output)


def test_engines_lists_descriptions(runner: CliRunner, fake_engine: str) -> None:
    res = runner.invoke(app, ["engines", "--json"])
    assert res.exit_code == 0
    engines = json.loads(res.stdout)
    assert engines["fake"].startswith("Test-only engine")
    res = runner.invoke(app, ["engines"])
    assert "fake" in res.output


# -- db ------------------------------------------------------------------------------------


def test_db_path_follows_option_then_env(runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRUX_LAB_DB", str(tmp_path / "env.duckdb"))
    assert runner.invoke(app, ["db", "path"]).stdout.strip() == str(tmp_path / "env.duckdb")
    res = runner.invoke(app, ["db", "path", "--db", str(tmp_path / "opt.duckdb")])
    assert res.stdout.strip() == str(tmp_path / "opt.duckdb")
    monkeypatch.delenv("CRUX_LAB_DB")
    assert runner.invoke(app, ["db", "path"]).stdout.strip().endswith("data/crux_lab.duckdb")


def test_db_ingest_query_info(runner: CliRunner, env: dict[str, Path], tmp_path: Path) -> None:
    assert runner.invoke(app, debate_args(env)).exit_code == 0
    other_db = tmp_path / "other.duckdb"
    res = runner.invoke(app, ["db", "ingest", str(env["runs"]), "--db", str(other_db)])
    assert res.exit_code == 0, res.output
    assert "ingested 1 run(s)" in flat(res.output)
    res = runner.invoke(app, ["db", "query", "SELECT persona_id, count(*) AS n FROM turns GROUP BY 1 ORDER BY 1", "--db", str(other_db), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == [{"persona_id": "ada", "n": 1}, {"persona_id": "bo", "n": 1}]
    res = runner.invoke(app, ["db", "query", "SELECT engine, regime FROM debates", "--db", str(other_db)])
    assert res.exit_code == 0 and "polarized" in res.output
    res = runner.invoke(app, ["db", "info", "--db", str(other_db)])
    assert res.exit_code == 0 and "m001_initial" in res.output


def test_db_ingest_defaults_to_the_runs_folder(
    runner: CliRunner, env: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert runner.invoke(app, debate_args(env)).exit_code == 0
    monkeypatch.setenv("CRUX_LAB_RUNS", str(env["runs"]))
    res = runner.invoke(app, ["db", "ingest", "--db", str(tmp_path / "third.duckdb")])
    assert res.exit_code == 0 and "ingested 1 run(s)" in flat(res.output)
    res = runner.invoke(app, ["db", "query", "SELECT engine, n_turns FROM run_overview", "--db", str(tmp_path / "third.duckdb"), "--json"])
    assert json.loads(res.stdout) == [{"engine": "fake", "n_turns": 2}]


def test_db_ingest_corrupt_folder_ingests_nothing(runner: CliRunner, env: dict[str, Path], tmp_path: Path) -> None:
    assert runner.invoke(app, debate_args(env)).exit_code == 0
    assert runner.invoke(app, debate_args(env, "--seed", "2")).exit_code == 0
    run_dirs = sorted(p for p in env["runs"].iterdir())
    (run_dirs[1] / "tables" / "events.parquet").write_bytes(b"broken")
    target = tmp_path / "fresh.duckdb"
    res = runner.invoke(app, ["db", "ingest", str(env["runs"]), "--db", str(target)])
    assert res.exit_code == 2
    assert "events.parquet" in flat(res.output) and "Nothing was ingested" in flat(res.output)
    assert not target.exists()  # every folder is validated before the database is opened


def test_db_query_errors(runner: CliRunner, tmp_path: Path) -> None:
    res = runner.invoke(app, ["db", "query", "SELECT 1", "--db", str(tmp_path / "none.duckdb")])
    assert res.exit_code == 2 and "no database at" in flat(res.output)
    connect(tmp_path / "x.duckdb").close()
    res = runner.invoke(app, ["db", "query", "SELEC nonsense", "--db", str(tmp_path / "x.duckdb")])
    assert res.exit_code == 2 and "syntax error" in flat(res.output).lower()


# -- sub-apps and entry points -------------------------------------------------------------


def test_missing_subapp_module_becomes_a_stub_that_names_it(runner: CliRunner) -> None:
    stub = load_subapp("crux_lab.no_such_package.cli", "app", "nothing")
    assert isinstance(stub, typer.Typer)
    res = runner.invoke(stub, [])
    assert res.exit_code == 1
    assert "crux-lab nothing` is unavailable" in flat(res.output) and "crux_lab.no_such_package" in flat(res.output)


def test_every_subapp_has_its_own_name_and_module() -> None:
    from crux_lab.cli import SUBAPPS

    names = [name for _, _, name in SUBAPPS]
    assert len(set(names)) == len(names)
    for module_name, _, _ in SUBAPPS:
        assert importlib.util.find_spec(module_name) is not None, module_name


def test_broken_subapp_becomes_a_stub_that_reports(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    broken = types.ModuleType("crux_lab_tests_broken_cli")
    monkeypatch.setitem(sys.modules, "crux_lab_tests_broken_cli", broken)  # no `app` attribute
    stub = load_subapp("crux_lab_tests_broken_cli", "app", "thing")
    assert stub is not None
    res = runner.invoke(stub, [])
    assert res.exit_code == 1 and "crux-lab thing` is unavailable" in flat(res.output)


def test_subapps_mount_as_groups_or_single_commands(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    from crux_lab.cli import mount_subapps

    module = types.ModuleType("crux_lab_tests_subapps")
    group = typer.Typer()

    @group.command("ping")
    def ping() -> None:
        typer.echo("pong")

    @group.command("pang")
    def pang() -> None:
        typer.echo("pung")

    def greet(name: str, loud: bool = typer.Option(False, "--loud")) -> None:
        typer.echo(name.upper() if loud else name)

    module.group = group  # type: ignore[attr-defined]
    module.greet = greet  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "crux_lab_tests_subapps", module)
    root = typer.Typer()
    root.command("noop")(lambda: None)
    mounted = mount_subapps(root, [
        ("crux_lab_tests_subapps", "group", "tools"),
        ("crux_lab_tests_subapps", "greet", "greet"),
        ("crux_lab.not_there.cli", "app", "ghost"),  # mounted as a stub that reports the failure
    ])
    assert mounted == ["tools", "greet", "ghost"]
    assert runner.invoke(root, ["ghost"]).exit_code == 1
    assert runner.invoke(root, ["tools", "ping"]).stdout.strip() == "pong"
    res = runner.invoke(root, ["greet", "ada", "--loud"])  # options after the argument
    assert res.exit_code == 0 and res.stdout.strip() == "ADA"


def test_python_dash_m_help_in_a_subprocess() -> None:
    proc = subprocess.run([sys.executable, "-m", "crux_lab", "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for command in ("debate", "personas", "db", "engines"):
        assert command in proc.stdout


def test_cassette_records_then_replays_the_same_debate(runner: CliRunner, env: dict[str, Path], tmp_path: Path) -> None:
    cassette = tmp_path / "calls.jsonl"
    res = runner.invoke(app, debate_args(env, "--backend", "simulated", "--cassette", str(cassette)))
    assert res.exit_code == 0, res.output
    recorded = DebateResult.model_validate_json(env["out"].read_text())
    assert cassette.is_file() and cassette.read_text().count("\n") >= recorded.usage.calls
    res = runner.invoke(app, debate_args(env, "--backend", "replay", "--cassette", str(cassette)))
    assert res.exit_code == 0, res.output
    replayed = DebateResult.model_validate_json(env["out"].read_text())
    assert [t.dialogue for t in replayed.transcript] == [t.dialogue for t in recorded.transcript]
    assert {c.backend for c in replayed.llm_calls} == {"replay"} and replayed.backend == "replay"
    assert {c.outcome for c in replayed.llm_calls} <= {"ok", "repaired"}
    assert recorded.backend == "simulated"  # recording with --cassette keeps the real backend
    assert "backend: replay" in flat(res.output)


def test_replay_with_a_missing_cassette_is_refused(runner: CliRunner, env: dict[str, Path], tmp_path: Path) -> None:
    res = runner.invoke(app, debate_args(env, "--backend", "replay", "--cassette", str(tmp_path / "none.jsonl")))
    assert res.exit_code == 2 and "does not exist" in flat(res.output)
    assert files_under(env["runs"]) == [] and not env["db"].exists()


def test_blank_api_key_counts_as_missing(runner: CliRunner, env: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "   ")
    res = runner.invoke(app, debate_args(env, "--backend", "anthropic"))
    assert res.exit_code == 2 and "export ANTHROPIC_API_KEY=" in flat(res.output)
    assert files_under(env["runs"]) == [] and not env["db"].exists()


def test_debate_with_the_progress_bar(runner: CliRunner, env: dict[str, Path]) -> None:
    args = [a for a in debate_args(env, "--param", "rounds=3") if a != "--no-progress"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert len(DebateResult.model_validate_json(env["out"].read_text()).transcript) == 6


def test_no_ingest_writes_only_the_run_folder(runner: CliRunner, env: dict[str, Path]) -> None:
    _corrupt_db(env["db"])  # would be refused if touched
    res = runner.invoke(app, debate_args(env, "--no-ingest"))
    assert res.exit_code == 0, res.output
    assert "not ingested (crux-lab db ingest" in flat(res.output)
    result = DebateResult.model_validate_json(env["out"].read_text())
    assert (env["runs"] / result.run_id / "manifest.json").is_file()
    assert env["db"].read_bytes().startswith(b"garbage")


def test_a_command_name_belongs_to_one_reference() -> None:
    from crux_lab.cli import COMMANDS, register_command
    from crux_lab.registry import DuplicateName

    register_command("personas", COMMANDS.get("personas"))  # the same reference again: no change
    with pytest.raises(DuplicateName, match="'personas'"):
        register_command("personas", "crux_lab.elsewhere.cli:app")
    assert COMMANDS.get("personas") == "crux_lab.persona_tools.cli:app"
