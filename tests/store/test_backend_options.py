"""Backends carry their own options: a run written before (its config held the simulator's
knobs as ``sim``) still loads and ingests, with the knobs it set as its backend options."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from crux_lab.models import DebateConfig, DebateResult, is_billed
from crux_lab.store import connect, ingest, load_result, write_run
from crux_lab.store.migrations import BILLED_SQL

from .conftest import make_result


def _as_old(data: dict, sim: dict) -> dict:
    data["config"].pop("backend_options", None)
    data["config"]["sim"] = sim
    return data


def test_an_old_result_json_with_sim_knobs_loads() -> None:
    new = make_result()
    old = _as_old(json.loads(new.model_dump_json()),
                  {"sycophancy": 0.0, "missed_attack": 0.3, "vague_crux": 0.0, "drift": 0.0, "misread": 0.0})
    loaded = DebateResult.model_validate_json(json.dumps(old))
    assert loaded.config.backend_options == {"missed_attack": 0.3}
    assert "sim" not in loaded.config.model_dump()
    # Default knobs (all 0) load as no options at all: the config of a run without any.
    plain = _as_old(json.loads(new.model_dump_json()), {"sycophancy": 0.0, "drift": 0.0})
    assert DebateResult.model_validate_json(json.dumps(plain)).config == new.config


def test_an_old_run_folder_loads_and_ingests(tmp_path: Path) -> None:
    """A folder as written before: result.json and runs.parquet hold the knobs as ``sim`` (every
    knob, zeros too), and its manifest follows the migrations of that time."""
    folder = write_run(make_result(), tmp_path / "runs")
    knobs = {"sycophancy": 0.0, "missed_attack": 0.0, "vague_crux": 0.0, "drift": 0.5, "misread": 0.0}
    path = folder / "result.json"
    path.write_text(json.dumps(_as_old(json.loads(path.read_text()), knobs)))
    table = folder / "tables" / "runs.parquet"
    con = duckdb.connect()
    con.execute(
        f"COPY (SELECT * EXCLUDE (backend_options, sim), ?::JSON AS sim FROM read_parquet('{table}')) "
        f"TO '{table}.old' (FORMAT parquet)", [json.dumps(knobs)],
    )
    con.close()
    table.with_name("runs.parquet.old").replace(table)
    manifest = folder / "manifest.json"
    data = json.loads(manifest.read_text())
    data["migrations"] = [m for m in data["migrations"] if m != "m007_backend_options"]
    manifest.write_text(json.dumps(data))

    assert load_result(folder).config.backend_options == {"drift": 0.5}
    db = tmp_path / "x.duckdb"
    ingest([folder], db)
    store = connect(db, read_only=True)
    try:
        options, sim = store.execute("SELECT backend_options, sim FROM runs").fetchone()
    finally:
        store.close()
    assert json.loads(options) == {"drift": 0.5} and json.loads(sim) == knobs


def test_the_store_sql_bills_what_is_billed_says() -> None:
    names = ["simulated", "replay", "anthropic", "openai", "anthropic+replay", "openai+simulated", "simulated+replay"]
    con = duckdb.connect()
    got = [con.execute(f"SELECT {BILLED_SQL} FROM (SELECT ? AS backend)", [n]).fetchone()[0] for n in names]
    assert got == [is_billed(n) for n in names] == [False, False, True, True, True, True, False]


def test_a_config_with_backend_options_round_trips() -> None:
    c = DebateConfig(topic="t", persona_ids=["a"], backend_options={"drift": 1.0})
    assert DebateConfig.model_validate_json(c.model_dump_json()) == c
    assert c.run_id() != DebateConfig(topic="t", persona_ids=["a"]).run_id()
    assert "backend_options" not in DebateConfig(topic="t", persona_ids=["a"]).model_dump()
