from __future__ import annotations

from crux_lab.models import Concession, CruxCard, CruxCardPosition, DialogueTurn
from crux_lab.personas.loader import load_persona
from crux_lab.personas.revision import (
    apply_card,
    initial_state,
    is_named_reason,
    record_turn,
    track,
)


def _turn(i: int, pid: str, stance: str, text: str, move: str | None = None) -> DialogueTurn:
    return DialogueTurn(id=f"t{i}", turn_index=i, persona_id=pid, dialogue=text, phase="free_exchange",
                        proposition_ids=["crypto.p3"], stance=stance, move=move)  # type: ignore[arg-type]


def test_initial_lists_follow_ground_truth() -> None:
    p = load_persona("arthur-hayes")
    st = initial_state(p)
    pros = {s.proposition_id for s in p.stances.stances if s.stance == "pro"}
    cons = {s.proposition_id for s in p.stances.stances if s.stance == "con"}
    assert st.claims_accepted == pros and st.claims_rejected == cons
    assert st.changes == ()


def test_unexplained_change_is_flagged_and_named_one_is_not() -> None:
    st = initial_state(load_persona("arthur-hayes"))  # con on crypto.p3
    st = record_turn(st, _turn(1, "arthur-hayes", "con", "Gold does not win a crisis."))
    assert st.changes == ()
    sycophantic = record_turn(st, _turn(2, "arthur-hayes", "pro", "That's a great point, I agree.", "CONCEDE"))
    (change,) = sycophantic.changes
    assert (change.before, change.after, change.flagged) == ("con", "pro", True)
    assert "crypto.p3" in sycophantic.claims_accepted and "crypto.p3" not in sycophantic.claims_rejected
    named = record_turn(st, _turn(2, "arthur-hayes", "uncertain",
                                  "March 2020 data show Bitcoin fell about half while gold held, so I no longer claim it wins a crisis."))
    assert named.changes[0].named_reason and named.unexplained_changes == []
    assert "crypto.p3" not in named.claims_accepted | named.claims_rejected
    assert st.stance("crypto.p3") == "con"  # pure: the earlier state is unchanged


def test_card_updates_lists() -> None:
    st = initial_state(load_persona("michael-saylor"))
    card = CruxCard(id="k1", question="Is adoption deterministic?", disagreement_type="premise", diagnosis="d",
                    proposition_ids=["crypto.p2"],
                    personas={"michael-saylor": CruxCardPosition(position="NUANCED", reasoning="ok")})
    after = apply_card(st, card)
    assert "crypto.p2" in st.claims_accepted and "crypto.p2" not in after.claims_accepted
    assert after.unexplained_changes and after.unexplained_changes[0].ref == "k1"
    free_text = CruxCard(id="k2", question="Is volatility a feature?", disagreement_type="values", diagnosis="d",
                         personas={"michael-saylor": CruxCardPosition(position="YES", reasoning="Volatility is the price of performance because holders are paid over four years.")})
    assert "Is volatility a feature?" in apply_card(st, free_text).claims_accepted


def test_track_replays_turns_concessions_and_cards() -> None:
    personas = {pid: load_persona(pid) for pid in ("michael-saylor", "peter-schiff")}
    turns = [_turn(1, "peter-schiff", "pro", "Gold wins crises."), _turn(2, "michael-saylor", "con", "It does not.")]
    conc = [Concession(turn_index=3, persona_id="michael-saylor", type="full", conceded_claim="gold in crises",
                       proposition_id="crypto.p3", reason="fair enough")]
    states = track(personas, turns=turns, concessions=conc)
    s = states["michael-saylor"]
    assert s.stance("crypto.p3") == "uncertain" and len(s.unexplained_changes) == 1
    assert states["peter-schiff"].changes == ()


def test_named_reason_heuristic() -> None:
    assert not is_named_reason("You make a good point. Fair enough.")
    assert is_named_reason("Given the 2022 merge data, energy use fell 99.9 percent, so the energy cost argument is weaker.")


def test_flip_condition_counts_as_named_reason() -> None:
    st = initial_state(load_persona("arthur-hayes"))
    # Hayes's trigger on crypto.p3 fires on "March 2020"; the bare mention is terse but legitimate.
    after = record_turn(st, _turn(1, "arthur-hayes", "uncertain", "Fine: March 2020."))
    (change,) = after.changes
    assert change.flip_condition == "hayes.p3.f1" and not change.flagged
    bare = record_turn(st, _turn(1, "arthur-hayes", "uncertain", "Fine."))
    assert bare.changes[0].flagged and bare.changes[0].flip_condition is None
