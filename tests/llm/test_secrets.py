"""No artifact a run writes may contain the API key (or an auth header).

A whole simulated debate runs with a fake ``ANTHROPIC_API_KEY`` in the environment and a
cassette; then every file written (event log, result JSON, cassette, run folder, DuckDB file)
is searched for the key, byte for byte, and the database is also searched cell by cell
(DuckDB may compress strings, so a byte search alone could miss one).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from crux_lab.llm.anthropic_backend import AnthropicBackend
from crux_lab.llm.base import LLMCallFailed, LLMRequest
from crux_lab.llm.ledger import Ledger
from crux_lab.llm.replay import ReplayBackend
from crux_lab.models import DebateConfig

from .fake_api import FAKE_KEY, FakeAPI, error, message
from .tiny_panel import first_loadable_engine, write_library

AUTH_MARKERS = (FAKE_KEY.encode(), b"Bearer ", b"x-api-key", b"authorization", b"Authorization")


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def assert_no_key_in(paths: list[Path]) -> None:
    for path in paths:
        blob = path.read_bytes()
        assert FAKE_KEY.encode() not in blob, f"the API key leaked into {path}"


def db_cells_contain(db: Path, needle: str) -> list[str]:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        hits = []
        for table in tables:
            for row in con.execute(f'SELECT * FROM "{table}"').fetchall():
                if any(needle in str(cell) for cell in row):
                    hits.append(table)
                    break
        return hits
    finally:
        con.close()


def test_a_whole_debate_writes_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        runner = importlib.import_module("crux_lab.runner")
        engines = importlib.import_module("crux_lab.engines")
    except ImportError as exc:  # pragma: no cover - only before the runner lands
        pytest.skip(f"the debate runner is not importable yet: {exc}")
    ids = write_library(tmp_path / "personas")
    monkeypatch.setenv("CRUX_LAB_PERSONAS", str(tmp_path / "personas"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    engine = first_loadable_engine(engines)
    if engine is None:  # pragma: no cover - only before any engine lands
        pytest.skip("no debate engine is installed yet")

    out = tmp_path / "out"
    config = DebateConfig(
        topic="Is remote work better?", persona_ids=ids, engine=engine, backend="simulated", seed=3, max_turns=4
    )
    result = runner.run_debate_sync(config, event_log=out / "events.jsonl", cassette=out / "cassette.jsonl")
    assert result.events and result.llm_calls, "the run must have produced events and calls"
    (out / "result.json").write_text(result.model_dump_json())

    written = [out / "events.jsonl", out / "result.json", out / "cassette.jsonl"]
    try:
        store = importlib.import_module("crux_lab.store")
    except ImportError:  # pragma: no cover - only before the store lands
        store = None
    db = out / "crux_lab.duckdb"
    if store is not None:
        run_dir = store.write_run(result, out / "runs")
        store.ingest([run_dir], db)
        written += files_under(run_dir) + [db]
        assert db_cells_contain(db, FAKE_KEY) == []

    for path in written:
        assert path.is_file() and path.stat().st_size > 0, f"{path} was not written"
    assert_no_key_in(files_under(out))
    cassette = (out / "cassette.jsonl").read_bytes()
    assert all(marker not in cassette for marker in AUTH_MARKERS)


async def test_recording_real_calls_stores_no_key_or_auth_header(tmp_path: Path) -> None:
    api = FakeAPI([error(429, "rate_limit_error", "x", {"retry-after-ms": "5"}), message("An answer.")])
    real = AnthropicBackend(api_key=FAKE_KEY, http_client=api.client())
    cassette = tmp_path / "real.jsonl"
    ledger = Ledger(ReplayBackend(cassette, inner=real, mode="record"), run_id="r")
    request = LLMRequest(purpose="opening", system="You are Ada.", user="Open.", cache_system=True)
    response = await ledger.generate(request)
    # The key did travel, in the auth header of each attempt...
    assert all(r.headers["authorization"] == f"Bearer {FAKE_KEY}" for r in api.requests)
    assert len(api.requests) == 2 and response.retries == 1
    # ...and is nowhere in what was kept.
    blob = cassette.read_bytes()
    assert b"An answer." in blob
    assert all(marker not in blob for marker in AUTH_MARKERS)
    assert FAKE_KEY not in ledger.calls[0].model_dump_json()
    assert FAKE_KEY not in response.model_dump_json()


async def test_errors_do_not_carry_the_key() -> None:
    api = FakeAPI([error(401, "authentication_error", "invalid x-api-key")])
    ledger = Ledger(AnthropicBackend(api_key=FAKE_KEY, http_client=api.client()), run_id="r")
    with pytest.raises(LLMCallFailed) as info:
        await ledger.generate(LLMRequest(purpose="take", system="s", user="u"))
    assert info.value.status == 401
    assert FAKE_KEY not in str(info.value) and FAKE_KEY not in repr(info.value.__dict__)
    assert info.value.__cause__ is None  # the SDK error (which holds the request) is not chained
    assert FAKE_KEY not in ledger.calls[0].model_dump_json()
