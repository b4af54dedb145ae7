"""The DCG crystallizer's hard rules, enforced in code on any reply."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from crux_lab.argumentation.dcg import check_invariants
from crux_lab.engines.dialogue.dcg_state import DCGHolder, dcg_insights
from crux_lab.engines.dialogue.schemas import DCGCrystallizationResult, ReasonAttack


def reply(**kw) -> DCGCrystallizationResult:  # type: ignore[no-untyped-def]
    return DCGCrystallizationResult.model_validate(kw)


def stance(did: str, who: str, side: str, turns: list[int] | None = None, statement: str = "s") -> dict:
    return {"dispute_id": did, "speaker_id": who, "side": side, "statement": statement,
            "derived_from_turns": [0] if turns is None else turns}


def split_dispute(h: DCGHolder, n: int = 1) -> None:
    r = reply(
        new_disputes=[{"id": f"n{i}", "question": f"Q{i}?"} for i in range(n)],
        upsert_stances=[x for i in range(n) for x in (stance(f"n{i}", "a", "YES"), stance(f"n{i}", "b", "NO"))],
    )
    h.apply(r, known_turns={0, 1, 2, 3})


def test_at_most_two_new_disputes_per_call() -> None:
    h = DCGHolder()
    split_dispute(h, 3)
    assert [d.id for d in h.state.disputes] == ["d-0", "d-1"]
    h2 = DCGHolder()
    r = reply(
        new_disputes=[{"id": f"n{i}", "question": f"Q{i}?"} for i in range(3)],
        upsert_stances=[x for i in range(3) for x in (stance(f"n{i}", "a", "YES"), stance(f"n{i}", "b", "NO"))],
    )
    ch = h2.apply(r)
    assert any("hard rule 1" in x for x in ch.refused)
    check_invariants(h2.state)


def test_a_dispute_needs_real_divergence() -> None:
    h = DCGHolder()
    ch = h.apply(reply(new_disputes=[{"id": "n", "question": "Q?"}],
                       upsert_stances=[stance("n", "a", "YES"), stance("n", "b", "YES")]))
    assert not h.state.disputes and any("divergence" in x for x in ch.refused)


def test_free_floating_stances_and_reasons_are_refused() -> None:
    h = DCGHolder()
    split_dispute(h)
    ch = h.apply(reply(
        upsert_stances=[stance("d-9", "c", "NO")],
        new_reasons=[{"dispute_id": "d-0", "speaker_id": "c", "claim": "orphan", "derived_from_turns": [1]}],
    ))
    assert len(ch.refused) == 2
    assert "is not in the graph" in ch.refused[0] and "new_disputes" in ch.refused[0] and "free-floating" in ch.refused[1]
    assert {s.speaker_id for s in h.state.stances} == {"a", "b"} and not h.state.reasons


def test_derived_from_turns_is_required_and_must_exist() -> None:
    h = DCGHolder()
    ch = h.apply(reply(new_disputes=[{"id": "n", "question": "Q?"}],
                       upsert_stances=[stance("n", "a", "YES", []), stance("n", "b", "NO")]))
    assert not h.state.disputes  # the YES stance was refused, so no divergence is left
    assert any("derivedFromTurns is required" in x for x in ch.refused)
    split_dispute(h)
    ch = h.apply(reply(new_reasons=[{"dispute_id": "d-0", "speaker_id": "a", "claim": "r", "derived_from_turns": [99]}]),
                 known_turns={0, 1})
    assert any("do not exist" in x for x in ch.refused) and not h.state.reasons


def test_concession_upserts_the_stance_and_can_create_common_ground() -> None:
    h = DCGHolder()
    split_dispute(h)
    ch = h.apply(reply(upsert_stances=[stance("d-0", "b", "YES", [2], "b now grants it")]))
    assert ch.flipped_stance_ids == ["s-1"] and len(h.state.stances) == 2  # updated, no duplicate
    cruxes, common, _, regime, _ = dcg_insights(h.state, ["a", "b"])
    assert not cruxes and [c.dispute_id for c in common] == ["d-0"] and regime.value == "consensus"
    assert h.state.stances[1].derived_from_turns == [0, 2]


def test_reasons_and_reason_layer_attacks_stay_inside_a_dispute() -> None:
    h = DCGHolder()
    split_dispute(h, 2)
    h.apply(reply(new_reasons=[
        {"id": "x", "dispute_id": "d-0", "speaker_id": "a", "claim": "supply is fixed", "derived_from_turns": [0]},
        {"id": "y", "dispute_id": "d-0", "speaker_id": "b", "claim": "liquidity drives it", "derived_from_turns": [1], "attacks": ["x"]},
        {"id": "z", "dispute_id": "d-1", "speaker_id": "a", "claim": "other", "derived_from_turns": [1]},
    ]))
    assert [r.attacks for r in h.state.reasons] == [[], ["r-0"], []]
    cruxes, *_ = dcg_insights(h.state, ["a", "b"])
    d0 = next(c for c in cruxes if c.dispute_id == "d-0")
    # Dung inside d-0: r-1 (NO) defeats r-0 (YES); both sides' reasons listed, YES side first
    assert d0.argument_ids == ["r-0", "r-1"] and d0.assumptions == ["supply is fixed", "liquidity drives it"]
    ch = h.add_reason_attacks([ReasonAttack(from_reason_id="r-2", to_reason_id="r-1")])
    assert ch.refused and "another dispute" in ch.refused[0]
    # a reason the graph does not hold, or a reason attacking itself: refused, saying why
    ch = h.add_reason_attacks([ReasonAttack(from_reason_id="r-9", to_reason_id="r-1"),
                               ReasonAttack(from_reason_id="r-1", to_reason_id="r-1")])
    assert len(ch.refused) == 2 and "'r-9', not a reason in the graph" in ch.refused[0]
    assert "cannot attack itself" in ch.refused[1] and h.state.reasons[1].attacks == ["r-0"]
    ch = h.add_reason_attacks([ReasonAttack(from_reason_id="r-0", to_reason_id="r-1")])
    assert not ch.refused and h.state.reasons[0].attacks == ["r-1"]
    check_invariants(h.state)
    cruxes, *_ = dcg_insights(h.state, ["a", "b"])
    assert {c.dispute_id for c in cruxes} == {"d-0", "d-1"}


# ---------------------------------------------------------------------------
# property: extraction alone can never make common ground (only a recorded flip can)
# ---------------------------------------------------------------------------

SPEAKERS = ["a", "b", "c"]
stance_st = st.fixed_dictionaries({
    "dispute_id": st.sampled_from(["n0", "n1", "n2", "d-0", "d-1", "d-2", "floating"]),
    "speaker_id": st.sampled_from(SPEAKERS),
    "side": st.sampled_from(["YES", "NO"]),
    "statement": st.just("s"),
    "derived_from_turns": st.sampled_from([[], [0], [1, 2]]),
})
reply_st = st.fixed_dictionaries({
    "new_disputes": st.lists(st.builds(lambda i: {"id": f"n{i}", "question": f"Q{i}?"}, st.integers(0, 2)),
                             max_size=3, unique_by=lambda d: d["id"]),
    "upsert_stances": st.lists(stance_st, max_size=6),
})


@settings(max_examples=150, deadline=None)
@given(st.lists(reply_st, min_size=1, max_size=5))
def test_common_ground_only_from_a_recorded_side_change(replies: list[dict]) -> None:
    h = DCGHolder()
    flipped = False
    for r in replies:
        ch = h.apply(reply(**r), known_turns={0, 1, 2})
        flipped = flipped or bool(ch.flipped_stance_ids)
        check_invariants(h.state)
        assert len(ch.new_dispute_ids) <= 2
        cruxes, common, _, regime, _ = dcg_insights(h.state, SPEAKERS)
        for c in cruxes:  # every split dispute is a crux, never common ground
            assert c.dispute_id not in {g.dispute_id for g in common}
        if not flipped:
            assert common == [] and regime.value != "consensus"


def test_a_new_dispute_that_restates_the_topic_is_refused_with_its_stances() -> None:
    """Qwen's first dispute on the Bitcoin debate was the topic word for word; it names no premise."""
    from crux_lab.engines.dialogue.crystallizer import DCGCrystallizer

    topic = "Is Bitcoin a better long-term store of value than gold?"
    c = DCGCrystallizer(topic, ["a", "b"], {"a": "Ann", "b": "Bo"})
    r = reply(
        new_disputes=[{"id": "new-1", "question": topic}, {"id": "new-2", "question": "Does scarcity always imply value?"}],
        upsert_stances=[stance("new-1", "a", "YES"), stance("new-1", "b", "NO"),
                        stance("new-2", "a", "YES"), stance("new-2", "b", "NO")],
    )
    applied = c.apply(r, [], (0, 1))
    assert [d.question for d in c.holder.state.disputes] == ["Does scarcity always imply value?"]
    assert len(c.holder.state.stances) == 2
    assert any("restates the debate topic" in x and topic in x for x in applied.refused)


def test_a_new_dispute_worded_like_one_in_the_graph_updates_it() -> None:
    """Qwen's two crystallizations of a Cedar Falls debate each created "I believe that public
    money should build a common school open to every child.": one dispute, not twins."""
    h = DCGHolder()
    question = "I believe that public money should build a common school open to every child."
    h.apply(reply(new_disputes=[{"id": "new-1", "question": question}],
                  upsert_stances=[stance("new-1", "a", "YES"), stance("new-1", "b", "NO")]), known_turns={0, 1, 2})
    ch = h.apply(reply(new_disputes=[{"id": "new-1", "question": "i believe that Public money should build a common school, open to every child"}],
                       upsert_stances=[stance("new-1", "a", "YES"), stance("new-1", "b", "YES", [2]), stance("new-1", "c", "NO", [2])]),
                 known_turns={0, 1, 2})
    assert [d.question for d in h.state.disputes] == [question]
    assert not ch.new_dispute_ids and ch.aliases["new-1"] == "d-0"
    assert {(s.speaker_id, s.side.value) for s in h.state.stances} == {("a", "YES"), ("b", "YES"), ("c", "NO")}
    assert ch.flipped_stance_ids == [h.stance_of("d-0", "b").id]  # type: ignore[union-attr]
    check_invariants(h.state)


def test_a_no_side_whose_quote_is_the_dispute_itself_is_sent_back_once() -> None:
    """The Cedar Falls Skeptic said "I believe that public money should build a common school
    open to every child.", and Qwen made that sentence the dispute with her on NO: the one
    repair says so; a side that disagrees in its own words passes."""
    from crux_lab.engines.dialogue.crystallizer import DCGCrystallizer
    from crux_lab.models.domain import DialogueTurn

    said = "I believe that public money should build a common school open to every child."
    other = "Parents should decide where their child learns, with the public money that follows them."
    turns = [DialogueTurn(id=f"t{i}", turn_index=i, persona_id=p, dialogue=d, phase="free_exchange")
             for i, (p, d) in enumerate([("skeptic", said), ("advocate", other)])]
    c = DCGCrystallizer("Schools policy in Cedar Falls", ["skeptic", "advocate"], {"skeptic": "The Skeptic", "advocate": "The Advocate"})

    def crystallization(skeptic: str, advocate: str) -> DCGCrystallizationResult:
        return reply(new_disputes=[{"id": "new-1", "question": said}], upsert_stances=[
            {**stance("new-1", "skeptic", skeptic, [0]), "quote": said},
            {**stance("new-1", "advocate", advocate, [1]), "quote": other}])

    guard = c.side_guard(turns)
    assert guard is not None
    guard.on_validate(crystallization("YES", "NO"))  # right way round: nothing to repair
    try:
        guard.on_validate(crystallization("NO", "YES"))
    except ValueError as exc:
        assert "the side of The Skeptic is NO" in str(exc) and "says that very thing" in str(exc)
    else:
        raise AssertionError("a swapped side passed")
    guard.on_validate(crystallization("NO", "YES"))  # one repair only: the second reply is taken


def test_a_side_stated_in_another_speakers_words_is_shown_in_its_own() -> None:
    """On a Polis conversation Qwen gave the second group's NO side the first group's sentence
    ("I disagree with the claim that the BG should focus solely on downtown."), with a quote of
    the second group's own: the stored stance, and so the card, shows the quote, and the run
    says so; a statement in its own speaker's words is kept."""
    from crux_lab.engines.dialogue.crystallizer import DCGCrystallizer
    from crux_lab.models.domain import DialogueTurn

    first = "I disagree with the claim that the BG should focus solely on downtown."
    second = "Downtown should get every new dollar before the rural areas do."
    turns = [DialogueTurn(id=f"t{i}", turn_index=i, persona_id=p, dialogue=d, phase="free_exchange")
             for i, (p, d) in enumerate([("g0", first), ("g1", second)])]
    c = DCGCrystallizer("The BG of 2050", ["g0", "g1"], {"g0": "Group 0", "g1": "Group 1"})
    c.known_turns = {0, 1}
    question = "Should the BG put downtown before its rural areas?"
    applied = c.apply(reply(new_disputes=[{"id": "new-1", "question": question}], upsert_stances=[
        {**stance("new-1", "g0", "NO", [0]), "statement": first, "quote": first},
        {**stance("new-1", "g1", "YES", [1]), "statement": first, "quote": second}]), turns, (0, 1))
    shown = {s.speaker_id: s.statement for s in c.holder.state.stances}
    assert shown == {"g0": first, "g1": second}
    card = c.insights().cruxes[0]
    assert [s.statement for s in card.yes_side] == [second] and [s.statement for s in card.no_side] == [first]
    assert len(applied.reworded) == 1 and "Group 1's side was stated in Group 0's words" in applied.reworded[0]


def test_a_dispute_that_speaks_about_the_talk_is_sent_back_then_refused() -> None:
    """Qwen's dcg disputes on dev and on Polis read "The argument that ...", "The debate is on
    whether ...": the one repair asks for the premise itself, and a reply still so is refused."""
    from crux_lab.engines.dialogue.crystallizer import DCGCrystallizer
    from crux_lab.models.domain import DialogueTurn

    turns = [DialogueTurn(id=f"t{i}", turn_index=i, persona_id=p, dialogue=d, phase="free_exchange")
             for i, (p, d) in enumerate([("a", "Downtown should come first for every new dollar."),
                                         ("b", "Rural roads need the money more than downtown does.")])]
    c = DCGCrystallizer("The BG of 2050", ["a", "b"], {"a": "Ann", "b": "Bo"})
    c.known_turns = {0, 1}
    narrated = "The debate is on whether the BG should focus solely on downtown."
    premise = "Should downtown get new money before the rural roads?"

    def crystallization(question: str) -> DCGCrystallizationResult:
        return reply(new_disputes=[{"id": "new-1", "question": question}], upsert_stances=[
            {**stance("new-1", "a", "YES", [0]), "quote": turns[0].dialogue},
            {**stance("new-1", "b", "NO", [1]), "quote": turns[1].dialogue}])

    guard = c.side_guard(turns)
    assert guard is not None
    guard.on_validate(crystallization(premise))
    try:
        guard.on_validate(crystallization(narrated))
    except ValueError as exc:
        assert "speaks about the talk" in str(exc) and narrated in str(exc)
    else:
        raise AssertionError("a narrated dispute passed")
    applied = c.apply(crystallization(narrated), turns, (0, 1))
    assert c.holder.state.disputes == [] and c.holder.state.stances == []
    assert any("speaks about the talk" in x for x in applied.refused)
    c.apply(crystallization(premise), turns, (0, 1))
    assert [d.question for d in c.holder.state.disputes] == [premise]
