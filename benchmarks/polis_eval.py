"""Cruxes against human opinion data: every vendored Polis conversation through the engines.

    .venv/bin/python benchmarks/polis_eval.py                       # the simulator (a plumbing check)
    .venv/bin/python benchmarks/polis_eval.py --backend openai --base-url http://127.0.0.1:8080/v1 \\
        [--model-strong M --model-fast M] [--engines direct,cot,dcg,panel] [--max-turns 8] [--seeds 0,1]

For each conversation in ``--data`` (default ``tests/data/polis``, the ten of
``../shared/data/polis``; CC BY 4.0, The Computational Democracy Project) it computes the
ground truth from the votes (:mod:`crux_lab.analysis.polis_truth`), writes one persona per
opinion group, debates each engine and seed, and scores by text
(:mod:`crux_lab.analysis.polis_eval`): crux precision, recall@k (with the ceiling: the share of
the top k that some persona holds), false common ground, camp ARI, calls and wall time. A
conversation whose votes cannot give a ground truth is listed with the reason and left out.

The personas' minds leave out the held-out statements (:mod:`crux_lab.analysis.polis_heldout`:
the top-5 divisive statements, a seeded fifth of the other clear statements, and their near
copies at cosine 0.8); a conversation whose groups keep too few clear statements is listed
with the counts and left out. Two more tables: cruxes recovered **with sides** against the
held-out divisive statements (precision, recall@5, F1 with 95% intervals over conversations;
arms such as ``direct+informed=true+samples=3`` and the canaries beside), and **persona
fidelity** (:mod:`crux_lab.analysis.polis_fidelity`): each persona asked each held-out
fidelity statement (the poll, :func:`crux_lab.eval.polis.ask_each_persona`),
accuracy and Cohen's kappa against its group's real vote, beside the majority and
nearest-statement baselines (``--no-fidelity`` skips it).

Run folders and persona libraries go to ``benchmarks/results/polis-<backend>/`` (a rerun reuses
finished debates), scores into ``benchmarks/results/polis_eval-<backend>.duckdb`` (``metrics``)
and ``benchmarks/results/polis_eval-<backend>.json``; the Markdown table is printed for
``benchmarks/README.md``. Numbers, not asserts. On the simulator the personas say exactly what
their stances say, so its numbers check the plumbing, not the engines.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crux_lab.analysis.polis import PolisDataError, list_conversations  # noqa: E402
from crux_lab.analysis.polis_eval import prepare, sides_markdown, summarize  # noqa: E402
from crux_lab.analysis.polis_fidelity import fidelity_row, fidelity_table  # noqa: E402
from crux_lab.analysis.stats import cell  # noqa: E402
from crux_lab.eval.cli import parse_seeds, with_interval  # noqa: E402
from crux_lab.eval.polis import FidelityItems, ask_each_persona, run_polis_eval  # noqa: E402

DEFAULT_ENGINES = ("direct,direct+informed=true,direct+informed=true+samples=3,cot,blitz,classical,graph,dialogue,"
                   "dcg,panel,crux_rooms")


def markdown(rows: list[dict[str, Any]]) -> str:
    """The per-engine summary as a Markdown table."""
    head = ["engine", "debates", "crux precision [95% CI]", "recall@k [95% CI]", "recall ceiling",
            "false common ground", "camp ARI", "calls", "wall s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join([
            r["engine"], str(r["debates"]), with_interval(r["precision"], r["precision_ci"]).replace("—", "–"),
            with_interval(r["recall_at_k"], r["recall_ci"]).replace("—", "–"), cell(r["recall_ceiling"]),
            f"{r['false_common_ground']} of {r['common_ground']}", cell(r["camp_ari"]), str(r["calls"]),
            f"{r['wall_s']:.0f}",
        ]) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "tests" / "data" / "polis")
    ap.add_argument("--engines", default=DEFAULT_ENGINES)
    ap.add_argument("--backend", default="simulated", help="simulated | openai | anthropic")
    ap.add_argument("--base-url", default=None)
    ap.add_argument("--model-strong", default=None)
    ap.add_argument("--model-fast", default=None)
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--max-turns", type=int, default=30)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    ap.add_argument("--no-fidelity", action="store_true", help="Do not ask the personas the fidelity statements.")
    ap.add_argument("--fidelity-items", type=Path, default=None,
                    help="Keep each conversation's fidelity answers here, with their reasons (commit them; "
                         "crux_lab.eval.polis.rescore_fidelity re-scores; a rerun asks only what is missing). "
                         "Default: the work folder.")
    ap.add_argument("--items", type=Path, default=None,
                    help="Write each debate's compact items here (commit them; crux_lab.eval.polis.rescore_polis re-scores).")
    args = ap.parse_args()

    from crux_lab.console import backend_choice, llm_settings

    backend = backend_choice(args.backend, None)
    settings = llm_settings(backend, args.base_url, args.model_strong, args.model_fast, None)
    models, url = settings.models, settings.base_url
    seeds = parse_seeds(args.seeds)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    tag = backend if backend == "simulated" else f"{backend}-{models.get('strong', 'model')}".replace("/", "_")
    work = args.out / f"polis-{tag}"
    db = args.out / f"polis_eval-{tag}.duckdb"
    started = time.perf_counter()
    scores, canaries, conversations, skipped, failures, fidelity = [], [], [], {}, {}, []
    for folder in list_conversations(args.data):
        try:
            setup = prepare(folder, work / "library" / folder.name, k=args.k)
        except PolisDataError as exc:
            skipped[folder.name] = str(exc)
            print(f"{folder.name}: left out: {exc}", flush=True)
            continue
        t = setup.truth
        h = setup.held
        print(f"{t.conversation}: {len(setup.minds)} personas, top {t.k} divisive {', '.join(t.top_divisive)}"
              + (f"; held out {len(h.divisive)} divisive, {len(h.fidelity)} fidelity, {len(h.near)} near copies" if h else ""),
              flush=True)
        for note in setup.skipped:
            print(f"  skipped: {note}", flush=True)
        if not args.no_fidelity and h is not None:
            kept = FidelityItems(args.fidelity_items or work / "fidelity", setup, model=models.get("strong", ""),
                                 backend=backend)
            answers = ask_each_persona(setup, backend=backend, models=models, base_url=url, known=kept.known,
                                       on_answer=kept.add)
            row = fidelity_row(answers, t, h, setup.minds)
            fidelity.append({**row, "answers": {f"{p}|{s}": a for (p, s), a in answers.items()}})
            print(f"  fidelity: persona {row['persona_accuracy']:.2f} (kappa {row['persona_kappa']:.2f}, "
                  f"{row['unsure']} UNSURE of {row['pairs']}), majority {row['majority_accuracy']:.2f}, "
                  f"nearest {row['nearest_accuracy']:.2f}", flush=True)
        run = run_polis_eval(
            setup, engines, work, backend=backend, seeds=seeds, max_turns=args.max_turns, models=models,
            base_url=url, db=db, items_dir=args.items,
            on_result=lambda s: print(f"  {s.progress()}", flush=True),
        )
        scores += run.scores
        canaries += run.canaries
        failures.update({f"{t.conversation}/{k}": v for k, v in run.failures.items()})
        conversations.append({"conversation": t.conversation, "topic": setup.library.topic,
                              "groups": t.group_sizes, "statements": len(t.statements),
                              "divisive": len(t.divisive), "consensus": len(t.consensus),
                              "top_divisive": list(t.top_divisive), "personas": list(setup.library.persona_ids),
                              "skipped_groups": setup.skipped, "heldout": h.as_dict() if h else None})
    rows = summarize(scores + canaries)
    table = markdown([r for r in rows if not r["engine"].startswith("canary:")])
    sides = sides_markdown(rows)
    fid = fidelity_table(fidelity)
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"polis_eval-{tag}.json"
    out.write_text(json.dumps({
        "backend": backend, "models": models, "base_url": url, "engines": engines, "seeds": seeds,
        "max_turns": args.max_turns, "k": args.k, "wall_s": round(time.perf_counter() - started, 1),
        "conversations": conversations, "left_out": skipped, "failures": failures, "summary": rows,
        "scores": [asdict(s) for s in scores + canaries], "table": table, "sides_table": sides,
        "fidelity": fidelity, "fidelity_table": fid,
    }, indent=1, default=str))
    print()
    print(table)
    print()
    print(sides)
    if fidelity:
        print()
        print(fid)
    for key, err in failures.items():
        print(f"failed {key}: {err}")
    print(f"\nwrote {out} and {db}")


if __name__ == "__main__":
    main()
