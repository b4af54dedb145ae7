"""A kernel that does not start within the sweep's ``kernel_start_s`` is killed and started
once more; then its cell fails naming the kernel's stderr, and the sweep goes on.

The kernel here never starts whatever the machine's load (``data/stuck_kernel.py`` stands in
for python3), so the outcome does not depend on the clock; the bound only says how long each
attempt is given."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import psutil
import pytest

from crux_lab.sweep.runner import run_sweep
from crux_lab.sweep.spec import load_sweep

DATA = Path(__file__).parent / "data"


def stuck_processes(root: Path) -> list[str]:
    out = []
    for proc in psutil.process_iter(["pid", "cmdline", "status"]):
        try:
            cmd = " ".join(proc.info["cmdline"] or [])
            if "stuck_kernel.py" in cmd and str(root) in cmd and proc.info["status"] != psutil.STATUS_ZOMBIE:
                out.append(f"{proc.info['pid']}: {cmd[:160]}")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


def test_a_kernel_that_never_starts_is_retried_once_then_named_with_its_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec_dir = tmp_path / "jupyter" / "kernels" / "python3"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, str(DATA / "stuck_kernel.py"), "{connection_file}"],
        "display_name": "stuck", "language": "python",
    }))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))  # searched before the real python3
    (tmp_path / "s.yaml").write_text(
        f"name: s\nnotebook: {DATA / 'tiny.ipynb'}\nworkers: 1\nkernel_start_s: 2\ngrid:\n  value: [1, 2]\n",
        encoding="utf-8",
    )
    spec = load_sweep(tmp_path / "s.yaml")
    ingested: list[Path] = []
    report = run_sweep(spec, ingest=ingested.append, check_done=lambda d: None if (d / "value.json").is_file() else "no")
    assert not report.interrupted and ingested == []
    # Both cells were tried (the first one's failure did not stop the sweep) and both failed.
    assert [o.status for o in report.outcomes] == ["failed", "failed"]
    for outcome in report.outcomes:
        error = outcome.error or ""
        assert "the cell's kernel did not start in 2 attempts of up to 2s each" in error, error
        assert "stuck kernel" in error and "never answering" in error, error  # its stderr
    # Each attempt's kernel was killed, and both attempts' stderr kept beside the cell.
    assert stuck_processes(tmp_path) == []
    for outcome in report.outcomes:
        logs = sorted((spec.out_dir / ".cells" / outcome.run_id).glob("kernel-*.stderr"))
        assert [p.name for p in logs] == ["kernel-1.stderr", "kernel-2.stderr"]
        assert all("stuck kernel" in p.read_text() for p in logs)


def test_kernel_start_s_is_checked(tmp_path: Path) -> None:
    from crux_lab.sweep.spec import SweepSpecError

    (tmp_path / "s.yaml").write_text(f"name: s\nnotebook: {DATA / 'tiny.ipynb'}\nkernel_start_s: 0\n", encoding="utf-8")
    with pytest.raises(SweepSpecError, match=r"s.yaml:3: key 'kernel_start_s' — expected seconds a cell's kernel may take to start \(a number from 1 to 3600\), got 0"):
        load_sweep(tmp_path / "s.yaml")
