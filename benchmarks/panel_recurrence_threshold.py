"""Calibrate the cross-debate crux recurrence threshold (crux_lab.analysis.recurrence).

Different cruxes: every pair of proposition questions of the shipped decks and the panel test
deck. Same crux: hand-written paraphrase pairs. Prints paraphrase recall and false merges per
threshold, and the embedding distance of negations vs paraphrases (used by analysis.shifts).
Writes benchmarks/results/panel_recurrence_threshold.json.

    .venv/bin/python benchmarks/panel_recurrence_threshold.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from crux_lab.analysis.recurrence import RECURRENCE_THRESHOLD
from crux_lab.embed import get_embedder
from crux_lab.personas.loader import load_decks

ROOT_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT_DIR))  # the synthetic test deck lives with the tests
from tests.engines.crux_deck import PROPOSITIONS  # noqa: E402

PARAPHRASES = [
    ("Does a fixed supply make bitcoin a superior store of value?", "Whether bitcoin's capped supply makes it a better store of value"),
    ("Is bitcoin's volatility disqualifying for a treasury reserve?", "Whether volatility rules bitcoin out as a reserve asset for a treasury"),
    ("Can government custody of bitcoin be made secure?", "Whether a government can hold bitcoin keys safely against theft"),
    ("Does proof-of-work energy expenditure constitute security?", "Whether the energy burned by proof of work is what makes the chain secure"),
    ("Should monetary sovereignty outweigh fiscal prudence?", "Whether sovereignty over money matters more than prudence with public funds"),
    ("Should frontier AI training runs require a license?", "Whether governments should license large AI training runs"),
    ("Will building more housing lower rents?", "Whether increasing housing supply brings rents down"),
    ("Is open-sourcing model weights net positive for safety?", "Whether releasing AI model weights openly makes AI safer overall"),
    ("Does minimum wage increase unemployment?", "Whether raising the minimum wage costs jobs"),
    ("Is inflation primarily a supply-side phenomenon?", "Whether inflation is driven mainly by supply shocks"),
]
NEGATION = (
    "Bitcoin's fixed supply makes it a superior store of value. Absolute scarcity is the one property no central bank can debase.",
    "It is not the case that bitcoin's fixed supply makes it a superior store of value. Value needs intrinsic use.",
    "Scarcity is what makes bitcoin the best store of value; no central bank can print more of it.",
)


def main() -> None:
    e = get_embedder()
    questions = [p.question for d in load_decks() for p in d.propositions] + [q for _, _, q, *_ in PROPOSITIONS]
    questions = list(dict.fromkeys(questions))
    v = e.encode(questions)
    sim = v @ v.T
    diff = sim[np.triu_indices(len(questions), 1)]
    same = [float(e.encode([a])[0] @ e.encode([b])[0]) for a, b in PARAPHRASES]
    rows = []
    print(f"{len(questions)} distinct crux questions, {len(diff)} different pairs, {len(same)} paraphrase pairs")
    print(f"{'threshold':>9} {'paraphrase recall':>18} {'false merges':>13}")
    for t in (0.5, 0.55, 0.6, 0.62, 0.65, 0.7, 0.75):
        rec = sum(x >= t for x in same)
        fm = int((diff >= t).sum())
        rows.append({"threshold": t, "paraphrase_recall": rec / len(same), "false_merges": fm, "different_pairs": len(diff)})
        mark = "  <- RECURRENCE_THRESHOLD" if abs(t - RECURRENCE_THRESHOLD) < 1e-9 else ""
        print(f"{t:>9.2f} {rec:>11}/{len(same):<6} {fm:>7}/{len(diff)}{mark}")
    a, b, c = e.encode(list(NEGATION))
    neg, para = 1 - float(a @ b), 1 - float(a @ c)
    print(f"embedding distance: negated restatement {neg:.3f}, paraphrase {para:.3f}")
    out = Path(__file__).parent / "results" / "panel_recurrence_threshold.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "questions": len(questions), "rows": rows, "different_max": float(diff.max()),
        "paraphrase_min": min(same), "negation_distance": neg, "paraphrase_distance": para,
        "threshold": RECURRENCE_THRESHOLD,
    }, indent=1))


if __name__ == "__main__":
    main()
