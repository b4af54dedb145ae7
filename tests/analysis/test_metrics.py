"""Each per-debate metric on a hand-made debate whose value is known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from crux_lab.analysis import metrics as M
from crux_lab.models import (
    Argument,
    ArgumentGraph,
    Aspect,
    CardPosition,
    CommonGround,
    Concession,
    ConcessionKind,
    Crux,
    CruxCard,
    CruxCardPosition,
    DebateConfig,
    DebateResult,
    DialogueTurn,
    DisagreementType,
    Move,
    PersonaPosition,
    PositionShift,
    Usage,
)
from crux_lab.personas.models import (
    CorpusChunk,
    EvidencePolicy,
    Persona,
    PersonaContract,
    PersonaStances,
    Proposition,
    PropositionStance,
    VoiceProfile,
)

# Ground truth: p1 and p2 contested between a and b; p3 common ground. Scores that compare
# with it recognise propositions by the words of what was said, never by ids on the items.
TRUTH = {"a": {"p1": "pro", "p2": "pro", "p3": "pro"}, "b": {"p1": "con", "p2": "con", "p3": "pro"}}
PROPS = [
    Proposition(id="p1", text="Building more market-rate housing lowers rents across the region.",
                question="Does building more market-rate housing lower rents across the region?"),
    Proposition(id="p2", text="Rent control does more harm than good over the long run.",
                question="Does rent control do more harm than good over the long run?"),
    Proposition(id="p3", text="Homelessness in the city has grown over the last decade.",
                question="Has homelessness in the city grown over the last decade?"),
]
SAY = {p.id: p.text for p in PROPS}


def persona(pid: str, chunks: list[str]) -> Persona:
    contract = PersonaContract(
        persona_id=pid, name=pid.upper(), kind="synthetic", personality="x", bias="x", stakes="x",
        epistemology="x", time_horizon="x", flip_conditions="x", evidence_policy=EvidencePolicy(),
    )
    stances = PersonaStances(
        persona_id=pid,
        stances=[PropositionStance(proposition_id=p, stance=s, confidence=0.8, reason="r") for p, s in TRUTH[pid].items()],  # type: ignore[arg-type]
    )
    corpus = [CorpusChunk(id=c, text="t", source="s", kind="synthetic") for c in chunks]
    return Persona(id=pid, contract=contract, voice=VoiceProfile(), corpus=corpus, stances=stances)


PERSONAS = {"a": persona("a", ["a-c1"]), "b": persona("b", ["b-c1"])}


def turn(i: int, who: str, text: str = "Some claim about rents.", *, props: tuple[str, ...] = ("p1",),
         stance: str | None = "pro", move: Move | None = Move.CLAIM, phase: str = "free_exchange",
         aspect: str | None = None) -> DialogueTurn:
    return DialogueTurn(
        id=f"t{i}", turn_index=i, persona_id=who, dialogue=text, move=move, phase=phase,  # type: ignore[arg-type]
        proposition_ids=list(props), stance=stance, aspect_id=aspect,  # type: ignore[arg-type]
    )


def debate(**fields: object) -> DebateResult:
    cfg = DebateConfig(topic="Housing policy", persona_ids=["a", "b"], engine="blitz")
    return DebateResult(run_id="r1", config=cfg, engine="blitz", backend="simulated", **fields)  # type: ignore[arg-type]


def test_topic_coverage_counts_aspects_with_a_turn() -> None:
    aspects = [Aspect(id=f"x{i}", label="l", description="d") for i in range(3)]
    r = debate(aspects=aspects, transcript=[turn(0, "a", aspect="x0"), turn(1, "b", aspect="x2"), turn(2, "a")])
    assert M.topic_coverage(r) == pytest.approx(2 / 3)
    assert math.isnan(M.topic_coverage(debate(transcript=[turn(0, "a")])))


def test_proposition_coverage_is_against_contested_truth() -> None:
    # the ids on the turns are the engine's own (here misleading): only the words count
    r = debate(transcript=[turn(0, "a", f"I say so. {SAY['p1']}", props=("p2",)), turn(1, "b", SAY["p3"], props=("p2",))])
    assert M.contested_propositions(TRUTH) == {"p1", "p2"}
    assert M.proposition_coverage(r, TRUTH, PROPS) == 0.5  # p1 of {p1, p2}; p3 is not contested


def test_question_specificity_components() -> None:
    # yes/no + quantity + horizon + no generic words + not the topic: every check passes
    assert M.question_specificity("Will rents in Austin fall by 10% within five years?", "Housing policy") == 1.0
    # declarative (0.5), nothing concrete (0), too few content words (0), not the topic (1)
    assert M.question_specificity("Different perspectives.") == 0.375
    # restating the topic costs the 'not the topic' check
    assert M.question_specificity("Is housing policy good?", "housing policy") < M.question_specificity(
        "Is housing policy good?", "bitcoin"
    )
    assert M.question_specificity("") == 0.0


def test_crux_specificity_and_compression() -> None:
    crux = Crux(id="c1", statement="Will rents in Austin fall by 10% within five years?", source="proposed", proposition_ids=["p1"])
    r = debate(cruxes=[crux], transcript=[turn(0, "a", "Different perspectives.", phase="opening")])
    assert M.crux_specificity(r) == 1.0
    assert M.disagreement_compression(r) == pytest.approx(1.0 / 0.375)
    assert math.isnan(M.crux_specificity(debate()))
    assert math.isnan(M.disagreement_compression(debate(transcript=[turn(0, "a")])))


def test_crux_texts_skip_card_mirrors() -> None:
    card = CruxCard(id="k1", question="Q?", disagreement_type=DisagreementType.evidence, diagnosis="d", personas={})
    mirror = Crux(id="c1", statement="Q?", source="card")
    own = Crux(id="c2", statement="R?", source="proposed")
    kinds = [i.kind for i in M.crux_texts(debate(crux_cards=[card], cruxes=[mirror, own]))]
    assert kinds == ["card", "crux"]


def test_position_shift_rate_from_records_and_from_positions() -> None:
    shifts = [PositionShift(persona_id=p, shifted=p == "a") for p in ("a", "b", "c")]
    assert M.position_shift_rate(debate(position_shifts=shifts)) == pytest.approx(1 / 3)
    positions = [
        PersonaPosition(persona_id="a", at="opening", text="", stances={"p1": "pro"}),
        PersonaPosition(persona_id="a", at="closing", text="", stances={"p1": "uncertain"}),
        PersonaPosition(persona_id="b", at="initial", text="", stances={"p1": "con"}),
        PersonaPosition(persona_id="b", at="final", text="", stances={"p1": "con"}),
    ]
    assert M.position_shift_rate(debate(positions=positions)) == 0.5
    assert math.isnan(M.position_shift_rate(debate()))


def test_sycophancy_rate_counts_agreements_without_a_named_reason() -> None:
    transcript = [
        turn(0, "a", "I'll grant part of that. You make a fair point there.", move=Move.CONCEDE),
        turn(1, "b", "I'll grant that. You have met my condition: rents fell.", move=Move.CONCEDE),
        turn(2, "a", "Fine, I agree.", move=Move.CONCEDE),
        turn(3, "b", "I disagree."),
    ]
    trail = [Concession(turn_index=2, persona_id="a", type=ConcessionKind.partial, conceded_claim="x", reason="vacancy data")]
    r = debate(transcript=transcript, concession_trail=trail)
    assert M.sycophancy_rate(r) == pytest.approx(1 / 3)  # only turn 0 names nothing
    assert math.isnan(M.sycophancy_rate(debate(transcript=[turn(0, "a")])))


def test_sycophancy_rate_prefers_the_structured_named_reason() -> None:
    # The texts name nothing; the annotated reason on turn 1 makes it a justified agreement.
    plain = [
        turn(0, "a", "Fine, I agree.", move=Move.CONCEDE),
        turn(1, "b", "Fair point, I'll grant that.", move=Move.CONCEDE),
    ]
    assert M.sycophancy_rate(debate(transcript=plain)) == pytest.approx(1.0)
    annotated = [plain[0], plain[1].model_copy(update={"named_reason": "the vacancy data met my condition"})]
    assert M.sycophancy_rate(debate(transcript=annotated)) == pytest.approx(0.5)


def test_belief_consistency_prompt_to_line() -> None:
    r = debate(transcript=[
        turn(0, "a", SAY["p1"], stance="pro"),        # a holds pro: consistent
        turn(1, "a", SAY["p1"], stance="con"),        # contradicts its prompt
        turn(2, "a", SAY["p1"], stance="uncertain"),  # not judged
        turn(3, "b", SAY["p1"], stance="con"),        # b holds con: consistent
        turn(4, "b", "Bananas are yellow and grow in bunches.", stance="pro"),  # states no proposition
    ])
    assert M.belief_consistency_prompt(r, TRUTH, PROPS) == pytest.approx(2 / 3)


def test_belief_consistency_line_to_line() -> None:
    r = debate(transcript=[
        turn(0, "a", stance="pro"),
        turn(1, "a", stance="con"),  # changed with no reason: unexplained
        turn(2, "a", "I'll grant that.", stance="uncertain", move=Move.CONCEDE),  # declared update
        turn(3, "b", stance="con"),
        turn(4, "b", stance="con"),
    ])
    assert M.belief_consistency_line(r) == pytest.approx(2 / 3)
    assert math.isnan(M.belief_consistency_line(debate(transcript=[turn(0, "a")])))


def test_corpus_grounding_resolves_chunk_ids_per_persona() -> None:
    pos = CruxCardPosition
    cards = [
        CruxCard(id="k1", question="Q?", disagreement_type=DisagreementType.evidence, diagnosis="d", personas={
            "a": pos(position=CardPosition.YES, reasoning="r", grounding_quotes=["a-c1"]),
            "b": pos(position=CardPosition.NO, reasoning="r", grounding_quotes=["a-c1"]),  # not b's chunk
        }),
        CruxCard(id="k2", question="Q?", disagreement_type=DisagreementType.values, diagnosis="d", personas={
            "a": pos(position=CardPosition.YES, reasoning="r", grounding_quotes=[]),
        }),
    ]
    assert M.corpus_grounding(debate(crux_cards=cards), PERSONAS) == pytest.approx(1 / 3)
    assert math.isnan(M.corpus_grounding(debate(), PERSONAS))


def test_fake_consensus_rate_and_grounded_contradictions() -> None:
    cg = [
        CommonGround(id="g1", statement=SAY["p1"], source="blackboard", persona_ids=["a"]),
        CommonGround(id="g2", statement=SAY["p3"], source="blackboard", proposition_ids=["p1"]),  # id ignored
        CommonGround(id="g3", statement="vague", source="stances"),
    ]
    graph = ArgumentGraph(
        arguments=[
            Argument(id="x", speaker_id="a", claim=SAY["p1"]),
            Argument(id="y", speaker_id="b", claim="Building more market-rate housing does not lower rents across the region."),
            Argument(id="z", speaker_id="b", claim=SAY["p3"]),
        ],
        grounded=["x", "y", "z"],
    )
    r = debate(common_ground=cg, graph=graph)
    assert M.fake_consensus_rate(r, TRUTH, PROPS) == 0.5  # g1 of the judgeable g1, g2
    assert M.fake_consensus_items(r, TRUTH, PROPS) == ["g1", "args:x+y"]
    assert math.isnan(M.fake_consensus_rate(debate(), TRUTH, PROPS))


def test_cost_per_validated_crux() -> None:
    cruxes = [
        Crux(id="c1", statement=PROPS[0].question, source="proposed"),
        Crux(id="c2", statement="Whether rent control does more harm than good in the long run", source="proposed"),
        Crux(id="c3", statement="Is it true that more market-rate housing lowers regional rents?", source="proposed"),
    ]
    r = debate(cruxes=cruxes, usage=Usage(cost_usd=0.3))
    assert M.validated_cruxes(r, TRUTH, PROPS) == {"p1", "p2"}
    assert M.cost_per_validated_crux(r, TRUTH, PROPS) == pytest.approx(0.15)
    # an id on the item validates nothing: its words state the common-ground p3
    only_p3 = debate(cruxes=[Crux(id="c9", statement=PROPS[2].question, source="proposed", proposition_ids=["p1"])],
                     usage=Usage(cost_usd=0.3))
    assert math.isnan(M.cost_per_validated_crux(only_p3, TRUTH, PROPS))


def test_run_metrics_drop_nan_and_never_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    r = debate(transcript=[turn(0, "a", SAY["p1"])], usage=Usage(cost_usd=0.1))
    monkeypatch.setattr(M, "_deck_propositions", lambda ids: PROPS)
    values = M.run_metrics(r, PERSONAS)
    assert "topic_coverage" not in values  # no aspects: not applicable
    assert values["belief_consistency_prompt"] == 1.0
    assert all(math.isfinite(v) for v in values.values())

    def broken(result: DebateResult) -> float:
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(M, "topic_coverage", broken)
    assert M.run_metrics(r, PERSONAS) == {"metrics_error": 1.0}


class WordEncoder:
    """Deterministic encoder: bag of words hashed into 64 dims (same words -> same vector)."""

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 64))
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, sum(map(ord, w)) % 64] += 1.0
        return out


def test_recurrence_by_run() -> None:
    from crux_lab.analysis.recurrence import CruxItem

    items = [
        CruxItem("d1", "c1", "do new towers lower rents"),
        CruxItem("d1", "c2", "is zoning the main cause"),
        CruxItem("d2", "c1", "do new towers lower rents"),
        CruxItem("d2", "c2", "should tenants get vetoes over something else entirely"),
    ]
    assert M.recurrence_by_run(items, WordEncoder()) == {"d1": 0.5, "d2": 0.5}


def test_runner_fills_metrics_and_ingest_stores_them(tmp_path) -> None:
    from crux_lab.runner import run_debate_sync
    from crux_lab.store import connect, ingest, write_run

    cfg = DebateConfig(topic="Does rent control work?", persona_ids=["yimby-economist", "tenant-organizer"], engine="blitz", seed=3)
    result = run_debate_sync(cfg)
    assert result.metrics["validated_cruxes"] >= 1
    assert "belief_consistency_prompt" in result.metrics
    db = tmp_path / "t.duckdb"
    ingest([write_run(result, tmp_path / "runs")], db)
    with connect(db) as con:
        stored = dict(con.execute("SELECT name, value FROM metrics WHERE run_id = ?", [result.run_id]).fetchall())
    assert stored == pytest.approx(result.metrics)


# -- the metric registry -------------------------------------------------------------------

# Every metric compute_metrics gave before the metrics registered themselves.
BUILT_IN = {
    "topic_coverage", "disagreement_compression", "position_shift_rate", "sycophancy_rate",
    "belief_consistency_line", "crux_specificity", "n_crux_items", "restates_topic_rate",
    "falsifier_concreteness", "reasoning_differentiation", "guard_echo", "guard_role", "guard_sides",
    "guard_ended",
}
WITH_PERSONAS = {
    "voice_fidelity", "proposition_coverage", "belief_consistency_prompt", "corpus_grounding",
    "fake_consensus_rate", "fake_consensus_count", "validated_cruxes", "cost_per_validated_crux",
}


def test_every_built_in_metric_is_registered_and_ground_truth_ones_need_personas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(M, "_deck_propositions", lambda ids: PROPS)
    r = debate(transcript=[turn(0, "a", SAY["p1"])])
    assert set(M.compute_metrics(r)) == BUILT_IN
    assert set(M.compute_metrics(r, PERSONAS)) == BUILT_IN | WITH_PERSONAS


def test_a_registered_metric_is_computed_and_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    from crux_lab.analysis.metric_registry import METRICS, Metric

    METRICS.load()
    turns = Metric("n_turns", lambda r, m: float(len(r.transcript)))
    truth_size = Metric("n_truth", lambda r, m: float(len(m.truth)), needs_personas=True)
    monkeypatch.setitem(METRICS.entries, "n_turns", turns)
    monkeypatch.setitem(METRICS.entries, "n_truth", truth_size)
    r = debate(transcript=[turn(0, "a"), turn(1, "b")])
    assert M.compute_metrics(r)["n_turns"] == 2.0
    assert "n_truth" not in M.compute_metrics(r)  # needs personas, none given
    monkeypatch.setattr(M, "_deck_propositions", lambda ids: PROPS)
    assert M.run_metrics(r, PERSONAS)["n_truth"] == 2.0
