"""Entry-point plug-ins: crux_lab's own engines and backends register through them; another
package's appear with no edit to crux_lab; a broken plug-in, or one taking a name already
registered, is one warning line naming it and never breaks the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from crux_lab import backends, engines
from crux_lab.analysis.metric_registry import METRICS
from crux_lab.cli import COMMANDS, app, mount_subapps, subapps
from crux_lab.registry import entry_points
from tests.plugins.installed import installed

ENGINE_GROUP = "crux_lab.engines"
BACKEND_GROUP = "crux_lab.backends"

ENGINE_MODULE = '''
from typing import ClassVar
from crux_lab.engines import register_engine
from crux_lab.engines.direct.direct import DirectEngine

@register_engine
class {cls}(DirectEngine):
    name: ClassVar[str] = "{name}"
    description: ClassVar[str] = "a test plug-in engine"
'''

BACKEND_MODULE = '''
from crux_lab.backends import backend

@backend("{name}", description="a test plug-in backend", billed={billed}, tiers="defaults")
def factory(args):
    raise RuntimeError("not built in this test")
'''


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_crux_labs_own_engines_and_backends_are_entry_points() -> None:
    own_engines = [ep.name for ep in entry_points(ENGINE_GROUP)]
    own_backends = [ep.name for ep in entry_points(BACKEND_GROUP)]
    assert sorted(own_engines) == sorted(engines.registered())
    assert sorted(own_backends) == sorted(backends.registered())
    # the listing order is the registries' own, whatever order the metadata holds them in
    assert engines.registered()[:3] == ["dialogue", "dcg", "panel"]
    assert backends.names()[:2] == ("auto", "simulated")
    assert engines.problems() == [] and backends.problems() == []


def test_another_packages_engine_and_backend_appear_after_crux_labs(tmp_path: Path) -> None:
    with installed(
        tmp_path / "site", "crux-lab-extra",
        {ENGINE_GROUP: {"extra": "extra_pkg.engine:ExtraEngine"}, BACKEND_GROUP: {"extra_llm": "extra_pkg.llm:factory"}},
        {"extra_pkg.__init__": "", "extra_pkg.engine": ENGINE_MODULE.format(cls="ExtraEngine", name="extra"),
         "extra_pkg.llm": BACKEND_MODULE.format(name="extra_llm", billed=True)},
    ):
        assert engines.registered()[-1] == "extra" and engines.registered()[0] == "dialogue"
        assert backends.names()[-1] == "extra_llm" and "extra_llm" in backends.billed_names()
        code, out, err = _invoke("engines", "--json")
        assert code == 0 and '"extra": "a test plug-in engine"' in out and err == ""
        code, out, err = _invoke("backends")
        assert code == 0 and "extra_llm" in out and err == ""
    assert "extra" not in engines.registered() and "extra_llm" not in backends.names()


def test_a_plugin_that_fails_to_import_is_one_warning_line(tmp_path: Path) -> None:
    with installed(
        tmp_path / "site", "crux-lab-broken",
        {ENGINE_GROUP: {"broken": "broken_pkg.missing:Engine"}, BACKEND_GROUP: {"gone": "broken_pkg.gone:factory"}},
        {"broken_pkg.__init__": ""},
    ):
        code, out, err = _invoke("engines")
        assert code == 0 and "dialogue" in out
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("warning: engine plugin 'broken' of package crux-lab-broken failed to import")
        assert "broken_pkg.missing" in lines[0] and "ModuleNotFoundError" in lines[0]
        code, out, err = _invoke("backends")
        assert code == 0 and "simulated" in out
        assert err.strip() == (
            "warning: backend plugin 'gone' of package crux-lab-broken failed to import "
            "(broken_pkg.gone:factory: ModuleNotFoundError: No module named 'broken_pkg.gone'); left out."
        )
        code, _, _ = _invoke("debate", "--help")  # the rest of the CLI works
        assert code == 0
        assert engines.get("dcg").name == "dcg"


def test_a_name_clash_is_one_line_naming_the_plugin_the_name_and_the_package(tmp_path: Path) -> None:
    with installed(
        tmp_path / "site", "crux-lab-clash",
        {ENGINE_GROUP: {"mine": "clash_pkg.engine:Mine"},
         BACKEND_GROUP: {"mine": "clash_pkg.llm:factory", "auto": "clash_pkg.auto:factory"}},
        {"clash_pkg.__init__": "", "clash_pkg.engine": ENGINE_MODULE.format(cls="Mine", name="dialogue"),
         "clash_pkg.llm": BACKEND_MODULE.format(name="openai", billed=False),
         "clash_pkg.auto": BACKEND_MODULE.format(name="auto", billed=False)},
    ):
        assert engines.problems() == [
            "engine plugin 'mine' of package crux-lab-clash: the name 'dialogue' is already registered by "
            "crux_lab.engines.dialogue.dialogue; left out."
        ]
        assert engines.get("dialogue").__class__.__module__ == "crux_lab.engines.dialogue.dialogue"
        assert backends.problems() == [
            "backend plugin 'auto' of package crux-lab-clash: the name 'auto' is already registered by crux_lab; left out.",
            "backend plugin 'mine' of package crux-lab-clash: the name 'openai' is already registered by "
            "crux_lab.llm.factories; left out.",
        ]
        assert backends.spec("openai").billed  # crux_lab's openai is untouched
        code, _, err = _invoke("engines")
        assert code == 0 and err.count("warning: ") == 1 and "'dialogue'" in err


def test_an_entry_point_to_an_undecorated_backend_is_refused_in_one_line(tmp_path: Path) -> None:
    with installed(
        tmp_path / "site", "crux-lab-plain", {BACKEND_GROUP: {"plain": "plain_pkg:factory"}},
        {"plain_pkg.__init__": "def factory(args):\n    return None\n"},
    ):
        assert backends.problems() == [
            "backend plugin 'plain' of package crux-lab-plain: plain_pkg:factory is not a factory decorated "
            "with @crux_lab.backends.backend; left out."
        ]


def test_metrics_and_commands_from_another_package(tmp_path: Path) -> None:
    metric_code = "def toy_count(result, inputs):\n    return float(len(result.cruxes))\n"
    command_code = "import typer\napp = typer.Typer()\n\n@app.command()\ndef hello() -> None:\n    print('hello from a plug-in')\n"
    with installed(
        tmp_path / "site", "crux-lab-more",
        {"crux_lab.metrics": {"toy_count": "more_pkg.metrics:toy_count"},
         "crux_lab.commands": {"toy": "more_pkg.cli:app", "eval": "more_pkg.cli:app"}},
        {"more_pkg.__init__": "", "more_pkg.metrics": metric_code, "more_pkg.cli": command_code},
    ):
        assert METRICS.get("toy_count").name == "toy_count"
        assert "toy" in COMMANDS and COMMANDS.get("eval") == "crux_lab.eval.cli:app"
        assert COMMANDS.problems == [
            "command plugin 'eval' of package crux-lab-more: the name 'eval' is already registered by "
            "crux_lab.eval.cli:app; left out."
        ]
        import typer

        fresh = typer.Typer()
        assert "toy" in mount_subapps(fresh, [s for s in subapps() if s[2] == "toy"])
        result = CliRunner().invoke(fresh, ["toy", "hello"])
        assert "hello from a plug-in" in result.output
    assert "toy_count" not in METRICS


@pytest.mark.parametrize("group", [ENGINE_GROUP, BACKEND_GROUP])
def test_the_entry_points_of_a_checkout_installed_before_they_existed(group: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # An editable install whose metadata predates the entry points reads them from pyproject.toml.
    from crux_lab import registry

    installed_eps = entry_points(group)
    monkeypatch.setattr(registry, "_installed_entry_points", lambda g: ())
    assert {(ep.name, ep.value) for ep in entry_points(group)} == {(ep.name, ep.value) for ep in installed_eps}
