"""Fixtures shared by the panel and crux_rooms tests: the synthetic test deck
(:mod:`tests.engines.crux_deck`) written once per module, and a switch that points
``CRUX_LAB_PERSONAS`` at it. A module opts in with
``pytestmark = pytest.mark.usefixtures("use_test_deck")``; the other engine tests keep the
shipped library.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engines.crux_deck import write_test_deck


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test deck, written once per module (read-only: edit a copy, see ``deck``)."""
    root = tmp_path_factory.mktemp("personas")
    write_test_deck(root)
    return root


@pytest.fixture
def use_test_deck(library: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CRUX_LAB_PERSONAS", str(library))
    return library
