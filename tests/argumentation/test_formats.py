"""Format round trips and parse errors (file, line, problem)."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crux_lab.argumentation.formats import AFParseError, dumps_af, parse_af, read_af, write_af
from crux_lab.argumentation.framework import ArgumentFramework


@settings(max_examples=50, deadline=None)
@given(
    st.integers(1, 15).flatmap(
        lambda n: st.tuples(
            st.just(n), st.lists(st.tuples(st.integers(1, n), st.integers(1, n)), max_size=30)
        )
    )
)
def test_round_trip_all_formats(data: tuple[int, list[tuple[int, int]]]) -> None:
    n, att = data
    af = ArgumentFramework(frozenset(range(1, n + 1)), frozenset(att))
    assert parse_af(dumps_af(af, "iccma"), "iccma") == af
    named = ArgumentFramework(
        frozenset(f"a{i}" for i in af.arguments), frozenset((f"a{i}", f"a{j}") for i, j in att)
    )
    assert parse_af(dumps_af(named, "apx"), "apx") == named
    assert parse_af(dumps_af(named, "tgf"), "tgf") == named


def test_read_write_files(tmp_path: Path) -> None:
    af = ArgumentFramework.from_edges(["x", "y", "z"], [("x", "y")])
    for suffix in (".apx", ".tgf"):
        p = tmp_path / f"f{suffix}"
        write_af(af, p)
        assert read_af(p) == af
    p = tmp_path / "f.af"
    write_af(af, p)
    back = read_af(p)
    assert len(back) == 3 and back.attacks == frozenset({(1, 2)})


def test_networkx_round_trip() -> None:
    g = nx.gnp_random_graph(20, 0.1, seed=1, directed=True)
    af = ArgumentFramework.from_networkx(g)
    h = af.to_networkx()
    assert set(h.nodes) == set(g.nodes) and set(h.edges) == set(g.edges)


def test_apx_details() -> None:
    af = parse_af("% comment\narg(a). arg(b).\n att( a , b ). % trailing\narg(a.1).\n", "apx")
    assert af.arguments == {"a", "b", "a.1"} and af.attacks == {("a", "b")}


@pytest.mark.parametrize(
    ("text", "fmt", "line", "needle"),
    [
        ("p af 2\np af 2\n", "iccma", 2, "second header"),
        ("", "iccma", 1, "missing 'p af N' header"),
        ("p af 2\n1 2 3\n", "iccma", 2, "expected 'i j'"),
        ("p af 2\n1 a\n", "iccma", 2, "must be integers"),
        ("arg(a,b).\n", "apx", 1, "arg/1 takes one argument"),
        ("arg(a).\natt(a).\n", "apx", 2, "att/2 takes two arguments"),
        ("arg(a).\nfoo(a).\n", "apx", 2, "expected 'arg(x).'"),
        ("a\n#\na\n", "tgf", 3, "expected 'attacker target'"),
        ("a\n#\n#\n", "tgf", 3, "second '#'"),
    ],
)
def test_parse_errors(text: str, fmt: str, line: int, needle: str) -> None:
    with pytest.raises(AFParseError) as info:
        parse_af(text, fmt, path="in.txt")
    err = info.value
    assert err.path == "in.txt" and err.line == line and needle in err.message
    assert str(err).startswith(f"in.txt:{line}: ")


def test_undecodable_file(tmp_path: Path) -> None:
    p = tmp_path / "bin.af"
    p.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(AFParseError, match="not UTF-8"):
        read_af(p)


def test_framework_pickles_without_caches() -> None:
    import copy
    import pickle

    from crux_lab.argumentation import credulously_accepted, extension_space

    att = [(f"a{i}", f"b{i}") for i in range(20)] + [(f"b{i}", f"a{i}") for i in range(20)]
    att += [(f"a{i}", f"b{i + 1}") for i in range(19)]
    af = ArgumentFramework.from_edges([], att)
    extension_space(af)
    credulously_accepted(af, "a3")
    back = pickle.loads(pickle.dumps(af))
    assert back == af and hash(back) == hash(af)
    assert copy.deepcopy(af) == af
    assert credulously_accepted(back, "a3") == credulously_accepted(af, "a3")
