from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crux_lab.persona_tools.cli import app
from crux_lab.personas.validate import check_library


def test_shipped_library_is_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRUX_LAB_PERSONAS", raising=False)
    assert [str(i) for i in check_library()] == []


def test_broken_links_and_design_are_reported(library: Path) -> None:
    # library fixture: Saylor and Hayes only, with the full crypto deck listed
    stances = library / "arthur-hayes" / "stances.json"
    data = json.loads(stances.read_text())
    data["stances"][0]["beliefNodeIds"].append("hayes-nope")
    data["stances"][1]["grounding"] = ["hayes-c99"]
    for s in data["stances"]:  # make Hayes agree with Saylor on everything he is opposed on
        if s["propositionId"] in {"crypto.p2", "crypto.p4", "crypto.p6", "crypto.p9", "crypto.p10", "crypto.p12"}:
            s["stance"] = "uncertain"
    stances.write_text(json.dumps(data))
    issues = [str(i) for i in check_library()]
    assert any("unknown belief node(s) ['hayes-nope']" in i for i in issues)
    assert any("unknown chunk(s) ['hayes-c99']" in i for i in issues)
    assert any("persona peter-schiff is listed but has no loadable folder" in i for i in issues)
    assert any("arthur-hayes are opposed on only 0" in i for i in issues)
    res = CliRunner().invoke(app, ["check"])
    assert res.exit_code == 1 and "error" in res.output


def test_stance_support_follows_the_graph() -> None:
    from crux_lab.personas.loader import load_persona
    from crux_lab.personas.validate import check_persona, stance_support

    p = load_persona("michael-saylor")
    assert stance_support(p, "crypto.p1") is not None and stance_support(p, "crypto.p1") > 0  # type: ignore[operator]
    assert p.beliefs is not None
    for e in p.beliefs.edges:
        if e.to == "saylor-pos-p1":
            e.polarity = -1
    assert stance_support(p, "crypto.p1") < 0  # type: ignore[operator]
    assert any("argues against its pro stance on crypto.p1" in str(i) for i in check_persona(p))
