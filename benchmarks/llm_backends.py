"""Benchmark the real and replay LLM backends offline (mocked Messages API, no key).

Measures, each against a peer as a ratio:

1. per-call overhead of ``AnthropicBackend`` vs the bare SDK ``messages.create`` on the same
   mocked transport (what our middleware, semaphore, parsing and pricing cost);
2. throughput with ``max_concurrency=8`` vs 1 when every call takes 50 ms server-side;
3. replaying a cassette vs simulating the same calls live with the persona simulator;
4. cassette bytes per recorded call.

Run: ``.venv/bin/python benchmarks/llm_backends.py``. Prints a table and writes
``benchmarks/results/llm_backends.json``.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anthropic
import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crux_lab.llm.anthropic_backend import AnthropicBackend  # noqa: E402
from crux_lab.llm.base import Hints, LLMRequest  # noqa: E402
from crux_lab.llm.replay import ReplayBackend  # noqa: E402
from crux_lab.llm.simulated import SimulatedBackend  # noqa: E402
from tests.llm.tiny_panel import tiny_panel  # noqa: E402

KEY = "sk-ant-bench-not-a-real-key"
BODY = json.dumps(
    {
        "id": "msg_b",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": [{"type": "text", "text": "A short persona turn of a couple of sentences."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 2200, "output_tokens": 60, "cache_read_input_tokens": 2000},
    }
).encode()


def transport(delay_s: float = 0.0) -> httpx2.AsyncClient:
    async def handler(_: httpx2.Request) -> httpx2.Response:
        if delay_s:
            await asyncio.sleep(delay_s)
        return httpx2.Response(200, content=BODY, headers={"content-type": "application/json"})

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handler))


def request(i: int) -> LLMRequest:
    return LLMRequest(purpose="take", system="You are Ada." * 50, user=f"Your take, round {i}?", cache_system=True)


async def per_call_overhead(n: int) -> dict[str, float]:
    ours = AnthropicBackend(api_key=KEY, http_client=transport())
    bare = anthropic.AsyncAnthropic(api_key=KEY, http_client=transport(), max_retries=0)
    for i in range(20):  # warm up both
        await ours.generate(request(i))
        await bare.messages.create(model="claude-sonnet-5-5", max_tokens=400, messages=[{"role": "user", "content": "x"}])
    t_ours, t_bare = [], []
    for i in range(n):
        t = time.perf_counter()
        await ours.generate(request(i))
        t_ours.append(time.perf_counter() - t)
        t = time.perf_counter()
        await bare.messages.create(
            model="claude-sonnet-5-5",
            max_tokens=400,
            system=[{"type": "text", "text": "You are Ada." * 50, "cache_control": {"type": "ephemeral"}}],
            messages=[{"role": "user", "content": f"Your take, round {i}?"}],
        )
        t_bare.append(time.perf_counter() - t)
    return {"ours_ms": statistics.median(t_ours) * 1e3, "bare_sdk_ms": statistics.median(t_bare) * 1e3}


async def concurrency(n: int, delay_s: float) -> dict[str, float]:
    out = {}
    for limit in (1, 8):
        b = AnthropicBackend(api_key=KEY, http_client=transport(delay_s), max_concurrency=limit)
        t = time.perf_counter()
        await asyncio.gather(*(b.generate(request(i)) for i in range(n)))
        out[f"limit_{limit}_s"] = time.perf_counter() - t
    return out


async def replay_vs_simulated(n: int) -> dict[str, float]:
    personas, propositions = tiny_panel()
    ids = list(personas)
    reqs = [
        LLMRequest(
            purpose="take",
            system=f"You are {ids[i % 2]}.",
            user=f"Round {i}.",
            hints=Hints(speaker_id=ids[i % 2], persona_ids=ids, topic="Is remote work better?"),
        )
        for i in range(n)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        cassette = Path(tmp) / "bench.jsonl"
        sim = SimulatedBackend(personas, propositions, seed=1)
        recorder = ReplayBackend(cassette, inner=sim, mode="record")
        for r in reqs:
            await recorder.generate(r)
        live = SimulatedBackend(personas, propositions, seed=1)
        t = time.perf_counter()
        for r in reqs:
            await live.generate(r)
        t_sim = time.perf_counter() - t
        t = time.perf_counter()
        player = ReplayBackend(cassette)
        for r in reqs:
            await player.generate(r)
        t_replay = time.perf_counter() - t
        size = cassette.stat().st_size
    return {"simulated_ms_per_call": t_sim / n * 1e3, "replay_ms_per_call": t_replay / n * 1e3, "cassette_bytes_per_call": size / n}


async def main() -> None:
    overhead = await per_call_overhead(300)
    conc = await concurrency(64, 0.05)
    replay = await replay_vs_simulated(400)
    rows = [
        ("AnthropicBackend call (mock transport), median ms", overhead["ours_ms"], "bare SDK create", overhead["bare_sdk_ms"]),
        ("64 calls x 50 ms, max_concurrency=8, s", conc["limit_8_s"], "max_concurrency=1", conc["limit_1_s"]),
        ("replay, ms per call (load included)", replay["replay_ms_per_call"], "simulated live", replay["simulated_ms_per_call"]),
    ]
    print(f"{'measure':<52} {'value':>10} {'peer':<20} {'peer value':>10} {'ratio':>7}")
    for name, value, peer, peer_value in rows:
        print(f"{name:<52} {value:>10.3f} {peer:<20} {peer_value:>10.3f} {value / peer_value:>7.2f}")
    print(f"cassette bytes per call: {replay['cassette_bytes_per_call']:.0f}")
    results = {"overhead": overhead, "concurrency": conc, "replay": replay, "python": sys.version.split()[0]}
    out = ROOT / "benchmarks" / "results" / "llm_backends.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    asyncio.run(main())
