"""What the engines send to a model reads plainly: found by reading real requests."""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path

import pytest

import crux_lab.engines
from crux_lab.engines.crux_room.context import room_context
from crux_lab.engines.dialogue.prompts import FINAL_CLEANUP
from crux_lab.models import DebateConfig, DialogueTurn
from crux_lab.personas.loader import load_personas
from crux_lab.runner import DebateRun
from tests.engines.crux_deck import NAMES, PERSONA_IDS, TOPIC
from tests.engines.scripted import ScriptedBackend, deck_simulator


@pytest.fixture(scope="module")
def panel_requests(library: Path) -> ScriptedBackend:
    """Every request of one default panel debate on the test deck (corpus chunks cut at 60 characters)."""

    async def go() -> ScriptedBackend:
        backend = ScriptedBackend(deck_simulator())
        config = DebateConfig(
            topic=TOPIC, persona_ids=list(PERSONA_IDS), engine="panel",
            params={"shift_embeddings": False, "n_aspects": 2},
        )
        async for _ in DebateRun(config, backend=backend).events():
            pass
        return backend

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CRUX_LAB_PERSONAS", str(library))
        mp.setattr("crux_lab.engines.crux_room.room.CHUNK_CHARS", 60)  # the deck's chunks are short: cut them
        return asyncio.run(go())


def test_no_request_says_yous(panel_requests: ScriptedBackend) -> None:
    assert panel_requests.requests
    assert not [r.user for r in panel_requests.requests if "You's" in r.user]
    assert any("Your position:" in r.user for r in panel_requests.requests)  # the room context was rendered


def test_room_context_gives_the_reader_its_own_position_and_the_other_side_as_a_claim() -> None:
    turn = DialogueTurn(id="t1", turn_index=0, persona_id="a", dialogue="Rents fell.", phase="crux_room")
    text = room_context("T", "Q", "a", {"a": "Rents fell.", "b": "Bob says they rose."}, [turn], {"a": "Ann", "b": "Bob"})
    assert "Your position: Rents fell." in text
    assert "The claim to answer: another speaker says they rose." in text
    assert "Bob" not in text and "Ann" not in text  # no speaker is named


def test_detect_mentions_listed_claims_only_when_some_are_listed(panel_requests: ScriptedBackend) -> None:
    detects = panel_requests.users("detect_disagreement")
    assert detects
    for user in detects:
        listed = "Claims found earlier in this debate:" in user
        assert ("listed below" in user) == listed, user


def test_exit_and_convergence_checks_name_the_debaters(panel_requests: ScriptedBackend) -> None:
    checks = panel_requests.users("exit_check")
    assert checks, "the default panel debate must open a room"
    for user in checks:
        assert not re.search(r"^(- )?(You|Speaker [A-Z]):", user, re.M), user
        assert any(f"{name}:" in user for name in NAMES.values()), user


def test_card_chunk_menu_never_cuts_a_word(panel_requests: ScriptedBackend, use_test_deck: Path) -> None:
    chunks = {c.id: " ".join(c.text.split()) for p in load_personas(PERSONA_IDS).values() for c in p.corpus}
    menu = [
        m.groups() for u in panel_requests.users("card") for m in re.finditer(r"^\s+\[([^\]]+)\] (.*) \(source: ", u, re.M)
    ]
    assert menu
    assert any(excerpt.endswith("…") for _, excerpt in menu), "the test deck must have a chunk long enough to cut"
    for cid, excerpt in menu:
        whole = chunks[cid]
        if excerpt == whole:
            continue
        kept = excerpt.removesuffix("…").rstrip()
        assert excerpt.endswith("…") and whole.startswith(kept), (excerpt, whole)
        assert whole[len(kept)] in " ,;:", (excerpt, whole)  # the cut falls between words


def _prompt_strings() -> list[tuple[str, int, str]]:
    """Every string literal of the engines that is not a docstring (the text sent to models)."""
    out = []
    root = Path(crux_lab.engines.__file__).parent
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
        }
        out += [
            (path.name, node.lineno, node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
        ]
    return out


def test_no_prompt_cites_a_seed_or_a_section() -> None:
    cited = [(f, n, s[:80]) for f, n, s in _prompt_strings() if re.search(r"\bseed \d|§", s, re.I)]
    assert cited == []
    assert "seed" not in FINAL_CLEANUP and "removed_arg_ids" in FINAL_CLEANUP


def test_a_long_argument_graph_leaves_the_topic_and_the_last_point_in_a_turn_prompt() -> None:
    """Found in a three-speaker dialogue run: fifteen listed arguments took the turn's whole
    budget, and the prompt showed "Debate on: Is Bitcoin a better …" and no turn at all."""
    from crux_lab.engines.dialogue.prompts import (
        EXCHANGE_INSTRUCTION,
        dialogue_message,
        fit_shown,
        shown_block,
    )

    topic = "Is Bitcoin a better long-term store of value than gold?"
    graph = {f"arg-{i}": f"I also hold this: claim number {i} about money, supply and the record since 2009." for i in range(30)}
    last = DialogueTurn(id="t1", turn_index=1, persona_id="b", dialogue="Gold has five thousand years as money.", phase="free_exchange")
    first = DialogueTurn(id="t0", turn_index=0, persona_id="a", dialogue="Bitcoin's supply is fixed.", phase="free_exchange")
    shown = fit_shown(graph)
    user = dialogue_message(persona_id="a", topic=topic, turns=[first, last], names={"a": "Ann", "b": "Bo"},
                            phase="free_exchange", instruction=EXCHANGE_INSTRUCTION, length="2-4 sentences",
                            shown=shown_block(shown, "Positions in the argument graph so far"))
    assert topic in user and last.dialogue in user
    assert "[arg-29]" in user and "[arg-0]" not in user  # the newest positions are listed


SPEAKING = {"opening", "take", "rebuttal", "crux_turn", "closing", "channel_message", "dialogue_turn", "resolution",
            "blackboard_turn"}


@pytest.mark.parametrize("engine", ["dialogue", "dcg", "panel", "crux_rooms", "blitz", "classical"])
def test_a_turn_request_holds_no_transcript_and_names_no_other_speaker(engine: str, library: Path) -> None:
    """Shown a transcript, Qwen2.5-1.5B wrote its next line as whoever spoke last. A turn
    request states the point to answer as a claim, its own points as its own, and names nobody."""

    async def go() -> ScriptedBackend:
        backend = ScriptedBackend(deck_simulator())
        config = DebateConfig(topic=TOPIC, persona_ids=list(PERSONA_IDS), engine=engine, max_turns=8,
                              params={"poll": False})
        async for _ in DebateRun(config, backend=backend).events():
            pass
        return backend

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CRUX_LAB_PERSONAS", str(library))
        backend = asyncio.run(go())
    turns = [r for r in backend.requests if r.purpose in SPEAKING]
    assert turns, engine
    for r in turns:
        me = r.hints.speaker_id
        others = [p for p in PERSONA_IDS if p != me]
        assert not [p for p in others if NAMES[p] in r.user or p in r.user], (engine, r.purpose, r.user)
        assert not re.search(r"^(- )?(You|Speaker [A-Z]|another speaker|you)( \([a-z-]+\))?: ", r.user, re.M), (engine, r.purpose, r.user)
    assert any("The claim to answer: " in r.user for r in turns), engine
