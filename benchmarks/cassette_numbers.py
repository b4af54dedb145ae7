"""What the real-model cassettes hold, engine by engine: the recording as a benchmark.

    .venv/bin/python benchmarks/cassette_numbers.py [--out benchmarks/results/cassette_numbers.json]

Each cassette (``tests/data/cassettes/<engine>.jsonl``) was recorded on a live model server
(its README says which). Every entry keeps the call's usage, latency and whether its reply
needed the repair turn, so the recording itself is measured here, with no server:

- ``calls``; ``structured``: calls whose request carried a reply schema; ``first_valid``:
  structured calls whose first reply validated; ``repaired``: those valid after the one
  repair; ``invalid``: still invalid after it (the engine skipped that step with a warning);
- ``prompt_tokens`` and ``cached_share`` (the server's prefix cache); ``output_tokens``;
  ``call_s``: the sum of call latencies; ``gen_tok_s``: output tokens per second of call time;
- what the engine made of the replies, replayed from the cassette: ``turns``, ``disputes``,
  ``cards``, ``cruxes``, ``warnings`` and the cards and cruxes that restate the topic.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crux_lab.llm.replay import load_cassette  # noqa: E402
from crux_lab.runner import run_debate  # noqa: E402
from tests.data.cassettes.record import HERE, config_for  # noqa: E402

ENGINES = ("direct", "cot", "dcg", "panel", "crux_rooms", "dialogue", "graph", "blitz", "classical")


def share(part: int, whole: int) -> float | None:
    return round(part / whole, 2) if whole else None


async def numbers(engine: str) -> dict[str, Any]:
    cassette = HERE / f"{engine}.jsonl"
    entries = load_cassette(cassette)
    structured = [e for e in entries if e.request.get("schema")]
    answered = [e.response for e in entries if e.response is not None]
    prompt = sum(r.usage.input_tokens + r.usage.cache_read_tokens for r in answered)
    cached = sum(r.usage.cache_read_tokens for r in answered)
    output = sum(r.usage.output_tokens for r in answered)
    call_s = sum(r.latency_s for r in answered)
    result = await run_debate(config_for(engine), cassette=cassette)
    items = [c.restates_topic for c in result.crux_cards] + [c.restates_topic for c in result.cruxes]
    return {
        "engine": engine,
        "model": entries[0].model if entries else None,
        "calls": len(entries),
        "structured": len(structured),
        "first_valid": share(sum(1 for e in structured if e.response is not None and not e.response.repaired), len(structured)),
        "repaired": sum(1 for e in structured if e.response is not None and e.response.repaired),
        "invalid": sum(1 for e in structured if e.error is not None),
        "prompt_tokens": prompt,
        "cached_share": share(cached, prompt),
        "output_tokens": output,
        "call_s": round(call_s),
        "gen_tok_s": round(output / call_s, 1) if call_s else None,
        "turns": len(result.transcript),
        "disputes": len(result.dcg.disputes),
        "cards": len(result.crux_cards),
        "cruxes": len(result.cruxes),
        "restating": sum(items),
        "warnings": sum(1 for e in result.events if e.type == "engine_error"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "cassette_numbers.json")
    args = ap.parse_args()
    rows = [asyncio.run(numbers(e)) for e in args.engines.split(",") if e]
    cols = list(rows[0])
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join("–" if r[c] is None else str(r[c]) for c in cols) + " |")
    import json

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
