"""The hand-written scenario sets of benchmarks/scenarios/ (dev/ to tune on, test/ frozen) and the
checks that keep them honest: a frozen test set, no shared domain or proposition, and one named
error for each kind of broken input."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from crux_lab.analysis.scenarios import (
    ANSWER_KEY,
    BANK,
    FROZEN,
    Scenario,
    ScenarioError,
    check_split,
    generate_scenarios,
    load_scenarios,
    set_digest,
    write_library,
)
from crux_lab.personas.loader import load_persona_dir

REPO = Path(__file__).resolve().parents[2]
SETS = REPO / "benchmarks" / "scenarios"
DEV, TEST = SETS / "dev", SETS / "test"
EXAMPLE = REPO / "examples" / "scenarios"

# The frozen test set's digest. Changing a file of test/ fails this test on purpose: the test
# set is never edited (add scenarios to dev/). See benchmarks/scenarios/README.md.
TEST_SET_SHA256 = "e60823e8c1b472d6e4b6b0d34e584428790365bfcc6cfac12a2f3e72775a5558"

CONTESTED_TYPES = ["definition", "evidence", "horizon", "values"]


def norm(text: str) -> str:
    return " ".join(text.lower().split())


def both() -> list[tuple[Path, Scenario]]:
    return [(root, s) for root in (DEV, TEST) for s in load_scenarios(root)]


# ---------------------------------------------------------------------------
# The sets themselves
# ---------------------------------------------------------------------------


def test_both_sets_load_with_twelve_scenarios_six_each() -> None:
    dev, test = load_scenarios(DEV), load_scenarios(TEST)
    assert len(dev) == 6 and len(test) == 6
    assert len({s.id for s in dev + test}) == 12


def test_domains_are_many_and_dev_and_test_share_none() -> None:
    dev, test = check_split(DEV, TEST)
    dev_domains, test_domains = {norm(s.domain) for s in dev}, {norm(s.domain) for s in test}
    assert len(dev_domains) == 6 and len(test_domains) == 6  # one domain per scenario
    assert len(dev_domains | test_domains) >= 6
    assert not dev_domains & test_domains
    generator = {norm(d) for d in BANK}
    assert not (dev_domains | test_domains) & generator  # not the generator's domains


@pytest.mark.parametrize("root", [DEV, TEST], ids=["dev", "test"])
def test_each_scenario_has_three_or_four_personas_four_typed_cruxes_and_two_consensus(root: Path) -> None:
    for s in load_scenarios(root):
        assert 3 <= len(s.persona_ids) <= 4, s.id
        assert sorted(t.value for t in s.contested.values()) == CONTESTED_TYPES, s.id
        assert len(s.consensus) == 2, s.id
        splits = set()
        for p in s.propositions:
            held = [p.stances[pid] for pid in s.persona_ids]
            if p.contested:
                assert set(held) == {"pro", "con"}, (s.id, p.id)  # no uncertain; both sides present
                pro = frozenset(pid for pid in s.persona_ids if p.stances[pid] == "pro")
                splits.add(frozenset({pro, frozenset(s.persona_ids) - pro}))
            else:
                assert set(held) == {"pro"}, (s.id, p.id)
        assert len(splits) >= 3, f"{s.id}: the same camps on most cruxes"


@pytest.mark.parametrize("root", [DEV, TEST], ids=["dev", "test"])
def test_personas_are_synthetic_with_reasons_confidences_and_planted_flips(root: Path) -> None:
    for s in load_scenarios(root):
        flips = contested = 0
        for pid in s.persona_ids:
            persona = load_persona_dir(root / pid)
            assert persona.contract.kind == "synthetic" and persona.contract.personality.startswith("A synthetic archetype.")
            assert all(c.kind == "synthetic" for c in persona.corpus)
            assert persona.contract.name.endswith(")"), persona.contract.name  # "The Role (Town)"
            for st in persona.stances.stances:
                assert 0.6 <= st.confidence <= 0.95, (pid, st.proposition_id)
                assert len(st.reason.split()) >= 6 and st.reason.rstrip().endswith((".", "?")), (pid, st.reason)
                for flip in st.flip_conditions:
                    assert flip.kind == "evidence" and flip.keywords and flip.new_stance == "uncertain", flip.id
                    assert flip.proposition_id == st.proposition_id and flip.by == "any"
                if st.disagreement_type is None:
                    assert not st.flip_conditions, (pid, st.proposition_id)
                else:
                    contested += 1
                    flips += len(st.flip_conditions)
        assert 0.35 <= flips / contested <= 0.65, f"{s.id}: {flips} of {contested} contested stances carry a flip"
        # the loader reads them into the scenario: which persona would move on which proposition
        planted = {(pid, st.proposition_id) for pid in s.persona_ids for st in load_persona_dir(root / pid).stances.stances
                   if st.flip_conditions}
        assert s.flips == planted and len(s.flips) == flips


def test_no_proposition_is_shared_restates_its_topic_or_comes_from_the_bank() -> None:
    seen: dict[str, str] = {}
    for _, s in both():
        topic = norm(s.topic)
        for p in s.propositions:
            for words in (p.text, p.question):
                key = norm(words)
                assert key not in seen, f"{p.id} repeats {seen.get(key)}"
                seen[key] = p.id
                assert key != topic, p.id
    bank = [norm(re.sub(r"\{city\}", "", e.text)) for entries in BANK.values() for e in entries]
    for key in seen:
        assert not any(b and b in key for b in bank), key


def test_topics_are_questions_and_towns_differ() -> None:
    towns = set()
    for root, s in both():
        assert s.topic.endswith("?"), s.topic
        deck = json.loads((root / "decks.json").read_text())["decks"]
        town = next(d for d in deck if d["id"] == s.id)["description"].split(", ")[1].split(")")[0]
        towns.add(town)
        assert town in s.topic
    assert len(towns) == 12


def test_the_test_set_is_frozen_at_its_recorded_hash() -> None:
    recorded = json.loads((TEST / FROZEN).read_text())
    assert set_digest(TEST) == TEST_SET_SHA256 == recorded["sha256"]
    assert recorded["note"]
    assert not (DEV / FROZEN).exists()  # dev/ is where tuning and new scenarios go


def test_set_digest_covers_every_file_but_frozen_json(tmp_path: Path) -> None:
    root = shutil.copytree(TEST, tmp_path / "t")
    assert set_digest(root) == TEST_SET_SHA256
    (root / FROZEN).write_text("{}")
    assert set_digest(root) == TEST_SET_SHA256  # the file holding the digest is not part of it
    corpus = next(root.glob("*/corpus.jsonl"))
    corpus.write_bytes(corpus.read_bytes() + b"\n")
    assert set_digest(root) != TEST_SET_SHA256
    corpus.write_bytes(corpus.read_bytes()[:-1])
    assert set_digest(root) == TEST_SET_SHA256
    corpus.rename(corpus.with_name("corpus2.jsonl"))
    assert set_digest(root) != TEST_SET_SHA256


def test_domain_is_optional_and_round_trips(tmp_path: Path) -> None:
    assert [s.domain for s in load_scenarios(EXAMPLE)] == [""]  # an old folder without domains still loads
    planted = generate_scenarios(2, seed=4)
    loaded = load_scenarios(write_library(planted, tmp_path / "lib"))
    assert [s.domain for s in loaded] == [s.domain for s in planted] and all(s.domain for s in loaded)


# ---------------------------------------------------------------------------
# Bad input: one line naming the file, the field and the fix
# ---------------------------------------------------------------------------


def edit(path: Path, change: Callable[[Any], object]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=1))


def fails(root: Path, *parts: str) -> str:
    with pytest.raises(ScenarioError) as err:
        load_scenarios(root)
    message = str(err.value)
    assert "\n" not in message
    for part in parts:
        assert part in message, message
    return message


@pytest.fixture
def dev_copy(tmp_path: Path) -> Path:
    root = shutil.copytree(DEV, tmp_path / "dev")
    load_scenarios(root)  # sound before it is broken
    return root


def test_a_crux_nobody_opposes_is_refused(dev_copy: Path) -> None:
    key = json.loads((dev_copy / ANSWER_KEY).read_text())["scenarios"][1]  # public-health
    crux = key["propositions"][0]["id"]
    for pid in key["personaIds"]:
        edit(dev_copy / pid / "stances.json",
             lambda d: [st.update(stance="pro") for st in d["stances"] if st["propositionId"] == crux])
    fails(dev_copy, str(dev_copy / ANSWER_KEY), "scenarios[1].propositions[0].type", "no persona holds it con")


@pytest.mark.parametrize("owner", ["housing-builder", "housing-nobody"])
def test_a_stance_file_of_another_or_unknown_persona_is_refused(dev_copy: Path, owner: str) -> None:
    path = dev_copy / "housing-renter" / "stances.json"
    edit(path, lambda d: d.update(personaId=owner))
    fails(dev_copy, str(path), "personaId", repr(owner), "set it to 'housing-renter'")


def test_a_flip_condition_by_an_unknown_persona_is_refused(dev_copy: Path) -> None:
    path = dev_copy / "housing-renter" / "stances.json"
    edit(path, lambda d: d["stances"][0]["flipConditions"][0].update(by="farming-tenant"))
    fails(dev_copy, str(path), "stances[0].flipConditions[0].by", "'farming-tenant'", '"any"')
    edit(path, lambda d: d["stances"][0]["flipConditions"][0].update(by="housing-builder"))
    assert load_scenarios(dev_copy)  # a persona of the scenario is fine


@pytest.mark.parametrize("field", ["text", "question"])
def test_a_proposition_repeated_across_scenarios_is_refused(dev_copy: Path, field: str) -> None:
    def repeat(d: dict[str, Any]) -> None:
        first = d["scenarios"][0]["propositions"][0][field]
        d["scenarios"][2]["propositions"][1][field] = "  " + first.upper().replace(" ", "  ")  # case and spaces differ

    edit(dev_copy / ANSWER_KEY, repeat)
    fails(dev_copy, str(dev_copy / ANSWER_KEY), f"scenarios[2].propositions[1].{field}",
          f"scenarios[0].propositions[0].{field}", "reword")


def test_an_edited_frozen_set_is_refused(tmp_path: Path) -> None:
    root = shutil.copytree(TEST, tmp_path / "test")
    assert len(load_scenarios(root)) == 6
    edit(root / "fisheries-skipper" / "stances.json", lambda d: d["stances"][0].update(confidence=0.6))
    fails(root, str(root / FROZEN), "sha256", "the test set is frozen", "add scenarios to dev/")
    (root / FROZEN).write_text('{"note": "no digest"}')
    fails(root, str(root / FROZEN), "sha256")


def test_check_split_refuses_a_shared_domain_or_proposition(tmp_path: Path) -> None:
    dev = shutil.copytree(DEV, tmp_path / "dev")
    test = shutil.copytree(DEV, tmp_path / "test")
    with pytest.raises(ScenarioError) as err:
        check_split(dev, test)
    assert f"{test / ANSWER_KEY}: scenarios[0].domain" in str(err.value) and "'housing'" in str(err.value)
    edit(test / ANSWER_KEY, lambda d: [s.update(domain=f"other {s['domain']}") for s in d["scenarios"]])
    with pytest.raises(ScenarioError) as err:
        check_split(dev, test)
    assert f"{test / ANSWER_KEY}: scenarios[0].propositions[0].text" in str(err.value) and "housing.p1" in str(err.value)
    edit(test / ANSWER_KEY, lambda d: d["scenarios"][0].pop("domain"))
    with pytest.raises(ScenarioError, match=re.escape(f"{test / ANSWER_KEY}: scenarios[0].domain")):
        check_split(dev, test)
