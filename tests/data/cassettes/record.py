"""Record the real-model cassettes: every engine, one small debate each, on the local model.

Start the server first (``crux-lab local-model start``), then from the repository root:

    .venv/bin/python tests/data/cassettes/record.py [--base-url http://127.0.0.1:8080/v1]
        [--model qwen2.5-1.5b] [--engines dialogue,dcg]

Each engine's debate (``debates.json``: topic, personas, seed, max turns, parameters) runs on
the OpenAI-compatible backend with ``<engine>.jsonl`` in record mode: every call and what came
back (a reply, or the error of a reply that stayed off-schema after its repair) is written.
``tests/engines/test_real_model_cassettes.py`` replays them in CI without the server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from crux_lab.llm.openai_backend import OpenAIBackend  # noqa: E402
from crux_lab.llm.replay import ReplayBackend  # noqa: E402
from crux_lab.models import DebateConfig  # noqa: E402
from crux_lab.runner import run_debate  # noqa: E402


def config_for(engine: str, backend: str = "replay") -> DebateConfig:
    spec = json.loads((HERE / "debates.json").read_text())
    mine = spec["engines"][engine]
    # Every purpose's output capped at max_tokens: a tiny model that loops stops sooner (the
    # cap is in each request, so replay sees the same requests). Every engine declares its
    # purposes in its own package: load them all before reading the table.
    from crux_lab.engines import registered
    from crux_lab.llm.base import ALLOCATION

    registered()

    cap = {p: {"tier": a.tier.value, "max_tokens": min(a.max_tokens, spec["max_tokens"])} for p, a in ALLOCATION.items()}
    for extra in ("direct_cards", "cot_cards", "worldview_positions", "crux_pairs"):  # purposes on the default allocation
        cap[extra] = {"tier": "strong", "max_tokens": spec["max_tokens"]}
    # The poll (crux_lab.engines.poll) is off: these recordings hold the debates, made before the
    # poll existed; a recording made with the poll drops this, and its cassette then holds the
    # poll's calls. A missing call is a recording fault (CassetteMiss), never a poll left unpolled.
    params = {"poll": False, **mine["params"]}
    return DebateConfig(topic=spec["topic"], persona_ids=spec["personas"], engine=engine, backend=backend,
                        seed=mine.get("seed", spec["seed"]), max_turns=mine["max_turns"], params=params, allocation=cap)


async def record(engine: str, base_url: str, model: str) -> None:
    cassette = HERE / f"{engine}.jsonl"
    cassette.unlink(missing_ok=True)
    inner = OpenAIBackend(models={"strong": model, "fast": model}, base_url=base_url)
    backend = ReplayBackend(cassette, inner=inner, mode="record")
    started = time.perf_counter()
    result = await run_debate(config_for(engine, "openai"), backend=backend)
    warnings = sum(1 for e in result.events if getattr(e, "level", None) == "warning")
    if result.structured is not None:
        print(f"{engine}: {result.structured.line()}", flush=True)
    print(f"{engine}: {len(result.llm_calls)} calls, {len(result.transcript)} turns, {warnings} warnings, "
          f"{len(result.cruxes)} cruxes, {len(result.crux_cards)} cards, {len(result.dcg.disputes)} disputes, "
          f"complete={result.complete}, error={result.error!r}, {time.perf_counter() - started:.0f}s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--engines", default=",".join(json.loads((HERE / "debates.json").read_text())["engines"]))
    args = ap.parse_args()
    for engine in [e for e in args.engines.split(",") if e]:
        asyncio.run(record(engine, args.base_url, args.model))


if __name__ == "__main__":
    main()
