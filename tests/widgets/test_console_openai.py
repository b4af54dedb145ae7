"""The console on the openai backend, without a browser: a local OpenAI-compatible stand-in
server (``standin_openai``, answering from the recorded dialogue cassette) runs one debate whose
transcript, findings and saved run appear; a URL that does not answer is one line in the console
and saves nothing; a running ``crux-lab local-model`` fills the server fields."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from crux_lab.local_model.server import STATE_ENV
from crux_lab.widgets import DebateConsole, backend_choices
from tests.widgets.standin_openai import CASSETTES, standin_server

DEBATES = json.loads((CASSETTES / "debates.json").read_text(encoding="utf-8"))


def closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture(autouse=True)
def _no_local_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(STATE_ENV, str(tmp_path / "no-local-model"))


def openai_console(url: str, runs: Path, db: Path) -> DebateConsole:
    console = DebateConsole(deck="crypto", engine="dialogue", runs_dir=runs, db=db)
    console.backend.value = "openai"
    console.base_url.value = url
    console.personas.value = tuple(DEBATES["personas"])
    console.topic.value = DEBATES["topic"]
    console.max_turns.value = DEBATES["engines"]["dialogue"]["max_turns"]
    return console


def test_every_registered_backend_is_a_choice_and_openai_shows_its_server_fields() -> None:
    assert backend_choices()[:2] == ["simulated", "auto"] and "openai" in backend_choices()
    console = DebateConsole()
    assert console.backend.options == tuple(backend_choices())
    assert console.server_box.layout.display == "none"  # the simulator has no server
    console.backend.value = "openai"
    assert console.server_box.layout.display == "" and console.structured.layout.display == ""
    assert list(console.structured.options) == ["auto", "json_schema", "prompt"]
    assert "(modelled, not billed)" not in console.cost.value  # billed, as its spec says
    console.backend.value = "simulated"
    assert console.server_box.layout.display == "none" and "(modelled, not billed)" in console.cost.value


def test_a_console_debate_on_a_local_openai_compatible_server(tmp_path: Path) -> None:
    runs, db = tmp_path / "runs", tmp_path / "db.duckdb"
    with standin_server("dialogue") as url:
        console = openai_console(url, runs, db)
        result = console.start()
    assert result is not None and result.complete and result.backend == "openai", console.state.errors
    assert result.config.base_url == url and result.config.models == {"strong": "qwen2.5-1.5b", "fast": "qwen2.5-1.5b"}
    assert console.state.errors == [] and len(console.state.turns) >= 2
    assert "cl-turn" in console.transcript.value and "Michael Saylor" in console.transcript.value
    assert "regime" in console.cards.value and "cruxes (" in console.cards.value
    assert console.run_folder is not None and console.run_folder.is_dir() and console.run_folder.parent == runs
    assert "and the database" in console.state.saved and "complete · run" in console.status.value


def test_an_openai_url_that_does_not_answer_is_one_line_and_saves_nothing(tmp_path: Path) -> None:
    url = closed_url()
    runs, db = tmp_path / "runs", tmp_path / "db.duckdb"
    console = openai_console(url, runs, db)
    assert console.start() is None
    assert len(console.state.errors) == 1 and "\n" not in console.state.errors[0]
    assert url in console.state.errors[0] and "error:" in console.status.value
    assert console.result is None and console.run_folder is None
    assert not runs.exists() and not db.exists()


def test_a_running_local_model_fills_the_url_and_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state_dir = tmp_path / "local-model"
    state_dir.mkdir()
    state = {"pid": os.getpid(), "port": 8123, "model": "qwen2.5-1.5b", "gguf": "m.gguf", "binary": "llama-server",
             "log": "server.log", "ctx_size": 4096}
    (state_dir / "server.json").write_text(json.dumps(state))
    monkeypatch.setenv(STATE_ENV, str(state_dir))
    console = DebateConsole()
    assert console.base_url.value == "http://127.0.0.1:8123/v1" and console.model.value == "qwen2.5-1.5b"
