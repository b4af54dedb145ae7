"""Sweep files: grid expansion, run ids, and the errors a malformed file gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from crux_lab.sweep.runner import NotebookParameterError, check_parameters, notebook_defaults
from crux_lab.sweep.spec import SweepSpecError, config_from_params, load_sweep

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    return path


GOOD = f"""name: s
notebook: {DATA / 'tiny.ipynb'}
workers: 2
base:
  value: 1
grid:
  value: [1, 2, 3]
  fail: [false, true]
seeds: [0, 5]
"""


def test_grid_times_seeds(tmp_path: Path) -> None:
    spec = load_sweep(write(tmp_path, GOOD))
    cells = spec.cells()
    assert len(cells) == 3 * 2 * 2
    assert len({c.run_id for c in cells}) == len(cells)
    assert {c.seed for c in cells} == {0, 5}
    assert spec.out_dir == tmp_path / "s"
    # The run id is a hash of the parameters: the same file gives the same ids.
    assert [c.run_id for c in load_sweep(write(tmp_path, GOOD)).cells()] == [c.run_id for c in cells]


def test_repeats_means_seeds_0_to_n(tmp_path: Path) -> None:
    spec = load_sweep(write(tmp_path, f"name: s\nnotebook: {DATA / 'tiny.ipynb'}\nrepeats: 3\n"))
    assert spec.seeds == [0, 1, 2]


def test_debate_cell_run_id_is_the_debate_run_id() -> None:
    spec = load_sweep(REPO / "experiments" / "demo.yaml")
    defaults = notebook_defaults(spec.notebook)
    cells = spec.cells(defaults)
    assert len(cells) == 8  # 2 engines x 2 topics x 2 seeds
    for cell in cells:
        assert cell.run_id == config_from_params(cell.params).run_id()
    # The notebook's own default (max_turns) is part of the hash, not the DebateConfig default.
    assert cells[0].params["max_turns"] == 12


@pytest.mark.parametrize(
    ("text", "line", "key", "expected"),
    [
        ("name: s\nnotebook: n.ipynb\nworkers: two\n", 3, "workers", "a whole number"),
        ("name: s\nnotebook: n.ipynb\nexecutor: kubernetes\n", 3, "executor", "local, dask, or dask://host:port"),
        ("name: s\nnotebook: n.ipynb\ngrid:\n  engine: dialogue\n", 4, "grid.engine", "a non-empty list"),
        ("name: s\nnotebook: n.ipynb\nseeds: [0, x]\n", 3, "seeds", "a list of whole numbers"),
        ("name: s\nnotebook: n.ipynb\nworkerz: 2\n", 3, "workerz", "one of name, notebook"),
        ("name: s\nnotebook: n.py\n", 2, "notebook", "a path to a .ipynb"),
        ("name: s\nnotebook: n.ipynb\nbase: [1, 2\n", 4, "(syntax)", "valid YAML"),
    ],
)
def test_malformed_file_names_line_key_and_form(tmp_path: Path, text: str, line: int, key: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SweepSpecError) as err:
        load_sweep(path)
    msg = str(err.value)
    assert f"{path}:{line}" in msg
    assert f"'{key}'" in msg
    assert expected in msg


def test_missing_required_key(tmp_path: Path) -> None:
    with pytest.raises(SweepSpecError, match="'notebook' — expected a path to a .ipynb"):
        load_sweep(write(tmp_path, "name: s\n"))


def test_notebook_without_parameters_cell_is_refused() -> None:
    with pytest.raises(NotebookParameterError, match="no cell tagged 'parameters'"):
        check_parameters(DATA / "untagged.ipynb", ["value"])


def test_unknown_parameter_is_refused_with_the_declared_ones() -> None:
    with pytest.raises(NotebookParameterError) as err:
        check_parameters(DATA / "tiny.ipynb", ["value", "vlaue"])
    assert "unknown parameter(s) vlaue" in str(err.value)
    assert "declares: fail, run_dir, seed, value" in str(err.value)
    check_parameters(DATA / "tiny.ipynb", ["value", "fail", "run_id", "sweep"])  # injected names pass
