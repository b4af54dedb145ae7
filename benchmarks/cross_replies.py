"""Do replies cross between requests sent at once to one llama.cpp slot? And whose bug is it?

Rebuilds the two requests that crossed on 2026-11-27: the ``cot`` card call of the Cedar Falls
scenario and of the Northgate one (``generate_scenarios(3, seed=0)``, the recovery benchmark's
scenarios; the prompt as :mod:`crux_lab.engines.direct.direct` writes it), at temperature 0. Then:

1. **solo**: each request alone, one after the other: the reply each prompt gets.
2. **backend**: ``--requests`` requests (the two alternating) sent at once through crux_lab's
   openai backend, one backend object per request, as separate processes would (so no
   in-process slot lock; ``--leases`` turns the cross-process slot leases on).
3. **raw**: the same request bodies sent at once with plain HTTP (httpx2), no crux_lab client.

Every request is pinned to one slot (``id_slot``, default the server's spare slot, with
``cache_prompt``) as the backend pins a card call. A reply *crossed* when it names the other
scenario's city and not its own, or when it is closer (difflib) to the other prompt's solo
reply than to its own.

    .venv/bin/python benchmarks/cross_replies.py --server http://127.0.0.1:8080/v1 [--model M]
    .venv/bin/python benchmarks/cross_replies.py --server stand-in      # tests/llm/crossing_server.py

Writes benchmarks/results/cross_replies-<server>.json and prints one line per reply.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from crux_lab.analysis.scenarios import generate_scenarios, use_library, write_library  # noqa: E402
from crux_lab.engines.direct.direct import COT_TASK, SYSTEM, CardsReply, contract_text  # noqa: E402
from crux_lab.llm.base import LLMRequest  # noqa: E402
from crux_lab.llm.openai_backend import OpenAIBackend, Structured  # noqa: E402
from crux_lab.models.domain import Tier  # noqa: E402
from crux_lab.personas.loader import load_personas  # noqa: E402
from crux_lab.tiers import STRUCTURED_MODES  # noqa: E402

CITIES = ("Cedar Falls", "Northgate")


def build_requests(max_tokens: int) -> dict[str, LLMRequest]:
    """The cot card request of each city's scenario, as the engine builds it."""
    scenarios = {s.city: s for s in generate_scenarios(3, seed=0) if s.city in CITIES}
    out: dict[str, LLMRequest] = {}
    with tempfile.TemporaryDirectory() as tmp, use_library(write_library(list(scenarios.values()), tmp)):
        for city, s in scenarios.items():
            personas = load_personas(list(s.persona_ids))
            people = "\n\n".join(f"[{pid}] {personas[pid].name}\n{contract_text(personas[pid])}" for pid in s.persona_ids)
            user = f"Topic: {s.topic}\n\nThe people (id in brackets):\n\n{people}\n\n" + COT_TASK.format(max_cards=6)
            out[city] = LLMRequest(purpose="cot_cards", system=SYSTEM, user=user, output_schema=CardsReply,
                                   tier=Tier.strong, temperature=0.0, max_tokens=max_tokens)
    return out


def verdict(city: str, text: str, solo: dict[str, str]) -> str:
    if text.startswith("ERROR"):
        return "no reply to judge (the request failed)"
    other = next(c for c in CITIES if c != city)
    own_named, other_named = city in text, other in text
    if other_named and not own_named:
        return "crossed (names the other city only)"
    if solo:
        mine = difflib.SequenceMatcher(None, text, solo[city]).ratio()
        theirs = difflib.SequenceMatcher(None, text, solo[other]).ratio()
        if theirs > mine + 0.1:
            return f"crossed (like the other's solo reply: {theirs:.2f} vs {mine:.2f})"
        return f"own ({'names its city' if own_named else 'no city named'}; like own solo {mine:.2f}, other {theirs:.2f})"
    return "own" if own_named else "unclear (no city named)"


def backend_for(url: str, model: str, leases: bool, structured: Structured = "prompt") -> OpenAIBackend:
    b = OpenAIBackend(models={"strong": model, "fast": model}, base_url=url, structured=structured)
    if not leases:
        b.leases = None
    return b


async def staggered(coros: list[Any], stagger_s: float) -> list[Any]:
    """Start the coroutines in order, ``stagger_s`` apart, so they reach the slot in that order."""
    async def later(i: int, coro: Any) -> Any:
        await asyncio.sleep(i * stagger_s)
        return await coro
    return list(await asyncio.gather(*(later(i, c) for i, c in enumerate(coros)), return_exceptions=True))


async def via_backend(url: str, model: str, requests: list[tuple[str, LLMRequest]], slot: int, leases: bool,
                      stagger_s: float = 0.0, structured: Structured = "prompt") -> list[str]:
    backends = [backend_for(url, model, leases, structured) for _ in requests]
    for b in backends:
        await b._context_size("probe")  # learns the slots, as a first call would
        await b.check_structured()  # its canary goes now, not between the batch's requests
        b.slot_for = lambda _r, s=slot: s  # type: ignore[method-assign]  # every request on one slot
    try:
        replies = await staggered([b.generate(r) for b, (_, r) in zip(backends, requests, strict=True)], stagger_s)
    finally:
        for b in backends:
            await b.aclose()
    return [r.text if hasattr(r, "text") else f"ERROR {r}" for r in replies]


async def via_raw(url: str, model: str, requests: list[tuple[str, LLMRequest]], slot: int,
                  stagger_s: float = 0.0, structured: Structured = "prompt") -> list[str]:
    b = backend_for(url, model, False, structured)
    await b.check_structured()  # the same response_format the backend would send

    def body(r: LLMRequest) -> dict[str, Any]:
        from crux_lab.llm.structured import user_content

        messages = [{"role": "system", "content": r.system}, {"role": "user", "content": user_content(r)}]
        params = b.request_params(r, model, messages)
        extra = params.pop("extra_body", {})
        return {**params, **extra, "id_slot": slot, "cache_prompt": True}

    async with httpx2.AsyncClient(timeout=1800) as client:
        async def one(r: LLMRequest) -> str:
            resp = await client.post(url + "/chat/completions", json=body(r))
            data = resp.json()
            try:
                return str(data["choices"][0]["message"]["content"])
            except (KeyError, IndexError, TypeError):
                return f"ERROR {resp.status_code} {str(data)[:200]}"
        return [str(t) for t in await staggered([one(r) for _, r in requests], stagger_s)]


async def run(args: argparse.Namespace, url: str) -> dict[str, Any]:
    reqs = build_requests(args.max_tokens)
    props = httpx2.get(url.removesuffix("/v1") + "/props", timeout=10).json()
    slots = int(props.get("total_slots") or 1)
    slot = args.slot if args.slot is not None else max(slots - 1, 0)
    model = args.model
    batch = [(CITIES[i % 2], reqs[CITIES[i % 2]]) for i in range(args.requests)]
    out: dict[str, Any] = {"server": url, "slots": slots, "slot": slot, "requests": args.requests,
                           "max_tokens": args.max_tokens, "structured": args.structured, "leases": args.leases, "stagger_s": args.stagger_s, "runs": {}}
    solo: dict[str, str] = {}
    if not args.no_solo:
        t0 = time.perf_counter()
        for city in CITIES:
            [solo[city]] = await via_raw(url, model, [(city, reqs[city])], slot, structured=args.structured)
        out["solo"] = solo
        print(f"solo: {time.perf_counter() - t0:.1f}s")
    for mode in args.via.split(","):
        t0 = time.perf_counter()
        if mode == "backend":
            texts = await via_backend(url, model, batch, slot, args.leases, args.stagger_s, args.structured)
        else:
            texts = await via_raw(url, model, batch, slot, args.stagger_s, args.structured)
        rows = [{"asked": city, "verdict": verdict(city, text, solo), "reply": text[:600]}
                for (city, _), text in zip(batch, texts, strict=True)]
        crossed = sum(1 for r in rows if r["verdict"].startswith("crossed"))
        judged = sum(1 for r in rows if not r["verdict"].startswith("no reply"))
        out["runs"][mode] = {"crossed": crossed, "of": len(rows), "judged": judged, "wall_s": round(time.perf_counter() - t0, 1), "replies": rows}
        print(f"{mode}: {crossed} of {len(rows)} crossed, {judged} judged ({time.perf_counter() - t0:.1f}s)")
        for r in rows:
            print(f"  asked {r['asked']:<11} -> {r['verdict']}: {r['reply'][:90]!r}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default="http://127.0.0.1:8080/v1", help="a server URL, or stand-in")
    ap.add_argument("--model", default="qwen2.5-0.5b")
    ap.add_argument("--via", default="backend,raw", help="backend, raw or both (comma-separated)")
    ap.add_argument("--requests", type=int, default=4)
    ap.add_argument("--slot", type=int, default=None, help="default: the last (spare) slot")
    ap.add_argument("--max-tokens", type=int, default=160)
    ap.add_argument("--structured", default="prompt", choices=STRUCTURED_MODES,
                    help="the backend's structured-output mode: prompt (the stand-in's), or auto (a real server's "
                         "default: a JSON schema where the server enforces one)")
    ap.add_argument("--leases", action="store_true", help="backend mode: use the cross-process slot leases")
    ap.add_argument("--no-solo", action="store_true")
    ap.add_argument("--stagger-s", type=float, default=0.2, help="between the starts of the batch's requests")
    ap.add_argument("--hold-s", type=float, default=3.0, help="stand-in only: how long a lone request holds its slot")
    args = ap.parse_args()
    if args.server == "stand-in":
        sys.path.insert(0, str(REPO / "tests" / "llm"))
        from crossing_server import CrossingServer

        with CrossingServer(slots=5, hold_s=args.hold_s) as server:
            data = asyncio.run(run(args, server.base_url))
        tag = "stand-in"
    else:
        data = asyncio.run(run(args, args.server.rstrip("/")))
        tag = args.server.split("//")[-1].split("/")[0].replace(":", "_")
    path = REPO / "benchmarks" / "results" / f"cross_replies-{tag}{'-leases' if args.leases else ''}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
