"""Replies never cross between processes that share one local server (issue 44).

The stand-in server (``crossing_server.py``) has llama.cpp's fault: a request sent to a slot
while another request holds it is answered about the other one's prompt. Two processes run a
debate each against it at once, their calls released together; neither result may mention
the other debate. Before the slot leases, both debates' card calls went to the spare slot
together and one was answered about the other's topic and personas.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from crux_lab.llm.slot_lease import SlotLeases

from .crossing_server import CrossingServer

HERE = Path(__file__).parent
REPO = HERE.parents[1]
DEBATES = {
    "gold": ("Will gold outlast Bitcoin as a reserve asset?", ["michael-saylor", "peter-schiff"]),
    "ai": ("Should frontier AI model weights be published openly?", ["ai-regulator", "open-source-builder"]),
}


def _start(base_url: str, out: Path, topic: str, personas: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(HERE / "cross_driver.py"), base_url, str(out), "direct", topic, *personas],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )


def test_replies_never_cross_between_processes(tmp_path: Path) -> None:
    env = {**os.environ, "CRUX_LAB_CACHE": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    with CrossingServer(slots=5, hold_s=5.0) as server:
        procs = {name: _start(server.base_url, tmp_path / f"{name}.json", topic, personas, env)
                 for name, (topic, personas) in DEBATES.items()}
        try:
            for name, proc in procs.items():  # both have built their run: release them together
                assert proc.stdout is not None
                line = proc.stdout.readline().strip()
                assert line == "READY", f"{name}: {line!r} {proc.stderr.read() if proc.stderr else ''}"
            for proc in procs.values():
                assert proc.stdin is not None
                proc.stdin.write("go\n")
                proc.stdin.flush()
            errors = {name: proc.communicate(timeout=600)[1] for name, proc in procs.items()}
        finally:
            for proc in procs.values():
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        for name, proc in procs.items():
            assert proc.returncode == 0, f"{name} exited {proc.returncode}: {errors[name][-2000:]}"
        crossed = [f"slot {e.slot}: asked about {e.asked!r}, answered about {e.answered!r}" for e in server.crossed]
    for name, (topic, personas) in DEBATES.items():
        result = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
        text = json.dumps(result)
        [(other_topic, other_personas)] = [v for k, v in DEBATES.items() if k != name]
        strays = [w for w in [other_topic.rstrip("?"), *other_personas] if w in text]
        assert not strays, f"the {name} debate's result mentions the other debate: {strays}; crossed: {crossed}"
        # and each debate was answered about itself
        assert [c["question"] for c in result["crux_cards"]] == [f"Is it true that {topic.rstrip('?')}?"]
        assert set(result["crux_cards"][0]["personas"]) == set(personas)
    assert crossed == []


def test_a_lease_is_one_holder_at_a_time_and_dead_or_corrupt_ones_are_reclaimed(tmp_path: Path) -> None:
    """Lease files by hand: a live holder is waited for; a dead one, a pid reused, and a
    corrupt file are reclaimed with one note each; release removes only one's own."""
    import asyncio

    notes: list[str] = []
    leases = SlotLeases("http://127.0.0.1:8080/v1", folder=tmp_path, poll_s=0.01, note=notes.append)
    path = leases.path(4)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()

    async def take() -> None:
        async with leases.hold(4):
            assert json.loads(path.read_text())["pid"] == os.getpid()

    path.write_text(json.dumps({"pid": dead.pid, "start": 1.0, "token": "x"}))
    asyncio.run(take())
    path.write_text("{not json")
    asyncio.run(take())
    path.write_text(json.dumps({"pid": os.getpid(), "start": 12.0, "token": "old"}))  # pid reused
    asyncio.run(take())
    assert not path.exists()
    assert len(notes) == 3, notes
    assert f"held by process {dead.pid}, which no longer exists; reclaimed" in notes[0]
    assert str(path) in notes[1] and "corrupt (not JSON" in notes[1]
    assert f"held by process {os.getpid()}" in notes[2]


@pytest.mark.parametrize("how", ["error", "cancel"])
def test_a_lease_is_released_however_the_exchange_ends(tmp_path: Path, how: str) -> None:
    """An exception (a server gone) or a cancellation (Ctrl-C) inside the exchange lets go
    of the lease; a live holder's lease is waited for, never taken."""
    import asyncio

    leases = SlotLeases("http://127.0.0.1:8080/v1", folder=tmp_path, poll_s=0.01)
    path = leases.path(0)

    held, go = asyncio.Event(), asyncio.Event()

    async def exchange() -> None:
        async with leases.hold(0):
            held.set()
            await go.wait()  # (cancelled here in the "cancel" case)
            if how == "error":
                raise ConnectionError("server gone")

    async def main() -> None:
        task = asyncio.create_task(exchange())
        await held.wait()
        assert path.exists()
        other = SlotLeases("http://127.0.0.1:8080/v1", folder=tmp_path, poll_s=0.01)
        waiter = asyncio.create_task(_take_and_note(other))
        while other.waits == 0:  # the second one found the slot held and waits
            await asyncio.sleep(0.01)
        assert not waiter.done()
        if how == "cancel":
            task.cancel()
        else:
            go.set()
        with pytest.raises((ConnectionError, asyncio.CancelledError)):
            await task
        await waiter

    async def _take_and_note(other: SlotLeases) -> None:
        async with other.hold(0):
            pass

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no reclaim note: nothing was left behind
        asyncio.run(main())
    assert not path.exists() and not path.with_suffix(".next").exists()


def test_two_checkouts_share_one_lease_folder(tmp_path: Path) -> None:
    """A second checkout (a clone, a git worktree) takes its leases in the same folder as the
    first: the server is the machine's. With the folder inside the checkout, a worktree's run
    and a main checkout's recording pinned the same slots at once, and their replies crossed."""
    other = tmp_path / "other-checkout" / "crux_lab" / "llm"
    other.mkdir(parents=True)
    (other / "slot_lease.py").write_text((REPO / "crux_lab" / "llm" / "slot_lease.py").read_text(encoding="utf-8"), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "CRUX_LAB_CACHE"}
    code = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('sl', sys.argv[1]); "
            "m = importlib.util.module_from_spec(spec); sys.modules['sl'] = m; "
            "spec.loader.exec_module(m); print(m.lease_dir())")
    folders = {subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env, check=True).stdout.strip()
               for path in (REPO / "crux_lab" / "llm" / "slot_lease.py", other / "slot_lease.py")}
    assert len(folders) == 1 and not next(iter(folders)).startswith(str(tmp_path)) and not next(iter(folders)).startswith(str(REPO))
