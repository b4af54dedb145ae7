"""Every notebook as a reader sees it: executed with papermill, exported to HTML the way
``crux-lab report`` exports it (input hidden, offline), opened in headless Chromium with the
network blocked, and every figure the notebook promises must have drawn marks (points, bars,
heatmap cells, table cells), not only a plotly div. The visible text of the figures must hold
no template text and no internal ids.

Nothing here waits on the wall clock: Chromium runs on virtual time, which only advances when
the page is idle, so a loaded machine makes the test slower, never different."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import papermill
import pytest

from crux_lab.models import DebateConfig
from crux_lab.report import export_html, external_references
from crux_lab.runner import run_debate_sync
from crux_lab.store import ingest, write_run
from tests.report.chromium import render

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
PERSONAS = ["michael-saylor", "peter-schiff", "arthur-hayes"]

# Injected into the exported page: after load, one JSON record per plotly figure with the
# marks it drew and the text it shows. Chromium's --dump-dom then carries it out.
PROBE = """<script>
window.addEventListener('load', function () { setTimeout(function () {
  var figs = Array.prototype.slice.call(document.querySelectorAll('.plotly-graph-div'));
  var out = figs.map(function (d) {
    var q = function (s) { return d.querySelectorAll(s).length; };
    var texts = Array.prototype.slice.call(d.querySelectorAll('text')).map(function (t) { return t.textContent; });
    return {
      title: (d.querySelector('.gtitle') || {textContent: ''}).textContent,
      marks: q('.scatterlayer .point') + q('.scatterlayer path.js-line') + q('.barlayer .point path')
           + q('.heatmaplayer image') + q('.hm image') + q('.boxlayer path.box') + q('.table .cell-text'),
      labels: q('.scatterlayer .textpoint'),
      arrows: q('.annotation-arrow-g path'),
      text: texts.join(' | ')
    };
  });
  var pre = document.createElement('pre');
  pre.id = 'cl-marks';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, 2000); });
</script>"""
MARKS = re.compile(r'<pre id="cl-marks">(.*?)</pre>', re.DOTALL)
# Internal ids and template text a reader must never see in a figure.
FORBIDDEN = re.compile(r"\barg-\d+\b|\b[a-z]+\.p\d+\b|%\{|\bundefined\b|\bcrux-[a-z]+-?\d*\b|\bchunk[-_]\d+")


@dataclass(frozen=True)
class Figure:
    title: str
    marks: int
    labels: int
    arrows: int
    text: str


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Small runs of the engines whose views differ: an argument graph (dialogue), a dispute
    graph (dcg), crux cards (panel, crux_rooms); all of sweep 'fx'."""
    root = tmp_path_factory.mktemp("figstore")
    runs, db = root / "runs", root / "fx.duckdb"
    ids: dict[str, str] = {}
    for engine in ("dialogue", "dcg", "panel", "crux_rooms"):
        # the dcg figures need a run with a dispute: some seeds stay on the topic itself, and on
        # others the echo guard keeps out the simulated speakers' turns said again in other words
        for seed in range(8):
            result = run_debate_sync(DebateConfig(topic="Is Bitcoin a better long-term store of value than gold?",
                                                  persona_ids=PERSONAS, engine=engine, max_turns=12, seed=seed))
            if engine != "dcg" or result.dcg.disputes:
                break
        assert engine != "dcg" or result.dcg.disputes, "no dcg run with a dispute in eight seeds"
        write_run(result, runs, sweep_id="fx")
        ids[engine] = result.run_id
    ingest([runs], db)
    return {"runs": runs, "db": db, "ids": ids}


def execute(name: str, out_dir: Path, **parameters: object) -> Path:
    out = out_dir / f"{name}.ipynb"
    papermill.execute_notebook(str(NOTEBOOKS / f"{name}.ipynb"), str(out), parameters=parameters,
                               kernel_name="python3", progress_bar=False, cwd=str(NOTEBOOKS))
    return out


def rendered_figures(notebook: Path, workdir: Path) -> tuple[list[Figure], str]:
    """Export like a report, check it is offline, render it in Chromium: the figures drawn."""
    page = export_html(notebook, workdir / "report.html").path
    html = page.read_text(encoding="utf-8")
    assert external_references(html) == []
    probe = workdir / "probe.html"
    probe.write_text(html.replace("</body>", PROBE + "</body>"), encoding="utf-8")
    shown = render(probe, workdir / "chromium", budget_ms=20000)
    assert shown.external == []
    found = MARKS.search(shown.dom)
    assert found, "the page never finished loading"
    records = json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"'))
    return [Figure(**r) for r in records], html


def check(figures: list[Figure], promised: list[str]) -> None:
    """Each promised title (a regular expression matched at the start) names exactly one drawn
    figure, every figure is promised, and no figure shows internal ids or template text."""
    titles = [f.title for f in figures]
    for want in promised:
        matching = [f for f in figures if re.match(want, f.title)]
        assert len(matching) == 1, f"{want!r} not among {titles}"
        assert matching[0].marks > 0, f"{want!r} has no drawn marks"
    assert len(figures) == len(promised), titles
    for f in figures:
        assert not FORBIDDEN.search(f.text), (f.title, FORBIDDEN.search(f.text))


CASES: dict[str, tuple[str, dict[str, object], list[str]]] = {
    "01 dialogue": ("01_debate", {"from_run": "dialogue"}, ["Argument graph over the debate", "Argument graph(?! over)", "Asked alone", "Ledger"]),
    "01 dcg": ("01_debate", {"from_run": "dcg"}, ["Dispute graph over the debate", "Disputes: who holds", "Asked alone", "Ledger"]),
    "01 panel": ("01_debate", {"from_run": "panel"}, ["The debate as it went", "Crux cards: where", "Asked alone", "Ledger"]),
    "02": ("02_belief_graphs", {}, ["Belief graph: Michael Saylor", "Retrieved subgraph"]),
    "03 dialogue": ("03_argument_framework", {"run": "dialogue"}, ["Argument graph over the debate", "Argument graph, step by step"]),
    "04 panel": ("04_alignment_matrix", {"run": "panel"}, ["Persona × crux card", "Persona × persona disagreement", "Crux types"]),
    "05 panel": ("05_position_shifts", {"run": "panel"}, ["Position shifts", "Stance timeline", "Asked alone"]),
    "06": ("06_benchmark", {"sweep": "fx", "db": "<db>"}, ["Asked alone", "Engine comparison", "Regime distribution", "n_cruxes over seeds", "Cost per run"]),
    "07": ("07_evaluation", {}, ["Crux recovery per engine", r"Crux recovery \(f1\) as the offline backend's failure knobs", "Per-debate metrics",
                                 "Polis check"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_promised_figure_draws(case: str, tmp_path: Path, store: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRUX_LAB_DB", str(store["db"]))
    monkeypatch.setenv("CRUX_LAB_RUNS", str(store["runs"]))
    name, params, promised = CASES[case]
    ids = store["ids"]
    params = {k: (ids.get(v, v) if isinstance(v, str) else v) for k, v in params.items()}
    params = {k: (str(store["db"]) if v == "<db>" else v) for k, v in params.items()}
    notebook = execute(name, tmp_path, **params)
    figures, html = rendered_figures(notebook, tmp_path)
    check(figures, promised)
    if name in ("01_debate", "03_argument_framework"):
        graph = next((f for f in figures if re.match("Argument graph(?! over)", f.title)), None)
        if graph is not None:  # one short title per argument, and the attacks drawn as arrows
            assert graph.labels > 0 and graph.arrows > 0
        assert "Cruxes</h2>" in html or 'id="Cruxes"' in html  # the crux table has its own heading
    if name == "01_debate" and case != "01 dialogue":
        assert "modelled, not billed" in html


def test_benchmark_without_runs_says_so_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRUX_LAB_DB", str(tmp_path / "empty.duckdb"))
    notebook = execute("06_benchmark", tmp_path)
    figures, html = rendered_figures(notebook, tmp_path)
    assert figures == []  # no empty axes
    assert html.count("No data yet") == 1


def test_an_unknown_run_id_is_a_clear_message_in_the_first_output(tmp_path: Path, store: dict,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRUX_LAB_DB", str(store["db"]))
    monkeypatch.setenv("CRUX_LAB_RUNS", str(store["runs"]))
    wrong = str(store["ids"]["dcg"])[:-3] + "xyz"
    with pytest.raises(papermill.PapermillExecutionError):
        execute("03_argument_framework", tmp_path, run=wrong)
    nb = nbformat.read(tmp_path / "03_argument_framework.ipynb", as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])
               for o in c.get("outputs", [])]
    first = outputs[0]
    assert first["output_type"] == "error"
    text = "\n".join(first["traceback"])
    assert text.startswith("No such run: unknown run") and str(store["ids"]["dcg"]) in text  # the nearest id
    assert "Traceback" not in text and 'File "' not in text
