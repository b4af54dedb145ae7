"""The Anthropic backend: the Messages API through the official SDK's ``AsyncAnthropic``.

What it adds on top of the SDK, and why:

- **Retries.** The SDK already retries 408/409/429/5xx (529 "overloaded" included),
  connection errors and timeouts, with exponential backoff and jitter, and it waits exactly
  what a ``retry-after`` / ``retry-after-ms`` header says (up to ``max_retry_wait_s``; a
  longer demand fails the call at once instead of stalling a debate). We use that loop (``max_retries``)
  rather than a second one of our own, and count its attempts with a small SDK middleware,
  so ``LLMResponse.retries`` is the number of HTTP attempts minus one, also for failed calls.
- **Per-attempt timeout.** ``timeout_s`` is the SDK's HTTP timeout and, in the same
  middleware, a hard deadline on each attempt (a server that trickles bytes cannot hold a
  call forever). A timed-out attempt is retried like any other transient failure.
- **Concurrency.** At most ``max_concurrency`` calls are in flight (an asyncio semaphore).
- **Structured output.** A model the price table marks ``structured_outputs`` (Claude 4.5
  and later) gets the schema natively, in ``output_config.format`` (Anthropic's structured
  outputs: constrained decoding), and no contract in the prompt. Other models, and a model
  that rejects a schema with HTTP 400 (remembered), get the prompt contract: the JSON Schema
  of ``request.output_schema`` in the *user* message (the cached system prompt stays
  identical across purposes). Either way the answer is validated with pydantic, and an
  invalid one gets one repair turn that quotes the error back. Forced tool use is not an
  option: current Sonnet models reject it (HTTP 400), and so is assistant prefill.
- **Model quirks** come from the price table (``crux_lab/data/prices.json``): current models
  reject a non-default ``temperature`` and think adaptively within ``max_tokens``, so the
  backend leaves temperature out for them, asks for low effort, and adds thinking headroom.
- **Prompt caching.** ``request.cache_system`` marks the system block with
  ``cache_control: {"type": "ephemeral"}``; cache writes and reads are priced separately.

The API key comes from ``ANTHROPIC_API_KEY`` (or an explicit argument in tests). It is handed
to the SDK and nowhere else: not stored on this object, not in errors, not in any record.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import email.utils
import os
import re
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

import anthropic

from crux_lab import tiers
from crux_lab.llm.base import (
    BackendUnavailable,
    LLMCallFailed,
    LLMRequest,
    LLMResponse,
)
from crux_lab.llm.pricing import cost_usd, model_entry, model_settings
from crux_lab.llm.structured import (
    Reply,
    answer_with_one_repair,
    user_content,
)
from crux_lab.models.accounting import Usage
from crux_lab.models.domain import Tier
from crux_lab.scrub import register, scrub

API_KEY_ENV = "ANTHROPIC_API_KEY"
# A 400 that names the schema: the model cannot take output_config.format (or this schema).
_SCHEMA_REJECTED = re.compile(r"output_config|output_format|format|schema", re.IGNORECASE)

MISSING_KEY_MESSAGE = (
    f"the anthropic backend needs an API key: set it in the environment, e.g. "
    f"`export {API_KEY_ENV}=sk-ant-...` (never put it in a file under version control), "
    f"or use --backend simulated to run offline."
)

def configured_models() -> dict[Tier, str]:
    """Model id per tier (:func:`crux_lab.llm.tier_models`, the one allocation):
    ``$CRUX_LAB_MODEL_STRONG`` / ``$CRUX_LAB_MODEL_FAST`` when set, else the price table's
    ``default_models``.

    >>> from crux_lab.llm.pricing import default_model
    >>> configured_models()[Tier.strong] == (os.environ.get("CRUX_LAB_MODEL_STRONG") or default_model(Tier.strong))
    True
    """
    return {Tier(t): m for t, m in tiers.models_for("anthropic").items()}


# HTTP attempts of the call running in the current task (the middleware appends to it).
_attempts: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "crux_lab_anthropic_attempts", default=None
)


class AttemptTimedOut(anthropic.RetryableError):
    """One HTTP attempt took longer than the per-call timeout (the SDK retries it)."""


class RetryAfterTooLong(anthropic.AnthropicError):
    """The server asked us to wait longer than ``max_retry_wait_s`` (not retried)."""

    def __init__(self, status: int, wait_s: float, limit_s: float) -> None:
        super().__init__(
            f"the API asked to retry after {wait_s:g}s, more than max_retry_wait_s={limit_s:g}s"
        )
        self.status = status


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds a ``retry-after-ms`` / ``retry-after`` header asks for (as the SDK reads them).

    >>> retry_after_seconds({"retry-after-ms": "250"})
    0.25
    >>> retry_after_seconds({"retry-after": "3"})
    3.0
    >>> retry_after_seconds({}) is None
    True
    """
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / scale
        except ValueError:
            if name == "retry-after":
                parsed = email.utils.parsedate_tz(value)
                if parsed is not None:
                    return float(email.utils.mktime_tz(parsed) - time.time())
    return None


class _AttemptGuard(anthropic.Middleware):
    """Counts the HTTP attempts of each call, puts a hard deadline on each attempt, and
    refuses a ``retry-after`` longer than ``max_wait_s`` (the SDK would sleep it in full)."""

    def __init__(self, timeout_s: float, max_wait_s: float) -> None:
        self.timeout_s = timeout_s
        self.max_wait_s = max_wait_s

    async def handle_async(
        self,
        request: anthropic.APIRequest,
        call_next: Callable[[anthropic.APIRequest], Awaitable[Any]],
    ) -> Any:
        seen = _attempts.get()
        if seen is not None:
            seen.append(request.retries_taken)
        try:
            response = await asyncio.wait_for(call_next(request), self.timeout_s)
        except TimeoutError:
            raise AttemptTimedOut(f"no response within {self.timeout_s:g}s") from None
        http = getattr(response, "http_response", None)
        if http is not None and not http.is_success:
            wait = retry_after_seconds(http.headers)
            if wait is not None and wait > self.max_wait_s:
                await http.aclose()
                raise RetryAfterTooLong(http.status_code, wait, self.max_wait_s)
        return response


def _usage_of(message: Any) -> Usage:
    u = message.usage
    return Usage(
        calls=1,
        input_tokens=int(u.input_tokens or 0),
        output_tokens=int(u.output_tokens or 0),
        cache_write_tokens=int(getattr(u, "cache_creation_input_tokens", 0) or 0),
        cache_read_tokens=int(getattr(u, "cache_read_input_tokens", 0) or 0),
    )


def _text_of(message: Any) -> str:
    # Adaptive-thinking models also return thinking blocks; only text blocks are the answer.
    return "".join(block.text for block in message.content if getattr(block, "type", "") == "text")


class AnthropicBackend:
    """Claude through the Messages API (see the module docstring for retries and caching)."""

    name = "anthropic"

    def __init__(
        self,
        *,
        models: Mapping[Tier, str] | Mapping[str, str] | None = None,
        max_concurrency: int = 8,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        api_key: str | None = None,
        http_client: Any | None = None,
        base_url: str | None = None,
        max_retry_wait_s: float = 120.0,
        structured: Literal["auto", "prompt"] = "auto",
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "")
        if not key.strip():
            raise BackendUnavailable(MISSING_KEY_MESSAGE)
        self.models: dict[Tier, str] = configured_models()
        for tier, model in (models or {}).items():
            self.models[Tier(tier)] = model
        self.max_concurrency = max_concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.structured = structured
        # Models that rejected an output_config.format schema: the prompt contract from then on.
        self._no_schema: set[str] = set()
        register(key)  # a key passed in code is scrubbed from every artifact like an env key
        # The SDK client holds the key; this object keeps no copy of it.
        self._client = anthropic.AsyncAnthropic(
            api_key=key.strip(),
            base_url=base_url,
            http_client=http_client,
            timeout=timeout_s,
            max_retries=max_retries,
            middleware=[_AttemptGuard(timeout_s, max_retry_wait_s)],
        )
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        models = ", ".join(f"{t.value}={m}" for t, m in self.models.items())
        return (
            f"AnthropicBackend({models}, max_concurrency={self.max_concurrency}, "
            f"timeout_s={self.timeout_s:g}, max_retries={self.max_retries})"
        )

    def model_for(self, tier: Tier) -> str:
        return self.models[tier]

    def unpriced_models(self) -> list[str]:
        """Configured models the price table does not know (their cost would read as 0)."""
        return sorted({m for m in self.models.values() if model_entry(m) is None})

    async def aclose(self) -> None:
        """Close the HTTP connections (optional; the SDK also closes them on exit)."""
        await self._client.close()

    def _semaphore(self) -> asyncio.Semaphore:
        # One semaphore per event loop: a notebook may run several asyncio.run() in turn.
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            sem = asyncio.Semaphore(self.max_concurrency)
            self._semaphores[loop] = sem
        return sem

    async def generate(self, request: LLMRequest) -> LLMResponse:
        model = self.model_for(request.tier)
        async with self._semaphore():
            started = time.perf_counter()
            native = self.native_schema(request, model) is not None
            # With a native schema the API constrains the answer; else the prompt states it.
            content = request.user if native else user_content(request)
            messages: list[dict[str, Any]] = [{"role": "user", "content": content}]
            first = await self._send_structured(request, model, messages)
            return await answer_with_one_repair(
                self.name, request, messages, first, lambda more: self._send(request, model, more), started
            )

    def native_schema(self, request: LLMRequest, model: str) -> dict[str, Any] | None:
        """The ``output_config.format`` schema for a request, or None when the prompt contract
        carries it (no schema, a model without structured outputs, or one that refused it).

        ``anthropic.transform_schema`` closes every object and moves the constraints the API
        does not take (``minimum``, ``maxLength``, ...) into descriptions; the pydantic schema
        still enforces them on the reply.
        """
        schema = request.schema_json()
        if (
            schema is None
            or self.structured != "auto"
            or model in self._no_schema
            or not model_settings(model).structured_outputs
        ):
            return None
        return anthropic.transform_schema(copy.deepcopy(schema))

    async def _send_structured(
        self, request: LLMRequest, model: str, messages: list[dict[str, Any]]
    ) -> Reply:
        """One exchange; a model that rejects the native schema gets the prompt contract instead."""
        if self.native_schema(request, model) is None:
            return await self._send(request, model, messages)
        try:
            return await self._send(request, model, messages)
        except LLMCallFailed as exc:
            if exc.status != 400 or not _SCHEMA_REJECTED.search(exc.detail):
                raise
        self._no_schema.add(model)
        messages[0] = {"role": "user", "content": user_content(request)}
        return await self._send(request, model, messages)

    def request_params(
        self, request: LLMRequest, model: str, messages: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """Keyword arguments of ``messages.create`` for one exchange (no credentials in here)."""
        settings = model_settings(model)
        params: dict[str, Any] = {
            "model": model,
            "max_tokens": request.max_tokens + settings.thinking_headroom,
            "messages": messages,
        }
        if request.system.strip():
            block: dict[str, Any] = {"type": "text", "text": request.system}
            if request.cache_system:
                block["cache_control"] = {"type": "ephemeral"}
            params["system"] = [block]
        if settings.sampling_params:
            # SDK 2.x dropped ``temperature`` from create() (current models reject it), so
            # older models that still take it get it through the raw request body.
            params["extra_body"] = {"temperature": request.temperature}
        output_config: dict[str, Any] = {}
        if settings.effort:
            output_config["effort"] = settings.effort
        schema = self.native_schema(request, model)
        if schema is not None:
            output_config["format"] = {"type": "json_schema", "schema": schema}
        if output_config:
            params["output_config"] = output_config
        return params

    async def _send(
        self, request: LLMRequest, model: str, messages: list[dict[str, Any]]
    ) -> Reply:
        attempts: list[int] = []
        token = _attempts.set(attempts)
        try:
            message = await self._client.messages.create(
                **self.request_params(request, model, messages)
            )
        except asyncio.CancelledError as exc:
            # Cancelled mid-call (a sibling failed, Ctrl-C): the ledger records the attempts made.
            exc.retries = max(len(attempts) - 1, 0)  # type: ignore[attr-defined]
            raise
        except anthropic.APIStatusError as exc:
            raise LLMCallFailed(
                request.purpose,
                _status_detail(exc),
                status=exc.status_code,
                retries=max(len(attempts) - 1, 0),
            ) from None
        except RetryAfterTooLong as exc:
            raise LLMCallFailed(
                request.purpose, str(exc), status=exc.status, retries=max(len(attempts) - 1, 0)
            ) from None
        except AttemptTimedOut as exc:
            raise LLMCallFailed(
                request.purpose, f"timed out ({exc})", retries=max(len(attempts) - 1, 0)
            ) from None
        except anthropic.APITimeoutError:
            raise LLMCallFailed(
                request.purpose,
                f"timed out after {self.timeout_s:g}s per attempt",
                retries=max(len(attempts) - 1, 0),
            ) from None
        except anthropic.APIConnectionError as exc:
            raise LLMCallFailed(
                request.purpose, f"connection error: {exc.message}", retries=max(len(attempts) - 1, 0)
            ) from None
        except anthropic.AnthropicError as exc:
            # e.g. a response that does not parse as a Message; never let an SDK type escape.
            raise LLMCallFailed(
                request.purpose, f"{type(exc).__name__}: {str(exc)[:300]}", retries=max(len(attempts) - 1, 0)
            ) from None
        finally:
            _attempts.reset(token)
        if not isinstance(message, anthropic.types.Message):
            # A non-JSON 200 (a proxy or captive portal) comes back from the SDK as a str.
            raise LLMCallFailed(
                request.purpose,
                f"the API answered with something that is not a message: {str(message)[:120]!r}; "
                f"check ANTHROPIC_BASE_URL and any proxy",
                retries=max(len(attempts) - 1, 0),
            )
        if message.stop_reason == "refusal":
            raise LLMCallFailed(
                request.purpose,
                "the model declined to answer (stop_reason=refusal)",
                retries=max(len(attempts) - 1, 0),
                usage=_usage_of(message),
            )
        answered_by = message.model or model
        priced_as = answered_by if model_entry(answered_by) is not None else model
        usage = _usage_of(message)
        return Reply(
            text=_text_of(message),
            usage=usage,
            cost_usd=cost_usd(priced_as, usage),
            retries=max(len(attempts) - 1, 0),
            stop=message.stop_reason,
            cut_off=message.stop_reason == "max_tokens",
            model=answered_by,
        )


def _status_detail(exc: anthropic.APIStatusError) -> str:
    """A short reason from an API error body, scrubbed: a server may echo the key back."""
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else None
    if error:
        return scrub(f"{error.get('type', 'error')}: {error.get('message', '')}".strip())
    return scrub(exc.message[:300])
