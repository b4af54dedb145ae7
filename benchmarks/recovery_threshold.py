"""Calibrate the embedding-match threshold of crux recovery (crux_lab.analysis.recovery).

Labelled items (the planted proposition each is about is known):

- every crux item and common-ground statement that engines (blitz, graph, dialogue, dcg) report
  on the scenarios and that carries a simulator proposition id (its label);
- for each planted proposition, the texts a crux extractor paraphrases from: each side's
  stock reason and the flip condition's description (harder than the proposition text).

Decisions at threshold t, per item: a true positive when its best-matching planted proposition
is its label and reaches t; a false positive when the best match is another proposition that
reaches t, plus (label left out) when any other proposition of its scenario reaches t (an item
about a proposition the debate did not plant must match nothing); a false negative when its
label is not matched. Prints precision/recall/F1 per threshold and the best one, and writes
benchmarks/results/recovery_threshold.json.

    .venv/bin/python benchmarks/recovery_threshold.py [--scenarios 6] [--seed 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from crux_lab.analysis.metrics import crux_texts
from crux_lab.analysis.recovery import MATCH_THRESHOLD, similarity_to_propositions
from crux_lab.analysis.scenarios import generate_scenarios, use_library, write_library
from crux_lab.embed import get_embedder
from crux_lab.runner import run_debate

ENGINES = ("blitz", "graph", "dialogue", "dcg")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenarios", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    started = time.perf_counter()
    scenarios = generate_scenarios(args.scenarios, seed=args.seed)
    enc = get_embedder()
    labelled: list[tuple[int, str, str, str]] = []  # scenario index, text, label, origin
    with tempfile.TemporaryDirectory() as tmp:
        write_library(scenarios, tmp)
        with use_library(tmp):
            for k, s in enumerate(scenarios):
                for engine in ENGINES:
                    r = asyncio.run(run_debate(s.config(engine, seed=k)))
                    for item in crux_texts(r):
                        for pid in item.proposition_ids[:1]:
                            labelled.append((k, item.text, pid, f"engine:{engine}"))
                    for g in r.common_ground:
                        for pid in g.proposition_ids[:1]:
                            labelled.append((k, g.statement, pid, f"common_ground:{engine}"))
    for k, s in enumerate(scenarios):
        for p in s.propositions:
            labelled += [(k, p.entry.pro, p.id, "reason"), (k, p.entry.con, p.id, "reason"),
                         (k, p.entry.flip_description, p.id, "flip")]
    labelled = list(dict.fromkeys(labelled))
    best_of: list[tuple[str, float, float, str]] = []  # best id, best score, best other score, label
    origins: list[str] = []
    for k, s in enumerate(scenarios):
        mine = [x for x in labelled if x[0] == k]
        if not mine:
            continue
        sim = similarity_to_propositions([x[1] for x in mine], s, enc)
        ids = [p.id for p in s.propositions]
        for row, (_, _, label, _) in enumerate(mine):
            j = int(np.argmax(sim[row]))
            others = [sim[row, c] for c, pid in enumerate(ids) if pid != label]
            best_of.append((ids[j], float(sim[row, j]), float(max(others)), label))
            origins.append(mine[row][3].split(":")[0])
    rows = []
    for t in np.round(np.arange(0.30, 0.91, 0.05), 2):
        tp = sum(1 for b, sc, _, lab in best_of if b == lab and sc >= t)
        fp_wrong = sum(1 for b, sc, _, lab in best_of if b != lab and sc >= t)
        fp_left_out = sum(1 for _, _, other, _ in best_of if other >= t)
        fn = sum(1 for b, sc, _, lab in best_of if not (b == lab and sc >= t))
        fp = fp_wrong + fp_left_out
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        f05 = 1.25 * p * r / (0.25 * p + r) if p + r else 0.0
        hit = [b == lab and sc >= t for b, sc, _, lab in best_of]
        by_origin = {o: round(float(sum(h for h, x in zip(hit, origins, strict=True) if x == o) / origins.count(o)), 3)
                     for o in sorted(set(origins))}
        rows.append({"threshold": float(t), "tp": tp, "fp_wrong": fp_wrong, "fp_left_out": fp_left_out,
                     "fn": fn, "precision": round(p, 4), "recall": round(r, 4), "f1": round(f1, 4),
                     "f05": round(f05, 4), "recall_by_origin": by_origin})
    # Precision-weighted (F0.5): a recovery benchmark must not credit a crux that was not found.
    best = max(rows, key=lambda x: (x["f05"], -abs(x["threshold"] - MATCH_THRESHOLD)))
    print(f"{len(best_of)} labelled items from {len(scenarios)} scenarios "
          f"({sum(1 for x in labelled if x[3].startswith(('engine', 'common')))} from engines)")
    print(f"{'t':>5} {'tp':>4} {'fp_wrong':>8} {'fp_left_out':>11} {'fn':>4} {'P':>6} {'R':>6} {'F1':>6} {'F0.5':>6}  recall by origin")
    for x in rows:
        mark = " <- best" if x is best else (" (used)" if x["threshold"] == MATCH_THRESHOLD else "")
        print(f"{x['threshold']:>5.2f} {x['tp']:>4} {x['fp_wrong']:>8} {x['fp_left_out']:>11} {x['fn']:>4} "
              f"{x['precision']:>6.3f} {x['recall']:>6.3f} {x['f1']:>6.3f} {x['f05']:>6.3f}  {x['recall_by_origin']}{mark}")
    used = next(x for x in rows if x["threshold"] == MATCH_THRESHOLD)
    print(f"used threshold {MATCH_THRESHOLD}: F0.5 {used['f05']:.3f} (best {best['threshold']}: {best['f05']:.3f}); "
          f"{time.perf_counter() - started:.1f}s")
    out = Path(__file__).parent / "results" / "recovery_threshold.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"scenarios": args.scenarios, "seed": args.seed, "items": len(best_of),
                               "used": MATCH_THRESHOLD, "best": best, "sweep": rows}, indent=1))


if __name__ == "__main__":
    main()
