"""Held-out statements of the vendored Polis conversations (real votes, CC BY 4.0, The
Computational Democracy Project): the minds leave them out, and cruxes are scored on them with
sides. Uses the real MiniLM embedder (all-MiniLM-L6-v2) for the cosine 0.8 rule."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crux_lab.analysis.polis import PolisDataError, list_conversations, load_conversation
from crux_lab.analysis.polis_heldout import (
    HeldOut,
    HoldOutError,
    clear_statements,
    divisive_key,
    hold_out,
    mind_leaks,
    minds_without,
    polis_canaries,
    score_items,
)
from crux_lab.analysis.polis_truth import PolisTruth, debate_topic, ground_truth, group_minds
from crux_lab.analysis.recovery import Item
from crux_lab.analysis.textmatch import unit_vectors
from crux_lab.eval.cli import app

DATA = Path(__file__).resolve().parents[1] / "data" / "polis"
BREXIT = DATA / "brexit-consensus"


@pytest.fixture(scope="module")
def splits() -> dict[str, tuple[PolisTruth, HeldOut, list, dict[str, int]] | str]:
    """Every vendored conversation: its truth, split, minds and persona -> group, or why it is left out."""
    out: dict[str, tuple[PolisTruth, HeldOut, list, dict[str, int]] | str] = {}
    for folder in list_conversations(DATA):
        try:
            truth = ground_truth(load_conversation(folder))
        except PolisDataError as exc:
            out[folder.name] = str(exc)
            continue
        held = hold_out(truth)
        minds, _ = minds_without(truth, held)
        out[folder.name] = (truth, held, minds, {m.persona_id: m.group for m in minds})
    return out


def test_every_vendored_conversation_is_split_or_named_as_left_out(splits: dict) -> None:
    assert len(splits) == 10
    left_out = {name: why for name, why in splits.items() if isinstance(why, str)}
    assert list(left_out) == ["london.youth.policing"] and "too few votes" in left_out["london.youth.policing"]


def test_no_mind_holds_a_held_out_statement_or_one_within_cosine_0_8(splits: dict) -> None:
    checked = 0
    for name, value in splits.items():
        if isinstance(value, str):
            continue
        truth, held, minds, _ = value
        assert mind_leaks(truth, minds, held) == [], name
        # The same check written out: every mind statement against every held-out statement.
        mind_ids = sorted({m.statement for mind in minds for m in mind.stances})
        held_ids = sorted(held.held)
        assert not set(mind_ids) & set(held_ids), name
        sim = unit_vectors([truth.statements[s].text for s in mind_ids]) @ unit_vectors(
            [truth.statements[s].text for s in held_ids]).T
        assert float(sim.max()) < 0.8, (name, float(sim.max()))
        checked += 1
    assert checked == 9


def test_the_split_holds_the_top_k_a_fifth_of_the_clear_rest_and_their_near_copies(splits: dict) -> None:
    for name, value in splits.items():
        if isinstance(value, str):
            continue
        truth, held, _, _ = value
        assert held.divisive == truth.top_divisive and len(held.divisive) == 5, name
        assert not set(held.divisive) & set(held.fidelity) and not set(held.near) & (set(held.divisive) | set(held.fidelity))
        clear = set(clear_statements(truth))
        assert set(held.fidelity) <= clear - set(held.divisive), name
        assert len(held.fidelity) == max(1, round(0.2 * held.clear_left)), name
        near_vecs = unit_vectors([truth.statements[s].text for s in held.near]) if held.near else None
        if near_vecs is not None:  # each near copy is within 0.8 of a divisive or fidelity statement
            anchors = unit_vectors([truth.statements[s].text for s in held.divisive + held.fidelity])
            assert ((near_vecs @ anchors.T).max(axis=1) >= 0.8).all(), name


def test_the_fidelity_share_is_seeded(splits: dict) -> None:
    truth, held, _, _ = splits["scoop-hivemind.taxes"]
    assert hold_out(truth, seed=0).fidelity == held.fidelity
    assert hold_out(truth, seed=1).fidelity != held.fidelity


def test_a_conversation_with_no_group_left_is_named_and_skipped_with_the_counts(splits: dict) -> None:
    truth, held, _, _ = splits["brexit-consensus"]

    def counts(exclude: frozenset[str]) -> dict[int, int]:
        minds, _ = group_minds(truth, per_group=10**6, n_consensus=0, min_clear=0, exclude=exclude)
        return {m.group: len(m.stances) for m in minds}

    before, after = counts(frozenset()), counts(held.held)
    min_clear = max(after.values()) + 1
    assert min_clear <= min(before.values())  # the whole conversation gives both personas
    with pytest.raises(HoldOutError) as err:
        minds_without(truth, held, per_group=10**6, n_consensus=0, min_clear=min_clear)
    message = str(err.value)
    assert message.startswith("brexit-consensus:") and "skipped" in message and "invented" in message
    for g, n in after.items():
        assert f"group {g}: {n}" in message


def test_a_persona_of_a_group_too_small_after_the_hold_out_is_named(splits: dict) -> None:
    truth, _, minds, _ = splits["scoop-hivemind.ubi"]
    assert 1 not in {m.group for m in minds} and len(minds) == 3
    _, notes = minds_without(truth, hold_out(truth))
    assert any("opinion group 1 of scoop-hivemind.ubi" in n and "no persona" in n for n in notes)


def test_canaries_read_topic_0_and_oracle_1_on_every_conversation(splits: dict) -> None:
    for name, value in splits.items():
        if isinstance(value, str):
            continue
        truth, held, _, groups = value
        topic = debate_topic(load_conversation(DATA / name))
        canaries = polis_canaries(truth, held, groups, topic=topic)
        topic_score = score_items(canaries["topic"], truth, held, groups, topic=topic)
        oracle = score_items(canaries["oracle"], truth, held, groups, topic=topic)
        assert topic_score.recovered == 0 and topic_score.f1 == 0.0, name
        assert (oracle.precision, oracle.recall_at_k, oracle.f1) == (1.0, 1.0, 1.0), (name, oracle)


def test_sides_decide_recovery_in_either_polarity(splits: dict) -> None:
    truth, held, _, groups = splits["brexit-consensus"]
    topic = debate_topic(load_conversation(BREXIT))
    sid = held.divisive[0]
    text = truth.statements[sid].text
    key = divisive_key(truth, sid, groups)
    pro = next(p for p, v in key.items() if v == "pro")
    con = next(p for p, v in key.items() if v == "con")
    assert truth.statements[sid].rate(groups[pro]) > truth.statements[sid].rate(groups[con])
    right = score_items([Item(text, (pro,), (con,))], truth, held, groups, topic=topic)
    flipped = score_items([Item(text, (con,), (pro,))], truth, held, groups, topic=topic)
    both = score_items([Item(text, (pro, con), (con,))], truth, held, groups, topic=topic)
    none = score_items([Item(text)], truth, held, groups, topic=topic)
    assert right.recovered == flipped.recovered == 1 and right.found == [sid]
    assert math.isclose(right.recall_at_k, 1 / 5) and right.precision == 1.0
    assert both.recovered == 0 and both.sides_wrong == 1 and both.matched_by_text == 1
    assert none.recovered == 0 and none.no_sides == 1 and none.matched_by_text == 1 and none.f1 == 0.0
    # A statement the minds hold (not held out) is never recovered, whatever its sides.
    mind_sid = next(s for s in truth.divisive if s not in held.held)
    other = score_items([Item(truth.statements[mind_sid].text, (pro,), (con,))], truth, held, groups, topic=topic)
    assert other.recovered == 0 and other.matched_by_text == 0 and other.precision == 0.0


def test_cli_runs_informed_and_sampled_arms_and_scores_the_canaries_beside(tmp_path: Path) -> None:
    out_json = tmp_path / "s.json"
    args = ["polis", str(BREXIT), "--engines", "direct,direct+informed=true,direct+informed=true+samples=2",
            "--workdir", str(tmp_path / "w"), "--no-store", "--json", str(out_json)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "held out of every mind: 5 divisive" in result.output
    data = json.loads(out_json.read_text())
    rows = {r["engine"]: r for r in data["summary"]}
    assert list(rows) == ["direct", "direct+informed=true", "direct+informed=true+samples=2", "canary:topic", "canary:oracle"]
    assert rows["direct+informed=true+samples=2"]["calls"] == 2 and rows["direct+informed=true"]["calls"] == 1
    assert rows["canary:oracle"]["sides_f1"] == 1.0 and rows["canary:topic"]["sides_f1"] == 0.0
    assert data["conversations"][0]["heldout"]["divisive"] == data["conversations"][0]["top_divisive"]
    # each debate's log line leads with the figure the table reports: held out, with sides
    line = next(x for x in result.output.splitlines() if x.strip().startswith("direct s0"))
    assert line.index("held out, with sides: P") < line.index("by text, any divisive statement: P"), line
    bad = CliRunner().invoke(app, ["polis", str(BREXIT), "--engines", "direct+informed", "--workdir", str(tmp_path / "w")])
    assert bad.exit_code == 2 and "is not KEY=VALUE" in bad.output



def test_compact_items_rescore_to_the_same_figures(tmp_path: Path) -> None:
    from crux_lab.analysis.polis_eval import prepare
    from crux_lab.eval.items import ItemsError
    from crux_lab.eval.polis import rescore_polis, run_polis_eval

    setup = prepare(BREXIT, tmp_path / "lib")
    run = run_polis_eval(setup, ["direct"], tmp_path / "w", store=False, items_dir=tmp_path / "items")
    files = sorted(p.name for p in (tmp_path / "items").glob("*.json"))
    assert files == ["brexit-consensus__canary_oracle__s0.json", "brexit-consensus__canary_topic__s0.json",
                     "brexit-consensus__direct__s0.json"]
    again = {s.engine: s for s in rescore_polis(tmp_path / "items", DATA)}
    for s in run.scores + run.canaries:
        r = again[s.engine]
        assert (r.recovered, r.matched_by_text, r.sides_f1, r.calls) == (s.recovered, s.matched_by_text, s.sides_f1, s.calls)
    assert again["canary:oracle"].sides_f1 == 1.0
    record = json.loads((tmp_path / "items" / "brexit-consensus__canary_oracle__s0.json").read_text())
    assert record["heldout"]["divisive"] == list(setup.truth.top_divisive) and len(record["items"]) == 5
    (tmp_path / "items" / "broken.json").write_text("{}")
    with pytest.raises(ItemsError, match=r"broken\.json"):
        rescore_polis(tmp_path / "items", DATA)
