"""Crux recovery: did the engine find the cruxes planted in a scenario, with the right sides?

Scenarios (:mod:`crux_lab.analysis.scenarios`) plant contested propositions of known
disagreement types and consensus propositions. After a debate, every crux-like item it
reports (crux cards, cruxes, DCG disputes: :func:`crux_lab.analysis.crux_text.crux_texts`),
with the sides its engine states, is an :class:`Item`. Each item is judged **by its words and
its sides**, never by an id:

- an item whose specificity proxy (:func:`~crux_lab.analysis.metrics.question_specificity`)
  is below :data:`GENERIC_FLOOR` matches nothing ("we simply see this differently" names no
  crux);
- otherwise the cosine similarity (all-MiniLM-L6-v2, :mod:`crux_lab.embed`) of the item's
  text with each planted proposition's text and question (the larger counts) picks its best
  proposition; an item at least as close to the debate's topic as to that proposition
  **restates the topic** and matches nothing;
- else the best proposition is *matched by text* when the cosine reaches the threshold;
- a text match with a contested proposition is **recovered** only when the item's sides agree
  with the answer key (:func:`sides_agree`): its YES and NO personas split as the planted pro
  and con do, with at least one persona on each side, none on both and none misplaced; in either
  polarity, except that an item in the proposition's own words is read in its own
  (:func:`polarity_of`). An item without sides can be matched by text but never recovered.

The threshold is calibrated on a held-out paraphrase set (:mod:`crux_lab.analysis.calibration`:
hand-written claims from domains no deck or scenario uses, with paraphrases and same-domain
non-paraphrases), at the best F0.5; ``crux-lab eval recovery`` prints the calibration with
the result.

Scores, per debate, at the proposition level (paraphrases of one crux count once):

- precision = planted contested propositions recovered / (distinct propositions matched by
  text + items that match nothing), so a consensus proposition reported as a crux, a crux with
  its sides wrong, a restated topic and an item that matches nothing are all false positives;
  ``nan`` when the debate reported nothing;
- recall = planted contested propositions recovered / planted contested propositions;
- F1, 0 when nothing was recovered (a debate that finds nothing scores 0, it is not left out);
- the same three by text alone (``text_*``), as the scorer read them before sides counted;
- type accuracy = recovered cruxes whose (majority) reported type equals the planted type,
  over those reported with a type (``nan`` if none is typed);
- false common ground = common-ground items that match a planted contested proposition.

:func:`canaries` are three item lists a scorer must get right on every scenario: the topic
itself and a vague question (both must score 0) and the answer key (it must score 1).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from crux_lab.analysis.argkp import embedding_match_scores, kpa_map, load_split
from crux_lab.analysis.calibration import default_calibration
from crux_lab.analysis.crux_text import as_debated as debated
from crux_lab.analysis.crux_text import crux_texts, pivot_answers
from crux_lab.analysis.metrics import question_specificity
from crux_lab.analysis.polis import evaluate_conversation, list_conversations, load_conversation
from crux_lab.analysis.scenarios import PlantedProposition, Scenario
from crux_lab.analysis.stats import cluster_interval, nanmean
from crux_lab.analysis.textmatch import negations
from crux_lab.embed import get_embedder
from crux_lab.models.result import DebateResult
from crux_lab.store import connect, ingest, record_metrics, resolve_db_path

__all__ = [
    "CANARIES",
    "GENERIC_FLOOR",
    "Item",
    "Judged",
    "Match",
    "RecoveryRun",
    "RecoveryScore",
    "canaries",
    "closest_to_topic",
    "items_of",
    "judge_items",
    "match_texts",
    "polarity_of",
    "recovery_frame",
    "record_recovery",
    "score_items",
    "score_recovery",
    "sides_agree",
    "store_recovery",
    "summarize",
]

Polarity = Literal["either", "same", "opposite"]
# An item this close to a planted proposition states it in its own words: the calibration set's
# paraphrases reach 0.88, so above 0.9 only the proposition itself (or its negation) is left.
VERBATIM = 0.9
_STANCE_FIRST = re.compile(r"^\s*(?:i\s+)?(?:dis)?agree\b[:,.]?\s*|^\s*(?:yes|no)\b[:,.]\s*", re.IGNORECASE)
GENERIC_FLOOR = 0.4  # vague cruxes ("they see it differently") score 0.375; real cruxes 0.6 and up
METRIC_NAMES = (
    "recovery_precision", "recovery_recall", "recovery_f1", "recovery_type_accuracy", "false_common_ground",
)
CANARIES = ("topic", "vague", "oracle")


class Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class Item:
    """One found item as the scorer reads it: its words and the personas its engine puts on
    YES and on NO (empty: the engine stated no sides)."""

    text: str
    yes: tuple[str, ...] = ()
    no: tuple[str, ...] = ()
    kind: str = "crux"  # "card" | "crux" | "dispute" | "canary"
    type: str | None = None
    # Each persona's answer to the pivot test, where the poll asked one: (persona id, YES | NO | PARTLY).
    pivots: tuple[tuple[str, str], ...] = ()

    @property
    def has_sides(self) -> bool:
        return bool(self.yes) and bool(self.no)


@dataclass(frozen=True)
class Match:
    text: str
    proposition_id: str | None
    how: str  # "embedding" | "generic" | "none" | "topic"
    similarity: float | None = None
    best: str | None = None  # the closest planted proposition's text (also below the threshold)
    topic_similarity: float | None = None


Sides = Literal["right", "wrong", "none", "n/a"]


@dataclass(frozen=True)
class Judged:
    """An item and what the scorer made of it."""

    item: Item
    match: Match
    sides: Sides  # n/a: not matched by text to a contested proposition
    recovered: bool


def sides_agree(yes: Sequence[str], no: Sequence[str], stances: Mapping[str, str], polarity: Polarity = "either") -> bool:
    """Do an item's sides split the personas as the planted ``stances`` (persona -> ``pro`` |
    ``con`` | ``uncertain``) do, in either polarity? At least one persona of a side must hold
    the proposition one way; no persona may be on both sides, on a side its stance contradicts,
    or unknown to the key. A persona the key marks ``uncertain`` may sit on either side.
    ``polarity`` ``"same"`` (``"opposite"``): the item asks the proposition itself (its
    negation), so YES must be the pro (con) side.

    >>> key = {"a": "pro", "b": "con", "c": "pro"}
    >>> sides_agree(["a"], ["b"], key), sides_agree(["b"], ["a", "c"], key)
    (True, True)
    >>> sides_agree(["a", "b"], ["c"], key)  # b holds the other side
    False
    >>> sides_agree(["a"], [], key), sides_agree(["a"], ["a", "b"], key), sides_agree(["a"], ["z"], key)
    (False, False, False)
    >>> sides_agree(["b"], ["a", "c"], key, "same"), sides_agree(["b"], ["a", "c"], key, "opposite")
    (False, True)
    """
    yes_set, no_set = set(yes), set(no)
    if not yes_set or not no_set or yes_set & no_set or not (yes_set | no_set) <= set(stances):
        return False

    def split(side: set[str]) -> set[str]:
        return {stances[p] for p in side} - {"uncertain"}

    y, n = split(yes_set), split(no_set)
    allowed = {"either": (({"pro"}, {"con"}), ({"con"}, {"pro"})), "same": (({"pro"}, {"con"}),),
               "opposite": (({"con"}, {"pro"}),)}[polarity]
    return (y, n) in allowed


def polarity_of(text: str, similarity: float | None, proposition: PlantedProposition) -> Polarity:
    """The polarity an item's sides are read in against its best proposition: ``"either"``
    unless the item is the proposition in its own words (cosine at least :data:`VERBATIM`,
    above every paraphrase of the calibration set), where its negations decide: as many as the
    proposition's question or text, ``"same"``; one more or fewer, ``"opposite"``.

    >>> p = PlantedProposition("p", "Rents will fall.", "Will rents fall?", (), None, {})
    >>> polarity_of("Will rents fall?", 1.0, p), polarity_of("Will rents not fall?", 0.93, p), polarity_of("Do rents matter?", 0.7, p)
    ('same', 'opposite', 'either')
    >>> polarity_of("I disagree: rents will fall.", 0.95, p)  # a speaker's side put before the claim
    'same'
    """
    if similarity is None or similarity < VERBATIM:
        return "either"
    mine = negations(_STANCE_FIRST.sub("", text))  # "I disagree: X" is a side on X, not X denied
    if mine in (negations(proposition.question), negations(proposition.text)):
        return "same"
    return "opposite" if abs(mine - negations(proposition.question)) % 2 else "either"


def items_of(result: DebateResult, *, as_debated: bool = False) -> list[Item]:
    """A debate's crux items with the sides its engine states (cards, cruxes, disputes) and the
    personas' pivot answers; ``as_debated``: every candidate on the sides its debate gave it,
    before the poll (:func:`~crux_lab.analysis.crux_text.as_debated`), with no pivots."""
    if as_debated:
        return [Item(c.text, c.yes, c.no, c.kind, c.disagreement_type) for c in debated(result)]
    pivots = pivot_answers(result)
    return [Item(c.text, c.yes, c.no, c.kind, c.disagreement_type, pivots.get(c.item_id, ())) for c in crux_texts(result)]


def _unit(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms == 0, 1.0, norms)


def similarity_to_propositions(texts: Sequence[str], scenario: Scenario, encoder: Encoder) -> np.ndarray:
    """``len(texts) x (n_propositions + 1)`` cosine similarities: per proposition the larger of
    the similarity with its text and with its question; the last column is the similarity with
    the scenario's topic."""
    n = len(scenario.propositions)
    if not texts:
        return np.zeros((0, n + 1))
    targets = [p.text for p in scenario.propositions] + [p.question for p in scenario.propositions] + [scenario.topic]
    vecs = _unit(encoder.encode(list(texts) + targets))
    sim = vecs[: len(texts)] @ vecs[len(texts) :].T
    return np.concatenate([np.maximum(sim[:, :n], sim[:, n : 2 * n]), sim[:, 2 * n :]], axis=1)


def match_texts(
    texts: Sequence[str],
    scenario: Scenario,
    encoder: Encoder | None = None,
    *,
    threshold: float | None = None,
) -> list[Match]:
    """Match each text to a planted proposition by its words (see the module docstring);
    ``threshold`` defaults to the calibrated one."""
    if threshold is None:
        threshold = default_calibration().threshold
    out: list[Match | None] = []
    need: list[int] = []
    for k, text in enumerate(texts):
        if question_specificity(text) < GENERIC_FLOOR:
            out.append(Match(text, None, "generic"))
        else:
            out.append(None)
            need.append(k)
    if need:
        if encoder is None:
            encoder = get_embedder()
        sim = similarity_to_propositions([texts[k] for k in need], scenario, encoder)
        for row, k in enumerate(need):
            best = int(np.argmax(sim[row, :-1]))
            score, topic = float(sim[row, best]), float(sim[row, -1])
            restated = topic >= score
            pid = scenario.propositions[best].id if score >= threshold and not restated else None
            how = "topic" if restated else ("embedding" if pid else "none")
            out[k] = Match(texts[k], pid, how, round(score, 4), scenario.propositions[best].text, round(topic, 4))
    return [m for m in out if m is not None]


def judge_items(
    items: Sequence[Item], scenario: Scenario, encoder: Encoder | None = None, *, threshold: float | None = None
) -> list[Judged]:
    """Each item with its text match, whether its sides are right and whether it is recovered."""
    matches = match_texts([i.text for i in items], scenario, encoder, threshold=threshold)
    props = {p.id: p for p in scenario.propositions}
    out = []
    for item, m in zip(items, matches, strict=True):
        prop = props.get(m.proposition_id or "")
        sides: Sides = "n/a"
        if prop is not None and prop.contested:
            polarity = polarity_of(item.text, m.similarity, prop)
            sides = "none" if not item.has_sides else ("right" if sides_agree(item.yes, item.no, prop.stances, polarity) else "wrong")
        out.append(Judged(item, m, sides, sides == "right"))
    return out


@dataclass
class RecoveryScore:
    """Recovery of one debate against its scenario (persisted as metrics rows)."""

    run_id: str
    engine: str
    scenario: str
    n_items: int
    n_planted: int
    found: int  # planted contested propositions recovered with their sides
    false_positives: int
    precision: float
    recall: float
    f1: float
    type_accuracy: float
    n_typed: int
    false_common_ground: int
    matched_by_embedding: int  # items matched by text to any planted proposition
    generic_items: int
    recovered: dict[str, str | None] = field(default_factory=dict)  # planted id -> reported type
    missed: list[str] = field(default_factory=list)
    seed: int = 0
    calls: int = 0
    wall_s: float = 0.0
    found_by_text: int = 0  # planted contested propositions matched by text, sides or not
    text_precision: float = math.nan
    text_recall: float = math.nan
    text_f1: float = 0.0
    sides_wrong: int = 0  # items matched by text to a contested proposition with sides the key contradicts
    sides_missing: int = 0  # ... that state no sides
    restated_topic: int = 0  # items at least as close to the topic as to any planted proposition
    prompt_tokens: int = 0
    output_tokens: int = 0
    judged: list[Judged] = field(default_factory=list, repr=False)

    def metrics(self) -> dict[str, float]:
        return {
            "recovery_precision": self.precision,
            "recovery_recall": self.recall,
            "recovery_f1": self.f1,
            "recovery_type_accuracy": self.type_accuracy,
            "false_common_ground": float(self.false_common_ground),
        }


def _prf(found: int, predicted: int, planted: int) -> tuple[float, float, float]:
    """Precision, recall and F1 (0 when nothing was found; precision ``nan`` when nothing was
    predicted).

    >>> _prf(2, 4, 4)
    (0.5, 0.5, 0.5)
    >>> _prf(0, 0, 4)[1:]
    (0.0, 0.0)
    """
    precision = found / predicted if predicted else math.nan
    recall = found / planted if planted else math.nan
    f1 = 2 * precision * recall / (precision + recall) if predicted and (precision + recall) > 0 else 0.0
    return precision, recall, f1


def score_items(
    items: Sequence[Item],
    scenario: Scenario,
    encoder: Encoder | None = None,
    *,
    threshold: float | None = None,
    common_ground: Sequence[str] = (),
    run_id: str = "",
    engine: str = "",
) -> RecoveryScore:
    """Score one debate's items against the scenario's planted cruxes (module docstring)."""
    judged = judge_items(items, scenario, encoder, threshold=threshold)
    contested = scenario.contested
    matched_props = {j.match.proposition_id for j in judged if j.match.proposition_id}
    unmatched = {j.item.text.strip().lower() for j in judged if j.match.proposition_id is None}
    predicted = len(matched_props) + len(unmatched)
    found = {j.match.proposition_id for j in judged if j.recovered} & set(contested)
    by_text = matched_props & set(contested)
    precision, recall, f1 = _prf(len(found), predicted, len(contested))
    text_p, text_r, text_f1 = _prf(len(by_text), predicted, len(contested))
    recovered: dict[str, str | None] = {}
    for pid in sorted(found):  # type: ignore[type-var]
        types = [j.item.type for j in judged if j.match.proposition_id == pid and j.recovered and j.item.type]
        recovered[str(pid)] = Counter(types).most_common(1)[0][0] if types else None
    typed = {pid: t for pid, t in recovered.items() if t is not None}
    correct = sum(1 for pid, t in typed.items() if contested[pid].value == t)
    cg_matches = match_texts(list(common_ground), scenario, encoder, threshold=threshold) if common_ground else []
    false_cg = sum(1 for m in cg_matches if m.proposition_id in contested)
    return RecoveryScore(
        run_id=run_id, engine=engine, scenario=scenario.id, n_items=len(items),
        n_planted=len(contested), found=len(found), false_positives=predicted - len(found),
        precision=precision, recall=recall, f1=f1,
        type_accuracy=correct / len(typed) if typed else math.nan, n_typed=len(typed),
        false_common_ground=false_cg,
        matched_by_embedding=sum(1 for j in judged if j.match.how == "embedding"),
        generic_items=sum(1 for j in judged if j.match.how == "generic"),
        recovered=recovered, missed=sorted(set(contested) - {str(p) for p in found}),
        found_by_text=len(by_text), text_precision=text_p, text_recall=text_r, text_f1=text_f1,
        sides_wrong=sum(1 for j in judged if j.sides == "wrong"),
        sides_missing=sum(1 for j in judged if j.sides == "none"),
        restated_topic=sum(1 for j in judged if j.match.how == "topic"),
        judged=judged,
    )


def score_recovery(
    result: DebateResult,
    scenario: Scenario,
    encoder: Encoder | None = None,
    *,
    threshold: float | None = None,
) -> RecoveryScore:
    """Score one debate's cruxes, with their sides, against the scenario's planted ones."""
    score = score_items(items_of(result), scenario, encoder, threshold=threshold,
                        common_ground=[g.statement for g in result.common_ground], run_id=result.run_id,
                        engine=result.engine)
    calls = result.llm_calls
    score.calls, score.wall_s = len(calls), result.duration_s
    score.prompt_tokens = sum(c.input_tokens for c in calls)
    score.output_tokens = sum(c.output_tokens for c in calls)
    return score


def closest_to_topic(scenario: Scenario, encoder: Encoder | None = None) -> PlantedProposition:
    """The contested planted proposition whose words are closest to the debate's topic (by the
    scorer's cosine, without a threshold): whose sides the topic canary carries, and on which a
    persona's side of the topic is read (``benchmarks/speaker_health.py``)."""
    contested = [p for p in scenario.propositions if p.contested]
    if len(contested) == 1:
        return contested[0]
    sim = similarity_to_propositions([scenario.topic], scenario, encoder or get_embedder())[0, :-1]
    return max(contested, key=lambda p: sim[scenario.propositions.index(p)])


def canaries(scenario: Scenario, encoder: Encoder | None = None) -> dict[str, list[Item]]:
    """Three item lists every scorer must read right on every scenario:

    - ``topic``: the topic as the only crux;
    - ``vague``: "What would change their minds about <topic>?";
    - ``oracle``: the answer key itself, each planted crux's question with its pro personas on
      YES and its con personas on NO.

    The topic and the vague question carry the sides of the planted crux whose words are
    closest to the topic, so that only the text rules can stop them: they must score 0, and
    the oracle 1.
    """
    contested = [p for p in scenario.propositions if p.contested]
    closest = closest_to_topic(scenario, encoder)
    yes = tuple(pid for pid, st in closest.stances.items() if st == "pro")
    no = tuple(pid for pid, st in closest.stances.items() if st == "con")
    topic = scenario.topic.strip()
    about = topic.rstrip("?").rstrip(".")
    about = about[:1].lower() + about[1:]
    return {
        "topic": [Item(topic, yes, no, "canary")],
        "vague": [Item(f"What would change their minds about {about}?", yes, no, "canary")],
        "oracle": [
            Item(p.question, tuple(k for k, v in p.stances.items() if v == "pro"),
                 tuple(k for k, v in p.stances.items() if v == "con"), "canary",
                 p.disagreement_type.value if p.disagreement_type else None)
            for p in contested
        ],
    }


# ---------------------------------------------------------------------------
# Running a recovery benchmark
# ---------------------------------------------------------------------------


@dataclass
class RecoveryRun:
    """What :func:`run_recovery` produced (runtime)."""

    scores: list[RecoveryScore] = field(default_factory=list)
    results: list[DebateResult] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)  # "<engine>/<scenario>" -> error
    run_dirs: list[Path] = field(default_factory=list)
    db_path: Path | None = None
    wall_s: float = 0.0


def store_recovery(run_dirs: Sequence[Path], scores: Sequence[RecoveryScore], db: str | Path | None) -> Path:
    """Ingest the run folders and record their recovery metrics, in one open of the database;
    returns its path."""
    path = resolve_db_path(db)
    con = connect(path)
    try:
        ingest(list(run_dirs), con)
        record_recovery(con, scores)
    finally:
        con.close()
    return path


def record_recovery(db: Any, scores: Sequence[RecoveryScore]) -> int:
    """Record each score as ``metrics`` rows of its run (``nan`` values stored as NULL); the
    per-proposition outcome goes into the ``detail`` of ``recovery_f1``. Returns rows written.

    No extra table: a run's engine, scenario (deck), seed and knobs are in ``runs``, so
    ``runs JOIN metrics`` answers every recovery question in SQL.
    """
    n = 0
    for s in scores:
        detail = {k: v for k, v in asdict(s).items() if k not in ("precision", "recall", "f1", "type_accuracy", "judged")}
        n += record_metrics(db, s.run_id, s.metrics(), {"recovery_f1": detail})
    return n


def summarize(scores: Sequence[RecoveryScore], *, intervals: bool = False) -> list[dict[str, Any]]:
    """One row per engine (or evaluation arm): mean precision/recall/F1 with sides and by text
    alone, type accuracy (macro over debates), and micro totals (items, planted, recovered,
    matched by text, sides wrong, sides missing, restated topic, false positives, false common
    ground). ``intervals`` adds 95% bootstrap intervals of precision, recall and F1 that resample
    scenarios (each with all its seeds: ``precision_ci``, ``recall_ci``, ``f1_ci``,
    ``text_f1_ci``), calls, tokens, wall time and recovered cruxes per 100k tokens."""
    rows = []
    for engine in dict.fromkeys(s.engine for s in scores):
        mine = [s for s in scores if s.engine == engine]
        # A debate that found nothing scores F1 0 (it is not left out of the mean).
        f1 = [0.0 if math.isnan(s.f1) and s.n_planted else s.f1 for s in mine]
        row: dict[str, Any] = {
            "engine": engine, "debates": len(mine),
            "precision": nanmean([s.precision for s in mine]),
            "recall": nanmean([s.recall for s in mine]),
            "f1": nanmean(f1),
            "text_f1": nanmean([s.text_f1 for s in mine]),
            "type_accuracy": nanmean([s.type_accuracy for s in mine]),
            "items": sum(s.n_items for s in mine),
            "planted": sum(s.n_planted for s in mine), "found": sum(s.found for s in mine),
            "found_by_text": sum(s.found_by_text for s in mine),
            "sides_wrong": sum(s.sides_wrong for s in mine), "sides_missing": sum(s.sides_missing for s in mine),
            "restated_topic": sum(s.restated_topic for s in mine),
            "false_positives": sum(s.false_positives for s in mine),
            "false_common_ground": sum(s.false_common_ground for s in mine),
        }
        if intervals:
            clusters = [s.scenario for s in mine]
            tokens = sum(s.prompt_tokens + s.output_tokens for s in mine)
            row.update({
                "precision_ci": cluster_interval([s.precision for s in mine], clusters),
                "recall_ci": cluster_interval([s.recall for s in mine], clusters),
                "f1_ci": cluster_interval(f1, clusters),
                "text_f1_ci": cluster_interval([s.text_f1 for s in mine], clusters),
                "scenarios": len(set(clusters)), "seeds": len({s.seed for s in mine}),
                "calls": sum(s.calls for s in mine), "wall_s": round(sum(s.wall_s for s in mine), 1),
                "prompt_tokens": sum(s.prompt_tokens for s in mine),
                "output_tokens": sum(s.output_tokens for s in mine),
                "per_100k_tokens": round(row["found"] * 100_000 / tokens, 2) if tokens else math.nan,
            })
        rows.append(row)
    return rows


def recovery_frame(db: Any = None) -> Any:
    """A pandas DataFrame of every recovery score in the store: one row per run with its
    engine, deck, seed, the offline backend's failure knobs (0 when unset) and the recovery
    metrics."""
    con = db if hasattr(db, "execute") else connect(db, read_only=True)
    try:
        return con.execute(
            """
            SELECT r.run_id, r.engine, r.deck AS scenario, r.seed,
                   COALESCE(CAST(json_extract(r.backend_options, '$.sycophancy') AS DOUBLE), 0) AS sycophancy,
                   COALESCE(CAST(json_extract(r.backend_options, '$.missed_attack') AS DOUBLE), 0) AS missed_attack,
                   COALESCE(CAST(json_extract(r.backend_options, '$.vague_crux') AS DOUBLE), 0) AS vague_crux,
                   COALESCE(CAST(json_extract(r.backend_options, '$.drift') AS DOUBLE), 0) AS drift,
                   max(m.value) FILTER (WHERE m.name = 'recovery_precision') AS precision,
                   max(m.value) FILTER (WHERE m.name = 'recovery_recall') AS recall,
                   max(m.value) FILTER (WHERE m.name = 'recovery_f1') AS f1,
                   max(m.value) FILTER (WHERE m.name = 'recovery_type_accuracy') AS type_accuracy,
                   max(m.value) FILTER (WHERE m.name = 'false_common_ground') AS false_common_ground
            FROM runs r JOIN metrics m USING (run_id)
            WHERE m.name IN ('recovery_precision', 'recovery_recall', 'recovery_f1',
                             'recovery_type_accuracy', 'false_common_ground')
            GROUP BY ALL ORDER BY r.engine, r.deck
            """
        ).df()
    finally:
        if con is not db:
            con.close()


# ---------------------------------------------------------------------------
# Failure-knob sweeps and figures (used by benchmarks/recovery_knobs.py and notebook 07)
# ---------------------------------------------------------------------------

KNOBS = ("missed_attack", "vague_crux", "sycophancy")


def knob_frame(db: Any = None) -> Any:
    """Recovery per (knob, level, engine) from the store: runs with at most one failure knob
    set; the all-zero runs are the level-0 point of every knob."""
    import pandas as pd

    frame = recovery_frame(db)
    if frame.empty:
        return frame
    parts = []
    set_count = (frame[list(KNOBS) + ["drift"]] > 0).sum(axis=1)
    for knob in KNOBS:
        mine = frame[(set_count == 0) | ((set_count == 1) & (frame[knob] > 0))].copy()
        mine["knob"], mine["level"] = knob, mine[knob]
        parts.append(mine)
    out = pd.concat(parts, ignore_index=True)
    cols = ["precision", "recall", "f1", "type_accuracy", "false_common_ground"]
    return out.groupby(["knob", "level", "engine"], as_index=False)[cols].mean()


def recovery_figure(frame: Any) -> Any:
    """Grouped bars of precision, recall and F1 per engine (a :func:`recovery_frame`)."""
    import plotly.graph_objects as go

    means = frame.groupby("engine")[["precision", "recall", "f1"]].mean().reset_index()
    fig = go.Figure([go.Bar(name=c, x=means["engine"], y=means[c]) for c in ("precision", "recall", "f1")])
    fig.update_layout(barmode="group", title="Crux recovery per engine", yaxis={"range": [0, 1.05]})
    return fig


def knob_figure(frame: Any, metric: str = "f1") -> Any:
    """One panel per failure knob: ``metric`` against the knob level, a line per engine."""
    import plotly.express as px

    fig = px.line(frame.sort_values("level"), x="level", y=metric, color="engine", facet_col="knob", markers=True,
                  title=f"Crux recovery ({metric}) as the offline backend's failure knobs rise")
    fig.update_yaxes(range=[0, 1.05])
    return fig


# ---------------------------------------------------------------------------
# Notebook 07 helpers: build an evaluation database, read the human-data checks
# ---------------------------------------------------------------------------


def _repo_path(path: str | Path | None) -> Path | None:
    """``path`` as given, or relative to the repository when it does not exist from the cwd
    (notebooks run with the notebook folder as their cwd)."""
    if not path:
        return None
    p = Path(path)
    if p.exists() or p.is_absolute():
        return p
    return Path(__file__).resolve().parents[2] / p


def recovery_summary(frame: Any) -> Any:
    """Mean recovery per engine over the runs with every failure knob at 0 (a
    :func:`recovery_frame`)."""
    clean = frame[(frame[list(KNOBS) + ["drift"]] == 0).all(axis=1)]
    clean = clean.assign(f1=clean["f1"].fillna(0.0))  # found nothing: F1 0, not left out of the mean
    cols = ["precision", "recall", "f1", "type_accuracy", "false_common_ground"]
    out = clean.groupby("engine")[cols].mean()
    out.insert(0, "debates", clean.groupby("engine").size())
    return out


def ari_figure(polis: Any) -> Any:
    """Bar chart of the Polis check's adjusted Rand index per conversation."""
    import plotly.express as px

    return px.bar(polis, x="conversation", y="ari", hover_data=["participants", "comments", "our_camps", "polis_groups"],
                  title="Polis check: our camps vs Polis groups (adjusted Rand index)")


def human_data_frames(
    polis_root: str | Path | None,
    argkp_root: str | Path | None,
    *,
    polis_limit: int | None = None,
    argkp_topics: int | None = None,
    split: str = "test",
) -> dict[str, Any]:
    """The Polis check (ARI and statement overlaps per conversation) and the ArgKP check (mAP
    strict/relaxed) from :mod:`crux_lab.analysis.polis` / :mod:`crux_lab.analysis.argkp`, as
    DataFrames ``{"polis": ..., "argkp": ...}``; a check whose data or module is missing gives
    an empty frame and a note under ``"notes"``."""
    import pandas as pd

    notes: list[str] = []
    polis = pd.DataFrame()
    argkp = pd.DataFrame()
    polis_root, argkp_root = _repo_path(polis_root), _repo_path(argkp_root)
    if polis_root and polis_root.is_dir():
        try:
            rows = []
            for folder in list_conversations(polis_root)[:polis_limit]:
                r = evaluate_conversation(load_conversation(folder))
                rows.append({"conversation": r.conversation, "participants": r.participants, "comments": r.comments,
                             "density": r.density, "polis_groups": r.polis_groups, "our_camps": r.our_camps,
                             "ari": r.ari, "divisive_jaccard": r.divisive.jaccard,
                             "consensus_jaccard": r.consensus.jaccard})
            polis = pd.DataFrame(rows)
        except ImportError as exc:
            notes.append(f"Polis check unavailable: {exc}")
    elif polis_root is not None:
        notes.append(f"no Polis data at {str(polis_root)!r}")
    if argkp_root and argkp_root.is_dir():
        try:
            folder = argkp_root
            folder = folder / f"{split}_data" if (folder / f"{split}_data").is_dir() else folder
            data = load_split(folder, split)
            topics = sorted({a.topic for a in data.arguments})
            if argkp_topics is not None and argkp_topics < len(topics):
                # A quick look: the first topics only (mAP is a mean over (topic, stance) groups).
                keep = set(topics[:argkp_topics])
                data = replace(
                    data,
                    arguments=tuple(a for a in data.arguments if a.topic in keep),
                    key_points=tuple(k for k in data.key_points if k.topic in keep),
                )
            score = kpa_map(embedding_match_scores(data), data)
            argkp = pd.DataFrame([{"split": split, "topics": f"{min(argkp_topics or len(topics), len(topics))} of {len(topics)}",
                                   "arguments": score.arguments, "map_strict": score.strict,
                                   "map_relaxed": score.relaxed}])
        except ImportError as exc:
            notes.append(f"ArgKP check unavailable: {exc}")
    elif argkp_root is not None:
        notes.append(f"no ArgKP data at {str(argkp_root)!r}")
    return {"polis": polis, "argkp": argkp, "notes": notes}
