"""No list of engine or backend names outside the registries.

An engine or a backend is named in a list, a tuple, a set, the keys of a dict, or an ``==`` /
``in`` comparison with an engine or backend variable only in its own module (the one that
defines it) and in the registries (``crux_lab/engines/__init__.py``, ``crux_lab/backends.py``,
``crux_lab/registry.py``). Everything else (the console, compare, eval, the report, the CLI,
the notebooks) reads the registries, so a plug-in's engine or backend shows up everywhere.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from crux_lab import backends, engines

ROOT = Path(__file__).resolve().parents[1]
REGISTRIES = {"crux_lab/registry.py", "crux_lab/backends.py", "crux_lab/engines/__init__.py"}
# A comparison names an engine or backend when its other side is a variable or attribute called so.
SUBJECTS = ("engine", "backend", "resolved")


def names() -> set[str]:
    return set(engines.registered()) | set(backends.registered())


def own_names(tree: ast.AST) -> set[str]:
    """The engines and backends a module defines: a class body's ``name = "x"`` (an engine, a
    backend class) and ``@backend("x", ...)`` (a backend's factory)."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                target = stmt.target if isinstance(stmt, ast.AnnAssign) else (stmt.targets[0] if isinstance(stmt, ast.Assign) else None)
                value = stmt.value if isinstance(stmt, ast.AnnAssign | ast.Assign) else None
                if isinstance(target, ast.Name) and target.id == "name" and isinstance(value, ast.Constant):
                    own.add(str(value.value))
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and deco.args and isinstance(deco.args[0], ast.Constant):
                    own.add(str(deco.args[0].value))
    return own


def _subject(node: ast.AST) -> bool:
    ident = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return any(s in ident.lower() for s in SUBJECTS)


def offences(source: str, known: set[str], own: set[str] = frozenset()) -> Iterator[tuple[int, list[str]]]:  # type: ignore[assignment]
    """(line, names) of each list, tuple, set, dict or comparison that names engines or backends."""
    tree = ast.parse(source)
    counted = known - own - own_names(tree)

    def named(nodes: list[ast.expr | None]) -> list[str]:
        return [str(n.value) for n in nodes if isinstance(n, ast.Constant) and n.value in counted]

    for node in ast.walk(tree):
        hits: list[str] = []
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            hits = named(list(node.elts))
            strings = [e for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(set(hits)) < 2 and not (hits and len(hits) == len(strings) == len(node.elts)):
                hits = []
        elif isinstance(node, ast.Dict):
            hits = named(list(node.keys))
            if len(set(hits)) < 2:
                hits = []
        elif isinstance(node, ast.Compare) and all(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops):
            sides = [node.left, *node.comparators]
            if any(_subject(s) for s in sides):
                hits = named(list(sides))
                for s in sides:
                    if isinstance(s, ast.List | ast.Tuple | ast.Set):
                        hits += named(list(s.elts))
        if hits:
            yield node.lineno, hits


def sources() -> Iterator[tuple[str, str]]:
    for path in sorted((ROOT / "crux_lab").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel not in REGISTRIES:
            yield rel, path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for i, cell in enumerate(cells):
            code = "".join(cell["source"]) if cell["cell_type"] == "code" else ""
            code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))
            try:
                ast.parse(code)
            except SyntaxError:
                continue
            yield f"{path.relative_to(ROOT).as_posix()} cell {i}", code


def test_no_engine_or_backend_name_lists_outside_the_registries() -> None:
    known = names()
    found = [f"{where}:{line}: {', '.join(hits)}" for where, code in sources() for line, hits in offences(code, known)]
    assert not found, "engine or backend names listed outside the registries (read engines.registered() / backends.registered() instead):\n" + "\n".join(found)


@pytest.mark.parametrize("source", [
    'BACKENDS = ("simulated", "auto", "anthropic", "replay")',
    'ENGINE_STRUCTURE = {"dialogue": "graph", "graph": "graph", "dcg": "dcg", "panel": "rooms"}',
    'ALL_ENGINES = ("blitz", "classical", "graph")',
    'knob_engines = ("blitz",)',
    'if resolved == "anthropic": pass',
    'if result.engine == "dcg": pass',
    'if self.backend.value in ("simulated", "replay"): pass',
])
def test_the_check_catches_the_lists_it_forbids(source: str) -> None:
    assert list(offences(source, names())), source


@pytest.mark.parametrize("source", [
    'TEXT_FIELDS = ("dialogue", "utterance", "text")',  # a JSON field called like an engine
    'hint = {"graph": {}}',  # one key
    'if getattr(seen, "mode", None) == "replay": pass',  # the replay mode, not the backend
    'if s.structure == "dcg": pass',  # what an engine builds
    'class Engine:\n    name = "dialogue"\n    kinds = ("dialogue", "dcg")',  # its own module
])
def test_the_check_leaves_other_strings_alone(source: str) -> None:
    assert not list(offences(source, names())), source
