"""Crux and persona quality metrics: topic restatement, falsifier concreteness, voice fidelity
and reasoning differentiation."""

from __future__ import annotations

import asyncio
import math

from crux_lab.analysis.quality import (
    falsifier_concreteness,
    falsifier_score,
    judge_falsifiers,
    mark_restates_topic,
    reasoning_differentiation,
    restates_topic_rate,
    voice_fidelity,
)
from crux_lab.analysis.restates import (
    RESTATES_AT,
    calibration_pairs,
    restates_topic,
    restates_topic_flags,
)
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.models import (
    CardPosition,
    Crux,
    CruxCard,
    CruxCardPosition,
    DebateConfig,
    DebateResult,
    DialogueTurn,
    DisagreementType,
)
from crux_lab.personas.loader import load_personas, propositions_for

HOUSING = "Will building more housing make the city affordable?"


def result(topic: str = HOUSING, ids: list[str] | None = None, **fields: object) -> DebateResult:
    config = DebateConfig(topic=topic, persona_ids=ids or ["a", "b"])
    return DebateResult(run_id="r", config=config, engine="x", backend="simulated", **fields)  # type: ignore[arg-type]


def card(question: str, falsifier: str | None = None) -> CruxCard:
    pos = CruxCardPosition(position=CardPosition.YES, reasoning="r", falsifier=falsifier)
    return CruxCard(id=question[:5], question=question, disagreement_type=DisagreementType.evidence, diagnosis="d",
                    personas={"a": pos, "b": pos.model_copy(update={"position": CardPosition.NO})})


def test_a_restatement_is_flagged_and_a_premise_is_not() -> None:
    assert restates_topic("Does building more homes make a city affordable?", HOUSING)
    assert not restates_topic("Does rent control do more harm than good over the long run?", HOUSING)
    assert not restates_topic("Is restrictive zoning the main cause of high housing costs?", HOUSING)
    assert restates_topic_flags(["anything"], "") == [False]


def test_the_calibrated_rule_separates_the_held_out_deck() -> None:
    held = [p for p in calibration_pairs() if p.deck == "housing" and p.topic == HOUSING]
    assert sum(p.restates for p in held) >= 2 and sum(not p.restates for p in held) >= 10
    flags = restates_topic_flags([p.question for p in held], HOUSING)
    wrong = [p.question for p, f in zip(held, flags, strict=True) if f != p.restates]
    assert wrong == [], f"misjudged at threshold {RESTATES_AT}: {wrong}"


def test_every_crux_and_card_is_stamped_and_the_rate_counts_crux_items() -> None:
    r = result(
        crux_cards=[card("Does building more homes make a city affordable?"), card("Do rents fall within five years of new supply?")],
        cruxes=[Crux(id="x", statement="Is zoning the main cause of high housing costs?", source="dispute")],
    )
    mark_restates_topic(r)
    assert [c.restates_topic for c in r.crux_cards] == [True, False] and r.cruxes[0].restates_topic is False
    assert restates_topic_rate(r) == 1 / 3
    assert math.isnan(restates_topic_rate(result()))
    dumped = DebateResult.model_validate_json(r.model_dump_json())
    assert dumped.crux_cards[0].restates_topic is True


def test_falsifier_concreteness_prefers_observable_bounded_conditions() -> None:
    concrete = "If median rents in the city fell by 10% within five years of the new towers opening."
    vague = "If I saw new evidence."
    assert falsifier_score(concrete) == 1.0 and falsifier_score(vague) < 0.4
    r = result(crux_cards=[card("q1?", concrete), card("q2?", vague)], flip_conditions={"a": [concrete]})
    assert falsifier_concreteness(r) == (falsifier_score(concrete) + falsifier_score(vague)) / 2
    assert math.isnan(falsifier_concreteness(result()))


def test_the_falsifier_judge_on_the_simulator_says_it_is_the_heuristic() -> None:
    backend = SimulatedBackend(load_personas(["yimby-economist"]), propositions_for(["yimby-economist"]))
    share, basis = asyncio.run(judge_falsifiers(backend, ["If rents fell 10% within five years.", "New evidence."]))
    assert share == 0.5 and "heuristic" in basis and "Simulated" in basis


def turns(by: dict[str, list[str]]) -> list[DialogueTurn]:
    out = []
    for i in range(max(len(v) for v in by.values())):
        for pid, texts in by.items():
            if i < len(texts):
                out.append(DialogueTurn(id=f"t{len(out)}", turn_index=len(out), persona_id=pid, dialogue=texts[i], phase="round"))
    return out


def test_voice_fidelity_names_the_speaker_of_their_own_words_and_not_of_swapped_ones() -> None:
    ids = ["michael-saylor", "peter-schiff"]
    personas = load_personas(ids)
    own = {pid: [c.text for c in personas[pid].corpus[:6]] for pid in ids}
    right = result("Bitcoin vs gold", ids, transcript=turns(own))
    swapped = result("Bitcoin vs gold", ids, transcript=turns({ids[0]: own[ids[1]], ids[1]: own[ids[0]]}))
    assert voice_fidelity(right, personas) >= 0.9
    assert voice_fidelity(swapped, personas) <= 0.1
    assert math.isnan(voice_fidelity(result("t", ids), personas))


def test_reasoning_differentiation_tells_shapes_apart_not_topics() -> None:
    hedger = [f"Perhaps rents might fall, but could it last? It may depend on year {i}." for i in range(6)]
    asserter = [f"Clearly supply always lowers rents because the data show it; prices fell {i}%." for i in range(6)]
    assert reasoning_differentiation(result(transcript=turns({"a": hedger, "b": asserter}))) == 1.0
    # Both personas reason in both shapes, half and half: the shape says nothing about who spoke.
    mixed_a = hedger[:3] + asserter[:3]
    mixed_b = hedger[3:] + asserter[3:]
    assert reasoning_differentiation(result(transcript=turns({"a": mixed_a, "b": mixed_b}))) <= 0.0
    assert math.isnan(reasoning_differentiation(result(transcript=turns({"a": hedger[:2], "b": asserter[:2]}))))
