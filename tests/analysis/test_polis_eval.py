"""`crux-lab eval polis`: ground truth from Polis votes, one persona per opinion group, scores by
text. Data: the copies in tests/data/polis (real votes, CC BY 4.0, The Computational Democracy
Project); runs on the simulator."""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from crux_lab.analysis.polis import PolisDataError, load_conversation
from crux_lab.analysis.polis_eval import prepare, score_debate
from crux_lab.analysis.polis_truth import Z90, ground_truth, group_minds, prop_test, two_prop_test
from crux_lab.eval.cli import app
from crux_lab.models import (
    Camp,
    CommonGround,
    CruxCard,
    DebateConfig,
    DebateResult,
    DisagreementType,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "polis"
BREXIT = DATA / "brexit-consensus"


def raw_votes(folder: Path) -> tuple[list[dict[str, str]], dict[str, str]]:
    with (folder / "participants-votes.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    with (folder / "comments.csv").open(encoding="utf-8", newline="") as fh:
        texts = {c["comment-id"]: c["comment-body"] for c in csv.DictReader(fh) if c["moderated"] != "-1"}
    return rows, texts


def test_divisive_and_consensus_follow_the_votes_counted_by_hand() -> None:
    truth = ground_truth(load_conversation(BREXIT))
    rows, _ = raw_votes(BREXIT)
    groups = sorted({r["group-id"] for r in rows if r["group-id"] != ""})
    assert truth.groups == tuple(int(g) for g in groups) and len(groups) == 2

    def counts(sid: str, g: str) -> tuple[int, int, int]:
        votes = [r[sid] for r in rows if r["group-id"] == g and r[sid] != ""]
        return votes.count("1"), votes.count("-1"), len(votes)

    top = truth.divisive[0]
    (a0, _, s0), (a1, _, s1) = counts(top, groups[0]), counts(top, groups[1])
    assert truth.statements[top].divisiveness == pytest.approx(abs(a0 / s0 - a1 / s1))
    hi, lo = ((a0, s0), (a1, s1)) if a0 / s0 > a1 / s1 else ((a1, s1), (a0, s0))
    assert two_prop_test(hi[0], hi[1], lo[0], lo[1]) > Z90
    # Ranked by the difference, and nothing below the minimum difference.
    divs = [truth.statements[s].divisiveness for s in truth.divisive]
    assert divs == sorted(divs, reverse=True) and min(divs) >= truth.min_difference
    # Every group clearly agrees with every consensus statement (Polis's test, per group).
    for sid in truth.consensus:
        for g in groups:
            a, _, s = counts(sid, g)
            assert s >= truth.min_votes and (a + 1) / (s + 2) > 0.5 and prop_test(a, s) > Z90
    assert not set(truth.consensus) & set(truth.divisive)


def test_personas_hold_only_their_groups_statements_verbatim(tmp_path: Path) -> None:
    from crux_lab.analysis.scenarios import use_library
    from crux_lab.personas.loader import get_deck, load_personas
    from crux_lab.personas.validate import check_persona

    setup = prepare(BREXIT, tmp_path / "lib")
    _, texts = raw_votes(BREXIT)
    assert len(setup.library.persona_ids) == 2 and not setup.skipped
    with use_library(setup.library.root):
        personas = load_personas(list(setup.library.persona_ids))
        deck = get_deck(setup.library.deck_id)
    assert setup.library.topic in deck.topics
    for pid, persona in personas.items():
        assert persona.contract.kind == "synthetic" and "Opinion group" in persona.name
        assert not [i for i in check_persona(persona) if i.severity == "error"]
        for chunk in persona.corpus:  # participants' own words, marked so, with the statement id as source
            sid = chunk.id.rsplit("-s", 1)[1]
            assert chunk.kind == "quote" and chunk.text == texts[sid]
            assert f"statement {sid}" in chunk.source and "CC BY 4.0" in chunk.source
        assert persona.voice.voice_examples == []  # no invented example lines
        mind = next(m for m in setup.minds if m.persona_id == pid)
        held = {f"{setup.library.deck_id.rsplit('-', 1)[0]}.s{m.statement}": m.stance for m in mind.stances}
        for stance in persona.stances.stances:
            assert stance.stance == held.get(stance.proposition_id, "uncertain")
    for prop in deck.propositions:
        assert prop.text == texts[setup.library.proposition_statement[prop.id]]


def test_a_group_without_enough_clear_statements_is_named_and_skipped() -> None:
    truth = ground_truth(load_conversation(BREXIT))
    minds, notes = group_minds(truth, per_group=2, n_consensus=0, min_clear=3)
    assert minds == [] and len(notes) == 2
    assert all("fewer than 3" in n and "no persona" in n for n in notes)


def test_prepare_refuses_a_debate_with_fewer_than_two_personas(tmp_path: Path) -> None:
    with pytest.raises(PolisDataError, match=r"participants-votes\.csv: only 0 opinion group"):
        prepare(BREXIT, tmp_path / "lib", per_group=2, n_consensus=0, min_clear=3)


def one_group_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "one-group"
    shutil.copytree(DATA / "15-per-hour-seattle", folder)
    path = folder / "participants-votes.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        fields, rows = reader.fieldnames, list(reader)
    for r in rows:
        r["group-id"] = "0" if r["group-id"] else ""
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)  # type: ignore[arg-type]
        writer.writeheader()
        writer.writerows(rows)
    return folder


@pytest.mark.parametrize("case", ["missing", "one group", "too few votes"])
def test_bad_conversation_folders_fail_in_one_line_with_exit_2(case: str, tmp_path: Path) -> None:
    if case == "missing":
        folder = tmp_path / "empty"
        folder.mkdir()
        (folder / "participants-votes.csv").write_text("participant,group-id\n", encoding="utf-8")
        want = [str(folder / "comments.csv"), "file missing", "comments.csv"]
    elif case == "one group":
        folder = one_group_copy(tmp_path)
        want = [str(folder / "participants-votes.csv"), "'group-id'", "only group 0", "two"]
    else:
        folder = DATA / "london.youth.policing"
        want = [str(folder / "participants-votes.csv"), "too few votes", "5 votes in every opinion group"]
    out = CliRunner().invoke(app, ["polis", str(folder), "--engines", "direct", "--workdir", str(tmp_path / "w"),
                                   "--db", str(tmp_path / "x.duckdb")])
    assert out.exit_code == 2, out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), out.output
    assert "Traceback" not in out.output
    for piece in want:
        assert piece in lines[0], (piece, lines[0])
    assert not (tmp_path / "x.duckdb").exists()


def test_scores_count_matches_by_text_not_ids(tmp_path: Path) -> None:
    setup = prepare(BREXIT, tmp_path / "lib")
    truth, lib = setup.truth, setup.library
    top = truth.top_divisive
    divisive_text = truth.statements[top[0]].text
    consensus_text = truth.statements[truth.consensus[0]].text
    g0, g1 = lib.persona_ids
    card = CruxCard(id="c1", question=f"Is it true that {divisive_text.rstrip('.')}?", disagreement_type=DisagreementType.claim,
                    diagnosis="", personas={})
    other = CruxCard(id="c2", question=f"Is it true that {consensus_text.rstrip('.')}?",
                     disagreement_type=DisagreementType.claim, diagnosis="", personas={})
    result = DebateResult(
        run_id="r1", config=DebateConfig(topic=lib.topic, persona_ids=[g0, g1], engine="direct"), engine="direct",
        backend="simulated", crux_cards=[card, other],
        common_ground=[CommonGround(id="g1", statement=divisive_text, source="stances")],
        camps=[Camp(index=0, persona_ids=[g0]), Camp(index=1, persona_ids=[g1])],
    )
    score = score_debate(result, truth, lib, setup.conversation.group_ids)
    assert score.n_items == 2 and score.divisive_items == 1 and score.precision == 0.5
    assert score.found_top == [top[0]] and score.recall_at_k == pytest.approx(1 / len(top))
    assert score.false_common_ground == 1 and score.camp_ari == 1.0
    closest = [m["closest"] for m in score.matches]
    assert closest == [top[0], truth.consensus[0], top[0]]
    lumped = result.model_copy(update={"camps": [Camp(index=0, persona_ids=[g0, g1])], "crux_cards": []})
    again = score_debate(lumped, truth, lib, setup.conversation.group_ids)
    assert again.camp_ari == 0.0 and math.isnan(again.precision) and again.recall_at_k == 0.0


def test_cli_runs_the_simulator_stores_metrics_and_reuses_finished_debates(tmp_path: Path) -> None:
    from crux_lab.store import connect

    db, work = tmp_path / "p.duckdb", tmp_path / "w"
    args = ["polis", str(BREXIT), "--engines", "direct", "--workdir", str(work), "--db", str(db),
            "--json", str(tmp_path / "s.json")]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "Cruxes against Polis votes" in first.output and "(reused)" not in first.output
    con = connect(db, read_only=True)
    try:
        names = {r[0] for r in con.execute("SELECT name FROM metrics WHERE name LIKE 'polis_%'").fetchall()}
        engines = con.execute("SELECT DISTINCT engine FROM runs").fetchall()
        detail = con.execute("SELECT detail FROM metrics WHERE name = 'polis_sides_f1'").fetchone()
    finally:
        con.close()
    assert names == {"polis_crux_precision", "polis_recall_at_k", "polis_false_common_ground", "polis_camp_ari",
                     "polis_sides_precision", "polis_sides_recall_at_k", "polis_sides_f1"}
    assert engines == [("direct",)]
    data = json.loads((tmp_path / "s.json").read_text())
    assert data["conversations"][0]["top_divisive"] and data["summary"][0]["engine"] == "direct"
    # The held-out split is recorded in the database, the run folder and the JSON, all the same.
    split = data["conversations"][0]["heldout"]
    assert split["divisive"] == data["conversations"][0]["top_divisive"] and split["fidelity"]
    assert json.loads(detail[0])["heldout"] == split
    (run_dir,) = [p for p in (work / "runs").iterdir() if (p / "result.json").is_file()]
    assert json.loads((run_dir / "heldout.json").read_text()) == split
    second = CliRunner().invoke(app, args)
    assert second.exit_code == 0 and "(reused)" in second.output, second.output


def test_camp_ari_ignores_participants_polis_left_ungrouped() -> None:
    from crux_lab.analysis.polis_eval import camp_ari

    groups = np.array([0, 0, 1, 1, 2, -1])
    camps = [Camp(index=0, persona_ids=["a"]), Camp(index=1, persona_ids=["b"])]
    assert camp_ari(camps, {"a": 0, "b": 1}, groups) == 1.0  # group 2 has no persona: left out


def test_cli_refuses_an_openai_server_that_does_not_answer(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["polis", str(BREXIT), "--engines", "direct", "--backend", "openai",
                                   "--base-url", "http://127.0.0.1:9/v1", "--workdir", str(tmp_path / "w")])
    assert out.exit_code == 2 and "Traceback" not in out.output
    assert out.output.strip().startswith("error:") and "127.0.0.1:9" in out.output


def test_conversation_view_shows_divisive_statements_cruxes_and_camps(tmp_path: Path) -> None:
    from crux_lab.eval.polis import conversation_view

    view = conversation_view(BREXIT, ["direct"], workdir=tmp_path)
    truth_top = list(view["divisive"].loc[view["divisive"]["top_k"], "statement"])
    assert len(truth_top) == 5 and view["divisive"]["divisiveness"].is_monotonic_decreasing
    cruxes = view["cruxes"]
    assert len(cruxes) and set(cruxes["engine"]) == {"direct"}
    assert {"found", "closest statement", "statement text", "score", "matched"} <= set(cruxes.columns)
    assert (cruxes.loc[cruxes["matched"], "score"] >= 0.5).all()
    assert sorted(view["camps"]["Polis group"]) == [0, 1]
    assert conversation_view(None, ["direct"])["notes"] == ["no Polis conversation at 'None'"]


def test_conversation_view_reads_finished_debates_without_debating(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real model's benchmark runs are viewed offline: ``runs`` reads the finished debates of
    the conversation, scores them as the eval does, and never starts a debate."""
    import crux_lab.eval.polis as PE

    ran = PE.conversation_view(BREXIT, ["direct"], workdir=tmp_path / "w")

    def no_debate(*_: object, **__: object) -> None:
        raise AssertionError("the view debated")

    monkeypatch.setattr(PE, "run_polis_eval", no_debate)
    read = PE.conversation_view(BREXIT, ["direct", "cot"], runs=tmp_path / "w" / "runs")
    assert read["notes"] == ran["notes"] and list(read["summary"]["engine"]) == ["direct"]
    assert read["cruxes"].equals(ran["cruxes"]) and read["camps"].equals(ran["camps"])
    other = PE.conversation_view(BREXIT, ["cot"], runs=tmp_path / "w" / "runs")
    assert other["cruxes"].empty and other["notes"][-1].startswith("no finished debate of brexit")


def test_notebook_07_shows_one_polis_conversation(tmp_path: Path) -> None:
    import nbformat
    import papermill

    from crux_lab.analysis.recovery import _repo_path

    path = _repo_path("notebooks/07_evaluation.ipynb")
    assert path is not None
    out = tmp_path / "07.out.ipynb"
    papermill.execute_notebook(str(path), str(out), kernel_name="python3", progress_bar=False, cwd=str(path.parent),
                               parameters={"engines": "blitz", "knob_levels": "", "argkp_root": "",
                                           "polis_engines": "direct", "db": str(tmp_path / "nb.duckdb")})
    ran = nbformat.read(out, as_version=4)
    assert not [o for c in ran.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    text = "\n".join(str(v) for c in ran.cells for o in c.get("outputs", []) for v in o.get("data", {}).values())
    assert "Labour should oppose the Brexit process." in text  # the most divisive statement of brexit-consensus
    assert "closest statement" in text and "Polis group" in text and "recall_at_k" in text
