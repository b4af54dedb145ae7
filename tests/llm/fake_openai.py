"""A fake OpenAI-compatible server behind httpx2.MockTransport: canned chat completions,
llama.cpp's ``/props`` and ``/v1/models``, and every request captured.

The real ``openai`` SDK talks to it, so retries, headers and parsing run for real.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import httpx2

FAKE_OPENAI_KEY = "sk-proj-test-FAKEKEY-9876543210fedcba"
LOCAL_URL = "http://127.0.0.1:8080/v1"
REMOTE_URL = "https://llm.example.test/v1"

Reply = httpx2.Response | Exception


def completion(
    text: str = "Hello.",
    *,
    model: str = "smollm2",
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    cached_tokens: int | None = None,
    finish_reason: str = "stop",
) -> httpx2.Response:
    """A 200 response carrying one chat completion."""
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    return httpx2.Response(
        200,
        json={
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 1,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": usage,
        },
    )


def error(status: int, text: str, headers: dict[str, str] | None = None, kind: str = "invalid_request_error") -> httpx2.Response:
    return httpx2.Response(
        status, headers=headers or {}, json={"error": {"code": status, "message": text, "type": kind}}
    )


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes


@dataclass
class FakeOpenAI:
    """Serves ``replies`` to chat completions in order (the last repeats); ``n_ctx`` is what
    ``/props`` reports (None: ``/props`` is 404, as on servers other than llama.cpp), with
    ``slots`` as its ``total_slots``.

    The backend's structured-output canary (a request whose schema is named ``canary``) is
    answered apart, as ``canary`` says: ``enforce`` (the sentinel, as a server that holds the
    schema answers), ``ignore`` (plain text, HTTP 200) or ``reject`` (HTTP 400); it is kept in
    ``canaries``, not ``chats``."""

    replies: list[Reply]
    n_ctx: int | None = None
    models: list[str] = field(default_factory=lambda: ["smollm2"])
    requests: list[Seen] = field(default_factory=list)
    canary: str = "enforce"
    slots: int | None = None  # llama.cpp's total_slots in /props (None: not reported)

    async def __call__(self, request: httpx2.Request) -> httpx2.Response:
        raw = request.content
        body = json.loads(raw) if raw else {}
        self.requests.append(Seen(request.method, request.url.path, dict(request.headers), body, raw))
        await asyncio.sleep(0)
        if request.url.path == "/props":
            if self.n_ctx is None:
                return httpx2.Response(404, json={"error": {"message": "File Not Found"}})
            props: dict[str, Any] = {"default_generation_settings": {"n_ctx": self.n_ctx}}
            if self.slots is not None:
                props["total_slots"] = self.slots
            return httpx2.Response(200, json=props)
        if request.url.path.endswith("/models"):
            return httpx2.Response(200, json={"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]})
        if _is_canary(body):
            sentinel = body["response_format"]["json_schema"]["schema"]["properties"]["canary"]["enum"][0]
            return {
                "enforce": completion(json.dumps({"canary": sentinel})),
                "ignore": completion("Blue."),
                "reject": error(400, "response_format json_schema is not supported"),
            }[self.canary]
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        return httpx2.Response(reply.status_code, headers=reply.headers, content=reply.content)

    @property
    def chats(self) -> list[Seen]:
        return [r for r in self.requests if r.path.endswith("/chat/completions") and not _is_canary(r.body)]

    @property
    def canaries(self) -> list[Seen]:
        return [r for r in self.requests if r.path.endswith("/chat/completions") and _is_canary(r.body)]

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self))


def _is_canary(body: dict[str, Any]) -> bool:
    fmt = body.get("response_format") or {}
    return isinstance(fmt, dict) and (fmt.get("json_schema") or {}).get("name") == "canary"
