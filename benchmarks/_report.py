"""Shared output of the workbench benchmark scripts: a key/value table and its JSON file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def print_and_save(rows: dict[str, Any], out: Path) -> None:
    """Print ``rows`` as an aligned two-column table and write them to ``out`` as JSON."""
    width = max(map(len, rows))
    for k, v in rows.items():
        print(f"{k:<{width}}  {v}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print(f"wrote {out}")
