"""The ledger never lies (issue 16): a call cut short is 'cancelled', with its real retries
and latency; a run's backend is the backend that answered; 'replay' only when a cassette did.

The real anthropic SDK talks to a fake Messages API (``fake_api.py``); every wait is on an
asyncio event the fake API sets, never on a sleep.
"""

from __future__ import annotations

import asyncio
import json

import httpx2
import pytest

from crux_lab.llm.anthropic_backend import AnthropicBackend
from crux_lab.llm.base import LLMCallFailed, LLMRequest, LLMResponse
from crux_lab.llm.ledger import Ledger, cost_label, is_billed, run_backend
from crux_lab.llm.replay import ReplayBackend
from crux_lab.models import Tier

from .fake_api import FAKE_KEY, FakeAPI, error, message


def request(purpose: str, user: str) -> LLMRequest:
    return LLMRequest(purpose=purpose, system="s", user=user)


def routed(api_calls: dict[str, int], second_attempt: asyncio.Event, release: asyncio.Event):
    """'slow' gets a 529 (retried), then hangs; 'fail' answers 400 once 'slow' is retrying."""

    async def reply(req: httpx2.Request) -> httpx2.Response:
        user = json.loads(req.content)["messages"][0]["content"]
        api_calls[user] = api_calls.get(user, 0) + 1
        if user == "slow":
            if api_calls[user] == 1:
                return error(529, "overloaded_error", "busy", {"retry-after-ms": "1"})
            second_attempt.set()
            await release.wait()
            return message("too late")
        await second_attempt.wait()
        return error(400, "invalid_request_error", "bad request")

    return reply


async def test_a_call_cancelled_by_a_failing_sibling_is_cancelled_not_ok() -> None:
    calls: dict[str, int] = {}
    second_attempt, release = asyncio.Event(), asyncio.Event()
    api = FakeAPI([routed(calls, second_attempt, release)])
    ledger = Ledger(AnthropicBackend(api_key=FAKE_KEY, http_client=api.client()), run_id="r")
    with pytest.raises(ExceptionGroup) as info:
        async with asyncio.TaskGroup() as group:
            group.create_task(ledger.generate(request("take", "slow")))
            group.create_task(ledger.generate(request("take", "fail")))
    assert isinstance(info.value.exceptions[0], LLMCallFailed)
    by_user = {c.seq: c for c in ledger.calls}
    slow, failed = by_user[0], by_user[1]
    assert failed.outcome == "error" and "HTTP 400" in (failed.error or "")
    assert slow.outcome == "cancelled", slow
    assert slow.retries == 1  # the 529 attempt really happened
    assert slow.latency_s > 0 and slow.input_tokens == 0 and slow.cost_usd == 0
    assert slow.backend == "anthropic"
    assert ledger.outcomes() == {"cancelled": 1, "error": 1}


class InFlight:
    """A ledger over a fake API whose one call hangs until ``release`` is set."""

    def __init__(self) -> None:
        self.started, self.release = asyncio.Event(), asyncio.Event()

        async def hang(_: httpx2.Request) -> httpx2.Response:
            self.started.set()
            await self.release.wait()
            return message("late")

        self.ledger = Ledger(AnthropicBackend(api_key=FAKE_KEY, http_client=FakeAPI([hang]).client()), run_id="r")

    async def call(self) -> asyncio.Task[LLMResponse]:
        task = asyncio.create_task(self.ledger.generate(request("take", "u")))
        await self.started.wait()
        return task


async def test_a_call_still_in_flight_at_task_cancel_is_cancelled() -> None:
    flight = InFlight()
    task = await flight.call()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [c.outcome for c in flight.ledger.calls] == ["cancelled"]
    assert flight.ledger.calls[0].latency_s > 0


async def test_a_snapshot_taken_while_a_call_is_in_flight_shows_it_cancelled_with_its_time() -> None:
    """A run saved before a sibling call has unwound (Ctrl-C) must not read latency 0."""
    flight = InFlight()
    task = await flight.call()
    [open_row] = flight.ledger.snapshot()
    assert open_row.outcome == "cancelled" and open_row.latency_s > 0
    assert open_row.error == "cancelled before an answer"
    assert flight.ledger.usage().latency_s == pytest.approx(open_row.latency_s, abs=1.0)
    flight.release.set()
    await task  # once the call ends, the snapshot reads its real outcome
    [done] = flight.ledger.snapshot()
    assert done.outcome == "ok" and done.error is None


class _Echo:
    """A minimal backend that answers every request (for the replay labelling tests)."""

    name = "anthropic"

    def model_for(self, tier: Tier) -> str:
        return "claude-sonnet-4-5"

    async def generate(self, req: LLMRequest) -> LLMResponse:
        return LLMResponse(text=f"answer to {req.user}", model="claude-sonnet-4-5", backend=self.name,
                           cost_usd=0.01)


async def test_a_recorded_paid_run_is_labelled_with_the_real_backend(tmp_path) -> None:
    cassette = tmp_path / "c.jsonl"
    recording = Ledger(ReplayBackend(cassette, inner=_Echo(), mode="auto"), run_id="r")
    await recording.generate(request("take", "one"))
    assert [c.backend for c in recording.calls] == ["anthropic"]
    assert run_backend(recording.calls, "x") == "anthropic"
    assert is_billed(run_backend(recording.calls, "x")) and cost_label("anthropic") == "billed"
    # The same cassette answering: now, and only now, the backend is "replay" (not billed).
    replaying = Ledger(ReplayBackend(cassette, mode="replay"), run_id="r")
    await replaying.generate(request("take", "one"))
    assert [(c.backend, c.outcome) for c in replaying.calls] == [("replay", "ok")]
    assert cost_label(run_backend(replaying.calls, "x")) == "modelled, not billed"
    # A resumed recording: one call from the cassette, one new paid call.
    resumed = Ledger(ReplayBackend(cassette, inner=_Echo(), mode="auto"), run_id="r")
    await resumed.generate(request("take", "one"))
    await resumed.generate(request("take", "two"))
    assert run_backend(resumed.calls, "x") == "anthropic+replay"
    assert is_billed("anthropic+replay")
