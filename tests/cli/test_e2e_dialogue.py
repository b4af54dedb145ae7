"""End to end: `crux-lab debate` with the real dialogue engine, real personas, simulated backend."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crux_lab.cli import app
from crux_lab.engines import available
from crux_lab.models import DebateResult
from crux_lab.store import query

pytestmark = pytest.mark.skipif("dialogue" not in available(), reason="dialogue engine not installed")


def test_dialogue_debate_end_to_end(tmp_path: Path) -> None:
    db, runs, out = tmp_path / "t.duckdb", tmp_path / "runs", tmp_path / "result.json"
    args = [
        "debate", "--topic", "Is Bitcoin a better long-term store of value than gold?",
        "--personas", "michael-saylor,peter-schiff", "--engine", "dialogue", "--backend", "simulated",
        "--max-turns", "8", "--seed", "3", "--db", str(db), "--runs-dir", str(runs), "--out", str(out),
        "--no-progress",
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    result = DebateResult.model_validate_json(out.read_text())
    assert result.engine == "dialogue" and result.backend == "simulated"
    assert 0 < len(result.transcript) <= 8
    assert {t.persona_id for t in result.transcript} == {"michael-saylor", "peter-schiff"}
    transcript = runs / result.run_id / "transcript.md"
    assert transcript.is_file() and result.transcript[0].dialogue.strip()[:40] in transcript.read_text()
    # a reader sees the personas by name, never by library id
    assert "Michael Saylor" in transcript.read_text() and "michael-saylor" not in transcript.read_text()
    counts = query(
        "SELECT (SELECT count(*) FROM turns) AS turns, (SELECT count(*) FROM llm_calls) AS calls, "
        "(SELECT count(*) FROM cruxes) AS cruxes, (SELECT count(*) FROM events) AS events", db
    ).records()[0]
    assert counts == {
        "turns": len(result.transcript), "calls": result.usage.calls,
        "cruxes": len(result.cruxes), "events": len(result.events),
    }
    assert result.usage.calls > 0
    summary = re.sub(r"\s+", " ", res.output)
    assert f"regime: {result.regime.value}" in summary and f"calls: {result.usage.calls}" in summary
