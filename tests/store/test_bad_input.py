"""Bad input, whatever the entry point (issue 16): one line naming the file (or option), the
field and the fix; exit 2; nothing half-written; never a traceback.

The messages asserted here are the bad-input table of the issue's report.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crux_lab.cli import app
from crux_lab.models import DebateResult
from crux_lab.store import RunFolderError, ingest, query, write_run

PERSONAS = "michael-saylor,peter-schiff"
TOPIC = "Is Bitcoin a better long-term store of value than gold?"


def run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, " ".join(res.output.split())


def one_error_line(output: str) -> str:
    assert "Traceback" not in output and output.count("error:") == 1, output
    return output[output.index("error:"):]


def damaged_db(tmp_path: Path) -> Path:
    """A real database with one block overwritten (a checksum failure when read)."""
    db = tmp_path / "damaged.duckdb"
    from crux_lab.store import connect

    connect(db).close()
    data = bytearray(db.read_bytes())
    data[4096:8192] = bytes(range(256)) * 16
    db.write_bytes(bytes(data))
    return db


@pytest.mark.parametrize("command", ["debate", "db info", "db query", "sweep", "db ingest"])
def test_a_damaged_database_is_one_line_naming_the_file_and_the_fix(tmp_path: Path, command: str) -> None:
    db = damaged_db(tmp_path)
    spec = tmp_path / "s.yaml"
    spec.write_text(f"name: s\nnotebook: {Path(__file__).parents[1] / 'sweep' / 'data' / 'runfolder.ipynb'}\n")
    run_dir = write_run(DebateResult.model_validate_json(_result_json()), tmp_path / "runs")
    args = {
        "debate": ["debate", "--topic", TOPIC, "--personas", PERSONAS, "--backend", "simulated", "--max-turns", "2",
                   "--runs-dir", str(tmp_path / "runs")],
        "db info": ["db", "info"],
        "db query": ["db", "query", "SELECT count(*) FROM runs"],
        "sweep": ["sweep", str(spec)],
        "db ingest": ["db", "ingest", str(run_dir)],
    }[command]
    code, out = run(*args, "--db", str(db))
    line = one_error_line(out)
    assert code in (1, 2), out
    assert f"{db} is damaged or not a DuckDB database" in line
    assert "restore it from a backup" in line and "move it aside" in line and "crux-lab db ingest" in line
    assert not (tmp_path / "s" / "manifest.json").exists()  # the sweep refused before running


def _result_json() -> str:
    from crux_lab.models import DebateConfig

    config = DebateConfig(topic="t", persona_ids=["a", "b"], seed=1)
    return DebateResult(run_id="r-bad-input", config=config, engine="none", backend="simulated",
                        complete=True).model_dump_json()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: (d / "result.json").write_bytes((d / "result.json").read_bytes()[:50]),
         r"result\.json: not a whole DebateResult \(field '\(top level\)': Invalid JSON"),
        (lambda d: (d / "result.json").write_text(json.dumps({"run_id": "r-bad-input"})),
         r"result\.json: not a whole DebateResult \(field 'config': Field required\)"),
        (lambda d: (d / "events.jsonl").write_text('{"type": "status", "mess'),
         r"events\.jsonl, line 1: not an event"),
        (lambda d: (d / "result.json").unlink(), r"result\.json: missing"),
    ],
    ids=["truncated result", "result missing a field", "truncated events", "no result"],
)
def test_ingest_validates_the_run_folder_before_writing_anything(
    tmp_path: Path, damage: Callable[[Path], object], message: str
) -> None:
    good = write_run(DebateResult.model_validate_json(_result_json()).model_copy(update={"run_id": "r-good"}), tmp_path / "runs")
    bad = write_run(DebateResult.model_validate_json(_result_json()), tmp_path / "runs")
    damage(bad)
    db = tmp_path / "x.duckdb"
    with pytest.raises(RunFolderError, match=message + r".*rewrite the run \(rerun it\) or move .* aside"):
        ingest([good, bad], db)
    assert not db.exists()  # refused before the database was opened: nothing half-ingested
    code, out = run("db", "ingest", str(good), str(bad), "--db", str(db))
    assert code == 2 and "Nothing was ingested" in one_error_line(out)
    ingest([good], db)
    assert query("SELECT run_id FROM runs", db).rows == [("r-good",)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-turns", "100000000000000000000"],
         "error: --max-turns must be a whole number of turns from 1 to 10,000; got 100000000000000000000. Pass e.g. --max-turns 30."),
        (["--seed", "-1"], "error: --seed must be a whole number from 0 to 9223372036854775807; got -1."),
        (["--engine", "dialogue", "--param", "cluster_min=20", "--param", "cluster_max=2"],
         "params.cluster_min = 20 is larger than params.cluster_max = 2: cluster_min must be <= cluster_max; "
         "lower cluster_min or raise cluster_max."),
    ],
    ids=["max-turns 10**20", "negative seed", "cluster_min > cluster_max"],
)
def test_debate_numbers_are_checked_before_any_call(tmp_path: Path, args: list[str], message: str) -> None:
    code, out = run("debate", "--topic", TOPIC, "--personas", PERSONAS, "--backend", "simulated",
                    "--db", str(tmp_path / "d.duckdb"), "--runs-dir", str(tmp_path / "runs"), *args)
    assert code == 2 and message in one_error_line(out), out
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("base:\n  max_turns: 100000000000000000000\n", "s.yaml:3: key 'base.max_turns' — expected numbers that fit a 64-bit integer"),
        ("grid:\n  max_turns: [4, 0]\n", "s.yaml:4: key 'grid.max_turns' — expected a whole number of turns from 1 to 10,000, got 0"),
        ("grid:\n  params: [{cluster_min: 20, cluster_max: 2}]\n", "key 'params' — expected min <= max for every <x>_min / <x>_max pair"),
        ("seeds: [-3]\n", "key 'seeds' — expected a list of whole numbers from 0 to 9223372036854775807"),
    ],
    ids=["base max_turns 10**20", "grid max_turns 0", "cluster_min > cluster_max", "negative seed"],
)
def test_sweep_files_are_checked_when_loaded(tmp_path: Path, body: str, message: str) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(f"name: s\nnotebook: {Path(__file__).parents[1] / 'sweep' / 'data' / 'runfolder.ipynb'}\n{body}")
    code, out = run("sweep", str(spec), "--db", str(tmp_path / "d.duckdb"))
    assert code == 2 and message in one_error_line(out), out
