"""Crux and persona quality metrics that need more than counting.

- :func:`restates_topic_rate` and :func:`mark_restates_topic`: cruxes that restate the topic
  (:mod:`crux_lab.analysis.restates`);
- :func:`falsifier_concreteness`: are flip conditions actionable? A documented heuristic
  (:func:`falsifier_score`); on a real backend :func:`judge_falsifiers` asks the strong model
  the rubric question instead;
- :func:`voice_fidelity`: "who said this?" attribution accuracy of the turns, by a classifier
  fitted on each persona's corpus embeddings;
- :func:`reasoning_differentiation`: can a classifier tell personas apart by the *shape* of
  their reasoning (connectives, hedges, evidence markers...), not its content?

Each is a function of a :class:`~crux_lab.models.DebateResult` and returns ``nan`` when the
run cannot support it; each registers as a metric at the end of this module.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from crux_lab.analysis.crux_text import crux_texts
from crux_lab.analysis.metric_registry import metric
from crux_lab.analysis.restates import _vectors, restates_topic_flags
from crux_lab.falsifiers import WORD as _WORD
from crux_lab.falsifiers import falsifier_score
from crux_lab.llm.base import Hints, LLMRequest
from crux_lab.llm.purposes import Purpose
from crux_lab.models.domain import Crux, CruxCard, Tier
from crux_lab.models.result import DebateResult
from crux_lab.personas.models import Persona

NAN = float("nan")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else NAN


# ---------------------------------------------------------------------------
# Topic restatement
# ---------------------------------------------------------------------------


def mark_restates_topic(result: DebateResult, encoder: Any = None) -> None:
    """Stamp ``restates_topic`` on every crux (its statement) and crux card (its question) of
    the run, against the debate topic (:func:`crux_lab.analysis.restates.restates_topic`)."""
    items: list[Any] = [*result.crux_cards, *result.cruxes]
    texts = [i.question if isinstance(i, CruxCard) else i.statement for i in items]
    for item, flag in zip(items, restates_topic_flags(texts, result.config.topic, encoder=encoder), strict=True):
        item.restates_topic = flag


def mark_event_restates_topic(event: Any, topic: str) -> None:
    """Stamp ``restates_topic`` on the cruxes and cards an event carries (a posted card, a
    DCG update, the final output) that have none yet, so the event log records the flags the
    result will hold. Never raises: a failure leaves the flags unset."""
    items: list[Any] = []
    card = getattr(event, "card", None)
    if isinstance(card, CruxCard):
        items.append(card)
    items += [c for c in getattr(event, "cruxes", None) or [] if isinstance(c, Crux)]
    output = getattr(event, "output", None)
    if output is not None:
        items += [c for c in getattr(output, "cruxes", None) or [] if isinstance(c, Crux)]
    items = [i for i in items if i.restates_topic is None]
    if not items:
        return
    try:
        texts = [i.question if isinstance(i, CruxCard) else i.statement for i in items]
        for item, flag in zip(items, restates_topic_flags(texts, topic), strict=True):
            item.restates_topic = flag
    except Exception:  # a flag is a nicety; the debate and its log must go on
        return


def restates_topic_rate(result: DebateResult, encoder: Any = None) -> float:
    """Share of the debate's crux items (:func:`crux_lab.analysis.metrics.crux_texts`: cards,
    cruxes not mirroring a card, disputes) whose question restates the topic instead of
    naming a premise under it. Goal: under 0.1. ``nan`` when there is no crux item."""
    texts = [i.text for i in crux_texts(result)]
    if not texts:
        return NAN
    flags = restates_topic_flags(texts, result.config.topic, encoder=encoder)
    return sum(flags) / len(flags)


# ---------------------------------------------------------------------------
# Falsifier concreteness
# ---------------------------------------------------------------------------

def falsifiers_of(result: DebateResult) -> list[str]:
    """Every falsifier the run states: card positions' falsifiers, then flip conditions."""
    out = [pos.falsifier for card in result.crux_cards for pos in card.personas.values() if pos.falsifier]
    out += [f for fs in result.flip_conditions.values() for f in fs]
    return [f.strip() for f in dict.fromkeys(out) if f and f.strip()]


def falsifier_concreteness(result: DebateResult) -> float:
    """Falsifier concreteness (are flip conditions actionable?): the mean
    :func:`falsifier_score` of the run's falsifiers (:func:`falsifiers_of`). ``nan`` when the
    run states none."""
    return _mean([falsifier_score(f) for f in falsifiers_of(result)])


FALSIFIER_RUBRIC = (
    "For each numbered falsifier below, answer whether it names a specific condition that "
    "could be observed: a measurable outcome with a threshold or a time frame, such that two "
    "people could agree whether it happened. Vague conditions ('new evidence', 'better "
    "arguments') are not specific. Reply as JSON with two fields: \"concrete\": a list of "
    "true/false, one per falsifier in order; \"basis\": one sentence on how you judged."
)


async def judge_falsifiers(backend: Any, falsifiers: Sequence[str]) -> tuple[float, str]:
    """Falsifier concreteness by a rubric judge (on a real backend, the strong model): the
    share judged concrete, and the judge's stated basis; ``(nan, "")`` without falsifiers.
    On the offline backend the judge applies :func:`falsifier_score` and says so in its basis."""

    class Verdicts(BaseModel):
        concrete: list[bool] = Field(default_factory=list)
        basis: str = ""

    if not falsifiers:
        return NAN, ""
    listed = "\n".join(f"{i}. {f}" for i, f in enumerate(falsifiers, start=1))
    request = LLMRequest(
        purpose=Purpose.judge_falsifiers,
        system="You judge whether stated flip conditions are specific and observable.",
        user=f"{FALSIFIER_RUBRIC}\n\n{listed}",
        tier=Tier.strong,
        temperature=0.0,
        max_tokens=600,
        output_schema=Verdicts,
        hints=Hints(extra={"falsifiers": list(falsifiers)}),
    )
    response = await backend.generate(request)
    verdicts = response.parsed if isinstance(response.parsed, Verdicts) else Verdicts()
    flags = list(verdicts.concrete[: len(falsifiers)])
    return (sum(flags) / len(flags) if flags else NAN), verdicts.basis


# ---------------------------------------------------------------------------
# Voice fidelity and reasoning differentiation
# ---------------------------------------------------------------------------

#: At most this many turns are attributed per debate (the metric samples the transcript).
VOICE_MAX_TURNS = 30


def voice_fidelity(result: DebateResult, personas: Mapping[str, Persona], encoder: Any = None) -> float:
    """Voice fidelity ("who said this?") as attribution accuracy: a logistic
    regression on MiniLM embeddings, fitted on each debate persona's corpus (its chunks and
    voice examples), names the speaker of each turn (the first :data:`VOICE_MAX_TURNS`);
    the share named right. Chance is 1 / the number of personas. ``nan`` with fewer than two
    personas that have a corpus and spoke."""
    corpus: dict[str, list[str]] = {}
    for pid in result.config.persona_ids:
        persona = personas.get(pid)
        if persona is None:
            continue
        texts = [c.text for c in persona.corpus] + [e.text for e in persona.voice.voice_examples]
        texts = [t for t in texts if t.strip()]
        if texts:
            corpus[pid] = texts
    turns = [t for t in result.transcript if t.persona_id in corpus and t.dialogue.strip()][:VOICE_MAX_TURNS]
    if len(corpus) < 2 or len({t.persona_id for t in turns}) < 2:
        return NAN
    from sklearn.linear_model import LogisticRegression

    train_x = _vectors([t for texts in corpus.values() for t in texts], encoder)
    train_y = [pid for pid, texts in corpus.items() for _ in texts]
    model = LogisticRegression(max_iter=2000, C=4.0)
    model.fit(train_x, train_y)
    predicted = model.predict(_vectors([t.dialogue for t in turns], encoder))
    return float(sum(1 for t, p in zip(turns, predicted, strict=True) if p == t.persona_id) / len(turns))


_STRUCTURE: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern, re.I)
    for pattern in (
        r"\b(because|therefore|thus|hence|so that|since|leads? to|causes?|drives?)\b",  # causal
        r"\b(but|however|yet|although|though|whereas|instead)\b",  # contrast
        r"\b(might|may|perhaps|likely|probably|could|seems?|possibly)\b",  # hedge
        r"\b(clearly|certainly|always|never|must|undeniabl\w*|obviously)\b",  # certainty
        r"\d|%|\b(data|evidence|stud(y|ies)|record|history|historically|measured)\b",  # evidence
        r"\b(i|my|me|we|our|us)\b",  # first person
        r"\b(you|your)\b",  # second person
        r"\b(should|ought|fair|unfair|right|wrong|deserve\w*)\b",  # normative
        r"\b(if|unless|when|whenever|provided)\b",  # conditional
        r"\b(like|as if|akin|analog\w*|just as)\b",  # analogy
    )
)


def structure_features(text: str) -> list[float]:
    """The content-free shape of one turn's reasoning: sentence count and mean length, share
    of questions, and per-word rates of causal, contrast, hedge, certainty, evidence, first-
    and second-person, normative, conditional and analogy markers.

    >>> len(structure_features("Rents fell because supply rose. But will it last?"))
    13
    """
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]
    n_sent = max(1, len(sentences))
    words = max(1, len(_WORD.findall(text)))
    feats = [float(len(sentences)), words / n_sent, sum(s.endswith("?") for s in sentences) / n_sent]
    feats += [len(p.findall(text)) / words for p in _STRUCTURE]
    return feats


def reasoning_differentiation(result: DebateResult, min_turns: int = 3) -> float:
    """Are different personas' reasoning chains structurally distinguishable? (After
    the LOT classifier of arXiv:2509.24147.) A logistic regression on content-free
    features of each turn (:func:`structure_features`: how it reasons, not what about)
    predicts the speaker under stratified cross-validation; the score is the accuracy above
    chance, ``(acc - 1/k) / (1 - 1/k)`` for ``k`` personas: 0 = indistinguishable, 1 = always
    told apart (below 0: worse than chance). ``nan`` unless 2+ personas have ``min_turns``
    turns each."""
    by: dict[str, list[str]] = {}
    for t in result.transcript:
        if t.dialogue.strip():
            by.setdefault(t.persona_id, []).append(t.dialogue)
    by = {p: ts for p, ts in by.items() if len(ts) >= min_turns}
    if len(by) < 2:
        return NAN
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x = np.array([structure_features(t) for ts in by.values() for t in ts])
    y = [p for p, ts in by.items() for _ in ts]
    folds = min(5, min(len(ts) for ts in by.values()))
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    acc = float(cross_val_score(model, x, y, cv=StratifiedKFold(folds, shuffle=True, random_state=0)).mean())
    chance = 1.0 / len(by)
    return (acc - chance) / (1.0 - chance)


__all__ = [
    "FALSIFIER_RUBRIC",
    "VOICE_MAX_TURNS",
    "falsifier_concreteness",
    "falsifier_score",
    "falsifiers_of",
    "judge_falsifiers",
    "mark_event_restates_topic",
    "mark_restates_topic",
    "reasoning_differentiation",
    "restates_topic_rate",
    "structure_features",
    "voice_fidelity",
]


# The metrics this module gives (:mod:`crux_lab.analysis.metric_registry`).
metric("restates_topic_rate")(lambda r, m: restates_topic_rate(r))
metric("falsifier_concreteness")(lambda r, m: falsifier_concreteness(r))
metric("reasoning_differentiation")(lambda r, m: reasoning_differentiation(r))
metric("voice_fidelity", needs_personas=True)(lambda r, m: voice_fidelity(r, m.personas))
