"""Ctrl-C stops a sweep within seconds whatever its kernels are doing: starting, running, or
the coordinator between cells. Each case runs with CPU hogs beside it and synchronises on
what the sweep writes (see ``ctrl_c.py``), so it behaves the same on a loaded machine.

No assertion is about time: the SIGINT-to-exit figures (20 runs under load) are measured by
``benchmarks/sweep_ctrl_c.py``. What is asserted is that the sweep exits with 130, records
every cell honestly, and leaves no worker or kernel process behind.
"""

from __future__ import annotations

from pathlib import Path

import psutil
import pytest

from .ctrl_c import State, cpu_hogs, interrupt_sweep


@pytest.mark.parametrize("state", ["starting", "running", "between"])
def test_ctrl_c_stops_the_sweep_and_every_kernel(tmp_path: Path, state: State) -> None:
    with cpu_hogs(2):
        out = interrupt_sweep(tmp_path / state, state)
    assert out.exit_code == 130, out.stdout
    assert out.stdout[-1] == "INTERRUPTED True"
    assert out.leftovers == [], "processes left behind: " + "; ".join(out.leftovers)
    for pid in out.kernel_pids:  # the kernels that were running a cell
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    if state == "between":
        # The finished cell stays done; the next one was never launched, and is incomplete.
        assert out.statuses == {"False": "done", "True": "incomplete"}
        assert len(out.launched) == 1
    else:
        assert out.statuses == {"1": "incomplete", "2": "incomplete"}
        assert len(out.launched) == 2
