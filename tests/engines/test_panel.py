"""The panel engine on the simulated backend: flow, events, detection, clash, rooms, cards,
bad input. Scripted wrappers (``ScriptedBackend``) force the rare paths. The engine learns only
from the replies its prompts ask for: cards are matched to the planted cruxes by their text."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from crux_lab.analysis.restates import same_wording
from crux_lab.analysis.sides import cards_agree
from crux_lab.engines.base import EngineConfigError, TurnReply
from crux_lab.engines.crux_room.claims import ClaimIndex
from crux_lab.engines.crux_room.context import DebateMemory, turn_context
from crux_lab.engines.crux_room.detection import detect
from crux_lab.engines.crux_room.panel import PanelEngine
from crux_lab.engines.crux_room.schemas import CardReply
from crux_lab.llm.base import LLMRequest
from crux_lab.models import CruxCard, DebateConfig, DialogueTurn
from crux_lab.personas.loader import load_personas
from crux_lab.runner import DebateRun
from crux_lab.tokens import count_tokens
from tests.engines.crux_deck import (
    NAMES,
    PERSONA_IDS,
    TOPIC,
    planted_contested,
    propositions,
    write_test_deck,
)
from tests.engines.scripted import ScriptedBackend, deck_simulator

pytestmark = pytest.mark.usefixtures("use_test_deck")


@pytest.fixture
def deck(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the library, for tests that edit persona files."""
    root = tmp_path / "personas"
    write_test_deck(root)
    monkeypatch.setenv("CRUX_LAB_PERSONAS", str(root))
    return root


@pytest.fixture(scope="module")
def default(library: Path) -> DebateRun:
    """One default debate (seed 0), shared by the tests that only read it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CRUX_LAB_PERSONAS", str(library))
        return asyncio.run(run({"n_aspects": 3}))


sim = deck_simulator


async def run(params: dict[str, Any] | None = None, backend: Any = None, **cfg: Any) -> DebateRun:
    config = DebateConfig(
        topic=TOPIC, persona_ids=list(cfg.pop("persona_ids", PERSONA_IDS)), engine="panel",
        params={"shift_embeddings": False, "n_aspects": 2, **(params or {})}, **cfg,
    )
    r = DebateRun(config, backend=backend)
    async for _ in r.events():
        pass
    return r


def types(r: DebateRun) -> list[str]:
    return [e.type for e in r.result.events]


INTERNAL_ID = re.compile(r"\b(arg-\d+|p\d|card-\w+|[a-z_]+-c-p\d|c\d+)\b")


def planted_of(text: str) -> str:
    """The test-deck proposition a text is about, by embedding similarity (text only)."""
    from crux_lab.analysis.textmatch import proposition_similarity

    props = propositions()
    return props[int(proposition_similarity([text], props)[0].argmax())].id


def user_texts(card: CruxCard) -> list[str]:
    return [card.question, card.diagnosis, card.resolution or ""] + [
        x for p in card.personas.values() for x in (p.reasoning, p.falsifier or "")
    ]


def closings_kept_out(res: Any) -> int:
    """Closing turns the guards kept out: their warnings, after the last round ended."""
    last_round = max(e.seq for e in res.events if e.type == "round_end")
    return sum(1 for e in res.events if e.seq > last_round and e.type == "engine_error"
               and e.purpose.startswith("guard_") and "turn was skipped" in e.error)


def test_full_flow_follows_the_panel_event_order(default: DebateRun) -> None:
    r = default
    res = r.result
    assert res.complete and res.error is None
    t = types(r)
    assert t[0] == "debate_start" and t[-1] == "debate_complete"
    start = res.events[0]
    assert [a.id for a in start.aspects] == ["a1", "a2", "a3"]  # type: ignore[union-attr]
    assert start.personas == list(PERSONA_IDS)  # type: ignore[union-attr]
    # opening messages before the first round, closing after the last
    phases = [e.phase for e in res.events if e.type == "message_posted"]  # type: ignore[union-attr]
    closings = phases.count("closing")
    assert phases[:4] == ["opening"] * 4 and phases[-closings:] == ["closing"] * closings
    assert closings + closings_kept_out(res) == 4
    assert t.count("round_start") == t.count("round_end") == 3
    # every room: spawning -> messages -> (card) -> complete, in order and not interleaved
    rooms = [e for e in res.events if e.type == "crux_room_spawning"]
    assert rooms, "the planted deck must produce at least one crux room"
    for room in rooms:
        rid = room.room_id  # type: ignore[union-attr]
        own = [e for e in res.events if getattr(e, "room_id", None) == rid or (e.type == "crux_card_posted" and e.card.crux_room_id == rid)]  # type: ignore[union-attr]
        assert own[0].type == "crux_room_spawning" and own[-1].type == "crux_room_complete"
        seqs = [e.seq for e in own]
        between = [e for e in res.events if seqs[0] <= e.seq <= seqs[-1] and e not in own]
        # nothing of another room in between; a guard's warning on this room's turn may be
        assert all(e.type == "engine_error" and e.purpose.startswith("guard_") for e in between)  # type: ignore[union-attr]
    # transcript built by the runner from message_posted + crux_message
    assert len(res.transcript) == t.count("message_posted") + t.count("crux_message")
    assert len({m.id for m in res.transcript}) == len(res.transcript)
    assert res.aspects == start.aspects  # type: ignore[union-attr]


def test_cards_use_full_schema_and_match_planted_cruxes(default: DebateRun) -> None:
    res = default.result
    planted = planted_contested()
    assert res.crux_cards
    rooms = {e.room_id for e in res.events if e.type == "crux_room_spawning"}  # type: ignore[union-attr]
    for card in res.crux_cards:
        # the room's two, and every other persona of the panel once the poll asked them alone
        assert len(card.personas) in (2, len(res.config.persona_ids)) and card.source_aspect in {"a1", "a2", "a3"}
        # a room's card, or a clash settled by a concession, recorded with its reason (resolved
        # only when the positions then agree)
        assert card.crux_room_id in rooms or (card.crux_room_id == "" and card.resolution)
        assert card.source_messages and card.diagnosis and "split is a" not in card.diagnosis
        for pid, pos in card.personas.items():
            persona = load_personas([pid])[pid]
            chunks = {c.id: c for c in persona.corpus}
            assert set(pos.grounding_quotes) <= set(chunks)
            # grounding shows the chunk's words and its source, not only its id
            assert [(g.chunk_id, g.text, g.source) for g in pos.grounding] == [
                (q, chunks[q].text, chunks[q].source) for q in pos.grounding_quotes
            ]
            assert pos.reasoning
        # matched to a planted crux by its text alone; never the topic restated; no internal ids
        assert planted_of(card.question) in planted
        assert card.question.rstrip("?") != TOPIC.rstrip("?")
        assert not [t for t in user_texts(card) if INTERNAL_ID.search(t)]
        if not card.resolved and not card.resolution:  # an open card; a concession's card may be NUANCED
            assert {"YES", "NO"} <= {p.position.value for p in card.personas.values()}
    assert any(p.grounding for c in res.crux_cards for p in c.personas.values())
    # the cards' cruxes first, then the worldview step's conflicting assumptions
    n_cards = len(res.crux_cards)
    assert [c.source for c in res.cruxes[:n_cards]] == ["card"] * n_cards
    assert {c.source for c in res.cruxes[n_cards:]} <= {"assumption"}
    # a worldview premise worded like a card's question is not listed twice
    assert not [a for a in res.cruxes[n_cards:] for c in res.crux_cards if same_wording(a.statement, c.question)]
    assert all(c.proposition_ids == [] for c in res.cruxes)  # the engine never knows planted ids
    assert len(res.fault_lines) == len(res.cruxes)
    assert set(res.evidence_ledger) == set(PERSONA_IDS)
    texts = {c.text for p in PERSONA_IDS for c in load_personas([p])[p].corpus}
    assert all(any(t in q for t in texts) for v in res.evidence_ledger.values() for q in v)
    assert res.positions and {p.at for p in res.positions} == {"opening", "closing"}
    assert len(res.position_shifts) == len(PERSONA_IDS)


async def test_parallel_rounds_are_concurrent_and_rebuttals_sequential() -> None:
    backend = ScriptedBackend(sim())
    r = await run({"detection_votes": 3, "vote_threshold": 2}, backend=backend)
    assert backend.peak["opening"] == 4 and backend.peak["take"] == 4 and backend.peak["closing"] == 4
    assert backend.peak["detect_disagreement"] == 3  # a vote's calls run together
    assert backend.peak["rebuttal"] == 1
    stages = r.ctx.scratch["timeline"].stages
    assert [len(s.chains) for s in stages if s.name == "opening"] == [4]


async def test_model_allocation_follows_seed_and_config_override() -> None:
    backend = ScriptedBackend(sim())
    await run(backend=backend, allocation={"exit_check": {"tier": "strong", "temperature": 0.5}})
    by = {r.purpose: r for r in backend.requests}
    assert by["decompose"].tier.value == "fast" and by["decompose"].temperature == 0.3
    assert by["detect_disagreement"].tier.value == "fast" and by["detect_disagreement"].temperature == 0.2
    assert by["card"].tier.value == "strong" and by["card"].temperature == 0.3
    assert by["crux_turn"].temperature == 0.75 and by["summarize"].tier.value == "fast"
    assert by["exit_check"].tier.value == "strong" and by["exit_check"].temperature == 0.5


def _detection(pairs: list[list[str]], claim: str = "Is X true?") -> dict[str, Any]:
    return {
        "disagreements": [
            {"has_direct_opposition": True, "has_specific_claim": True, "topic_relevant": True, "personas": p, "claim": claim}
            for p in pairs
        ]
    }


async def test_majority_vote_needs_two_of_three() -> None:
    pair = ["maximalist", "goldbug"]
    # per round: votes 0,1 positive in round 1 (calls 0-2), only vote 3 positive in round 2 (calls 3-5)
    def script(req: LLMRequest, n: int) -> dict[str, Any]:
        positive = n in (0, 1, 3)
        return _detection([pair]) if positive else {"disagreements": []}

    params = {"n_aspects": 2, "detection_votes": 3, "vote_threshold": 2}
    r = await run(params, backend=ScriptedBackend(sim(), script={"detect_disagreement": script}))
    detected = [e for e in r.result.events if e.type == "disagreement_detected"]
    assert len(detected) == 1 and detected[0].votes == 2  # type: ignore[union-attr]
    assert types(r).count("clash_start") == 1


async def test_one_detection_call_per_round_by_default() -> None:
    backend = ScriptedBackend(sim())
    r = await run({"n_aspects": 3}, backend=backend)
    assert backend.counts["detect_disagreement"] == 3 and r.result.complete


async def test_a_round_with_one_speaker_left_asks_no_detection() -> None:
    """Takes a guard kept out can leave one speaker in a round: nothing to oppose, so no call.
    (The speakers object is never touched: any call on it would fail.)"""
    one = [DialogueTurn(id=f"t{i}", turn_index=i, persona_id="maximalist", dialogue="Scarcity is value.", phase="take") for i in range(2)]
    assert await detect(None, one, aspect=None, claims=ClaimIndex(encode=None)) == []  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        two = [*one, one[0].model_copy(update={"persona_id": "goldbug", "id": "t9"})]
        await detect(None, two, aspect=None, claims=ClaimIndex(encode=None))  # type: ignore[arg-type]


async def test_booleans_must_all_be_true() -> None:
    def script(req: LLMRequest, n: int) -> dict[str, Any]:
        d = _detection([["maximalist", "goldbug"]])
        d["disagreements"][0]["topic_relevant"] = False  # off-topic dispute
        return d

    r = await run(backend=ScriptedBackend(sim(), script={"detect_disagreement": script}))
    assert "disagreement_detected" not in types(r)


async def test_no_disagreement_skips_clash_and_rooms_and_is_not_called_consensus() -> None:
    r = await run(
        {"worldview": False},
        backend=ScriptedBackend(sim(), script={"detect_disagreement": lambda q, n: {"disagreements": []}}),
    )
    t = types(r)
    assert "clash_start" not in t and "crux_room_spawning" not in t
    assert r.result.crux_cards == [] and r.result.regime.value == "no_disagreement_found"
    assert "not a consensus" in r.result.regime_description
    assert r.result.complete


async def test_worldview_keeps_the_buried_premises_when_the_debate_names_none() -> None:
    """Detection finds nothing, but the worldview step's conflicting assumptions are kept as
    cruxes: each names a planted contested premise (by its text), never the topic, with each
    side's assumption labelled by persona; the regime says partial, not consensus."""
    backend = ScriptedBackend(sim(), script={"detect_disagreement": lambda q, n: {"disagreements": []}})
    r = await run(backend=backend)
    res = r.result
    # the positions come with the openings; one reader call per pair
    n = len(PERSONA_IDS)
    assert "worldview_positions" not in backend.counts and backend.counts["crux_pairs"] == n * (n - 1) // 2
    assert all("positions" in (q.output_schema.model_fields if q.output_schema else {}) for q in backend.requests
               if q.purpose == "opening")
    assert res.crux_cards == [] and res.cruxes
    assert {c.source for c in res.cruxes} == {"assumption"}
    planted = planted_contested()
    for c in res.cruxes:
        assert planted_of(c.statement) in planted
        assert c.statement.rstrip("?") != TOPIC.rstrip("?") and not INTERNAL_ID.search(c.statement)
        assert c.yes_side and c.no_side and all(s.statement for s in c.yes_side + c.no_side)
        assert {s.persona_id for s in c.yes_side} != {s.persona_id for s in c.no_side}
    assert res.regime.value == "partial" and "conflicting assumption" in res.regime_description
    said = [e.message for e in res.events if e.type == "status"]  # type: ignore[union-attr]
    assert sum(m.startswith("Buried premise") for m in said) == len(res.cruxes)


async def test_worldview_off_makes_no_worldview_calls() -> None:
    backend = ScriptedBackend(sim())
    r = await run({"worldview": False}, backend=backend)
    assert "worldview_positions" not in backend.counts and "crux_pairs" not in backend.counts
    assert all(c.source == "card" for c in r.result.cruxes)


async def test_unrepairable_detection_is_skipped_with_warning() -> None:
    r = await run(backend=ScriptedBackend(sim(), fail=["detect_disagreement"]))
    warnings = [e for e in r.result.events if e.type == "engine_error"]
    assert warnings and all(w.level == "warning" for w in warnings)  # type: ignore[union-attr]
    # besides the echo guard's (the small deck's personas repeat their openings), only detection warns
    assert {w.purpose for w in warnings if not w.purpose.startswith("guard_")} == {"detect_disagreement"}  # type: ignore[union-attr]
    assert r.result.complete and "clash_start" not in types(r)


CLAIMS = [
    "Is a national reserve a prudent use of public money?",
    "Can custody of private keys be made safe for a government?",
    "Does burning energy secure a payment network?",
    "Will other countries copy the first mover?",
]


async def test_queue_holds_at_most_two_claims_per_round() -> None:
    pairs = [["maximalist", "goldbug"], ["trader", "protocol_dev"], ["maximalist", "trader"], ["goldbug", "protocol_dev"]]

    def script(req: LLMRequest, n: int) -> dict[str, Any]:
        return {"disagreements": [_detection([p], claim=CLAIMS[i])["disagreements"][0] for i, p in enumerate(pairs)]}

    r = await run({"n_aspects": 1}, backend=ScriptedBackend(sim(), script={"detect_disagreement": script}))
    assert types(r).count("disagreement_detected") == 4
    assert types(r).count("clash_start") == 2


async def test_every_opposed_pair_on_a_claim_stays_in_the_queue() -> None:
    # three pairs oppose on one claim, worded differently by each vote: all three clash
    pairs = [["maximalist", "goldbug"], ["trader", "maximalist"], ["protocol_dev", "maximalist"]]
    wordings = ["Would government purchases push up the price of bitcoin?", "Whether government purchases push up the price of bitcoin", "Would government purchases push up the price of bitcoin at all?"]

    def script(req: LLMRequest, n: int) -> dict[str, Any]:
        return {"disagreements": [_detection([p], claim=wordings[n % 3])["disagreements"][0] for p in pairs]}

    params = {"n_aspects": 1, "max_rooms": 0, "pairs_per_claim": None, "detection_votes": 3, "vote_threshold": 2}
    r = await run(params, backend=ScriptedBackend(sim(), script={"detect_disagreement": script}))
    starts = [e for e in r.result.events if e.type == "clash_start"]
    assert sorted(tuple(sorted(e.personas)) for e in starts) == sorted(tuple(sorted(p)) for p in pairs)  # type: ignore[union-attr]
    claims = {e.candidate.claim for e in r.result.events if e.type == "disagreement_detected"}  # type: ignore[union-attr]
    assert len(claims) == 1  # three wordings, one claim
    # by default one pair clashes on a claim (the first one the detection named); all are detected
    r = await run({"n_aspects": 1, "max_rooms": 0}, backend=ScriptedBackend(sim(), script={"detect_disagreement": script}))
    starts = [e for e in r.result.events if e.type == "clash_start"]
    assert [sorted(e.personas) for e in starts] == [sorted(pairs[0])]  # type: ignore[union-attr]
    assert sum(e.type == "disagreement_detected" for e in r.result.events) == 3


async def test_no_room_twice_for_same_pair_and_claim() -> None:
    # No annotations (like a real LLM): the claim text is the key; the same pair+claim every round.
    backend = ScriptedBackend(
        sim(),
        script={"detect_disagreement": lambda q, n: _detection([["maximalist", "goldbug"]], "Would government purchases push up the price?")},
    )
    r = await run({"max_rooms": 5}, backend=backend)
    assert types(r).count("clash_start") >= 1
    spawns = [e for e in r.result.events if e.type == "crux_room_spawning"]
    assert len(spawns) <= 1
    assert r.result.complete


async def test_turns_carry_only_what_their_replies_named() -> None:
    backend = ScriptedBackend(sim())
    r = await run(backend=backend)
    res = r.result
    assert res.complete and res.transcript
    deck_ids = {p.id for p in propositions()}
    # a turn addresses only ids its prompt listed: the topic or a contested claim (c1, c2...)
    assert all(set(t.proposition_ids) <= {"topic"} | {f"c{i}" for i in range(1, 40)} for t in res.transcript)
    assert not any(set(t.proposition_ids) & deck_ids for t in res.transcript)
    assert any(re.fullmatch(r"c\d+", a) for t in res.transcript for a in t.proposition_ids)
    for q in backend.requests:
        assert "proposition_id" not in q.hints.extra
        shown = q.hints.extra.get("shown", {})
        assert all(f"[{cid}] {text}" in q.user for cid, text in shown.items())
        if q.purpose in ("rebuttal", "crux_turn"):
            assert q.hints.focus and q.hints.focus in q.user  # the claim in front of the speaker, as text
    assert len(res.position_shifts) == len(PERSONA_IDS)
    statements = {TOPIC} | {e.candidate.claim for e in res.events if e.type == "disagreement_detected"}  # type: ignore[union-attr]
    assert all(g.statement in statements | {c.question for c in res.crux_cards} for g in res.common_ground)


def test_clash_has_two_to_four_alternating_rebuttals(default: DebateRun) -> None:
    res = default.result
    events = res.events
    for i, e in enumerate(events):
        if e.type != "clash_start":
            continue
        clash: list[DialogueTurn] = []
        for f in events[i + 1 :]:
            if f.type == "message_posted" and f.phase == "clash":  # type: ignore[union-attr]
                clash.append(f.message)  # type: ignore[union-attr]
            elif f.type != "engine_error":
                break
        assert 2 <= len(clash) <= 4
        assert [t.persona_id for t in clash] == [e.personas[k % 2] for k in range(len(clash))]  # type: ignore[union-attr]


async def test_a_concession_in_a_clash_is_a_resolved_crux_with_its_reason() -> None:
    pair = ["maximalist", "goldbug"]
    claim = "Does a fixed supply make bitcoin a better store of value?"

    def rebuttal(req: LLMRequest, n: int) -> dict[str, Any]:
        if n == 0:  # the very first rebuttal concedes, naming what moved it
            return {"utterance": "I'll grant that. You have met my condition: scarcity held through every cycle.",
                    "move": "CONCEDE", "stance": "uncertain", "addresses": ["c1"], "named_reason": "scarcity held through every cycle"}
        return {"utterance": "Scarcity is what no central bank can debase.", "move": "CHALLENGE", "stance": "pro", "addresses": ["c1"]}

    backend = ScriptedBackend(sim(), script={"detect_disagreement": lambda q, n: _detection([pair], claim), "rebuttal": rebuttal})
    # poll off: the card a scripted clash settles is the subject here, not who stands where asked alone
    res = (await run({"n_aspects": 1, "poll": False}, backend=backend)).result
    clash = [e.message for e in res.events if e.type == "message_posted" and e.phase == "clash"]  # type: ignore[union-attr]
    assert len(clash) == 2 and clash[0].persona_id != clash[1].persona_id  # a real exchange, not one turn
    assert "crux_room_spawning" not in [e.type for e in res.events]
    [card] = res.crux_cards
    assert "scarcity held through every cycle" in (card.resolution or "")
    assert card.resolved == cards_agree(card)  # resolved only when the positions agree
    assert card.crux_room_id == "" and set(card.personas) == set(pair)
    assert [c.reason for c in res.concession_trail] == ["scarcity held through every cycle"]


async def test_room_phases_steelman_topic_anchor_and_bounded_context() -> None:
    backend = ScriptedBackend(sim())
    r = await run({"room_min_exchange": 6}, backend=backend)
    res = r.result
    rooms: dict[str, list[Any]] = {}
    for e in res.events:
        if e.type == "crux_message":
            rooms.setdefault(e.room_id, []).append(e)  # type: ignore[union-attr]
    assert rooms
    for msgs in rooms.values():
        phases = [m.room_phase for m in msgs]
        # a room after a clash goes on from it: each side's clash turn is its position statement
        assert "position" not in phases and phases[0] == "exchange"
        first_conv = phases.index("convergence") if "convergence" in phases else len(phases)
        assert 2 <= phases[:first_conv].count("exchange") <= 8
        assert len(msgs) <= 20
    prompts = backend.users("crux_turn")
    assert all(TOPIC in p for p in prompts)
    steel = [p for p in prompts if "the other side's strongest argument" in p]
    assert steel, "exchanges beyond turn 4 must carry the steelman prompt"
    for p in prompts:  # bounded: the claim to answer and at most three own points, no transcript
        assert p.count("The claim to answer: ") <= 1
        own = p.split("Your earlier points", 1)[1].split("\n\n")[0] if "Your earlier points" in p else ""
        assert len([ln for ln in own.splitlines() if ln.startswith("- ")]) <= 3


async def test_room_without_convergence_stops_at_safety_cap() -> None:
    def no(req: LLMRequest, n: int) -> dict[str, Any]:
        return {"same_core": False} if "same_core" in req.output_schema.model_fields else {"crux_surfaced": False}  # type: ignore[union-attr]

    def new_point(reply: BaseModel) -> BaseModel:
        # the simulated speakers of a long room run out of points and say an earlier turn again,
        # which the echo guard keeps out, and two turns kept out end the exchange before its second
        # check: each crux turn gets one point of its own, so what is tested is the exit check
        words = next(n for n in type(reply).model_fields if n not in TurnReply.model_fields and isinstance(getattr(reply, n), str))
        fresh = next(counter)
        point = " ".join(f"{w}{fresh}" for w in ("ledger", "audit", "quarter", "vault", "treaty", "mandate", "window", "budget", "index"))
        return reply.model_copy(update={words: f"{getattr(reply, words)} New point: {point}."})

    counter = itertools.count()
    backend = ScriptedBackend(sim(), script={"exit_check": no}, edit={"crux_turn": new_point})
    r = await run({"max_rooms": 1}, backend=backend)
    completes = [e for e in r.result.events if e.type == "crux_room_complete"]
    # cores that differ get one more exchange round and a second check, then the card: no loop
    checks = [q for q in backend.requests if q.output_schema is not None and "same_core" in q.output_schema.model_fields]
    assert len(completes) == 1 and len(checks) == 2
    assert completes[0].turns < 20 and completes[0].card_id  # type: ignore[union-attr]
    assert r.result.complete
    # a turn cap below that ends the room at the cap
    r = await run({"max_rooms": 1, "room_turn_cap": 6}, backend=ScriptedBackend(sim(), script={"exit_check": no}, edit={"crux_turn": new_point}))
    completes = [e for e in r.result.events if e.type == "crux_room_complete"]
    assert len(completes) == 1 and completes[0].turns == 6  # type: ignore[union-attr]
    # a cap one above the exchange is not overrun by the convergence round, which asks both sides at once
    params = {"max_rooms": 1, "room_min_exchange": 0, "room_max_exchange": 2, "room_turn_cap": 5}
    r = await run(params, backend=ScriptedBackend(sim(), script={"exit_check": no}, edit={"crux_turn": new_point}))
    completes = [e for e in r.result.events if e.type == "crux_room_complete"]
    assert len(completes) == 1 and completes[0].turns <= 5  # type: ignore[union-attr]


async def test_unknown_grounding_id_is_dropped_and_the_card_kept() -> None:
    def poison(card: Any) -> Any:
        assert isinstance(card, CardReply)
        card.personas[0].grounding_quotes.append("no-such-chunk")
        return card

    clean = (await run()).result
    r = await run(backend=ScriptedBackend(sim(), edit={"card": poison}))
    res = r.result
    assert res.crux_cards and len(res.crux_cards) == len(clean.crux_cards)
    assert not any("no-such-chunk" in p.grounding_quotes for c in res.crux_cards for p in c.personas.values())
    warnings = [e for e in res.events if e.type == "engine_error" and e.purpose == "card"]  # type: ignore[union-attr]
    assert len(warnings) == len(res.crux_cards)
    assert all("no-such-chunk" in w.error and w.level == "warning" and "kept the card" in w.error for w in warnings)  # type: ignore[union-attr]
    assert r.ctx.scratch["rejected_cards"][0]["chunk_ids"] == ["no-such-chunk"]


async def test_card_with_a_bad_field_is_repaired_once_then_dropped(deck: Path) -> None:
    def drop_one(card: Any) -> Any:
        assert isinstance(card, CardReply)
        card.personas = card.personas[:1]  # leaves out a participant
        return card

    backend = ScriptedBackend(sim(), edit={"card": drop_one})
    r = await run(backend=backend)
    res = r.result
    attempts = [q for q in backend.requests if q.purpose == "card"]
    repairs = [q for q in attempts if "Your previous card was unusable" in q.user]
    assert attempts and len(repairs) * 2 == len(attempts)  # each card asked for once more, no more
    assert res.crux_cards == [] and res.complete
    warnings = [e for e in res.events if e.type == "engine_error" and e.purpose == "card"]  # type: ignore[union-attr]
    assert len(warnings) == len(repairs) and all("dropped after one repair" in w.error for w in warnings)  # type: ignore[union-attr]

    def topic_then_fixed(req: LLMRequest, n: int) -> dict[str, Any]:
        who = re.search(r" between (.+?) and (.+?) discussed: ", req.user).groups()  # type: ignore[union-attr]  # the pair the prompt names
        said = {NAMES[t.speaker_id]: " ".join(t.text.split()[:6]) for t in req.hints.turns}  # each side quotes its own words
        card = {
            "question": TOPIC if "unusable" not in req.user else "Do drawdowns shrink with each halving cycle?",
            "disagreement_type": "evidence", "diagnosis": "They read the same price history differently.",
            "personas": [{"persona_id": p, "position": pos, "reasoning": "r", "quote": said.get(p, "")}
                         for p, pos in zip(who, ("YES", "NO"), strict=True)],
        }
        return card

    # poll off: the scripted card's sides are the test's, not the personas'
    res = (await run({"max_rooms": 1, "poll": False}, backend=ScriptedBackend(sim(), script={"card": topic_then_fixed}))).result
    assert res.crux_cards and all(c.question != TOPIC for c in res.crux_cards)


async def test_persona_with_bad_grounding_in_its_files_still_gets_valid_cards(deck: Path) -> None:
    write_test_deck(deck, bad_grounding_for="goldbug")  # goldbug's p1 stance cites a missing chunk
    res = (await run()).result
    assert res.complete and res.crux_cards
    for c in res.crux_cards:
        for pid, pos in c.personas.items():
            assert set(pos.grounding_quotes) <= load_personas([pid])[pid].chunk_ids()


async def test_unrepairable_card_is_skipped_with_warning() -> None:
    res = (await run(backend=ScriptedBackend(sim(), fail=["card"]))).result
    assert res.crux_cards == [] and res.complete
    assert any(e.type == "engine_error" and e.purpose == "card" for e in res.events)  # type: ignore[union-attr]


async def test_decomposition_capped_and_fallback() -> None:
    five = {"aspects": [{"label": f"Aspect {w}", "description": "d"} for w in "abcde"]}
    r = await run({"n_aspects": 4}, backend=ScriptedBackend(sim(), script={"decompose": lambda q, n: five}))
    assert len(r.result.aspects) == 4
    r = await run(backend=ScriptedBackend(sim(), fail=["decompose"]))
    assert [a.label for a in r.result.aspects] == [TOPIC]
    assert any(e.type == "engine_error" and e.purpose == "decompose" for e in r.result.events)  # type: ignore[union-attr]
    with pytest.raises(EngineConfigError, match="n_aspects"):
        DebateRun(DebateConfig(topic=TOPIC, persona_ids=list(PERSONA_IDS), engine="panel", params={"n_aspects": 5}))


def _clone(deck: Path, n: int) -> list[str]:
    ids = []
    for i in range(n):
        new = f"clone{i}"
        shutil.copytree(deck / "trader", deck / new)
        for name in ("contract.json", "stances.json", "beliefs.json"):
            f = deck / new / name
            f.write_text(f.read_text().replace('"personaId": "trader"', f'"personaId": "{new}"'))
        ids.append(new)
    decks = json.loads((deck / "decks.json").read_text())
    decks["decks"][0]["personaIds"] += ids  # the clones belong to the deck
    (deck / "decks.json").write_text(json.dumps(decks))
    return ids


def test_params_max_personas_fails_when_the_run_is_built() -> None:
    # The check runs in DebateRun's constructor: no backend is made and no call is spent.
    config = DebateConfig(topic=TOPIC, persona_ids=list(PERSONA_IDS), engine="panel", params={"max_personas": 3})
    backend = ScriptedBackend(sim())
    with pytest.raises(EngineConfigError, match="at most 3 personas.*got 4"):
        DebateRun(config, backend=backend)
    assert backend.requests == []
    assert DebateRun(config.model_copy(update={"params": {"max_personas": 4}}), backend=backend).params.max_personas == 4  # type: ignore[attr-defined]


async def test_persona_count_limits(deck: Path) -> None:
    with pytest.raises(EngineConfigError, match="2–12 personas; got 1"):
        DebateRun(DebateConfig(topic=TOPIC, persona_ids=["trader"], engine="panel"))
    seven = list(PERSONA_IDS) + _clone(deck, 3)
    with pytest.raises(EngineConfigError, match="at most 6 personas.*got 7"):
        await run(persona_ids=seven)
    with pytest.raises(EngineConfigError, match="at most 3 personas"):
        await run({"max_personas": 3})
    r = await run({"max_personas": 7, "n_aspects": 1, "max_rooms": 0}, persona_ids=seven)
    assert r.result.complete


def test_context_stays_within_budget_however_long(default: DebateRun) -> None:
    names = {p: p.title() for p in PERSONA_IDS}
    memory = DebateMemory(topic=TOPIC, names=names)
    memory.summaries = [(f"round {i}", "A long summary sentence about who argued what. " * 8) for i in range(40)]
    turns = [
        DialogueTurn(id=f"m{i}", turn_index=i, persona_id=PERSONA_IDS[i % 4], dialogue="Words of argument here. " * 20, phase="take")
        for i in range(120)
    ]
    memory.turns = turns
    text = turn_context(memory, "trader", turns[-30:], budget=2000)
    assert count_tokens(text) <= 2000 and text.startswith(f"Debate on: {TOPIC}")
    assert max(default.ctx.scratch["context_tokens"]) <= 2000


async def test_same_seed_same_debate(default: DebateRun) -> None:
    a = default.result
    b = (await run({"n_aspects": 3}, seed=0)).result
    assert [t.dialogue for t in a.transcript] == [t.dialogue for t in b.transcript]
    assert [c.question for c in a.crux_cards] == [c.question for c in b.crux_cards]


class Reversed(ScriptedBackend):
    """Replies to a parallel round in reverse order of the calls (the last call answers first)."""

    async def generate(self, request: LLMRequest) -> Any:
        if request.purpose in ("opening", "take", "closing") and request.hints.speaker_id in PERSONA_IDS:
            for _ in range(4 * (len(PERSONA_IDS) - PERSONA_IDS.index(request.hints.speaker_id))):
                await asyncio.sleep(0)
        return await super().generate(request)


async def test_turn_index_follows_the_order_of_the_calls_not_of_the_replies() -> None:
    backend = Reversed(sim())
    res = (await run({"n_aspects": 1, "max_rooms": 0}, backend=backend)).result
    for phase in ("opening", "take", "closing"):
        turns = [t for t in res.transcript if t.phase == phase]
        assert [t.persona_id for t in sorted(turns, key=lambda t: t.turn_index)] == list(PERSONA_IDS)
    straight = (await run({"n_aspects": 1, "max_rooms": 0})).result
    assert [(t.turn_index, t.dialogue) for t in res.transcript] == [(t.turn_index, t.dialogue) for t in straight.transcript]


def test_common_ground_is_real(default: DebateRun) -> None:
    res = default.result
    last: dict[tuple[str, str], str | None] = {}
    for t in res.transcript:
        for p in t.proposition_ids:
            last[(t.persona_id, p)] = t.stance
    for g in res.common_ground:
        if g.source == "stances":
            side = "pro" if g.agreed_side and g.agreed_side.value == "YES" else "con"
            assert all(last.get((pid, g.proposition_ids[0])) == side for pid in PERSONA_IDS)
    # the function itself: agreement only where every persona spoke, on the same side
    from crux_lab.analysis.shifts import StanceObservation as O
    from crux_lab.engines.crux_room.outcome import common_ground

    obs = [O("a", "p6", "pro", 0), O("b", "p6", "pro", 1), O("c", "p6", "pro", 2),
           O("a", "p7", "pro", 3), O("b", "p7", "pro", 4),  # c never spoke on p7: no common ground
           O("a", "p1", "pro", 5), O("b", "p1", "con", 6), O("c", "p1", "pro", 7)]
    ground = common_ground(["a", "b", "c"], obs, [], {"p6": "six", "p7": "seven", "p1": "one"})
    assert [(g.id, g.statement) for g in ground] == [("cg-p6", "six")]


def test_engine_is_registered() -> None:
    from crux_lab.engines import available, get

    assert isinstance(get("panel"), PanelEngine) and "panel" in available()


def test_message_counts_by_phase(default: DebateRun) -> None:
    res = default.result
    c = Counter(e.phase for e in res.events if e.type == "message_posted")  # type: ignore[union-attr]
    assert c["opening"] == 4 and c["take"] == 12 and c["closing"] + closings_kept_out(res) == 4
