"""The layer contract (pyproject.toml ``[tool.importlinter]``, docs/architecture.md "Layers")
holds: every import of crux_lab, in-function imports included, points down.

A new upward import fails :func:`test_imports_point_down` with import-linter's report of the
offending line; fix it by moving code down (or the import up), not by editing the contract.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from importlinter.application.use_cases import lint_imports
from importlinter.configuration import configure

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"

#: The order docs/architecture.md promises, top to bottom (each name must sit in a lower layer
#: than the one before it).
PROMISED_ORDER = [
    "crux_lab.cli",
    "crux_lab.eval",
    "crux_lab.workbench",
    "crux_lab.runner",
    "crux_lab.engines",
    "crux_lab.analysis",
    "crux_lab.llm",
    "crux_lab.personas",
    "crux_lab.models",
]


def _config() -> dict[str, Any]:
    with PYPROJECT.open("rb") as fh:
        return tomllib.load(fh)["tool"]["importlinter"]


def _layers_contract(config: dict[str, Any]) -> dict[str, Any]:
    contracts = [c for c in config["contracts"] if c.get("id") == "layers"]
    assert len(contracts) == 1, "pyproject.toml must keep exactly one contract with id 'layers'"
    return contracts[0]


def _layer_index(layers: list[str]) -> dict[str, int]:
    return {m.strip("() "): i for i, layer in enumerate(layers) for m in layer.replace(":", "|").split("|")}


def test_the_layers_contract_is_present_and_in_the_documented_order() -> None:
    config = _config()
    assert config["root_package"] == "crux_lab"
    contract = _layers_contract(config)
    assert contract["type"] == "layers"
    index = _layer_index(contract["layers"])
    positions = [index[name] for name in PROMISED_ORDER]
    assert positions == sorted(positions) and len(set(positions)) == len(positions), (
        f"layers out of the documented order: {dict(zip(PROMISED_ORDER, positions, strict=True))}"
    )


def _lint(tmp_path: Path, contract: dict[str, Any]) -> bool:
    """Run import-linter on ``contract`` alone (no cache, no logo); True when it is kept."""
    lines = ['[tool.importlinter]', 'root_package = "crux_lab"', "", "[[tool.importlinter.contracts]]"]
    for key, value in contract.items():
        if isinstance(value, list):
            items = ", ".join(f'"{v}"' for v in value)
            lines.append(f"{key} = [{items}]")
        else:
            lines.append(f'{key} = "{value}"')
    config = tmp_path / "importlinter.toml"
    config.write_text("\n".join(lines) + "\n")
    configure()  # what the lint-imports command does first: its readers and graph builder
    return bool(lint_imports(config_filename=str(config), cache_dir=None, no_logo=True))


def test_imports_point_down(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kept = _lint(tmp_path, _layers_contract(_config()))
    assert kept, capsys.readouterr().out


def test_the_contract_catches_an_upward_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not vacuous: with the layers upside down, the package's real imports break it."""
    contract = dict(_layers_contract(_config()))
    contract["layers"] = list(reversed(contract["layers"]))
    contract.pop("ignore_imports", None)
    assert not _lint(tmp_path, contract)
    assert "is not allowed to import" in capsys.readouterr().out  # broken, not misconfigured
