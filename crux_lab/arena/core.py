"""A blind pairwise judge of two engines' crux cards on the same topics.

For every topic (and persona set) both engines have runs on, their card sets are paired (the
same seed where both have it) and a judge picks the better set, or a tie, against a stated
rubric (:data:`RUBRIC`). Each pair is judged twice, once in each order, so a judge that
prefers whatever it reads first cancels out. The engines are scored with a Bradley-Terry
model (a tie counts half a win to each side) with bootstrap confidence intervals over the
pairs, and every judgement is written to the ``arena_judgements`` table.

A run's *card set* is its crux cards; an engine that writes no cards (dcg, graph...) is judged
on its cruxes, shown in the same shape (question, type, sides, settling question). Engine
names never reach the judge: the sets are "Set 1" and "Set 2".

On a real backend the judge is the strong model. On the simulator there is no reader of
quality, so its judge scores each set from the planted ground truth (:func:`simulated_scores`
in the simulator handler) and every verdict says so.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from crux_lab.llm.base import Hints, LLMOutputError, LLMRequest
from crux_lab.llm.purposes import Purpose
from crux_lab.models.domain import Tier

RUBRIC_VERSION = "arena-1"
RUBRIC = (
    "Judge which set of crux cards better maps where these people disagree. A crux card names "
    "a question which, answered, would change someone's view of the topic. Prefer the set whose "
    "cards are, in order of weight:\n"
    "1. specific: each question can be answered by an observation, a measurement or a stated "
    "value, not 'they see it differently';\n"
    "2. a buried premise: the question names an assumption under the disagreement, not the "
    "debate topic restated;\n"
    "3. falsifiable: each side states a concrete condition that would change its answer;\n"
    "4. correctly typed: the disagreement type (premise, evidence, values, definition, "
    "horizon, claim) fits the question.\n"
    "More cards are better only when each one meets the rubric. If neither set is better, "
    "say tie."
)

Verdict = Literal["first", "second", "tie"]
EMPTY_TIE = "Neither set has a card: a tie, scored without asking the judge."


class JudgeReply(BaseModel):
    verdict: Verdict
    reason: str = ""


@dataclass(frozen=True)
class Card:
    """One card as the judge sees it."""

    question: str
    disagreement_type: str | None = None
    positions: tuple[tuple[str, str, str], ...] = ()  # (persona name, position, falsifier)
    settling_question: str | None = None

    def render(self) -> str:
        lines = [f"- Question: {self.question}", f"  Type: {self.disagreement_type or 'unstated'}"]
        for who, pos, falsifier in self.positions:
            lines.append(f"  {who}: {pos}" + (f"; would change if: {falsifier}" if falsifier else ""))
        if self.settling_question and self.settling_question != self.question:
            lines.append(f"  Settled by: {self.settling_question}")
        return "\n".join(lines)

    def as_hint(self) -> dict[str, Any]:
        return {"question": self.question, "type": self.disagreement_type, "falsifiers": [f for _, _, f in self.positions if f]}


@dataclass(frozen=True)
class CardSet:
    run_id: str
    engine: str
    topic: str
    persona_ids: tuple[str, ...]
    seed: int
    cards: tuple[Card, ...]

    def render(self) -> str:
        return "\n".join(c.render() for c in self.cards) or "(no cards)"


@dataclass(frozen=True)
class Judgement:
    topic: str
    engine_a: str
    engine_b: str
    run_a: str
    run_b: str
    order: Literal["ab", "ba"]  # which set was shown first
    verdict: Verdict
    winner: str  # an engine name, or "tie"
    reason: str
    judge: str  # backend and model

    @property
    def id(self) -> str:
        key = "|".join([self.run_a, self.run_b, self.order, self.judge, RUBRIC_VERSION])
        return hashlib.sha256(key.encode()).hexdigest()[:16]


class ArenaError(ValueError):
    """An arena that cannot run (no shared topic, unknown engine, empty database...)."""


# ---------------------------------------------------------------------------
# Card sets from the store
# ---------------------------------------------------------------------------


def load_card_sets(con: Any, engines: Sequence[str]) -> dict[str, list[CardSet]]:
    """``{engine: [CardSet]}`` of every complete stored run of ``engines``."""
    runs = con.execute(
        "SELECT run_id, engine, topic, persona_ids, seed FROM runs "
        "WHERE engine IN (SELECT unnest(?)) AND coalesce(complete, true) ORDER BY engine, topic, seed, run_id",
        [list(engines)],
    ).fetchall()
    if not runs:
        return {e: [] for e in engines}
    ids = [r[0] for r in runs]
    names: dict[str, str] = {}
    cards: dict[str, list[Card]] = {}
    rows = con.execute(
        "SELECT c.run_id, c.id, c.question, c.disagreement_type FROM crux_cards c "
        "WHERE c.run_id IN (SELECT unnest(?)) ORDER BY c.run_id, c.id",
        [ids],
    ).fetchall()
    positions: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for run_id, card_id, persona, pos, falsifier in con.execute(
        "SELECT run_id, card_id, persona_id, position, falsifier FROM crux_card_positions "
        "WHERE run_id IN (SELECT unnest(?)) ORDER BY run_id, card_id, persona_id",
        [ids],
    ).fetchall():
        positions.setdefault((run_id, card_id), []).append((names.get(persona, persona), pos, falsifier or ""))
    for run_id, card_id, question, dtype in rows:
        cards.setdefault(run_id, []).append(Card(question, dtype, tuple(positions.get((run_id, card_id), ()))))
    for run_id, statement, dtype, settling, yes_side, no_side in con.execute(
        "SELECT run_id, statement, disagreement_type, settling_question, yes_side, no_side FROM cruxes "
        "WHERE run_id IN (SELECT unnest(?)) AND source <> 'card' ORDER BY run_id, id",
        [ids],
    ).fetchall():
        if run_id in cards and any(c.positions for c in cards[run_id]):
            continue  # a run with cards is judged on its cards
        sides = [(s.get("persona_id", ""), label, "") for label, side in (("YES", yes_side), ("NO", no_side))
                 for s in (json.loads(side) if isinstance(side, str) else side or [])]
        cards.setdefault(run_id, []).append(Card(statement, dtype, tuple(sides), settling))
    out: dict[str, list[CardSet]] = {e: [] for e in engines}
    for run_id, engine, topic, persona_ids, seed in runs:
        out[engine].append(CardSet(run_id, engine, topic, tuple(persona_ids or ()), int(seed or 0), tuple(cards.get(run_id, ()))))
    return out


def pair_runs(a: Sequence[CardSet], b: Sequence[CardSet]) -> list[tuple[CardSet, CardSet]]:
    """Pairs of runs on the same topic and personas: same seed where both have it, then the
    remaining runs in seed order."""
    out: list[tuple[CardSet, CardSet]] = []
    keys = dict.fromkeys((s.topic, s.persona_ids) for s in a)
    for key in keys:
        left = [s for s in a if (s.topic, s.persona_ids) == key]
        right = [s for s in b if (s.topic, s.persona_ids) == key]
        seeds = {s.seed for s in left} & {s.seed for s in right}
        for seed in sorted(seeds):
            out.append((next(s for s in left if s.seed == seed), next(s for s in right if s.seed == seed)))
        rest_l = [s for s in left if s.seed not in seeds]
        rest_r = [s for s in right if s.seed not in seeds]
        out += list(zip(rest_l, rest_r, strict=False))
    return out


# ---------------------------------------------------------------------------
# Judging
# ---------------------------------------------------------------------------


def judge_request(first: CardSet, second: CardSet, names: Mapping[str, str] | None = None) -> LLMRequest:
    """The judge's request: the rubric, the topic and the two sets, engine names hidden."""
    people = ", ".join((names or {}).get(p, p) for p in first.persona_ids)
    user = (
        f"{RUBRIC}\n\nTopic: {first.topic}\nPeople: {people}\n\nSet 1:\n{first.render()}\n\nSet 2:\n{second.render()}\n\n"
        'Reply as JSON with two fields: "verdict": "first" if Set 1 is better, "second" if Set 2 '
        'is better, "tie" if neither; "reason": one or two sentences citing the rubric.'
    )
    return LLMRequest(
        purpose=Purpose.judge,
        system="You are a careful, impartial judge of analyses of disagreements.",
        user=user,
        tier=Tier.strong,
        temperature=0.0,
        max_tokens=400,
        output_schema=JudgeReply,
        hints=Hints(
            topic=first.topic,
            extra={"first": [c.as_hint() for c in first.cards], "second": [c.as_hint() for c in second.cards]},
        ),
    )


async def judge_pair(
    backend: Any, a: CardSet, b: CardSet, names: Mapping[str, str] | None = None, skipped: list[str] | None = None
) -> list[Judgement]:
    """Judge ``a`` against ``b`` twice, in both orders. A verdict still off-schema after the
    backend's one repair is left out, and why is appended to ``skipped``. Two empty sets tie
    without a call (:data:`EMPTY_TIE`); one empty set is still judged, as the rubric may
    prefer no card to cards that restate the topic."""
    judge = f"{backend.name}:{backend.model_for(Tier.strong)}"
    out = []
    for order, first, second in (("ab", a, b), ("ba", b, a)):
        if not first.cards and not second.cards:
            # Nothing to compare: a tie by rule, and no judge is asked to read two empty sets.
            out.append(Judgement(a.topic, a.engine, b.engine, a.run_id, b.run_id, order, "tie", "tie", EMPTY_TIE, judge))  # type: ignore[arg-type]
            continue
        try:
            response = await backend.generate(judge_request(first, second, names))
            reply = response.parsed if isinstance(response.parsed, JudgeReply) else JudgeReply.model_validate_json(response.text)
        except (LLMOutputError, ValidationError) as exc:
            if skipped is not None:
                skipped.append(f"{first.engine} vs {second.engine} ({first.topic!r}): {str(exc).splitlines()[0][:160]}")
            continue
        winner = {"first": first.engine, "second": second.engine}.get(reply.verdict, "tie")
        out.append(Judgement(a.topic, a.engine, b.engine, a.run_id, b.run_id, order, reply.verdict, winner, reply.reason.strip(), judge))  # type: ignore[arg-type]
    return out


# ---------------------------------------------------------------------------
# Bradley-Terry with bootstrap intervals
# ---------------------------------------------------------------------------


def bradley_terry(games: Iterable[tuple[str, str, float]], players: Sequence[str] | None = None, *, prior: float = 0.5, iters: int = 500) -> dict[str, float]:
    """Bradley-Terry scores from ``(i, j, score_i)`` games (1 = i won, 0.5 = tie, 0 = j won),
    as log-strengths centred on 0 (a difference of d means i beats j with probability
    1 / (1 + e^-d)). Fitted by Hunter's MM algorithm; ``prior`` adds that many virtual ties of
    every player against an average opponent, so a clean sweep gives a finite score.

    >>> s = bradley_terry([("a", "b", 1.0)] * 3 + [("a", "b", 0.5)])
    >>> s["a"] > 0 > s["b"]
    True
    >>> bradley_terry([("a", "b", 0.5)] * 4)
    {'a': 0.0, 'b': 0.0}
    """
    games = list(games)
    names = list(players or dict.fromkeys(p for g in games for p in g[:2]))
    strength = {p: 1.0 for p in names}
    for _ in range(iters):
        new = {}
        for p in names:
            wins = prior
            denom = 2 * prior / (strength[p] + 1.0)
            for i, j, s in games:
                if p == i:
                    wins += s
                    denom += 1.0 / (strength[i] + strength[j])
                elif p == j:
                    wins += 1.0 - s
                    denom += 1.0 / (strength[i] + strength[j])
            new[p] = wins / denom if denom > 0 else strength[p]
        # normalise to geometric mean 1
        g = math.exp(sum(math.log(v) for v in new.values()) / len(new)) if new else 1.0
        new = {p: v / g for p, v in new.items()}
        done = all(abs(new[p] - strength[p]) < 1e-10 for p in names)
        strength = new
        if done:
            break
    return {p: round(math.log(v), 4) + 0.0 for p, v in strength.items()}


def judgement_games(judgements: Iterable[Judgement]) -> list[tuple[str, str, float]]:
    """One game per judgement, ``(engine_a, engine_b, score of engine_a)``."""
    out = []
    for j in judgements:
        score = 0.5 if j.winner == "tie" else 1.0 if j.winner == j.engine_a else 0.0
        out.append((j.engine_a, j.engine_b, score))
    return out


@dataclass
class Scores:
    score: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]
    n_pairs: int
    n_judgements: int
    record: dict[str, dict[str, int]] = field(default_factory=dict)  # engine -> wins/ties/losses


def bt_with_bootstrap(judgements: Sequence[Judgement], *, samples: int = 1000, seed: int = 0, level: float = 0.95) -> Scores:
    """Bradley-Terry scores and percentile bootstrap intervals, resampling *pairs* (both
    orders of a pair stay together, as they were judged)."""
    players = list(dict.fromkeys(p for j in judgements for p in (j.engine_a, j.engine_b)))
    by_pair: dict[tuple[str, str], list[Judgement]] = {}
    for j in judgements:
        by_pair.setdefault((j.run_a, j.run_b), []).append(j)
    pairs = list(by_pair.values())
    point = bradley_terry(judgement_games(judgements), players)
    rng = random.Random(seed)
    draws: dict[str, list[float]] = {p: [] for p in players}
    for _ in range(samples if pairs else 0):
        sample = [j for _ in pairs for j in pairs[rng.randrange(len(pairs))]]
        fit = bradley_terry(judgement_games(sample), players, iters=200)
        for p in players:
            draws[p].append(fit[p])
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
    low = {p: _quantile(v, lo_q) if v else point[p] for p, v in draws.items()}
    high = {p: _quantile(v, hi_q) if v else point[p] for p, v in draws.items()}
    record = {p: {"wins": 0, "ties": 0, "losses": 0} for p in players}
    for j in judgements:
        for p in (j.engine_a, j.engine_b):
            key = "ties" if j.winner == "tie" else "wins" if j.winner == p else "losses"
            record[p][key] += 1
    return Scores(point, low, high, len(pairs), len(judgements), record)


def _quantile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return round(ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo), 4)


# ---------------------------------------------------------------------------
# The store
# ---------------------------------------------------------------------------


def write_judgements(con: Any, judgements: Sequence[Judgement]) -> int:
    """Insert (or replace, by id) the judgements into ``arena_judgements``."""
    rows = [
        (j.id, j.topic, j.engine_a, j.engine_b, j.run_a, j.run_b, j.order, j.verdict, j.winner, j.reason, j.judge, RUBRIC_VERSION)
        for j in judgements
    ]
    con.execute("BEGIN TRANSACTION")
    try:
        con.executemany("DELETE FROM arena_judgements WHERE id = ?", [(r[0],) for r in rows])
        con.executemany(
            "INSERT INTO arena_judgements (id, topic, engine_a, engine_b, run_a, run_b, judge_order, verdict, winner, "
            "reason, judge, rubric_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return len(rows)


__all__ = [
    "RUBRIC",
    "RUBRIC_VERSION",
    "ArenaError",
    "Card",
    "CardSet",
    "JudgeReply",
    "Judgement",
    "Scores",
    "bradley_terry",
    "bt_with_bootstrap",
    "judge_pair",
    "judge_request",
    "judgement_games",
    "load_card_sets",
    "pair_runs",
    "write_judgements",
]
