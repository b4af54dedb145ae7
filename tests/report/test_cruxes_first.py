"""A sweep report opens with the cruxes its runs found, grouped where runs found the same one."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from crux_lab.analysis.crux_groups import (
    FoundCrux,
    calibrated_same,
    found_cruxes,
    group_cruxes,
    wording_same,
)
from crux_lab.models import (
    Crux,
    CruxCard,
    CruxCardPosition,
    CruxSide,
    DCGState,
    DebateConfig,
    DebateResult,
    Dispute,
    Stance,
)
from crux_lab.store import write_run

CONFIG = DebateConfig(topic="Is gold money?", persona_ids=["a", "b", "c"], engine="dcg")
NAMES = {"a": "Ann", "b": "Bo", "c": "Cy"}


def card(question: str, yes: str, no: str) -> CruxCard:
    return CruxCard(id=f"k{abs(hash(question)) % 1000}", question=question, disagreement_type="evidence", diagnosis="",
                    personas={yes: CruxCardPosition(position="YES", reasoning="r"),
                              no: CruxCardPosition(position="NO", reasoning="r")})


def test_every_engine_shape_gives_question_type_and_named_sides() -> None:
    result = DebateResult(
        run_id="r1", config=CONFIG, engine="dcg", backend="simulated",
        crux_cards=[card("Does gold hold value in a crisis?", "a", "b")],
        cruxes=[Crux(id="x", statement="Is scarcity enough for value?", source="proposed", disagreement_type="premise",
                     yes_side=[CruxSide(persona_id="c")], no_side=[CruxSide(persona_id="a")])],
        dcg=DCGState(disputes=[Dispute(id="d1", question="Will central banks keep buying gold?")],
                     stances=[Stance(id="s1", dispute_id="d1", speaker_id="b", side="YES", statement="They will."),
                              Stance(id="s2", dispute_id="d1", speaker_id="c", side="NO", statement="They won't.")]),
    )
    found = found_cruxes(result, NAMES)
    assert [(f.question, f.type, f.yes, f.no) for f in found] == [
        ("Does gold hold value in a crisis?", "evidence", ("Ann",), ("Bo",)),
        ("Is scarcity enough for value?", "premise", ("Cy",), ("Ann",)),
        ("Will central banks keep buying gold?", None, ("Bo",), ("Cy",)),
    ]


def test_runs_that_found_the_same_crux_are_one_group_with_their_count() -> None:
    items = [
        FoundCrux("r1", "dcg", "Will rates rise next year?", "evidence", ("Ann",), ("Bo",)),
        FoundCrux("r2", "panel", "Does gold hold its value in a crisis?", "evidence", ("Ann",), ("Bo",)),
        FoundCrux("r3", "dcg", "Does gold really hold its value in a crisis?", "values", ("Cy",), ("Bo",)),
        FoundCrux("r3", "dcg", "Does gold hold its value in a crisis?", "evidence", ("Cy",), ("Bo",)),  # twice in one run
    ]
    groups = group_cruxes(items, wording_same)
    assert [(g.question, g.runs, g.type) for g in groups] == [
        ("Does gold hold its value in a crisis?", 2, "evidence"), ("Will rates rise next year?", 1, "evidence")]
    # sides as the first wording's run gave them; every run and engine that found it
    assert groups[0].yes == ("Ann",) and groups[0].no == ("Bo",) and groups[0].engines == ("panel", "dcg")
    assert groups[0].run_ids == ("r2", "r3")
    assert groups[0].wordings == ("Does gold hold its value in a crisis?", "Does gold really hold its value in a crisis?")


def test_the_calibrated_matcher_joins_paraphrases_and_keeps_distinct_premises_apart() -> None:
    same = calibrated_same(["Do smaller classes raise test scores?", "Do smaller class sizes improve test results?",
                            "Should phones be banned during the school day?"])
    assert same[0, 1] and not same[0, 2] and not same[1, 2]


def test_the_html_lists_groups_with_run_counts_and_links(tmp_path: Path) -> None:
    import crux_lab.workbench as wb

    dirs = []
    for k, question in enumerate(["Does gold hold its value in a crisis?", "Does gold really hold its value in a crisis?"]):
        result = DebateResult(run_id=f"{k:016x}", config=CONFIG, engine="panel", backend="simulated",
                              crux_cards=[card(question, "a", "b")])
        dirs.append(str(write_run(result, tmp_path)))
    html = wb.cruxes_across_runs_html(pd.DataFrame({"run_dir": dirs}), "runs").html
    assert "1 crux(es) across 2 run(s)" in html and "2 of 2" in html
    assert "Does gold hold its value in a crisis?" in html and "also worded: Does gold really" in html
    assert "<td>a</td><td>b</td>" in html  # ids stand in for names the library does not hold
    assert re.findall(r'href="runs/([0-9a-f]{16})\.html"', html) == ["0" * 16, "0" * 15 + "1"]
    empty = wb.cruxes_across_runs_html(pd.DataFrame({"run_dir": []})).html
    assert "none of these runs found a crux" in empty


def test_a_wording_that_only_names_who_holds_what_is_not_listed_as_another_wording(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's "also worded" read "Michael Saylor holds: ... Peter Schiff holds: I don't
    accept ...": dialogue's sides, which the yes and no columns already show."""
    import crux_lab.workbench as wb

    dirs = []
    for k, question in enumerate(["Does gold hold its value in a crisis?",
                                  "Ann holds: Gold holds its value in a crisis. Bo holds: Gold does not hold its value in a crisis."]):
        result = DebateResult(run_id=f"{k:016x}", config=CONFIG, engine="panel", backend="simulated",
                              crux_cards=[card(question, "a", "b")])
        dirs.append(str(write_run(result, tmp_path)))
    def one_group(items: list[FoundCrux]) -> list:
        groups = group_cruxes(items, lambda texts: np.ones((len(texts), len(texts)), dtype=bool))
        assert len(groups) == 1 and len(groups[0].wordings) == 2  # both wordings in one group
        return groups

    monkeypatch.setattr(wb, "group_cruxes", one_group)
    html = wb.cruxes_across_runs_html(pd.DataFrame({"run_dir": dirs}), "runs").html
    assert "<b>Does gold hold its value in a crisis?</b>" in html and "holds:" not in html


def test_a_crux_that_restates_the_topic_is_marked_and_listed_last(tmp_path: Path) -> None:
    """The demo sweep's report opened with its topic as a claim ("Bitcoin is a better long-term
    store of value than gold."): it is no premise under the topic, so it is marked and goes last."""
    import crux_lab.workbench as wb

    config = CONFIG.model_copy(update={"topic": "Is Bitcoin a better long-term store of value than gold?"})
    topic, premise = "Bitcoin is a better long-term store of value than gold.", "Does a supply no one can dilute give an asset value without any use?"
    dirs = []
    for k in range(2):  # the topic found twice, a premise once: by count alone the topic leads
        cards = [card(topic, "a", "b")] + ([card(premise, "a", "b")] if k else [])
        result = DebateResult(run_id=f"{k:016x}", config=config, engine="panel", backend="simulated", crux_cards=cards)
        dirs.append(str(write_run(result, tmp_path)))
    html = wb.cruxes_across_runs_html(pd.DataFrame({"run_dir": dirs})).html
    assert html.index(premise) < html.index(f"<b>{topic}</b>")
    assert html.count("restates the debate topic") == 1 and html.index("restates the debate topic") > html.index(f"<b>{topic}</b>")
