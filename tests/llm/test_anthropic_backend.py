"""AnthropicBackend through the real anthropic SDK against a mocked transport (no network, no key)."""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest
from pydantic import BaseModel, Field

from crux_lab.llm import pricing
from crux_lab.llm.anthropic_backend import AnthropicBackend
from crux_lab.llm.base import (
    BackendUnavailable,
    LLMCallFailed,
    LLMOutputError,
    LLMRequest,
)
from crux_lab.llm.ledger import Ledger
from crux_lab.models import Tier, Usage

from .fake_api import FAKE_KEY, FakeAPI, error, message, slow


class Vote(BaseModel):
    side: str = Field(pattern="^(YES|NO)$")
    confidence: float = Field(ge=0, le=1)


def backend(api: FakeAPI, **kwargs: object) -> AnthropicBackend:
    return AnthropicBackend(api_key=FAKE_KEY, http_client=api.client(), **kwargs)  # type: ignore[arg-type]


def take(**kwargs: object) -> LLMRequest:
    fields: dict[str, object] = {"purpose": "take", "system": "You are Ada.", "user": "Your take?"}
    fields.update(kwargs)
    return LLMRequest(**fields)


async def test_success_reports_text_usage_cost_and_model() -> None:
    api = FakeAPI(
        [
            message(
                "Markets clear.",
                input_tokens=1200,
                output_tokens=80,
                cache_creation_input_tokens=300,
                cache_read_input_tokens=900,
                thinking="let me think",
            )
        ]
    )
    r = await backend(api).generate(take())
    assert r.text == "Markets clear."  # thinking blocks are not the answer
    assert r.backend == "anthropic" and r.model == "claude-sonnet-5-5"
    assert (r.usage.input_tokens, r.usage.output_tokens) == (1200, 80)
    assert (r.usage.cache_write_tokens, r.usage.cache_read_tokens) == (300, 900)
    assert r.cost_usd == pricing.cost_usd("claude-sonnet-5-5", r.usage) > 0
    assert r.retries == 0 and not r.repaired and r.parsed is None
    assert len(api.requests) == 1


async def test_request_body_caches_system_and_follows_model_settings() -> None:
    api = FakeAPI([message()])
    b = backend(api, models={Tier.strong: "claude-sonnet-5-5", Tier.fast: "claude-haiku-4-5"})
    await b.generate(take(cache_system=True, temperature=0.85, max_tokens=400))
    await b.generate(take(tier=Tier.fast, temperature=0.2, max_tokens=300))
    strong, fast = (c.body for c in api.requests)
    assert strong["system"] == [
        {"type": "text", "text": "You are Ada.", "cache_control": {"type": "ephemeral"}}
    ]
    assert strong["model"] == "claude-sonnet-5-5"
    # Sonnet 5.5 rejects a non-default temperature: it is left out, effort is set,
    # and max_tokens leaves room for adaptive thinking.
    settings = pricing.model_settings("claude-sonnet-5-5")
    assert "temperature" not in strong
    assert strong["output_config"] == {"effort": settings.effort}
    assert strong["max_tokens"] == 400 + settings.thinking_headroom
    # An older model takes the allocation's temperature as is, and no cache mark unless asked.
    assert fast["model"] == "claude-haiku-4-5"
    assert fast["temperature"] == 0.2 and fast["max_tokens"] == 300
    assert "cache_control" not in fast["system"][0]
    assert "output_config" not in fast
    assert strong["messages"] == [{"role": "user", "content": "Your take?"}]


async def test_key_goes_only_into_the_auth_header() -> None:
    api = FakeAPI([message()])
    b = backend(api)
    r = await b.generate(take())
    headers = api.requests[0].headers
    assert headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert FAKE_KEY not in api.requests[0].raw.decode()
    assert FAKE_KEY not in repr(b)
    assert FAKE_KEY not in r.model_dump_json()
    assert all(FAKE_KEY not in str(v) for v in vars(b).values() if not str(v).startswith("<anthropic"))


async def test_429_then_success_waits_retry_after() -> None:
    api = FakeAPI(
        [
            error(429, "rate_limit_error", "slow down", {"retry-after": "0.3"}),
            message("ok"),
        ]
    )
    r = await backend(api).generate(take())
    assert r.text == "ok"
    assert r.retries == 1
    first, second = api.requests
    assert second.at - first.at >= 0.3
    assert second.headers["x-stainless-retry-count"] == "1"


async def test_529_overloaded_is_retried_then_fails_with_the_purpose() -> None:
    overloaded = error(529, "overloaded_error", "Overloaded", {"retry-after-ms": "20"})
    api = FakeAPI([overloaded, message("ok")])
    r = await backend(api).generate(take())
    assert (r.text, r.retries) == ("ok", 1)

    always = FakeAPI([overloaded])
    with pytest.raises(LLMCallFailed) as info:
        await backend(always, max_retries=2).generate(take(purpose="card"))
    assert len(always.requests) == 3
    exc = info.value
    assert (exc.purpose, exc.status, exc.retries) == ("card", 529, 2)
    assert "card" in str(exc) and "overloaded" in str(exc)


async def test_5xx_without_retry_after_uses_backoff() -> None:
    api = FakeAPI([error(500, "api_error", "boom"), message("ok")])
    r = await backend(api).generate(take())
    assert r.retries == 1
    # SDK backoff: 0.5 s times a jitter factor in [0.75, 1].
    assert api.requests[1].at - api.requests[0].at >= 0.3


async def test_400_is_not_retried() -> None:
    api = FakeAPI([error(400, "invalid_request_error", "temperature is not supported")])
    with pytest.raises(LLMCallFailed) as info:
        await backend(api).generate(take())
    assert len(api.requests) == 1
    assert info.value.status == 400 and info.value.retries == 0
    assert "temperature is not supported" in str(info.value)


async def test_slow_attempt_times_out_and_is_retried() -> None:
    api = FakeAPI([slow(5.0, message("late")), message("on time")])
    r = await backend(api, timeout_s=0.2).generate(take())
    assert (r.text, r.retries) == ("on time", 1)


async def test_timeouts_exhaust_retries() -> None:
    api = FakeAPI([slow(5.0, message("late"))])
    with pytest.raises(LLMCallFailed) as info:
        await backend(api, timeout_s=0.1, max_retries=1).generate(take(purpose="crux_turn"))
    assert len(api.requests) == 2
    assert info.value.retries == 1 and info.value.status is None
    assert "timed out" in str(info.value) and "crux_turn" in str(info.value)


async def test_transport_read_timeout_is_retried() -> None:
    api = FakeAPI([httpx2.ReadTimeout("read timed out"), message("ok")])
    r = await backend(api).generate(take())
    assert (r.text, r.retries) == ("ok", 1)


async def test_prompt_contract_parses_and_puts_schema_in_user_message() -> None:
    api = FakeAPI([message('```json\n{"side": "YES", "confidence": 0.8}\n```')])
    b = backend(api, structured="prompt")
    r = await b.generate(take(purpose="detect_disagreement", output_schema=Vote, cache_system=True))
    assert isinstance(r.parsed, Vote) and r.parsed.side == "YES"
    assert json.loads(r.text) == {"side": "YES", "confidence": 0.8}
    body = api.requests[0].body
    user = body["messages"][0]["content"]
    assert '"confidence"' in user and "JSON Schema" in user
    # The cached system block stays the persona prompt, identical across purposes.
    assert body["system"][0]["text"] == "You are Ada."


async def test_malformed_json_gets_one_repair() -> None:
    api = FakeAPI(
        [
            message('{"side": "YES", "confidence": ', input_tokens=500, output_tokens=10),
            message('{"side": "NO", "confidence": 0.4}', input_tokens=560, output_tokens=12),
        ]
    )
    r = await backend(api).generate(take(output_schema=Vote))
    assert r.repaired is True
    assert isinstance(r.parsed, Vote) and r.parsed.side == "NO"
    assert (r.usage.input_tokens, r.usage.output_tokens) == (1060, 22)
    expected = pricing.cost_usd("claude-sonnet-5-5", Usage(input_tokens=500, output_tokens=10))
    expected += pricing.cost_usd("claude-sonnet-5-5", Usage(input_tokens=560, output_tokens=12))
    assert r.cost_usd == pytest.approx(expected)
    repair = api.requests[1].body["messages"]
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    assert repair[1]["content"] == '{"side": "YES", "confidence":'
    assert "not valid JSON" in repair[2]["content"]


async def test_schema_violation_repair_names_the_field() -> None:
    api = FakeAPI(
        [message('{"side": "MAYBE", "confidence": 0.5}'), message('{"side": "YES", "confidence": 0.5}')]
    )
    r = await backend(api).generate(take(output_schema=Vote))
    assert r.repaired and r.parsed is not None
    assert "side" in api.requests[1].body["messages"][2]["content"]


async def test_second_invalid_answer_raises_output_error_with_purpose_and_usage() -> None:
    api = FakeAPI([message("I think YES.", input_tokens=100, output_tokens=5)])
    b = backend(api)
    ledger = Ledger(b, run_id="r1")
    with pytest.raises(LLMOutputError) as info:
        await ledger.generate(take(purpose="card", output_schema=Vote))
    assert len(api.requests) == 2
    assert info.value.purpose == "card" and "card" in str(info.value)
    assert info.value.usage is not None and info.value.usage.input_tokens == 200
    row = ledger.calls[0]
    assert row.outcome == "error" and row.input_tokens == 200 and row.cost_usd > 0


async def test_empty_text_answer_is_an_output_error() -> None:
    api = FakeAPI([message("", stop_reason="max_tokens", thinking="long thoughts")])
    with pytest.raises(LLMOutputError, match="max_tokens"):
        await backend(api).generate(take())


async def test_refusal_is_a_call_failure() -> None:
    api = FakeAPI([message("", stop_reason="refusal")])
    with pytest.raises(LLMCallFailed, match="refusal"):
        await backend(api).generate(take(purpose="opening"))


async def test_concurrency_is_limited() -> None:
    api = FakeAPI([slow(0.05, message("ok"))])
    b = backend(api, max_concurrency=2)
    results = await asyncio.gather(*(b.generate(take(user=f"q{i}")) for i in range(6)))
    assert len(results) == 6
    assert api.max_in_flight == 2


async def test_ledger_row_for_a_retried_call() -> None:
    api = FakeAPI([error(429, "rate_limit_error", "x", {"retry-after-ms": "10"}), message("ok", input_tokens=7)])
    ledger = Ledger(backend(api), run_id="r2")
    await ledger.generate(take())
    row = ledger.calls[0]
    assert (row.backend, row.outcome, row.retries, row.input_tokens) == ("anthropic", "ok", 1, 7)
    assert row.request_hash == take().request_hash("claude-sonnet-5-5")


def test_missing_key_is_refused_with_instructions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(BackendUnavailable, match="export ANTHROPIC_API_KEY="):
        AnthropicBackend()


def test_key_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.delenv("CRUX_LAB_MODEL_STRONG", raising=False)
    b = AnthropicBackend(models={"fast": "claude-haiku-4-5"})
    assert b.model_for(Tier.fast) == "claude-haiku-4-5"
    assert b.model_for(Tier.strong) == pricing.default_model(Tier.strong)
    assert FAKE_KEY not in repr(b)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="max_concurrency"):
        AnthropicBackend(api_key=FAKE_KEY, max_concurrency=0)
    with pytest.raises(ValueError, match="timeout_s"):
        AnthropicBackend(api_key=FAKE_KEY, timeout_s=0)


async def test_truncated_json_repair_asks_for_brevity() -> None:
    api = FakeAPI([message('{"side": "YES", "confid', stop_reason="max_tokens"), message('{"side": "YES", "confidence": 1}')])
    r = await backend(api).generate(take(output_schema=Vote))
    assert r.repaired
    assert "cut off" in api.requests[1].body["messages"][2]["content"]


async def test_a_garbled_200_is_a_call_failure_not_an_sdk_error() -> None:
    api = FakeAPI([httpx2.Response(200, content=b"<html>proxy says hi</html>", headers={"content-type": "text/html"})])
    with pytest.raises(LLMCallFailed) as info:
        await backend(api).generate(take(purpose="summarize"))
    assert "summarize" in str(info.value)


async def test_an_unreasonable_retry_after_fails_fast_instead_of_stalling() -> None:
    api = FakeAPI([error(429, "rate_limit_error", "come back later", {"retry-after": "3600"}), message("ok")])
    with pytest.raises(LLMCallFailed) as info:
        await backend(api, max_retry_wait_s=5).generate(take(purpose="opening"))
    assert len(api.requests) == 1
    assert info.value.status == 429 and "3600" in str(info.value) and "opening" in str(info.value)


# -- native structured outputs (output_config.format) ----------------------------------


async def test_native_structured_output_sends_the_schema_and_no_contract() -> None:
    api = FakeAPI([message('{"side": "YES", "confidence": 0.8}')])
    r = await backend(api).generate(take(output_schema=Vote, cache_system=True))
    assert isinstance(r.parsed, Vote) and not r.repaired
    body = api.requests[0].body
    assert body["messages"] == [{"role": "user", "content": "Your take?"}]
    config = body["output_config"]
    assert config["effort"] == pricing.model_settings("claude-sonnet-5-5").effort
    assert config["format"]["type"] == "json_schema"
    schema = config["format"]["schema"]
    assert schema["additionalProperties"] is False and set(schema["required"]) == {"side", "confidence"}
    # Range limits the API does not take move into the description; pydantic still checks them.
    confidence = schema["properties"]["confidence"]
    assert "minimum" not in confidence and "maximum" not in confidence
    assert "minimum: 0" in confidence["description"]


async def test_native_reply_out_of_range_is_still_repaired() -> None:
    api = FakeAPI([message('{"side": "YES", "confidence": 7}'), message('{"side": "YES", "confidence": 0.7}')])
    r = await backend(api).generate(take(output_schema=Vote))
    assert r.repaired and isinstance(r.parsed, Vote) and r.parsed.confidence == 0.7
    second = api.requests[1].body
    assert "confidence" in second["messages"][2]["content"] and "format" in second["output_config"]


async def test_a_model_without_structured_outputs_gets_the_prompt_contract() -> None:
    api = FakeAPI([message('{"side": "NO", "confidence": 0.1}', model="claude-legacy-3")])
    b = backend(api, models={Tier.strong: "claude-legacy-3", Tier.fast: "claude-legacy-3"})
    r = await b.generate(take(output_schema=Vote))
    assert isinstance(r.parsed, Vote)
    body = api.requests[0].body
    assert "output_config" not in body and "JSON Schema" in body["messages"][0]["content"]


async def test_a_rejected_native_schema_falls_back_to_the_contract_and_is_remembered() -> None:
    api = FakeAPI(
        [
            error(400, "invalid_request_error", "output_config.format.schema: too many properties"),
            message('{"side": "NO", "confidence": 0.1}'),
        ]
    )
    b = backend(api)
    r = await b.generate(take(output_schema=Vote))
    assert isinstance(r.parsed, Vote)
    first, second = (c.body for c in api.requests)
    assert "format" in first["output_config"]
    assert "format" not in second.get("output_config", {}) and "JSON Schema" in second["messages"][0]["content"]
    await b.generate(take(output_schema=Vote))
    assert "format" not in api.requests[2].body.get("output_config", {})


async def test_other_400s_are_not_taken_for_a_schema_problem() -> None:
    api = FakeAPI([error(400, "invalid_request_error", "messages: roles must alternate")])
    with pytest.raises(LLMCallFailed, match="roles must alternate"):
        await backend(api).generate(take(output_schema=Vote))
    assert len(api.requests) == 1
