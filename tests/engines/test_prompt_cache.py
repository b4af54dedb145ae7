"""Persona prompts cached: Anthropic's cache_control on a byte-identical persona system block,
llama.cpp slot routing, the simulator's modelled cache, and unknown cache figures kept unknown."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from crux_lab.engines.crux_room import prompts
from crux_lab.engines.crux_room.panel import PanelParams, _PanelRun
from crux_lab.engines.crux_room.schemas import OpeningReply
from crux_lab.llm.anthropic_backend import AnthropicBackend
from crux_lab.llm.base import LLMRequest
from crux_lab.llm.ledger import Ledger
from crux_lab.llm.openai_backend import OpenAIBackend, mend_own_words
from crux_lab.llm.pricing import cost_usd
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.llm.simulated.core import CACHE_MIN_TOKENS
from crux_lab.models import DebateConfig, Tier, Usage
from crux_lab.personas.loader import load_personas, propositions_for
from crux_lab.runner import DebateRun
from crux_lab.tokens import count_tokens
from tests.engines.crux_deck import PERSONA_IDS, TOPIC
from tests.engines.scripted import ScriptedBackend
from tests.llm.fake_api import FAKE_KEY, FakeAPI, message
from tests.llm.fake_openai import LOCAL_URL, FakeOpenAI, completion

SPEECH = json.dumps({"utterance": "A reserve locks in scarcity.", "move": "CLAIM", "stance": "pro",
                     "addresses": ["topic"], "named_reason": None})
# the persona's next turn says something new (the same words again would be an echo, sent back)
TAKE = json.dumps({"utterance": "Custody is solved by multisignature vaults under audit.", "move": "CLAIM",
                   "stance": "pro", "addresses": ["topic"], "named_reason": None})


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CRUX_LAB_PRICES"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.usefixtures("use_test_deck")
async def test_anthropic_marks_the_persona_block_and_keeps_it_byte_identical_across_turns() -> None:
    """Two panel turns of one persona (its opening and a take) through the real SDK: the
    system block is the same bytes with cache_control both times; the turn goes in the user
    message."""
    api = FakeAPI([message(SPEECH), message(TAKE)])
    backend = AnthropicBackend(api_key=FAKE_KEY, http_client=api.client(), max_retries=0)
    run = DebateRun(DebateConfig(topic=TOPIC, persona_ids=PERSONA_IDS, engine="panel"), backend=backend)
    panel = _PanelRun(run.ctx, PanelParams())
    pid = PERSONA_IDS[0]
    opening = prompts.OPENING.format(topic=TOPIC) + "\n" + prompts.OPENING_POSITIONS.format(n=4)
    await panel.sp.speak("opening", pid, opening, panel.context(pid, []), phase="opening", schema=OpeningReply)
    take = prompts.TAKE.format(label="Custody", description="Can a state hold keys safely?")
    await panel.sp.speak("take", pid, take, panel.context(pid, [], "Custody"), phase="take", aspect="Custody")
    first, second = (r.body for r in api.requests)
    assert first["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert first["system"][0]["text"] == panel.sp.systems[pid]
    # byte-identical as sent: the same block, text and marker, in both request bodies
    assert first["system"] == second["system"] and len(first["system"]) == 1
    assert first["messages"] != second["messages"]  # what changes per turn is in the user message
    assert "Opening round" in json.dumps(first["messages"]) and "Custody" in json.dumps(second["messages"])


CASSETTES = Path(__file__).resolve().parents[1] / "data" / "cassettes"


def turn(system: str, cache: bool = True) -> LLMRequest:
    return LLMRequest(purpose="take", system=system, user="Your take?", cache_system=cache)


async def bodies_on_llama_cpp(slots: int, requests: list[LLMRequest]) -> list[dict[str, Any]]:
    """The request bodies a llama.cpp server with ``slots`` slots receives for ``requests``."""
    api = FakeOpenAI([completion("ok")], n_ctx=8192, slots=slots)
    backend = OpenAIBackend(models={"strong": "qwen", "fast": "qwen"}, base_url=LOCAL_URL, http_client=api.client(),
                            structured="prompt")
    for request in requests:
        await backend.generate(request)
    return [c.body for c in api.chats]


async def test_llama_cpp_with_fewer_than_three_slots_gets_no_pinned_slot() -> None:
    """Pinned personas beside unpinned readers would make a persona's request wait for a slot a
    reader holds, and llama.cpp answered a waiting request about the other's prompt."""
    bodies = await bodies_on_llama_cpp(2, [turn("You are Ada."), turn("You are Bo."), turn("You are Ada."),
                                           turn("You read debates.", cache=False)])
    assert [b.get("id_slot") for b in bodies] == [None, None, None, None]


async def test_requests_pinned_to_one_slot_go_one_at_a_time_and_other_slots_go_alongside() -> None:
    """Sent together to one slot, Qwen on llama.cpp answered the request that waited about the
    other one's prompt (a Cedar Falls card named Northgate's drivers). The backend keeps one
    request in flight per slot; different slots still run in parallel."""
    api = FakeOpenAI([completion("ok")], n_ctx=8192, slots=3)
    in_flight: dict[object, int] = {}
    most: dict[object, int] = {}
    served = api.__call__

    async def watch(request: httpx2.Request) -> httpx2.Response:
        slot = json.loads(request.content).get("id_slot") if request.content else None
        in_flight[slot] = in_flight.get(slot, 0) + 1
        most[slot] = max(most.get(slot, 0), in_flight[slot])
        for _ in range(5):  # let every other request that can be in flight get there
            await asyncio.sleep(0)
        most["any"] = max(most.get("any", 0), sum(in_flight.values()))
        try:
            return await served(request)
        finally:
            in_flight[slot] -= 1

    backend = OpenAIBackend(models={"strong": "qwen", "fast": "qwen"}, base_url=LOCAL_URL,
                            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(watch)), structured="prompt")
    await backend.generate(turn("You read debates.", cache=False))  # learns the slots
    readers = [turn(f"You read debate {i}.", cache=False) for i in range(4)]
    await asyncio.gather(*(backend.generate(r) for r in [*readers, turn("You are Ada."), turn("You are Bo.")]))
    assert [c.body.get("id_slot") for c in api.chats[1:]].count(2) == 4
    assert most[2] == 1  # the four readers shared the spare slot, one at a time
    assert most["any"] >= 2  # Ada and Bo did not wait for them


async def test_with_a_spare_slot_other_requests_never_take_a_persona_slot() -> None:
    bodies = await bodies_on_llama_cpp(3, [turn("You read debates.", cache=False), turn("You are Ada."),
                                           turn("You are Bo."), turn("You are Cy."), turn("You are Ada."),
                                           turn("You read debates.", cache=False)])
    slots = [b.get("id_slot") for b in bodies]
    assert slots == [2, 0, 1, 2, 0, 2]  # Ada and Bo keep slots 0 and 1; the reader and Cy share the last
    assert all(b.get("cache_prompt") is True for b in bodies)


async def test_a_server_that_is_not_llama_cpp_gets_no_slot_fields() -> None:
    api = FakeOpenAI([completion("ok")])  # /props is 404
    backend = OpenAIBackend(models={"strong": "m", "fast": "m"}, base_url=LOCAL_URL, http_client=api.client(),
                            structured="prompt")
    await backend.generate(LLMRequest(purpose="take", system="You are Ada.", user="u", cache_system=True))
    assert "id_slot" not in api.chats[0].body and "cache_prompt" not in api.chats[0].body
    assert not any(key.startswith("dry_") for key in api.chats[0].body)  # DRY is llama.cpp's


async def test_a_persona_turn_on_llama_cpp_asks_for_its_own_words_and_a_reader_does_not() -> None:
    """On Qwen 1.5B a turn copied the claim it answers, or the persona's own earlier point, and
    the echo guard kept it out. A persona's turn is sent with llama.cpp's DRY settings, pinned
    slot or not; a reader's request, which must quote the debate, is not."""
    reader = LLMRequest(purpose="card", system="You read debates.", user="Quote the turn.")
    for slots in (2, 3):
        speech, read = await bodies_on_llama_cpp(slots, [turn("You are Ada."), reader])
        assert speech["dry_multiplier"] > 0 and speech["dry_allowed_length"] == 3
        assert speech["dry_penalty_last_n"] == 8192  # the server's whole context
        assert not any(key.startswith("dry_") for key in read)


async def test_a_persona_turn_gets_back_the_spaces_and_digits_dry_took_and_a_reader_keeps_its_text() -> None:
    """Recorded on Qwen 1.5B under DRY (the graph and dcg cassettes): the phrase the prompt
    holds came back glued or cut. A persona turn is mended from its own prompt; a reader's
    reply, sent without DRY, is passed on as written."""
    said = "Bitcoin has a higherpotential than gold; it fell in March 202 while gold heldup."
    system = "You are Ada. Bitcoin has a higher potential; it fell in March 2020 while gold held up."
    api = FakeOpenAI([completion(said), completion(said)], n_ctx=8192, slots=3)
    backend = OpenAIBackend(models={"strong": "qwen", "fast": "qwen"}, base_url=LOCAL_URL, http_client=api.client(),
                            structured="prompt")
    spoken = await backend.generate(turn(system))
    read = await backend.generate(LLMRequest(purpose="card", system=system, user="Quote the turn."))
    assert spoken.text == "Bitcoin has a higher potential than gold; it fell in March 2020 while gold held up."
    assert read.text == said


def test_mending_changes_no_reply_the_cassettes_hold_from_a_request_without_dry() -> None:
    """The false-positive check, on real replies: every cassette reply sent without DRY is left
    as it is when mended against its own prompt. The persona turns sent with DRY were mended when
    they were recorded (the cassette keeps what the backend returned, since 2026-11-30 for every
    engine), so mending them again changes none: the mend is idempotent on real text. What it
    mends is shown above and in its doctest."""
    mended = {True: 0, False: 0}
    seen = {True: 0, False: 0}
    for path in sorted(CASSETTES.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            request, response = entry["request"], entry["response"]
            if not isinstance(response, dict):
                continue
            prompt = "\n".join([request.get("system", ""), *(m["content"] for m in request.get("messages", []))])
            mended[bool(request.get("own_words"))] += mend_own_words(response["text"], prompt) != response["text"]
            seen[bool(request.get("own_words"))] += 1
    assert seen[True] >= 20 and seen[False] >= 20
    assert mended == {True: 0, False: 0}


async def test_no_cache_figures_are_recorded_as_unknown_not_zero() -> None:
    api = FakeOpenAI([completion("ok", prompt_tokens=500)])  # no prompt_tokens_details
    ledger = Ledger(OpenAIBackend(models={"strong": "m", "fast": "m"}, base_url=LOCAL_URL, http_client=api.client(),
                                  structured="prompt"), run_id="r")
    await ledger.generate(LLMRequest(purpose="take", system="s", user="u", cache_system=True))
    await ledger.generate(LLMRequest(purpose="take", system="s", user="u", cache_system=True))
    assert [c.cache_read_tokens for c in ledger.calls] == [None, None]
    assert [c.input_tokens for c in ledger.calls] == [500, 500]
    assert ledger.usage().cache_read_tokens is None
    # a known figure next to an unknown one sums the known
    assert (Usage(cache_read_tokens=None) + Usage(cache_read_tokens=40)).cache_read_tokens == 40


async def test_llama_cpp_timings_cache_n_is_read_when_usage_has_no_details() -> None:
    body = json.loads(completion("ok", prompt_tokens=1000).content)
    body["timings"] = {"cache_n": 700, "prompt_n": 300}
    api = FakeOpenAI([httpx2.Response(200, json=body)])
    r = await OpenAIBackend(models={"strong": "m", "fast": "m"}, base_url=LOCAL_URL, http_client=api.client(),
                            structured="prompt").generate(LLMRequest(purpose="take", system="s", user="u"))
    assert (r.usage.input_tokens, r.usage.cache_read_tokens) == (300, 700)


async def test_the_simulator_writes_a_persona_block_once_then_reads_it() -> None:
    sim = SimulatedBackend({}, {}, seed=0)
    long = "You are Ada. " + "You weigh evidence over rhetoric. " * 200
    short = "You are Bo."
    assert count_tokens(long) >= CACHE_MIN_TOKENS > count_tokens(short)

    def usage(system: str, cache: bool = True) -> Usage:
        request = LLMRequest(purpose="take", system=system, user="Your take?", cache_system=cache)
        return sim._usage(request, sim.model_for(Tier.strong), 50)

    n, u = count_tokens(long), count_tokens("Your take?")
    first, again = usage(long), usage(long)
    assert (first.cache_write_tokens, first.cache_read_tokens, first.input_tokens) == (n, 0, u)
    assert (again.cache_write_tokens, again.cache_read_tokens, again.input_tokens) == (0, n, u)
    assert usage(long, cache=False).input_tokens == n + u  # not marked: sent uncached
    assert usage(short).cache_write_tokens == 0  # too short to cache
    sim._clock += 301  # more than 5 minutes of modelled time since its last use
    assert usage(long).cache_write_tokens == n
    model = sim.model_for(Tier.strong)
    assert cost_usd(model, again) < cost_usd(model, Usage(input_tokens=n + u, output_tokens=50))


# The panel's design shape: 4 personas of the shipped crypto deck, 3 aspects (benchmarks/panel_budget.py).
RESERVE = "Should the US create a strategic Bitcoin reserve?"
PERSONAS = ["michael-saylor", "arthur-hayes", "peter-schiff", "vitalik-buterin"]


def panel_at_design_shape(seed: int) -> tuple[DebateRun, list[LLMRequest]]:
    backend = ScriptedBackend(SimulatedBackend(load_personas(PERSONAS), propositions_for(PERSONAS), seed=seed))
    run = DebateRun(DebateConfig(topic=RESERVE, persona_ids=PERSONAS, engine="panel", seed=seed), backend=backend)

    async def go() -> None:
        async for _ in run.events():
            pass

    asyncio.run(go())
    return run, list(backend.requests)


@pytest.fixture(scope="module")
def reserve_debate() -> tuple[DebateRun, list[LLMRequest]]:
    return panel_at_design_shape(1)


def test_panel_at_its_design_shape_stays_within_its_budget(reserve_debate: tuple[DebateRun, Any]) -> None:
    """4 personas, 3 aspects, on the simulator: at most the design's ~63 calls and ~175k input
    tokens (a deterministic count, as a regression guard; the real-model figures are benchmarks)."""
    run, _ = reserve_debate
    res = run.result
    assert res.complete and len(res.aspects) == 3 and res.crux_cards
    # The debate's own calls keep the design's budget; the poll's are ledgered apart, at most two
    # per persona per candidate polled.
    polled = [c for c in res.llm_calls if c.purpose in ("poll", "pivot")]
    calls = [c for c in res.llm_calls if c.purpose not in ("poll", "pivot")]
    prompt = sum(c.input_tokens + (c.cache_read_tokens or 0) + c.cache_write_tokens for c in calls)
    assert len(calls) <= 63 and prompt <= 175_000
    assert res.poll is not None and 0 < len(polled) <= 2 * len(PERSONAS) * res.poll.polled
    purposes = [c.purpose for c in calls]
    assert purposes.count("detect_disagreement") == 3  # one detection call per themed round
    assert purposes.count("crux_pairs") == 6 and "worldview_positions" not in purposes  # one per pair of 4
    parallel = {s.name: len(s.chains) for s in run.ctx.scratch["timeline"].stages if s.wall_s is not None}
    assert parallel["opening"] == parallel["closing"] == 4
    assert all(parallel[f"take-a{i}"] == 4 for i in (1, 2, 3))


def test_the_simulator_reads_each_persona_block_from_cache_after_its_first_use(
    reserve_debate: tuple[DebateRun, list[LLMRequest]],
) -> None:
    run, requests = reserve_debate
    persona = [r for r in requests if r.cache_system]
    systems = {r.system for r in persona}
    assert len(systems) == 4  # one block per persona, the same on every turn
    sent = sum(count_tokens(r.system) for r in persona)
    calls = run.result.llm_calls
    written = sum(c.cache_write_tokens for c in calls)
    read = sum(c.cache_read_tokens or 0 for c in calls)
    assert written == sum(count_tokens(s) for s in systems)  # each block written once
    assert read == sent - written and read / sent >= 0.6
    assert run.result.usage.cost_usd < sum(
        cost_usd(c.model, Usage(input_tokens=c.input_tokens + (c.cache_read_tokens or 0) + c.cache_write_tokens,
                                output_tokens=c.output_tokens))
        for c in calls
    )
