"""CLI listings a researcher reads at 80 columns or with no terminal: ids are never cut,
`db query` prints full values, CSV and JSON are there, persona ids forgive British spelling."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from typer.testing import CliRunner

from crux_lab.cli import app
from crux_lab.models import DebateConfig
from crux_lab.personas.loader import list_personas
from crux_lab.runner import run_debate_sync
from crux_lab.store import ingest, write_run

runner = CliRunner()


def test_personas_list_keeps_every_id_whole_at_80_columns() -> None:
    result = runner.invoke(app, ["personas", "list"], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    assert all(len(line) <= 80 for line in result.output.splitlines())
    first_cells = {line.split()[0] for line in result.output.splitlines() if line.strip()}
    assert set(list_personas()) <= first_cells
    assert "…" not in result.output


def test_db_query_prints_full_values_and_csv(tmp_path: Path) -> None:
    db = tmp_path / "q.duckdb"
    res = run_debate_sync(DebateConfig(topic="Bitcoin is digital gold", persona_ids=["michael-saylor", "peter-schiff"],
                                       engine="dcg", max_turns=4, seed=0))
    ingest([write_run(res, tmp_path / "runs")], db)
    wide = runner.invoke(app, ["db", "query", "SELECT * FROM run_overview", "--db", str(db)], env={"COLUMNS": "160"})
    assert wide.exit_code == 0 and "…" not in wide.output
    assert "run_id" in wide.output and res.run_id in wide.output and "Bitcoin is digital gold" in wide.output
    narrow = runner.invoke(app, ["db", "query", "SELECT run_id, engine FROM debates", "--db", str(db)], env={"COLUMNS": "80"})
    assert res.run_id in narrow.output and "│" in narrow.output  # fits: a table
    rows = list(csv.reader(io.StringIO(runner.invoke(app, ["db", "query", "SELECT run_id, engine FROM debates", "--db", str(db), "--csv"]).output)))
    assert rows == [["run_id", "engine"], [res.run_id, "dcg"]]
    info = json.loads(runner.invoke(app, ["db", "info", "--db", str(db), "--json"]).output)
    assert info["rows"]["runs"] == 1


def test_british_spelling_of_a_persona_id_works_and_a_typo_gets_a_suggestion(tmp_path: Path) -> None:
    env = {"CRUX_LAB_DB": str(tmp_path / "a.duckdb"), "CRUX_LAB_RUNS": str(tmp_path / "runs")}
    ok = runner.invoke(app, ["debate", "-t", "Should cities build more market-rate housing?", "-p", "tenant-organiser,yimby-economist",
                             "--backend", "simulated", "--engine", "blitz", "--max-turns", "4", "--no-progress"], env=env)
    assert ok.exit_code in (0, 1), ok.output  # the persona was accepted; the run may still report an engine error
    assert "unknown persona" not in ok.output
    bad = runner.invoke(app, ["debate", "-t", "x", "-p", "tenant-organisr,yimby-economist", "--backend", "simulated"], env=env)
    assert bad.exit_code == 2 and "did you mean tenant-organizer?" in " ".join(bad.output.split())


def test_compare_help_shows_its_options() -> None:
    result = runner.invoke(app, ["compare", "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0
    assert "COMMAND" not in result.output and "--topic" in result.output and "--engines" in result.output
