"""Persona fidelity on Polis held-out statements: the scorer reads a plain answer mapping, the
baselines answer from the mind, and the poll reaches each persona through the
simulator. Data: tests/data/polis (real votes, CC BY 4.0, The Computational Democracy Project)."""

from __future__ import annotations

import csv
import dataclasses
import math
from pathlib import Path

import pytest

from crux_lab.analysis.polis_eval import PolisSetup, prepare
from crux_lab.analysis.polis_fidelity import (
    cohen_kappa,
    fidelity_pairs,
    fidelity_row,
    majority_answers,
    nearest_answers,
    real_vote,
    score_fidelity,
)
from crux_lab.analysis.polis_truth import Z90, prop_test
from crux_lab.analysis.textmatch import unit_vectors

DATA = Path(__file__).resolve().parents[1] / "data" / "polis"
BREXIT = DATA / "brexit-consensus"


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> PolisSetup:
    return prepare(BREXIT, tmp_path_factory.mktemp("fid") / "lib")


def test_real_votes_follow_the_csv_counted_by_hand(setup: PolisSetup) -> None:
    with (BREXIT / "participants-votes.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert setup.held is not None
    seen = 0
    for sid in setup.held.fidelity:
        for g in setup.truth.groups:
            votes = [r[sid] for r in rows if r["group-id"] == str(g) and r[sid] != ""]
            a, d, s = votes.count("1"), votes.count("-1"), len(votes)
            want = None
            if s >= 5 and (a + 1) / (s + 2) > 0.5 and prop_test(a, s) > Z90:
                want = "YES"
            elif s >= 5 and (d + 1) / (s + 2) > 0.5 and prop_test(d, s) > Z90:
                want = "NO"
            assert real_vote(setup.truth, sid, g) == want
            seen += want is not None
    assert seen == len(fidelity_pairs(setup.truth, setup.held, setup.minds)) > 0


def test_accuracy_and_kappa_of_a_plain_answer_mapping(setup: PolisSetup) -> None:
    truth, held, minds = setup.truth, setup.held, setup.minds
    assert held is not None
    pairs = fidelity_pairs(truth, held, minds)
    perfect = score_fidelity(pairs, truth, held, minds)
    assert (perfect.accuracy, perfect.kappa, perfect.pairs) == (1.0, 1.0, len(pairs))
    flipped = score_fidelity({k: "NO" if v == "YES" else "YES" for k, v in pairs.items()}, truth, held, minds)
    assert flipped.accuracy == 0.0 and flipped.kappa < 0
    unsure = score_fidelity(dict.fromkeys(pairs, "UNSURE"), truth, held, minds)
    assert unsure.accuracy == 0.0 and unsure.unsure == len(pairs) and unsure.missing == 0
    first = next(iter(pairs))
    partial = score_fidelity({k: v for k, v in pairs.items() if k != first}, truth, held, minds)
    assert partial.missing == 1 and partial.correct == len(pairs) - 1
    # Pairs of a group that is not clear are left out, whatever is answered for them.
    noisy = {**pairs, **{(m.persona_id, sid): "YES" for m in minds for sid in held.fidelity}}
    assert score_fidelity(noisy, truth, held, minds).pairs == len(pairs)


def test_cohen_kappa_against_a_hand_count() -> None:
    a = ["YES", "YES", "NO", "NO", "YES", "UNSURE"]
    b = ["YES", "NO", "NO", "NO", "YES", "YES"]
    po = 4 / 6
    pe = (3 / 6) * (3 / 6) + (2 / 6) * (3 / 6)  # YES, NO (UNSURE never in b)
    assert cohen_kappa(a, b) == pytest.approx((po - pe) / (1 - pe))
    assert math.isnan(cohen_kappa([], []))


def test_baselines_answer_from_the_mind(setup: PolisSetup) -> None:
    truth, held, minds = setup.truth, setup.held, setup.minds
    assert held is not None
    majority = majority_answers(truth, held, minds)
    nearest = nearest_answers(truth, held, minds)
    for mind in minds:
        pro = sum(m.stance == "pro" for m in mind.stances)
        assert {majority[(mind.persona_id, s)] for s in held.fidelity} == {"YES" if 2 * pro >= len(mind.stances) else "NO"}
        vecs = unit_vectors([truth.statements[m.statement].text for m in mind.stances])
        for sid in held.fidelity:
            closest = mind.stances[int((unit_vectors([truth.statements[sid].text]) @ vecs.T)[0].argmax())]
            assert nearest[(mind.persona_id, sid)] == ("YES" if closest.stance == "pro" else "NO")
    row = fidelity_row(nearest, truth, held, minds, source="persona")
    assert row["persona_accuracy"] == row["nearest_accuracy"] and row["pairs"] > 0


def test_the_poll_reaches_each_persona_on_the_simulator(setup: PolisSetup) -> None:
    from crux_lab.eval.polis import ask_each_persona

    assert setup.held is not None
    answers = ask_each_persona(setup)
    assert set(answers) == {(p, s) for p in setup.library.persona_ids for s in setup.held.fidelity}
    assert set(answers.values()) <= {"YES", "NO", "UNSURE"}
    # Plumbing: asked its own mind's statements, each persona answers as its group voted.
    own = sorted({m.statement for mind in setup.minds for m in mind.stances})
    probe = dataclasses.replace(setup, held=dataclasses.replace(setup.held, fidelity=tuple(own)))
    told = ask_each_persona(probe)
    for mind in setup.minds:
        for m in mind.stances:
            assert told[(mind.persona_id, m.statement)] == ("YES" if m.stance == "pro" else "NO"), m


def test_the_simulated_persona_answers_a_statement_outside_its_mind_as_its_closest_view(setup: PolisSetup) -> None:
    from crux_lab.eval.polis import ask_each_persona

    held = setup.held
    assert held is not None
    minds = {m.statement for mind in setup.minds for m in mind.stances}
    assert not minds & set(held.fidelity)
    # No persona has a stance on a held-out statement, yet each answers some of them from its views.
    told = ask_each_persona(setup)
    for mind in setup.minds:
        assert {"YES", "NO"} & {told[(mind.persona_id, sid)] for sid in held.fidelity}, mind.persona_id
    # A statement that shares no word with any of its views gets no view.
    stranger = dataclasses.replace(setup.truth, statements={
        **setup.truth.statements, "zz": dataclasses.replace(setup.truth.statements[held.fidelity[0]], text="Tulips bloom.")})
    lone = dataclasses.replace(setup, truth=stranger, held=dataclasses.replace(held, fidelity=("zz",)))
    assert set(ask_each_persona(lone).values()) == {"UNSURE"}


def test_fidelity_answers_are_kept_as_they_come_resumed_and_re_scored(setup: PolisSetup, tmp_path: Path) -> None:
    import json

    from crux_lab.eval.items import ItemsError
    from crux_lab.eval.polis import FidelityItems, ask_each_persona, rescore_fidelity

    assert setup.held is not None
    kept = FidelityItems(tmp_path, setup, model="sim")
    answers = ask_each_persona(setup, known=kept.known, on_answer=kept.add)
    assert kept.path.is_file() and kept.known == answers
    record = json.loads(kept.path.read_text(encoding="utf-8"))
    assert all(a["reason"] for a in record["answers"]) and record["fidelity"] == list(setup.held.fidelity)
    # A second run reads the file and asks nothing again.
    again = FidelityItems(tmp_path, setup, model="sim")
    new: list[str] = []
    assert ask_each_persona(setup, known=again.known, on_answer=lambda p, s, r: new.append(s)) == answers
    assert new == []
    with pytest.raises(ValueError, match="another model"):
        FidelityItems(tmp_path, setup, model="other")
    # The file alone gives the row back, beside both baselines.
    (row,) = rescore_fidelity(tmp_path, BREXIT.parent)
    assert row == fidelity_row(answers, setup.truth, setup.held, setup.minds)
    record["fidelity"] = record["fidelity"][1:]
    kept.path.write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ItemsError, match="'fidelity'"):
        rescore_fidelity(tmp_path, BREXIT.parent)
