"""Panel at its design shape (4 personas, 3 aspects) against its design budget, on any backend.

The debate of the budget issue: michael-saylor, arthur-hayes, peter-schiff and
vitalik-buterin on "Should the US create a strategic Bitcoin reserve?". Per seed it writes:

- ``calls`` and ``calls_by_purpose``;
- ``prompt_tokens`` (every input token: uncached + cache reads + cache writes, the figure the
  design's ~175k budgets), ``uncached_input_tokens``, ``cache_read_tokens``,
  ``cache_write_tokens`` and ``output_tokens``;
- ``cached_share``: cache reads / prompt tokens; ``persona_cached_share``: of the persona
  system blocks sent (the calls that mark theirs for caching), the share read from cache.
  Both are ``null`` when the backend reported no cache figures (unknown, not 0);
- ``cost_usd``: the ledger's (modelled on the simulator with cache reads at the price table's
  rates; $0 on a server on this machine) and ``cost_usd_uncached``: what the same tokens
  would cost without a cache, priced as the simulator prices them (Anthropic defaults);
- ``wall_s``, ``critical_path_s`` (the engine's call graph: per stage its slowest chain,
  with each call's own latency) and their ratio; on the simulator the latencies are its
  modelled ones, slept for real (``--latency-scale`` shortens them), so its wall time also
  holds the simulator's and the engine's own CPU time; ``parallel_wall_over_critical``: the
  parallel stages alone (openings, takes, closings, a room's paired statements), their wall
  time over their slowest chains (1.0: fully parallel);
- ``cards``, ``card_questions`` and ``recovery_f1``: recovery by text against the crypto
  deck's contested propositions of these personas (``crux_quality.py``'s scoring).

    .venv/bin/python benchmarks/panel_budget.py --label after [--seeds 1,2,3] [--latency-scale 0.05]
    .venv/bin/python benchmarks/panel_budget.py --label after --backend openai \\
        --base-url http://127.0.0.1:8080/v1 --seeds 1

``--params '{"detection_votes": 3}'`` passes panel params (e.g. to rerun an older shape).
Writes ``benchmarks/results/panel_budget-<backend>-<label>.json``, and each seed's whole result
(transcript, cards, calls) to ``panel_budget-<backend>-<label>/seed<N>.json``. Numbers, not asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crux_lab.embed import get_embedder  # noqa: E402
from crux_lab.llm.base import LLMRequest, LLMResponse  # noqa: E402
from crux_lab.llm.pricing import cost_usd, default_model  # noqa: E402
from crux_lab.models import DebateConfig, Tier, Usage  # noqa: E402
from crux_lab.personas.loader import load_personas, propositions_for  # noqa: E402
from crux_lab.runner import DebateRun  # noqa: E402
from crux_lab.scrub import scrub_model  # noqa: E402
from crux_lab.tokens import count_tokens  # noqa: E402

TOPIC = "Should the US create a strategic Bitcoin reserve?"
PERSONAS = ["michael-saylor", "arthur-hayes", "peter-schiff", "vitalik-buterin"]
# The panel design's budget for 4 personas and 3 aspects, and this project's goal.
BUDGET = {"calls": 63, "prompt_tokens": 175_000, "cost_usd": 0.55, "wall_s": 180}
GOAL = {"calls": 50, "prompt_tokens": 120_000, "persona_cached_share": 0.6, "wall_over_critical": 1.15}


@dataclass
class Sent:
    """One request as sent: whether it marked its system block for caching, that block's size."""

    purpose: str
    cache_system: bool
    system_tokens: int
    usage: Usage = field(default_factory=Usage)


@dataclass
class Probe:
    """Wraps the backend and keeps, per call, the system block's size and the usage reported."""

    inner: Any
    sent: list[Sent] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.inner.name)

    def model_for(self, tier: Tier) -> str:
        return str(self.inner.model_for(tier))

    async def generate(self, request: LLMRequest) -> LLMResponse:
        row = Sent(request.purpose, request.cache_system, count_tokens(request.system))
        self.sent.append(row)
        response: LLMResponse = await self.inner.generate(request)
        row.usage = response.usage
        return response

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()


def make_backend(args: argparse.Namespace, seed: int) -> Any:
    if args.backend == "simulated":
        from crux_lab.llm.simulated import SimulatedBackend

        return SimulatedBackend(
            load_personas(PERSONAS), propositions_for(PERSONAS), seed=seed, realtime=True,
            latency_scale=args.latency_scale,
        )
    if args.backend == "openai":
        from crux_lab.llm import resolve_openai_models
        from crux_lab.llm.openai_backend import OpenAIBackend

        chosen = {k: v for k, v in (("strong", args.model_strong), ("fast", args.model_fast)) if v}
        models = resolve_openai_models(chosen, args.base_url)
        return OpenAIBackend(models=models, base_url=args.base_url, timeout_s=args.timeout, structured=args.structured)
    from crux_lab.llm.anthropic_backend import AnthropicBackend

    return AnthropicBackend()


def uncached_cost(calls: list[Any]) -> float:
    """The calls' tokens priced without a cache, as the simulator prices each tier."""
    total = 0.0
    for c in calls:
        prompt = c.input_tokens + (c.cache_read_tokens or 0) + c.cache_write_tokens
        total += cost_usd(default_model(c.tier), Usage(input_tokens=prompt, output_tokens=c.output_tokens))
    return round(total, 4)


async def one(args: argparse.Namespace, seed: int, params: dict[str, Any], keep: Path) -> dict[str, Any]:
    from benchmarks.crux_quality import deck_scenario, recovery_f1

    probe = Probe(make_backend(args, seed))
    config = DebateConfig(
        topic=TOPIC, persona_ids=PERSONAS, engine="panel", seed=seed, params=params, backend=args.backend,
        base_url=args.base_url if args.backend == "openai" else None,
    )
    run = DebateRun(config, backend=probe)  # type: ignore[arg-type]
    get_embedder()  # loaded before the clock starts (shift distances run after the last call)
    started = time.perf_counter()
    try:
        async for _ in run.events():
            pass
    finally:
        await probe.aclose()
    wall = time.perf_counter() - started
    res = run.result
    keep.mkdir(parents=True, exist_ok=True)
    (keep / f"seed{seed}.json").write_text(scrub_model(res).model_dump_json(indent=1), encoding="utf-8")
    calls = res.llm_calls
    reads = [c.cache_read_tokens for c in calls]
    known = [r for r in reads if r is not None]
    read = sum(known) if known else None
    writes = sum(c.cache_write_tokens for c in calls)
    uncached = sum(c.input_tokens for c in calls)
    prompt = uncached + (read or 0) + writes
    persona = [s for s in probe.sent if s.cache_system]
    persona_tokens = sum(s.system_tokens for s in persona)
    persona_known = [s for s in persona if s.usage.cache_read_tokens is not None]
    persona_read = sum(min(s.usage.cache_read_tokens or 0, s.system_tokens) for s in persona_known)
    timeline = run.ctx.scratch["timeline"]
    latency = [c.latency_s for c in calls]
    critical = timeline.critical_path(latency)
    stages = [st for st in timeline.stages if st.wall_s is not None and st.chains]
    stage_wall = sum(st.wall_s or 0.0 for st in stages)
    stage_critical = sum(max(sum(latency[i] for i in c if i < len(latency)) for c in st.chains) for st in stages)
    f1 = recovery_f1(res, deck_scenario("crypto", PERSONAS))
    return {
        "seed": seed,
        "complete": res.complete,
        "error": res.error,
        "calls": len(calls),
        "calls_by_purpose": dict(Counter(c.purpose for c in calls).most_common()),
        "prompt_tokens": prompt,
        "uncached_input_tokens": uncached,
        "cache_read_tokens": read,
        "cache_write_tokens": writes,
        "output_tokens": sum(c.output_tokens for c in calls),
        "cached_share": round(read / prompt, 3) if read is not None and prompt else None,
        "persona_prompt_tokens": persona_tokens,
        "persona_cached_share": round(persona_read / persona_tokens, 3) if persona_known and persona_tokens else None,
        "cost_usd": round(res.usage.cost_usd, 4),
        "cost_usd_uncached": uncached_cost(calls),
        "wall_s": round(wall, 3),
        "critical_path_s": round(critical, 3),
        "wall_over_critical": round(wall / critical, 3) if critical else None,
        "serial_call_s": round(sum(c.latency_s for c in calls), 3),
        "parallel_stages": len(stages),
        "parallel_wall_over_critical": round(stage_wall / stage_critical, 3) if stage_critical else None,
        "turns": len(res.transcript),
        "rooms": len(run.ctx.scratch["rooms"]),
        "cards": len(res.crux_cards),
        "card_questions": [c.question for c in res.crux_cards],
        "recovery_f1": round(f1, 3) if f1 is not None else None,
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def mean(key: str) -> float | None:
        xs = [r[key] for r in rows if r.get(key) is not None]
        return round(statistics.fmean(xs), 3) if xs else None

    purposes: Counter[str] = Counter()
    for r in rows:
        purposes.update(r["calls_by_purpose"])
    keys = ("calls", "prompt_tokens", "output_tokens", "cache_read_tokens", "cached_share", "persona_cached_share",
            "cost_usd", "cost_usd_uncached", "wall_s", "critical_path_s", "wall_over_critical",
            "parallel_wall_over_critical", "cards", "recovery_f1")
    out: dict[str, Any] = {k: mean(k) for k in keys}
    out["calls_by_purpose"] = {p: round(n / len(rows), 2) for p, n in purposes.most_common()}
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label", default="run", help="names the output file, e.g. before / after")
    ap.add_argument("--backend", default="simulated", choices=["simulated", "openai", "anthropic"])
    ap.add_argument("--base-url", default="http://127.0.0.1:8080/v1")
    ap.add_argument("--model-strong")
    ap.add_argument("--model-fast")
    ap.add_argument("--structured", default="auto", choices=["auto", "json_schema", "prompt"])
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per HTTP attempt")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--latency-scale", type=float, default=0.05, help="simulator: modelled latency x this")
    ap.add_argument("--params", default="{}", help="panel params as JSON")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    params = json.loads(args.params)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    out = args.out or ROOT / "benchmarks" / "results" / f"panel_budget-{args.backend}-{args.label}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    payload: dict[str, Any] = {}
    for seed in seeds:
        row = asyncio.run(one(args, seed, params, out.with_suffix("")))
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "card_questions"}), flush=True)
        payload = {
            "label": args.label, "backend": args.backend, "topic": TOPIC, "personas": PERSONAS, "params": params,
            "latency_scale": args.latency_scale if args.backend == "simulated" else None,
            "base_url": args.base_url if args.backend == "openai" else None,
            "budget": BUDGET, "goal": GOAL, "per_seed": rows, "mean": summary(rows),
        }
        out.write_text(json.dumps(payload, indent=1), encoding="utf-8")  # after each seed
    print(json.dumps(payload["mean"], indent=1))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
