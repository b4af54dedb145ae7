"""Persona library numbers: prompt budgets, graph sizes, build pipeline, embedding and retrieval.

    .venv/bin/python benchmarks/personas_library.py [--chunks 1000] [--skip-embed]

Prints tables and writes benchmarks/results/personas_library.json.

- System prompt tokens for every shipped persona (second- and third-person framing) against the
  2,200-token budget and against the old layered prompt it replaces (~4,400 tokens per turn):
  the ratio is ours / theirs.
- Per-turn user message for a late-debate history (40 turns, 3 cards, retrieval block) against
  the 800-token budget.
- Belief nodes / edges / corpus chunks per persona.
- ``personas build`` with the simulated backend: chunks, calls and wall time per persona.
- Embedding throughput on ``--chunks`` corpus-style chunks (the shipped corpora, cycled with a
  counter so no two texts are equal): cold encode versus a content-hash cache hit (the peer
  ratio), and per-turn retrieval latency once a persona is indexed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crux_lab.llm.simulated import SimulatedBackend  # noqa: E402
from crux_lab.models import CruxCard, CruxCardPosition, DialogueTurn  # noqa: E402
from crux_lab.persona_tools.build import build_beliefs, load_for_build  # noqa: E402
from crux_lab.personas.loader import list_personas, load_persona, persona_root, propositions_for  # noqa: E402
from crux_lab.personas.prompt import (  # noqa: E402
    SYSTEM_BUDGET,
    TURN_BUDGET,
    build_history,
    build_system_prompt,
    build_turn_message,
)
from crux_lab.tokens import count_tokens  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
OLD_PROMPT = 4400  # the old layered persona prompt: ~4,400 tokens per turn
console = Console()


def prompt_numbers() -> dict[str, Any]:
    rows = []
    for pid in list_personas():
        p = load_persona(pid)
        props = propositions_for([pid])
        second = count_tokens(build_system_prompt(p, propositions=props))
        third = count_tokens(build_system_prompt(p, framing="third", propositions=props))
        g = p.beliefs
        rows.append({"persona": pid, "kind": p.contract.kind, "system_second": second, "system_third": third,
                     "nodes": len(g.nodes) if g else 0, "edges": len(g.edges) if g else 0, "chunks": len(p.corpus)})
    allv = [r["system_second"] for r in rows] + [r["system_third"] for r in rows]
    summary = {"min": min(allv), "median": statistics.median(allv), "max": max(allv), "budget": SYSTEM_BUDGET,
               "old_prompt": OLD_PROMPT, "median_ratio_vs_old": round(statistics.median(allv) / OLD_PROMPT, 3)}
    return {"personas": rows, "system_prompt_tokens": summary}


def turn_numbers() -> dict[str, Any]:
    names = {"michael-saylor": "Michael Saylor", "arthur-hayes": "Arthur Hayes"}
    turns = [
        DialogueTurn(id=f"t{i}", turn_index=i, persona_id=list(names)[i % 2], phase="free_exchange",
                     dialogue=("Adoption follows the superior network and policy only changes the speed. " * 3)
                     if i % 2 == 0 else ("Adoption is a bet on the printer; tighten policy and it stalls. " * 3),
                     proposition_ids=[f"crypto.p{1 + i % 9}"], stance="pro" if i % 2 == 0 else "con",
                     aspect_id=f"round-{i // 10}")
        for i in range(40)
    ]
    cards = [CruxCard(id=f"k{i}", question=f"Question {i} about adoption and liquidity?", disagreement_type="premise",
                      diagnosis="d", personas={pid: CruxCardPosition(position="YES" if j == 0 else "NO", reasoning="Because of the long-run data.")
                                               for j, pid in enumerate(names)}) for i in range(3)]
    ctx = build_history("michael-saylor", topic="Bitcoin is digital gold", turns=turns, names=names, cards=cards, recent=8)
    grounding = "Your relevant beliefs on this point:\n" + "\n".join(f"- belief {i}: fixed supply beats debasement over four years" for i in range(12))
    t0 = time.perf_counter()
    msg = build_turn_message("Answer the last challenge on whether adoption depends on policy.", history=ctx, grounding=grounding[:1200])
    dt = time.perf_counter() - t0
    return {"turn_message_tokens": count_tokens(msg), "budget": TURN_BUDGET, "build_ms": round(dt * 1000, 1),
            "full_history_tokens_untrimmed": count_tokens(ctx.render(100_000))}


def build_numbers() -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for pid in list_personas():
            folder = Path(tmp) / pid
            shutil.copytree(persona_root() / pid, folder)
            p = load_for_build(folder)
            backend = SimulatedBackend({p.id: p}, propositions_for([p.id]))
            t0 = time.perf_counter()
            result = asyncio.run(build_beliefs(folder, backend))
            rows.append({"persona": pid, "chunks": result.chunks, "calls": result.calls,
                         "nodes": len(result.graph.nodes), "edges": len(result.graph.edges),
                         "wall_s": round(time.perf_counter() - t0, 3), "simulated_cost_usd": result.cost_usd})
    return rows


def embed_numbers(n: int) -> dict[str, Any]:
    from crux_lab.embed import get_embedder
    from crux_lab.personas.retrieval import PersonaIndex, embed_cached, retrieve

    corpus = [c.text for pid in list_personas() for c in load_persona(pid).corpus]
    texts = [f"{corpus[i % len(corpus)]} (item {i})" for i in range(n)]
    emb = get_embedder()
    emb.encode(["warm up"])
    tokens = sum(count_tokens(t) for t in texts)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        embed_cached("bench", texts, embedder=emb, directory=Path(tmp))
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        embed_cached("bench", texts, embedder=emb, directory=Path(tmp))
        warm = time.perf_counter() - t0
        p = load_persona("michael-saylor")
        t0 = time.perf_counter()
        PersonaIndex.build(p, embedder=emb, directory=Path(tmp))
        index_s = time.perf_counter() - t0
        queries = ["Is Bitcoin adoption inevitable?", "Does proof of stake match proof of work security?",
                   "Should companies hold Bitcoin?", "Will gold beat Bitcoin in a crisis?"]
        retrieve(p, queries[0], embedder=emb, directory=Path(tmp))
        t0 = time.perf_counter()
        for q in queries * 5:
            retrieve(p, q, embedder=emb, directory=Path(tmp))
        per_turn = (time.perf_counter() - t0) / (len(queries) * 5)
    return {"texts": n, "mean_tokens": round(tokens / n, 1), "cold_s": round(cold, 3),
            "cold_texts_per_s": round(n / cold, 1), "cache_hit_s": round(warm, 4),
            "cache_speedup": round(cold / warm, 1) if warm else None,
            "index_persona_s": round(index_s, 3), "retrieve_per_turn_ms": round(per_turn * 1000, 2)}


def retrieval_quality(k: int = 6) -> dict[str, Any]:
    """For every persona and deck proposition, query with the proposition's question: is one of
    the belief nodes its stance links (``beliefNodeIds``) among the top-k? And how often does an
    off-deck question (another deck's propositions) fall back to contract-only, as it should?"""
    from crux_lab.embed import get_embedder
    from crux_lab.personas.loader import load_decks
    from crux_lab.personas.retrieval import DEFAULT_THRESHOLD, retrieve

    emb = get_embedder()
    decks = load_decks()
    hits = total = off_fallback = off_total = 0
    per_deck: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for deck in decks:
            d_hits = d_total = 0
            others = [pr for d in decks if d.id != deck.id for pr in d.propositions]
            for pid in deck.persona_ids:
                p = load_persona(pid)
                for prop in deck.propositions:
                    stance = p.stance_on(prop.id)
                    if stance is None:
                        continue
                    r = retrieve(p, prop.question, k=k, embedder=emb, directory=Path(tmp))
                    got = {b.node.id for b in r.beliefs}
                    d_hits += bool(got & set(stance.belief_node_ids))
                    d_total += 1
                for prop in others[:6]:
                    off_fallback += retrieve(p, prop.question, k=k, embedder=emb, directory=Path(tmp)).fallback
                    off_total += 1
            per_deck[deck.id] = round(d_hits / d_total, 3)
            hits, total = hits + d_hits, total + d_total
    return {"k": k, "threshold": DEFAULT_THRESHOLD, "recall_at_k": round(hits / total, 3), "per_deck": per_deck,
            "queries": total, "off_deck_fallback_rate": round(off_fallback / off_total, 3), "off_deck_queries": off_total}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=1000)
    ap.add_argument("--skip-embed", action="store_true")
    args = ap.parse_args()
    out: dict[str, Any] = prompt_numbers()
    t = Table("persona", "kind", "system (2nd)", "system (3rd)", "nodes", "edges", "chunks", title="Persona library")
    for r in out["personas"]:
        t.add_row(r["persona"], r["kind"], str(r["system_second"]), str(r["system_third"]), str(r["nodes"]), str(r["edges"]), str(r["chunks"]))
    console.print(t)
    s = out["system_prompt_tokens"]
    console.print(f"system prompt tokens: min {s['min']}, median {s['median']}, max {s['max']} (budget {s['budget']}); "
                  f"median / old 4,400-token prompt = {s['median_ratio_vs_old']}")
    out["turn"] = turn_numbers()
    console.print(f"turn message (40-turn history, 3 cards, grounding): {out['turn']['turn_message_tokens']} tokens "
                  f"(budget {TURN_BUDGET}; untrimmed history {out['turn']['full_history_tokens_untrimmed']}), built in {out['turn']['build_ms']} ms")
    out["build"] = build_numbers()
    t = Table("persona", "chunks", "calls", "nodes", "edges", "wall s", title="personas build (simulated backend)")
    for r in out["build"]:
        t.add_row(r["persona"], str(r["chunks"]), str(r["calls"]), str(r["nodes"]), str(r["edges"]), f"{r['wall_s']:.3f}")
    console.print(t)
    if not args.skip_embed:
        out["embedding"] = embed_numbers(args.chunks)
        e = out["embedding"]
        console.print(f"embedding {e['texts']} chunks (~{e['mean_tokens']} tokens): cold {e['cold_s']} s "
                      f"({e['cold_texts_per_s']} texts/s), cache hit {e['cache_hit_s']} s (×{e['cache_speedup']}); "
                      f"index one persona {e['index_persona_s']} s; retrieval per turn {e['retrieve_per_turn_ms']} ms")
        out["retrieval_quality"] = q = retrieval_quality()
        console.print(f"retrieval: stance-linked node in top-{q['k']} for {q['recall_at_k']:.0%} of {q['queries']} "
                      f"(persona, own-deck proposition) queries {q['per_deck']}; off-deck questions fall back to "
                      f"contract-only {q['off_deck_fallback_rate']:.0%} of {q['off_deck_queries']}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "personas_library.json").write_text(json.dumps(out, indent=1) + "\n")
    console.print(f"wrote {RESULTS / 'personas_library.json'}")


if __name__ == "__main__":
    main()
