"""Issue 9 parts 3-4: the analysis layer against real human data.

Usage:
    .venv/bin/python benchmarks/eval_polis_argkp.py [--data DIR] [--seed N]

- Polis: for each vendored conversation, our camps (crux_lab.analysis.alignment.find_camps
  on the participants x comments stance matrix) against Polis's own group-id (adjusted Rand
  index), and our divisive / consensus statements against those computed from Polis's groups.
- ArgKP: embedding key-point matching scored with the KPA-2021 track-1 metric (mAP strict and
  relaxed) on the test split (and dev, when the full data folder is there), next to a random
  matcher and published reference points.

Data: ``--data`` (default: ../shared/data when present, else tests/data). Writes
benchmarks/results/eval_polis_argkp.json.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crux_lab.analysis.argkp import embedding_match_scores, kpa_map, load_split  # noqa: E402
from crux_lab.analysis.polis import (  # noqa: E402
    evaluate_conversation,
    list_conversations,
    load_conversation,
)

RESULTS = ROOT / "benchmarks" / "results" / "eval_polis_argkp.json"

# Published ArgKP-2021 track-1 test results found with a literature search. The shared task
# overview (Friedman et al., ArgMining 2021) has the official baseline table, but its numbers
# could not be retrieved here; these are participant papers' own reports (fine-tuned models).
PUBLISHED = [
    {
        "system": "Team Enigma (Kapadnis et al., ArgMining 2021), 5th on the leaderboard",
        "strict": 0.872,
        "relaxed": 0.966,
        "source": "arXiv 2110.12370, abstract",
    },
    {
        "system": "Pisani & Bergonzini (Univ. Pisa, 2022), fine-tuned DeBERTa",
        "strict": 0.7035,
        "relaxed": 0.8857,
        "source": "project report, github irenepisani/Key_Point_Analysis",
    },
]


def default_data() -> Path:
    shared = ROOT.parent / "shared" / "data"
    return shared if (shared / "polis").is_dir() else ROOT / "tests" / "data"


def fmt(x: float | None, spec: str = ".3f") -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def run_polis(root: Path, seed: int) -> list[dict]:
    rows = []
    print("\nPolis: our camps vs Polis group-id; statements vs those from Polis's groups")
    print(
        f"{'conversation':<34} {'ppl':>5} {'cmts':>4} {'dens':>5} {'G':>2} {'k':>2} "
        f"{'ARI':>6} {'ARI@G':>6} {'n':>5}  {'div P':>5} {'div R':>5} {'div top':>7}  "
        f"{'cons P':>6} {'cons R':>6} {'secs':>5}"
    )
    for folder in list_conversations(root):
        t0 = time.perf_counter()
        report = evaluate_conversation(load_conversation(folder), seed=seed)
        secs = time.perf_counter() - t0
        d, c = report.divisive, report.consensus
        print(
            f"{report.conversation:<34} {report.participants:>5} {report.comments:>4} "
            f"{report.density:>5.2f} {report.polis_groups:>2} {report.our_camps:>2} "
            f"{report.ari:>6.3f} {fmt(report.ari_at_polis_k, '6.3f'):>6} {report.ari_participants:>5}  {fmt(d.precision, '5.2f'):>5} "
            f"{fmt(d.recall, '5.2f'):>5} {fmt(d.top_overlap, '7.2f'):>7}  "
            f"{fmt(c.precision, '6.2f'):>6} {fmt(c.recall, '6.2f'):>6} {secs:>5.1f}"
        )
        rows.append({**report.as_dict(), "seconds": secs})
    aris = [r["ari"] for r in rows]
    print(f"mean ARI {np.mean(aris):.3f}, median {np.median(aris):.3f}")
    return rows


def run_argkp(root: Path) -> list[dict]:
    rows = []
    splits = [("test", root / "argkp2021" / "test_data")]
    if (root / "argkp2021" / "kpm_data" / "arguments_dev.csv").is_file():
        splits.append(("dev", root / "argkp2021" / "kpm_data"))
    print("\nArgKP-2021 track 1 (key-point matching), mAP over the top 50% per topic/stance")
    print(f"{'split':<6} {'matcher':<34} {'strict':>7} {'relaxed':>8} {'args':>5} {'secs':>6}")
    for name, folder in splits:
        split = load_split(folder, name)
        t0 = time.perf_counter()
        preds = embedding_match_scores(split)
        ours = kpa_map(preds, split)
        secs = time.perf_counter() - t0
        rnd = random.Random(0)
        rand = [
            kpa_map({a: {k: rnd.random() for k in kps} for a, kps in preds.items()}, split)
            for _ in range(20)
        ]
        rand_strict = float(np.mean([r.strict for r in rand]))
        rand_relaxed = float(np.mean([r.relaxed for r in rand]))
        print(
            f"{name:<6} {'all-MiniLM-L6-v2 cosine (zero-shot)':<34} {ours.strict:>7.3f} "
            f"{ours.relaxed:>8.3f} {ours.arguments:>5} {secs:>6.1f}"
        )
        print(
            f"{name:<6} {'random key point (mean of 20)':<34} {rand_strict:>7.3f} {rand_relaxed:>8.3f}"
        )
        rows.append(
            {
                "split": name,
                "strict": ours.strict,
                "relaxed": ours.relaxed,
                "arguments": ours.arguments,
                "per_group": [list(g) for g in ours.per_group],
                "random_strict": rand_strict,
                "random_relaxed": rand_relaxed,
                "seconds": secs,
            }
        )
    for p in PUBLISHED:
        print(
            f"{'test':<6} {p['system'][:34]:<34} {p['strict']:>7.3f} {p['relaxed']:>8.3f}  ({p['source']})"
        )
    print(
        "The overview paper's own baseline table (Friedman et al. 2021) could not be retrieved; "
        "the rows above are participants' published reports."
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    root = opts.data or default_data()
    print(f"data: {root}")
    t0 = time.perf_counter()
    polis = run_polis(root / "polis", opts.seed)
    t1 = time.perf_counter()
    argkp = run_argkp(root)
    t2 = time.perf_counter()
    print(f"\nwall time: Polis {t1 - t0:.1f} s, ArgKP {t2 - t1:.1f} s, total {t2 - t0:.1f} s")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "benchmark": "eval_polis_argkp",
                "data": str(root),
                "seed": opts.seed,
                "polis": polis,
                "argkp": argkp,
                "argkp_published": PUBLISHED,
                "wall_seconds": {"polis": t1 - t0, "argkp": t2 - t1, "total": t2 - t0},
            },
            indent=2,
            default=lambda o: None if isinstance(o, float) and math.isnan(o) else str(o),
        ),
        encoding="utf-8",
    )
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
