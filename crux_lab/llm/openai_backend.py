"""An OpenAI-compatible backend: Chat Completions through the official ``openai`` SDK.

One class serves OpenAI itself, OpenRouter, Together, vLLM, Ollama, LM Studio and the
llama.cpp server (``crux-lab local-model start``): a base URL and a model per tier.

- **Key.** ``OPENAI_API_KEY`` from the environment, handed to the SDK only. A server on this
  machine (127.0.0.1, localhost) needs none; a remote one without a key is refused up front.
- **Structured output.** A server may accept a ``response_format`` and silently ignore it
  (HTTP 200, unconstrained text): llama.cpp, vLLM and Ollama builds have done so. So before
  its first call the backend sends one canary request whose schema admits a single sentinel
  value (:meth:`OpenAIBackend.check_structured`), and records whether the server enforced it.
  ``structured="auto"`` then sends each schema as ``response_format: {"type": "json_schema",
  ...}`` (``strict`` when the schema has a strict form,
  :func:`crux_lab.llm.structured.strict_schema`) only where the canary showed that it holds,
  and the prompt contract alone otherwise; ``"json_schema"`` always sends it, ``"prompt"``
  never does (and sends no canary). A server that rejects a schema (HTTP 400 naming it) is
  asked again without it, and that model is not sent one again. The user message always states the contract
  too (a grammar-constrained local model is never shown the schema otherwise). Every reply is
  validated with the pydantic schema; an invalid one (not JSON, off-schema, or cut off at
  ``max_tokens``) gets one repair turn, then :class:`LLMOutputError`.
- **Retries** are the SDK's own (408/409/429/5xx, connection errors, ``retry-after``);
  ``LLMResponse.retries`` counts them from the SDK's ``x-stainless-retry-count`` header.
- **Usage.** ``prompt_tokens_details.cached_tokens`` (or llama.cpp's ``timings.cache_n``)
  becomes ``cache_read_tokens``; ``input_tokens`` is the uncached rest, as the Anthropic
  backend records it. A server that reports neither leaves ``cache_read_tokens`` unknown
  (None), never 0.
- **Prefix cache on llama.cpp.** When ``/props`` shows a llama.cpp server with three or more
  slots, a request that marks its system block for caching (a persona's turn) carries
  ``"cache_prompt": true`` and an ``"id_slot"`` of its own for that system block (first come,
  first served while the server's ``total_slots`` last), so a persona's calls reuse the slot
  whose KV cache already holds its prefix. The last slot is kept for the other requests, so
  an extractor's long prompt never evicts a persona's prefix (``crux-lab local-model start``
  opens five: four personas and the rest). One request at a time goes to a slot: llama.cpp
  answered the request working on a slot about the prompt of another one that arrived for it
  (``benchmarks/cross_replies.py``). Within a process a lock per slot sees to it; across the
  processes of this machine that share a local server (a sweep's workers, two notebooks), a
  lease per slot in the cache folder (:mod:`crux_lab.llm.slot_lease`). Other servers get
  neither field, and no lease.
- **Cost.** A server on this machine costs $0. Otherwise the price table prices the model
  (``crux_lab/data/prices.json``, overridable with ``$CRUX_LAB_PRICES``); unknown models cost 0.
- **Context.** When the context size is known (``context_tokens``, or a llama.cpp server's
  ``/props``), a prompt estimated longer than it fails before the call, naming both sizes.
"""

from __future__ import annotations

import asyncio
import contextvars
import ipaddress
import json
import os
import re
import time
import weakref
from collections.abc import Mapping
from itertools import pairwise
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx2
import openai

from crux_lab.llm.base import (
    BackendUnavailable,
    LLMCallFailed,
    LLMRequest,
    LLMResponse,
    allocation_for,
)
from crux_lab.llm.pricing import cost_usd, model_settings
from crux_lab.llm.slot_lease import SlotLeases
from crux_lab.llm.structured import (
    Reply,
    answer_with_one_repair,
    strict_schema,
    user_content,
)
from crux_lab.models.accounting import Usage
from crux_lab.models.domain import Tier
from crux_lab.models.result import StructuredCheck
from crux_lab.scrub import register as _register_secret
from crux_lab.scrub import scrub as _scrub
from crux_lab.tiers import STRUCTURED_MODES
from crux_lab.tokens import count_tokens

API_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Sent as the bearer token to a server on this machine when no key is set (llama.cpp,
# Ollama and LM Studio ignore it unless started with a key of their own).
NO_KEY = "no-key"
# How much of a reply cut off at max_tokens the repair turn quotes back.
ECHO_CHARS = 400
START_LOCAL_HINT = "start the local one with `crux-lab local-model start` (or `make local-model`)"

Structured = Literal["auto", "json_schema", "prompt"]
# The canary: a schema that admits one value only, and a question whose natural answer is
# something else, so only a server that enforces the schema answers with the sentinel.
CANARY_VALUE = "crux-lab-canary-42"
CANARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"canary": {"type": "string", "enum": [CANARY_VALUE]}},
    "required": ["canary"],
    "additionalProperties": False,
}
CANARY_MESSAGES = [{"role": "user", "content": "Name one colour. Answer with the colour only."}]

# HTTP attempts of the call running in the current task (the request hook appends to it).
_attempts: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "crux_lab_openai_attempts", default=None
)


def resolve_base_url(base_url: str | None) -> str:
    """``base_url``, else ``$OPENAI_BASE_URL``, else OpenAI's; without a trailing slash.

    >>> resolve_base_url("http://127.0.0.1:8080/v1/")
    'http://127.0.0.1:8080/v1'
    """
    url = (base_url or os.environ.get(BASE_URL_ENV, "") or DEFAULT_BASE_URL).strip()
    return url.rstrip("/")


# Per-attempt timeouts. A hosted model writes a long reply in a minute; a local server on a
# CPU writes a few tokens a second, so a 3,000-token reply can take ten minutes there.
REMOTE_TIMEOUT_S = 300.0
DEFAULT_CONCURRENCY = 4  # requests one backend sends at once
LOCAL_TIMEOUT_S = 1800.0


def own_words_sampling(context_tokens: int | None) -> dict[str, Any]:
    """llama.cpp's DRY sampler settings for a persona's turn (``own_words`` in
    :class:`~crux_lab.llm.base.Allocation`): a run of three or more tokens that repeats one in
    the prompt or the reply is penalised, more the longer it gets, so a small model says its
    point instead of copying the claim it answers or its own earlier turn. Quotes, colons and
    new lines break a run, so the reply's JSON keys and short names stay free. The look-back is
    the whole context (this server refuses -1 there).

    >>> own_words_sampling(8192)["dry_penalty_last_n"]
    8192
    >>> own_words_sampling(None)["dry_allowed_length"]
    3
    """
    return {
        "dry_multiplier": 0.8,
        "dry_base": 1.75,
        "dry_allowed_length": 3,
        "dry_penalty_last_n": context_tokens or 4096,
    }


_WORD = re.compile(r"(?<![A-Za-z\\])[A-Za-z]+(?![A-Za-z])")
_WORD_NUMBER = re.compile(r"(?<![A-Za-z\\])([A-Za-z]+)(\s+)(\d+)(?![\d])")


def mend_own_words(reply: str, prompt: str) -> str:
    """``reply`` with the two ways DRY (:func:`own_words_sampling`) breaks a phrase the prompt
    holds put right. Penalised for continuing a run of the prompt, a small model takes the same
    word without its space ("higherpotential", "ofBitcoin"), or stops a number short ("March
    202" for "March 2020"). A word that is not in the prompt, and splits into two words that
    stand side by side there, gets its space back; a number that begins a longer one following
    the same word there is made whole. Anything else is left as it is. On the nine Qwen 1.5B
    cassettes (the demo topic, not a scenario set), it mended 7 of 35 persona turns (12 glued
    words, 1 cut number) and would change none of the 37 replies sent without DRY.

    >>> prompt = "Bitcoin has a higher potential; it fell in March 2020 while gold held up."
    >>> mend_own_words("It has higherpotential. It fell in March 202, unlike gold.", prompt)
    'It has higher potential. It fell in March 2020, unlike gold.'
    >>> mend_own_words("Bitcoin held its value.", prompt)  # "held up" is a phrase, "held" a word
    'Bitcoin held its value.'
    """
    words = _WORD.findall(prompt)
    known = {w.lower() for w in words}
    pairs = {(a.lower(), b.lower()) for a, b in pairwise(words)}
    numbers: dict[str, set[str]] = {}
    for word, _, number in _WORD_NUMBER.findall(prompt):
        numbers.setdefault(word.lower(), set()).add(number)

    def space(match: re.Match[str]) -> str:
        word = match.group(0)
        if len(word) < 5 or word.lower() in known:
            return word
        for cut in range(2, len(word) - 1):
            if (word[:cut].lower(), word[cut:].lower()) in pairs:
                return f"{word[:cut]} {word[cut:]}"
        return word

    def whole(match: re.Match[str]) -> str:
        word, gap, number = match.groups()
        there = numbers.get(word.lower(), set())
        longer = sorted(n for n in there if n.startswith(number) and n != number)
        if number in there or len(longer) != 1:
            return match.group(0)
        return f"{word}{gap}{longer[0]}"

    return _WORD_NUMBER.sub(whole, _WORD.sub(space, reply))


def is_local(base_url: str) -> bool:
    """True for a server on this machine (no key needed, no cost).

    >>> is_local("http://127.0.0.1:8080/v1"), is_local("http://localhost:11434/v1")
    (True, True)
    >>> is_local("https://api.openai.com/v1")
    False
    """
    host = urlsplit(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_base_url(base_url: str) -> str | None:
    """Why ``base_url`` cannot be a server address, or None when it looks like one.

    >>> check_base_url("127.0.0.1:8080")
    "--base-url '127.0.0.1:8080' is not an http(s) URL: write it like http://127.0.0.1:8080/v1"
    >>> check_base_url("http://127.0.0.1:8080/v1") is None
    True
    """
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return (
            f"--base-url {base_url!r} is not an http(s) URL: write it like http://127.0.0.1:8080/v1"
        )
    return None


def check_settings(base_url: str, api_key: str | None = None) -> None:
    """Raise :class:`BackendUnavailable` (one line) when ``base_url`` is not a server address,
    or names a remote server while no key is set."""
    problem = check_base_url(base_url)
    if problem:
        raise BackendUnavailable(problem)
    key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "")
    if not key.strip() and not is_local(base_url):
        raise BackendUnavailable(missing_key_message(base_url))


def server_root(base_url: str) -> str:
    """The server's root (llama.cpp serves ``/health`` and ``/props`` there, not under /v1).

    >>> server_root("http://127.0.0.1:8080/v1")
    'http://127.0.0.1:8080'
    """
    return re.sub(r"/v1$", "", base_url.rstrip("/"))


def missing_key_message(base_url: str) -> str:
    return (
        f"the openai backend needs an API key for {base_url}: set it in the environment, "
        f"e.g. `export {API_KEY_ENV}=...` (never in a file under version control); a local "
        f"server needs none ({START_LOCAL_HINT})."
    )


def unreachable_message(base_url: str, detail: str) -> str:
    where = f"the local server at {base_url}" if is_local(base_url) else f"the server at {base_url}"
    fix = START_LOCAL_HINT if is_local(base_url) else "check --base-url and your network"
    return f"cannot reach {where} ({detail}); {fix}, or pass the right --base-url."


def _cached_of(completion: Any, usage: Any) -> int | None:
    """Prompt tokens the server's cache served: ``prompt_tokens_details.cached_tokens``, else
    llama.cpp's ``timings.cache_n``; None when the server reports neither (unknown, not 0)."""
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if cached is None:
        timings = (getattr(completion, "model_extra", None) or {}).get("timings")
        cached = timings.get("cache_n") if isinstance(timings, dict) else None
    return int(cached) if isinstance(cached, (int, float)) else None


def _usage_of(completion: Any) -> Usage:
    u = getattr(completion, "usage", None)
    if u is None:
        return Usage(calls=1, cache_read_tokens=None)
    prompt = int(u.prompt_tokens or 0)
    cached = _cached_of(completion, u)
    if cached is not None:
        cached = min(cached, prompt)
    return Usage(
        calls=1,
        input_tokens=prompt - (cached or 0),
        output_tokens=int(u.completion_tokens or 0),
        cache_read_tokens=cached,
    )


def _error_message(exc: openai.APIStatusError) -> str:
    """The server's own message from an error body (OpenAI and llama.cpp shapes)."""
    body: Any = exc.body
    text = str(exc.message)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            text = str(error["message"])
        elif isinstance(error, str):
            text = error
    # A server may echo the key back in its error body.
    return _scrub(text)[:500]


_SCHEMA_REJECTED = re.compile(r"response_format|json_schema|schema|grammar", re.IGNORECASE)
_CONTEXT_EXCEEDED = re.compile(r"context|too long|maximum.*tokens", re.IGNORECASE)


class OpenAIBackend:
    """An OpenAI-compatible Chat Completions server (see the module docstring)."""

    name = "openai"

    def __init__(
        self,
        *,
        models: Mapping[Tier, str] | Mapping[str, str],
        base_url: str | None = None,
        api_key: str | None = None,
        http_client: httpx2.AsyncClient | None = None,
        max_concurrency: int = DEFAULT_CONCURRENCY,
        timeout_s: float | None = None,
        max_retries: int = 3,
        structured: Structured = "auto",
        context_tokens: int | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        if timeout_s is not None and timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.base_url = resolve_base_url(base_url)
        check_settings(self.base_url, api_key)
        self.models: dict[Tier, str] = {Tier(t): m.strip() for t, m in models.items() if m.strip()}
        missing = [t.value for t in Tier if t not in self.models]
        if missing:
            raise BackendUnavailable(
                f"the openai backend needs a model for the {' and '.join(missing)} tier: "
                f"pass --model-strong M --model-fast M"
            )
        self.local = is_local(self.base_url)
        if timeout_s is None:
            timeout_s = LOCAL_TIMEOUT_S if self.local else REMOTE_TIMEOUT_S
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "")
        if not key.strip():
            key = NO_KEY  # a local server (check_settings refused a remote one)
        elif api_key is not None:
            _register_secret(key.strip())  # a key given in code is scrubbed from every artifact
        self.max_concurrency = max_concurrency
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        if structured not in STRUCTURED_MODES:
            raise BackendUnavailable(
                f"--structured {structured!r} is not a mode: use one of {', '.join(STRUCTURED_MODES)}"
            )
        self.structured: Structured = structured
        self.structured_check: StructuredCheck | None = None
        self.context_tokens = context_tokens
        self._context_probed = context_tokens is not None
        # llama.cpp's slots (``/props`` total_slots), None until seen or on other servers; the
        # slot each cached system block was given (its KV cache keeps that prefix).
        self.slots: int | None = None
        # Whether ``/props`` showed a llama.cpp server: its samplers take DRY's settings.
        self.llama_cpp = False
        self._slot_of: dict[str, int] = {}
        self._slot_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, asyncio.Lock]] = weakref.WeakKeyDictionary()
        # A local server's slots are shared with every other crux_lab process of this machine.
        self.leases: SlotLeases | None = SlotLeases(self.base_url) if self.local else None
        # Models that rejected a response_format schema: they get the prompt contract only.
        self._no_schema: set[str] = set()
        client = http_client or openai.DefaultAsyncHttpxClient()
        client.event_hooks["request"] = [*client.event_hooks.get("request", []), _count_attempt]
        # The SDK client holds the key; this object keeps no copy of it.
        self._client = openai.AsyncOpenAI(
            api_key=key.strip(),
            base_url=self.base_url,
            http_client=client,
            timeout=timeout_s,
            max_retries=max_retries,
        )
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self._probe_lock: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        models = ", ".join(f"{t.value}={m}" for t, m in self.models.items())
        return f"OpenAIBackend({self.base_url}, {models}, structured={self.structured})"

    def model_for(self, tier: Tier) -> str:
        return self.models[tier]

    async def aclose(self) -> None:
        await self._client.close()

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._semaphores.get(loop)
        if sem is None:
            sem = asyncio.Semaphore(self.max_concurrency)
            self._semaphores[loop] = sem
        return sem

    # -- structured output ---------------------------------------------------------------

    async def check_structured(self) -> StructuredCheck:
        """Send the canary once (not in ``prompt`` mode) and say how replies are held to
        their schema from now on. Connection errors are raised as :class:`LLMCallFailed`."""
        if self.structured_check is not None:
            return self.structured_check
        loop = asyncio.get_running_loop()
        lock = self._probe_lock.setdefault(loop, asyncio.Lock())
        async with lock:
            if self.structured_check is None:
                canary = "not checked" if self.structured == "prompt" else await self._canary()
                mode = "prompt" if self.structured == "prompt" else "json_schema"
                if self.structured == "auto" and canary != "enforced":
                    mode = "prompt"
                self.structured_check = StructuredCheck(
                    mode=mode, canary=canary, server=self.base_url, requested=self.structured
                )
            return self.structured_check

    async def _canary(self) -> Literal["enforced", "ignored", "rejected"]:
        model = self.model_for(Tier.strong)
        params: dict[str, Any] = {
            "model": model,
            "messages": CANARY_MESSAGES,
            "max_completion_tokens": 64,  # room for the JSON with the whitespace a grammar allows
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "canary", "schema": CANARY_SCHEMA, "strict": True},
            },
        }
        if model_settings(model).sampling_params:
            params["temperature"] = 0.0
        try:
            completion = await self._client.chat.completions.create(**params)
        except openai.BadRequestError:
            return "rejected"
        except openai.APIConnectionError as exc:
            raise LLMCallFailed(
                "structured_canary", unreachable_message(self.base_url, _connection_detail(exc))
            ) from None
        except openai.OpenAIError as exc:
            raise self._failure(LLMRequest(purpose="structured_canary", system="", user=""), exc) from None
        choices = getattr(completion, "choices", None) or []
        text = (choices[0].message.content or "") if choices else ""
        try:
            answer = json.loads(text)
        except ValueError:
            return "ignored"
        return "enforced" if isinstance(answer, dict) and answer.get("canary") == CANARY_VALUE else "ignored"

    # -- context size ------------------------------------------------------------------

    async def _context_size(self, purpose: str) -> int | None:
        """``context_tokens``, else a llama.cpp server's per-slot ``n_ctx`` (asked once)."""
        if self._context_probed:
            return self.context_tokens
        loop = asyncio.get_running_loop()
        lock = self._probe_lock.setdefault(loop, asyncio.Lock())
        async with lock:
            if self._context_probed:
                return self.context_tokens
            try:
                props = await self._client.get(
                    server_root(self.base_url) + "/props",
                    cast_to=object,
                    options={"max_retries": 0, "timeout": min(self.timeout_s, 10.0)},
                )
            except openai.APIConnectionError as exc:
                raise LLMCallFailed(
                    purpose, unreachable_message(self.base_url, _connection_detail(exc))
                ) from None
            except openai.OpenAIError:
                props = None  # not a llama.cpp server: the context size stays unknown
            settings = props.get("default_generation_settings") if isinstance(props, dict) else None
            n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
            self.context_tokens = int(n_ctx) if isinstance(n_ctx, int) and n_ctx > 0 else None
            slots = props.get("total_slots") if isinstance(props, dict) and isinstance(settings, dict) else None
            self.slots = int(slots) if isinstance(slots, int) and slots > 0 else None
            self.llama_cpp = isinstance(settings, dict)
            self._context_probed = True
            return self.context_tokens

    async def _check_context(self, request: LLMRequest, messages: list[dict[str, str]]) -> None:
        n_ctx = await self._context_size(request.purpose)
        if n_ctx is None:
            return

        # An estimate (crux_lab.tokens): a prompt just under the limit may still be refused
        # by the server, whose own message is then passed on.
        prompt = sum(count_tokens(m["content"]) + 4 for m in messages)
        if prompt >= n_ctx:
            raise LLMCallFailed(
                request.purpose,
                f"the prompt is about {prompt} tokens but the model's context is {n_ctx} tokens "
                f"({self.base_url}); use a model with a longer context or restart the local "
                f"server with a larger --ctx-size",
            )

    # -- one call ----------------------------------------------------------------------

    async def generate(self, request: LLMRequest) -> LLMResponse:
        model = self.model_for(request.tier)
        await self.check_structured()
        async with self._semaphore():
            started = time.perf_counter()
            messages: list[dict[str, str]] = []
            if request.system.strip():
                messages.append({"role": "system", "content": request.system})
            messages.append({"role": "user", "content": user_content(request)})
            await self._check_context(request, messages)
            first = await self._send(request, model, messages)
            return await answer_with_one_repair(
                self.name, request, messages, first, lambda more: self._send(request, model, more), started,
                echo_chars=ECHO_CHARS,
            )

    def cost_of(self, model: str, usage: Usage) -> float:
        """$0 on a server on this machine; else the price table's price (0 if unknown)."""
        return 0.0 if self.local else cost_usd(model, usage)

    def response_format(self, request: LLMRequest, model: str) -> dict[str, Any] | None:
        """The ``response_format`` of a request, or None when the prompt contract alone is used."""
        schema = request.schema_json()
        if schema is None or self.structured == "prompt" or model in self._no_schema:
            return None
        if self.structured == "auto" and (self.structured_check is None or self.structured_check.mode != "json_schema"):
            return None
        strict = strict_schema(schema)
        name = re.sub(r"[^a-zA-Z0-9_-]", "_", request.output_schema.__name__ if request.output_schema else "reply")
        return {
            "type": "json_schema",
            "json_schema": {"name": name[:64], "schema": strict or schema, "strict": strict is not None},
        }

    def request_params(
        self, request: LLMRequest, model: str, messages: list[dict[str, str]]
    ) -> dict[str, Any]:
        """Keyword arguments of ``chat.completions.create`` (no credentials in here)."""
        params: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "max_completion_tokens": request.max_tokens,
        }
        if model_settings(model).sampling_params:
            params["temperature"] = request.temperature
        fmt = self.response_format(request, model)
        if fmt is not None:
            params["response_format"] = fmt
        slot = self.slot_for(request)
        if slot is not None:
            params["extra_body"] = {"id_slot": slot, "cache_prompt": True}
        if self.llama_cpp and allocation_for(request.purpose).own_words:
            params.setdefault("extra_body", {}).update(own_words_sampling(self.context_tokens))
        return params

    def slot_for(self, request: LLMRequest) -> int | None:
        """The llama.cpp slot a request goes to. Each cached system block (a persona's) gets a
        slot of its own, in order of first use, and the last slot is kept for everything else
        (extractors, and personas beyond the slots), so those never evict a persona's prefix.
        Two personas never share a pinned slot: they would evict each other's prefix and queue
        their parallel turns. A server with fewer than three slots, or that is not llama.cpp,
        gets None for every request (the server picks an idle slot, preferring one whose cache
        shares the prompt's prefix): a request pinned to a slot that an unpinned one holds
        would wait for it, and a waiting request can be answered about the other's prompt
        (:meth:`_send`).

        >>> b = OpenAIBackend(models={"strong": "m", "fast": "m"}, base_url="http://127.0.0.1:8080/v1")
        >>> ask = lambda s, cache=True: b.slot_for(LLMRequest(purpose="take", system=s, user="u", cache_system=cache))
        >>> b.slots = 2
        >>> [ask("Ada"), ask("Bo"), ask("Reader", cache=False)]
        [None, None, None]
        >>> b.slots = 3
        >>> [ask("Ada"), ask("Reader", cache=False), ask("Bo"), ask("Cy"), ask("Ada")]
        [0, 2, 1, 2, 0]
        """
        if not self.slots or self.slots < 3:
            return None
        rest = self.slots - 1
        if not request.cache_system or not request.system.strip():
            return rest
        slot = self._slot_of.get(request.system)
        if slot is None and len(self._slot_of) < rest:
            slot = self._slot_of[request.system] = len(self._slot_of)
        return slot if slot is not None else rest

    def _slot_lock(self, slot: int) -> asyncio.Lock:
        """The lock that keeps one request at a time on ``slot`` (per event loop: a lock
        belongs to the loop it first waited in)."""
        locks = self._slot_locks.setdefault(asyncio.get_running_loop(), {})
        return locks.setdefault(slot, asyncio.Lock())

    async def _send(self, request: LLMRequest, model: str, messages: list[dict[str, str]]) -> Reply:
        """One request's exchange. A request pinned to a llama.cpp slot waits here while another
        request is on that slot: sent together, the server made the second wait for the slot
        and then answered it about the first one's prompt (two debates' extractor calls on the
        spare slot; one scenario's card reply named another scenario's personas). The lock
        covers this backend's own requests; on a local server the slot's lease
        (:class:`~crux_lab.llm.slot_lease.SlotLeases`) covers every other crux_lab process."""
        params = self.request_params(request, model, messages)
        slot = params.get("extra_body", {}).get("id_slot")
        if slot is None:
            return await self._send_params(request, model, params)
        async with self._slot_lock(slot):
            if self.leases is None:
                return await self._send_params(request, model, params)
            async with self.leases.hold(slot):
                return await self._send_params(request, model, params)

    async def _send_params(self, request: LLMRequest, model: str, params: dict[str, Any]) -> Reply:
        try:
            return await self._exchange(request, model, params)
        except openai.BadRequestError as exc:
            message = _error_message(exc)
            if (
                "response_format" in params
                and self.structured == "auto"
                and _SCHEMA_REJECTED.search(message)
                and not _CONTEXT_EXCEEDED.search(message)
            ):
                # The server cannot take this schema: the prompt contract carries it from now on.
                self._no_schema.add(model)
                params.pop("response_format")
                try:
                    return await self._exchange(request, model, params)
                except openai.OpenAIError as again:
                    raise self._failure(request, again) from None
            raise self._failure(request, exc) from None
        except openai.OpenAIError as exc:
            raise self._failure(request, exc) from None

    async def _exchange(self, request: LLMRequest, model: str, params: dict[str, Any]) -> Reply:
        attempts: list[int] = []
        token = _attempts.set(attempts)
        try:
            completion = await self._client.chat.completions.create(**params)
        except asyncio.CancelledError as exc:
            # Cancelled mid-call (a sibling failed, Ctrl-C): the ledger records the attempts made.
            exc.retries = max(len(attempts) - 1, 0)  # type: ignore[attr-defined]
            raise
        except openai.OpenAIError as exc:
            exc.crux_lab_retries = max(len(attempts) - 1, 0)  # type: ignore[attr-defined]
            raise
        finally:
            _attempts.reset(token)
        retries = max(len(attempts) - 1, 0)
        choices = getattr(completion, "choices", None)
        if not choices:
            raise LLMCallFailed(
                request.purpose,
                f"the server at {self.base_url} answered without a choice: {str(completion)[:120]!r}; "
                f"is --base-url an OpenAI-compatible endpoint (it usually ends in /v1)?",
                retries=retries,
            )
        choice = choices[0]
        refusal = getattr(choice.message, "refusal", None)
        if refusal:
            raise LLMCallFailed(
                request.purpose,
                f"the model declined to answer: {str(refusal)[:200]}",
                retries=retries,
                usage=_usage_of(completion),
            )
        answered_by = getattr(completion, "model", None) or model
        usage = _usage_of(completion)
        text = choice.message.content or ""
        if "dry_multiplier" in params.get("extra_body", {}):
            prompt = "\n".join(str(m.get("content", "")) for m in params["messages"])
            text = mend_own_words(text, prompt)
        return Reply(
            text=text,
            usage=usage,
            retries=retries,
            stop=choice.finish_reason,
            cut_off=choice.finish_reason == "length",
            model=answered_by,
            cost_usd=self.cost_of(answered_by, usage),
        )

    def _failure(self, request: LLMRequest, exc: openai.OpenAIError) -> LLMCallFailed:
        """One clear LLMCallFailed for an SDK error (the SDK error, which holds the request, is dropped)."""
        retries = int(getattr(exc, "crux_lab_retries", 0))
        if isinstance(exc, openai.APITimeoutError):
            detail = f"timed out after {self.timeout_s:g}s per attempt ({self.base_url})"
            return LLMCallFailed(request.purpose, detail, retries=retries)
        if isinstance(exc, openai.APIConnectionError):
            detail = unreachable_message(self.base_url, _connection_detail(exc))
            return LLMCallFailed(request.purpose, detail, retries=retries)
        if isinstance(exc, openai.APIStatusError):
            message = _error_message(exc)
            status = exc.status_code
            if status == 401:
                message += f" (the server refused the key: check {API_KEY_ENV})"
            elif status == 404:
                model = self.model_for(request.tier)
                message = f"{message} (model '{model}' at {self.base_url}: check --model-{request.tier.value})"
            return LLMCallFailed(request.purpose, message, status=status, retries=retries)
        return LLMCallFailed(request.purpose, f"{type(exc).__name__}: {str(exc)[:300]}", retries=retries)


def _connection_detail(exc: openai.APIConnectionError) -> str:
    cause = exc.__cause__
    while cause is not None and cause.__cause__ is not None:
        cause = cause.__cause__
    text = str(cause) if cause is not None and str(cause) else exc.message
    return text.splitlines()[0][:160] if text else "connection error"


async def _count_attempt(request: httpx2.Request) -> None:
    seen = _attempts.get()
    if seen is not None:
        seen.append(int(request.headers.get("x-stainless-retry-count", "0") or 0))


def server_slots(base_url: str, *, timeout_s: float = 3.0) -> int | None:
    """A llama.cpp server's ``total_slots`` (``/props``); None when not reported or not reachable."""
    try:
        props = httpx2.get(server_root(resolve_base_url(base_url)) + "/props", timeout=timeout_s).json()
    except (httpx2.HTTPError, ValueError):
        return None
    slots = props.get("total_slots") if isinstance(props, dict) else None
    return int(slots) if isinstance(slots, int) and slots > 0 else None


def sharing_line(base_url: str, workers: int, slots: int | None = None, *, probe: bool = True) -> str:
    """One line saying how ``workers`` processes share the server at ``base_url``.

    >>> print(sharing_line("http://127.0.0.1:8080/v1", 2, 5, probe=False))  # doctest: +ELLIPSIS
    local server http://127.0.0.1:8080/v1: 5 slots (4 for personas, 1 spare), one request at a time per slot across the 2 workers and every other crux_lab process on this machine (slot leases in .../leases)
    >>> print(sharing_line("https://api.openai.com/v1", 4, probe=False))
    remote server https://api.openai.com/v1: no leases; each of the 4 workers sends up to 4 requests at once
    """
    from crux_lab.llm.slot_lease import lease_dir

    url = resolve_base_url(base_url)
    if not is_local(url):
        return (f"remote server {url}: no leases; each of the {workers} workers sends up to "
                f"{DEFAULT_CONCURRENCY} requests at once")
    if slots is None and probe:
        slots = server_slots(url)
    across = f"across the {workers} worker{'s' if workers != 1 else ''} and every other crux_lab process on this machine"
    if slots is not None and slots >= 3:
        return (f"local server {url}: {slots} slots ({slots - 1} for personas, 1 spare), one request at a "
                f"time per slot {across} (slot leases in {lease_dir()})")
    seen = f"{slots} slot{'s' if slots != 1 else ''}" if slots else "slots not reported (not llama.cpp, or not up yet)"
    return f"local server {url}: {seen}; nothing pinned, the server gives each request a free slot ({workers} workers)"


def served_models(base_url: str, *, api_key: str | None = None, timeout_s: float = 5.0) -> list[str]:
    """The model ids ``GET {base_url}/models`` lists (raises :class:`BackendUnavailable` with
    a one-line reason when the server cannot be reached)."""
    url = resolve_base_url(base_url)
    problem = check_base_url(url)
    if problem:
        raise BackendUnavailable(problem)
    key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "")
    headers = {"Authorization": f"Bearer {key.strip() or NO_KEY}"}
    try:
        response = httpx2.get(url + "/models", headers=headers, timeout=timeout_s)
    except httpx2.HTTPError as exc:
        detail = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        raise BackendUnavailable(unreachable_message(url, detail)) from None
    if response.status_code == 401:
        raise BackendUnavailable(missing_key_message(url))
    if response.status_code != 200:
        return []
    try:
        data = response.json().get("data", [])
    except ValueError:
        return []
    return [str(item["id"]) for item in data if isinstance(item, dict) and item.get("id")]
