"""A fake Messages API behind httpx2.MockTransport: canned replies, captured requests.

The real ``anthropic`` SDK talks to it, so retries, headers and parsing run for real.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2

FAKE_KEY = "sk-ant-test-FAKEKEY-0123456789abcdef"

Reply = httpx2.Response | Exception | Callable[[httpx2.Request], Awaitable[httpx2.Response]]


def message(
    text: str = "Hello.",
    *,
    model: str = "claude-sonnet-5-5",
    input_tokens: int = 100,
    output_tokens: int = 20,
    cache_creation_input_tokens: int = 0,
    cache_read_input_tokens: int = 0,
    stop_reason: str = "end_turn",
    thinking: str | None = None,
) -> httpx2.Response:
    """A 200 response carrying one Messages API message."""
    content: list[dict[str, Any]] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": "sig"})
    content.append({"type": "text", "text": text})
    return httpx2.Response(
        200,
        json={
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cache_creation_input_tokens": cache_creation_input_tokens,
                "cache_read_input_tokens": cache_read_input_tokens,
            },
        },
    )


def error(status: int, kind: str, text: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(
        status, headers=headers or {}, json={"type": "error", "error": {"type": kind, "message": text}}
    )


def slow(seconds: float, then: httpx2.Response) -> Callable[[httpx2.Request], Awaitable[httpx2.Response]]:
    async def reply(_: httpx2.Request) -> httpx2.Response:
        await asyncio.sleep(seconds)
        return then

    return reply


@dataclass
class Captured:
    at: float
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes


@dataclass
class FakeAPI:
    """Serves ``replies`` in order (the last one repeats) and records every request."""

    replies: list[Reply]
    requests: list[Captured] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0

    async def __call__(self, request: httpx2.Request) -> httpx2.Response:
        raw = request.content
        self.requests.append(
            Captured(time.perf_counter(), dict(request.headers), json.loads(raw), raw)
        )
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if isinstance(reply, Exception):
                raise reply
            if isinstance(reply, httpx2.Response):
                await asyncio.sleep(0)
                return httpx2.Response(reply.status_code, headers=reply.headers, content=reply.content)
            return await reply(request)
        finally:
            self.in_flight -= 1

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self))
