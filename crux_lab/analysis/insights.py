"""Insight structures built from crux cards: the alignment matrix and camps.

Every computation goes through the shared stance-matrix analysis of
:mod:`crux_lab.analysis.alignment` (the same functions the Polis check uses); this module only
turns crux cards and persona stances into its :class:`~crux_lab.analysis.alignment.StanceMatrix`.

- :func:`card_alignment`: personas × crux cards, YES=+1 / NO=-1 / NUANCED=0, NaN where the
  persona was not in that card's room (missing is not disagreement); columns carry the card's
  category (:data:`CATEGORY`) and question;
- :func:`card_positions`: the same matrix as YES / NO / NUANCED labels, for display;
- :func:`card_disagreement`: persona × persona disagreement split by category — factual vs
  values (vs definitional);
- :func:`debate_matrix` and :func:`debate_camps`: cards plus the personas' final proposition
  stances, clustered into camps (``DebateResult.camps``);
- :func:`alignment_report`: all of the above for one DebateResult (what notebooks plot).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from crux_lab.analysis.alignment import (
    Camps,
    ConsensusStatement,
    DisagreementMatrix,
    DivisiveStatement,
    StanceMatrix,
    alignment_matrix,
    consensus_statements,
    disagreement_by_category,
    disagreement_matrix,
    divisive_statements,
    find_camps,
)
from crux_lab.models.domain import Camp, CruxCard, DisagreementType
from crux_lab.models.result import DebateResult

# Which crux types are disputes of fact and which of values (can evidence resolve them?):
# premise, evidence, horizon and claim disputes can be settled or narrowed with evidence;
# values disputes can only be acknowledged; definition disputes are settled by agreeing on terms.
CATEGORY: dict[DisagreementType, str] = {
    DisagreementType.premise: "factual",
    DisagreementType.evidence: "factual",
    DisagreementType.horizon: "factual",
    DisagreementType.claim: "factual",
    DisagreementType.values: "values",
    DisagreementType.definition: "definitional",
}
PROPOSITION_CATEGORY = "proposition"


def _ids(cards: Sequence[CruxCard], persona_ids: Sequence[str] | None) -> list[str]:
    return (
        list(persona_ids)
        if persona_ids is not None
        else list(dict.fromkeys(p for c in cards for p in c.personas))
    )


def card_alignment(
    cards: Sequence[CruxCard], persona_ids: Sequence[str] | None = None
) -> StanceMatrix:
    """Personas × cards stance matrix.

    >>> from crux_lab.models import CruxCardPosition as P
    >>> card = CruxCard(id="c1", question="q?", disagreement_type="values", diagnosis="",
    ...     personas={"a": P(position="YES", reasoning=""), "b": P(position="NO", reasoning="")})
    >>> m = card_alignment([card], ["a", "b", "c"])
    >>> m.values.tolist(), m.categories, m.col_texts
    ([[1.0], [-1.0], [nan]], ('values',), ('q?',))
    """
    triples = [(pid, c.id, pos.position.value) for c in cards for pid, pos in c.personas.items()]
    ids = _ids(cards, persona_ids)
    return alignment_matrix(
        [t for t in triples if t[0] in ids],
        rows=ids,
        columns=[c.id for c in cards],
        categories={c.id: CATEGORY[c.disagreement_type] for c in cards},
        texts={c.id: c.question for c in cards},
    )


def card_positions(
    cards: Sequence[CruxCard], persona_ids: Sequence[str] | None = None
) -> dict[str, dict[str, str | None]]:
    """``{persona: {card id: "YES" | "NO" | "NUANCED" | None}}``.

    >>> from crux_lab.models import CruxCardPosition as P
    >>> card = CruxCard(id="c1", question="q", disagreement_type="evidence", diagnosis="",
    ...     personas={"a": P(position="NUANCED", reasoning="")})
    >>> card_positions([card], ["a", "b"])
    {'a': {'c1': 'NUANCED'}, 'b': {'c1': None}}
    """
    return {
        pid: {c.id: (c.personas[pid].position.value if pid in c.personas else None) for c in cards}
        for pid in _ids(cards, persona_ids)
    }


def card_disagreement(
    cards: Sequence[CruxCard], persona_ids: Sequence[str] | None = None
) -> dict[str, DisagreementMatrix]:
    """Persona × persona disagreement per crux category (factual / values / definitional).

    >>> from crux_lab.models import CruxCardPosition as P
    >>> f = CruxCard(id="f", question="", disagreement_type="evidence", diagnosis="",
    ...     personas={"a": P(position="YES", reasoning=""), "b": P(position="NO", reasoning="")})
    >>> v = CruxCard(id="v", question="", disagreement_type="values", diagnosis="",
    ...     personas={"a": P(position="YES", reasoning=""), "b": P(position="YES", reasoning="")})
    >>> {k: float(d.disagreement[0, 1]) for k, d in card_disagreement([f, v]).items()}
    {'factual': 1.0, 'values': 0.0}
    """
    if not cards:
        return {}
    return disagreement_by_category(card_alignment(cards, persona_ids))


def debate_matrix(
    persona_ids: Sequence[str],
    cards: Sequence[CruxCard],
    final_stances: Mapping[str, Mapping[str, str]],
    texts: Mapping[str, str] | None = None,
) -> StanceMatrix:
    """Cards plus each persona's final stance per proposition (pro/con/uncertain) as columns."""
    triples: list[tuple[str, str, object]] = [
        (pid, c.id, pos.position.value)
        for c in cards
        for pid, pos in c.personas.items()
        if pid in persona_ids
    ]
    props = sorted({p for per in final_stances.values() for p in per})
    triples += [
        (pid, p, s)
        for pid, per in final_stances.items()
        if pid in persona_ids
        for p, s in per.items()
    ]
    categories = {c.id: CATEGORY[c.disagreement_type] for c in cards} | {
        p: PROPOSITION_CATEGORY for p in props
    }
    col_texts = {c.id: c.question for c in cards} | {p: (texts or {}).get(p, p) for p in props}
    return alignment_matrix(
        triples,
        rows=list(persona_ids),
        columns=[c.id for c in cards] + props,
        categories=categories,
        texts=col_texts,
    )


def to_camps(matrix: StanceMatrix, camps: Camps) -> list[Camp]:
    """Camps as the data model's :class:`~crux_lab.models.Camp`, labelled by the statement that
    most divides them (when there is one)."""
    divisive = divisive_statements(matrix, camps) if camps.k > 1 else []
    out = []
    for i, members in enumerate(camps.as_lists()):
        label = f"camp {i + 1}"
        for d in divisive:
            if d.most_for == i:
                label += f": for '{d.text or d.label}'"
                break
        out.append(Camp(index=i, persona_ids=list(members), label=label))
    return out


def debate_camps(
    persona_ids: Sequence[str],
    cards: Sequence[CruxCard],
    final_stances: Mapping[str, Mapping[str, str]],
    texts: Mapping[str, str] | None = None,
) -> list[Camp]:
    """Camps of a debate (empty when nobody took any position)."""
    matrix = debate_matrix(persona_ids, cards, final_stances, texts)
    if not matrix.col_labels or not matrix.observed.any():
        return []
    return to_camps(matrix, camps_of(matrix))


def camps_of(matrix: StanceMatrix) -> Camps:
    """:func:`~crux_lab.analysis.alignment.find_camps`, plus the two-person case it leaves as
    one camp: two personas who disagree on at least half of what they both took a position on
    (pairwise :func:`~crux_lab.analysis.alignment.disagreement_matrix` >= 0.5) are two camps.

    >>> m = alignment_matrix({"a": {"p": 1, "q": 1}, "b": {"p": -1, "q": 1}})
    >>> camps_of(m).as_lists()
    [['a'], ['b']]
    """
    n = matrix.shape[0]
    if n == 2:
        d = float(disagreement_matrix(matrix).disagreement[0, 1])
        split = not np.isnan(d) and d >= 0.5
        assignment = np.array([0, 1] if split else [0, 0], dtype=np.int64)
        return Camps(matrix.row_labels, assignment, 2 if split else 1, None, method="pairwise")
    return find_camps(matrix, k_max=max(2, min(5, n - 1)))


@dataclass(frozen=True)
class AlignmentReport:
    """Everything the alignment notebook shows for one debate."""

    cards: StanceMatrix
    positions: dict[str, dict[str, str | None]]
    by_category: dict[str, DisagreementMatrix]
    matrix: StanceMatrix
    camps: Camps
    divisive: list[DivisiveStatement]
    consensus: list[ConsensusStatement]


def alignment_report(
    result: DebateResult, texts: Mapping[str, str] | None = None
) -> AlignmentReport:
    """Alignment matrix, split disagreement, camps, divisive and consensus statements of a
    debate, from its crux cards and the personas' closing stances."""
    ids = list(result.config.persona_ids)
    closing = {p.persona_id: dict(p.stances) for p in result.positions if p.at == "closing"}
    matrix = debate_matrix(ids, result.crux_cards, closing, texts)
    camps = camps_of(matrix)
    multi = camps.k > 1
    return AlignmentReport(
        cards=card_alignment(result.crux_cards, ids),
        positions=card_positions(result.crux_cards, ids),
        by_category=card_disagreement(result.crux_cards, ids),
        matrix=matrix,
        camps=camps,
        divisive=divisive_statements(matrix, camps) if multi else [],
        consensus=consensus_statements(matrix, camps) if camps.k else [],
    )
