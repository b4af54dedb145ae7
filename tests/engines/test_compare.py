"""Cross-engine comparison: same input through several engines, one DuckDB run per engine."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from rich.console import Console
from typer.testing import CliRunner

from crux_lab.eval import compare as compare_mod
from crux_lab.eval.compare import (
    CompareError,
    app,
    comparison_rows,
    comparison_table,
    parse_engine_list,
    parse_engine_params,
    run_comparison,
)
from crux_lab.personas.loader import load_decks


def shipped_deck() -> tuple[list[str], str]:
    decks = [d for d in load_decks() if len(d.persona_ids) >= 3]
    if not decks:
        pytest.skip("no shipped deck with 3 personas")
    return decks[0].persona_ids[:3], decks[0].topics[0]


def test_compare_writes_one_run_per_engine_and_skips_unknown_ones(tmp_path: Path) -> None:
    ids, topic = shipped_deck()
    messages: list[str] = []
    db = tmp_path / "cmp.duckdb"
    outcome = run_comparison(
        topic, ids, ["blitz", "graph", "nosuch"], seed=3, db_path=db, runs_dir=tmp_path / "runs",
        params={"graph": {"max_rounds": 2}}, on_message=messages.append,
    )
    assert [r.engine for r in outcome.results] == ["blitz", "graph"]
    assert outcome.skipped == {"nosuch": "unknown engine"}
    assert any("skipping engine 'nosuch'" in m and "blitz" in m for m in messages)  # names the valid ones
    # Same input for all: topic, personas, seed.
    assert {(r.config.topic, tuple(r.config.persona_ids), r.config.seed) for r in outcome.results} == {(topic, tuple(ids), 3)}
    graph = outcome.results[1]
    assert sum(1 for e in graph.events if e.type == "validation_complete") <= 2
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT engine, run_id FROM runs ORDER BY engine").fetchall()
    con.close()
    assert rows == sorted((r.engine, r.run_id) for r in outcome.results)
    table_rows = comparison_rows(outcome.results)
    for row, result in zip(table_rows, outcome.results, strict=True):
        assert row.cruxes == len(result.cruxes) and row.calls == result.usage.calls == len(result.llm_calls)
        assert row.tokens >= result.usage.input_tokens > 0 and row.cost_usd > 0
    frame = compare_mod.comparison_frame(outcome.results)
    assert list(frame.index) == ["blitz", "graph"] and frame.loc["graph", "calls"] == graph.usage.calls
    console = Console(record=True, width=160)
    console.print(comparison_table(outcome.results, outcome.skipped))
    text = console.export_text()
    assert "blitz" in text and "graph" in text and "skipped" in text and "unknown engine" in text


def test_bad_engine_lists_and_params_are_refused() -> None:
    with pytest.raises(CompareError, match="twice"):
        parse_engine_list("graph,graph")
    with pytest.raises(CompareError, match="no engines"):
        parse_engine_list(" , ")
    with pytest.raises(CompareError, match="ENGINE.KEY=VALUE"):
        parse_engine_params(["max_rounds=2"], ["graph"])
    with pytest.raises(CompareError, match="not in --engines"):
        parse_engine_params(["panel.max_rounds=2"], ["graph"])


def test_a_wrong_parameter_stops_the_comparison_before_any_call(tmp_path: Path) -> None:
    ids, topic = shipped_deck()
    with pytest.raises(CompareError, match="aspects"):
        run_comparison(topic, ids, ["graph", "blitz"], db_path=tmp_path / "x.duckdb", params={"blitz": {"aspects": 2}})
    assert not (tmp_path / "x.duckdb").exists()


def test_compare_command_prints_the_table_and_writes_json(tmp_path: Path) -> None:
    ids, topic = shipped_deck()
    out = tmp_path / "rows.json"
    result = CliRunner().invoke(app, [
        "--topic", topic, "--personas", ",".join(ids), "--engines", "blitz,graph,nosuch", "--seed", "1",
        "--backend", "simulated", "--db", str(tmp_path / "c.duckdb"), "--json", str(out),
        "--param", "graph.max_rounds=1",
    ])
    assert result.exit_code == 0, result.output
    assert "Engine comparison" in result.output
    data = json.loads(out.read_text())
    assert [r["engine"] for r in data["rows"]] == ["blitz", "graph"]
    assert data["skipped"] == {"nosuch": "unknown engine"}


def test_compare_command_rejects_bad_input_without_a_traceback(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(app, ["--topic", "t", "--personas", "a,b", "--engines", "graph", "--param", "oops"])
    assert bad.exit_code == 2 and "ENGINE.KEY=VALUE" in bad.output and "Traceback" not in bad.output
    empty = runner.invoke(app, ["--topic", " ", "--personas", "a,b"])
    assert empty.exit_code == 2 and "topic is empty" in empty.output
    unknown = runner.invoke(app, ["--topic", "t", "--personas", "nobody-at-all,b", "--engines", "graph", "--backend", "simulated"])
    assert unknown.exit_code == 2 and "nobody-at-all" in unknown.output


def test_an_engine_that_crashes_does_not_cost_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ids, topic = shipped_deck()
    from crux_lab import engines
    from crux_lab.engines.blackboard.blitz import BlitzEngine

    real = engines.available()
    monkeypatch.setattr(compare_mod, "available", lambda: {k: v for k, v in real.items() if k in ("blitz", "graph")})
    monkeypatch.delenv("CRUX_LAB_DEBUG", raising=False)

    async def boom(self, ctx):  # type: ignore[no-untyped-def]
        raise RuntimeError("bug in blitz")
        yield  # pragma: no cover

    monkeypatch.setattr(BlitzEngine, "run", boom)
    outcome = run_comparison(topic, ids, ["blitz", "graph"], db_path=tmp_path / "c.duckdb", runs_dir=tmp_path / "runs",
                             params={"graph": {"max_rounds": 1}})
    assert [r.engine for r in outcome.results] == ["graph"]
    assert outcome.skipped["blitz"].startswith("crashed: RuntimeError: bug in blitz")
