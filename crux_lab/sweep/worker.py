"""One sweep cell in its own process: ``python -m crux_lab.sweep.worker JOB.json DONE_FD``.

The coordinator (:mod:`crux_lab.sweep.runner`) starts it in a session of its own, so a
terminal's Ctrl-C never reaches it: the coordinator decides when a cell ends. The job file
holds :func:`~crux_lab.sweep.runner.execute_cell`'s arguments and where to write the result
(``{"ok": true, "timings": {...}}`` or ``{"ok": false, "error": "..."}``, written atomically).
``DONE_FD`` is the write end of a pipe the coordinator waits on: it closes when this process
exits, however it exits.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from crux_lab.scrub import scrub
from crux_lab.sweep.runner import _error_text, execute_cell


def main(argv: list[str]) -> int:
    job_path = Path(argv[1])
    job = json.loads(job_path.read_text(encoding="utf-8"))
    result_path = Path(job["result"])

    result: dict[str, Any]
    try:
        # The kernel's stderr (this process's, inherited) goes to kernel-<n>.stderr beside the job.
        result = {"ok": True, "timings": execute_cell(*job["args"], stderr_dir=str(job_path.parent))}
    except Exception as exc:  # noqa: BLE001 - the cell's failure is reported as data
        result = {"ok": False, "error": scrub(_error_text(exc))}
    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result), encoding="utf-8")
    os.replace(tmp, result_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
