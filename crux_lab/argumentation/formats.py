"""Read and write frameworks: ICCMA 2023 (``p af N``), ASPARTIX APX and TGF.

Every parse error is an :class:`AFParseError` naming the file, the line and the
problem.

Two guards keep a hostile or mistyped file from exhausting memory:

- an ICCMA header may declare arguments no attack names (isolated arguments), but never
  more than the file could plausibly hold: at most ``max(UNNAMED_ARGS, file bytes)``;
- a **memory budget** (``CRUX_LAB_AF_MEMORY_MB``, default 1024): the file size and an
  estimate of the framework's size (arguments and attacks so far) are checked before and
  while parsing, so an oversized file fails at once instead of running until killed.

>>> parse_af("p af 99999999999\\n", "iccma", "big.af")
Traceback (most recent call last):
...
crux_lab.argumentation.formats.AFParseError: big.af:1: 'p af 99999999999' declares 99,999,999,999 arguments, more than this 17-byte file can hold (at most 100,000); fix N in the header

>>> af = parse_af("p af 3\\n# comment\\n1 2\\n2 3\\n", "iccma")
>>> sorted(af.attacks)
[(1, 2), (2, 3)]
>>> print(dumps_af(af, "apx"), end="")
arg(1).
arg(2).
arg(3).
att(1,2).
att(2,3).
>>> parse_af("arg(a).\\natt(a,b).\\n", "apx", path="x.apx")
Traceback (most recent call last):
...
crux_lab.argumentation.formats.AFParseError: x.apx:2: attack mentions undeclared argument 'b'
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from crux_lab.argumentation.framework import Arg, ArgumentFramework

__all__ = [
    "FORMATS",
    "AFParseError",
    "Format",
    "dumps_af",
    "format_from_path",
    "parse_af",
    "read_af",
    "write_af",
]

Format = Literal["iccma", "apx", "tgf"]
FORMATS: tuple[Format, ...] = ("iccma", "apx", "tgf")
_SUFFIX: dict[str, Format] = {".af": "iccma", ".iccma": "iccma", ".apx": "apx", ".tgf": "tgf"}


# Arguments a header may declare beyond what the file's bytes could name (isolated arguments).
UNNAMED_ARGS = 100_000
MEMORY_ENV = "CRUX_LAB_AF_MEMORY_MB"
DEFAULT_MEMORY_MB = 1024
# Rough bytes per argument and per attack once parsed (Python ints, set and tuple slots).
BYTES_PER_ARG = 120
BYTES_PER_ATTACK = 200


def memory_budget_bytes() -> int:
    """The parse memory budget: ``$CRUX_LAB_AF_MEMORY_MB`` megabytes, default 1024."""
    raw = os.environ.get(MEMORY_ENV, "").strip()
    try:
        mb = float(raw) if raw else DEFAULT_MEMORY_MB
    except ValueError:
        mb = DEFAULT_MEMORY_MB
    return int(max(mb, 1.0) * 1024 * 1024)


def _over_budget(path: str, line: int, what: str, need: int) -> AFParseError:
    budget = memory_budget_bytes()
    return AFParseError(
        path, line,
        f"{what} needs about {need / 2**20:,.0f} MB, over the memory budget of {budget / 2**20:,.0f} MB; "
        f"pass a smaller framework or raise {MEMORY_ENV}",
    )


class AFParseError(ValueError):
    """A malformed framework file: ``path:line: message``."""

    def __init__(self, path: str, line: int, message: str) -> None:
        self.path = path
        self.line = line
        self.message = message
        super().__init__(f"{path}:{line}: {message}")


def format_from_path(path: str | Path, default: Format = "iccma") -> Format:
    """Guess the format from the file suffix.

    >>> format_from_path("x.apx"), format_from_path("y.tgf"), format_from_path("z.af")
    ('apx', 'tgf', 'iccma')
    """
    return _SUFFIX.get(Path(path).suffix.lower(), default)


def _parse_iccma(text: str, path: str) -> ArgumentFramework:
    n: int | None = None
    header_line = 0
    attacks: list[tuple[int, int]] = []
    budget = memory_budget_bytes()
    size = len(text.encode("utf-8"))
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if parts[0] == "p":
            if n is not None:
                raise AFParseError(path, lineno, f"second header (first on line {header_line})")
            if len(parts) != 3 or parts[1] != "af" or not parts[2].isdigit():
                raise AFParseError(path, lineno, f"bad header {line!r}, expected 'p af N'")
            n, header_line = int(parts[2]), lineno
            can_hold = max(UNNAMED_ARGS, size)
            if n > can_hold:
                raise AFParseError(
                    path, lineno,
                    f"'p af {parts[2]}' declares {n:,} arguments, more than this {size:,}-byte file can "
                    f"hold (at most {can_hold:,}); fix N in the header",
                )
            if n * BYTES_PER_ARG > budget:
                raise _over_budget(path, lineno, f"'p af {n}'", n * BYTES_PER_ARG)
            continue
        if n is None:
            raise AFParseError(path, lineno, "attack before the 'p af N' header")
        if len(parts) != 2:
            raise AFParseError(path, lineno, f"expected 'i j' (two arguments), got {line!r}")
        try:
            i, j = int(parts[0]), int(parts[1])
        except ValueError:
            raise AFParseError(path, lineno, f"arguments must be integers, got {line!r}") from None
        for x in (i, j):
            if not 1 <= x <= n:
                raise AFParseError(path, lineno, f"argument {x} out of range 1..{n}")
        attacks.append((i, j))
        if len(attacks) % 65536 == 0 and n * BYTES_PER_ARG + len(attacks) * BYTES_PER_ATTACK > budget:
            raise _over_budget(path, lineno, f"{len(attacks):,} attacks", n * BYTES_PER_ARG + len(attacks) * BYTES_PER_ATTACK)
    if n is None:
        raise AFParseError(path, max(1, len(text.splitlines())), "missing 'p af N' header")
    return ArgumentFramework(frozenset(range(1, n + 1)), frozenset(attacks))


_NAME = r"[^\s(),.%]+(?:\.[^\s(),.%]+)*"
_APX_STMT = re.compile(rf"\s*(arg|att)\s*\(\s*({_NAME})\s*(?:,\s*({_NAME})\s*)?\)\s*\.")


def _parse_apx(text: str, path: str) -> ArgumentFramework:
    args: list[str] = []
    declared: set[str] = set()
    attacks: list[tuple[str, str]] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("%", 1)[0]
        pos = 0
        while pos < len(line):
            if not line[pos:].strip():
                break
            m = _APX_STMT.match(line, pos)
            if m is None:
                bad = line[pos:].strip()
                raise AFParseError(
                    path, lineno, f"expected 'arg(x).' or 'att(x,y).', got {bad[:40]!r}"
                )
            kind, a, b = m.group(1), m.group(2), m.group(3)
            if kind == "arg":
                if b is not None:
                    raise AFParseError(
                        path, lineno, f"arg/1 takes one argument: {m.group(0).strip()!r}"
                    )
                if a not in declared:
                    declared.add(a)
                    args.append(a)
            else:
                if b is None:
                    raise AFParseError(
                        path, lineno, f"att/2 takes two arguments: {m.group(0).strip()!r}"
                    )
                for x in (a, b):
                    if x not in declared:
                        raise AFParseError(
                            path, lineno, f"attack mentions undeclared argument {x!r}"
                        )
                attacks.append((a, b))
            pos = m.end()
    return ArgumentFramework(frozenset(args), frozenset(attacks))


def _parse_tgf(text: str, path: str) -> ArgumentFramework:
    args: set[str] = set()
    attacks: list[tuple[str, str]] = []
    in_edges = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line == "#":
            if in_edges:
                raise AFParseError(path, lineno, "second '#' separator")
            in_edges = True
            continue
        parts = line.split()
        if not in_edges:
            if len(parts) != 1:
                raise AFParseError(
                    path, lineno, f"expected one argument name per line, got {line!r}"
                )
            args.add(parts[0])
        else:
            if len(parts) != 2:
                raise AFParseError(path, lineno, f"expected 'attacker target', got {line!r}")
            for x in parts:
                if x not in args:
                    raise AFParseError(path, lineno, f"attack mentions undeclared argument {x!r}")
            attacks.append((parts[0], parts[1]))
    return ArgumentFramework(frozenset(args), frozenset(attacks))


def parse_af(text: str, fmt: str = "iccma", path: str = "<string>") -> ArgumentFramework:
    """Parse framework text in ``fmt`` (``iccma``, ``apx`` or ``tgf``).

    >>> sorted(parse_af("a\\nb\\n#\\na b\\n", "tgf").attacks)
    [('a', 'b')]
    >>> parse_af("p af 2\\n1 3\\n", "iccma", "f.af")
    Traceback (most recent call last):
    ...
    crux_lab.argumentation.formats.AFParseError: f.af:2: argument 3 out of range 1..2
    """
    if fmt == "iccma":
        return _parse_iccma(text, path)
    if fmt == "apx":
        return _parse_apx(text, path)
    if fmt == "tgf":
        return _parse_tgf(text, path)
    raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")


def read_af(path: str | Path, fmt: str | None = None) -> ArgumentFramework:
    """Read a framework file; the format defaults to the one named by the suffix."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise AFParseError(str(p), 0, f"cannot read file: {exc.strerror or exc}") from None
    # The text itself, then the parsed framework (about one attack per 8 bytes of text).
    if size * (1 + BYTES_PER_ATTACK // 8) > memory_budget_bytes():
        raise _over_budget(str(p), 0, f"this {size:,}-byte file", size * (1 + BYTES_PER_ATTACK // 8))
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise AFParseError(str(p), 1, f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise AFParseError(str(p), 0, f"cannot read file: {exc.strerror or exc}") from None
    return parse_af(text, fmt or format_from_path(p), str(p))


def _iccma_numbering(af: ArgumentFramework) -> dict[Arg, int]:
    n = len(af)
    if af.arguments == frozenset(range(1, n + 1)):
        return {i: i for i in range(1, n + 1)}
    return {a: i for i, a in enumerate(af, start=1)}


def dumps_af(af: ArgumentFramework, fmt: str = "iccma") -> str:
    """Serialise ``af``. In ICCMA format non-``1..N`` arguments are numbered in
    canonical order and the mapping is written as ``# i name`` comments.

    >>> af = ArgumentFramework.from_edges("ab", [("a", "b")])
    >>> print(dumps_af(af, "iccma"), end="")
    p af 2
    # 1 a
    # 2 b
    1 2
    >>> print(dumps_af(af, "tgf"), end="")
    a
    b
    #
    a b
    """
    order = list(af)
    att = sorted(af.attacks, key=lambda p: (af._index.pos[p[0]], af._index.pos[p[1]]))
    if fmt == "iccma":
        num = _iccma_numbering(af)
        lines = [f"p af {len(af)}"]
        if any(num[a] != a for a in order):
            lines += [f"# {num[a]} {a}" for a in order]
        lines += [f"{num[a]} {num[b]}" for a, b in att]
    elif fmt == "apx":
        lines = [f"arg({a})." for a in order] + [f"att({a},{b})." for a, b in att]
    elif fmt == "tgf":
        lines = [str(a) for a in order] + ["#"] + [f"{a} {b}" for a, b in att]
    else:
        raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
    return "\n".join(lines) + "\n"


def write_af(af: ArgumentFramework, path: str | Path, fmt: str | None = None) -> None:
    """Write ``af`` to ``path`` (format from the suffix unless given)."""
    p = Path(path)
    p.write_text(dumps_af(af, fmt or format_from_path(p)), encoding="utf-8")
