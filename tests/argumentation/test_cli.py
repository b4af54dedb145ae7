"""The ICCMA solver sub-app: output format for every task, clean errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from crux_lab.argumentation.cli import PROBLEMS, af_app

runner = CliRunner()

# 1 <-> 2, 2 -> 3, 4 self-attacking and attacked by nobody else; 5 unattacked.
ICCMA_TEXT = "p af 5\n1 2\n2 1\n2 3\n5 4\n"
# Odd cycle: no stable extension.
ODD_TEXT = "p af 3\n1 2\n2 3\n3 1\n"


@pytest.fixture
def af_file(tmp_path: Path) -> Path:
    p = tmp_path / "g.af"
    p.write_text(ICCMA_TEXT)
    return p


@pytest.fixture
def odd_file(tmp_path: Path) -> Path:
    p = tmp_path / "odd.af"
    p.write_text(ODD_TEXT)
    return p


def run(*args: str) -> tuple[int, str]:
    res = runner.invoke(af_app, list(args))
    return res.exit_code, res.output


EXPECTED = {
    ("DC-CO", "3"): ["YES"],
    ("DC-PR", "4"): ["NO"],
    ("DC-ST", "1"): ["YES"],
    ("DS-PR", "5"): ["YES"],
    ("DS-PR", "3"): ["NO"],
    ("DS-ST", "3"): ["NO"],
    ("SE-GR", None): ["w 5"],
    ("SE-CO", None): ["w 5"],
    ("SE-PR", None): ["w 1 3 5"],
    ("SE-ST", None): ["w 1 3 5"],
    ("EE-CO", None): ["w 5", "w 1 3 5", "w 2 5"],
    ("EE-PR", None): ["w 1 3 5", "w 2 5"],
    ("EE-ST", None): ["w 1 3 5", "w 2 5"],
    ("CE-PR", None): ["2"],
    ("CE-ST", None): ["2"],
}


@pytest.mark.parametrize(("task", "arg"), list(EXPECTED), ids=[t for t, _ in EXPECTED])
def test_every_task(af_file: Path, task: str, arg: str | None) -> None:
    args = ["-p", task, "-f", str(af_file)] + (["-a", arg] if arg else [])
    code, out = run(*args)
    assert code == 0, out
    assert out.splitlines() == EXPECTED[(task, arg)]


def test_all_problems_covered() -> None:
    assert {t for t, _ in EXPECTED} == set(PROBLEMS)


def test_problems_listing() -> None:
    code, out = run("--problems")
    assert code == 0
    assert out.strip() == "[" + ",".join(PROBLEMS) + "]"


def test_no_stable_extension(odd_file: Path) -> None:
    assert run("-p", "SE-ST", "-f", str(odd_file))[1].splitlines() == ["NO"]
    assert run("-p", "EE-ST", "-f", str(odd_file))[1] == ""
    assert run("-p", "CE-ST", "-f", str(odd_file))[1].splitlines() == ["0"]
    assert run("-p", "DS-ST", "-f", str(odd_file), "-a", "1")[1].splitlines() == ["YES"]
    assert run("-p", "DC-ST", "-f", str(odd_file), "-a", "1")[1].splitlines() == ["NO"]
    assert run("-p", "SE-PR", "-f", str(odd_file))[1].splitlines() == ["w"]


def test_apx_and_tgf_use_names(tmp_path: Path) -> None:
    apx = tmp_path / "g.apx"
    apx.write_text("arg(a).\narg(b).\narg(c).\natt(a,b).\natt(b,a).\natt(b,c).\n")
    assert run("-p", "EE-PR", "-f", str(apx))[1].splitlines() == ["w a c", "w b"]
    tgf = tmp_path / "g.txt"
    tgf.write_text("a\nb\nc\n#\na b\nb a\nb c\n")
    assert run("-p", "DC-PR", "-f", str(tgf), "--fo", "tgf", "-a", "c")[1].strip() == "YES"


@pytest.mark.parametrize(
    ("content", "suffix", "needle"),
    [
        ("p af 2\n1 3\n", ".af", ":2: argument 3 out of range"),
        ("1 2\n", ".af", ":1: attack before"),
        ("p af x\n", ".af", ":1: bad header"),
        ("p af 2\n1\n", ".af", ":2: expected 'i j'"),
        ("arg(a).\natt(a,b).\n", ".apx", ":2: attack mentions undeclared argument 'b'"),
        ("arg(a)\n", ".apx", ":1: expected 'arg(x).'"),
        ("a\n#\na b\n", ".tgf", ":3: attack mentions undeclared argument 'b'"),
        ("a b\n", ".tgf", ":1: expected one argument name"),
    ],
)
def test_parse_errors_are_clean(tmp_path: Path, content: str, suffix: str, needle: str) -> None:
    p = tmp_path / f"bad{suffix}"
    p.write_text(content)
    res = runner.invoke(af_app, ["-p", "SE-GR", "-f", str(p)])
    assert res.exit_code == 2
    assert str(p) + needle in res.output
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_bad_usage(af_file: Path) -> None:
    code, out = run("-p", "XX-PR", "-f", str(af_file))
    assert code == 2 and "unknown task" in out
    code, out = run("-p", "DC-PR", "-f", str(af_file))
    assert code == 2 and "needs a query argument" in out
    code, out = run("-p", "DC-PR", "-f", str(af_file), "-a", "zz")
    assert code == 2 and "not an integer" in out
    code, out = run("-p", "DC-PR", "-f", str(af_file), "-a", "9")
    assert code == 2 and "not in the framework" in out
    code, out = run("-p", "SE-GR", "-f", "/nonexistent/x.af")
    assert code == 2 and "cannot read file" in out
    code, out = run("-p", "SE-GR", "-f", str(af_file), "--fo", "xml")
    assert code == 2 and "unknown format" in out


def test_mounts_under_a_parent_app(af_file: Path) -> None:
    import typer

    parent = typer.Typer()

    @parent.command()
    def other() -> None:  # a second command so the parent is a group
        typer.echo("other")

    parent.add_typer(af_app, name="af")
    res = runner.invoke(parent, ["af", "-p", "SE-PR", "-f", str(af_file)])
    assert res.exit_code == 0 and res.output.splitlines() == ["w 1 3 5"]
    res = runner.invoke(parent, ["af", "--problems"])
    assert res.exit_code == 0 and res.output.startswith("[DC-CO,")


def test_module_entry_point(af_file: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "crux_lab.argumentation.cli", "-p", "CE-PR", "-f", str(af_file)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "2"
    bad = af_file.with_name("bad.af")
    bad.write_text("p af 1\n1 2\n")
    proc = subprocess.run(
        [sys.executable, "-m", "crux_lab.argumentation.cli", "-p", "CE-PR", "-f", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert f"{bad}:2: argument 2 out of range 1..1" in proc.stderr
    assert "Traceback" not in proc.stderr
