"""Benchmark crux_lab.argumentation against PyArg, pygarg, clingo and a plain PySAT PrefSAT.

Run from the repository root::

    .venv/bin/python benchmarks/argumentation/bench_af.py            # full run
    .venv/bin/python benchmarks/argumentation/bench_af.py --quick    # small sizes only

Peers run in subprocesses of the benchmark-only venv
``benchmarks/argumentation/.venv-bench`` (see README.md for how to create it), each
with a timeout, so the script always finishes. crux_lab runs in this process.
Prints tables and writes JSON to ``benchmarks/results/``. No pass/fail asserts.

Times are CPU seconds of the solving process (``time.process_time``), which is far
less sensitive than wall time to other load on a shared machine; wall times are
in the JSON. "ratio" = peer time / crux_lab time (> 1: crux_lab is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from generators import FAMILIES, debate  # noqa: E402

from crux_lab.argumentation import (  # noqa: E402
    ArgumentFramework,
    extension_space,
    extract_cruxes,
    grounded_extension,
)

BENCH_PY = HERE / ".venv-bench" / "bin" / "python"
PEERS_PY = HERE / "_peers.py"
ROWS: list[dict[str, Any]] = []


def big(count: int) -> str:
    """Exact small counts, ``d.dd e+N`` for huge ones (Python ints exceed float range)."""
    if count < 10**9:
        return str(count)
    k = int((count.bit_length() - 1) * 0.30102999566398120)
    return f"~10^{k}"


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - t0, time.process_time() - c0, out


def run_peer(peer: str, task: str, inst: dict[str, Any], timeout: float) -> dict[str, Any]:
    python = sys.executable if peer == "crux_lab" else str(BENCH_PY)
    if peer != "crux_lab" and not BENCH_PY.exists():
        return {"status": "missing-venv"}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(inst, fh)
        path = fh.name
    try:
        proc = subprocess.run(
            [python, str(PEERS_PY), peer, task, path],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"status": "timeout"}
    finally:
        os.unlink(path)
    if proc.returncode != 0:
        return {"status": "error", "stderr": proc.stderr[-300:]}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["status"] = "ok"
    return out


def fmt(row: dict[str, Any] | None) -> str:
    if row is None:
        return "-"
    if row.get("status") != "ok":
        return {"timeout": "timeout", "skipped": "skip"}.get(row["status"], row["status"])
    return f"{row['cpu']:.3f}"


def ratio(peer: dict[str, Any] | None, mine: float) -> str:
    if not peer or peer.get("status") != "ok":
        return "-"
    return f"{peer['cpu'] / max(mine, 1e-4):.1f}x"


def print_table(title: str, header: list[str], lines: list[list[str]]) -> None:
    widths = [
        max(len(h), *(len(x[i]) for x in lines)) if lines else len(h) for i, h in enumerate(header)
    ]
    print(f"\n## {title}\n")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for x in lines:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(x, widths, strict=True)) + " |")
    sys.stdout.flush()


def peer_loop(
    section: str,
    peers: list[str],
    task: str,
    family: str,
    n: int,
    inst: dict[str, Any],
    dead: set[tuple[str, str]],
    timeout: float,
) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    for peer in peers:
        if (peer, family) in dead:
            res: dict[str, Any] = {"status": "skipped"}
        else:
            res = run_peer(peer, task, inst, timeout)
            if res["status"] != "ok":
                dead.add((peer, family))
        results[peer] = res
        ROWS.append({"section": section, "family": family, "n": n, "peer": peer, **res})
    return results


# ---------------------------------------------------------------------------


def bench_grounded(sizes: list[int], timeout: float) -> None:
    peers = ["pyarg", "pygarg", "clingo"]
    dead: set[tuple[str, str]] = set()
    lines = []
    for family, gen in FAMILIES.items():
        for n in sizes:
            n_, att = gen(n, 1)
            wall, cpu, g = timed(
                lambda n_=n_, att=att: grounded_extension(
                    ArgumentFramework.from_edges(range(n_), att)
                )
            )
            ROWS.append(
                {
                    "section": "grounded",
                    "family": family,
                    "n": n_,
                    "m": len(att),
                    "peer": "crux_lab",
                    "status": "ok",
                    "wall": wall,
                    "cpu": cpu,
                    "result": len(g),
                }
            )
            res = peer_loop(
                "grounded", peers, "GR", family, n_, {"n": n_, "attacks": att}, dead, timeout
            )
            agree = all(r["result"] == len(g) for r in res.values() if r.get("status") == "ok")
            best = min((r["cpu"] for r in res.values() if r.get("status") == "ok"), default=None)
            lines.append(
                [
                    family,
                    str(n_),
                    str(len(att)),
                    f"{cpu:.3f}",
                    f"{wall:.3f}",
                    *(fmt(res[p]) for p in peers),
                    f"{best / max(cpu, 1e-4):.1f}x" if best else "-",
                    "yes" if agree else "NO",
                ]
            )
            print(f"  grounded {family} n={n_}: {cpu:.3f}s", file=sys.stderr, flush=True)
    print_table(
        "Grounded extension (CPU s; build framework + solve)",
        ["family", "n", "m", "crux_lab", "crux_lab wall", *peers, "best peer / crux_lab", "agree"],
        lines,
    )


def _cmp(res: dict[str, dict[str, Any]], mine: dict[str, Any]) -> str:
    if mine.get("status") != "ok":
        return "-"
    ok = [r for r in res.values() if r.get("status") == "ok"]
    if not ok:
        return "n/a"
    return "yes" if all(r["result"] == mine["result"] for r in ok) else "NO"


def _best_ratio(res: dict[str, dict[str, Any]], mine: dict[str, Any]) -> str:
    best = min((r["cpu"] for r in res.values() if r.get("status") == "ok"), default=None)
    if best is None or mine.get("status") != "ok":
        return "-"
    return f"{best / max(mine['cpu'], 1e-4):.1f}x"


def bench_preferred(sizes: list[int], timeout: float) -> None:
    peers = ["pysat", "clingo", "pygarg", "pyarg"]
    dead: set[tuple[str, str]] = set()
    lines = []
    for family, gen in FAMILIES.items():
        for n in sizes:
            n_, att = gen(n, 2)
            inst = {"n": n_, "attacks": att}
            mine = peer_loop("preferred", ["crux_lab"], "EE-PR", family, n_, inst, dead, timeout)
            me = mine["crux_lab"]
            res = peer_loop("preferred", peers, "EE-PR", family, n_, inst, dead, timeout)
            count = me.get("result")
            shown = "?" if count is None else big(count)
            lines.append(
                [
                    family,
                    str(n_),
                    shown,
                    fmt(me),
                    *(fmt(res[p]) for p in peers),
                    _best_ratio(res, me),
                    _cmp(res, me),
                ]
            )
            print(
                f"  preferred {family} n={n_}: {fmt(me)} count={shown}", file=sys.stderr, flush=True
            )
    print_table(
        "Preferred enumeration EE-PR (CPU s)",
        ["family", "n", "#preferred", "crux_lab", *peers, "best peer / crux_lab", "agree"],
        lines,
    )


def bench_acceptance(sizes: list[int], timeout: float, n_queries: int = 10) -> None:
    lines = []
    dead: set[tuple[str, str]] = set()
    for family in ("er_d2", "er_d4", "debate", "grid"):
        for n in sizes:
            n_, att = FAMILIES[family](n, 3)
            rng = random.Random(7)
            queries = rng.sample(range(n_), min(n_queries, n_))
            inst = {"n": n_, "attacks": att, "queries": queries}
            for task in ("DC-PR", "DS-PR"):
                sec = f"acceptance-{task}"
                me = peer_loop(sec, ["crux_lab"], task, family, n_, inst, set(), timeout)[
                    "crux_lab"
                ]
                peers = ["pygarg", "clingo", "pysat"] if task == "DC-PR" else ["pygarg"]
                res = peer_loop(sec, peers, task, family, n_, inst, dead, timeout)
                mine_cpu = me.get("cpu", 0.0)
                lines.append(
                    [
                        family,
                        str(n_),
                        task,
                        fmt(me),
                        fmt(res.get("pygarg")),
                        ratio(res.get("pygarg"), mine_cpu),
                        fmt(res.get("clingo")),
                        fmt(res.get("pysat")),
                        _cmp(res, me),
                    ]
                )
                print(f"  {task} {family} n={n_}: {fmt(me)}", file=sys.stderr, flush=True)
    print_table(
        f"Acceptance, {n_queries} queries per row (CPU s incl. building the framework)",
        [
            "family",
            "n",
            "task",
            "crux_lab",
            "pygarg",
            "pygarg / crux_lab",
            "clingo",
            "pysat",
            "agree",
        ],
        lines,
    )


def bench_debate_summary(sizes: list[int]) -> None:
    lines = []
    for n in sizes:
        n_, att, speakers = debate(n, 5)
        t0 = time.process_time()
        af = ArgumentFramework.from_edges(range(n_), att)
        space = extension_space(af, "preferred")
        count = space.count()
        t1 = time.process_time()
        statuses = space.statuses()
        t2 = time.process_time()
        rep = extract_cruxes(af, speakers)
        t3 = time.process_time()
        contested = sum(1 for s in statuses.values() if s == "contested")
        ROWS.append(
            {
                "section": "debate-summary",
                "n": n_,
                "m": len(att),
                "count": big(count),
                "space_cpu": t1 - t0,
                "status_cpu": t2 - t1,
                "crux_cpu": t3 - t2,
                "total_cpu": t3 - t0,
                "components": len(space.components),
                "camps": len(rep.camps),
                "pivots": len(rep.pivots),
                "regime": rep.regime.regime,
            }
        )
        lines.append(
            [
                str(n_),
                str(len(att)),
                big(count),
                str(len(space.components)),
                str(contested),
                str(len(rep.camps)),
                str(len(rep.symmetric_difference)),
                str(len(rep.pivots)),
                f"{t1 - t0:.3f}",
                f"{t2 - t1:.3f}",
                f"{t3 - t2:.3f}",
                f"{t3 - t0:.3f}",
            ]
        )
    print_table(
        "Debate-shaped frameworks: exact count, statuses, camps + cruxes (crux_lab, CPU s)",
        [
            "n",
            "m",
            "#preferred (exact)",
            "components",
            "contested",
            "camps",
            "|symdiff|",
            "pivots",
            "space+count",
            "statuses",
            "extract_cruxes",
            "total",
        ],
        lines,
    )


def bench_seed_sized(reps: int = 300) -> None:
    """Seed-sized graphs (5-12 arguments): full analysis per fresh framework."""
    from crux_lab.argumentation import (
        complete_labellings,
        grounded_labelling,
        preferred_extensions,
        stable_extensions,
    )

    lines = []
    for n in (5, 8, 12):
        rng = random.Random(n)
        cases = []
        for _ in range(reps):
            att = {(rng.randrange(n), rng.randrange(n)) for _ in range(int(1.5 * n))}
            speakers = {a: f"p{a % 2}" for a in range(n)}
            cases.append((att, speakers))

        def run(cases: list[Any] = cases, n: int = n) -> None:
            for att, speakers in cases:
                af = ArgumentFramework.from_edges(range(n), att)
                grounded_labelling(af)
                preferred_extensions(af)
                stable_extensions(af)
                complete_labellings(af)
                extract_cruxes(af, speakers)

        wall, cpu, _ = timed(run)
        per = cpu / reps * 1000
        ROWS.append({"section": "seed-sized", "n": n, "per_framework_ms": per})
        lines.append([str(n), str(reps), f"{per:.2f}"])
    print_table(
        "Seed-sized frameworks: grounded labelling + preferred + stable + complete labellings "
        "+ extract_cruxes, fresh framework each time",
        ["n", "frameworks", "ms per framework (CPU)"],
        lines,
    )


def bench_solver_choice(timeout: float) -> None:
    """Which SAT solver inside a hard component; clingo on the same questions."""
    from crux_lab.argumentation._core import decompose
    from crux_lab.argumentation.sat import SatComponent

    lines = []
    for family, n in (("er_d4", 1000), ("grid", 961)):
        n_, att = FAMILIES[family](n, 11)
        af = ArgumentFramework.from_edges(range(n_), att)
        comp = max(decompose(af).components, key=len)
        rng = random.Random(1)
        qs = rng.sample(range(len(comp)), min(10, len(comp)))
        for name in ("glucose4", "cadical195", "minisat22", "maplechrono"):
            sc = SatComponent(comp, solver_name=name)
            _, c_cred, _ = timed(lambda sc=sc, qs=qs: [sc.credulous(q, "preferred") for q in qs])
            _, c_enum, k = timed(lambda sc=sc: len(sc.extensions("preferred", limit=200)))
            lines.append([family, str(len(comp)), name, f"{c_cred:.3f}", f"{c_enum:.3f}", str(k)])
            ROWS.append(
                {
                    "section": "solver-choice",
                    "family": family,
                    "component": len(comp),
                    "solver": name,
                    "cred_cpu": c_cred,
                    "enum_cpu": c_enum,
                    "enum_found": k,
                }
            )
        # clingo / plain pysat on the same component (as a stand-alone framework)
        local = [(a, b) for b in range(len(comp)) for a in comp.pred[b]]
        inst = {"n": len(comp), "attacks": local, "queries": qs}
        for peer in ("clingo", "pysat"):
            res = run_peer(peer, "DC-PR", inst, timeout)
            lines.append([family, str(len(comp)), f"{peer} (peer)", fmt(res), "-", "-"])
            ROWS.append(
                {
                    "section": "solver-choice",
                    "family": family,
                    "component": len(comp),
                    "solver": peer,
                    **res,
                }
            )
    print_table(
        "SAT backend choice on the largest component (CPU s): 10 DC-PR queries; first 200 preferred",
        ["family", "component size", "solver", "10 x DC-PR", "EE-PR (200)", "found"],
        lines,
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="sizes 100 and 1000 only")
    ap.add_argument("--timeout", type=float, default=30.0, help="per-peer timeout in seconds")
    ap.add_argument("--sections", default="seed,grounded,preferred,acceptance,debate,solver")
    ns = ap.parse_args()
    sections = set(ns.sections.split(","))
    gr_sizes = [100, 1000] if ns.quick else [100, 1000, 10_000, 100_000]
    pr_sizes = [100, 1000] if ns.quick else [100, 1000, 10_000]
    print("# crux_lab.argumentation benchmark")
    print(
        f"\npython {sys.version.split()[0]}, load average at start {os.getloadavg()[0]:.1f} "
        f"on {os.cpu_count()} cores, peer timeout {ns.timeout:.0f}s, peers venv: "
        f"{'present' if BENCH_PY.exists() else 'MISSING (peers skipped)'}"
    )
    if "seed" in sections:
        bench_seed_sized()
    if "grounded" in sections:
        bench_grounded(gr_sizes, ns.timeout)
    if "preferred" in sections:
        bench_preferred(pr_sizes, ns.timeout)
    if "acceptance" in sections:
        bench_acceptance([1000] if ns.quick else [1000, 10_000], ns.timeout)
    if "debate" in sections:
        bench_debate_summary([1000] if ns.quick else [1000, 10_000, 100_000])
    if "solver" in sections and not ns.quick:
        bench_solver_choice(ns.timeout)
    out_dir = ROOT / "benchmarks" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"argumentation_{time.strftime('%Y%m%d_%H%M%S')}.json"
    out.write_text(
        json.dumps({"load_average": os.getloadavg(), "rows": ROWS}, indent=1, default=str)
    )
    print(
        f"\nload average at end {os.getloadavg()[0]:.1f}; JSON written to {out.relative_to(ROOT)}"
    )


if __name__ == "__main__":
    main()
