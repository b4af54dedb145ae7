"""The CLI side of the openai backend: the server is asked before anything is spent or written."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from crux_lab.cli import _llm_settings, app
from crux_lab.llm import BackendUnavailable, describe_backend_choice, resolve_openai_models

from .tiny_panel import write_library


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Models(BaseHTTPRequestHandler):
    served: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = json.dumps({"object": "list", "data": [{"id": m} for m in self.served]}).encode()
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def models_server() -> Iterator[tuple[str, type[_Models]]]:
    handler = type("Handler", (_Models,), {"served": ["smollm2"]})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CRUX_LAB_PRICES"):
        monkeypatch.delenv(name, raising=False)


def test_server_down_fails_in_one_line_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = write_library(tmp_path / "personas")
    monkeypatch.setenv("CRUX_LAB_PERSONAS", str(tmp_path / "personas"))
    url = f"http://127.0.0.1:{closed_port()}/v1"
    result = CliRunner().invoke(app, [
        "debate", "--engine", "blitz", "--backend", "openai", "--base-url", url,
        "--personas", ",".join(ids), "--topic", "Is remote work better?",
        "--runs-dir", str(tmp_path / "runs"), "--db", str(tmp_path / "db.duckdb"), "--no-progress",
    ])
    assert result.exit_code == 2, result.output
    error_lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(error_lines) == 1 and error_lines[0].startswith("error:")
    assert url in result.output and "crux-lab local-model start" in result.output
    assert not (tmp_path / "runs").exists() and not (tmp_path / "db.duckdb").exists()


def test_models_default_to_the_one_the_server_lists(models_server: tuple[str, type[_Models]]) -> None:
    url, _ = models_server
    models, resolved_url = _llm_settings("openai", url, None, None, None)
    assert models == {"strong": "smollm2", "fast": "smollm2"} and resolved_url == url
    models, _ = _llm_settings("openai", url, None, "tiny", None)
    assert models == {"strong": "smollm2", "fast": "tiny"}
    line = describe_backend_choice("openai", models=models, base_url=url)
    assert f"OpenAI-compatible server at {url} (strong=smollm2, fast=tiny)" in line
    assert "no key, no cost" in line


def test_several_served_models_and_none_named_asks_for_them(models_server: tuple[str, type[_Models]]) -> None:
    url, handler = models_server
    handler.served = ["gpt-a", "gpt-b"]
    with pytest.raises(BackendUnavailable, match=r"--model-strong M --model-fast M \(the server at .* lists gpt-a, gpt-b\)"):
        resolve_openai_models({}, url)


def test_a_config_file_gives_the_settings_and_flags_win(models_server: tuple[str, type[_Models]], tmp_path: Path) -> None:
    url, _ = models_server
    cfg = tmp_path / "llm.yaml"
    cfg.write_text(f"base_url: {url}\nmodel_strong: big\nmodel_fast: small\n")
    assert _llm_settings("openai", None, None, "tiny", cfg) == ({"strong": "big", "fast": "tiny"}, url)
    cfg.write_text("base_url: x\nmodel: oops\n")
    with pytest.raises(typer.Exit):
        _llm_settings("openai", None, None, None, cfg)


def test_model_flags_do_not_apply_to_the_simulator() -> None:
    with pytest.raises(typer.Exit):
        _llm_settings("simulated", None, "m", None, None)
    assert _llm_settings("simulated", None, None, None, None) == ({}, None)


def test_help_shows_the_tier_allocation() -> None:
    result = CliRunner().invoke(app, ["debate", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = " ".join(result.output.replace("│", " ").split())
    assert "Tiers -> models: anthropic strong=" in text and "--model-strong" in text and "--base-url" in text
