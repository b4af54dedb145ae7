"""Fake-consensus experiment: the dialogue engine (Dung graph) vs DCG on polarized persona pairs.

The Dung-graph crystallizer can extract contradictory claims without an attack edge between
them; Dung semantics then put both in the grounded extension and a polarized debate is
reported as "consensus" (or contradictory claims as common ground). The DCG forces every
claim onto a binary dispute, so that cannot happen.

For every polarized pair of the shipped library (same deck, at least ``--min-contested``
propositions with opposite ground-truth stances), both engines debate the deck's first topic
on the simulated backend with ``missed_attack`` in {0, 0.2, 0.4} over several seeds. Each
result is audited against ground truth (:mod:`crux_lab.analysis.fake_consensus`), which
matches arguments, disputes, cruxes and turns to the planted propositions by their text alone
(the simulator's word-overlap recognizer; no id is trusted), on the one-channel path: engines
learn only what their prompts asked the simulator to state.

- ``consensus``: the pair was labelled "consensus";
- ``contradictory``: contradictory claims (opposite final ground-truth stances on the same
  proposition) were counted as common ground;
- ``fake``: either of the two (the seed-01 bug);
- ``contested_cg``: mean number of common-ground items on propositions the pair disputes,
  including one-sided claims nobody attacked (a broader, weaker signal);
- ``crux_recall``: the cost side, the share of contested propositions both sides spoke to that
  ended as a structural crux (DCG dispute; Dung-graph symmetric difference or ranked assumption).

    .venv/bin/python benchmarks/fake_consensus.py            # full grid
    .venv/bin/python benchmarks/fake_consensus.py --quick    # 1 pair, 2 seeds

Prints a table and writes benchmarks/results/fake_consensus.json.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import platform
import time
from collections import Counter
from pathlib import Path

from crux_lab.analysis.fake_consensus import audit
from crux_lab.llm.simulated.options import SimulatorKnobs
from crux_lab.models import DebateConfig
from crux_lab.personas.loader import load_decks, load_personas, propositions_for
from crux_lab.runner import run_debate

LEVELS = (0.0, 0.2, 0.4)
ENGINES = ("dialogue", "dcg")
OUT = Path(__file__).parent / "results" / "fake_consensus.json"


def polarized_pairs(min_contested: int) -> list[tuple[str, str, str, int]]:
    """(deck topic, persona a, persona b, contested count) for every polarized pair."""
    out = []
    for deck in load_decks():
        personas = load_personas(deck.persona_ids)
        for a, b in itertools.combinations(deck.persona_ids, 2):
            n = 0
            for prop in deck.propositions:
                sa, sb = personas[a].stance_on(prop.id), personas[b].stance_on(prop.id)
                if sa and sb and {sa.stance, sb.stance} == {"pro", "con"}:
                    n += 1
            if n >= min_contested:
                out.append((deck.topics[0], a, b, n))
    return sorted(out, key=lambda t: (-t[3], t[1], t[2]))


async def one(engine: str, topic: str, pair: tuple[str, str], missed: float, seed: int) -> dict:
    cfg = DebateConfig(topic=topic, persona_ids=list(pair), engine=engine, seed=seed,
                       backend_options=SimulatorKnobs(missed_attack=missed).as_options())
    t0 = time.perf_counter()
    r = await run_debate(cfg)
    wall = time.perf_counter() - t0
    a = audit(r, load_personas(pair), propositions_for(pair))
    return {
        "engine": engine, "pair": list(pair), "missed_attack": missed, "seed": seed,
        "regime": r.regime.value, "polarized": a.polarized, "consensus": a.labelled_consensus,
        "contradictory": bool(a.contradictory_common_ground), "fake": a.fake_consensus,
        "contradictory_items": a.contradictory_common_ground, "contested_cg": len(a.contested_common_ground),
        "common_ground": len(r.common_ground), "turns": len(r.transcript), "complete": r.complete,
        "crux_recall": a.crux_recall, "discussed_contested": a.discussed_contested, "found_cruxes": a.found_cruxes,
        "wall_s": round(wall, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--pairs", type=int, default=6, help="at most this many pairs (most polarized first)")
    ap.add_argument("--min-contested", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.pairs = 2, 1
    pairs = polarized_pairs(args.min_contested)[: args.pairs]
    print(f"{len(pairs)} polarized pairs: " + "; ".join(f"{a} vs {b} ({n} contested)" for _, a, b, n in pairs))
    rows = []
    for topic, a, b, _ in pairs:
        for missed in LEVELS:
            for engine in ENGINES:
                for seed in range(args.seeds):
                    rows.append(asyncio.run(one(engine, topic, (a, b), missed, seed)))
            done = [r for r in rows if r["pair"] == [a, b] and r["missed_attack"] == missed]
            print(f"  {a} vs {b}, missed_attack={missed}: fake dialogue {sum(r['fake'] for r in done if r['engine'] == 'dialogue')}"
                  f"/{args.seeds}, dcg {sum(r['fake'] for r in done if r['engine'] == 'dcg')}/{args.seeds}", flush=True)
    summary = []
    header = f"{'engine':9} {'missed':>6} {'runs':>4} {'fake':>6} {'consensus':>9} {'contradict':>10} {'contested_cg':>12} {'crux_recall':>11}  regimes"
    print(header)
    print("-" * len(header))
    for engine in ENGINES:
        for missed in LEVELS:
            sel = [r for r in rows if r["engine"] == engine and r["missed_attack"] == missed and r["polarized"]]
            n = len(sel) or 1
            s = {
                "engine": engine, "missed_attack": missed, "runs": len(sel),
                "fake_rate": round(sum(r["fake"] for r in sel) / n, 3),
                "consensus_rate": round(sum(r["consensus"] for r in sel) / n, 3),
                "contradictory_rate": round(sum(r["contradictory"] for r in sel) / n, 3),
                "mean_contested_cg": round(sum(r["contested_cg"] for r in sel) / n, 3),
                "crux_recall": round(sum(r["crux_recall"] or 0 for r in sel) / max(1, sum(r["crux_recall"] is not None for r in sel)), 3),
                "regimes": dict(Counter(r["regime"] for r in sel)),
            }
            summary.append(s)
            print(f"{engine:9} {missed:>6.1f} {s['runs']:>4} {s['fake_rate']:>6.2f} {s['consensus_rate']:>9.2f} "
                  f"{s['contradictory_rate']:>10.2f} {s['mean_contested_cg']:>12.2f} {s['crux_recall']:>11.2f}  {s['regimes']}")
    by = {(s["engine"], s["missed_attack"]): s["fake_rate"] for s in summary}
    for missed in LEVELS:
        v2, dcg = by[("dialogue", missed)], by[("dcg", missed)]
        ratio = "n/a (dcg 0)" if dcg == 0 else f"{v2 / dcg:.2f}"
        print(f"missed_attack={missed}: fake-consensus rate dialogue {v2:.2f} vs dcg {dcg:.2f} (ratio dialogue/dcg: {ratio})")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({
        "pairs": [{"topic": t, "a": a, "b": b, "contested": n} for t, a, b, n in pairs],
        "seeds": args.seeds, "levels": list(LEVELS), "summary": summary, "runs": rows,
        "python": platform.python_version(),
    }, indent=2))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
