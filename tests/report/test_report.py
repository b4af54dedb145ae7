"""Reports: offline HTML (input hidden, plotly.js embedded, no CDN) checked in headless
Chromium with the network blocked; sweep reports link every run; unknown ids list the nearest."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crux_lab.cli import app
from crux_lab.models import DebateConfig
from crux_lab.report import external_references, run_report, sweep_report
from crux_lab.runner import run_debate_sync
from crux_lab.store import ingest, write_run
from crux_lab.store.paths import default_db_path, default_runs_dir
from crux_lab.workbench import UnknownRunError, find_run
from tests.report.chromium import render

PLOT_DIV = re.compile(r'class="plotly-graph-div"')
RENDERED_PLOT = re.compile(r'class="plot-container plotly"')


def fake_run_folder(root: Path, run_id: str) -> None:
    (root / run_id).mkdir(parents=True)
    (root / run_id / "manifest.json").write_text("{}")


def test_unknown_run_id_lists_the_nearest(tmp_path: Path) -> None:
    runs = tmp_path / "experiments" / "x" / "runs"
    for rid in ("abc123def4560000", "abc123def4561111", "ffffeeee00001111"):
        fake_run_folder(runs, rid)
    with pytest.raises(UnknownRunError) as err:
        find_run("abc123def4560001", roots=[runs])
    assert err.value.nearest[:2] == ["abc123def4560000", "abc123def4561111"]
    assert "ffffeeee00001111" not in err.value.nearest
    result = CliRunner().invoke(app, ["report", "abc123def4560001", "--experiments", str(tmp_path / "experiments")])
    assert result.exit_code == 2
    assert "Nearest known run ids: abc123def4560000, abc123def4561111" in " ".join(result.output.split())


def test_a_run_folder_given_by_its_path_makes_the_run_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run folder holds a manifest.json, as a sweep folder does: given by its path, it was
    reported as an empty sweep ("sweep ... has no runs")."""
    fake_run_folder(tmp_path / "runs", "abc123def4560000")
    run = tmp_path / "runs" / "abc123def4560000"
    (run / "result.json").write_text("{}")
    made: list[str] = []

    def fake_report(ref: str, out: Path | None, **kw: object) -> object:
        made.append(ref)
        raise UnknownRunError(ref, [])

    monkeypatch.setattr("crux_lab.report.run_report", fake_report)
    monkeypatch.setattr("crux_lab.sweep.cli._report_sweep", lambda *a: made.append("a sweep report"))
    CliRunner().invoke(app, ["report", str(run), "--experiments", str(tmp_path / "experiments")])
    assert made == [str(run)]


def test_report_for_an_unknown_sweep_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="no sweep 'nope' has run"):
        sweep_report("nope", experiments=tmp_path)


def test_run_and_sweep_reports_render_offline_in_chromium(tmp_path: Path) -> None:
    # One small debate, stored and ingested as a sweep cell would be.
    config = DebateConfig(topic="Is gold money?", persona_ids=["michael-saylor", "peter-schiff"], engine="dialogue",
                          max_turns=6, seed=1)
    result = run_debate_sync(config)
    folder = write_run(result, default_runs_dir(), sweep_id="s")
    ingest([folder], default_db_path())

    # Run report: 01_debate executed on the stored run, exported with the input hidden.
    info = run_report(result.run_id, tmp_path / "reports" / "run.html", experiments=tmp_path / "experiments")
    page = info.path.read_text(encoding="utf-8")
    assert external_references(page) == []
    assert "Plotly" in page and info.size_bytes > 3_000_000  # plotly.js is in the file
    assert "wb.notebook_debate" not in page and "setup_plotly" not in page  # code input hidden
    figures = len(PLOT_DIV.findall(page))
    assert figures >= 3
    rendered = render(info.path, tmp_path / "chromium-run")
    assert len(RENDERED_PLOT.findall(rendered.dom)) == figures  # every figure was drawn
    assert rendered.external == []
    assert "cl-transcript" in rendered.dom

    # Sweep report: the executed notebook becomes a cell of sweep "s"; the index links to it.
    sweep_dir = tmp_path / "experiments" / "s"
    (sweep_dir / "runs").mkdir(parents=True)
    executed = sweep_dir / "runs" / f"{result.run_id}.ipynb"
    shutil.copy(info.path.with_suffix(".ipynb"), executed)
    (sweep_dir / "manifest.json").write_text(json.dumps({"cells": {result.run_id: {
        "run_id": result.run_id, "status": "done", "notebook": str(executed), "params": {}}}}))
    index = sweep_report("s", experiments=tmp_path / "experiments").path
    html = index.read_text(encoding="utf-8")
    assert external_references(html) == []
    # The page opens with the cruxes found across its runs; the charts follow.
    assert "Cruxes found" in html and html.index("cl-cruxes-across") < PLOT_DIV.search(html).start()  # type: ignore[union-attr]
    links = re.findall(r'href="(runs/[0-9a-f]{16}\.html)"', html)
    assert set(links) == {f"runs/{result.run_id}.html"}  # the runs table and the cruxes found link to it
    assert all((index.parent / link).is_file() for link in links)
    rendered = render(index, tmp_path / "chromium-sweep")
    assert len(RENDERED_PLOT.findall(rendered.dom)) == len(PLOT_DIV.findall(html)) >= 3
    assert rendered.external == []
    # The sweep report's pages share one plotly.js in the report folder, loaded by a relative path.
    assert (index.parent / "plotly.min.js").stat().st_size > 3_000_000
    assert '<script src="plotly.min.js"></script>' in html and index.stat().st_size < 1_000_000
    run_page = index.parent / links[0]
    assert '<script src="../plotly.min.js"></script>' in run_page.read_text(encoding="utf-8")
    shown = render(run_page, tmp_path / "chromium-sweep-run")
    assert len(RENDERED_PLOT.findall(shown.dom)) == len(PLOT_DIV.findall(run_page.read_text(encoding="utf-8"))) >= 3
    # A report for a sweep run reuses the sweep's executed notebook (no kernel).
    again = run_report(result.run_id, tmp_path / "again.html", experiments=tmp_path / "experiments")
    assert again.size_bytes > 3_000_000 and not (tmp_path / "again.ipynb").exists()


def test_blocked_network_is_detected(tmp_path: Path) -> None:
    """Positive control: a page that loads a CDN script is caught by both checks."""
    page = tmp_path / "cdn.html"
    page.write_text('<html><body><script src="https://cdn.example.org/lib.js"></script><p>x</p></body></html>')
    assert external_references(page.read_text()) == ["https://cdn.example.org/lib.js"]
    rendered = render(page, tmp_path / "chromium", budget_ms=3000)
    assert any("cdn.example.org" in u for u in rendered.external)
