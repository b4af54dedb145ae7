"""The store's `billed` columns follow the same rule as the CLI and the reports (issue 16:
cost labels in the CLI, the reports and the database agree)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from crux_lab.models import DebateConfig, DebateResult, LLMCall, Tier, is_billed
from crux_lab.store import ingest, query, write_run


def result(backend: str, calls: list[str]) -> DebateResult:
    config = DebateConfig(topic="t", persona_ids=["a", "b"], seed=len(calls))
    return DebateResult(
        run_id=f"r-{backend}", config=config, engine="none", backend=backend, complete=True,
        llm_calls=[LLMCall(run_id=f"r-{backend}", seq=i, purpose="p", backend=b, model="m", tier=Tier.fast, cost_usd=0.5)
                   for i, b in enumerate(calls)],
    )


def test_billed_columns_agree_with_the_one_rule(tmp_path: Path) -> None:
    db = tmp_path / "b.duckdb"
    runs = [result("anthropic+replay", ["anthropic", "replay"]), result("replay", ["replay"]), result("simulated", ["simulated"])]
    ingest([write_run(r, tmp_path / "runs") for r in runs], db)
    debates = dict(query("SELECT backend, billed FROM debates", db).rows)
    assert debates == {r.backend: is_billed(r.backend) for r in runs} == {
        "anthropic+replay": True, "replay": False, "simulated": False}
    calls = query("SELECT backend, billed, count(*) FROM llm_calls GROUP BY ALL ORDER BY 1", db).rows
    assert calls == [("anthropic", True, 1), ("replay", False, 2), ("simulated", False, 1)]
    assert query("SELECT sum(cost_usd) FROM llm_calls WHERE billed", db).rows == [(0.5,)]
    assert query("SELECT count(*) FROM run_overview WHERE billed", db).rows == [(1,)]


def test_run_folders_from_before_the_column_are_backfilled(tmp_path: Path) -> None:
    run_dir = write_run(result("anthropic", ["anthropic"]), tmp_path / "runs")
    for table in ("debates", "llm_calls"):
        path = run_dir / "tables" / f"{table}.parquet"
        pq.write_table(pq.read_table(path).drop_columns(["billed"]), path)
    db = tmp_path / "old.duckdb"
    ingest([run_dir], db)
    assert query("SELECT billed FROM debates", db).rows == [(True,)]
    assert query("SELECT billed FROM llm_calls", db).rows == [(True,)]
