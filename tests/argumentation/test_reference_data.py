"""Every reference framework, for every semantics it carries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crux_lab.argumentation import semantics as S
from crux_lab.argumentation.formats import read_af
from crux_lab.argumentation.framework import ArgumentFramework
from crux_lab.argumentation.space import count_extensions, extension_space

from .conftest import DATA, load_json

EXT_FUNCS = {
    "complete": S.complete_extensions,
    "preferred": S.preferred_extensions,
    "stable": S.stable_extensions,
    "semi_stable": S.semi_stable_extensions,
    "stage": S.stage_extensions,
}


def norm(exts: Any) -> list[list[str]]:
    return sorted(sorted(str(a) for a in e) for e in exts)


def names(args: Any) -> list[str]:
    return sorted(str(a) for a in args)


# -- classic -----------------------------------------------------------------

CLASSIC = load_json(DATA / "classic" / "classic_examples.json")["examples"]


@pytest.mark.parametrize("ex", CLASSIC, ids=[e["id"] for e in CLASSIC])
def test_classic(ex: dict[str, Any]) -> None:
    af = ArgumentFramework.from_edges(ex["arguments"], [tuple(p) for p in ex["attacks"]])
    exp = ex["expected"]
    assert names(S.grounded_extension(af)) == names(exp["grounded"])
    assert {a: lab.value for a, lab in S.grounded_labelling(af).items()} == exp[
        "grounded_labelling"
    ]
    for key, fn in EXT_FUNCS.items():
        assert norm(fn(af)) == norm(exp[key]), key
    labs = [{a: lab.value for a, lab in lab_.items()} for lab_ in S.complete_labellings(af)]
    key = lambda d: sorted(d.items())  # noqa: E731
    assert sorted(labs, key=key) == sorted(exp["complete_labellings"], key=key)
    assert names(S.ideal_extension(af)) == names(exp["ideal"])
    assert bool(S.stable_extensions(af)) == exp["stable_exists"]
    for sem in ("preferred", "stable"):
        cred = [a for a in ex["arguments"] if S.credulously_accepted(af, a, sem)]
        skep = [a for a in ex["arguments"] if S.skeptically_accepted(af, a, sem)]
        assert names(cred) == names(exp[f"credulous_{sem}"])
        assert names(skep) == names(exp[f"skeptical_{sem}"])
        assert names(S.credulous_set(af, sem)) == names(exp[f"credulous_{sem}"])
        assert names(S.skeptical_set(af, sem)) == names(exp[f"skeptical_{sem}"])


# -- ASGL (ICCMA 2015 style answers) ------------------------------------------

ASGL = sorted((DATA / "asgl_iccma15_style" / "apx").glob("*.apx"))
ASGL_SEM = {"EE-CO": "complete", "EE-PR": "preferred", "EE-ST": "stable", "EE-GR": "grounded"}


def parse_iccma15(text: str) -> list[list[str]]:
    text = "".join(text.split())
    assert text.startswith("[") and text.endswith("]")
    inner = text[1:-1]
    if not inner:
        return []
    out = []
    for chunk in inner[1:-1].split("],["):
        out.append([a for a in chunk.split(",") if a])
    return out


@pytest.mark.parametrize("path", ASGL, ids=[p.stem[:12] for p in ASGL])
def test_asgl(path: Path) -> None:
    af = read_af(path)
    for suffix, sem in ASGL_SEM.items():
        expected = parse_iccma15(path.with_suffix("." + suffix).read_text())
        if sem == "grounded":
            got = [sorted(S.grounded_extension(af))]
        else:
            got = extension_space(af, sem)  # type: ignore[assignment]
            assert count_extensions(af, sem) == len(expected)
        assert norm(got) == norm(expected), suffix


def test_asgl_copied() -> None:
    assert len(ASGL) == 35


# -- ICCMA 2019 ----------------------------------------------------------------

ICCMA19 = sorted((DATA / "iccma2019_small").glob("*.apx"))
I19_SEM = ["grounded", "ideal", "complete", "preferred", "stable", "semi-stable"]


def parse_expected_txt(text: str) -> list[list[str]]:
    exts: list[list[str]] = [[]]
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line == "---":
            exts.append([])
        else:
            exts[-1].append(line)
    return exts


@pytest.mark.parametrize("path", ICCMA19, ids=[p.stem for p in ICCMA19])
def test_iccma2019(path: Path) -> None:
    af = read_af(path)
    funcs = {
        "grounded": lambda: [S.grounded_extension(af)],
        "ideal": lambda: [S.ideal_extension(af)],
        "complete": lambda: S.complete_extensions(af),
        "preferred": lambda: S.preferred_extensions(af),
        "stable": lambda: S.stable_extensions(af),
        "semi-stable": lambda: S.semi_stable_extensions(af),
    }
    for sem in I19_SEM:
        exp_file = path.parent / "expected" / f"{path.stem}.{sem}.txt"
        assert norm(funcs[sem]()) == norm(parse_expected_txt(exp_file.read_text())), sem


# -- verified_generated --------------------------------------------------------

VG = DATA / "verified_generated"
SMALL = sorted((VG / "small").glob("*.af"))
MEDIUM = sorted((VG / "medium").glob("*.af"))


def ints(exts: Any) -> list[list[int]]:
    return sorted(sorted(e) for e in exts)


def check_common(af: ArgumentFramework, exp: dict[str, Any]) -> None:
    assert sorted(S.grounded_extension(af)) == sorted(exp["grounded"])
    pr = extension_space(af, "preferred")
    st = extension_space(af, "stable")
    assert pr.count() == len(exp["preferred"])
    assert st.count() == len(exp["stable"])
    assert ints(pr) == ints(exp["preferred"])
    assert ints(st) == ints(exp["stable"])
    assert st.exists() == exp["stable_exists"]
    assert sorted(pr.credulous()) == sorted(exp["credulous_preferred"])
    assert sorted(pr.skeptical()) == sorted(exp["skeptical_preferred"])
    assert sorted(st.credulous()) == sorted(exp["credulous_stable"])
    assert sorted(st.skeptical()) == sorted(exp["skeptical_stable"])


@pytest.mark.parametrize("path", SMALL, ids=[p.stem for p in SMALL])
def test_verified_small(path: Path) -> None:
    af = read_af(path)
    exp = load_json(path.with_suffix(".json"))
    check_common(af, exp)
    assert {str(a): lab.value for a, lab in S.grounded_labelling(af).items()} == exp[
        "grounded_labelling"
    ]
    assert ints(S.complete_extensions(af)) == ints(exp["complete"])
    assert ints(S.semi_stable_extensions(af)) == ints(exp["semi_stable"])
    assert ints(S.stage_extensions(af)) == ints(exp["stage"])
    assert sorted(S.ideal_extension(af)) == sorted(exp["ideal"])
    for sem in ("preferred", "stable"):
        for a in af:
            assert S.credulously_accepted(af, a, sem) == (a in exp[f"credulous_{sem}"])
            assert S.skeptically_accepted(af, a, sem) == (a in exp[f"skeptical_{sem}"])


@pytest.mark.parametrize("path", MEDIUM, ids=[p.stem for p in MEDIUM])
def test_verified_medium(path: Path) -> None:
    af = read_af(path)
    exp = load_json(path.with_suffix(".json"))
    check_common(af, exp)
    counts = {"IN": 0, "OUT": 0, "UNDEC": 0}
    for lab in S.grounded_labelling(af).values():
        counts[lab.value] += 1
    assert counts == exp["grounded_labelling_counts"]


def test_verified_copied() -> None:
    assert len(SMALL) == 60 and len(MEDIUM) == 26


@pytest.fixture
def sat_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Force every component through the SAT backend."""
    import crux_lab.argumentation.components as comp_mod
    import crux_lab.argumentation.semantics as sem_mod
    import crux_lab.argumentation.space as space_mod

    monkeypatch.setattr(comp_mod, "SMALL_LIMIT", 0)
    monkeypatch.setattr(sem_mod, "SMALL_LIMIT", 0)
    monkeypatch.setattr(space_mod, "SMALL_LIMIT", 0)


@pytest.mark.parametrize("path", SMALL + MEDIUM, ids=[p.stem for p in SMALL + MEDIUM])
def test_verified_sat_backend(path: Path, sat_only: None) -> None:
    af = read_af(path)
    exp = load_json(path.with_suffix(".json"))
    check_common(af, exp)
    if "semi_stable" in exp:
        assert ints(S.semi_stable_extensions(af)) == ints(exp["semi_stable"])
        assert ints(S.stage_extensions(af)) == ints(exp["stage"])
        assert ints(S.complete_extensions(af)) == ints(exp["complete"])
        for sem in ("preferred", "stable"):
            for a in af:
                assert S.credulously_accepted(af, a, sem) == (a in exp[f"credulous_{sem}"])
                assert S.skeptically_accepted(af, a, sem) == (a in exp[f"skeptical_{sem}"])


LARGE = sorted((VG / "large").glob("*.af"))


@pytest.mark.parametrize("path", LARGE, ids=[p.stem for p in LARGE])
def test_verified_large(path: Path) -> None:
    """1,000-argument instances: grounded, credulous set without enumeration, and
    (for the ER ones) full preferred/stable lists."""
    af = read_af(path)
    exp = load_json(path.with_suffix(".json"))
    assert sorted(S.grounded_extension(af)) == sorted(exp["grounded"])
    counts = {"IN": 0, "OUT": 0, "UNDEC": 0}
    for lab in S.grounded_labelling(af).values():
        counts[lab.value] += 1
    assert counts == exp["grounded_labelling_counts"]
    assert sorted(S.credulous_set(af, "preferred")) == sorted(exp["credulous_preferred"])
    if "preferred" in exp:
        assert ints(S.preferred_extensions(af)) == ints(exp["preferred"])
        assert ints(S.stable_extensions(af)) == ints(exp["stable"])
        assert sorted(S.skeptical_set(af, "preferred")) == sorted(exp["skeptical_preferred"])


def test_large_copied() -> None:
    assert len(LARGE) == 3
