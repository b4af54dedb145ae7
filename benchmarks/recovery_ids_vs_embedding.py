"""Crux recovery scored two ways: with the simulator's proposition ids (the default) and by
embedding match alone (``use_ids=False``: what a real-LLM run, whose cruxes carry no ids, gets).

Same debates, same scenarios; prints P/R/F1 per engine for both and the embedding-only F1 as a
ratio to the id-based F1 (the peer). Writes benchmarks/results/recovery_ids_vs_embedding.json.

    .venv/bin/python benchmarks/recovery_ids_vs_embedding.py [--scenarios 5]
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

from crux_lab.analysis.recovery import run_recovery, score_recovery, summarize
from crux_lab.analysis.scenarios import generate_scenarios
from crux_lab.embed import get_embedder
from crux_lab.engines.compare import ALL_ENGINES


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenarios", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--engines", default=",".join(ALL_ENGINES))
    args = ap.parse_args()
    started = time.perf_counter()
    scenarios = generate_scenarios(args.scenarios, seed=args.seed)
    by_id = {s.id: s for s in scenarios}
    enc = get_embedder()
    with tempfile.TemporaryDirectory() as tmp:
        run = run_recovery(scenarios, args.engines.split(","), Path(tmp), seed=args.seed, store=False, encoder=enc)
    embedding_only = [score_recovery(r, by_id[s.scenario], enc, use_ids=False)
                      for r, s in zip(run.results, run.scores, strict=True)]
    ids_rows = {r["engine"]: r for r in summarize(run.scores)}
    emb_rows = {r["engine"]: r for r in summarize(embedding_only)}
    print(f"{len(run.results)} debates, {time.perf_counter() - started:.1f}s")
    print(f"{'engine':<11}{'P ids':>7}{'R ids':>7}{'F1 ids':>8}{'P emb':>7}{'R emb':>7}{'F1 emb':>8}{'emb/ids':>9}")
    rows = []
    for engine, a in ids_rows.items():
        b = emb_rows[engine]
        ratio = b["f1"] / a["f1"] if a["f1"] and not math.isnan(a["f1"]) else math.nan
        print(f"{engine:<11}{a['precision']:>7.2f}{a['recall']:>7.2f}{a['f1']:>8.2f}"
              f"{b['precision']:>7.2f}{b['recall']:>7.2f}{b['f1']:>8.2f}{ratio:>9.2f}")
        rows.append({"engine": engine, "ids": a, "embedding_only": b, "f1_ratio": ratio})
    out = Path(__file__).parent / "results" / "recovery_ids_vs_embedding.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"scenarios": args.scenarios, "seed": args.seed, "rows": rows}, indent=1, default=str))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
