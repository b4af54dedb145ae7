"""Ctrl-C on a real sweep process, in each state the kernels can be in (shared by the tests
and ``benchmarks/sweep_ctrl_c.py``).

Every step synchronises on something the sweep or its kernels write (a line on stdout when a
worker is launched or a cell ingested, a pid file the kernel writes when its cell runs), never
on a sleep, so the scenario is the same on an idle laptop and on a loaded 2-core machine.
The deadlines below only bound a broken run; a working one never comes near them.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import psutil

DATA = Path(__file__).parent / "data"
State = Literal["starting", "running", "between"]
STATES: tuple[State, ...] = ("starting", "running", "between")
SAFETY_S = 600.0  # bounds a broken run only; never the measure of a working one

DRIVER = """
import sys
from crux_lab.sweep.runner import run_sweep
from crux_lab.sweep.spec import load_sweep

spec, state, workers = load_sweep(sys.argv[1]), sys.argv[2], int(sys.argv[3])

def ingest(run_dir):
    print("INGEST", run_dir.name, flush=True)
    if state == "between":
        sys.stdin.readline()  # the test sends SIGINT now, then this newline

report = run_sweep(spec, ingest=ingest, workers=workers, check_done=lambda d: None if (d / "result.json").is_file() else "no",
                   on_launch=lambda cell: print("LAUNCH", cell.run_id, flush=True))
print("INTERRUPTED", report.interrupted, flush=True)
sys.exit(130 if report.interrupted else 0)
"""


@dataclass
class Outcome:
    state: State
    exit_code: int
    stop_s: float  # SIGINT to process exit
    statuses: dict[str, str]  # wait_for/value -> manifest status
    launched: list[str]
    leftovers: list[str]  # processes still alive that belong to the sweep
    kernel_pids: list[int] = field(default_factory=list)
    stdout: list[str] = field(default_factory=list)


def _write_spec(root: Path, state: State) -> Path:
    never, markers = json.dumps(str(root / "never-created")), json.dumps(str(root / "markers"))
    if state == "between":
        # One worker: the first cell finishes and is being ingested; the second has not started.
        body = f"workers: 1\nbase:\n  marker: {markers}\ngrid:\n  wait_for: ['', {never}]\n"
    else:
        # Two workers, two cells that would wait for ever once running.
        body = f"workers: 2\nbase:\n  marker: {markers}\n  wait_for: {never}\ngrid:\n  value: [1, 2]\n"
    spec = root / "c.yaml"
    spec.write_text(f"name: c\nnotebook: {DATA / 'runfolder.ipynb'}\n{body}", encoding="utf-8")
    return spec


def _reader(stream: object, lines: queue.Queue[str | None]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        lines.put(line.rstrip("\n"))
    lines.put(None)


def evidence(root: Path) -> str:
    """What the sweep and its kernels wrote on stderr (and the cells' recorded errors): the
    failure message of a wait that failed."""
    parts = []
    cells = root / "c" / ".cells"
    for path in sorted(cells.glob("*/kernel-*.stderr")) + sorted(cells.glob("*/worker.log")) + [root / "sweep.stderr"]:
        try:
            text = path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        parts.append(f"--- {path.relative_to(root)}: {text[-1500:] or '(empty)'}")
    try:
        cells_done = json.loads((root / "c" / "manifest.json").read_text(encoding="utf-8"))["cells"]
        parts += [f"--- cell {k}: {v.get('status')} {v.get('error') or ''}" for k, v in cells_done.items()]
    except (OSError, ValueError, KeyError):
        pass
    return "\n".join(parts) or "(no stderr, no worker log, no manifest)"


def _until(lines: queue.Queue[str | None], seen: list[str], prefix: str, count: int, root: Path) -> None:
    deadline = time.monotonic() + SAFETY_S
    while sum(1 for s in seen if s.startswith(prefix)) < count:
        try:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"no {count} {prefix} line(s) in {SAFETY_S:g}s: {seen}\n{evidence(root)}") from None
        if line is None:
            raise AssertionError(f"the sweep exited before {count} {prefix} line(s): {seen}\n{evidence(root)}")
        seen.append(line)


def _wait_for_files(folder: Path, count: int, sweep: subprocess.Popen[str], root: Path) -> list[Path]:
    """The pid files the kernels write when their cell runs; fails at once, with the kernels'
    stderr, when the sweep exits first (its cells failed), not after SAFETY_S."""
    deadline = time.monotonic() + SAFETY_S
    while time.monotonic() < deadline:
        found = sorted(folder.glob("*.pid")) if folder.is_dir() else []
        if len(found) >= count:
            return found
        if sweep.poll() is not None:
            raise AssertionError(f"the sweep exited ({sweep.returncode}) before its kernels wrote {count} "
                                 f"marker(s) in {folder}:\n{evidence(root)}")
        time.sleep(0.05)  # polling a file the kernel writes: a sync point, not a timing guess
    raise AssertionError(f"the kernels never wrote {count} marker(s) in {folder}:\n{evidence(root)}")


def sweep_processes(root: Path) -> list[str]:
    """Processes whose command line mentions ``root`` (the coordinator, workers, kernels)."""
    mine = []
    for proc in psutil.process_iter(["pid", "cmdline", "status"]):
        try:
            cmd = " ".join(proc.info["cmdline"] or [])
            if str(root) in cmd and proc.info["status"] != psutil.STATUS_ZOMBIE:
                mine.append(f"{proc.info['pid']}: {cmd[:160]}")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return mine


def interrupt_sweep(root: Path, state: State) -> Outcome:
    """Start a sweep in ``root``, bring it to ``state``, send SIGINT to its process group (as
    a terminal does) and measure how long it takes to exit."""
    root.mkdir(parents=True, exist_ok=True)
    spec = _write_spec(root, state)
    workers = "1" if state == "between" else "2"
    err = (root / "sweep.stderr").open("w", encoding="utf-8")  # the evidence of a failed wait
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(spec), state, workers],
        start_new_session=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=err, text=True, cwd=root,
    )
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    seen: list[str] = []
    kernel_pids: list[int] = []
    try:
        if state == "starting":
            _until(lines, seen, "LAUNCH", 2, root)  # both workers exist; their kernels are starting
        elif state == "running":
            kernel_pids = [int(p.read_text()) for p in _wait_for_files(root / "markers", 2, proc, root)]
        else:
            _until(lines, seen, "INGEST", 1, root)  # first cell finished; the coordinator is between cells
        sent = time.perf_counter()
        os.killpg(proc.pid, signal.SIGINT)
        if state == "between":
            assert proc.stdin is not None
            proc.stdin.write("\n")
            proc.stdin.flush()
        code = proc.wait(timeout=SAFETY_S)
        stop_s = time.perf_counter() - sent
    finally:
        if proc.poll() is None:  # only after a failure: do not leave it behind
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        err.close()
    while True:
        line = lines.get(timeout=SAFETY_S)
        if line is None:
            break
        seen.append(line)
    manifest = json.loads((root / "c" / "manifest.json").read_text(encoding="utf-8"))["cells"]
    statuses = {
        str(c["params"].get("value") if state != "between" else bool(c["params"].get("wait_for"))): c["status"]
        for c in manifest.values()
    }
    return Outcome(state, code, stop_s, statuses, [s for s in seen if s.startswith("LAUNCH")],
                   sweep_processes(root), kernel_pids, seen)


@contextmanager
def cpu_hogs(n: int = 2) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``n`` busy processes beside the test, so it runs on a loaded machine."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
