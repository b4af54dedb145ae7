"""The anti-sycophancy stack: every measure works and has its own switch."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from crux_lab.engines.crux_room.antisyc import belief_anchor, looks_sycophantic
from crux_lab.engines.crux_room.speaker import PositionTracker
from crux_lab.llm.simulated.options import SimulatorKnobs
from crux_lab.models import DebateConfig, DialogueTurn
from crux_lab.personas.loader import load_personas
from crux_lab.runner import DebateRun
from tests.engines.crux_deck import NAMES, PERSONA_IDS, TOPIC
from tests.engines.scripted import ScriptedBackend, deck_simulator

SPEECH = ("take", "rebuttal", "crux_turn", "closing")
ALL_OFF = {
    "anonymize_history": False, "position_statement": False, "belief_anchoring": False,
    "post_check": False, "update_rule": False,
}


pytestmark = pytest.mark.usefixtures("use_test_deck")


async def run(params: dict[str, Any], knobs: SimulatorKnobs | None = None, seed: int = 0) -> tuple[DebateRun, ScriptedBackend]:
    ids = list(PERSONA_IDS)
    backend = ScriptedBackend(deck_simulator(seed, knobs))
    config = DebateConfig(
        topic=TOPIC, persona_ids=ids, engine="panel",
        params={"shift_embeddings": False, "n_aspects": 2, "max_rooms": 2, **params},
    )
    r = DebateRun(config, backend=backend)
    async for _ in r.events():
        pass
    return r, backend


def speech_prompts(backend: ScriptedBackend) -> list[tuple[str, str, str]]:
    """(purpose, speaker, user message) of every persona turn."""
    return [(q.purpose, q.hints.speaker_id or "", q.user) for q in backend.requests if q.purpose in SPEECH]


async def test_no_turn_request_names_another_speaker_or_shows_a_transcript() -> None:
    """A turn request states the point to answer as a claim: other speakers' names and raw
    turns are never in it, with or without the anonymized grounding."""
    for params in ({}, {"anonymize_history": False}):
        _, backend = await run(params)
        users = speech_prompts(backend)
        leaked = [(purpose, m[0], u[max(0, m.start() - 80):m.end() + 20]) for purpose, me, u in users for p in PERSONA_IDS if p != me
                  for m in [re.search(rf"{re.escape(NAMES[p])}|{re.escape(p)}", u)] if m]
        assert leaked == []
        assert any("The claim to answer: " in u for _, _, u in users)
        assert not any(re.search(r"^(You|Speaker [A-Z]|another speaker): ", u, re.M) for _, _, u in users)


async def test_prompt_measures_switch_independently() -> None:
    _, on = await run({})
    _, off = await run(ALL_OFF)
    markers = {
        "position_statement": "Before answering, commit",
        "update_rule": "Only update your position if you can name the specific claim",
        "belief_anchoring": "Your reasoning anchors on this",
    }
    for marker in markers.values():
        assert any(marker in u for _, _, u in speech_prompts(on))
        assert not any(marker in u for _, _, u in speech_prompts(off))
    # before a persona has said anything there is no position to hold or update
    openings = [q.user for q in on.requests if q.purpose == "opening"]
    assert len(openings) == len(PERSONA_IDS)
    assert not any(markers["position_statement"] in u or markers["update_rule"] in u for u in openings)
    # where the persona's answer line states its position, the commitment line is left out
    # (beside it, Qwen narrated it: "The current position is that ...")
    answered = [u for _, _, u in speech_prompts(on) if re.search(r"^Your answer to (this|the debate) question: ", u, re.M)]
    assert answered and not any(markers["position_statement"] in u for u in answered)
    only_anchor_off = {"belief_anchoring": False}
    _, b = await run(only_anchor_off)
    prompts = [u for _, _, u in speech_prompts(b)]
    assert not any(markers["belief_anchoring"] in u for u in prompts)
    assert any(markers["position_statement"] in u for u in prompts)


async def test_post_check_regenerates_unjustified_capitulation_once() -> None:
    knobs = SimulatorKnobs(sycophancy=0.6)
    r_on, on = await run({}, knobs)
    stats = r_on.ctx.scratch["anti_sycophancy"]
    assert stats.flagged_by_pattern > 0 and on.counts["anti_sycophancy_check"] == stats.checked
    assert stats.unjustified > 0 and stats.regenerated == stats.unjustified
    assert stats.still_unjustified <= stats.regenerated
    regen = [q for q in on.requests if "conceded without naming" in q.user]
    assert len(regen) == stats.regenerated
    r_off, off = await run({"post_check": False}, knobs)
    assert "anti_sycophancy_check" not in off.counts
    assert r_off.ctx.scratch["anti_sycophancy"].regenerated == 0


def test_update_rule_refuses_unjustified_changes() -> None:
    def turn(i: int, stance: str, text: str = "x") -> DialogueTurn:
        return DialogueTurn(id=f"m{i}", turn_index=i, persona_id="a", dialogue=text, phase="clash",
                            proposition_ids=["p1"], stance=stance)  # type: ignore[arg-type]

    strict = PositionTracker(enforce=True)
    strict.observe(turn(0, "pro"), None)
    rec = strict.observe(turn(1, "uncertain"), None)[0]
    assert rec.changed and not rec.accepted and strict.committed[("a", "p1")] == "pro"
    rec = strict.observe(turn(2, "uncertain", "you met my condition"), "you met my condition")[0]
    assert rec.accepted and strict.committed[("a", "p1")] == "uncertain"
    loose = PositionTracker(enforce=False)
    loose.observe(turn(0, "pro"), None)
    assert loose.observe(turn(1, "con"), None)[0].accepted


def test_patterns_and_anchor_text(library: Path) -> None:
    assert looks_sycophantic("You make a good point, I now agree.")
    assert looks_sycophantic("I understand your perspective.")
    assert not looks_sycophantic("The drawdown data contradicts that.")
    persona = load_personas(["maximalist"])["maximalist"]
    anchor = belief_anchor(persona, "store of value scarcity", ["p1"])
    assert "Absolute scarcity" in anchor and "Conceding this would mean abandoning" in anchor
    # a belief the persona's own turns already state is not anchored on again (it would be said again)
    said = ["As I said: absolute scarcity is the one property that no central bank can ever debase."]
    again = belief_anchor(persona, "store of value scarcity", ["p1"], said=said)
    assert "Absolute scarcity" not in again


async def test_capitulations_show_up_as_unjustified_shifts_attributed_to_rooms() -> None:
    # The simulator's draws follow each request's words, so a prompt change moves which room a
    # concession falls in: look over a few seeds for one where it falls inside a room; every
    # seed's shifts must be attributed correctly.
    in_room = 0
    for seed in range(4):
        r, _ = await run({"post_check": False, "n_aspects": 3, "max_rooms": 3}, SimulatorKnobs(sycophancy=0.6), seed=seed)
        in_room += _check_shifts(r.result)
        if in_room:
            break
    assert in_room > 0


def _check_shifts(res: Any) -> int:
    """Checks one run's shifts and concession trail; the number of changes made inside a room."""
    from crux_lab.analysis.shifts import (
        observations_from_turns,
        opening_closing,
        room_spans_from_turns,
        shift_timeline,
    )

    shifted = [s for s in res.position_shifts if s.shifted]
    assert shifted, "sycophantic concessions must be visible as position shifts"
    rooms = {sp.room_id: sp for sp in room_spans_from_turns(res.transcript)}
    obs = observations_from_turns(res.transcript)
    timeline = shift_timeline(obs)
    in_room = 0
    for s in shifted:
        first, last = opening_closing(obs, s.persona_id)
        assert all(first[p.proposition_id] == p.before and last[p.proposition_id] == p.after for p in s.proposition_shifts)
        assert all(s.persona_id in rooms[rid].personas for rid in s.attributed_rooms)
        # a shift is either unjustified (a sycophantic concession) or names the flip condition that fired
        assert (s.named_reason is None and "without a named reason" in s.summary) or "halving" in (s.named_reason or "")
        for p in s.proposition_shifts:
            point = next(t for t in timeline if t.persona_id == s.persona_id and t.proposition_id == p.proposition_id and t.changed)
            if point.room_id is not None:  # a change made inside a room is attributed to it
                assert point.room_id in s.attributed_rooms
                in_room += 1
    assert any(s.named_reason is None for s in shifted)
    # every concession is on the trail; those without a named reason are marked so
    conceded = [t for t in res.transcript if t.move is not None and t.move.value == "CONCEDE"]
    assert conceded and [c.turn_index for c in res.concession_trail] == sorted(t.turn_index for t in conceded)
    assert any(c.reason is None for c in res.concession_trail)
    # a named reason is the one the reply gave (a flip condition of the test deck)
    assert all(c.reason is None or "halving" in c.reason.lower() or "condition" in c.reason.lower() for c in res.concession_trail)
    return in_room
