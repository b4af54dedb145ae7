"""Held-out statements of a Polis conversation, and crux finding scored on them with sides.

The personas of :mod:`crux_lab.analysis.polis_truth` hold their groups' most representative
statements verbatim, and those overlap with the statements that divide the groups, so scoring
cruxes against all divisive statements rewards reading the minds back. Here a part of each
conversation is kept out of every persona's mind (:func:`hold_out`):

- the top ``k`` divisive statements (default 5): the crux test set;
- a seeded random fifth of the remaining *clear* statements (statements some opinion group
  clearly agrees or disagrees with, by Polis's test): the fidelity test set
  (:mod:`crux_lab.analysis.polis_fidelity`);
- every statement within cosine ``near`` (default 0.8, all-MiniLM-L6-v2 of
  :mod:`crux_lab.embed`) of one of those: a reworded copy is no test.

The minds are then built from the rest with the same rules as before
(:func:`~crux_lab.analysis.polis_truth.group_minds` with ``exclude``). A conversation in which
fewer than two groups keep enough clear statements is named and skipped with the counts
(:class:`HoldOutError`), never filled with invented statements.

**Crux finding with sides.** A found crux (an :class:`~crux_lab.analysis.recovery.Item`, with
the personas its engine puts on YES and NO) is matched by text to its closest statement of the
conversation at the calibrated threshold (:func:`~crux_lab.analysis.polis_eval.match_statements`;
an item at least as close to the debate topic as to that statement restates the topic and
matches nothing). It is **recovered** when that statement is a held-out divisive one **and**
its sides agree with the groups' votes (:func:`~crux_lab.analysis.recovery.sides_agree`): the
persona of the group that agrees most is on one side, the persona of the group that agrees
least on the other, in either polarity; a persona of any other group may sit on either side.
Per debate, at the statement level (paraphrases count once): precision = held-out divisive
statements recovered / (distinct statements matched by text + distinct items matching
nothing); recall@k = recovered / k; F1. The canaries (:func:`polis_canaries`): the topic as
the only crux (with the sides of the held-out divisive statement closest to it) must score 0;
the oracle (the held-out divisive statements with the groups' sides) must score 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from crux_lab.analysis.polis import PolisDataError
from crux_lab.analysis.polis_truth import GroupMind, PolisTruth, _clear, _num, group_minds
from crux_lab.analysis.recovery import Item, _prf, sides_agree
from crux_lab.analysis.textmatch import unit_vectors

__all__ = [
    "HeldOut",
    "HoldOutError",
    "JudgedItem",
    "SidesScore",
    "clear_statements",
    "divisive_key",
    "hold_out",
    "judge_items",
    "mind_leaks",
    "minds_without",
    "polis_canaries",
    "score_items",
]

NEAR_COSINE = 0.8
FIDELITY_FRACTION = 0.2


class HoldOutError(PolisDataError):
    """Fewer than two opinion groups keep enough clear statements after the hold-out."""


@dataclass(frozen=True)
class HeldOut:
    """What one conversation keeps out of every persona's mind (module docstring)."""

    conversation: str
    divisive: tuple[str, ...]  # the top-k divisive statements: the crux test set
    fidelity: tuple[str, ...]  # a seeded random share of the other clear statements
    near: tuple[str, ...]  # statements within ``cosine`` of a held-out one, held out too
    k: int
    cosine: float
    fraction: float
    seed: int
    clear_left: int  # clear statements the fidelity share was drawn from

    @property
    def held(self) -> frozenset[str]:
        return frozenset(self.divisive) | frozenset(self.fidelity) | frozenset(self.near)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "held": sorted(self.held, key=_num)}


def clear_statements(truth: PolisTruth) -> list[str]:
    """Statements some opinion group clearly agrees or disagrees with (Polis's one-proportion
    test at 90%, at least ``truth.min_votes`` votes), in id order."""
    out = [sid for sid, s in truth.statements.items()
           if s.text.strip() and any(_clear(g, truth.min_votes) is not None for g in s.groups)]
    return sorted(out, key=_num)


def _vectors(truth: PolisTruth, ids: Sequence[str], encoder: Any) -> np.ndarray:
    return unit_vectors([truth.statements[s].text for s in ids], encoder)


def _neighbours(truth: PolisTruth, of: Sequence[str], among: Sequence[str], cosine: float, encoder: Any) -> set[str]:
    """Statements of ``among`` within ``cosine`` of a statement of ``of`` (``of`` left out)."""
    among = [s for s in among if s not in set(of) and truth.statements[s].text.strip()]
    if not of or not among:
        return set()
    sim = _vectors(truth, among, encoder) @ _vectors(truth, of, encoder).T
    return {sid for sid, row in zip(among, sim, strict=True) if float(row.max()) >= cosine}


def hold_out(
    truth: PolisTruth,
    *,
    k: int | None = None,
    cosine: float = NEAR_COSINE,
    fraction: float = FIDELITY_FRACTION,
    seed: int = 0,
    encoder: Any = None,
) -> HeldOut:
    """The statements of ``truth`` kept out of the minds (module docstring). ``k`` defaults to
    ``truth.k``; the fidelity share is ``round(fraction * n)`` of the ``n`` clear statements
    left after the divisive ones and their near copies (at least one when ``n > 0``), drawn
    with ``numpy.random.default_rng(seed)`` from the id-ordered list."""
    k = truth.k if k is None else k
    divisive = tuple(truth.divisive[:k])
    texts = [sid for sid, s in truth.statements.items() if s.text.strip()]
    near = _neighbours(truth, divisive, texts, cosine, encoder)
    left = [sid for sid in clear_statements(truth) if sid not in set(divisive) | near]
    n = min(len(left), max(1, round(fraction * len(left)))) if left else 0
    rng = np.random.default_rng(seed)
    picked = sorted((left[i] for i in rng.choice(len(left), size=n, replace=False)), key=_num) if n else []
    fidelity = tuple(picked)
    held = set(divisive) | near | set(fidelity)
    near |= _neighbours(truth, fidelity, [s for s in texts if s not in held], cosine, encoder)
    return HeldOut(
        conversation=truth.conversation, divisive=divisive, fidelity=fidelity,
        near=tuple(sorted(near, key=_num)), k=k, cosine=cosine, fraction=fraction, seed=seed,
        clear_left=len(left),
    )


def minds_without(
    truth: PolisTruth, held: HeldOut, *, per_group: int = 5, n_consensus: int = 2, min_clear: int = 3,
) -> tuple[list[GroupMind], list[str]]:
    """The minds built from the statements not held out (same rules as
    :func:`~crux_lab.analysis.polis_truth.group_minds`), and one note per group skipped.
    When the hold-out leaves fewer than two minds (and the whole conversation gives two), raises
    :class:`HoldOutError` naming the conversation and each group's count of clear statements left."""
    minds, notes = group_minds(truth, per_group=per_group, n_consensus=n_consensus, min_clear=min_clear,
                               exclude=held.held)
    if len(minds) < 2 and len(group_minds(truth, per_group=per_group, n_consensus=n_consensus, min_clear=min_clear)[0]) >= 2:
        left = _clear_counts(truth, held, n_consensus)
        counts = ", ".join(f"group {g}: {left.get(g, 0)}" for g in truth.groups)
        raise HoldOutError(
            f"{truth.conversation}: after holding out {len(held.divisive)} divisive, {len(held.fidelity)} fidelity "
            f"and {len(held.near)} near-copy statement(s), only {len(minds)} opinion group(s) keep {min_clear} or more "
            f"clear statements (left per group: {counts}); a debate needs two, so the conversation is skipped "
            "(no statement is invented to fill a mind)."
        )
    return minds, notes


def _clear_counts(truth: PolisTruth, held: HeldOut, n_consensus: int) -> dict[int, int]:
    """Per group, the statements its mind could still hold after the hold-out (no cap)."""
    minds, _ = group_minds(truth, per_group=10**6, n_consensus=n_consensus, min_clear=0, exclude=held.held)
    return {m.group: len(m.stances) for m in minds}


def mind_leaks(
    truth: PolisTruth, minds: Sequence[GroupMind], held: HeldOut, *, encoder: Any = None,
) -> list[tuple[str, str, str, float]]:
    """Every (persona id, mind statement, held-out statement, cosine) where a mind holds a
    held-out statement or one within ``held.cosine`` of it; empty when the split is clean."""
    out: list[tuple[str, str, str, float]] = []
    targets = sorted(held.held, key=_num)
    tvec = _vectors(truth, targets, encoder) if targets else np.zeros((0, 384))
    for mind in minds:
        ids = [m.statement for m in mind.stances]
        for sid in ids:
            if sid in held.held:
                out.append((mind.persona_id, sid, sid, 1.0))
        if not ids or not targets:
            continue
        sim = _vectors(truth, ids, encoder) @ tvec.T
        for i, sid in enumerate(ids):
            j = int(np.argmax(sim[i]))
            if float(sim[i, j]) >= held.cosine and sid not in held.held:
                out.append((mind.persona_id, sid, targets[j], round(float(sim[i, j]), 4)))
    return out


def divisive_key(truth: PolisTruth, sid: str, persona_group: Mapping[str, int]) -> dict[str, str]:
    """The groups' sides on one statement, per persona: ``pro`` for the group (with a persona)
    that agrees most, ``con`` for the one that agrees least, ``uncertain`` for the others (and
    for all when they agree equally)."""
    s = truth.statements[sid]
    rates = {pid: s.rate(g) for pid, g in persona_group.items()}
    rated = {pid: r for pid, r in rates.items() if not math.isnan(r)}
    key = dict.fromkeys(persona_group, "uncertain")
    if len(rated) < 2:
        return key
    hi = max(rated.values())
    lo = min(rated.values())
    if hi == lo:
        return key
    for pid, r in rated.items():
        if r == hi:
            key[pid] = "pro"
        elif r == lo:
            key[pid] = "con"
    return key


@dataclass(frozen=True)
class JudgedItem:
    item: Item
    statement: str | None  # matched statement (at the threshold, not restating the topic)
    closest: str | None
    score: float | None
    how: str  # "embedding" | "none" | "generic" | "topic"
    sides: str  # "right" | "wrong" | "none" | "n/a" (n/a: not matched to a held-out divisive statement)
    recovered: bool


def judge_items(
    items: Sequence[Item], truth: PolisTruth, held: HeldOut, persona_group: Mapping[str, int], *,
    topic: str, threshold: float | None = None, encoder: Any = None,
) -> list[JudgedItem]:
    """Each item with its statement match and whether it is recovered (module docstring)."""
    from crux_lab.analysis.polis_eval import match_statements

    matches = match_statements([i.text for i in items], [i.kind for i in items], truth, threshold=threshold,
                               encoder=encoder, topic=topic)
    test = set(held.divisive)
    out = []
    for item, m in zip(items, matches, strict=True):
        sides = "n/a"
        if m.statement in test:
            if not item.has_sides:
                sides = "none"
            else:
                key = divisive_key(truth, m.statement, persona_group)
                sides = "right" if sides_agree(item.yes, item.no, key) else "wrong"
        how = "generic" if m.score is None else ("topic" if m.restated else ("embedding" if m.statement else "none"))
        out.append(JudgedItem(item, m.statement, m.closest, m.score, how, sides, sides == "right"))
    return out


@dataclass
class SidesScore:
    """One debate's (or canary's) crux finding against the held-out divisive statements."""

    n_items: int
    matched_by_text: int  # held-out divisive statements matched by text, sides or not
    recovered: int  # ... with their sides right
    sides_wrong: int
    no_sides: int
    restated_topic: int
    predicted: int
    precision: float
    recall_at_k: float
    f1: float
    found: list[str]
    judged: list[JudgedItem]


def score_items(
    items: Sequence[Item], truth: PolisTruth, held: HeldOut, persona_group: Mapping[str, int], *,
    topic: str, threshold: float | None = None, encoder: Any = None,
) -> SidesScore:
    """Precision, recall@k and F1 of ``items`` recovered with sides (module docstring)."""
    judged = judge_items(items, truth, held, persona_group, topic=topic, threshold=threshold, encoder=encoder)
    matched = {j.statement for j in judged if j.statement}
    unmatched = {j.item.text.strip().lower() for j in judged if j.statement is None}
    predicted = len(matched) + len(unmatched)
    found = {j.statement for j in judged if j.recovered}
    by_text = {j.statement for j in judged if j.statement in set(held.divisive)}
    precision, recall, f1 = _prf(len(found), predicted, len(held.divisive))
    return SidesScore(
        n_items=len(items), matched_by_text=len(by_text), recovered=len(found),
        sides_wrong=sum(1 for j in judged if j.sides == "wrong"), no_sides=sum(1 for j in judged if j.sides == "none"),
        restated_topic=sum(1 for j in judged if j.how == "topic"), predicted=predicted,
        precision=precision, recall_at_k=recall, f1=f1,
        found=sorted((s for s in found if s), key=held.divisive.index), judged=judged,
    )


def polis_canaries(
    truth: PolisTruth, held: HeldOut, persona_group: Mapping[str, int], *, topic: str, encoder: Any = None,
) -> dict[str, list[Item]]:
    """The two item lists every Polis scorer must read right: ``topic`` (the debate topic as
    the only crux, with the sides of the held-out divisive statement whose words are closest
    to it, so only the text rules can stop it: must score 0) and ``oracle`` (each held-out
    divisive statement with the groups' sides: must score 1)."""

    def sides(sid: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        key = divisive_key(truth, sid, persona_group)
        return (tuple(p for p, v in key.items() if v == "pro"), tuple(p for p, v in key.items() if v == "con"))

    if not held.divisive:
        return {"topic": [Item(topic.strip(), kind="canary")], "oracle": []}
    closest = held.divisive[0]
    if len(held.divisive) > 1:
        sim = unit_vectors([topic], encoder) @ _vectors(truth, held.divisive, encoder).T
        closest = held.divisive[int(np.argmax(sim[0]))]
    yes, no = sides(closest)
    return {
        "topic": [Item(topic.strip(), yes, no, "canary")],
        "oracle": [Item(truth.statements[sid].text, *sides(sid), "canary") for sid in held.divisive],
    }
