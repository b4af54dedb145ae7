"""Suite-wide safety: no test sees a real API key or writes the real database.

Every test runs with ``ANTHROPIC_API_KEY`` removed (tests that need a key set a fake one
themselves) and with ``CRUX_LAB_DB`` / ``CRUX_LAB_RUNS`` pointing into pytest's temporary
folder, so nothing lands in ``data/crux_lab.duckdb`` or ``runs/`` of the checkout. Slot leases
live in a folder of the test session too: the machine's folder is shared with every crux_lab
process of the user, and a fake server at the local server's address then found slots held by
a real run on that server (a slot test failed beside a recording).

Property tests (hypothesis) have no deadline: on a loaded two-core machine one example can
take a second where it takes a millisecond alone, and a test must not race the clock.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from crux_lab.llm import slot_lease

settings.register_profile("crux_lab", deadline=None)
settings.load_profile("crux_lab")


@pytest.fixture(scope="session")
def _isolated_store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("default-store")


@pytest.fixture(autouse=True)
def _offline_and_isolated(monkeypatch: pytest.MonkeyPatch, _isolated_store_dir: Path) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr(slot_lease, "lease_dir", lambda: _isolated_store_dir / "leases")
    monkeypatch.setenv("CRUX_LAB_DB", str(_isolated_store_dir / "crux_lab.duckdb"))
    monkeypatch.setenv("CRUX_LAB_RUNS", str(_isolated_store_dir / "runs"))
