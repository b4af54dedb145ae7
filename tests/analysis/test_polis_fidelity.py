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
