"""The crux_rooms engine (staged-commitment spawn gate, conversational rooms) on the simulated backend."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from crux_lab.engines.base import EngineConfigError
from crux_lab.engines.crux_room.claims import ClaimIndex
from crux_lab.engines.crux_room.crux_rooms import CruxRoomsEngine
from crux_lab.engines.crux_room.detection import SpawnGate, Voted
from crux_lab.llm.base import LLMRequest
from crux_lab.models import DebateConfig, DisagreementCandidate
from crux_lab.runner import DebateRun
from tests.engines.crux_deck import PERSONA_IDS, TOPIC
from tests.engines.scripted import ScriptedBackend, deck_simulator

pytestmark = pytest.mark.usefixtures("use_test_deck")


sim = deck_simulator


async def run(params: dict[str, Any] | None = None, backend: Any = None, **cfg: Any) -> DebateRun:
    config = DebateConfig(
        topic=TOPIC, persona_ids=list(cfg.pop("persona_ids", PERSONA_IDS)), engine="crux_rooms",
        params={"shift_embeddings": False, **(params or {})}, **cfg,
    )
    r = DebateRun(config, backend=backend)
    async for _ in r.events():
        pass
    return r


@pytest.fixture(scope="module")
def default(library: Path) -> tuple[DebateRun, ScriptedBackend]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CRUX_LAB_PERSONAS", str(library))
        backend = ScriptedBackend(sim())
        return asyncio.run(run(backend=backend)), backend


def types(r: DebateRun) -> list[str]:
    return [e.type for e in r.result.events]


def test_channel_is_round_robin_with_detector_every_three(default: tuple[DebateRun, ScriptedBackend]) -> None:
    r, backend = default
    res = r.result
    assert res.complete and res.events[0].type == "debate_start" and res.events[-1].type == "debate_complete"
    channel = [e.message for e in res.events if e.type == "message_posted"]  # type: ignore[union-attr]
    # config.max_turns: every persona is asked in turn, 30 times in all
    asked = [r.hints.speaker_id for r in backend.requests if r.purpose == "channel_message"]
    assert asked == [PERSONA_IDS[i % 4] for i in range(30)]
    # a message is posted unless a guard kept that turn out, which it says in a warning
    # (a channel turn's: outside a crux room, whose own turns a guard may keep out as well)
    kept_out, in_room = [], False
    for e in res.events:
        in_room = (in_room or e.type == "crux_room_spawning") and e.type != "crux_room_complete"
        if not in_room and e.type == "engine_error" and e.purpose.startswith("guard_") and "the turn was skipped" in e.error:  # type: ignore[union-attr]
            kept_out.append(e)
    # at most 4 of 30: the simulated speakers, out of points late in the channel, say an earlier
    # message again in other words (the Maximalist's, with the other side's words quoted first)
    assert len(channel) + len(kept_out) == 30 and len(kept_out) <= 4, [e.error for e in kept_out]  # type: ignore[union-attr]
    posted = iter(asked)
    assert all(any(m.persona_id == who for who in posted) for m in channel)  # in the order asked
    assert all(m.phase == "channel" for m in channel)
    assert backend.counts["detect_disagreement"] == 10
    assert all("1-2 sentences" in u for u in backend.users("channel_message"))


def test_rooms_only_after_three_consecutive_windows(default: tuple[DebateRun, ScriptedBackend]) -> None:
    r, _ = default
    posted = 0
    first_room_at = None
    for e in r.result.events:
        if e.type == "message_posted":
            posted += 1
        if e.type == "crux_room_spawning" and first_room_at is None:
            first_room_at = posted
    assert first_room_at is not None, "the planted deck must produce a room"
    assert first_room_at >= 9  # seenCount >= 3 windows of 3 messages


def test_detections_are_keyed_by_claim_text_and_cards_name_no_ids(default: tuple[DebateRun, ScriptedBackend]) -> None:
    r, backend = default
    res = r.result
    assert all(e.candidate.proposition_id is None for e in res.events if e.type == "disagreement_detected")  # type: ignore[union-attr]
    for q in backend.requests:
        assert "proposition_id" not in q.hints.extra
        assert all(f"[{cid}] {text}" in q.user for cid, text in q.hints.extra.get("shown", {}).items())
    for card in res.crux_cards:
        assert card.question.rstrip("?") != TOPIC.rstrip("?") and card.proposition_ids == []
        assert all(g.text for p in card.personas.values() for g in p.grounding)


def test_rooms_are_conversations_with_exit_checks_and_cards_posted_back(default: tuple[DebateRun, ScriptedBackend]) -> None:
    r, backend = default
    res = r.result
    msgs: dict[str, list[Any]] = {}
    guarded: set[str] = set()  # rooms in which a guard kept a turn out (that turn is missing)
    room_id = None
    for e in res.events:
        if e.type == "crux_message":
            msgs.setdefault(e.room_id, []).append(e)  # type: ignore[union-attr]
        room_id = e.room_id if e.type == "crux_room_spawning" else None if e.type == "crux_room_complete" else room_id  # type: ignore[union-attr]
        if room_id and e.type == "engine_error" and e.purpose.startswith("guard_") and "the turn was skipped" in e.error:  # type: ignore[union-attr]
            guarded.add(room_id)
    order = ["position", "exchange", "convergence"]
    for rid, room in msgs.items():
        phases = [m.room_phase for m in room]
        assert phases == sorted(phases, key=order.index)  # positions, then the exchange, then the premises
        if rid in guarded:
            continue
        assert [m.room_phase for m in room[:2]] == ["position", "position"]
        assert [m.room_phase for m in room[-2:]] == ["convergence", "convergence"]  # each names the buried premise
        assert {m.room_phase for m in room[2:-2]} <= {"exchange"}
        exchange = room[2:-2]
        assert [m.message.persona_id for m in exchange] == [room[k % 2].message.persona_id for k in range(len(exchange))]
        assert len(room) <= 20
    assert len(guarded) < len(msgs)  # at least one room shows the whole shape
    assert backend.counts["exit_check"] >= len(msgs)
    cards = [e.card for e in res.events if e.type == "crux_card_posted"]  # type: ignore[union-attr]
    # the result holds the posted cards (tidied: a "resolved" card whose sides still disagree is not)
    assert cards and [(c.id, c.question) for c in res.crux_cards] == [(c.id, c.question) for c in cards]
    # the channel sees posted cards afterwards, as evidence
    first_card_seq = next(e.seq for e in res.events if e.type == "crux_card_posted")
    later = [m for m in res.events if m.type == "message_posted" and m.seq > first_card_seq]
    assert later and any("Crux cards posted back" in u for u in backend.users("channel_message"))


def _same(pair: list[str], claim: str = "Would government purchases push up the price?") -> dict[str, Any]:
    return {"disagreements": [{"has_direct_opposition": True, "has_specific_claim": True, "topic_relevant": True, "personas": pair, "claim": claim}]}


async def test_same_pair_and_claim_never_spawns_twice() -> None:
    backend = ScriptedBackend(
        sim(), script={"detect_disagreement": lambda q, n: _same(["maximalist", "goldbug"])}
    )
    r = await run({"max_rooms": 5, "cooldown_messages": 0}, backend=backend, max_turns=45)
    assert types(r).count("crux_room_spawning") == 1


async def test_a_detected_claim_that_is_the_topic_opens_no_room() -> None:
    """Qwen 1.5B named a persona's whole case, the topic included, as the disputed claim: a room
    on the topic would only restate it, so the detection is dropped with a warning quoting it."""
    backend = ScriptedBackend(sim(), script={"detect_disagreement": lambda q, n: _same(["maximalist", "goldbug"], TOPIC)})
    r = await run({"max_rooms": 5, "cooldown_messages": 0}, backend=backend, max_turns=12)
    dropped = [e.error for e in r.result.events if e.type == "engine_error" and e.purpose == "detect_disagreement"]  # type: ignore[union-attr]
    assert dropped and all("it is the debate topic itself" in d for d in dropped)
    assert "crux_room_spawning" not in types(r)


async def test_one_off_quibbles_do_not_spawn() -> None:
    # positive only in every other window: never 3 consecutive
    def script(req: LLMRequest, n: int) -> dict[str, Any]:
        return _same(["maximalist", "goldbug"]) if n % 2 == 0 else {"disagreements": []}

    r = await run(backend=ScriptedBackend(sim(), script={"detect_disagreement": script}))
    assert "crux_room_spawning" not in types(r)
    assert types(r).count("disagreement_detected") == 5


async def test_room_loop_stops_at_safety_cap() -> None:
    r = await run(
        {"max_rooms": 1},
        backend=ScriptedBackend(sim(), script={"exit_check": lambda q, n: {"crux_surfaced": False}}),
    )
    done = [e for e in r.result.events if e.type == "crux_room_complete"]
    # the cap counts the turns the room asked for: those spoken and those a guard kept out
    events = r.result.events
    start = next(i for i, e in enumerate(events) if e.type == "crux_room_spawning")
    end = next(i for i, e in enumerate(events) if e.type == "crux_room_complete")
    kept_out = [e for e in events[start:end] if e.type == "engine_error" and e.purpose.startswith("guard_")  # type: ignore[union-attr]
                and "the turn was skipped" in e.error]  # type: ignore[union-attr]
    asked = done[0].turns + len(kept_out)
    # the room ends at the cap, or sooner when two turns in a row were kept out (nothing new on its claim)
    order = ["out" if e in kept_out else "said" for e in events[start:end] if e in kept_out or e.type == "crux_message"]
    two_out = any(order[i] == order[i + 1] == "out" for i in range(len(order) - 1))
    assert len(done) == 1 and (asked == 20 or (asked < 20 and two_out)), (done, order)


async def test_unrepairable_detector_reply_is_skipped() -> None:
    r = await run(backend=ScriptedBackend(sim(), fail=["detect_disagreement"]), max_turns=12)
    warnings = [e for e in r.result.events if e.type == "engine_error"]
    assert all(w.level == "warning" for w in warnings)  # type: ignore[union-attr]
    # one per detection call (a guard's warning on the small deck's repeated turns aside)
    detect = [w for w in warnings if w.purpose == "detect_disagreement"]  # type: ignore[union-attr]
    assert len(detect) == 4 and all(w.purpose.startswith("guard_") for w in warnings if w not in detect)  # type: ignore[union-attr]
    # every turn of the budget is posted, except one a guard skipped
    skipped = sum(1 for w in warnings if getattr(w, "purpose", "").startswith("guard_") and "the turn was skipped" in getattr(w, "error", ""))
    assert r.result.complete and types(r).count("message_posted") + skipped == 12


async def test_bad_persona_counts() -> None:
    with pytest.raises(EngineConfigError, match="got 1"):
        DebateRun(DebateConfig(topic=TOPIC, persona_ids=["goldbug"], engine="crux_rooms"))
    with pytest.raises(EngineConfigError, match="at most 3 personas"):
        await run({"max_personas": 3})


def test_params_max_personas_fails_before_any_call() -> None:
    backend = ScriptedBackend(sim())
    config = DebateConfig(topic=TOPIC, persona_ids=list(PERSONA_IDS), engine="crux_rooms", params={"max_personas": 2})
    with pytest.raises(EngineConfigError, match="crux_rooms' is configured for at most 2 personas"):
        DebateRun(config, backend=backend)
    assert backend.requests == []


def test_spawn_gate_staged_commitment() -> None:
    claims = ClaimIndex(encode=None)

    def cand(pair: list[str], claim: str) -> Voted:
        c = DisagreementCandidate(has_direct_opposition=True, has_specific_claim=True, topic_relevant=True, personas=pair, claim=claim)
        return Voted(c, 1, claims.key(claim))

    gate = SpawnGate(min_seen=3, cooldown_messages=9)
    ab = cand(["a", "b"], "Is the bitcoin supply capped at 21 million?")
    assert gate.observe(1, [ab], 3) == [] and gate.observe(2, [ab], 6) == []
    # pair order does not matter, and neither does the wording of the same claim
    assert gate.observe(3, [cand(["b", "a"], "Whether the supply of bitcoin is capped at 21 million coins")], 9) != []
    gate.mark_spawned(ab, 9)
    for w in range(4, 8):
        assert gate.observe(w, [ab], 3 * w) == []  # never twice for the same pair and claim
    other = cand(["a", "b"], "Should a treasury hold volatile assets?")
    assert [gate.observe(w, [other], 3 * w) for w in (8, 9)] == [[], []]
    assert gate.observe(10, [other], 17) == []  # 17 - 9 < 9: cooling down
    assert gate.observe(11, [other], 18) != []
    fresh = SpawnGate(min_seen=2)
    assert fresh.observe(1, [ab], 3) == [] and fresh.observe(3, [ab], 9) == []  # gap resets the count


def test_registered() -> None:
    from crux_lab.engines import get

    assert isinstance(get("crux_rooms"), CruxRoomsEngine)


async def test_a_budget_too_short_for_any_room_says_so_and_a_long_enough_one_opens_it() -> None:
    """Eight messages hold two detection windows, but a room needs its disagreement seen in three
    in a row: the run warns that no room can open (the Qwen table ran crux_rooms this way)."""
    detect = {"detect_disagreement": lambda q, n: _same(["maximalist", "goldbug"])}
    short = await run({"max_rooms": 1}, backend=ScriptedBackend(sim(), script=detect), max_turns=8)
    warned = [e.error for e in short.result.events if e.type == "engine_error" and "no room can open" in e.error]  # type: ignore[union-attr]
    assert warned == [warned[0]] and "at least 9 turns" in warned[0]
    assert "crux_room_spawning" not in types(short)
    enough = await run({"max_rooms": 1}, backend=ScriptedBackend(sim(), script=detect), max_turns=9)
    assert not any(e.type == "engine_error" and "no room can open" in e.error for e in enough.result.events)  # type: ignore[union-attr]
    assert types(enough).count("crux_room_spawning") == 1
