"""Issue 16: a server that echoes the API key in its 401 body must not put the key on disk.

The real anthropic SDK talks to a fake Messages API (``fake_api.py``, an httpx mock
transport) whose 401 body quotes the key it was sent. A whole ``crux-lab debate`` runs
against it with a cassette and ``--out``, logging to a file; then ``crux-lab report`` renders
the run. Every file written under the test folder (run folder, events, transcript, Parquet,
DuckDB, cassette, result JSON, report, executed notebook, log) is searched for every key
byte for byte, the database cell by cell, and so are stdout and stderr.
"""

from __future__ import annotations

import importlib
import json
import logging
from pathlib import Path
from typing import Any

import httpx2
import pytest
from typer.testing import CliRunner

from crux_lab.cli import app
from crux_lab.llm import anthropic_backend
from crux_lab.llm.anthropic_backend import AnthropicBackend
from crux_lab.llm.base import LLMRequest, LLMResponse
from crux_lab.llm.ledger import Ledger
from crux_lab.llm.replay import ReplayBackend
from crux_lab.models import Tier
from crux_lab.scrub import REDACTED, scrub

from .fake_api import FAKE_KEY, FakeAPI
from .test_secrets import db_cells_contain, files_under
from .tiny_panel import first_loadable_engine, write_library

OTHER_KEYS = {"OPENAI_API_KEY": "sk-openai-FAKE-9876543210abcdef", "MISTRAL_API_KEY": "mistral-FAKE-55555555"}


def echo_401(request: httpx2.Request) -> httpx2.Response:
    """An auth error that quotes back the key the client sent (as some proxies do)."""
    sent = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
    body = {"type": "error", "error": {"type": "authentication_error",
                                       "message": f"invalid x-api-key: {sent} (also {OTHER_KEYS['OPENAI_API_KEY']})"}}
    return httpx2.Response(401, json=body)


def keys() -> list[str]:
    return [FAKE_KEY, *OTHER_KEYS.values()]


def assert_clean(where: str, blob: bytes) -> None:
    for key in keys():
        assert key.encode() not in blob, f"a key leaked into {where}"


@pytest.fixture
def leaky_api(monkeypatch: pytest.MonkeyPatch) -> FakeAPI:
    async def reply(request: httpx2.Request) -> httpx2.Response:
        return echo_401(request)

    api = FakeAPI([reply])

    class Mocked(AnthropicBackend):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(http_client=api.client(), **kwargs)

    # make_backend imports the class from this module when it builds the anthropic backend.
    monkeypatch.setattr(anthropic_backend, "AnthropicBackend", Mocked)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    for name, value in OTHER_KEYS.items():
        monkeypatch.setenv(name, value)
    return api


def test_an_echoed_key_lands_nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, leaky_api: FakeAPI) -> None:
    engines = importlib.import_module("crux_lab.engines")
    ids = write_library(tmp_path / "personas")
    monkeypatch.setenv("CRUX_LAB_PERSONAS", str(tmp_path / "personas"))
    engine = first_loadable_engine(engines)
    if engine is None:  # pragma: no cover - only before any engine lands
        pytest.skip("no debate engine is installed yet")
    log_file = tmp_path / "logs" / "crux_lab.log"
    log_file.parent.mkdir()
    handler = logging.FileHandler(log_file, encoding="utf-8")
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.DEBUG)
    try:
        runner = CliRunner()
        res = runner.invoke(app, [
            "debate", "--topic", "Is remote work better?", "--personas", ",".join(ids), "--engine", engine,
            "--backend", "anthropic", "--max-turns", "4", "--cassette", str(tmp_path / "cassette.jsonl"),
            "--db", str(tmp_path / "crux.duckdb"), "--runs-dir", str(tmp_path / "runs"),
            "--out", str(tmp_path / "result.json"), "--no-progress",
        ])
        # The key did travel to the server, and the server did echo it back...
        assert leaky_api.requests and all(FAKE_KEY in json.dumps(r.headers) for r in leaky_api.requests)
        assert res.exit_code == 1, res.output  # the debate stopped on the 401
        assert "authentication_error" in res.output and REDACTED in res.output
        logging.getLogger("crux_lab.test").error("the call failed: %s", f"invalid x-api-key: {FAKE_KEY}")
        run_id = json.loads((tmp_path / "result.json").read_text())["run_id"]
        report = runner.invoke(app, ["report", run_id, "--out", str(tmp_path / "report" / "run.html"),
                                     "--db", str(tmp_path / "crux.duckdb"), "--experiments", str(tmp_path / "x")],
                               env={"CRUX_LAB_RUNS": str(tmp_path / "runs")})
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    assert report.exit_code == 0, report.output
    # ...and it is in no stream and no file.
    assert_clean("the debate's stdout/stderr", res.output.encode())
    assert_clean("the report's stdout/stderr", report.output.encode())
    written = files_under(tmp_path)
    names = {p.name for p in written}
    expected = {"result.json", "events.jsonl", "transcript.md", "manifest.json", "runs.parquet",
                "llm_calls.parquet", "events.parquet", "crux.duckdb", "run.html", "run.ipynb", "crux_lab.log"}
    assert expected <= names, expected - names
    for path in written:
        assert_clean(str(path), path.read_bytes())
    for key in keys():
        assert db_cells_contain(tmp_path / "crux.duckdb", key) == []
    # The error is still there to read, with the key redacted.
    result = json.loads((tmp_path / "result.json").read_text())
    assert "authentication_error" in result["error"] and REDACTED in result["error"]
    assert REDACTED in log_file.read_text()


async def test_the_cassette_writer_scrubs_an_echoed_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)

    class Echo:
        name = "anthropic"

        def model_for(self, tier: Tier) -> str:
            return "claude-sonnet-4-5"

        async def generate(self, request: LLMRequest) -> LLMResponse:
            return LLMResponse(text=f"you said {FAKE_KEY}", model="claude-sonnet-4-5", backend="anthropic")

    cassette = tmp_path / "c.jsonl"
    ledger = Ledger(ReplayBackend(cassette, inner=Echo(), mode="record"), run_id="r")
    await ledger.generate(LLMRequest(purpose="take", system="s", user="u"))
    assert_clean(str(cassette), cassette.read_bytes())
    assert f"you said {REDACTED}" in cassette.read_text()


def test_short_values_and_other_variables_are_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINY_API_KEY", "1")  # too short to be a key: digits must survive
    monkeypatch.setenv("CRUX_LAB_SECRET_VARS", "MY_TOKEN")
    monkeypatch.setenv("MY_TOKEN", "tok-0123456789")
    assert scrub("1 + 1 = 2; tok-0123456789") == f"1 + 1 = 2; {REDACTED}"
