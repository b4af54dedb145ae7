"""Leases on a local server's slots, shared by every crux_lab process on this machine.

llama.cpp answered the request working on a slot about the prompt of another request that
arrived for that slot meanwhile (``benchmarks/cross_replies.py``, raw HTTP with no crux_lab code). Inside one process the openai backend keeps one
request per slot with a lock; these leases do the same across processes: a sweep's workers,
a Dask cluster, the console beside a CLI run, two notebooks.

A lease is a small JSON file, ``<folder>/<server>-slot<N>.json`` (:func:`lease_dir`: a folder
for this user in the system's temporary directory, shared by every checkout on the machine,
since the server is the machine's; ``$CRUX_LAB_CACHE/leases`` when that is set), holding the holder's
pid, the pid's start time and a token of its own. A request pinned to a slot holds the lease
for the whole exchange. Every change to a lease happens under a short ``flock`` on
``<key>.guard`` (never waited on: a busy guard is tried again at the next poll), so two
processes never both take a free slot.

- **Waiting** polls every :data:`POLL_S` seconds. The first waiter writes ``<key>.next``, and
  a released slot goes to it before its last holder may take it again, so a process sending
  one request after another cannot starve the others.
- **Dead holders.** A lease whose process no longer exists (or whose pid now belongs to a
  newer process) is reclaimed with a note, never waited on; so is a corrupt lease file.
- **Ctrl-C, errors, exit.** A lease is released when its exchange ends, however it ends
  (cancellation included), and any still held at interpreter exit are released then; a
  process killed outright leaves a lease of a dead process, reclaimed by the next one.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import json
import os
import re
import tempfile
import threading
import uuid
import warnings
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CACHE_ENV = "CRUX_LAB_CACHE"
POLL_S = 0.05

try:  # POSIX; elsewhere the guard is a file created exclusively
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def lease_dir() -> Path:
    """``$CRUX_LAB_CACHE/leases``, else ``crux_lab-<user>/leases`` in the system's temporary
    directory: one folder for every crux_lab process of this user on the machine, whichever
    checkout it runs from. A folder inside the checkout kept two clones (or a git worktree
    beside its main checkout) from seeing each other's leases, and their requests to one slot
    crossed: a Bitcoin persona's positions came back as a drug-policy debate's turn."""
    env = os.environ.get(CACHE_ENV, "").strip()
    if env:
        return Path(env).expanduser() / "leases"
    user = str(os.getuid()) if hasattr(os, "getuid") else re.sub(r"[^A-Za-z0-9_-]", "_", os.environ.get("USERNAME", "user"))
    return Path(tempfile.gettempdir()) / f"crux_lab-{user}" / "leases"


def server_key(base_url: str) -> str:
    """A file-name-safe key for a server: its host and port, and a hash of the whole URL.

    >>> server_key("http://127.0.0.1:8080/v1")
    '127.0.0.1_8080-75a5be96'
    """
    parts = urlsplit(base_url.rstrip("/"))
    host = re.sub(r"[^A-Za-z0-9.-]", "_", parts.hostname or "server")
    digest = hashlib.sha256(base_url.rstrip("/").encode()).hexdigest()[:8]
    return f"{host}_{parts.port or ''}-{digest}"


def _start_time(pid: int) -> float | None:
    """When process ``pid`` started (psutil), None when it does not exist or is a zombie."""
    import psutil

    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return float(proc.create_time())
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None
    except psutil.AccessDenied:  # another user's process: alive
        return -1.0


def _my_start() -> float:
    return _start_time(os.getpid()) or 0.0


@dataclass(frozen=True)
class Holder:
    pid: int
    start: float
    token: str

    def to_json(self, **extra: Any) -> str:
        return json.dumps({"pid": self.pid, "start": self.start, "token": self.token, **extra})


def _read(path: Path) -> tuple[Holder | None, str | None]:
    """The holder a lease file names, or (None, why it is unusable); (None, None) when absent."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"unreadable ({exc.strerror})"
    try:
        data = json.loads(text)
    except ValueError:
        return None, f"corrupt (not JSON: {text[:40]!r})"
    try:
        return Holder(pid=int(data["pid"]), start=float(data["start"]), token=str(data["token"])), None
    except (ValueError, TypeError, KeyError):
        return None, f"corrupt (no pid, start and token in {text[:60]!r})"


def _alive(holder: Holder) -> bool:
    start = _start_time(holder.pid)
    if start is None:
        return False
    # A pid given to a newer process: the holder is gone. (Start times are equal to the
    # clock tick; AccessDenied gives -1, taken as alive.)
    return start < 0 or holder.start <= 0 or abs(start - holder.start) < 1.0


def _write(path: Path, holder: Holder, **extra: Any) -> None:
    tmp = path.with_name(f".{path.name}.{holder.token}.tmp")
    tmp.write_text(holder.to_json(**extra), encoding="utf-8")
    os.replace(tmp, path)


# Leases this process holds, so that interpreter exit releases any a crash left behind.
_HELD: dict[Path, str] = {}
_HELD_LOCK = threading.Lock()


def _release_all_at_exit() -> None:
    with _HELD_LOCK:
        held = list(_HELD.items())
    for path, token in held:
        with contextlib.suppress(OSError):
            holder, _ = _read(path)
            if holder is not None and holder.token == token:
                path.unlink(missing_ok=True)


atexit.register(_release_all_at_exit)


class SlotLeases:
    """The leases of one server's slots (see the module docstring).

    ``note`` receives one line each time a lease is reclaimed (default: a warning)."""

    def __init__(self, base_url: str, *, folder: Path | None = None, poll_s: float = POLL_S,
                 note: Callable[[str], None] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.folder = folder or lease_dir()
        self.key = server_key(self.base_url)
        self.poll_s = poll_s
        self.note = note or (lambda line: warnings.warn(line, stacklevel=3))
        self.waits = 0  # polls that found the slot taken (for tests and benchmarks)

    def path(self, slot: int) -> Path:
        return self.folder / f"{self.key}-slot{slot}.json"

    @contextlib.asynccontextmanager
    async def hold(self, slot: int) -> AsyncIterator[None]:
        """Hold slot ``slot``'s lease for the body (waiting for it as long as it is held)."""
        me = Holder(pid=os.getpid(), start=_my_start(), token=uuid.uuid4().hex[:12])
        path = self.path(slot)
        try:
            while not self._try_take(path, me, slot):
                self.waits += 1
                await asyncio.sleep(self.poll_s)
            yield
        finally:
            self._let_go(path, me)

    # -- under the guard ---------------------------------------------------------------

    @contextlib.contextmanager
    def _guard(self, path: Path) -> Any:
        """True inside when this process holds ``path``'s guard; False when another does."""
        self.folder.mkdir(parents=True, exist_ok=True)
        guard = path.with_suffix(".guard")
        fd = os.open(guard, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if fcntl is None:  # pragma: no cover
                yield True
                return
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _usable(self, path: Path, what: str) -> Holder | None:
        """The live holder ``path`` names; a corrupt file or a dead holder is removed with a note."""
        holder, problem = _read(path)
        if problem is not None:
            self.note(f"{what} {path} is {problem}; reclaimed (nothing to fix: it is rewritten)")
            path.unlink(missing_ok=True)
            return None
        if holder is not None and not _alive(holder):
            self.note(f"{what} {path} was held by process {holder.pid}, which no longer exists; reclaimed")
            path.unlink(missing_ok=True)
            return None
        return holder

    def _try_take(self, path: Path, me: Holder, slot: int) -> bool:
        with self._guard(path) as mine:
            if not mine:
                return False
            nxt_path = path.with_suffix(".next")
            holder = self._usable(path, "the slot lease")
            nxt = self._usable(nxt_path, "the waiting claim")
            if holder is None and (nxt is None or nxt.token == me.token):
                _write(path, me, base_url=self.base_url, slot=slot)
                with _HELD_LOCK:
                    _HELD[path] = me.token
                if nxt is not None:
                    nxt_path.unlink(missing_ok=True)
                return True
            if nxt is None:  # first in line: the slot goes to this process when it is let go
                _write(nxt_path, me, base_url=self.base_url, slot=slot)
            return False

    def _let_go(self, path: Path, me: Holder) -> None:
        """Release the lease (and a waiting claim) ``me`` holds; anyone else's is left alone.
        No guard is needed: nobody else rewrites a valid file of a live holder."""
        with _HELD_LOCK:
            _HELD.pop(path, None)
        for p in (path, path.with_suffix(".next")):
            holder, _ = _read(p)
            if holder is not None and holder.token == me.token:
                p.unlink(missing_ok=True)
