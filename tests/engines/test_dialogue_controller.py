"""The moderator of the dialogue/dcg engines: turn-taking, steering, triggers, phases."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from crux_lab.engines.dialogue.controller import Controller, ControllerSettings, gist
from crux_lab.models import DialogueTurn, Move

PHASES = {1: "opening", 2: "free_exchange", 3: "crux_seeking", 4: "resolution"}


def make_turn(i: int, who: str, move: Move = Move.CLAIM, text: str | None = None, phase: int = 2) -> DialogueTurn:
    return DialogueTurn(
        id=f"t{i}", turn_index=i, persona_id=who, dialogue=text or f"turn {i} by {who} about topic {i}",
        move=move, phase=PHASES[phase], phase_number=phase,  # type: ignore[arg-type]
    )


def controller(ids: list[str], encoder=None, **settings) -> Controller:  # type: ignore[no-untyped-def]
    c = Controller(persona_ids=ids, settings=ControllerSettings(**settings), encoder=encoder)
    c.enter_phase(2)
    return c


def play(c: Controller, n: int, move: Move = Move.CLAIM) -> list[str]:
    order = []
    for _ in range(n):
        who = c.next_speaker()
        order.append(who)
        c.record(make_turn(len(c.turns), who, move))
    return order


def test_two_agents_alternate() -> None:
    assert play(controller(["a", "b"]), 6) == ["a", "b", "a", "b", "a", "b"]


@pytest.mark.parametrize("n_agents", [3, 4, 6])
def test_nobody_stays_silent_for_fairness_gap_turns(n_agents: int) -> None:
    ids = [f"p{i}" for i in range(n_agents)]
    c = controller(ids, fairness_gap=3)
    order = play(c, 30)
    assert set(order) == set(ids)
    for i, who in enumerate(order):
        assert who != (order[i - 1] if i else None), "nobody speaks twice in a row"
    # once everyone has had a first turn, nobody waits more than max(gap, N - 1) turns
    first = max(order.index(p) for p in ids)
    bound = max(3, n_agents - 1)
    for p in ids:
        spoken = [i for i, w in enumerate(order) if w == p and i >= first]
        gaps = [b - a for a, b in zip(spoken, spoken[1:], strict=False)]
        assert all(g <= bound + 1 for g in gaps), (p, gaps)


def test_three_agents_bring_in_the_silent_one() -> None:
    c = controller(["a", "b", "c"], fairness_gap=3)
    assert play(c, 4)[:4] == ["a", "b", "a", "c"]


def test_no_steering_when_the_conversation_flows() -> None:
    c = controller(["a", "b"])
    for i, (who, move) in enumerate([("a", Move.CLAIM), ("b", Move.CHALLENGE), ("a", Move.CLARIFY), ("b", Move.CHALLENGE)]):
        c.record(make_turn(i, who, move))
    assert c.steer("a") is None


def test_steering_after_concession_and_reframe_once_each() -> None:
    c = controller(["a", "b"])
    c.record(make_turn(0, "a"))
    c.record(make_turn(1, "b", Move.CHALLENGE))
    c.record(make_turn(2, "a", Move.CONCEDE, "I grant the volatility point. But over cycles it holds."))
    hint = c.steer("b")
    assert hint is not None and hint.situation == "after_concession" and "conceded" in hint.hint
    assert c.steer("b") is None  # only once per concession
    c.record(make_turn(3, "b", Move.REFRAME, "The real question is demand drivers."))
    hint = c.steer("a")
    assert hint is not None and hint.situation == "after_reframe" and "demand drivers" in hint.hint.lower()


def test_crux_seeking_phase_asks_for_the_crux_until_named() -> None:
    c = controller(["a", "b"])
    play(c, 4)
    c.enter_phase(3)
    hint = c.steer("a")
    assert hint is not None and hint.situation == "crux_seeking"
    c.record(make_turn(len(c.turns), "a", Move.PROPOSE_CRUX))
    assert c.steer("a") is None or c.steer("a").situation != "crux_seeking"  # type: ignore[union-attr]


def fake_encoder(texts):  # type: ignore[no-untyped-def]
    """One-hot by first word: identical openings = identical vectors."""
    vocab: dict[str, int] = {}
    rows = []
    for t in texts:
        key = t.split()[0]
        vocab.setdefault(key, len(vocab))
    for t in texts:
        v = np.zeros(16)
        v[zlib.crc32(t.split()[0].encode()) % 16] = 1.0  # deterministic (str hash is salted per process)
        rows.append(v)
    return np.array(rows)


def test_circling_detected_by_embedding_similarity_and_hinted() -> None:
    c = controller(["a", "b"], encoder=fake_encoder, circling_window=6)
    texts = ["alpha same point", "beta same reply", "alpha same point again", "beta same reply again"]
    for i, t in enumerate(texts):
        c.record(make_turn(i, "ab"[i % 2], Move.CHALLENGE, t))
    assert c.circling()
    hint = c.steer("a")
    assert hint is not None and hint.situation == "circling" and "evidence would change your mind" in hint.hint


def test_varied_turns_are_not_circling() -> None:
    c = controller(["a", "b"], encoder=fake_encoder)
    for i, w in enumerate(["alpha", "beta", "gamma", "delta", "eps", "zeta"]):
        c.record(make_turn(i, "ab"[i % 2], Move.CHALLENGE, f"{w} point"))
    assert not c.circling()


def test_phase_2_to_3_on_budget_over_60_percent() -> None:
    c = controller(["a", "b"], max_turns=10)
    play(c, 6)
    assert c.transition() is None  # exactly 60% is not "> 60%"
    play(c, 1)
    step = c.transition()
    assert step is not None and step[0] == 3 and "60%" in step[1]


def test_phase_2_to_3_on_stable_frontier_across_3_crystallizations() -> None:
    c = controller(["a", "b"], max_turns=100)
    play(c, 3)
    for _ in range(2):
        c.crystallized(frontier=frozenset({"arg-1"}), new_nodes=0, changed=False)
    assert c.transition() is None
    c.crystallized(frontier=frozenset({"arg-1"}), new_nodes=0, changed=False)
    assert c.transition() == (3, "contested frontier stable across 3 crystallizations")


def test_phase_3_to_4_rules() -> None:
    c = controller(["a", "b"], max_turns=100)
    c.enter_phase(3)
    c.record(make_turn(0, "a", Move.PROPOSE_CRUX))
    assert c.transition() is None  # one proposal, not acknowledged
    c.record(make_turn(1, "b", Move.PROPOSE_CRUX))
    assert c.transition() == (4, "every agent has proposed a crux")
    d = controller(["a", "b"], max_turns=100)
    d.enter_phase(3)
    d.crux_acknowledged = True
    assert d.transition() == (4, "crux proposed and acknowledged")
    e = controller(["a", "b"], max_turns=20)
    e.enter_phase(3)
    play(e, 17)
    assert e.transition() is None or e.transition()[1].startswith("turn budget")  # type: ignore[index]
    play(e, 1)
    assert e.transition() is not None and "85%" in e.transition()[1]  # type: ignore[index]


def test_phase_3_stops_after_stable_graph() -> None:
    c = controller(["a", "b"], max_turns=100)
    c.enter_phase(3)
    for _ in range(3):
        c.crystallized(frontier=frozenset({"x"}), new_nodes=0, changed=False)
    step = c.transition()
    assert step is not None and step[0] == 4 and "stable" in step[1]


def test_crystallization_triggers() -> None:
    c = controller(["a", "b"], crystallize_every=5, substantive_gap=4)
    c.record(make_turn(0, "a"))
    assert c.crystallization_trigger() is None
    c.record(make_turn(1, "b", Move.CONCEDE))
    assert c.crystallization_trigger() == "concede"
    c.last_crystallized_at = len(c.turns)
    for i, (who, move) in enumerate([("a", Move.CLAIM), ("b", Move.CLAIM), ("a", Move.CLAIM), ("b", Move.CHALLENGE), ("a", Move.CLAIM)]):
        c.record(make_turn(2 + i, who, move))
    assert c.crystallization_trigger() in ("substantive_exchange", "safety_net")
    c.last_crystallized_at = len(c.turns)
    c.record(make_turn(7, "b", Move.CLARIFY))
    assert c.crystallization_trigger() is None
    c.record(make_turn(8, "a", Move.REFRAME))
    assert c.crystallization_trigger() == "reframe"


def test_gist() -> None:
    assert gist("I disagree: supply is fixed at 21 million. Because.") == "supply is fixed at 21 million"


def test_one_sided_hint_only_for_someone_left_out() -> None:
    c = controller(["a", "b", "c"], fairness_gap=3)
    for i, who in enumerate(["a", "b", "a"]):
        c.record(make_turn(i, who, Move.CHALLENGE, f"point {i} about reserves"))
    assert c.next_speaker() == "c"
    hint = c.steer("c")
    assert hint is not None and hint.situation == "one_sided" and "You haven't answered the other side's point" in hint.hint
    assert '"Point 2 about reserves"' in hint.hint and not any(n in hint.hint for n in ("a,", "b's", "c,"))  # no speaker named
    d = controller(["a", "b", "c", "d"], fairness_gap=3)
    play(d, 8)  # a normal four-way rotation: nobody is left out
    assert all((d.steer(p) or None) is None or d.steer(p).situation != "one_sided" for p in "abcd")  # type: ignore[union-attr]
