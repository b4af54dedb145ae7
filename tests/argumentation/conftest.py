"""Shared helpers for the argumentation tests (data lives in tests/data/argumentation)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data" / "argumentation"


def load_json(path: Path) -> Any:
    """Load ``path`` or its gzip-compressed sibling ``path.gz``."""
    if path.exists():
        return json.loads(path.read_text())
    with gzip.open(str(path) + ".gz", "rt") as fh:
        return json.load(fh)
