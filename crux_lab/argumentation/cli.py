"""ICCMA-compatible solver command.

Mount in the main CLI with ``app.add_typer(af_app, name="af")``; then::

    crux-lab af -p SE-PR -f graph.af
    crux-lab af -p DC-ST -f graph.apx -a a1
    crux-lab af --problems

Runnable on its own as ``python -m crux_lab.argumentation.cli``. Output follows
ICCMA 2023: ``YES``/``NO`` for DC/DS, ``w 1 4 5`` (or ``NO``) for SE, one
``w ...`` line per extension for EE, the number of extensions for CE.
Errors go to stderr as ``error: FILE:LINE: problem`` with exit code 2.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

import typer

from crux_lab.argumentation.formats import FORMATS, AFParseError, format_from_path, read_af
from crux_lab.argumentation.framework import Arg, ArgumentFramework
from crux_lab.argumentation.semantics import (
    credulously_accepted,
    grounded_extension,
    skeptically_accepted,
)
from crux_lab.argumentation.space import extension_space, some_extension

__all__ = ["PROBLEMS", "af_app", "af_command", "run_task"]

PROBLEMS = (
    "DC-CO",
    "DC-PR",
    "DC-ST",
    "DS-PR",
    "DS-ST",
    "SE-GR",
    "SE-CO",
    "SE-PR",
    "SE-ST",
    "EE-CO",
    "EE-PR",
    "EE-ST",
    "CE-PR",
    "CE-ST",
)
_SEM = {"CO": "complete", "PR": "preferred", "ST": "stable", "GR": "grounded"}


class TaskError(ValueError):
    """A bad task / argument combination (reported like a parse error)."""


def _witness(af: ArgumentFramework, ext: Iterable[Arg]) -> str:
    args = [str(a) for a in af.ordered(ext)]
    return " ".join(["w", *args])


def _parse_arg(af: ArgumentFramework, raw: str | None, fmt: str, task: str) -> Arg:
    if raw is None:
        raise TaskError(f"task {task} needs a query argument (-a)")
    key: Arg = raw
    if fmt == "iccma":
        try:
            key = int(raw)
        except ValueError:
            raise TaskError(f"argument {raw!r} is not an integer (ICCMA format)") from None
    if key not in af:
        raise TaskError(f"argument {raw!r} is not in the framework")
    return key


def _int_str(n: int) -> str:
    """Exact decimal digits, even beyond Python's default int-to-str digit limit."""
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return str(n)
    finally:
        sys.set_int_max_str_digits(limit)


def run_task(af: ArgumentFramework, task: str, arg: Arg | None = None) -> list[str]:
    """Solve one ICCMA task; returns the output lines.

    >>> af = ArgumentFramework.from_edges([1, 2, 3], [(1, 2), (2, 1), (2, 3)])
    >>> run_task(af, "EE-PR")
    ['w 1 3', 'w 2']
    >>> run_task(af, "DS-PR", 3), run_task(af, "CE-ST"), run_task(af, "SE-GR")
    (['NO'], ['2'], ['w'])
    """
    kind, _, code = task.partition("-")
    if task not in PROBLEMS:
        raise TaskError(f"unknown task {task!r}; supported: {', '.join(PROBLEMS)}")
    sem = _SEM[code]
    if kind == "DC":
        return ["YES" if credulously_accepted(af, arg, sem) else "NO"]
    if kind == "DS":
        return ["YES" if skeptically_accepted(af, arg, sem) else "NO"]
    if kind == "SE":
        if sem in ("grounded", "complete"):
            return [_witness(af, grounded_extension(af))]
        ext = some_extension(af, sem)
        return ["NO"] if ext is None else [_witness(af, ext)]
    space = extension_space(af, sem)
    if kind == "CE":
        return [_int_str(space.count())]
    return [_witness(af, e) for e in space]


af_app = typer.Typer(
    name="af",
    help="ICCMA-style abstract argumentation solver (Dung semantics).",
    add_completion=False,
    no_args_is_help=False,
)


@af_app.callback(invoke_without_command=True)
def af_command(
    problem: str | None = typer.Option(None, "-p", "--problem", help="Task, e.g. SE-PR."),
    file: str | None = typer.Option(None, "-f", "--file", help="Framework file."),
    argument: str | None = typer.Option(None, "-a", "--argument", help="Query argument."),
    fmt: str | None = typer.Option(
        None, "--fo", "-fo", help="Input format: iccma, apx or tgf (default: by suffix)."
    ),
    problems: bool = typer.Option(False, "--problems", help="List supported tasks."),
    formats: bool = typer.Option(False, "--formats", help="List supported formats."),
) -> None:
    """Solve an ICCMA task on a framework file."""
    if problems:
        typer.echo("[" + ",".join(PROBLEMS) + "]")
        return
    if formats:
        typer.echo("[" + ",".join(FORMATS) + "]")
        return
    if problem is None or file is None:
        if problem is None and file is None:
            typer.echo("crux_lab argumentation solver; see --help and --problems")
            return
        _fail("both -p TASK and -f FILE are needed")
    assert problem is not None and file is not None
    task = problem.upper()
    in_fmt = (fmt or format_from_path(file)).lower()
    if in_fmt not in FORMATS:
        _fail(f"unknown format {fmt!r}; supported: {', '.join(FORMATS)}")
    if task not in PROBLEMS:
        _fail(f"unknown task {problem!r}; supported: {', '.join(PROBLEMS)}")
    try:
        af = read_af(file, in_fmt)
        query = _parse_arg(af, argument, in_fmt, task) if task[:2] in ("DC", "DS") else None
        lines = run_task(af, task, query)
    except AFParseError as exc:
        _fail(str(exc))
    except TaskError as exc:
        _fail(f"{file}: {exc}")
    for line in lines:
        typer.echo(line)


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code=2)


def main() -> None:
    """Entry point for ``python -m crux_lab.argumentation.cli``."""
    af_app(prog_name="crux-lab af")


if __name__ == "__main__":  # pragma: no cover
    main()
    sys.exit(0)
