"""Per-debate metrics, computable for every run of every engine.

Each metric is a pure function of a :class:`~crux_lab.models.DebateResult` (and, where it needs
ground truth, of the debate's personas: their ``stances.json`` is the planted truth). A metric
that the run's output cannot support returns ``nan`` ("not applicable"); :func:`run_metrics`
drops those, so ``DebateResult.metrics`` and the store's ``metrics`` table hold only values
that mean something. Every metric registers with ``@metric`` (:mod:`.metric_registry`) in the
module that defines it, and :func:`compute_metrics` runs them all: a new metric is one function
and one registration.

Which engines give which (offline backend; measured on the shipped decks, see
``benchmarks/eval_full.py``):

==============================  =====================================================
metric                          engines that give it
==============================  =====================================================
topic_coverage                  panel (the only engine that decomposes into aspects)
proposition_coverage            all (needs turn ``proposition_ids``: offline backend or classifier)
disagreement_compression        all that report cruxes and have opening turns
position_shift_rate             all with opening/closing positions or position shifts
sycophancy_rate                 runs with at least one concession (all but graph, which has
                                no CONCEDE move; at default knobs often none, so absent)
belief_consistency_prompt       all (needs turn stances + ground truth)
belief_consistency_line         all with two stated stances by one persona on one proposition
corpus_grounding                panel, crux_rooms (the engines that write crux cards)
crux_specificity                all that report cruxes, cards or disputes
fake_consensus_rate             engines that report common ground (blitz, classical, graph,
                                dialogue/dcg when their graph has grounded agreements)
cost_per_validated_crux         all, when at least one crux validates against ground truth
guard_echo, guard_role,         all with persona turns: firings of each guard
guard_sides, guard_ended        (:mod:`crux_lab.engines.guards`); guard_ended 1 when
                                guards ended the debate early
restates_topic_rate             all that report crux items (:mod:`crux_lab.analysis.quality`;
                                every crux and card is also stamped ``restates_topic``)
falsifier_concreteness          engines that state falsifiers (cards, flip conditions)
voice_fidelity                  all with turns by 2+ personas that have a corpus
reasoning_differentiation       all with 3+ turns by each of 2+ personas
crux_recurrence                 cross-debate: :func:`record_recurrence` over the store
==============================  =====================================================
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from crux_lab.analysis.crux_text import CruxText, crux_texts
from crux_lab.analysis.metric_registry import METRICS, MetricInputs, Truth, metric
from crux_lab.analysis.quality import mark_restates_topic
from crux_lab.analysis.recurrence import RECURRENCE_THRESHOLD, CruxItem, crux_recurrence
from crux_lab.analysis.textmatch import name_propositions
from crux_lab.models.domain import CruxCard, DialogueTurn, Move
from crux_lab.models.events import EngineError
from crux_lab.models.result import DebateResult
from crux_lab.personas.loader import propositions_for
from crux_lab.personas.models import Persona, Proposition
from crux_lab.store import connect, record_metrics

NAN = float("nan")

__all__ = [
    "GENERIC_WORDS",
    "CruxText",
    "belief_consistency_line",
    "belief_consistency_prompt",
    "compute_metrics",
    "contested_propositions",
    "corpus_grounding",
    "cost_per_validated_crux",
    "crux_specificity",
    "crux_texts",
    "disagreement_compression",
    "fake_consensus_items",
    "fake_consensus_rate",
    "guard_counts",
    "guard_rates",
    "guard_rates_markdown",
    "names_reason",
    "position_shift_rate",
    "proposition_coverage",
    "question_specificity",
    "run_metrics",
    "sycophancy_rate",
    "topic_coverage",
    "truth_table",
    "turn_names_reason",
    "validated_cruxes",
]


# ---------------------------------------------------------------------------
# Ground truth helpers
# ---------------------------------------------------------------------------


def truth_table(personas: Mapping[str, Persona]) -> dict[str, dict[str, str]]:
    """``{persona_id: {proposition_id: stance}}`` from the personas' ``stances.json``."""
    return {pid: {s.proposition_id: s.stance for s in p.stances.stances} for pid, p in personas.items()}


def contested_propositions(truth: Truth, persona_ids: Sequence[str] | None = None) -> set[str]:
    """Propositions on which two of ``persona_ids`` hold opposite (pro vs con) stances.

    >>> sorted(contested_propositions({"a": {"p1": "pro", "p2": "pro"}, "b": {"p1": "con", "p2": "pro"}}))
    ['p1']
    """
    ids = [p for p in (persona_ids or list(truth)) if p in truth]
    props = {prop for pid in ids for prop in truth[pid]}
    return {prop for prop in props if {"pro", "con"} <= {truth[pid].get(prop) for pid in ids}}


def _deck_propositions(persona_ids: Sequence[str]) -> list[Proposition]:
    try:
        return list(propositions_for(persona_ids).values())
    except Exception:  # no library (a test's fake personas): ground-truth metrics stay nan
        return []


def _turn_propositions(result: DebateResult, propositions: Sequence[Proposition]) -> list[str | None]:
    """The proposition each turn states (by its best sentence), memoised on the result."""
    key = (id(result), len(result.transcript), len(propositions))
    cached = _TURN_PROPS.get(key)
    if cached is None:
        cached = name_propositions([t.dialogue for t in result.transcript], propositions, by_sentence=True)
        _TURN_PROPS.clear()
        _TURN_PROPS[key] = cached
    return cached


_TURN_PROPS: dict[tuple[int, int, int], list[str | None]] = {}


def _mean(values: Iterable[float]) -> float:
    vals = list(values)
    return sum(vals) / len(vals) if vals else NAN


# ---------------------------------------------------------------------------
# Debate quality
# ---------------------------------------------------------------------------


def topic_coverage(result: DebateResult) -> float:
    """Share of the decomposed aspects that at least one turn addressed (``turn.aspect_id``).

    Did the debate address all decomposed aspects? ``nan`` when the engine
    did not decompose the topic into aspects (every engine but panel).
    """
    if not result.aspects:
        return NAN
    addressed = {t.aspect_id for t in result.transcript if t.aspect_id}
    return sum(1 for a in result.aspects if a.id in addressed) / len(result.aspects)


def proposition_coverage(result: DebateResult, truth: Truth, propositions: Sequence[Proposition] = ()) -> float:
    """Share of the contested propositions of the debate's personas that some turn stated,
    recognised by the turns' words (:mod:`crux_lab.analysis.textmatch`).

    Topic coverage measured against ground truth instead of the engine's own decomposition.
    ``nan`` when no turn states a known proposition or nothing is contested.
    """
    contested = contested_propositions(truth, result.config.persona_ids)
    said = {pid for pid in _turn_propositions(result, propositions) if pid}
    if not contested or not said:
        return NAN
    return len(contested & said) / len(contested)


_AUX = re.compile(
    r"^(is|are|was|were|does|do|did|will|would|should|can|could|has|have|had|must|may)\b", re.I
)
_WH = re.compile(r"^(what|which|who|whom|whose|when|where|why|how)\b", re.I)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*|\d[\d.,]*%?")
_MEASURE = re.compile(
    r"\d|%|\bper ?cent\b|\b(rate|rates|price|prices|rent|rents|cost|costs|share|number|count|"
    r"growth|decline|increase|decrease|lower|higher|raise|raises|fall|falls|rise|rises|more|less|"
    r"fewer|most|majority|level|levels|return|returns|output|supply|demand|wage|wages|deaths|"
    r"emissions|median|average|ratio|gdp|inflation)\b",
    re.I,
)
_HORIZON = re.compile(
    r"\b(years?|decades?|months?|weeks?|days?|by 20\d\d|in 20\d\d|next|within|long run|long term|"
    r"long-term|short run|short term|short-term|over time|until|before|after|crisis|cycle)\b",
    re.I,
)
#: Content words that carry no checkable content ("we simply see this differently").
GENERIC_WORDS = frozenset(
    ["perspective", "perspectives", "priorities", "priority", "differently", "different", "view", "views", "thing", "things", "issue", "issues", "matter", "matters", "approach", "approaches", "important", "importance", "fundamentally", "really", "simply", "just", "way", "ways", "stuff", "aspect", "aspects", "general", "generally", "overall", "basically", "honestly", "disagree", "disagreement", "agree", "core", "see", "seem", "seems", "opinion", "opinions", "position", "positions", "values", "value", "people", "kind", "sort"]
)
_STOP = frozenset(
    ["the", "a", "an", "of", "to", "in", "on", "and", "or", "is", "are", "be", "for", "with", "that", "this", "it", "as", "by", "at", "from", "will", "should", "can", "do", "does", "not", "no", "yes", "what", "how", "why", "whether", "which", "who", "than", "its", "into", "over", "we", "they", "our", "their", "i", "you", "have", "has", "had", "was", "were", "would", "could", "there", "here", "about", "more", "less"]
)


def _content_words(text: str) -> list[str]:
    return [w.lower() for w in _TOKEN.findall(text) if w.lower() not in _STOP and len(w) > 2]


def question_specificity(question: str, topic: str = "") -> float:
    """Crux specificity proxy in [0, 1]: the mean of four checks.

    1. *answerable*: a yes/no question (starts with an auxiliary verb) scores 1; a declarative
       claim or an open (wh-) question 0.5 (answerable, but not by one observation).
    2. *concrete*: names a measurable quantity (number, %, rate, price, more/less...) and a
       time horizon or a named entity (a capitalised word past the first); each counts 0.5.
    3. *not generic*: 1 - 2 x the share of content words that are generic
       (:data:`GENERIC_WORDS`), floored at 0; fewer than 3 content words scores 0.
    4. *not the topic*: 1 - the share of the question's content words that are topic words
       beyond half (a crux that restates the topic has not narrowed anything); 1 if no topic.

    >>> question_specificity("Will median rents in Austin fall by 10% within five years?") > 0.9
    True
    >>> question_specificity("I think we simply see this differently.") < 0.4
    True
    """
    text = question.strip()
    if not text:
        return 0.0
    first = text.split(None, 1)[0]
    answerable = 1.0 if (_AUX.match(text) and text.endswith("?")) else 0.5
    if _WH.match(text):
        answerable = 0.5
    words = _content_words(text)
    entities = [w for w in _TOKEN.findall(text)[1:] if w[:1].isupper() and w != first]
    concrete = 0.5 * bool(_MEASURE.search(text)) + 0.5 * bool(_HORIZON.search(text) or entities)
    if len(words) < 3:
        not_generic = 0.0
    else:
        generic = sum(1 for w in words if w in GENERIC_WORDS) / len(words)
        not_generic = max(0.0, 1.0 - 2.0 * generic)
    topic_words = set(_content_words(topic))
    if topic_words and words:
        overlap = sum(1 for w in words if w in topic_words) / len(words)
        not_topic = 1.0 - max(0.0, overlap - 0.5) * 2.0
    else:
        not_topic = 1.0
    return round((answerable + concrete + not_generic + not_topic) / 4.0, 4)


def crux_specificity(result: DebateResult) -> float:
    """Mean :func:`question_specificity` of the debate's crux questions (:func:`crux_texts`),
    against the debate topic. ``nan`` when the debate reported no crux."""
    items = crux_texts(result)
    return _mean(question_specificity(i.text, result.config.topic) for i in items)


def _opening_turns(result: DebateResult) -> list[DialogueTurn]:
    opening = [t for t in result.transcript if t.phase == "opening"]
    if opening:
        return opening
    # Engines without an opening phase: each persona's first turn.
    first: dict[str, DialogueTurn] = {}
    for t in result.transcript:
        first.setdefault(t.persona_id, t)
    return list(first.values())


def disagreement_compression(result: DebateResult) -> float:
    """Crux specificity relative to the breadth of the initial claims.

    ``mean specificity of the final crux questions / mean specificity of the opening turns``
    (each persona's first turn when the engine has no opening phase). Above 1: the debate
    narrowed broad opening claims into sharper cruxes. ``nan`` without cruxes or openings.
    """
    cruxes = crux_specificity(result)
    opening = _mean(question_specificity(t.dialogue, result.config.topic) for t in _opening_turns(result))
    if math.isnan(cruxes) or math.isnan(opening) or opening == 0:
        return NAN
    return cruxes / opening


def position_shift_rate(result: DebateResult) -> float:
    """Share of personas whose position moved between opening and closing.

    Uses the engine's :class:`~crux_lab.models.PositionShift` records when it wrote them,
    else compares each persona's opening/initial and closing/final stance maps. ``nan`` when
    the run has neither.
    """
    if result.position_shifts:
        return sum(1 for s in result.position_shifts if s.shifted) / len(result.position_shifts)
    first: dict[str, dict[str, str]] = {}
    last: dict[str, dict[str, str]] = {}
    for pos in result.positions:
        if pos.at in ("opening", "initial"):
            first.setdefault(pos.persona_id, dict(pos.stances))
        else:
            last[pos.persona_id] = dict(pos.stances)
    both = [pid for pid in first if pid in last]
    if not both:
        return NAN
    moved = sum(1 for pid in both if any(last[pid].get(k, v) != v for k, v in first[pid].items()))
    return moved / len(both)


_NAMED_REASON = re.compile(
    r"met my condition|flip condition|changed my mind because|because you (showed|demonstrated)|"
    r"\bthe (data|evidence|study|studies) (show|shows|showed)\b|\bgiven (the|that|your)\b|"
    r"\bbecause\b|\bsince (the|your)\b|\bin light of\b",
    re.I,
)


def names_reason(text: str) -> bool:
    """Does an agreement name why it updates? (a met flip condition, evidence, a 'because').

    >>> names_reason("You have met my condition: rents fell near new towers.")
    True
    >>> names_reason("I'll grant part of that. You make a fair point there.")
    False
    """
    return bool(_NAMED_REASON.search(text))


def _agreements(result: DebateResult) -> list[bool]:
    """One flag per agreement of the debate: True when it names a reason."""
    flags: dict[tuple[str, int], bool] = {}
    by_index = {t.turn_index: t for t in result.transcript}
    for c in result.concession_trail:
        turn = by_index.get(c.turn_index)
        named = bool(c.reason and c.reason.strip()) or (turn is not None and turn_names_reason(turn))
        flags[(c.persona_id, c.turn_index)] = named
    for t in result.transcript:
        if t.move == Move.CONCEDE and (t.persona_id, t.turn_index) not in flags:
            flags[(t.persona_id, t.turn_index)] = turn_names_reason(t)
    return list(flags.values())


def turn_names_reason(turn: DialogueTurn) -> bool:
    """Does this turn name its reason for updating? The structured ``named_reason`` (the
    reply's own field) when present, else the text rule :func:`names_reason`.

    >>> t = DialogueTurn(id="t", turn_index=0, persona_id="a", dialogue="Fair point.", phase="round",
    ...                  move="CONCEDE", named_reason="rents fell near new towers")
    >>> turn_names_reason(t), turn_names_reason(t.model_copy(update={"named_reason": None}))
    (True, False)
    """
    if turn.named_reason and turn.named_reason.strip():
        return True
    return names_reason(turn.dialogue)


def sycophancy_rate(result: DebateResult) -> float:
    """Share of agreements not accompanied by a named reason for updating.

    Agreements are the engine's concession records and every ``CONCEDE`` turn (one per
    persona and turn). A reason is named when the concession record carries one, the
    conceding turn carries a structured ``named_reason`` (backend annotation), or, failing
    both, the turn's text names it (:func:`names_reason`). ``nan`` when nobody conceded.
    """
    flags = _agreements(result)
    if not flags:
        return NAN
    return sum(1 for named in flags if not named) / len(flags)


def belief_consistency_prompt(result: DebateResult, truth: Truth, propositions: Sequence[Proposition] = ()) -> float:
    """Prompt-to-line consistency (arXiv:2511.00222): share of stance-bearing turns whose stance
    does not contradict the speaker's prompted (ground-truth) stance on the proposition its
    words state (recognised by text). A line contradicts when it says pro where the persona holds con, or vice
    versa; ``uncertain`` lines (a legitimate update) never contradict. ``nan`` when no turn
    carries a stance on a proposition the speaker has a ground-truth stance on.
    """
    checked = 0
    consistent = 0
    for t, named in zip(result.transcript, _turn_propositions(result, propositions), strict=True):
        if t.stance not in ("pro", "con") or named is None:
            continue
        held = [truth.get(t.persona_id, {}).get(named)]
        held = [h for h in held if h in ("pro", "con")]
        if not held:
            continue
        checked += 1
        consistent += held[0] == t.stance
    return consistent / checked if checked else NAN


def belief_consistency_line(result: DebateResult) -> float:
    """Line-to-line consistency: over consecutive pairs of one persona's stance-bearing turns on
    the same proposition, the share with no *unexplained* change. A change is explained when
    the later turn is a ``CONCEDE`` or names a reason (:func:`names_reason`). ``nan`` when no
    persona spoke twice with a stance on the same proposition.
    """
    last: dict[tuple[str, str], str] = {}
    pairs = 0
    unexplained = 0
    for t in result.transcript:
        if t.stance is None or not t.proposition_ids:
            continue
        key = (t.persona_id, t.proposition_ids[0])
        if key in last:
            pairs += 1
            if last[key] != t.stance and t.move != Move.CONCEDE and not names_reason(t.dialogue):
                unexplained += 1
        last[key] = t.stance
    return 1.0 - unexplained / pairs if pairs else NAN


def corpus_grounding(result: DebateResult, personas: Mapping[str, Persona]) -> float:
    """Share of crux-card entries (one persona's position on one card) whose ``grounding_quotes``
    are non-empty and all resolve to real corpus chunk ids of that persona.
    ``nan`` when the run wrote no crux cards."""
    entries = [(pid, pos) for card in result.crux_cards for pid, pos in card.personas.items()]
    if not entries:
        return NAN
    good = 0
    for pid, pos in entries:
        persona = personas.get(pid)
        chunks = persona.chunk_ids() if persona is not None else set()
        good += bool(pos.grounding_quotes) and all(q in chunks for q in pos.grounding_quotes)
    return good / len(entries)


def crux_specificity_of_cards(cards: Sequence[CruxCard], topic: str = "") -> float:
    """Mean :func:`question_specificity` of crux cards (for tables of cards)."""
    return _mean(question_specificity(c.question, topic) for c in cards)


# ---------------------------------------------------------------------------
# Ground-truth checks
# ---------------------------------------------------------------------------


def fake_consensus_items(result: DebateResult, truth: Truth, propositions: Sequence[Proposition] = ()) -> list[str]:
    """Ids of common-ground items that are contradictory claims reported as agreement.

    Common ground is what *every* participant accepts, so an item is fake when the
    proposition its statement states (recognised by its words) is held pro by one of the
    debate's personas and con by another (whatever personas the item itself names). Two
    grounded arguments stating the same proposition from speakers of opposite ground-truth
    stances are fake too (reported as ``"args:<a>+<b>"``): the graph accepted both sides of a
    contradiction.
    """
    out: list[str] = []
    contested = contested_propositions(truth, result.config.persona_ids)
    named = name_propositions([g.statement for g in result.common_ground], propositions)
    for g, pid in zip(result.common_ground, named, strict=True):
        if pid in contested:
            out.append(g.id)
    grounded = [a for a in result.graph.arguments if a.id in set(result.graph.grounded)]
    arg_props = name_propositions([a.claim for a in grounded], propositions)
    for i, a in enumerate(grounded):
        for j in range(i + 1, len(grounded)):
            b = grounded[j]
            if arg_props[i] is None or arg_props[i] != arg_props[j] or a.speaker_id == b.speaker_id:
                continue
            sa = truth.get(a.speaker_id, {}).get(arg_props[i] or "")
            sb = truth.get(b.speaker_id, {}).get(arg_props[j] or "")
            if {sa, sb} == {"pro", "con"}:
                out.append(f"args:{a.id}+{b.id}")
    return out


def fake_consensus_rate(result: DebateResult, truth: Truth, propositions: Sequence[Proposition] = ()) -> float:
    """Share of reported common-ground items that are contradictory claims (common ground
    must never be fake): :func:`fake_consensus_items` among common-ground items whose words
    state a known proposition. ``nan`` when the run reports no judgeable common ground."""
    named = name_propositions([g.statement for g in result.common_ground], propositions)
    judged = [g for g, pid in zip(result.common_ground, named, strict=True) if pid]
    if not judged:
        return NAN
    fake = set(fake_consensus_items(result, truth, propositions))
    return sum(1 for g in judged if g.id in fake) / len(judged)


def validated_cruxes(result: DebateResult, truth: Truth, propositions: Sequence[Proposition] = ()) -> set[str]:
    """Contested propositions (ground truth) that at least one crux item states, by its words."""
    contested = contested_propositions(truth, result.config.persona_ids)
    named = name_propositions([i.text for i in crux_texts(result)], propositions)
    return {p for p in named if p in contested}


def cost_per_validated_crux(result: DebateResult, truth: Truth, propositions: Sequence[Proposition] = ()) -> float:
    """``usage.cost_usd`` / number of distinct ground-truth contested propositions the debate's
    crux items name (:func:`validated_cruxes`). ``nan`` when none validates (cost per nothing
    is not a number), so compare it together with ``validated_cruxes``."""
    n = len(validated_cruxes(result, truth, propositions))
    return result.usage.cost_usd / n if n else NAN


# ---------------------------------------------------------------------------
# All of them
# ---------------------------------------------------------------------------


GUARD_METRICS = ("guard_echo", "guard_role", "guard_sides")


def guard_counts(result: DebateResult) -> dict[str, float]:
    """How often each guard of :mod:`crux_lab.engines.guards` fired in the run (one warning
    event per firing: ``guard_echo``, ``guard_role``, ``guard_sides``), and ``guard_ended``:
    1 when guards ended the debate early. ``nan`` for a run without persona turns (the
    one-call baselines), where no guard applies.

    >>> from crux_lab.models import DebateConfig, DialogueTurn, EngineError
    >>> r = DebateResult(run_id="r", engine="dcg", backend="replay",
    ...                  config=DebateConfig(topic="t", persona_ids=["a", "b"], engine="dcg"))
    >>> r.transcript = [DialogueTurn(id="t0", turn_index=0, persona_id="a", dialogue="Gold held value.", phase="round")]
    >>> r.events = [EngineError(level="warning", purpose="guard_echo", error="x"), EngineError(level="warning", purpose="guard_sides", error="y")]
    >>> guard_counts(r)
    {'guard_echo': 1.0, 'guard_role': 0.0, 'guard_sides': 1.0, 'guard_ended': 0.0}
    """
    fired = [e.purpose for e in result.events if isinstance(e, EngineError) and e.purpose.startswith("guard_")]
    if not result.transcript and not fired:
        return dict.fromkeys((*GUARD_METRICS, "guard_ended"), NAN)
    out = {name: float(fired.count(name)) for name in GUARD_METRICS}
    out["guard_ended"] = 1.0 if (result.error or "").startswith(GUARD_ENDED) else 0.0
    return out


GUARD_ENDED = "debate ended early: "  # how TooWeakToPlay's message starts


def guard_rates(results: Iterable[DebateResult]) -> dict[str, dict[str, Any]]:
    """Per engine, how often each guard fired over ``results``: persona turns attempted (the
    transcript's plus those a guard kept out), firings of each guard, echo and role firings
    per persona turn, sides firings per card or dispute side stated (kept or dropped), and
    debates guards ended early. Engines without persona turns (direct, cot) are left out."""
    out: dict[str, dict[str, Any]] = {}
    for r in results:
        counts = guard_counts(r)
        if math.isnan(counts["guard_echo"]):
            continue
        row = out.setdefault(r.engine, {"debates": 0, "persona_turns": 0, "sides": 0, "ended_early": 0,
                                         **dict.fromkeys(GUARD_METRICS, 0)})
        kept_out = sum(1 for e in r.events if isinstance(e, EngineError) and e.purpose in ("guard_echo", "guard_role") and "skipped" in e.error)
        row["debates"] += 1
        row["persona_turns"] += len(r.transcript) + kept_out
        row["sides"] += sum(len(c.personas) for c in r.crux_cards) + len(r.dcg.stances) + int(counts["guard_sides"])
        row["ended_early"] += int(counts["guard_ended"])
        for name in GUARD_METRICS:
            row[name] += int(counts[name])
    for row in out.values():
        turns, sides = row["persona_turns"], row["sides"]
        row["echo_rate"] = round(row["guard_echo"] / turns, 4) if turns else None
        row["role_rate"] = round(row["guard_role"] / turns, 4) if turns else None
        row["sides_rate"] = round(row["guard_sides"] / sides, 4) if sides else None
    return out


def guard_rates_markdown(rates: Mapping[str, Mapping[str, Any]]) -> str:
    """:func:`guard_rates` as a Markdown table."""
    def rate(v: Any) -> str:
        return "—" if v is None else f"{v:.2f}"

    lines = ["| engine | debates | persona turns | echo (per turn) | role (per turn) | sides (per side) | ended early |",
             "|---|---|---|---|---|---|---|"]
    for engine, r in rates.items():
        lines.append(f"| {engine} | {r['debates']} | {r['persona_turns']} | {r['guard_echo']} ({rate(r['echo_rate'])}) | "
                     f"{r['guard_role']} ({rate(r['role_rate'])}) | {r['guard_sides']} ({rate(r['sides_rate'])}) | {r['ended_early']} |")
    return "\n".join(lines) + "\n"


def compute_metrics(
    result: DebateResult,
    personas: Mapping[str, Persona] | None = None,
    propositions: Sequence[Proposition] | None = None,
) -> dict[str, float]:
    """Every registered per-debate metric (:data:`~crux_lab.analysis.metric_registry.METRICS`),
    ``nan`` where not applicable. Ground-truth metrics need ``personas`` (their stances are the
    truth) and the planted ``propositions`` (default: the personas' decks), which they match to
    what the debate said by text; without personas they are left out."""
    truth = truth_table(personas) if personas else {}
    if personas and propositions is None:
        propositions = _deck_propositions(result.config.persona_ids)
    inputs = MetricInputs(personas or {}, truth, list(propositions or ()))
    out: dict[str, float] = {}
    for name, m in METRICS.items():
        if m.needs_personas and not personas:
            continue
        value = m.fn(result, inputs)
        if isinstance(value, Mapping):
            out.update(value)
        else:
            out[name] = value
    return out


# The metrics this module gives, in the order they are stored. Each looks its function up
# when it runs, so a test can replace one.
metric("topic_coverage")(lambda r, m: topic_coverage(r))
metric("disagreement_compression")(lambda r, m: disagreement_compression(r))
metric("position_shift_rate")(lambda r, m: position_shift_rate(r))
metric("sycophancy_rate")(lambda r, m: sycophancy_rate(r))
metric("belief_consistency_line")(lambda r, m: belief_consistency_line(r))
metric("crux_specificity")(lambda r, m: crux_specificity(r))
metric("n_crux_items")(lambda r, m: float(len(crux_texts(r))))
metric("guards")(lambda r, m: guard_counts(r))  # guard_echo, guard_role, guard_sides, guard_ended
metric("proposition_coverage", needs_personas=True)(lambda r, m: proposition_coverage(r, m.truth, m.propositions))
metric("belief_consistency_prompt", needs_personas=True)(
    lambda r, m: belief_consistency_prompt(r, m.truth, m.propositions)
)
metric("corpus_grounding", needs_personas=True)(lambda r, m: corpus_grounding(r, m.personas))
metric("fake_consensus_rate", needs_personas=True)(lambda r, m: fake_consensus_rate(r, m.truth, m.propositions))
metric("fake_consensus_count", needs_personas=True)(
    lambda r, m: float(len(fake_consensus_items(r, m.truth, m.propositions)))
)
metric("validated_cruxes", needs_personas=True)(lambda r, m: float(len(validated_cruxes(r, m.truth, m.propositions))))
metric("cost_per_validated_crux", needs_personas=True)(
    lambda r, m: cost_per_validated_crux(r, m.truth, m.propositions)
)


def run_metrics(result: DebateResult, personas: Mapping[str, Persona] | None = None) -> dict[str, float]:
    """:func:`compute_metrics` without the ``nan`` values, rounded; never raises (the runner
    calls it at the end of every debate, and a metric bug must not lose a result: it then
    records ``metrics_error = 1``). It also stamps ``restates_topic`` on every crux and card
    (:func:`crux_lab.analysis.quality.mark_restates_topic`)."""
    try:
        mark_restates_topic(result)
        values = compute_metrics(result, personas)
    except Exception:  # a bug in a metric must never cost the debate
        return {"metrics_error": 1.0}
    return {k: round(v, 6) for k, v in values.items() if isinstance(v, float) and math.isfinite(v)}


def metric_frame_rows(results: Iterable[DebateResult]) -> list[dict[str, Any]]:
    """``[{run_id, engine, metric, value}]`` rows of the results' stored metrics."""
    return [
        {"run_id": r.run_id, "engine": r.engine, "metric": k, "value": v}
        for r in results
        for k, v in sorted(r.metrics.items())
    ]


# ---------------------------------------------------------------------------
# Cross-debate (over the store)
# ---------------------------------------------------------------------------


def crux_items_from_db(con: Any) -> dict[str, list[Any]]:
    """``{topic: [CruxItem]}`` of every stored run: its crux cards, else its cruxes."""
    rows = con.execute(
        """
        WITH cards AS (SELECT run_id, id, question AS text, disagreement_type FROM crux_cards),
        plain AS (
            SELECT c.run_id, c.id, c.statement AS text, c.disagreement_type FROM cruxes c
            WHERE c.source <> 'card' AND c.run_id NOT IN (SELECT run_id FROM cards)
        )
        SELECT r.topic, x.run_id, x.id, x.text, x.disagreement_type
        FROM (SELECT * FROM cards UNION ALL SELECT * FROM plain) x JOIN runs r USING (run_id)
        ORDER BY r.topic, x.run_id, x.id
        """
    ).fetchall()
    out: dict[str, list[Any]] = {}
    for topic, run_id, item_id, text, dtype in rows:
        out.setdefault(topic, []).append(CruxItem(run_id, item_id, text, dtype))
    return out


def recurrence_by_run(items: Sequence[Any], encoder: Any = None, threshold: float | None = None) -> dict[str, float]:
    """Cross-debate crux recurrence of each debate: the share of its crux items that fall in a
    cluster of similar cruxes seen in at least two debates (:mod:`crux_lab.analysis.recurrence`,
    same clustering and threshold). Debates are compared with the other debates given, so pass
    the items of one topic at a time."""
    recurring = crux_recurrence(items, threshold=threshold or RECURRENCE_THRESHOLD, encoder=encoder)
    inside = {(m.debate_id, m.crux_id) for r in recurring for m in r.members}
    totals: dict[str, list[bool]] = {}
    for it in items:
        totals.setdefault(it.debate_id, []).append((it.debate_id, it.crux_id) in inside)
    return {run: sum(flags) / len(flags) for run, flags in totals.items()}


def record_recurrence(db: Any = None, *, encoder: Any = None) -> dict[str, float]:
    """Compute :func:`recurrence_by_run` per topic over every run in the store and record it as
    the ``crux_recurrence`` metric of each run (topics with a single debate are skipped)."""
    con = db if hasattr(db, "execute") else connect(db)
    try:
        out: dict[str, float] = {}
        for items in crux_items_from_db(con).values():
            if len({i.debate_id for i in items}) < 2:
                continue
            out.update(recurrence_by_run(items, encoder))
        for run_id, value in out.items():
            record_metrics(con, run_id, {"crux_recurrence": value})
        return out
    finally:
        if con is not db:
            con.close()


def metrics_frame(db: Any = None) -> Any:
    """A pandas DataFrame of every stored metric: ``run_id, engine, topic, seed, name, value``."""
    con = db if hasattr(db, "execute") else connect(db, read_only=True)
    try:
        return con.execute(
            "SELECT m.run_id, r.engine, r.topic, r.seed, m.name, m.value "
            "FROM metrics m JOIN runs r USING (run_id) ORDER BY r.engine, m.name, m.run_id"
        ).df()
    finally:
        if con is not db:
            con.close()


def metric_summary(db: Any = None) -> Any:
    """Mean of each metric per engine (rows: metric, columns: engine), from the store."""
    frame = metrics_frame(db)
    if frame.empty:
        return frame
    return frame.pivot_table(index="name", columns="engine", values="value", aggfunc="mean")


def metrics_figure(summary: Any) -> Any:
    """Heatmap of :func:`metric_summary` (metric x engine, mean values annotated)."""
    import plotly.graph_objects as go

    values = summary.to_numpy(dtype=float)
    fig = go.Figure(go.Heatmap(
        z=values, x=[str(c) for c in summary.columns], y=[str(i) for i in summary.index],
        text=[[f"{v:.2f}" for v in row] for row in values], texttemplate="%{text}", colorscale="Viridis",
    ))
    fig.update_layout(title="Per-debate metrics: mean per engine", height=max(300, 28 * len(summary.index)))
    return fig
