"""Shared fixtures: a throw-away persona library built from a copy of a shipped persona."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from crux_lab.personas.loader import persona_root

SHIPPED = Path(__file__).resolve().parents[2] / "data" / "personas"


@pytest.fixture
def library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of two shipped personas and decks.json, selected via CRUX_LAB_PERSONAS."""
    root = tmp_path / "personas"
    root.mkdir()
    for pid in ("michael-saylor", "arthur-hayes"):
        shutil.copytree(SHIPPED / pid, root / pid)
    shutil.copy(SHIPPED / "decks.json", root / "decks.json")
    monkeypatch.setenv("CRUX_LAB_PERSONAS", str(root))
    assert persona_root() == root
    return root


@pytest.fixture(autouse=True)
def _private_embedding_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never write to the repo's data/cache."""
    monkeypatch.setenv("CRUX_LAB_CACHE", str(tmp_path_factory.mktemp("cache")))
