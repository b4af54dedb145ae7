"""`crux-lab sweep` and `crux-lab report` refuse bad input with one clear line (exit 2)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from crux_lab.cli import app

DATA = Path(__file__).parent / "data"


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def flat(text: str) -> str:
    return " ".join(text.split())


def test_malformed_yaml(tmp_path: Path) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text(f"name: bad\nnotebook: {DATA / 'tiny.ipynb'}\nworkers: 0\n")
    result = run("sweep", str(spec))
    assert result.exit_code == 2
    assert f"{spec}:3: key 'workers' — expected a whole number from 1 to 256, got 0" in flat(result.output)
    assert "Traceback" not in result.output


def test_notebook_without_parameters_cell(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(f"name: s\nnotebook: {DATA / 'untagged.ipynb'}\ngrid:\n  value: [1]\n")
    result = run("sweep", str(spec), "--workers", "1")
    assert result.exit_code == 2
    assert "no cell tagged 'parameters'" in flat(result.output)
    assert not (tmp_path / "s" / "manifest.json").exists()  # refused before anything ran


def test_unknown_parameter(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(f"name: s\nnotebook: {DATA / 'tiny.ipynb'}\ngrid:\n  valeu: [1]\n")
    result = run("sweep", str(spec))
    assert result.exit_code == 2
    assert "unknown parameter(s) valeu" in flat(result.output)


def test_bad_executor_option(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(f"name: s\nnotebook: {DATA / 'tiny.ipynb'}\n")
    result = run("sweep", str(spec), "--executor", "slurm")
    assert result.exit_code == 2 and "expected local, dask, or dask://host:port" in flat(result.output)
