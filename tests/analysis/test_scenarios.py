"""Synthetic scenarios: seeded, well-formed ground truth, written as a loadable persona library."""

from __future__ import annotations

import os

import pytest

from crux_lab.analysis.scenarios import (
    ScenarioError,
    check_written,
    generate_scenarios,
    use_library,
    write_library,
)
from crux_lab.personas.loader import ENV_VAR, get_deck, load_personas, propositions_for


def test_same_seed_same_scenarios_and_different_seed_differs() -> None:
    a, b = generate_scenarios(3, seed=5), generate_scenarios(3, seed=5)
    assert [s.truth() for s in a] == [s.truth() for s in b]
    assert [s.topic for s in a] == [s.topic for s in b]
    c = generate_scenarios(3, seed=6)
    assert [s.truth() for s in a] != [s.truth() for s in c]


@pytest.mark.parametrize("n_personas", [2, 4])
def test_planted_truth_is_contested_or_consensus(n_personas: int) -> None:
    for s in generate_scenarios(4, seed=1, n_personas=n_personas, n_contested=3, n_consensus=2):
        assert len(s.persona_ids) == n_personas
        assert len(s.contested) == 3 and len(s.consensus) == 2
        for p in s.propositions:
            held = set(p.stances.values())
            if p.contested:
                assert {"pro", "con"} <= held, p.id
            else:
                assert held == {"pro"}, p.id
        assert len({p.text for p in s.propositions}) == len(s.propositions)


def test_bad_requests_fail_clearly() -> None:
    with pytest.raises(ScenarioError, match="n_contested"):
        generate_scenarios(1, n_contested=6, n_consensus=3)
    with pytest.raises(ScenarioError, match="n_personas"):
        generate_scenarios(1, n_personas=9)
    with pytest.raises(ScenarioError, match="at least 1"):
        generate_scenarios(0)


def test_written_library_loads_and_passes_the_checker(tmp_path) -> None:
    scenarios = generate_scenarios(2, seed=3)
    root = write_library(scenarios, tmp_path / "lib")
    notes = check_written(root, scenarios)
    assert not any(n.startswith("error") for n in notes)
    before = os.environ.get(ENV_VAR)
    with use_library(root):
        s = scenarios[1]
        personas = load_personas(s.persona_ids)
        assert all(p.contract.kind == "synthetic" for p in personas.values())
        assert all(c.kind == "synthetic" for p in personas.values() for c in p.corpus)
        assert set(propositions_for(s.persona_ids)) == {p.id for p in s.propositions}
        deck = get_deck(s.id)
        assert {p.id: p.disagreement_type for p in deck.propositions if p.disagreement_type} == s.contested
    assert os.environ.get(ENV_VAR) == before


def test_a_debate_runs_on_a_scenario(tmp_path) -> None:
    from crux_lab.runner import run_debate_sync

    s = generate_scenarios(1, seed=2)[0]
    root = write_library([s], tmp_path)
    with use_library(root):
        result = run_debate_sync(s.config("blitz", seed=0))
    assert result.complete
    # turns address the engine's own claims (shown to the speakers by id), never deck ids
    said = {pid for t in result.transcript for pid in t.proposition_ids}
    claims = {e.claims.__len__() for e in result.events if e.type == "claims_decomposed"}
    assert said and claims and not said & {p.id for p in s.propositions}
