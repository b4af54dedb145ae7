"""Calibrate the restates-topic rule (crux_lab.analysis.restates) on the shipped decks.

    .venv/bin/python benchmarks/restates_topic_threshold.py [--out benchmarks/results/restates_topic_threshold.json]

Fits the embedding threshold and the word-coverage threshold on the crypto and AI-policy decks
(best F1), reports the held-out housing deck, and compares with the constants in use.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from crux_lab.analysis.restates import (
    CLOSE_AT,
    COVERAGE_AT,
    EXTRA_AT,
    RESTATES_AT,
    calibrate,
    calibration_pairs,
    real_model_pairs,
    score_pairs,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/restates_topic_threshold.json"))
    args = ap.parse_args()
    pairs = calibration_pairs()
    cal = calibrate(pairs)
    rows = {
        "pairs": len(pairs),
        "positives": sum(p.restates for p in pairs),
        "fit (crypto + ai-policy)": cal.n_fit,
        "held out (housing)": cal.n_held_out,
        "embedding threshold": cal.threshold,
        "word coverage threshold": cal.coverage,
        "fit F1": cal.fit_f1,
        "held-out": cal.held_out,
        "real-model questions (labelled by hand, constants in use)": score_pairs(real_model_pairs()),
        "constants in use": {"RESTATES_AT": RESTATES_AT, "COVERAGE_AT": COVERAGE_AT, "EXTRA_AT": EXTRA_AT, "CLOSE_AT": CLOSE_AT},
    }
    from _report import print_and_save  # benchmarks/ is on sys.path when run as a script

    print_and_save(rows, args.out)


if __name__ == "__main__":
    main()
