"""OpenAIBackend through the real openai SDK against a mocked transport (no network, no key)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from pydantic import BaseModel, Field

from crux_lab.llm import pricing
from crux_lab.llm.base import BackendUnavailable, LLMCallFailed, LLMOutputError, LLMRequest
from crux_lab.llm.ledger import Ledger
from crux_lab.llm.openai_backend import LOCAL_TIMEOUT_S, NO_KEY, REMOTE_TIMEOUT_S, OpenAIBackend
from crux_lab.models import Tier

from .fake_openai import FAKE_OPENAI_KEY, LOCAL_URL, REMOTE_URL, FakeOpenAI, completion, error

MODELS = {"strong": "smollm2", "fast": "smollm2-fast"}


class Vote(BaseModel):
    side: str = Field(pattern="^(YES|NO)$")
    confidence: float = Field(ge=0, le=1)
    reason: str = ""


class Tally(BaseModel):
    counts: dict[str, int]


def backend(api: FakeOpenAI, base_url: str = LOCAL_URL, **kwargs: object) -> OpenAIBackend:
    return OpenAIBackend(models=MODELS, base_url=base_url, http_client=api.client(), **kwargs)  # type: ignore[arg-type]


def take(**kwargs: object) -> LLMRequest:
    fields: dict[str, object] = {"purpose": "take", "system": "You are Ada.", "user": "Your take?"}
    fields.update(kwargs)
    return LLMRequest(**fields)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _no_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("CRUX_LAB_PRICES", raising=False)


async def test_success_reports_text_usage_with_cached_tokens_and_no_cost_locally() -> None:
    api = FakeOpenAI([completion("Markets clear.", prompt_tokens=1200, completion_tokens=80, cached_tokens=900)])
    r = await backend(api).generate(take(temperature=0.85, max_tokens=400))
    assert r.text == "Markets clear." and r.backend == "openai" and r.model == "smollm2"
    assert (r.usage.input_tokens, r.usage.cache_read_tokens, r.usage.output_tokens) == (300, 900, 80)
    assert r.cost_usd == 0.0 and r.retries == 0 and not r.repaired
    body = api.chats[0].body
    assert body["model"] == "smollm2"
    assert body["messages"] == [
        {"role": "system", "content": "You are Ada."},
        {"role": "user", "content": "Your take?"},
    ]
    assert body["temperature"] == 0.85 and body["max_completion_tokens"] == 400
    assert "response_format" not in body
    # No key is set and the server is local: a placeholder goes in the header, nothing else.
    assert api.chats[0].headers["authorization"] == f"Bearer {NO_KEY}"


async def test_fast_tier_calls_the_fast_model() -> None:
    api = FakeOpenAI([completion(model="smollm2-fast")])
    r = await backend(api).generate(take(tier=Tier.fast))
    assert api.chats[0].body["model"] == "smollm2-fast" and r.model == "smollm2-fast"


async def test_a_schema_goes_out_as_a_strict_json_schema_and_the_reply_is_validated() -> None:
    api = FakeOpenAI([completion('{"side": "YES", "confidence": 0.7, "reason": "r"}')])
    r = await backend(api).generate(take(output_schema=Vote))
    assert isinstance(r.parsed, Vote) and r.parsed.side == "YES" and not r.repaired
    fmt = api.chats[0].body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["side", "confidence", "reason"]
    assert "default" not in json.dumps(schema)
    # The contract is stated in the prompt too (a grammar-constrained model never sees the schema).
    assert "JSON Schema" in api.chats[0].body["messages"][-1]["content"]


async def test_a_schema_without_a_strict_form_is_sent_non_strict() -> None:
    api = FakeOpenAI([completion('{"counts": {"a": 1}}')])
    r = await backend(api).generate(take(output_schema=Tally))
    assert isinstance(r.parsed, Tally)
    assert api.chats[0].body["response_format"]["json_schema"]["strict"] is False


async def test_a_server_that_rejects_the_schema_falls_back_to_the_prompt_contract() -> None:
    api = FakeOpenAI(
        [
            error(400, "JSON schema conversion failed: unsupported keyword"),
            completion('{"side": "NO", "confidence": 0.2}'),
        ]
    )
    b = backend(api)
    r = await b.generate(take(output_schema=Vote))
    assert isinstance(r.parsed, Vote) and r.parsed.side == "NO"
    first, second = api.chats
    assert "response_format" in first.body and "response_format" not in second.body
    assert "JSON Schema" in second.body["messages"][-1]["content"]
    # The model is not sent a schema again.
    await b.generate(take(output_schema=Vote))
    assert "response_format" not in api.chats[2].body


async def test_structured_prompt_mode_never_sends_a_schema() -> None:
    api = FakeOpenAI([completion('{"side": "NO", "confidence": 0.2}')])
    await backend(api, structured="prompt").generate(take(output_schema=Vote))
    assert "response_format" not in api.chats[0].body


async def test_an_invalid_reply_is_repaired_once() -> None:
    api = FakeOpenAI(
        [
            completion("Sure! I think YES.", prompt_tokens=100, completion_tokens=10),
            completion('{"side": "YES", "confidence": 0.9}', prompt_tokens=150, completion_tokens=12),
        ]
    )
    r = await backend(api).generate(take(output_schema=Vote))
    assert r.repaired and isinstance(r.parsed, Vote)
    assert (r.usage.calls, r.usage.input_tokens, r.usage.output_tokens) == (1, 250, 22)
    repair = api.chats[1].body["messages"]
    assert repair[-2] == {"role": "assistant", "content": "Sure! I think YES."}
    assert "not valid JSON" in repair[-1]["content"]
    assert api.chats[1].body["response_format"] == api.chats[0].body["response_format"]


async def test_a_reply_off_schema_twice_raises_llm_output_error_with_the_usage() -> None:
    api = FakeOpenAI([completion('{"side": "MAYBE", "confidence": 3}', prompt_tokens=50, completion_tokens=5)])
    with pytest.raises(LLMOutputError) as info:
        await backend(api).generate(take(output_schema=Vote))
    assert len(api.chats) == 2
    assert "after one repair" in str(info.value) and "side" in str(info.value)
    assert info.value.usage is not None and info.value.usage.input_tokens == 100


async def test_a_reply_looping_to_max_tokens_is_repaired_then_fails() -> None:
    looping = completion('{"side": "YES", "reason": "' + "very " * 200, finish_reason="length")
    api = FakeOpenAI([looping])
    with pytest.raises(LLMOutputError):
        await backend(api).generate(take(output_schema=Vote, max_tokens=60))
    repair = api.chats[1].body["messages"]
    assert "cut off at the token limit" in repair[-1]["content"]
    # The looping reply is quoted only in part.
    assert repair[-2]["content"].endswith(" ...") and len(repair[-2]["content"]) < len(looping.content)


async def test_429_is_retried_by_the_sdk_and_counted() -> None:
    api = FakeOpenAI([error(429, "slow down", {"retry-after-ms": "5"}, kind="rate_limit_error"), completion("ok")])
    r = await backend(api).generate(take())
    assert (r.text, r.retries) == ("ok", 1)
    assert [c.headers["x-stainless-retry-count"] for c in api.chats] == ["0", "1"]


async def test_retries_exhausted_report_the_status_and_the_count() -> None:
    api = FakeOpenAI([error(503, "loading model", {"retry-after-ms": "1"}, kind="unavailable_error")])
    with pytest.raises(LLMCallFailed) as info:
        await backend(api, max_retries=2).generate(take())
    assert info.value.status == 503 and info.value.retries == 2 and "loading model" in str(info.value)
    assert len(api.chats) == 3


async def test_server_down_is_one_line_naming_the_url_and_how_to_start_it() -> None:
    api = FakeOpenAI([httpx2.ConnectError("[Errno 111] Connection refused")])

    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("[Errno 111] Connection refused")

    client = httpx2.AsyncClient(transport=httpx2.MockTransport(refuse))
    b = OpenAIBackend(models=MODELS, base_url=LOCAL_URL, http_client=client, max_retries=0)
    with pytest.raises(LLMCallFailed) as info:
        await b.generate(take())
    message = str(info.value)
    assert "\n" not in message
    assert LOCAL_URL in message and "crux-lab local-model start" in message
    assert "Connection refused" in message
    assert api.requests == []


async def test_an_unknown_model_passes_on_the_servers_message() -> None:
    api = FakeOpenAI([error(404, "The model `gpt-nope` does not exist or you do not have access to it.", kind="not_found_error")])
    with pytest.raises(LLMCallFailed) as info:
        await backend(api).generate(take())
    assert info.value.status == 404
    assert "The model `gpt-nope` does not exist" in str(info.value)
    assert "--model-strong" in str(info.value)


async def test_a_prompt_longer_than_the_context_fails_before_the_call() -> None:
    api = FakeOpenAI([completion()], n_ctx=64)
    with pytest.raises(LLMCallFailed) as info:
        await backend(api).generate(take(user="word " * 200))
    message = str(info.value)
    assert "context is 64 tokens" in message and "--ctx-size" in message
    prompt_size = int(message.split("the prompt is about ")[1].split(" ")[0])
    assert prompt_size > 200
    assert api.chats == []  # never sent (only the structured-output canary went before it)
    assert [r.path for r in api.requests if r not in api.canaries] == ["/props"]


async def test_the_context_is_asked_once_and_short_prompts_go_through() -> None:
    api = FakeOpenAI([completion()], n_ctx=4096)
    b = backend(api)
    await b.generate(take())
    await b.generate(take())
    asked = [r.path for r in api.requests if r not in api.canaries]
    assert asked == ["/props", "/v1/chat/completions", "/v1/chat/completions"]
    assert b.context_tokens == 4096


async def test_the_servers_own_context_error_is_passed_on_not_taken_for_a_schema_problem() -> None:
    text = "request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it"
    api = FakeOpenAI([error(400, text, kind="exceed_context_size_error")])
    with pytest.raises(LLMCallFailed) as info:
        await backend(api).generate(take(output_schema=Vote))
    assert text in str(info.value) and info.value.status == 400
    assert len(api.chats) == 1


def test_a_remote_server_needs_a_key_and_a_local_one_does_not() -> None:
    with pytest.raises(BackendUnavailable, match="export OPENAI_API_KEY="):
        OpenAIBackend(models=MODELS, base_url=REMOTE_URL)
    OpenAIBackend(models=MODELS, base_url=LOCAL_URL)
    with pytest.raises(BackendUnavailable, match="--model-strong M --model-fast M"):
        OpenAIBackend(models={"strong": "m"}, base_url=LOCAL_URL)
    with pytest.raises(BackendUnavailable, match="not an http"):
        OpenAIBackend(models=MODELS, base_url="127.0.0.1:8080")


def test_a_local_server_gets_a_longer_timeout_than_a_hosted_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # A CPU server writing a few tokens a second needs minutes for a long reply.
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    local, remote = OpenAIBackend(models=MODELS, base_url=LOCAL_URL), OpenAIBackend(models=MODELS, base_url=REMOTE_URL)
    assert local.timeout_s == LOCAL_TIMEOUT_S > remote.timeout_s == REMOTE_TIMEOUT_S
    assert OpenAIBackend(models=MODELS, base_url=LOCAL_URL, timeout_s=7.0).timeout_s == 7.0


async def test_the_key_goes_only_into_the_auth_header_and_never_into_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    api = FakeOpenAI([completion("fine"), error(401, f"Incorrect API key provided: {FAKE_OPENAI_KEY}")])
    b = backend(api, base_url=REMOTE_URL)
    r = await b.generate(take())
    assert api.chats[0].headers["authorization"] == f"Bearer {FAKE_OPENAI_KEY}"
    assert FAKE_OPENAI_KEY.encode() not in api.chats[0].raw
    assert FAKE_OPENAI_KEY not in repr(b) and FAKE_OPENAI_KEY not in r.model_dump_json()
    ledger = Ledger(b, run_id="r")
    with pytest.raises(LLMCallFailed) as info:
        await ledger.generate(take())
    assert info.value.status == 401 and "OPENAI_API_KEY" in str(info.value)
    assert FAKE_OPENAI_KEY not in str(info.value) and info.value.__cause__ is None
    assert FAKE_OPENAI_KEY not in ledger.calls[-1].model_dump_json()


async def test_a_remote_model_is_priced_from_the_user_price_table(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"smollm2": {"input": 2.0, "output": 8.0, "cache_write": 0, "cache_read": 0.5}}}))
    monkeypatch.setenv("CRUX_LAB_PRICES", str(prices))
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_OPENAI_KEY)
    api = FakeOpenAI([completion(prompt_tokens=1_000_000, completion_tokens=100_000, cached_tokens=500_000)])
    r = await backend(api, base_url=REMOTE_URL).generate(take())
    assert r.cost_usd == pytest.approx(0.5 * 2.0 + 0.5 * 0.5 + 0.1 * 8.0)
    assert r.cost_usd == pricing.cost_usd("smollm2", r.usage)
    # The same model on a local server costs nothing.
    local = await backend(FakeOpenAI([completion(prompt_tokens=1_000_000)])).generate(take())
    assert local.cost_usd == 0.0


def test_a_broken_price_file_is_one_clear_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bad = tmp_path / "prices.json"
    bad.write_text("{not json")
    monkeypatch.setenv("CRUX_LAB_PRICES", str(bad))
    with pytest.raises(pricing.PriceTableInvalid, match="CRUX_LAB_PRICES"):
        pricing.cost_usd("x", pricing.Usage())


async def test_the_ledger_records_cached_prompt_tokens() -> None:
    api = FakeOpenAI([completion(prompt_tokens=1000, cached_tokens=800)])
    ledger = Ledger(backend(api), run_id="r")
    await ledger.generate(take(cache_system=True))
    row = ledger.calls[0]
    assert (row.backend, row.model, row.input_tokens, row.cache_read_tokens) == ("openai", "smollm2", 200, 800)


async def test_a_cassette_records_openai_calls_and_replays_them_without_the_server(tmp_path: Path) -> None:
    from crux_lab.llm.replay import ReplayBackend

    cassette = tmp_path / "openai.jsonl"
    api = FakeOpenAI([completion('{"side": "YES", "confidence": 0.6}', prompt_tokens=300, cached_tokens=200)])
    recording = ReplayBackend(cassette, inner=backend(api), mode="record")
    live = await recording.generate(take(output_schema=Vote))
    replay = ReplayBackend(cassette, mode="replay")
    again = await replay.generate(take(output_schema=Vote))
    assert again.text == live.text and isinstance(again.parsed, Vote)
    assert again.model == "smollm2" and again.usage.cache_read_tokens == 200
    assert replay.model_for(Tier.strong) == "smollm2"
    assert len(api.chats) == 1  # the replay never reached the server


def test_make_backend_builds_the_openai_backend_with_the_run_models() -> None:
    from crux_lab.llm import make_backend

    b = make_backend("openai", models={"strong": "big", "fast": "small"}, base_url=LOCAL_URL)
    assert isinstance(b, OpenAIBackend) and b.base_url == LOCAL_URL
    assert (b.model_for(Tier.strong), b.model_for(Tier.fast)) == ("big", "small")
    with pytest.raises(BackendUnavailable, match="export OPENAI_API_KEY"):
        make_backend("openai", models={"strong": "m", "fast": "m"}, base_url=REMOTE_URL)


def test_run_ids_change_with_the_models_and_stay_put_without_them() -> None:
    from crux_lab.models import DebateConfig

    base = DebateConfig(topic="t", persona_ids=["a"], engine="blitz", backend="openai")
    with_models = base.model_copy(update={"models": {"strong": "m", "fast": "m"}, "base_url": LOCAL_URL})
    other = base.model_copy(update={"models": {"strong": "m2", "fast": "m"}, "base_url": LOCAL_URL})
    assert len({base.run_id(), with_models.run_id(), other.run_id()}) == 3
    assert "models" not in base.model_dump() and with_models.model_dump()["models"] == {"strong": "m", "fast": "m"}


# -- structured output: the canary ---------------------------------------------------------


@pytest.mark.parametrize(
    ("canary", "requested", "mode", "verdict", "sent"),
    [
        ("enforce", "auto", "json_schema", "enforced", True),
        ("ignore", "auto", "prompt", "ignored", False),
        ("reject", "auto", "prompt", "rejected", False),
        ("ignore", "json_schema", "json_schema", "ignored", True),
    ],
)
async def test_the_canary_decides_whether_schemas_are_sent(
    canary: str, requested: str, mode: str, verdict: str, sent: bool
) -> None:
    api = FakeOpenAI([completion('{"side": "YES", "confidence": 0.7}')], canary=canary)
    b = backend(api, structured=requested)
    r = await b.generate(take(output_schema=Vote))
    await b.generate(take(output_schema=Vote))
    assert isinstance(r.parsed, Vote)
    assert len(api.canaries) == 1  # asked once per backend, before the first call
    check = b.structured_check
    assert check is not None and (check.mode, check.canary, check.server) == (mode, verdict, LOCAL_URL)
    assert all(("response_format" in chat.body) is sent for chat in api.chats)
    # The prompt contract is stated either way, and every reply is validated.
    assert all("JSON Schema" in chat.body["messages"][-1]["content"] for chat in api.chats)
    warning = check.warning()
    assert (warning is None) is (verdict == "enforced")
    if warning and requested == "auto":
        assert LOCAL_URL in warning and "prompt mode is in use" in warning


async def test_prompt_mode_sends_no_canary() -> None:
    api = FakeOpenAI([completion('{"side": "NO", "confidence": 0.2}')])
    b = backend(api, structured="prompt")
    await b.generate(take(output_schema=Vote))
    assert api.canaries == [] and b.structured_check is not None and b.structured_check.canary == "not checked"


async def test_a_server_down_at_the_canary_is_one_line_naming_the_url() -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("Connection refused")

    b = OpenAIBackend(models=MODELS, base_url=LOCAL_URL, http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(refuse)), max_retries=0)
    with pytest.raises(LLMCallFailed, match=r"cannot reach the local server at http://127.0.0.1:8080/v1"):
        await b.generate(take())


def test_an_unknown_structured_mode_is_refused() -> None:
    with pytest.raises(BackendUnavailable, match="--structured 'grammar' is not a mode: use one of auto, json_schema, prompt"):
        backend(FakeOpenAI([completion()]), structured="grammar")
