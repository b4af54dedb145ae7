"""benchmarks/sweep_crossings.py flags a run whose model text is about another cell of the sweep."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "sweep_crossings.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sweep_crossings", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(root: Path, name: str, topic: str, personas: list[str], said: str) -> Path:
    run = root / name
    run.mkdir()
    (run / "result.json").write_text(json.dumps({"config": {"topic": topic, "persona_ids": personas}}), encoding="utf-8")
    events = [{"type": "status", "message": "Peter Schiff"},  # progress lines are not model text
              {"type": "crux_card_posted", "card": {"question": said}}]
    (run / "events.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n", encoding="utf-8")
    return run


def test_a_card_naming_another_cells_persona_is_a_crossing(tmp_path: Path) -> None:
    gold, ai = "Will gold outlast Bitcoin as a reserve asset?", "Should frontier AI model weights be published openly?"
    runs = [
        _run(tmp_path, "a", gold, ["michael-saylor", "peter-schiff"], "Does Bitcoin's fixed supply make it sound money?"),
        _run(tmp_path, "b", ai, ["ai-regulator", "open-source-builder"], "Peter Schiff says gold is real money"),
        _run(tmp_path, "c", ai, ["michael-saylor", "peter-schiff"], f"As asked: {gold}"),
        _run(tmp_path, "d", ai, ["ai-regulator", "open-source-builder"], "Do open weights speed up misuse?"),
    ]
    rows = {r["run"]: r for r in _script().check(runs)}
    assert not rows["a"]["crossed"]
    assert rows["b"]["crossed"] and rows["b"]["other_personas_named"] == ["Peter Schiff"]
    assert rows["c"]["crossed"] and rows["c"]["other_topics_quoted"] == [gold]
    assert not rows["d"]["crossed"]  # its progress line names Peter Schiff; that is not the model's text
