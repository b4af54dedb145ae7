"""The AF reader refuses a header count the file cannot hold and keeps to a memory budget
(issue 16: `p af 99999999999`, 17 bytes, used to run until killed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from crux_lab.argumentation.formats import UNNAMED_ARGS, AFParseError, parse_af, read_af


def test_a_huge_header_in_a_tiny_file_is_refused_at_once(tmp_path: Path) -> None:
    f = tmp_path / "big.af"
    f.write_text("p af 99999999999\n")
    with pytest.raises(AFParseError, match=r"big\.af:1: 'p af 99999999999' declares 99,999,999,999 arguments, "
                                           r"more than this 17-byte file can hold.*fix N in the header"):
        read_af(f)


def test_isolated_arguments_are_still_allowed() -> None:
    af = parse_af(f"p af {UNNAMED_ARGS}\n1 2\n", "iccma", "ok.af")
    assert len(af.arguments) == UNNAMED_ARGS and af.attacks == frozenset({(1, 2)})


def test_the_memory_budget_applies_to_headers_and_file_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRUX_LAB_AF_MEMORY_MB", "1")
    with pytest.raises(AFParseError, match=r"m\.af:1: 'p af 90000' needs about 10 MB, over the memory budget of 1 MB.*CRUX_LAB_AF_MEMORY_MB"):
        parse_af("p af 90000\n", "iccma", "m.af")
    f = tmp_path / "long.apx"
    f.write_text("".join(f"arg(a{i}).\n" for i in range(60_000)))
    with pytest.raises(AFParseError, match=r"long\.apx:0: this [\d,]+-byte file needs about \d+ MB, over the memory budget"):
        read_af(f)
