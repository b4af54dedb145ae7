"""Report size and render time: a run report (one executed debate notebook) and the sweep
report, exported offline by crux_lab.report. Peer: nbconvert's stock HTML export of the same
notebook (lab template, which loads require.js/MathJax from a CDN and, under plotly's default
renderer, would lose the figures), as a ratio of size and time.

    .venv/bin/python benchmarks/report_render.py [--notebook experiments/demo/runs/<id>.ipynb] [--sweep demo]

Needs an executed notebook (run `make demo` first). Prints a table and writes
benchmarks/results/report_render.json.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

from _report import print_and_save  # benchmarks/ is on sys.path when run as a script

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "report_render.json"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notebook", type=Path, default=None)
    ap.add_argument("--sweep", default="demo")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    import nbformat
    from nbconvert import HTMLExporter

    from crux_lab.report import export_html, external_references, sweep_report

    nb_path = args.notebook or next(iter(sorted((REPO / "experiments" / args.sweep / "runs").glob("*.ipynb"))), None)
    if nb_path is None:
        raise SystemExit(f"no executed notebook under experiments/{args.sweep}/runs; run `make demo` first")
    with tempfile.TemporaryDirectory(prefix="report-bench-") as tmp:
        times, size = [], 0
        for i in range(args.repeats):
            info = export_html(nb_path, Path(tmp) / f"run{i}.html")
            times.append(info.render_s)
            size = info.size_bytes
        t0 = time.perf_counter()
        stock, _ = HTMLExporter(template_name="lab").from_notebook_node(nbformat.read(str(nb_path), as_version=4))
        stock_s = time.perf_counter() - t0
    sweep = {}
    if (REPO / "experiments" / args.sweep / "manifest.json").is_file():
        info = sweep_report(args.sweep)
        index = info.path.read_text(encoding="utf-8")
        run_pages = list((info.path.parent / "runs").glob("*.html"))
        sweep = {
            "sweep_report_total_s": round(info.render_s, 2),
            "sweep_index_mb": round(info.size_bytes / 1e6, 2),
            "sweep_run_pages": len(run_pages),
            "sweep_total_mb": round((info.size_bytes + sum(p.stat().st_size for p in run_pages)) / 1e6, 1),
            "sweep_external_refs": len(external_references(index)),
        }
    rows = {
        "notebook": str(nb_path.relative_to(REPO) if nb_path.is_relative_to(REPO) else nb_path),
        "run_report_mb": round(size / 1e6, 2),
        "run_report_render_s_median": round(sorted(times)[len(times) // 2], 2),
        "stock_nbconvert_mb": round(len(stock.encode()) / 1e6, 2),
        "stock_nbconvert_s": round(stock_s, 2),
        "stock_external_refs": len(external_references(stock)),
        "ratio_time_vs_stock": round(sorted(times)[len(times) // 2] / stock_s, 2),
        **sweep,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }
    print_and_save(rows, OUT)


if __name__ == "__main__":
    main()
