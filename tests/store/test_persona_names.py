"""A run keeps its personas' display names, so what a reader sees later names them even when
the persona library the run used is gone (an eval's scenarios live in a temporary one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from crux_lab import workbench as wb
from crux_lab.models import DebateConfig
from crux_lab.runner import run_debate_sync
from crux_lab.store.runfiles import load_result, write_run

IDS = ["michael-saylor", "peter-schiff"]


def test_a_run_read_without_its_library_still_names_its_personas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_debate_sync(DebateConfig(topic="Is Bitcoin a better long-term store of value than gold?",
                                          persona_ids=IDS, engine="direct", seed=1))
    names = wb.persona_names(IDS)
    assert set(result.persona_names) == set(IDS) and result.persona_names == names
    assert all(names[p] != p for p in IDS)
    folder = write_run(result, tmp_path / "run")

    empty = tmp_path / "no-personas"
    empty.mkdir()
    monkeypatch.setenv("CRUX_LAB_PERSONAS", str(empty))
    assert wb.persona_names(IDS) == {p: p for p in IDS}  # the library no longer knows them
    again = load_result(folder)
    assert wb.persona_names(again) == names
    transcript = (write_run(again, tmp_path / "again") / "transcript.md").read_text()
    assert all(names[p] in transcript for p in IDS)
