"""Persona fidelity on Polis: does a persona built from part of its group's statements answer
the rest as its group voted?

The fidelity test set is the held-out share of clear statements
(:attr:`~crux_lab.analysis.polis_heldout.HeldOut.fidelity`). For each persona (one per opinion
group) and each such statement, the group's **real vote** is ``YES`` when the group clearly
agrees and ``NO`` when it clearly disagrees (Polis's one-proportion test at 90%, as a mind's
statements are chosen); a group that is not clear on the statement (split, mostly passing, or
too few votes) leaves that pair out.

Answers come as a plain mapping ``{(persona_id, statement_id): "YES" | "NO" | "UNSURE"}``
(from the per-persona poll, or any other source). Per conversation: **accuracy** = answers equal
to the real vote / pairs (``UNSURE`` and a missing answer count as wrong), and **Cohen's kappa**
between answers and votes (over the labels YES, NO, UNSURE). Two baselines answer the same
pairs from the mind alone:

- ``majority``: the group's majority vote over its own mind (``YES`` when at least half its
  mind statements are agreed with), the same answer for every statement;
- ``nearest``: the held-out statement's closest mind statement by cosine (all-MiniLM-L6-v2),
  answered as the group voted on it.

A persona that beats ``nearest`` predicts something beyond copying its closest statement.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from crux_lab.analysis.polis_heldout import HeldOut
from crux_lab.analysis.polis_truth import GroupMind, PolisTruth, _clear
from crux_lab.analysis.stats import cell, cohen_kappa
from crux_lab.analysis.textmatch import unit_vectors

__all__ = [
    "ANSWERS",
    "FidelityScore",
    "cohen_kappa",
    "fidelity_pairs",
    "fidelity_row",
    "fidelity_table",
    "majority_answers",
    "nearest_answers",
    "real_vote",
    "score_fidelity",
]

Answer = Literal["YES", "NO", "UNSURE"]
ANSWERS: tuple[str, ...] = ("YES", "NO", "UNSURE")


def real_vote(truth: PolisTruth, statement: str, group: int) -> str | None:
    """The group's vote on a statement: ``YES`` (clearly agrees), ``NO`` (clearly disagrees) or
    ``None`` (not clear: left out of fidelity)."""
    me = next(g for g in truth.statements[statement].groups if g.group == group)
    stance = _clear(me, truth.min_votes)
    return {"pro": "YES", "con": "NO"}.get(stance or "")


def fidelity_pairs(truth: PolisTruth, held: HeldOut, minds: Sequence[GroupMind]) -> dict[tuple[str, str], str]:
    """Every (persona id, held-out fidelity statement) whose group voted clearly, with that vote."""
    out: dict[tuple[str, str], str] = {}
    for mind in minds:
        for sid in held.fidelity:
            vote = real_vote(truth, sid, mind.group)
            if vote is not None:
                out[(mind.persona_id, sid)] = vote
    return out


@dataclass(frozen=True)
class FidelityScore:
    """One source's answers on one conversation's fidelity pairs."""

    conversation: str
    source: str  # "persona" (or the answers' name) | "majority" | "nearest"
    pairs: int
    correct: int
    unsure: int  # answered UNSURE
    missing: int  # no answer given (counted wrong)
    accuracy: float
    kappa: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def score_fidelity(
    answers: Mapping[tuple[str, str], str], truth: PolisTruth, held: HeldOut, minds: Sequence[GroupMind], *,
    source: str = "persona",
) -> FidelityScore:
    """Accuracy and Cohen's kappa of ``answers`` against the groups' real votes (module docstring)."""
    pairs = fidelity_pairs(truth, held, minds)
    got, want = [], []
    missing = 0
    for key, vote in pairs.items():
        answer = str(answers.get(key, "")).strip().upper()
        if answer not in ANSWERS:
            missing += 1
            answer = "UNSURE"
        got.append(answer)
        want.append(vote)
    correct = sum(1 for a, t in zip(got, want, strict=True) if a == t)
    return FidelityScore(
        conversation=truth.conversation, source=source, pairs=len(pairs), correct=correct,
        unsure=got.count("UNSURE") - missing, missing=missing,
        accuracy=correct / len(pairs) if pairs else math.nan, kappa=cohen_kappa(got, want),
    )


def _answer(stance: str) -> str:
    return "YES" if stance == "pro" else "NO"


def majority_answers(truth: PolisTruth, held: HeldOut, minds: Sequence[GroupMind]) -> dict[tuple[str, str], str]:
    """Baseline: each persona answers every statement with its mind's majority vote (ties: YES)."""
    out = {}
    for mind in minds:
        pro = sum(1 for m in mind.stances if m.stance == "pro")
        answer = "YES" if 2 * pro >= len(mind.stances) else "NO"
        for sid in held.fidelity:
            out[(mind.persona_id, sid)] = answer
    return out


def nearest_answers(
    truth: PolisTruth, held: HeldOut, minds: Sequence[GroupMind], *, encoder: Any = None,
) -> dict[tuple[str, str], str]:
    """Baseline: each persona answers a statement as its group voted on the closest statement of
    its mind by cosine (ties: the first in the mind's order)."""
    out: dict[tuple[str, str], str] = {}
    if not held.fidelity:
        return out
    targets = unit_vectors([truth.statements[s].text for s in held.fidelity], encoder)
    for mind in minds:
        if not mind.stances:
            continue
        vecs = unit_vectors([truth.statements[m.statement].text for m in mind.stances], encoder)
        sim = targets @ vecs.T
        for i, sid in enumerate(held.fidelity):
            out[(mind.persona_id, sid)] = _answer(mind.stances[int(sim[i].argmax())].stance)
    return out


def fidelity_row(
    answers: Mapping[tuple[str, str], str], truth: PolisTruth, held: HeldOut, minds: Sequence[GroupMind], *,
    source: str = "persona", encoder: Any = None,
) -> dict[str, Any]:
    """One conversation's fidelity row: the answers' accuracy and kappa beside both baselines'."""
    scores = [
        score_fidelity(answers, truth, held, minds, source=source),
        score_fidelity(majority_answers(truth, held, minds), truth, held, minds, source="majority"),
        score_fidelity(nearest_answers(truth, held, minds, encoder=encoder), truth, held, minds, source="nearest"),
    ]
    row: dict[str, Any] = {"conversation": truth.conversation, "pairs": scores[0].pairs,
                           "statements": len(held.fidelity), "personas": len(minds)}
    for s, name in zip(scores, (source, "majority", "nearest"), strict=True):
        row[f"{name}_accuracy"], row[f"{name}_kappa"] = s.accuracy, s.kappa
    row["unsure"], row["missing"] = scores[0].unsure, scores[0].missing
    return row


def fidelity_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Persona fidelity per conversation as a Markdown table, beside both baselines, with a last
    line that counts the conversations where the personas beat each baseline on accuracy.

    >>> row = {"conversation": "c", "statements": 2, "pairs": 4, "persona_accuracy": 0.75, "persona_kappa": 0.5,
    ...        "unsure": 0, "majority_accuracy": 0.5, "majority_kappa": 0.0, "nearest_accuracy": 0.75,
    ...        "nearest_kappa": float("nan")}
    >>> print(fidelity_table([row]).splitlines()[-1])
    | personas above the baseline | | 4 | | | | 1 of 1 | | 0 of 1 | |
    """
    head = ["conversation", "statements", "pairs", "persona accuracy", "persona κ", "UNSURE",
            "majority accuracy", "majority κ", "nearest accuracy", "nearest κ"]
    keys = ["conversation", "statements", "pairs", "persona_accuracy", "persona_kappa", "unsure",
            "majority_accuracy", "majority_kappa", "nearest_accuracy", "nearest_kappa"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(r[k]) for k in keys) + " |" for r in rows]

    def above(base: str) -> str:
        return f"{sum(r['persona_accuracy'] > r[f'{base}_accuracy'] for r in rows)} of {len(rows)}"

    lines.append(f"| personas above the baseline | | {sum(r['pairs'] for r in rows)} | | | | {above('majority')} | | "
                 f"{above('nearest')} | |")
    return "\n".join(lines)
