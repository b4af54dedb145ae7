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


def test_sweep_with_openai_says_how_it_shares_the_server(tmp_path: Path) -> None:
    """`--backend openai --base-url` set every cell's server, and one line at the start says
    how the workers share it: a local llama.cpp server by slot leases, a remote one not."""
    import sys

    from crux_lab.sweep.cli import _override, sharing_lines
    from crux_lab.sweep.spec import load_sweep

    sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
    from crossing_server import CrossingServer

    spec_file = tmp_path / "s.yaml"
    spec_file.write_text(f"name: s\nnotebook: {DATA / 'tiny.ipynb'}\ngrid:\n  backend: [simulated]\n  value: [1, 2]\n")
    spec = load_sweep(spec_file)
    assert sharing_lines(spec, 2) == []  # no openai cell: nothing to say
    with CrossingServer(slots=5) as server:
        local = _override(spec, backend="openai", base_url=server.base_url)
        assert local.base["backend"] == "openai" and "backend" not in local.grid and local.grid["value"] == [1, 2]
        [line] = sharing_lines(local, 2)
    assert line.startswith(f"local server {server.base_url}: 5 slots (4 for personas, 1 spare), one request at a time per slot across the 2 workers")
    assert "slot leases in" in line
    [remote] = sharing_lines(_override(spec, backend="openai", base_url="https://llm.example.test/v1"), 2)
    assert remote == "remote server https://llm.example.test/v1: no leases; each of the 2 workers sends up to 4 requests at once"


def test_sweep_base_url_must_be_a_url(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(f"name: s\nnotebook: {DATA / 'tiny.ipynb'}\n")
    result = run("sweep", str(spec), "--backend", "openai", "--base-url", "127.0.0.1:8080")
    assert result.exit_code == 2
    assert "--base-url '127.0.0.1:8080' is not an http(s) URL: write it like http://127.0.0.1:8080/v1" in flat(result.output)
