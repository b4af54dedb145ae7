"""The notebooks: committed without outputs, each with a `parameters` cell; every notebook runs
under nbval (--nbval-lax, sanitize file) with its defaults and through papermill with
non-default parameters, on the simulated backend. Each run starts a kernel (seconds), so the
debates are small."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest

from crux_lab.models import DebateConfig
from crux_lab.runner import run_debate_sync
from crux_lab.store import ingest, load_result, write_run
from crux_lab.workbench import debate_config

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
OURS = ["00_console", "01_debate", "02_belief_graphs", "03_argument_framework", "04_alignment_matrix", "05_position_shifts", "06_benchmark"]
SANITIZE = Path(__file__).parent / "nbval_sanitize.cfg"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A database and runs folder with a few small runs of sweep 'fx'."""
    root = tmp_path_factory.mktemp("nbstore")
    runs, db = root / "runs", root / "fx.duckdb"
    ids: dict[str, str] = {}
    for engine, seed in (("dialogue", 0), ("crux_rooms", 0), ("blitz", 0), ("blitz", 1)):
        result = run_debate_sync(DebateConfig(topic="Is gold money?", persona_ids=["michael-saylor", "peter-schiff", "arthur-hayes"],
                                              engine=engine, max_turns=6, seed=seed))
        write_run(result, runs, sweep_id="fx")
        ids[f"{engine}{seed}"] = result.run_id
    ingest([runs], db)
    return {"runs": runs, "db": db, "ids": ids}


@pytest.mark.parametrize("name", OURS)
def test_committed_notebook_is_clean_and_parameterized(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1 and tagged[0].cell_type == "code"
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")
    assert len(papermill.inspect_notebook(str(NOTEBOOKS / f"{name}.ipynb"))) >= 3
    # Thin cells: a notebook calls crux_lab; no function or class definitions in cells.
    assert not any(line.lstrip().startswith(("def ", "class ")) for c in nb.cells for line in c.source.splitlines())


def outputs_text(nb: nbformat.NotebookNode) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(str(out.get("text", "")))
            parts.extend(str(v) for v in out.get("data", {}).values())
    return "\n".join(parts)


def execute(name: str, tmp_path: Path, **parameters: object) -> nbformat.NotebookNode:
    out = tmp_path / f"{name}.out.ipynb"
    papermill.execute_notebook(str(NOTEBOOKS / f"{name}.ipynb"), str(out), parameters=parameters,
                               kernel_name="python3", progress_bar=False, cwd=str(NOTEBOOKS))
    return nbformat.read(out, as_version=4)


@pytest.mark.parametrize("name", OURS)
def test_papermill_with_non_default_parameters(name: str, tmp_path: Path, store: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRUX_LAB_DB", str(store["db"]))
    monkeypatch.setenv("CRUX_LAB_RUNS", str(store["runs"]))
    ids = store["ids"]
    if name == "00_console":
        nb = execute(name, tmp_path, deck="housing", max_turns=4)
        views = [o for c in nb.cells for o in c.get("outputs", []) if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
        assert len(views) == 1  # the console widget, shown by the last cell
    elif name == "01_debate":
        params = {"topic": "Should frontier AI models be open-sourced?", "personas": ["alignment-researcher", "open-source-builder"],
                  "engine": "graph", "seed": 4, "max_turns": 6, "sim": {"missed_attack": 0.3}, "run_dir": str(tmp_path / "runs")}
        nb = execute(name, tmp_path, **params)
        expected = debate_config(params["topic"], params["personas"], "graph", seed=4, max_turns=6, sim={"missed_attack": 0.3})
        folder = tmp_path / "runs" / expected.run_id()
        assert load_result(folder).config == expected  # the run folder of exactly these parameters
        assert expected.run_id() in outputs_text(nb) and "cl-transcript" in outputs_text(nb)
    elif name == "02_belief_graphs":
        nb = execute(name, tmp_path, persona="tenant-organizer", claim="Rent control protects tenants from displacement", k=3)
        text = outputs_text(nb)
        assert "Rent control protects tenants from displacement" in text and "The Tenant Organiser" in text
    elif name in ("03_argument_framework", "04_alignment_matrix"):
        run_id = ids["dialogue0"] if name.startswith("03") else ids["crux_rooms0"]
        nb = execute(name, tmp_path, run=run_id)
        assert run_id in outputs_text(nb)
    elif name == "05_position_shifts":
        nb = execute(name, tmp_path, engine="dcg", seed=3, max_turns=6, personas=["michael-saylor", "vitalik-buterin"])
        text = outputs_text(nb)
        assert "Position shifts" in text and "Vitalik Buterin" in text
    else:
        nb = execute(name, tmp_path, sweep="fx", db=str(store["db"]), links_to="runs")
        text = outputs_text(nb)
        assert "4 run(s)" in text
        assert all(f'href="runs/{rid}.html"' in text for rid in ids.values())
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []


@pytest.mark.parametrize("name", OURS)
def test_nbval_lax_runs_the_committed_defaults(name: str, tmp_path: Path, store: dict) -> None:
    env = {**os.environ, "CRUX_LAB_DB": str(store["db"]), "CRUX_LAB_RUNS": str(tmp_path / "runs")}
    env.pop("ANTHROPIC_API_KEY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env", "--nbval-sanitize-with", str(SANITIZE),
         "-p", "no:cacheprovider", "-p", "no:xdist", "-q", "-o", "addopts=", str(NOTEBOOKS / f"{name}.ipynb")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout
