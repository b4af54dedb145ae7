"""Camps and crux sides are true for every engine: the tidy step on random input, then whole
debates of every debating engine on the simulator, across seeds and topics."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crux_lab.analysis.sides import side_breaks, tidy_camps, tidy_crux, tidy_sides
from crux_lab.models import (
    Camp,
    Crux,
    CruxCard,
    CruxCardPosition,
    CruxSide,
    DebateConfig,
    DebateResult,
)

PERSONAS = ["michael-saylor", "peter-schiff", "arthur-hayes"]
NAMES = {"michael-saylor": "Michael Saylor", "peter-schiff": "Peter Schiff", "arthur-hayes": "Arthur Hayes"}
ENGINES = ["dialogue", "dcg", "panel", "crux_rooms", "blitz", "classical", "graph"]
TOPICS = ["Is Bitcoin a better long-term store of value than gold?", "What drives the Bitcoin price: adoption or liquidity?"]

members = st.lists(st.sampled_from(PERSONAS), max_size=4)
sides = st.lists(st.builds(CruxSide, persona_id=st.sampled_from(PERSONAS), statement=st.sampled_from(["", "x", "y"])),
                 max_size=4)


def result_with(camps: list[Camp], cruxes: list[Crux], cards: list[CruxCard] | None = None) -> DebateResult:
    return DebateResult(run_id="r", config=DebateConfig(topic="t", persona_ids=PERSONAS), engine="dialogue",
                        backend="simulated", camps=camps, cruxes=cruxes, crux_cards=cards or [])


@settings(max_examples=300)
@given(st.lists(members, max_size=6), st.lists(st.tuples(sides, sides), max_size=4))
def test_tidy_makes_any_camps_and_sides_true(groups: list[list[str]], pairs: list[tuple[list[CruxSide], list[CruxSide]]]) -> None:
    camps = [Camp(index=i, persona_ids=g, label=", ".join(g)) for i, g in enumerate(groups)]
    cruxes = [Crux(id=f"c{i}", statement="s", source="dispute", yes_side=y, no_side=n) for i, (y, n) in enumerate(pairs)]
    result = result_with(camps, cruxes)
    tidy_sides(result, NAMES)
    assert side_breaks(result, NAMES) == []
    # Nobody is lost or invented: the camps hold exactly the personas the groups held.
    assert {p for c in result.camps for p in c.persona_ids} == {p for g in groups for p in g}
    for before, after in zip(cruxes, result.cruxes, strict=True):
        both = {s.persona_id for s in before.yes_side} & {s.persona_id for s in before.no_side}
        if after.sides_known:  # a side named only by the engine's own sides, never someone from both
            assert {s.persona_id for s in after.yes_side} <= {s.persona_id for s in before.yes_side} - both
    tidy_sides(result, NAMES)  # idempotent
    assert side_breaks(result, NAMES) == []


def test_overlapping_extensions_become_disjoint_camps_and_are_kept_apart() -> None:
    """The reported case: 4 camps for 3 personas (Hayes alone, Hayes with Saylor, Saylor alone, Schiff)."""
    ext = [["arthur-hayes"], ["arthur-hayes", "michael-saylor"], ["michael-saylor"], ["peter-schiff"]]
    camps, extensions = tidy_camps([Camp(index=i, persona_ids=g) for i, g in enumerate(ext)], NAMES)
    assert [c.persona_ids for c in camps] == [["arthur-hayes"], ["michael-saylor"], ["peter-schiff"]]
    assert [c.label for c in camps] == ["Arthur Hayes", "Michael Saylor", "Peter Schiff"]
    assert len(extensions) == 4 and extensions[1].label == "Arthur Hayes, Michael Saylor"


def test_numbered_camps_are_labelled_by_their_members() -> None:
    """Panel's camps came labelled "camp 1: for '...'" and "camp 2", naming nobody."""
    camps = [Camp(index=0, persona_ids=["michael-saylor"], label="camp 1: for 'firms should hold Bitcoin'"),
             Camp(index=1, persona_ids=["arthur-hayes", "peter-schiff"], label="camp 2")]
    result = result_with(camps, [])
    assert len(side_breaks(result, NAMES)) == 2
    tidy_sides(result, NAMES)
    assert [c.label for c in result.camps] == ["Michael Saylor: for 'firms should hold Bitcoin'", "Arthur Hayes, Peter Schiff"]
    assert side_breaks(result, NAMES) == []


def test_a_crux_with_a_persona_on_both_sides_or_none_is_labelled_not_left_empty() -> None:
    both = Crux(id="c", statement="s", source="symmetric_difference",
                yes_side=[CruxSide(persona_id="arthur-hayes")],
                no_side=[CruxSide(persona_id="arthur-hayes"), CruxSide(persona_id="peter-schiff")])
    tidy = tidy_crux(both)
    assert tidy.sides_known is False and tidy.yes_side == tidy.no_side == []
    assert side_breaks(result_with([], [both])) == ["crux c: ['arthur-hayes'] on both sides"]


def test_a_persona_with_two_arguments_on_a_side_is_named_once() -> None:
    """Qwen's graph run on a Polis conversation named one group twice on the same side, once
    per argument it made."""
    twice = Crux(id="c", statement="s", source="assumption",
                 yes_side=[CruxSide(persona_id="arthur-hayes", statement="Day trips pay.")],
                 no_side=[CruxSide(persona_id="peter-schiff", statement="Art first."),
                          CruxSide(persona_id="peter-schiff", statement="Jobs come from industry.")])
    assert side_breaks(result_with([], [twice])) == ["crux c: ['peter-schiff'] named twice on one side"]
    tidy = tidy_crux(twice)
    assert [(s.persona_id, s.statement) for s in tidy.no_side] == [("peter-schiff", "Art first.; Jobs come from industry.")]
    assert side_breaks(result_with([], [tidy])) == []


def test_a_resolved_card_whose_positions_differ_is_not_resolved() -> None:
    pos = {"michael-saylor": CruxCardPosition(position="NUANCED", reasoning="r"),
           "peter-schiff": CruxCardPosition(position="NO", reasoning="r")}
    card = CruxCard(id="k", question="q", disagreement_type="values", diagnosis="d", resolved=True,
                    resolution="Michael Saylor moved.", personas=pos)
    result = result_with([], [], [card])
    assert side_breaks(result) == ["card k: resolved while its positions differ"]
    tidy_sides(result, NAMES)
    assert result.crux_cards[0].resolved is False and result.crux_cards[0].resolution == "Michael Saylor moved."


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(engine=st.sampled_from(ENGINES), seed=st.integers(0, 2**16), topic=st.sampled_from(TOPICS))
def test_every_engine_gives_true_camps_and_sides(engine: str, seed: int, topic: str) -> None:
    from crux_lab.runner import run_debate_sync
    from crux_lab.workbench import debate_config

    result = run_debate_sync(debate_config(topic, PERSONAS, engine, "simulated", seed, 6, deck="crypto"))
    assert side_breaks(result, NAMES) == []
    assert all(c.sides_known is not None for c in result.cruxes)
    for camp in result.camps:
        assert camp.label and not any(pid in camp.label for pid in PERSONAS)


def test_the_reported_dialogue_run_has_three_camps_and_named_sides() -> None:
    """Saylor, Schiff and Hayes on the store-of-value question, seed 3 (was: 4 camps, empty sides)."""
    from crux_lab.runner import run_debate_sync
    from crux_lab.workbench import debate_config

    result = run_debate_sync(debate_config(TOPICS[0], PERSONAS, "dialogue", "simulated", 3, 16, deck="crypto"))
    assert side_breaks(result) == [] and len(result.camps) <= 3
    assert any(c.sides_known for c in result.cruxes)
