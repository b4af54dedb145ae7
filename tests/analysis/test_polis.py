"""Polis check on the copied conversations in tests/data/polis (real votes, CC BY 4.0)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from crux_lab.analysis.alignment import Camps, camp_votes, divisive_statements
from crux_lab.analysis.polis import (
    PolisDataError,
    StatementOverlap,
    evaluate_conversation,
    list_conversations,
    load_conversation,
    polis_groups,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "polis"
CONVERSATIONS = [p.name for p in list_conversations(DATA)]
# The four smaller conversations keep the test fast; the eval script runs all ten.
SMALL = ["15-per-hour-seattle", "brexit-consensus", "london.youth.policing", "bg2050-volunteers"]


def test_all_ten_conversations_are_present() -> None:
    assert len(CONVERSATIONS) == 10
    assert {"scoop-hivemind.biodiversity", "scoop-hivemind.taxes", "scoop-hivemind.ubi",
            "ssis.land-bank-farmland.2rumnecbeh.2021-08-01"} <= set(CONVERSATIONS)


@pytest.mark.parametrize("name", CONVERSATIONS)
def test_loader_matches_the_raw_export(name: str) -> None:
    folder = DATA / name
    conv = load_conversation(folder)
    with (folder / "comments.csv").open(encoding="utf-8", newline="") as fh:
        comments = list(csv.DictReader(fh))
    with (folder / "participants-votes.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    kept = [c["comment-id"] for c in comments if c["moderated"] != "-1"]
    vote_cols = [h for h in rows[0] if h.isdigit()]
    assert set(conv.matrix.col_labels) == set(kept) & set(vote_cols)
    assert conv.matrix.shape[0] == len(rows)
    # Every participant's vote count over kept comments equals the non-empty cells.
    j = {c: i for i, c in enumerate(conv.matrix.col_labels)}
    for i in (0, len(rows) // 2, len(rows) - 1):
        cells = {c: rows[i][c] for c in conv.matrix.col_labels if rows[i][c] != ""}
        assert int(conv.matrix.observed[i].sum()) == len(cells)
        for c, v in cells.items():
            assert conv.matrix.values[i, j[c]] == float(v)
    # Polis groups: -1 exactly where the export has no group.
    assert ((conv.group_ids == -1) == np.array([r["group-id"] == "" for r in rows])).all()


def test_polis_groups_turn_group_ids_into_camps() -> None:
    conv = load_conversation(DATA / "london.youth.policing")
    camps = polis_groups(conv)
    assert camps.k == len({g for g in conv.group_ids.tolist() if g >= 0}) == 3
    assert ((camps.assignment == -1) == (conv.group_ids == -1)).all()


def test_per_group_agree_rates_agree_with_an_independent_count() -> None:
    # camp_votes on Polis's own groups against a direct count from the CSV.
    folder = DATA / "brexit-consensus"
    conv = load_conversation(folder)
    camps = polis_groups(conv)
    with (folder / "participants-votes.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    col = conv.matrix.col_labels[3]
    for camp, group_id in enumerate(sorted({r["group-id"] for r in rows if r["group-id"]})):
        votes = [r[col] for r in rows if r["group-id"] == group_id and r[col] != ""]
        counted = camp_votes(conv.matrix, camps)[3][camp]
        assert counted.agree == votes.count("1")
        assert counted.disagree == votes.count("-1")
        assert counted.n_votes == len(votes)


@pytest.fixture(scope="module")
def reports() -> dict:
    return {name: evaluate_conversation(load_conversation(DATA / name)) for name in SMALL}


def test_camps_agree_with_polis_groups_above_a_floor(reports: dict) -> None:
    aris = {name: r.ari for name, r in reports.items()}
    # Quality floor, not a recorded result: chance agreement is ARI ~ 0, and Polis's own
    # method (PCA + k-means) on the same votes should recover its groups well on at least
    # one conversation (the eval script prints the measured values).
    assert max(aris.values()) > 0.3, aris
    assert np.mean(list(aris.values())) > 0.1, aris
    for r in reports.values():
        assert r.ari_participants >= 2
        assert r.our_camps >= 2
        assert -1 <= r.ari <= 1


def test_random_camps_score_near_zero(reports: dict) -> None:
    # The ARI above must beat a shuffled assignment of the same sizes.
    from sklearn.metrics import adjusted_rand_score

    conv = load_conversation(DATA / "15-per-hour-seattle")
    truth = polis_groups(conv).assignment
    grouped = truth >= 0
    rng = np.random.default_rng(0)
    shuffled = rng.permutation(truth[grouped])
    assert abs(adjusted_rand_score(truth[grouped], shuffled)) < 0.1
    assert reports["15-per-hour-seattle"].ari > 0.3


def test_divisive_statements_split_polis_groups(reports: dict) -> None:
    # Statements we call divisive (with our camps) should, on average, separate Polis's own
    # groups' agree rates more than the typical statement does.
    name = "15-per-hour-seattle"
    conv = load_conversation(DATA / name)
    truth = polis_groups(conv)
    from crux_lab.analysis.alignment import find_camps

    ours = find_camps(conv.matrix, min_votes=7)
    ours_div = {s.label for s in divisive_statements(conv.matrix, ours, min_votes_per_camp=3)}
    gaps = {}
    for label, votes in zip(conv.matrix.col_labels, camp_votes(conv.matrix, truth), strict=True):
        rates = [v.agree_rate for v in votes]
        if not any(math.isnan(x) for x in rates):
            gaps[label] = max(rates) - min(rates)
    div_gap = np.mean([gaps[x] for x in ours_div if x in gaps])
    other_gap = np.mean([g for x, g in gaps.items() if x not in ours_div])
    assert div_gap > other_gap + 0.2
    assert reports[name].divisive.ours == len(ours_div)


def test_statement_overlap_arithmetic() -> None:
    o = StatementOverlap.of(["a", "b", "c"], ["b", "c", "d", "e"], top=2)
    assert (o.both, o.precision, o.recall, o.jaccard) == (2, 2 / 3, 2 / 4, 2 / 5)
    assert o.top_overlap == 0.5  # top 2 of each: {a, b} vs {b, c}
    empty = StatementOverlap.of([], [])
    assert math.isnan(empty.precision) and math.isnan(empty.jaccard)


def test_camps_from_another_matrix_are_refused() -> None:
    conv = load_conversation(DATA / "london.youth.policing")
    other = Camps(("x",), np.array([0]), 1, None)
    with pytest.raises(ValueError, match="another matrix"):
        divisive_statements(conv.matrix, other)


def test_missing_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "participants-votes.csv").write_text("participant,group-id\n0,\n")
    with pytest.raises(PolisDataError, match="comments.csv: file missing"):
        load_conversation(tmp_path)


def test_bad_vote_cell_is_named(tmp_path: Path) -> None:
    (tmp_path / "comments.csv").write_text(
        "timestamp,datetime,comment-id,author-id,agrees,disagrees,moderated,comment-body\n"
        "1,x,0,1,0,0,1,hello\n"
    )
    (tmp_path / "participants-votes.csv").write_text(
        "participant,group-id,n-comments,n-votes,n-agree,n-disagree,0\n7,0,0,1,0,0,yes\n"
    )
    with pytest.raises(PolisDataError, match=r"participants-votes\.csv: line 2, comment column '0' holds 'yes'"):
        load_conversation(tmp_path)


HEADER = "timestamp,datetime,comment-id,author-id,agrees,disagrees,moderated,comment-body\n"
VOTES = "participant,group-id,n-comments,n-votes,n-agree,n-disagree,0,1\n7,0,0,2,1,1,1,-1\n8,1,0,2,1,1,-1,1\n"


def _folder(tmp_path: Path, comments: str | None, votes: str | None) -> Path:
    if comments is not None:
        (tmp_path / "comments.csv").write_text(comments, encoding="utf-8")
    if votes is not None:
        (tmp_path / "participants-votes.csv").write_text(votes, encoding="utf-8")
    return tmp_path


GOOD_COMMENTS = HEADER + '1,x,0,1,0,0,1,"A first,\nlong statement"\n2,x,1,1,0,0,0,second\n'


def test_a_well_formed_folder_loads_with_a_multiline_statement(tmp_path: Path) -> None:
    conv = load_conversation(_folder(tmp_path, GOOD_COMMENTS, VOTES))
    assert conv.matrix.col_texts == ("A first,\nlong statement", "second")
    assert conv.matrix.values.tolist() == [[1.0, -1.0], [-1.0, 1.0]]


@pytest.mark.parametrize(
    ("case", "comments", "votes", "want"),
    [
        ("no votes file", GOOD_COMMENTS, None, r"participants-votes\.csv: file missing;.*votes\.csv log is not read"),
        ("no comments file", None, VOTES, r"comments\.csv: file missing"),
        ("short comment row", GOOD_COMMENTS + "3,x,2,1\n", VOTES, r"comments\.csv: line 5: 4 field\(s\) where the header has 8"),
        ("long vote row", GOOD_COMMENTS, VOTES + "9,0,0,2,1,1,1,1,1\n", r"participants-votes\.csv: line 4: 9 field\(s\) where the header has 8"),
        ("bad moderated", HEADER + "1,x,0,1,0,0,yes,first\n", VOTES, r"comments\.csv: line 2: field 'moderated' is 'yes'"),
        ("bad comment id", HEADER + "1,x,zero,1,0,0,1,first\n", VOTES, r"comments\.csv: line 2: field 'comment-id' is 'zero'"),
        ("bad group id", GOOD_COMMENTS, VOTES.replace("7,0,", "7,g,"), r"participants-votes\.csv: line 2, field 'group-id' is 'g'"),
        ("bad vote after a multiline body", GOOD_COMMENTS, VOTES.replace("8,1,0,2,1,1,-1,1", "8,1,0,2,1,1,-1,2"),
         r"participants-votes\.csv: line 3, comment column '1' holds '2'"),
        ("empty comments file", "", VOTES, r"comments\.csv: line 1: no header"),
    ],
)
def test_a_bad_folder_gets_one_named_error_with_file_and_line(
    case: str, comments: str | None, votes: str | None, want: str, tmp_path: Path
) -> None:
    with pytest.raises(PolisDataError, match=want):
        load_conversation(_folder(tmp_path, comments, votes))


def test_a_malformed_row_fails_the_cli_in_one_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from crux_lab.eval.cli import app

    folder = tmp_path / "bad"
    folder.mkdir()
    _folder(folder, GOOD_COMMENTS + "3,x,2,1\n", VOTES)
    out = CliRunner().invoke(app, ["polis", str(folder), "--engines", "direct", "--workdir", str(tmp_path / "w"), "--no-store"])
    assert out.exit_code == 2 and "Traceback" not in out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and f"{folder / 'comments.csv'}: line 5" in lines[0]
