"""The structured-output canary in a run: shown first, kept in the result and in `runs`."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from crux_lab.cli import app
from crux_lab.llm.openai_backend import OpenAIBackend
from crux_lab.models import DebateConfig, EngineError, Status
from crux_lab.runner import run_debate
from crux_lab.store import connect, ingest, write_run

from .fake_openai import LOCAL_URL, FakeOpenAI, completion

MODELS = {"strong": "qwen", "fast": "qwen"}


@pytest.mark.parametrize(("canary", "mode", "verdict"), [("enforce", "json_schema", "enforced"), ("ignore", "prompt", "ignored")])
async def test_a_run_shows_and_stores_how_replies_were_held_to_their_schema(
    tmp_path: Path, canary: str, mode: str, verdict: str
) -> None:
    api = FakeOpenAI([completion('{"cards": []}', model="qwen")], canary=canary)
    backend = OpenAIBackend(models=MODELS, base_url=LOCAL_URL, http_client=api.client())
    config = DebateConfig(
        topic="Is Bitcoin a better long-term store of value than gold?",
        persona_ids=["michael-saylor", "peter-schiff"], engine="direct", backend="openai",
        models=MODELS, base_url=LOCAL_URL,
    )
    result = await run_debate(config, backend=backend)
    assert result.structured is not None and (result.structured.mode, result.structured.canary) == (mode, verdict)
    first = result.events[0]
    assert isinstance(first, Status) and first.message == result.structured.line()
    warnings = [e for e in result.events if isinstance(e, EngineError) and e.purpose == "structured_output"]
    assert len(warnings) == (verdict != "enforced")
    if warnings:
        assert LOCAL_URL in warnings[0].error and "prompt mode is in use" in warnings[0].error
    db = tmp_path / "runs.duckdb"
    ingest([write_run(result, tmp_path / "runs")], db)
    con = connect(db)
    try:
        row = con.execute("SELECT structured_mode, structured_canary FROM runs").fetchall()
    finally:
        con.close()
    assert row == [(mode, verdict)]


def test_a_simulated_run_records_no_server_check(tmp_path: Path) -> None:
    import asyncio

    config = DebateConfig(
        topic="Is Bitcoin a better long-term store of value than gold?",
        persona_ids=["michael-saylor", "peter-schiff"], engine="direct",
    )
    result = asyncio.run(run_debate(config))
    assert result.structured is None and "structured" not in result.model_dump()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--backend", "simulated", "--structured", "prompt"], "--structured/--llm-config apply to the anthropic and openai backends, not simulated"),
        (["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--structured", "grammar"], "--structured is 'grammar'; use one of auto, json_schema, prompt"),
    ],
)
def test_a_bad_structured_option_is_one_line(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["debate", "--topic", "Is Bitcoin a better long-term store of value than gold?",
                                      "--personas", "michael-saylor,peter-schiff", "--engine", "direct", *args])
    assert result.exit_code == 2 and message in result.output.replace("\n", " ")
