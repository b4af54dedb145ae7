"""Crux recovery with sides: the canaries on every scenario set, items that state no sides,
the restated topic, the informed and k-sample baselines, and results anyone can re-score."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from crux_lab.analysis.recovery import Item, canaries, score_items, sides_agree
from crux_lab.analysis.scenarios import generate_scenarios, load_scenarios, write_library
from crux_lab.embed import get_embedder
from crux_lab.eval.cli import app
from crux_lab.eval.items import (
    debate_record,
    load_table,
    pivots_against_flips,
    pivots_markdown,
    poll_against_debate,
    poll_markdown,
    rescore,
    table_markdown,
    write_record,
)
from crux_lab.eval.readme import quoted_cosines, table_blocks

REPO = Path(__file__).resolve().parents[2]
SETS = {name: REPO / "benchmarks" / "scenarios" / name for name in ("dev", "test")}
ITEMS = REPO / "benchmarks" / "items"


@pytest.mark.parametrize("name", sorted(SETS))
def test_the_canaries_read_topic_0_vague_0_oracle_1_on_every_scenario(name: str) -> None:
    encoder = get_embedder()
    for scenario in load_scenarios(SETS[name]):
        got = {k: score_items(v, scenario, encoder) for k, v in canaries(scenario, encoder).items()}
        assert (got["topic"].f1, got["vague"].f1, got["oracle"].f1) == (0.0, 0.0, 1.0), scenario.id
        # the topic is stopped by its words, not by its sides: they are a planted crux's, and right
        assert got["topic"].restated_topic == 1 and got["topic"].sides_wrong == 0


def test_the_restated_topic_template_scores_zero_though_its_sides_are_right() -> None:
    encoder = get_embedder()
    for scenario in generate_scenarios(3, seed=0):
        pro_con = next(p for p in scenario.propositions if p.contested).stances
        yes = tuple(p for p, s in pro_con.items() if s == "pro")
        no = tuple(p for p, s in pro_con.items() if s == "con")
        item = Item(f"Should {scenario.city} change its {scenario.domain} policy?", yes, no)
        assert score_items([item], scenario, encoder).f1 == 0.0


def test_an_item_without_sides_is_matched_by_text_but_never_recovered() -> None:
    scenario = load_scenarios(SETS["dev"])[0]
    crux = next(p for p in scenario.propositions if p.contested)
    yes = tuple(p for p, s in crux.stances.items() if s == "pro")
    no = tuple(p for p, s in crux.stances.items() if s == "con")
    bare = score_items([Item(crux.question)], scenario)
    assert (bare.found_by_text, bare.found, bare.sides_missing) == (1, 0, 1)
    assert score_items([Item(crux.question, yes, no)], scenario).found == 1
    # the proposition in its own words is read in its own polarity: its holders on NO is wrong
    reversed_ = score_items([Item(crux.question, no, yes)], scenario)
    assert (reversed_.found, reversed_.sides_wrong) == (0, 1)
    denied = score_items([Item("I disagree: " + crux.text, yes, no), Item("It is not true that " + crux.text, no, yes)], scenario)
    assert denied.found == 1 and denied.sides_wrong == 0  # a side put first; the claim denied
    wrong = score_items([Item(crux.question, yes + no[:1], no[1:] or yes[:1])], scenario)
    assert (wrong.found, wrong.sides_wrong) == (0, 1)


def test_sides_must_split_as_the_key_does() -> None:
    key = {"a": "pro", "b": "con", "c": "con", "d": "uncertain"}
    assert sides_agree(["a"], ["b", "c"], key) and sides_agree(["b"], ["a"], key)
    assert sides_agree(["a", "d"], ["b"], key)  # an undecided persona may sit on either side
    assert not sides_agree(["a", "b"], ["c"], key)
    assert not sides_agree(["d"], ["b"], key)  # a side needs one persona who holds it


def test_items_round_trip_and_rescore_to_the_same_figures(tmp_path: Path) -> None:
    scenario = load_scenarios(SETS["dev"])[1]
    contested = [p for p in scenario.propositions if p.contested]
    items = [Item(p.question, tuple(k for k, v in p.stances.items() if v == "pro"),
                  tuple(k for k, v in p.stances.items() if v == "con"), "card", "evidence") for p in contested[:2]]
    items.append(Item(contested[2].text))  # no sides
    score = score_items(items, scenario, engine="panel")
    score.prompt_tokens, score.output_tokens, score.calls = 12_000, 3_000, 40
    write_record(tmp_path, debate_record(score, arm="panel", engine="panel", params={}, seed=0))
    (tmp_path / "table.json").write_text(json.dumps({"scenarios": str(SETS["dev"])}))
    table = load_table(tmp_path)
    again = rescore(table)[0]
    assert (again.found, again.found_by_text, again.sides_missing, again.f1) == (score.found, score.found_by_text, 1, score.f1)
    assert again.prompt_tokens == 12_000 and "| `panel` | 1 | 3 | 3 | 2 | 0 | 1 | 0 |" in table_markdown([again])


def test_the_polls_sides_are_set_beside_the_debates_on_the_same_debates(tmp_path: Path) -> None:
    scenario = load_scenarios(SETS["dev"])[1]
    first, second = [p for p in scenario.propositions if p.contested][:2]

    def sides(p: Any, flip: bool = False) -> tuple[tuple[str, ...], tuple[str, ...]]:
        pro = tuple(k for k, v in p.stances.items() if v == "pro")
        con = tuple(k for k, v in p.stances.items() if v == "con")
        return (pro, pro + con[:1]) if flip else (pro, con)

    # the debate had one crux's sides wrong and the other right; the poll mended the first and
    # made the second common ground
    shown = [Item(first.question, *sides(first), "card", "evidence")]
    debated = [Item(first.question, *sides(first, flip=True), "card", "evidence"), Item(second.question, *sides(second))]
    score = score_items(shown, scenario, engine="panel")
    score.prompt_tokens, score.output_tokens = 9_000, 1_000
    poll = {"debate_items": debated, "flips": 1, "calls": 12, "tokens": 2_500}
    write_record(tmp_path, debate_record(score, arm="panel", engine="panel", params={}, seed=0, poll=poll))
    write_record(tmp_path, debate_record(score_items(shown, scenario, engine="cot"), arm="cot", engine="cot", params={}, seed=0))
    (tmp_path / "table.json").write_text(json.dumps({"scenarios": str(SETS["dev"])}))
    [row] = poll_against_debate(load_table(tmp_path))  # cot kept no poll: left out
    assert row["arm"] == "panel" and row["debates"] == 1
    assert (row["debate"]["items"], row["debate"]["matched"], row["debate"]["right"]) == (2, 2, 1)
    assert (row["poll"]["items"], row["poll"]["matched"], row["poll"]["right"]) == (1, 1, 1)
    assert row["poll_token_share"] == 0.25 and row["flips"] == 1
    assert "| `panel` | 1 | 2 | 2 | 1 (0.50) |" in poll_markdown([row])


def test_pivot_answers_are_kept_and_set_against_the_planted_flip_conditions(tmp_path: Path) -> None:
    scenario = load_scenarios(SETS["dev"])[0]
    crux = next(p for p in scenario.propositions  # some of its personas would move on it, not all
                if p.contested and 0 < sum((pid, p.id) in scenario.flips for pid in p.stances) < len(p.stances))
    pro = tuple(k for k, v in crux.stances.items() if v == "pro")
    con = tuple(k for k, v in crux.stances.items() if v == "con")
    movers = {pid for pid, prop in scenario.flips if prop == crux.id}
    # every persona with a planted flip condition says the crux is decisive, the others not
    pivots = tuple((pid, "YES" if pid in movers else "NO") for pid in pro + con)
    items = [Item(crux.question, pro, con, "card", "evidence", pivots), Item("Is the weather nice today in this town?", pro, con)]
    write_record(tmp_path, debate_record(score_items(items, scenario, engine="panel"), arm="panel", engine="panel", params={}, seed=0))
    (tmp_path / "table.json").write_text(json.dumps({"scenarios": str(SETS["dev"])}))
    table = load_table(tmp_path)
    assert table.records[0]["items"][0]["pivots"] == dict(pivots) and "pivots" not in table.records[0]["items"][1]
    [row] = pivots_against_flips(table, rescore(table))
    assert (row["items"], row["answers"]) == (1, len(pro + con))
    assert row["flip"]["YES"] == len(movers & set(pro + con)) and row["no_flip"]["YES"] == 0 and row["kappa"] == 1.0
    assert f"| `panel` | 1 | 1 | {len(pro + con)} |" in pivots_markdown([row])


def test_a_record_without_sides_is_scored_with_a_note(tmp_path: Path) -> None:
    scenario = load_scenarios(SETS["dev"])[0]
    crux = next(p for p in scenario.propositions if p.contested)
    (tmp_path / "table.json").write_text(json.dumps({"scenarios": str(SETS["dev"])}))
    (tmp_path / "old.json").write_text(json.dumps({"arm": "cot", "scenario": scenario.id, "seed": 0, "items": [{"text": crux.question}]}))
    table = load_table(tmp_path)
    assert any("state no sides" in n and "old.json" in n for n in table.notes)
    score = rescore(table)[0]
    assert (score.found_by_text, score.found) == (1, 0)
    (tmp_path / "bad.json").write_text(json.dumps({"arm": "cot", "scenario": scenario.id, "items": []}))
    with pytest.raises(ValueError, match=r"bad\.json: seed"):
        load_table(tmp_path)


def test_every_table_in_the_benchmarks_readme_rebuilds_from_its_committed_items() -> None:
    out = CliRunner().invoke(app, ["rescore", "--check"])
    assert out.exit_code == 0, out.output
    blocks = table_blocks((REPO / "benchmarks" / "README.md").read_text(encoding="utf-8"))
    kept = {p.name for p in ITEMS.iterdir() if p.is_dir()} | {p.name for p in (REPO / "benchmarks" / "polis_items").iterdir() if p.is_dir()}
    assert blocks and {name.removesuffix(".poll").removesuffix(".reader").removesuffix(".pivots") for name in blocks} <= kept


def test_every_cosine_quoted_in_the_benchmarks_readme_is_in_the_committed_items() -> None:
    quoted = quoted_cosines((REPO / "benchmarks" / "README.md").read_text(encoding="utf-8"))
    kept = {(i["text"], round(i["cosine"], 2)) for f in ITEMS.glob("*/*.json") if f.name != "table.json"
            for i in json.loads(f.read_text(encoding="utf-8"))["items"] if i.get("cosine") is not None}
    missing = [q for q in quoted if (q[0], q[1]) not in kept]
    assert not missing, f"quoted in benchmarks/README.md but not in benchmarks/items: {missing}"


def test_informed_direct_sees_the_stance_block_and_blind_direct_does_not(tmp_path: Path) -> None:
    from crux_lab.eval.recovery import run_recovery_eval

    scenarios = generate_scenarios(1, seed=2)
    lib = write_library(scenarios, tmp_path / "lib")
    run = run_recovery_eval(scenarios, ["direct", "direct+informed=true", "direct+informed=true+samples=3"], lib,
                            tmp_path / "runs", cassettes=tmp_path / "tapes", items_dir=tmp_path / "items")
    users = {}
    for tape in (tmp_path / "tapes").glob("*.jsonl"):
        rows = [json.loads(line) for line in tape.read_text().splitlines() if line.strip()]
        rows = [r for r in rows if r.get("purpose") == "direct_cards"]  # the one call (the poll asks the personas after it)
        users[tape.name] = [m["content"] for r in rows for m in r["request"]["messages"]]
    blind = next(v for k, v in users.items() if "informed" not in k)
    informed = next(v for k, v in users.items() if "informed" in k and "samples" not in k)
    sampled = next(v for k, v in users.items() if "samples" in k)
    assert not any("answer to \"" in u for u in blind)
    assert all("answer to \"" in u for u in informed) and len(sampled) == 3 and len(set(sampled)) == 3
    rows = {s.engine: s for s in run.scores}
    assert set(rows) == {"direct", "direct+informed=true", "direct+informed=true+samples=3"}
    # three sampled calls (the tape above holds exactly three); a run's calls also count the poll's
    assert rows["direct+informed=true+samples=3"].calls >= 3
    assert len(list((tmp_path / "items").glob("*.json"))) == 6  # three arms and three canaries
    polled = [json.loads(f.read_text()) for f in (tmp_path / "items").glob("*direct*.json")]
    assert len(polled) == 3 and all("poll" in r for r in polled)  # each keeps its poll for the .poll table
    informed = next(r for r in polled if r["arm"] == "direct+informed=true")
    assert informed["poll"]["calls"] > 0 and len(informed["poll"]["debate_items"]) >= len(informed["items"])


def test_a_bad_arm_is_one_named_line(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["recovery", "--engines", "direct+informd=true", "--no-store", "--runs-dir", str(tmp_path)])
    assert out.exit_code == 2 and "informd" in out.output and "informed" in out.output
    out = CliRunner().invoke(app, ["recovery", "--engines", "direct+informed", "--no-store", "--runs-dir", str(tmp_path)])
    assert out.exit_code == 2 and "KEY=VALUE" in out.output


def test_the_readers_check_gives_kappa_and_names_a_label_with_no_item(tmp_path: Path) -> None:
    from crux_lab.eval.items import reader_agreement, reader_markdown

    scenario = load_scenarios(SETS["dev"])[2]
    contested = [p for p in scenario.propositions if p.contested]
    split = [(tuple(k for k, v in p.stances.items() if v == "pro"), tuple(k for k, v in p.stances.items() if v == "con")) for p in contested]
    items = [Item(contested[0].question, *split[0]), Item(contested[1].question), Item("Is the weather nice in spring?", *split[0])]
    score = score_items(items, scenario, engine="dcg")
    write_record(tmp_path, debate_record(score, arm="dcg", engine="dcg", params={}, seed=0))
    (tmp_path / "table.json").write_text(json.dumps({"scenarios": str(SETS["dev"])}))
    labels = [(contested[0].question, True), (contested[1].question, True), ("Is the weather nice in spring?", False)]
    (tmp_path / "reader.jsonl").write_text("".join(
        json.dumps({"arm": "dcg", "scenario": scenario.id, "seed": 0, "text": t, "accept": a, "why": "w"}) + "\n" for t, a in labels))
    table = load_table(tmp_path)
    got = reader_agreement(table, rescore(table))
    assert got is not None and got["labels"] == 3 and got["accepted"] == 2
    assert got["kappa_text"] == 1.0  # the reader accepts exactly the two text matches
    assert 0.0 < got["kappa_sides"] < 1.0 and [d["text"] for d in got["disagreements"]] == [contested[1].question]
    # the reader's two verdicts apart: the sideless item matches by text but is not accepted
    (tmp_path / "reader.jsonl").write_text("".join(
        json.dumps({"arm": "dcg", "scenario": scenario.id, "seed": 0, "text": t, "matches": m, "accept": a}) + "\n"
        for t, m, a in [(contested[0].question, True, True), (contested[1].question, True, False),
                        ("Is the weather nice in spring?", False, False)]))
    got = reader_agreement(table, rescore(table))
    assert got is not None and got["kappa_text"] == 1.0 and got["kappa_sides"] == 1.0 and got["disagreements"] == []
    assert "| `dcg` | 3 | 2 | 2 | 1.00 | 1 | 1 | 1.00 |" in reader_markdown(got)
    (tmp_path / "reader.jsonl").write_text(json.dumps({"arm": "dcg", "scenario": scenario.id, "seed": 0, "text": "not there", "accept": True}) + "\n")
    with pytest.raises(ValueError, match=r"reader\.jsonl: line 1: no item 'not there'"):
        reader_agreement(table, rescore(table))
    (tmp_path / "reader.jsonl").write_text(json.dumps({"arm": "dcg", "scenario": scenario.id, "seed": 0, "text": contested[0].question,
                                                       "view": "room", "accept": True}) + "\n")
    with pytest.raises(ValueError, match=r"reader\.jsonl: line 1: view 'room'"):
        reader_agreement(table, rescore(table))
