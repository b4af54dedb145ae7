"""Crux quality per engine (issue 14): cruxes and cards, topic restatement, recovery F1 by
text, arena Bradley-Terry scores, calls and cost. Simulated backend, the shipped decks.

    .venv/bin/python benchmarks/crux_quality.py [--seeds 0,1,2] [--engines ...] [--decks crypto,ai-policy,housing]
        [--max-turns 30] [--out benchmarks/results/crux_quality.json]
    .venv/bin/python benchmarks/crux_quality.py --merge a.json b.json ... --out all.json

(``--merge`` combines runs of the script, e.g. one per deck run in parallel: the rows are
pooled and the arena scores refitted over every judgement.)

Per deck: its first topic and its first three personas, through every engine (the direct and
cot baselines included) for each seed, stored in a fresh DuckDB. Then:

- ``cards``/``cruxes``: mean per run; ``restates (cards)``: flagged cards / all cards
  (goal < 10%); ``restates (items)``: the same over every crux item (cards, cruxes, disputes);
- ``recovery F1``: crux items matched to the deck's contested propositions (those the three
  personas hold pro and con) by text only, with the evaluation's calibrated threshold
  (:func:`crux_lab.analysis.recovery.score_recovery`); mean over runs, a run that found
  nothing counting 0. Left out (and said so) when the recovery scorer is unavailable;
- arena: every pair of engines judged on every shared (deck, seed), both orders, by the
  simulated judge (which scores from the planted ground truth); Bradley-Terry scores with
  95% bootstrap intervals;
- ``calls``, ``tokens``, ``cost $``: mean per run (modelled prices on the simulator).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crux_lab.analysis.metrics import crux_texts  # noqa: E402
from crux_lab.eval.compare import all_engines, run_comparison  # noqa: E402
from crux_lab.models import DebateResult, DisagreementType  # noqa: E402
from crux_lab.personas.loader import load_decks, load_personas  # noqa: E402


@dataclass(frozen=True)
class _Prop:
    id: str
    text: str
    question: str


@dataclass(frozen=True)
class DeckScenario:
    """A shipped deck in the shape the recovery scorer reads: its propositions, and the
    contested ones (held pro and con among the debate's personas) with their planted type."""

    id: str
    propositions: tuple[_Prop, ...]
    contested: dict[str, DisagreementType]


def deck_scenario(deck_id: str, persona_ids: list[str]) -> DeckScenario:
    deck = next(d for d in load_decks() if d.id == deck_id)
    personas = load_personas(persona_ids)
    contested: dict[str, DisagreementType] = {}
    for p in deck.propositions:
        stances = {s.stance for pid in persona_ids if (s := personas[pid].stance_on(p.id)) is not None}
        if {"pro", "con"} <= stances:
            contested[p.id] = p.disagreement_type or DisagreementType.claim
    return DeckScenario(deck.id, tuple(_Prop(p.id, p.text, p.question) for p in deck.propositions), contested)


def recovery_f1(result: DebateResult, scenario: DeckScenario) -> float | None:
    try:
        from crux_lab.analysis.recovery import score_recovery
    except ImportError:
        return None
    return float(score_recovery(result, scenario).f1)  # type: ignore[arg-type]


def _mean(xs: list[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return round(sum(xs) / len(xs), 4) if xs else math.nan


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--engines", default=",".join(all_engines()))
    ap.add_argument("--decks", default="crypto,ai-policy,housing")
    ap.add_argument("--max-turns", type=int, default=30)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/crux_quality.json")
    ap.add_argument("--merge", type=Path, nargs="+", help="Combine earlier outputs instead of running.")
    args = ap.parse_args()
    if args.merge:
        merge(args.merge, args.out, args.bootstrap)
        return
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    decks = {d.id: d for d in load_decks()}
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    recovery_ready = True
    with tempfile.TemporaryDirectory(prefix="crux-quality-") as tmp:
        db = Path(tmp) / "q.duckdb"
        for deck_id in args.decks.split(","):
            deck = decks[deck_id]
            persona_ids = deck.persona_ids[:3]
            topic = deck.topics[0]
            scenario = deck_scenario(deck_id, persona_ids)
            for seed in seeds:
                out = run_comparison(topic, persona_ids, engines, seed, db, runs_dir=Path(tmp) / "runs",
                                     max_turns=args.max_turns, on_message=lambda m: print(f"  {m}", flush=True))
                for name, why in out.skipped.items():
                    print(f"  skipped {name}: {why}", flush=True)
                for r in out.results:
                    f1 = recovery_f1(r, scenario)
                    recovery_ready = recovery_ready and f1 is not None
                    cards = [c.restates_topic for c in r.crux_cards]
                    rows.append({
                        "deck": deck_id, "seed": seed, "engine": r.engine, "run_id": r.run_id, "error": r.error,
                        "cruxes": len(r.cruxes), "cards": len(r.crux_cards), "crux_items": len(crux_texts(r)),
                        "cards_restating": sum(1 for c in cards if c), "restates_rate_items": r.metrics.get("restates_topic_rate", math.nan),
                        "recovery_f1": f1 if f1 is not None else math.nan,
                        "calls": r.usage.calls, "tokens": r.usage.input_tokens + r.usage.output_tokens, "cost_usd": r.usage.cost_usd,
                        "falsifier_concreteness": r.metrics.get("falsifier_concreteness", math.nan),
                        "voice_fidelity": r.metrics.get("voice_fidelity", math.nan),
                        "reasoning_differentiation": r.metrics.get("reasoning_differentiation", math.nan),
                    })
                    print(f"{deck_id} seed {seed} {r.engine}: {len(r.cruxes)} cruxes, {len(r.crux_cards)} cards, "
                          f"F1 {f1 if f1 is not None else '-'}, {r.usage.calls} calls", flush=True)
        # Arena: every pair of engines with runs, on every shared (deck, seed).
        from crux_lab.arena.cli import plan, run_arena
        from crux_lab.arena.core import bt_with_bootstrap, load_card_sets, write_judgements
        from crux_lab.store import connect

        con = connect(db)
        try:
            ran = sorted({r["engine"] for r in rows}, key=engines.index)
            pairs = plan(load_card_sets(con, ran), ran)
            judgements = asyncio.run(run_arena(pairs, "simulated"))
            write_judgements(con, judgements)
        finally:
            con.close()
        scores = bt_with_bootstrap(judgements, samples=args.bootstrap)
    wall = round(time.perf_counter() - started, 1)
    report(rows, judgements, scores, engines, recovery_ready, args.out,
           {"seeds": seeds, "decks": args.decks.split(","), "max_turns": args.max_turns, "wall_s": wall})


def merge(paths: list[Path], out: Path, samples: int) -> None:
    from crux_lab.arena.core import Judgement, bt_with_bootstrap

    parts = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    rows = [r for part in parts for r in part["runs"]]
    fields = set(Judgement.__dataclass_fields__)
    judgements = [Judgement(**{k: v for k, v in j.items() if k in fields}) for part in parts for j in part["judgements"]]
    engines = list(dict.fromkeys(r["engine"] for r in rows))
    scores = bt_with_bootstrap(judgements, samples=samples)
    recovery_ready = all(not (isinstance(r["recovery_f1"], float) and math.isnan(r["recovery_f1"])) and r["recovery_f1"] != "NaN" for r in rows)
    meta = {"merged": [str(p) for p in paths], "seeds": sorted({s for part in parts for s in part["seeds"]}),
            "decks": [d for part in parts for d in part["decks"]], "max_turns": parts[0]["max_turns"],
            "wall_s": sum(part["wall_s"] for part in parts)}
    report(rows, judgements, scores, engines, recovery_ready, out, meta)


def report(rows: list[dict[str, Any]], judgements: list[Any], scores: Any, engines: list[str], recovery_ready: bool,
           out: Path, meta: dict[str, Any]) -> None:
    summary: dict[str, dict[str, Any]] = {}
    for engine in engines:
        mine = [r for r in rows if r["engine"] == engine]
        if not mine:
            continue
        n_cards = sum(r["cards"] for r in mine)
        summary[engine] = {
            "runs": len(mine),
            "cruxes": _mean([r["cruxes"] for r in mine]),
            "cards": _mean([r["cards"] for r in mine]),
            "restates_rate_cards": round(sum(r["cards_restating"] for r in mine) / n_cards, 4) if n_cards else None,
            "restates_rate_items": _mean([r["restates_rate_items"] for r in mine]),
            **({"recovery_f1": _mean([r["recovery_f1"] for r in mine])} if recovery_ready else {}),
            "arena_bt": scores.score.get(engine), "arena_ci": [scores.low.get(engine), scores.high.get(engine)],
            "arena_record": scores.record.get(engine),
            "calls": _mean([r["calls"] for r in mine]), "tokens": _mean([r["tokens"] for r in mine]),
            "cost_usd": _mean([r["cost_usd"] for r in mine]),
            "falsifier_concreteness": _mean([r["falsifier_concreteness"] for r in mine]),
            "voice_fidelity": _mean([r["voice_fidelity"] for r in mine]),
            "reasoning_differentiation": _mean([r["reasoning_differentiation"] for r in mine]),
            "errors": sum(1 for r in mine if r["error"]),
        }
    cols = ["runs", "cruxes", "cards", "restates_rate_cards", "restates_rate_items", "recovery_f1", "arena_bt", "calls", "tokens", "cost_usd"]
    cols = [c for c in cols if c != "recovery_f1" or recovery_ready]
    print("\n" + "engine".ljust(11) + "".join(c[:14].rjust(15) for c in cols) + "   arena 95% CI")
    for engine, s in summary.items():
        cells = "".join((f"{s[c]:.4g}" if isinstance(s[c], float) else str(s[c])).rjust(15) for c in cols)
        print(engine.ljust(11) + cells + f"   [{s['arena_ci'][0]}, {s['arena_ci'][1]}]")
    if not recovery_ready:
        print("recovery F1 left out: the recovery scorer (crux_lab.analysis.recovery) is not available.")
    print(f"arena: {scores.n_pairs} pairs of runs, {scores.n_judgements} judgements, simulated judge (planted ground truth)")
    print(f"wall {meta['wall_s']}s")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        **meta, "backend": "simulated", "summary": summary, "runs": rows,
        "arena": {"scores": scores.score, "low": scores.low, "high": scores.high, "pairs": scores.n_pairs,
                  "judgements": scores.n_judgements},
        "judgements": [j.__dict__ for j in judgements],
    }, indent=1, default=str), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
