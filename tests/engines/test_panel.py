"""The panel engine on the simulated backend: flow, events, detection, clash, rooms, cards,
bad input. Scripted wrappers (``ScriptedBackend``) force the rare paths."""

from __future__ import annotations

import asyncio
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from crux_lab.engines.base import EngineConfigError
from crux_lab.engines.crux_room.context import DebateMemory, turn_context
from crux_lab.engines.crux_room.schemas import CardReply
from crux_lab.engines.crux_room.testdeck import (
    PERSONA_IDS,
    TOPIC,
    planted_contested,
    write_test_deck,
)
from crux_lab.engines.crux_room.testing import ScriptedBackend, deck_simulator
from crux_lab.engines.panel import PanelEngine
from crux_lab.llm.base import LLMRequest
from crux_lab.models import DebateConfig, DialogueTurn
from crux_lab.personas.loader import load_personas
from crux_lab.runner import DebateRun
from crux_lab.tokens import count_tokens

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


def test_full_flow_follows_seed_05_event_order(default: DebateRun) -> None:
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
    assert phases[:4] == ["opening"] * 4 and phases[-4:] == ["closing"] * 4
    assert t.count("round_start") == t.count("round_end") == 3
    # every room: spawning -> messages -> (card) -> complete, in order and not interleaved
    rooms = [e for e in res.events if e.type == "crux_room_spawning"]
    assert rooms, "the planted deck must produce at least one crux room"
    for room in rooms:
        rid = room.room_id  # type: ignore[union-attr]
        own = [e for e in res.events if getattr(e, "room_id", None) == rid or (e.type == "crux_card_posted" and e.card.crux_room_id == rid)]  # type: ignore[union-attr]
        assert own[0].type == "crux_room_spawning" and own[-1].type == "crux_room_complete"
        seqs = [e.seq for e in own]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    # transcript built by the runner from message_posted + crux_message
    assert len(res.transcript) == t.count("message_posted") + t.count("crux_message")
    assert len({m.id for m in res.transcript}) == len(res.transcript)
    assert res.aspects == start.aspects  # type: ignore[union-attr]


def test_cards_use_full_schema_and_match_planted_cruxes(default: DebateRun) -> None:
    res = default.result
    planted = planted_contested()
    assert res.crux_cards
    for card in res.crux_cards:
        assert len(card.personas) == 2 and card.crux_room_id and card.source_aspect in {"a1", "a2", "a3"}
        assert card.source_messages and card.diagnosis
        for pid, pos in card.personas.items():
            corpus = load_personas([pid])[pid].chunk_ids()
            assert pos.grounding_quotes and set(pos.grounding_quotes) <= corpus
            assert pos.reasoning
        assert card.proposition_ids[0] in planted
        assert card.disagreement_type.value == planted[card.proposition_ids[0]]
        positions = {p.position.value for p in card.personas.values()}
        assert positions == {"YES", "NO"}
    assert [c.source for c in res.cruxes] == ["card"] * len(res.crux_cards)
    assert len(res.fault_lines) == len(res.crux_cards)
    assert set(res.evidence_ledger) == set(PERSONA_IDS)
    assert all(set(v) <= load_personas([k])[k].chunk_ids() for k, v in res.evidence_ledger.items())
    assert res.positions and {p.at for p in res.positions} == {"opening", "closing"}
    assert len(res.position_shifts) == len(PERSONA_IDS)


async def test_parallel_rounds_are_concurrent_and_rebuttals_sequential() -> None:
    backend = ScriptedBackend(sim())
    r = await run(backend=backend)
    assert backend.peak["opening"] == 4 and backend.peak["take"] == 4 and backend.peak["closing"] == 4
    assert backend.peak["detect_disagreement"] == 3
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

    r = await run({"n_aspects": 2}, backend=ScriptedBackend(sim(), script={"detect_disagreement": script}))
    detected = [e for e in r.result.events if e.type == "disagreement_detected"]
    assert len(detected) == 1 and detected[0].votes == 2  # type: ignore[union-attr]
    assert types(r).count("clash_start") == 1


async def test_booleans_must_all_be_true() -> None:
    def script(req: LLMRequest, n: int) -> dict[str, Any]:
        d = _detection([["maximalist", "goldbug"]])
        d["disagreements"][0]["topic_relevant"] = False  # off-topic dispute
        return d

    r = await run(backend=ScriptedBackend(sim(), script={"detect_disagreement": script}))
    assert "disagreement_detected" not in types(r)


async def test_no_disagreement_skips_clash_and_rooms() -> None:
    r = await run(backend=ScriptedBackend(sim(), script={"detect_disagreement": lambda q, n: {"disagreements": []}}))
    t = types(r)
    assert "clash_start" not in t and "crux_room_spawning" not in t
    assert r.result.crux_cards == [] and r.result.regime.value == "consensus"
    assert r.result.complete


async def test_unrepairable_detection_is_skipped_with_warning() -> None:
    r = await run(backend=ScriptedBackend(sim(), fail=["detect_disagreement"]))
    warnings = [e for e in r.result.events if e.type == "engine_error"]
    assert warnings and all(w.level == "warning" and w.purpose == "detect_disagreement" for w in warnings)  # type: ignore[union-attr]
    assert r.result.complete and "clash_start" not in types(r)


async def test_queue_holds_at_most_two_disagreements_per_round() -> None:
    pairs = [["maximalist", "goldbug"], ["trader", "protocol_dev"], ["maximalist", "trader"], ["goldbug", "protocol_dev"]]

    def script(req: LLMRequest, n: int) -> dict[str, Any]:
        return {"disagreements": [_detection([p], claim=f"Claim {i}")["disagreements"][0] for i, p in enumerate(pairs)]}

    r = await run({"n_aspects": 1}, backend=ScriptedBackend(sim(), script={"detect_disagreement": script}))
    assert types(r).count("disagreement_detected") == 4
    assert types(r).count("clash_start") == 2


async def test_no_room_twice_for_same_pair_and_claim() -> None:
    # No annotations (like a real LLM): the claim text is the key; the same pair+claim every round.
    backend = ScriptedBackend(
        sim(), strip_annotations=True,
        script={"detect_disagreement": lambda q, n: _detection([["maximalist", "goldbug"]], "Is a reserve prudent?")},
    )
    r = await run({"max_rooms": 5}, backend=backend)
    assert types(r).count("clash_start") >= 1
    spawns = [e for e in r.result.events if e.type == "crux_room_spawning"]
    assert len(spawns) <= 1
    assert r.result.complete


async def test_works_without_simulator_annotations() -> None:
    r = await run(backend=ScriptedBackend(sim(), strip_annotations=True))
    res = r.result
    assert res.complete and res.transcript
    assert all(t.proposition_ids == [] for t in res.transcript)
    assert len(res.position_shifts) == len(PERSONA_IDS)
    # common ground is never invented from missing data
    assert all(g.source != "stances" for g in res.common_ground)


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
        assert phases[:2] == ["position", "position"]
        first_conv = phases.index("convergence") if "convergence" in phases else len(phases)
        assert 2 <= phases[2:first_conv].count("exchange") <= 8
        assert len(msgs) <= 20
    prompts = backend.users("crux_turn")
    assert all(TOPIC in p for p in prompts)
    steel = [p for p in prompts if "Steelman" in p]
    assert steel, "exchanges beyond turn 4 must carry the steelman prompt"
    for p in prompts:
        block = p.split("Last exchanges:\n", 1)[1].split("\n\n")[0] if "Last exchanges:" in p else ""
        assert len([ln for ln in block.splitlines() if ln.strip()]) <= 4


async def test_room_without_convergence_stops_at_safety_cap() -> None:
    def no(req: LLMRequest, n: int) -> dict[str, Any]:
        return {"same_core": False} if "same_core" in req.output_schema.model_fields else {"crux_surfaced": False}  # type: ignore[union-attr]

    r = await run({"max_rooms": 1}, backend=ScriptedBackend(sim(), script={"exit_check": no}))
    completes = [e for e in r.result.events if e.type == "crux_room_complete"]
    assert len(completes) == 1 and completes[0].turns == 20  # type: ignore[union-attr]
    assert r.result.complete


async def test_card_citing_missing_chunk_is_rejected_and_recorded() -> None:
    def poison(card: Any) -> Any:
        assert isinstance(card, CardReply)
        card.personas[0].grounding_quotes.append("no-such-chunk")
        return card

    r = await run(backend=ScriptedBackend(sim(), edit={"card": poison}))
    res = r.result
    assert res.crux_cards == []
    warnings = [e for e in res.events if e.type == "engine_error" and e.purpose == "card"]  # type: ignore[union-attr]
    assert warnings and all("no-such-chunk" in w.error and w.level == "warning" for w in warnings)  # type: ignore[union-attr]
    assert r.ctx.scratch["rejected_cards"] and r.ctx.scratch["rejected_cards"][0]["chunk_ids"] == ["no-such-chunk"]
    assert all(e.card_id is None for e in res.events if e.type == "crux_room_complete")  # type: ignore[union-attr]


async def test_persona_with_bad_grounding_in_its_files_gets_card_rejected(deck: Path) -> None:
    write_test_deck(deck, bad_grounding_for="goldbug")  # goldbug's p1 stance cites a missing chunk
    res = (await run()).result
    assert all("goldbug" not in c.personas or "p1" not in c.proposition_ids for c in res.crux_cards)
    rejected = [e for e in res.events if e.type == "engine_error" and "goldbug-c-missing" in e.error]  # type: ignore[union-attr]
    rooms_p1 = [e for e in res.events if e.type == "crux_room_spawning" and "goldbug" in e.personas and "store of value" in e.question]  # type: ignore[union-attr]
    assert len(rejected) == len(rooms_p1)


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
    assert [(g.proposition_ids, g.statement) for g in ground] == [(["p6"], "six")]


def test_engine_is_registered() -> None:
    from crux_lab.engines import available, get

    assert isinstance(get("panel"), PanelEngine) and "panel" in available()


def test_message_counts_by_phase(default: DebateRun) -> None:
    res = default.result
    c = Counter(e.phase for e in res.events if e.type == "message_posted")  # type: ignore[union-attr]
    assert c["opening"] == 4 and c["take"] == 12 and c["closing"] == 4
