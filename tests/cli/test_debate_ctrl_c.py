"""Ctrl-C on `crux-lab debate` exits 130 (as `sweep` does), saves the partial run, and its
ledger says the calls in flight were cancelled (issue 16).

The debate runs in its own process against a local HTTP server that never answers; the test
sends SIGINT once the server has received a call (a threading.Event, not a sleep).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.llm.tiny_panel import first_loadable_engine, write_library

SAFETY_S = 600.0  # bounds a broken run only


class Hanging(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.got_call = threading.Event()
        self.release = threading.Event()


class _Handler(BaseHTTPRequestHandler):
    server: Hanging

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.server.got_call.set()
        self.server.release.wait(SAFETY_S)
        self.send_response(500)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hanging_api() -> Iterator[Hanging]:
    server = Hanging()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()


def test_ctrl_c_on_debate_exits_130_and_records_cancelled_calls(tmp_path: Path, hanging_api: Hanging) -> None:
    import crux_lab.engines as engines

    engine = first_loadable_engine(engines)
    if engine is None:  # pragma: no cover
        pytest.skip("no debate engine is installed yet")
    ids = write_library(tmp_path / "personas")
    env = {**os.environ, "CRUX_LAB_PERSONAS": str(tmp_path / "personas"), "ANTHROPIC_API_KEY": "sk-ant-test-0123456789",
           "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{hanging_api.server_address[1]}"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "crux_lab", "debate", "--topic", "Is remote work better?", "--personas", ",".join(ids),
         "--engine", engine, "--backend", "anthropic", "--max-turns", "4", "--no-progress",
         "--db", str(tmp_path / "d.duckdb"), "--runs-dir", str(tmp_path / "runs")],
        env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert hanging_api.got_call.wait(SAFETY_S), "the debate never called the API"
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=SAFETY_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err
    [run_dir] = [p for p in (tmp_path / "runs").iterdir() if not p.name.startswith(".")]
    result = json.loads((run_dir / "result.json").read_text())
    assert result["complete"] is False
    outcomes = [c["outcome"] for c in result["llm_calls"]]
    assert outcomes and set(outcomes) == {"cancelled"}, outcomes  # none 'ok' with 0 tokens
    assert all(c["backend"] == "anthropic" and c["latency_s"] > 0 for c in result["llm_calls"]), result["llm_calls"]
