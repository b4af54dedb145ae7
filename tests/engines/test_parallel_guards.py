"""Parallel persona turns are judged by their guards the same way whether their replies come
back together (a live server) or one by one at once (a replay): against every turn started
before them. Before, a turn was judged against the turns that had come back when its request
went out, so a recorded panel debate replayed differently from how it ran."""

from __future__ import annotations

from typing import Any

import pytest

from crux_lab.llm.base import LLMRequest
from tests.engines.scripted import ScriptedBackend
from tests.engines.test_panel import run, sim

pytestmark = pytest.mark.usefixtures("use_test_deck")

SAME = "A reserve asset that nobody can dilute is worth its swings over any ten-year window."


def same_take(req: LLMRequest, n: int) -> dict[str, Any]:
    return {"utterance": SAME, "move": "CLAIM", "stance": None, "addresses": []}


async def outcome(overlap: bool) -> tuple[list[tuple[str, str]], list[str]]:
    backend = ScriptedBackend(sim(), script={"take": same_take}, overlap=overlap)
    r = await run({"n_aspects": 1}, backend=backend)
    kept = [(e.message.persona_id, e.message.dialogue) for e in r.result.events if e.type == "message_posted" and e.phase == "take"]  # type: ignore[union-attr]
    echoes = [e.error for e in r.result.events if e.type == "engine_error" and e.purpose == "guard_echo"]  # type: ignore[union-attr]
    return kept, echoes


async def test_parallel_takes_are_judged_alike_live_and_replayed() -> None:
    live, replayed = await outcome(overlap=True), await outcome(overlap=False)
    assert live == replayed
    kept, echoes = live
    # the same words from every persona: the first take stands, every later one is an echo of it
    assert [text for _, text in kept] == [SAME] and echoes


def test_a_placeholder_claim_opens_no_room() -> None:
    from crux_lab.engines.crux_room.detection import _valid
    from crux_lab.engines.crux_room.schemas import DetectionItem

    item = {"has_direct_opposition": True, "has_specific_claim": True, "topic_relevant": True, "personas": ["a", "b"]}
    assert not _valid(DetectionItem.model_validate({**item, "claim": "..."}), {"a", "b"})
    assert _valid(DetectionItem.model_validate({**item, "claim": "Scarcity makes value."}), {"a", "b"})
