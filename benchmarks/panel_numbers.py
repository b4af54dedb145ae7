"""Panel (and crux_rooms) numbers on the simulated backend, against the panel's design budget.

For 4 personas and 3 aspects:

- calls, input / output / cached tokens and cost per debate, from the ledger, vs the design
  budget (~63 calls, ~175k input tokens, ~$0.55 uncached). The simulator does not model prompt
  caching, so the ledger's cached tokens are 0; the table adds an *estimate*: every call that
  marks its persona system block for caching reads it from cache after that system block's
  first use (what the Anthropic backend would report), priced with crux_lab/data/prices.json;
- messages per debate vs the design's 50-60;
- wall time vs the critical path of the call graph, with the simulator's modelled latency in
  realtime mode (scaled by LATENCY_SCALE so the benchmark stays short): ratio wall/critical
  path (1.0 = perfect overlap of parallel rounds) and the overlap factor serial-sum/wall;
- crux cards produced; how many match a planted contested proposition of the personas *by
  text alone* (the card question's embedding similarity to the proposition's text or question
  at or above the recovery threshold calibrated on held-out paraphrases,
  :mod:`crux_lab.analysis.calibration`; the engine never sees proposition ids), how many of
  those have the planted disagreement type, and how many cards restate the topic
  (:func:`crux_lab.analysis.restates.restates_topic`);
- the post-generation sycophancy check on/off at sycophancy knob 0.3.

Decks: the demo debate (Saylor, Schiff, Hayes on "Is Bitcoin a better long-term store of value
than gold?", a topic that is itself one of the deck's propositions, so a card must name a
premise under it), the shipped crypto deck with 4 personas, and the synthetic test deck.

    .venv/bin/python benchmarks/panel_numbers.py [--seeds 3] [--latency-scale 0.05] [--quick]

``--quick`` skips the realtime and post-check runs.

Writes benchmarks/results/panel_numbers.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from crux_lab.analysis.restates import restates_topic_flags
from crux_lab.embed import get_embedder
from crux_lab.llm.pricing import cost_usd
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.llm.simulated.options import SimulatorKnobs
from crux_lab.models import DebateConfig, Usage
from crux_lab.personas.loader import get_deck, load_personas, propositions_for
from crux_lab.runner import DebateRun
from crux_lab.tokens import count_tokens

ROOT_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT_DIR))  # the synthetic test deck lives with the tests
from tests.engines.crux_deck import TOPIC as TEST_TOPIC  # noqa: E402
from tests.engines.crux_deck import write_test_deck  # noqa: E402
from tests.engines.scripted import ScriptedBackend  # noqa: E402

# The panel design's budget for 4 personas and 3 aspects.
BUDGET = {"calls": 63, "input_tokens": 175_000, "cost_usd": 0.55, "messages": (50, 60), "wall_s": 180}
CRYPTO = ["michael-saylor", "arthur-hayes", "peter-schiff", "vitalik-buterin"]
CRYPTO_TOPIC = "Should companies hold Bitcoin on their balance sheets?"
DEMO = ["michael-saylor", "peter-schiff", "arthur-hayes"]
DEMO_TOPIC = "Is Bitcoin a better long-term store of value than gold?"


def planted(ids: list[str]) -> dict[str, str]:
    """Propositions two of ``ids`` hold on opposite sides, with their planted type."""
    personas = load_personas(ids)
    out: dict[str, str] = {}
    for prop in propositions_for(ids):
        stances = [s for p in personas.values() if (s := p.stance_on(prop)) is not None]
        sides = {s.stance for s in stances}
        types = [s.disagreement_type.value for s in stances if s.disagreement_type is not None]
        if {"pro", "con"} <= sides and types:
            out[prop] = Counter(types).most_common(1)[0][0]
    return out


async def one(
    engine: str, ids: list[str], topic: str, seed: int, *, realtime: bool = False, scale: float = 1.0,
    knobs: SimulatorKnobs | None = None, params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    inner = SimulatedBackend(
        load_personas(ids), propositions_for(ids), seed=seed, knobs=knobs, realtime=realtime, latency_scale=scale
    )
    backend = ScriptedBackend(inner)
    config = DebateConfig(topic=topic, persona_ids=ids, engine=engine, seed=seed, params=params or {})
    run = DebateRun(config, backend=backend)
    get_embedder()  # load the model before timing (shift distances run after the last call)
    started = time.perf_counter()
    async for _ in run.events():
        pass
    wall = time.perf_counter() - started
    res = run.result
    latency = [c.latency_s for c in res.llm_calls]
    timeline = run.ctx.scratch["timeline"]
    # cache estimate: a cache_system call reads its system block from cache after its first use
    seen: set[str] = set()
    cached = writes = 0
    for q in backend.requests:
        if not q.cache_system:
            continue
        n = count_tokens(q.system)
        if q.system in seen:
            cached += n
        else:
            writes += n
            seen.add(q.system)
    strong = inner.model_for(next(c.tier for c in res.llm_calls if c.tier.value == "strong"))
    saved = cost_usd(strong, Usage(input_tokens=cached + writes)) - cost_usd(
        strong, Usage(cache_read_tokens=cached, cache_write_tokens=writes)
    )
    truth = planted(ids)
    about = planted_by_text([c.question for c in res.crux_cards], ids)
    matched = [(c, p) for c, p in zip(res.crux_cards, about, strict=True) if p in truth]
    typed = [c for c, p in matched if c.disagreement_type.value == truth[p]]
    restating = restates_topic_flags([c.question for c in res.crux_cards], topic)
    concede = [t for t in res.transcript if t.move is not None and t.move.value == "CONCEDE"]
    return {
        "calls": res.usage.calls,
        "input_tokens": res.usage.input_tokens,
        "output_tokens": res.usage.output_tokens,
        "cached_tokens_ledger": res.usage.cache_read_tokens,
        "cached_tokens_estimate": cached,
        "cost_usd": round(res.usage.cost_usd, 4),
        "cost_usd_cached_estimate": round(res.usage.cost_usd - saved, 4),
        "messages": len(res.transcript),
        "calls_by_purpose": dict(Counter(c.purpose for c in res.llm_calls)),
        "cards": len(res.crux_cards),
        "card_questions": [c.question for c in res.crux_cards],
        "cards_restating_topic": sum(restating),
        "cards_resolved": sum(c.resolved for c in res.crux_cards),
        "regime": res.regime.value,
        "distinct_card_propositions": len({p for _, p in matched}),
        "cards_matching_planted": len(matched),
        "cards_type_correct": len(typed),
        "planted_contested": len(truth),
        "rooms": len(run.ctx.scratch["rooms"]),
        "max_context_tokens": max(run.ctx.scratch["context_tokens"] or [0]),
        "wall_s": wall,
        "critical_path_s": timeline.critical_path(latency),
        "parallel_stages": {
            "n": sum(1 for st in timeline.stages if st.wall_s is not None),
            "wall_s": sum(st.wall_s for st in timeline.stages if st.wall_s is not None),
            "critical_s": sum(
                max(sum(latency[i] for i in c) for c in st.chains) for st in timeline.stages if st.wall_s is not None and st.chains
            ),
            "serial_s": sum(latency[i] for st in timeline.stages if st.wall_s is not None for c in st.chains for i in c),
        },
        "serial_s": timeline.serial_time(latency),
        "unjustified_concessions": sum("met my condition" not in t.dialogue.lower() for t in concede),
        "sycophancy_stats": run.ctx.scratch["anti_sycophancy"].as_dict(),
        "complete": res.complete,
    }


def planted_by_text(texts: list[str], ids: list[str]) -> list[str | None]:
    """The proposition each text is about, by embedding similarity alone (None below the
    calibrated recovery threshold)."""
    from crux_lab.analysis.calibration import default_calibration
    from crux_lab.analysis.textmatch import proposition_similarity

    props = list(propositions_for(ids).values())
    if not texts:
        return []
    sim = proposition_similarity(texts, props)
    at = default_calibration().threshold
    return [props[int(row.argmax())].id if row.max() >= at else None for row in sim]


def mean(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.fmean(r[key] for r in rows)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--latency-scale", type=float, default=0.2)
    ap.add_argument("--quick", action="store_true", help="skip the realtime and post-check runs")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    write_test_deck(tmp / "test")
    decks: list[tuple[str, list[str], str]] = []
    try:
        get_deck("crypto")
        decks.append(("demo (crypto, 3)", DEMO, DEMO_TOPIC))
        decks.append(("crypto (shipped)", CRYPTO, CRYPTO_TOPIC))
    except Exception:  # the shipped library is optional for this benchmark
        pass
    out: dict[str, Any] = {"budget": BUDGET, "latency_scale": args.latency_scale, "runs": {}}
    import os

    lines = []
    for label, ids, topic, root in [*(d + (None,) for d in decks), ("test deck", ["maximalist", "trader", "goldbug", "protocol_dev"], TEST_TOPIC, tmp / "test")]:
        if root is not None:
            os.environ["CRUX_LAB_PERSONAS"] = str(root)
        for engine in ("panel", "crux_rooms"):
            rows = [await one(engine, ids, topic, s) for s in range(args.seeds)]
            rt = None if args.quick else await one(engine, ids, topic, 0, realtime=True, scale=args.latency_scale)
            out["runs"][f"{label}/{engine}"] = {"per_seed": rows, "realtime": rt}
            lines.append((label, engine, rows, rt))
        if root is not None:
            del os.environ["CRUX_LAB_PERSONAS"]

    print(f"design budget: ~{BUDGET['calls']} calls, ~{BUDGET['input_tokens']:,} input tokens, ~${BUDGET['cost_usd']} uncached, 50-60 messages")
    print(f"means over {args.seeds} seeds (3 aspects); ratio = ours / budget")
    head = f"{'deck/engine':<28}{'calls':>7}{'ratio':>7}{'input':>9}{'ratio':>7}{'output':>8}{'cached*':>9}{'$ uncached':>11}{'$ cached*':>10}{'msgs':>6}{'cards':>6}{'topic':>6}{'match':>7}{'type ok':>8}{'distinct':>9}{'planted':>8}{'ctx max':>8}"
    print(head)
    for label, engine, rows, _ in lines:
        print(
            f"{label + '/' + engine:<28}{mean(rows, 'calls'):>7.1f}{mean(rows, 'calls') / BUDGET['calls']:>7.2f}"
            f"{mean(rows, 'input_tokens'):>9,.0f}{mean(rows, 'input_tokens') / BUDGET['input_tokens']:>7.2f}"
            f"{mean(rows, 'output_tokens'):>8,.0f}{mean(rows, 'cached_tokens_estimate'):>9,.0f}"
            f"{mean(rows, 'cost_usd'):>11.3f}{mean(rows, 'cost_usd_cached_estimate'):>10.3f}{mean(rows, 'messages'):>6.1f}"
            f"{mean(rows, 'cards'):>6.1f}{mean(rows, 'cards_restating_topic'):>6.1f}{mean(rows, 'cards_matching_planted'):>7.1f}{mean(rows, 'cards_type_correct'):>8.1f}"
            f"{mean(rows, 'distinct_card_propositions'):>9.1f}{rows[0]['planted_contested']:>8}"
            f"{max(r['max_context_tokens'] for r in rows):>8}"
        )
    print("* cached: estimate (the simulator reports no cache reads; the ledger's cached tokens are 0)")
    print("topic: cards whose question restates the topic (analysis.restates); match: cards whose question is, by text")
    print("alone, a planted contested proposition; type ok: and whose type is the planted type; distinct: different")
    print("planted propositions carded; planted: contested propositions of these personas")
    for label, engine, rows, _ in lines:
        print(f"  {label}/{engine} regimes: {dict(Counter(r['regime'] for r in rows))}; seed-0 cards:")
        for q in rows[0]["card_questions"]:
            print(f"    - {q}")
    if args.quick:
        path = Path(__file__).parent / "results" / "panel_numbers_quick.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out, indent=1, default=str))
        print(f"\nwrote {path}")
        return
    print(f"\nrealtime, seed 0, modelled latency x{args.latency_scale}:")
    print(f"{'deck/engine':<28}{'wall s':>8}{'critical s':>11}{'serial s':>9}{'wall/crit':>10}{'serial/wall':>12}{'unscaled crit s':>16}")
    for label, engine, _, rt in lines:
        print(
            f"{label + '/' + engine:<28}{rt['wall_s']:>8.2f}{rt['critical_path_s']:>11.2f}{rt['serial_s']:>9.2f}"
            f"{rt['wall_s'] / rt['critical_path_s']:>10.2f}{rt['serial_s'] / rt['wall_s']:>12.2f}"
            f"{rt['critical_path_s'] / args.latency_scale:>16.0f}"
        )
    print("parallel rounds only (opening, takes, detection votes, room positions/convergence, closing):")
    print(f"{'deck/engine':<28}{'stages':>7}{'wall s':>8}{'critical s':>11}{'serial s':>9}{'wall/crit':>10}{'serial/wall':>12}")
    for label, engine, _, rt in lines:
        ps = rt["parallel_stages"]
        if ps["n"]:
            print(
                f"{label + '/' + engine:<28}{ps['n']:>7}{ps['wall_s']:>8.2f}{ps['critical_s']:>11.2f}{ps['serial_s']:>9.2f}"
                f"{ps['wall_s'] / ps['critical_s']:>10.2f}{ps['serial_s'] / ps['wall_s']:>12.2f}"
            )
    # anti-sycophancy: the post-generation check on/off at sycophancy 0.3 (test deck, panel)
    os.environ["CRUX_LAB_PERSONAS"] = str(tmp / "test")
    ids = ["maximalist", "trader", "goldbug", "protocol_dev"]
    syc: dict[str, Any] = {}
    for on in (True, False):
        rows = [
            await one("panel", ids, TEST_TOPIC, s, knobs=SimulatorKnobs(sycophancy=0.3), params={"post_check": on})
            for s in range(args.seeds)
        ]
        syc["on" if on else "off"] = rows
    out["post_check"] = syc
    print("\npost-generation check at sycophancy 0.3 (panel, test deck): unjustified concessions left in the transcript")
    for k, rows in syc.items():
        print(f"  post_check {k:<4} {mean(rows, 'unjustified_concessions'):.1f} per debate, calls {mean(rows, 'calls'):.1f}")
    path = Path(__file__).parent / "results" / "panel_numbers.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1, default=str))
    print(f"\nwrote {path}")


if __name__ == "__main__":
    asyncio.run(main())
