"""Debates through the real Anthropic client with a fault on every 10th HTTP call.

The anthropic SDK (with crux_lab's retry, timeout and repair logic) talks to a fake Messages
API on an httpx mock transport. The fake API answers each request with what the persona
simulator says for the same LLMRequest, except every 10th HTTP call, which gets the next fault
in turn: 429 (retry-after), 529 (overloaded), 500, a stall longer than the per-attempt timeout,
and malformed JSON in a structured answer (a 500 for a free-text call). Every debate is run to
its end; the ledger says how each call ended.

Peer: the same debates on the simulator directly (no faults, no HTTP); the ratio of wall
times says what the faults and their retries cost.

    .venv/bin/python benchmarks/fault_schedule.py [--seeds 3] [--engines dcg,dialogue]

Prints a table and writes benchmarks/results/fault_schedule.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _report import print_and_save  # noqa: E402  (benchmarks/ is on sys.path as a script)

from crux_lab.llm.anthropic_backend import AnthropicBackend  # noqa: E402
from crux_lab.llm.base import LLMRequest, LLMResponse  # noqa: E402
from crux_lab.llm.simulated import SimulatedBackend  # noqa: E402
from crux_lab.models import DebateConfig, Tier  # noqa: E402
from crux_lab.personas.loader import load_personas, propositions_for  # noqa: E402
from crux_lab.runner import run_debate  # noqa: E402
from tests.llm.fake_api import error, message  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "fault_schedule.json"
PERSONAS = ["michael-saylor", "peter-schiff"]
TOPIC = "Is Bitcoin a better long-term store of value than gold?"
FAULTS = ("429", "529", "500", "stall", "malformed_json")
TIMEOUT_S = 2.0  # per attempt; the stall lasts longer

_current: contextvars.ContextVar[LLMRequest] = contextvars.ContextVar("fault_request")


class Schedule:
    """HTTP calls counted across all debates, so the faults cycle through every kind."""

    def __init__(self) -> None:
        self.calls = 0
        self.faults: Counter[str] = Counter()

    def next_fault(self, structured: bool) -> str | None:
        self.calls += 1
        if self.calls % 10:
            return None
        fault = FAULTS[(self.calls // 10 - 1) % len(FAULTS)]
        if fault == "malformed_json" and not structured:
            fault = "500"
        self.faults[fault] += 1
        return fault


class FaultyAPI:
    """The fake Messages API: the simulator's answer, or the next fault on every 10th call."""

    def __init__(self, simulator: SimulatedBackend, schedule: Schedule) -> None:
        self.simulator = simulator
        self.schedule = schedule

    async def __call__(self, http: httpx2.Request) -> httpx2.Response:
        request = _current.get()
        fault = self.schedule.next_fault(request.output_schema is not None)
        if fault is not None:
            if fault == "429":
                return error(429, "rate_limit_error", "slow down", {"retry-after-ms": "20"})
            if fault == "529":
                return error(529, "overloaded_error", "overloaded", {"retry-after-ms": "20"})
            if fault == "500":
                return error(500, "api_error", "internal error")
            if fault == "stall":
                await asyncio.sleep(TIMEOUT_S * 5)
            else:
                return message('{"answer": "this is not the schema", ', input_tokens=50, output_tokens=10)
        answer: LLMResponse = await self.simulator.generate(request)
        return message(answer.text, input_tokens=answer.usage.input_tokens or 100,
                       output_tokens=answer.usage.output_tokens or 20)


class Bridge:
    """The backend the debate sees: the real AnthropicBackend, with the request in a
    context variable so the fake API can ask the simulator for the same call."""

    name = "anthropic"

    def __init__(self, real: AnthropicBackend) -> None:
        self.real = real

    def model_for(self, tier: Tier) -> str:
        return self.real.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        token = _current.set(request)
        try:
            return await self.real.generate(request)
        finally:
            _current.reset(token)


async def one(engine: str, seed: int, schedule: Schedule) -> tuple[object, float]:
    config = DebateConfig(topic=TOPIC, persona_ids=PERSONAS, engine=engine, backend="anthropic", seed=seed, max_turns=12)
    personas = load_personas(PERSONAS)
    simulator = SimulatedBackend(personas, propositions_for(PERSONAS), seed=seed)
    api = FaultyAPI(simulator, schedule)
    real = AnthropicBackend(api_key="sk-ant-bench-0123456789", http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(api)),
                            timeout_s=TIMEOUT_S, max_retries=4)
    t0 = time.perf_counter()
    result = await run_debate(config, backend=Bridge(real))
    return result, time.perf_counter() - t0


async def peer(engine: str, seed: int) -> float:
    config = DebateConfig(topic=TOPIC, persona_ids=PERSONAS, engine=engine, backend="simulated", seed=seed, max_turns=12)
    t0 = time.perf_counter()
    await run_debate(config)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--engines", default="dcg,dialogue")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="faults-") as tmp:
        os.environ.setdefault("CRUX_LAB_RUNS", str(Path(tmp) / "runs"))
        schedule = Schedule()
        outcomes: Counter[str] = Counter()
        retries = calls = completed = 0
        wall = peer_wall = 0.0
        debates = []
        for engine in args.engines.split(","):
            for seed in range(args.seeds):
                result, seconds = asyncio.run(one(engine, seed, schedule))
                wall += seconds
                peer_wall += asyncio.run(peer(engine, seed))
                r = result  # DebateResult
                completed += bool(r.complete)  # type: ignore[attr-defined]
                for c in r.llm_calls:  # type: ignore[attr-defined]
                    outcomes[c.outcome] += 1
                    retries += c.retries
                    calls += 1
                debates.append({"engine": engine, "seed": seed, "complete": r.complete,  # type: ignore[attr-defined]
                                "error": r.error, "calls": len(r.llm_calls),  # type: ignore[attr-defined]
                                "backend": r.backend, "seconds": round(seconds, 2)})  # type: ignore[attr-defined]
                print(debates[-1], flush=True)
    rows = {
        "debates": len(debates),
        "completed": completed,
        "llm_calls": calls,
        "retries": retries,
        **{f"outcome_{k}": v for k, v in sorted(outcomes.items())},
        "http_calls": schedule.calls,
        **{f"fault_{k}": schedule.faults.get(k, 0) for k in FAULTS},
        "wall_s": round(wall, 2),
        "peer_simulated_wall_s": round(peer_wall, 2),
        "ratio_wall_to_peer": round(wall / peer_wall, 2) if peer_wall else None,
        "per_debate": debates,
    }
    print_and_save(rows, OUT)


if __name__ == "__main__":
    main()
