"""Reference solvers, run in a subprocess of the benchmark-only venv.

Usage: ``python _peers.py PEER TASK INSTANCE.json`` prints one JSON line
``{"wall": s, "cpu": s, "result": ...}``. Time covers building the peer's own
framework object from the edge list plus solving (not reading the JSON).

Peers: ``pyarg`` (PyPI ``python-argumentation``), ``pygarg``, ``clingo`` (ASPARTIX-style
encodings), ``pysat`` (a plain PrefSAT enumerator over the whole framework, Glucose 4).
Tasks: ``GR`` (grounded), ``EE-PR`` (enumerate preferred; result = count),
``DC-PR`` / ``DS-PR`` (queries from the instance; result = list of booleans).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

ADM = """
in(X) :- arg(X), not out(X).
out(X) :- arg(X), not in(X).
:- in(X), in(Y), att(X,Y).
defeated(X) :- in(Y), att(Y,X).
:- in(X), att(Y,X), not defeated(Y).
#show in/1.
"""
GROUNDED = """
defeated(X) :- att(Y,X), in(Y).
in(X) :- arg(X), defeated(Y) : att(Y,X).
#show in/1.
"""


def _facts(n: int, att: list[list[int]]) -> str:
    return f"arg(0..{n - 1}).\n" + "".join(f"att({a},{b}).\n" for a, b in att)


def run_clingo(task: str, n: int, att: list[list[int]], queries: list[int]) -> Any:
    import clingo

    if task == "GR":
        ctl = clingo.Control(["1"])
        ctl.add("base", [], _facts(n, att) + GROUNDED)
        ctl.ground([("base", [])])
        out: list[int] = []
        ctl.solve(
            on_model=lambda m: out.extend(s.arguments[0].number for s in m.symbols(shown=True))
        )
        return len(out)
    if task == "EE-PR":
        ctl = clingo.Control(
            ["0", "--heuristic=Domain", "--dom-mod=true,show", "--enum-mode=domRec"]
        )
        ctl.add("base", [], _facts(n, att) + ADM)
        ctl.ground([("base", [])])
        count = 0

        def on_model(_m: Any) -> None:
            nonlocal count
            count += 1

        ctl.solve(on_model=on_model)
        return count
    if task == "DC-PR":
        ctl = clingo.Control(["1"])
        ctl.add("base", [], _facts(n, att) + ADM)
        ctl.ground([("base", [])])
        res = []
        for q in queries:
            lit = clingo.Function("in", [clingo.Number(q)])
            res.append(bool(ctl.solve(assumptions=[(lit, True)]).satisfiable))
        return res
    raise SystemExit(f"clingo: unsupported task {task}")


def run_pygarg(task: str, n: int, att: list[list[int]], queries: list[int]) -> Any:
    from pygarg.dung import solver

    args = [str(i) for i in range(n)]
    atts = [[str(a), str(b)] for a, b in att]
    if task == "GR":
        return len(solver.compute_grounded_extension(args, atts))
    if task == "EE-PR":
        return len(solver.extension_enumeration(args, atts, "PR"))
    if task == "DC-PR":
        return [solver.credulous_acceptability(args, atts, str(q), "PR")[0] for q in queries]
    if task == "DS-PR":
        return [solver.skeptical_acceptability(args, atts, str(q), "PR")[0] for q in queries]
    raise SystemExit(f"pygarg: unsupported task {task}")


def run_pyarg(task: str, n: int, att: list[list[int]], queries: list[int]) -> Any:
    from py_arg.abstract_argumentation_classes.abstract_argumentation_framework import (
        AbstractArgumentationFramework,
    )
    from py_arg.abstract_argumentation_classes.argument import Argument
    from py_arg.abstract_argumentation_classes.defeat import Defeat

    args = [Argument(str(i)) for i in range(n)]
    af = AbstractArgumentationFramework("b", args, [Defeat(args[a], args[b]) for a, b in att])
    if task == "GR":
        from py_arg.algorithms.semantics.get_grounded_extension import get_grounded_extension

        return len(get_grounded_extension(af))
    if task == "EE-PR":
        from py_arg.algorithms.semantics.get_preferred_extensions import (
            get_preferred_extensions,
        )

        return len(get_preferred_extensions(af))
    raise SystemExit(f"pyarg: unsupported task {task}")


def run_pysat(task: str, n: int, att: list[list[int]], queries: list[int]) -> Any:
    """Plain PrefSAT (complete-labelling encoding, iterated maximisation), whole framework."""
    from pysat.solvers import Solver

    pred: list[list[int]] = [[] for _ in range(n)]
    for a, b in att:
        pred[b].append(a)
    s = Solver(name="glucose4")
    for a in range(n):
        ia, oa = a + 1, n + a + 1
        s.add_clause([-ia, -oa])
        s.add_clause([ia] + [-(n + b + 1) for b in pred[a]])
        s.add_clause([-oa] + [b + 1 for b in pred[a]])
        for b in pred[a]:
            s.add_clause([-ia, n + b + 1])
            s.add_clause([-(b + 1), oa])
    if task == "DC-PR":
        return [bool(s.solve(assumptions=[q + 1])) for q in queries]
    if task != "EE-PR":
        raise SystemExit(f"pysat: unsupported task {task}")
    top = 2 * n
    count = 0
    while s.solve():
        model = s.get_model()
        chosen = [v for v in range(1, n + 1) if model[v - 1] > 0]
        while True:
            cs = set(chosen)
            rest = [v for v in range(1, n + 1) if v not in cs]
            if not rest:
                break
            top += 1
            s.add_clause([-top, *rest])
            ok = s.solve(assumptions=[*chosen, top])
            if ok:
                model = s.get_model()
                chosen = [v for v in range(1, n + 1) if model[v - 1] > 0]
            s.add_clause([-top])
            if not ok:
                break
        count += 1
        cs = set(chosen)
        rest = [v for v in range(1, n + 1) if v not in cs]
        if not rest:
            break
        s.add_clause(rest)
    return count


def run_crux_lab(task: str, n: int, att: list[list[int]], queries: list[int]) -> Any:
    """crux_lab itself (imported from the repository), for timeouts in a subprocess."""
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from crux_lab.argumentation import (
        ArgumentFramework,
        credulously_accepted,
        extension_space,
        grounded_extension,
        skeptically_accepted,
    )

    af = ArgumentFramework.from_edges(range(n), map(tuple, att))
    if task == "GR":
        return len(grounded_extension(af))
    if task == "EE-PR":
        space = extension_space(af, "preferred")
        count = space.count()
        if count <= 100_000:
            for _ in space.iter_extensions():  # materialise, as the peers do
                pass
        return count
    if task == "DC-PR":
        return [credulously_accepted(af, q, "preferred") for q in queries]
    if task == "DS-PR":
        return [skeptically_accepted(af, q, "preferred") for q in queries]
    raise SystemExit(f"crux_lab: unsupported task {task}")


PEERS = {
    "crux_lab": run_crux_lab,
    "clingo": run_clingo,
    "pygarg": run_pygarg,
    "pyarg": run_pyarg,
    "pysat": run_pysat,
}


PRELOAD = {
    "crux_lab": ["crux_lab.argumentation"],
    "clingo": ["clingo"],
    "pygarg": ["pygarg.dung.solver"],
    "pyarg": [
        "py_arg.abstract_argumentation_classes.abstract_argumentation_framework",
        "py_arg.algorithms.semantics.get_grounded_extension",
        "py_arg.algorithms.semantics.get_preferred_extensions",
    ],
    "pysat": ["pysat.solvers"],
}


def main() -> None:
    import importlib
    from pathlib import Path

    peer, task, path = sys.argv[1:4]
    inst = json.loads(Path(path).read_text())
    if peer == "crux_lab":
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    for mod in PRELOAD[peer]:  # imports are not timed
        importlib.import_module(mod)
    t0, c0 = time.perf_counter(), time.process_time()
    result = PEERS[peer](task, inst["n"], inst["attacks"], inst.get("queries", []))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(json.dumps({"wall": wall, "cpu": cpu, "result": result}))


if __name__ == "__main__":
    main()
