"""The cruxes a set of runs found, grouped where runs found the same crux (pure).

Each run's crux items are its crux cards, its cruxes not mirroring a card and its disputes not
mirrored by a crux (:func:`crux_lab.analysis.metrics.crux_texts`), each with its question, its
type and its two sides (who answers yes, who no, by display name). Items from different runs
are one crux when their questions say the same thing: the same words
(:func:`crux_lab.analysis.restates.same_wording`) or, by default, MiniLM cosine at the
threshold calibrated on held-out paraphrases (:mod:`crux_lab.analysis.calibration`), the matcher
that scores recovery. A group is compared through its first question only, so a chain of
near-neighbours never merges two distinct premises.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from crux_lab.analysis.calibration import default_calibration
from crux_lab.analysis.metrics import crux_texts
from crux_lab.analysis.restates import same_wording
from crux_lab.analysis.textmatch import unit_vectors
from crux_lab.models.result import DebateResult

__all__ = ["CruxGroup", "FoundCrux", "calibrated_same", "found_cruxes", "group_cruxes", "wording_same"]

Similar = Callable[[Sequence[str]], np.ndarray]  # questions -> n x n matrix of "same crux"


@dataclass(frozen=True)
class FoundCrux:
    """One crux item of one run, sides by display name (empty when the run cannot tell)."""

    run_id: str
    engine: str
    question: str
    type: str | None
    yes: tuple[str, ...] = ()
    no: tuple[str, ...] = ()


@dataclass(frozen=True)
class CruxGroup:
    """Runs that found the same crux: the wording shown (see :func:`_group`), every wording, the most common
    type, the sides as the shown wording's run gave them (else the first sided run's; another run
    may word the question the other way round), and which runs (and engines) found it."""

    question: str
    type: str | None
    yes: tuple[str, ...]
    no: tuple[str, ...]
    run_ids: tuple[str, ...]
    engines: tuple[str, ...]
    wordings: tuple[str, ...]

    @property
    def runs(self) -> int:
        return len(self.run_ids)


def found_cruxes(result: DebateResult, names: Mapping[str, str] | None = None) -> list[FoundCrux]:
    """The crux items of one run with their sides; ``names`` maps persona ids to display names.

    >>> from crux_lab.models import CruxCard, CruxCardPosition, DebateConfig
    >>> card = CruxCard(id="k", question="Is gold scarce?", disagreement_type="evidence", diagnosis="",
    ...                 personas={"a": CruxCardPosition(position="YES", reasoning=""),
    ...                           "b": CruxCardPosition(position="NO", reasoning="")})
    >>> r = DebateResult(run_id="r1", config=DebateConfig(topic="t", persona_ids=["a", "b"]), engine="panel",
    ...                  backend="replay", crux_cards=[card])
    >>> found_cruxes(r, {"a": "Ann", "b": "Bo"})
    [FoundCrux(run_id='r1', engine='panel', question='Is gold scarce?', type='evidence', yes=('Ann',), no=('Bo',))]
    """
    names = names or {}

    def named(ids: Sequence[str]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(names.get(pid, pid) for pid in ids))

    cards = {c.id: c for c in result.crux_cards}
    cruxes = {c.id: c for c in result.cruxes}
    out: list[FoundCrux] = []
    for item in crux_texts(result):
        yes: tuple[str, ...] = ()
        no: tuple[str, ...] = ()
        if item.kind == "card" and item.item_id in cards:
            positions = cards[item.item_id].personas
            yes = named([pid for pid, p in positions.items() if p.position.value == "YES"])
            no = named([pid for pid, p in positions.items() if p.position.value == "NO"])
        elif item.kind == "crux" and item.item_id in cruxes:
            crux = cruxes[item.item_id]
            yes, no = named([s.persona_id for s in crux.yes_side]), named([s.persona_id for s in crux.no_side])
        elif item.kind == "dispute":
            stances = [s for s in result.dcg.stances if s.dispute_id == item.item_id]
            yes = named([s.speaker_id for s in stances if s.side.value == "YES"])
            no = named([s.speaker_id for s in stances if s.side.value == "NO"])
        out.append(FoundCrux(result.run_id, result.engine, item.text, item.disagreement_type, yes, no))
    return out


def wording_same(questions: Sequence[str]) -> np.ndarray:
    """``n x n``: do two questions use nearly the same words (:func:`same_wording`)?

    >>> wording_same(["Is gold money?", "Is gold really money?", "Will rates rise?"]).astype(int).tolist()
    [[1, 1, 0], [1, 1, 0], [0, 0, 1]]
    """
    n = len(questions)
    return np.array([[i == j or same_wording(questions[i], questions[j]) for j in range(n)] for i in range(n)],
                    dtype=bool).reshape(n, n)


def calibrated_same(questions: Sequence[str]) -> np.ndarray:
    """``n x n``: the same words, or MiniLM cosine at the calibrated threshold."""
    if not questions:
        return np.zeros((0, 0), dtype=bool)

    vectors = unit_vectors(list(questions))
    return np.logical_or(wording_same(questions), vectors @ vectors.T >= default_calibration().threshold)


def group_cruxes(items: Sequence[FoundCrux], similar: Similar = calibrated_same) -> list[CruxGroup]:
    """Group the items of many runs by crux, most runs first (ties: first found first).

    >>> a = FoundCrux("r1", "dcg", "Is gold money?", "definition", ("Ann",), ("Bo",))
    >>> b = FoundCrux("r2", "panel", "Is gold really money?", "values", ("Ann",), ("Cy",))
    >>> c = FoundCrux("r2", "panel", "Will rates rise?", None)
    >>> [(g.question, g.runs, g.yes, g.no, g.engines) for g in group_cruxes([c, a, b], wording_same)]
    [('Is gold money?', 2, ('Ann',), ('Bo',), ('dcg', 'panel')), ('Will rates rise?', 1, (), (), ('panel',))]
    """
    if not items:
        return []
    same = similar([i.question for i in items])
    heads: list[int] = []  # index of each group's first item
    members: list[list[FoundCrux]] = []
    for k, item in enumerate(items):
        home = next((g for g, head in enumerate(heads) if same[head, k]), None)
        if home is None:
            heads.append(k)
            members.append([item])
        else:
            members[home].append(item)
    groups = [_group(m) for m in members]
    order = sorted(range(len(groups)), key=lambda g: (-groups[g].runs, g))
    return [groups[g] for g in order]


# "Ann holds: X. Bo holds: Y." describes a crux's two sides (dialogue's symmetric difference);
# it is no question a reader can answer, so a group shows one of its other wordings when it has one.
_SIDES_DESCRIBED = re.compile(r"^[^.:?]{1,120}\bholds: ")


def describes_sides(text: str) -> bool:
    """The text says who holds what ("Ann holds: X. Bo holds: Y."), not a question to answer.

    >>> describes_sides("Ann holds: Rents fall. Bo holds: Rents rise."), describes_sides("Will rents fall?")
    (True, False)
    """
    return bool(_SIDES_DESCRIBED.match(text))


def _group(items: Sequence[FoundCrux]) -> CruxGroup:
    """One group's row: its first wording that is not a description of two sides (else its
    first), the most common type, the sides of its first sided item.

    >>> a = FoundCrux("r1", "dialogue", "Ann holds: Rents fall. Bo holds: Rents rise.", None, ("Ann",), ("Bo",))
    >>> b = FoundCrux("r2", "dcg", "Will rents fall?", None)
    >>> _group([a, b]).question, _group([a, b]).yes
    ('Will rents fall?', ('Ann',))
    """
    types = Counter(i.type for i in items if i.type)
    shown = next((i for i in items if not describes_sides(i.question)), items[0])
    sided = shown if shown.yes or shown.no else next((i for i in items if i.yes or i.no), items[0])
    return CruxGroup(
        question=shown.question,
        type=types.most_common(1)[0][0] if types else None,
        yes=sided.yes,
        no=sided.no,
        run_ids=tuple(dict.fromkeys(i.run_id for i in items)),
        engines=tuple(dict.fromkeys(i.engine for i in items)),
        wordings=tuple(dict.fromkeys(i.question for i in items)),
    )
