"""Camps and crux sides that are true, for every engine (pure; run once per result).

Engines build camps and crux sides in their own ways: preferred extensions (a persona whose
arguments sit in two extensions lands in two camps), stance signatures, dispute sides, card
positions. :func:`tidy_sides` brings every result to the same guarantees:

- a persona belongs to at most one camp, so there are never more camps than personas: camps
  that overlap are regrouped by the set of original camps each persona sits in, and the
  original groups are kept in :attr:`~crux_lab.models.DebateResult.extensions` (the
  preferred extensions say more than the camps);
- every crux names at least one persona on each side and none on both; a crux that cannot
  say who holds which side has ``sides_known=False`` and empty sides (it never shows one
  empty side against a full one);
- camp labels carry display names, never persona ids;
- a crux card is resolved only when its positions agree.

:func:`side_breaks` lists what breaks these properties (empty when none does).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from crux_lab.models.domain import Camp, Crux, CruxCard, CruxSide
from crux_lab.models.result import DebateResult


def _named(text: str, names: Mapping[str, str]) -> str:
    """``text`` with every persona id in it replaced by its display name.

    >>> _named("michael-saylor, peter-schiff", {"michael-saylor": "Michael Saylor"})
    'Michael Saylor, peter-schiff'
    """
    for pid, name in sorted(names.items(), key=lambda kv: -len(kv[0])):
        if pid != name:
            text = re.sub(rf"(?<![\w-]){re.escape(pid)}(?![\w-])", name, text)
    return text


def tidy_camps(camps: Sequence[Camp], names: Mapping[str, str]) -> tuple[list[Camp], list[Camp]]:
    """``(camps, extensions)``: disjoint camps, and the original groups when they overlapped
    (else no extensions). Personas sharing the same set of original camps form one camp.

    >>> a = Camp(index=0, persona_ids=["h"], argument_ids=["a1"])
    >>> b = Camp(index=1, persona_ids=["h", "s"], argument_ids=["a2"])
    >>> c = Camp(index=2, persona_ids=["s"], argument_ids=["a3"])
    >>> d = Camp(index=3, persona_ids=["p"], argument_ids=["a4"])
    >>> camps, ext = tidy_camps([a, b, c, d], {"h": "Hayes", "s": "Saylor", "p": "Schiff"})
    >>> [(k.persona_ids, k.label) for k in camps], len(ext)
    ([(['h'], 'Hayes'), (['s'], 'Saylor'), (['p'], 'Schiff')], 4)
    """
    seen: set[str] = set()
    overlap = False
    for camp in camps:
        members = set(camp.persona_ids)
        overlap = overlap or bool(members & seen) or len(members) != len(camp.persona_ids)
        seen |= members
    if not overlap:
        out = [c.model_copy(update={"index": i, "label": camp_label(c.label, c.persona_ids, names)})
               for i, c in enumerate(camps) if c.persona_ids]
        return out, []
    membership: dict[str, tuple[int, ...]] = {}
    for pid in dict.fromkeys(p for c in camps for p in c.persona_ids):
        membership[pid] = tuple(i for i, c in enumerate(camps) if pid in c.persona_ids)
    groups: dict[tuple[int, ...], list[str]] = {}
    for pid, key in membership.items():
        groups.setdefault(key, []).append(pid)
    regrouped: list[Camp] = []
    for key, group in groups.items():
        # the arguments the members' extensions share
        shared = [a for a in camps[key[0]].argument_ids if all(a in camps[k].argument_ids for k in key)]
        regrouped.append(Camp(index=len(regrouped), persona_ids=group, argument_ids=shared,
                              label=_label(group, names)))
    extensions = [c.model_copy(update={"label": camp_label(c.label, c.persona_ids, names)}) for c in camps]
    return regrouped, extensions


def _label(persona_ids: Sequence[str], names: Mapping[str, str]) -> str:
    return ", ".join(names.get(p, p) for p in persona_ids)


_NUMBERED = re.compile(r"^\s*camp \d+\s*:?\s*", re.IGNORECASE)


def camp_label(label: str, persona_ids: Sequence[str], names: Mapping[str, str]) -> str:
    """A camp's label that names its members by display name: an engine's numbered label
    ("camp 2", "camp 1: for 'X'") becomes the members' names, keeping what it says about them.

    >>> names = {"michael-saylor": "Michael Saylor", "arthur-hayes": "Arthur Hayes"}
    >>> camp_label("camp 1: for 'X'", ["michael-saylor"], names)
    "Michael Saylor: for 'X'"
    >>> camp_label("camp 2", ["arthur-hayes"], names), camp_label("michael-saylor", ["michael-saylor"], names)
    ('Arthur Hayes', 'Michael Saylor')
    """
    members = _label(persona_ids, names)
    text = _named(label, names).strip()
    if all(names.get(p, p) in text for p in persona_ids):
        return text or members
    rest = _NUMBERED.sub("", text)
    return f"{members}: {rest}" if rest else members


def tidy_crux(crux: Crux) -> Crux:
    """A crux whose sides are true: a persona named on both sides is named on neither (its
    statements are kept per side, once per persona); if a side is then empty, the crux says
    it cannot tell who holds which side (``sides_known=False``, no sides).

    >>> c = Crux(id="c", statement="s", source="dispute", yes_side=[CruxSide(persona_id="a"), CruxSide(persona_id="b")],
    ...          no_side=[CruxSide(persona_id="b"), CruxSide(persona_id="c")])
    >>> t = tidy_crux(c)
    >>> [s.persona_id for s in t.yes_side], [s.persona_id for s in t.no_side], t.sides_known
    (['a'], ['c'], True)
    >>> tidy_crux(Crux(id="d", statement="s", source="symmetric_difference")).sides_known
    False
    """
    both = {s.persona_id for s in crux.yes_side} & {s.persona_id for s in crux.no_side}
    yes = _dedupe([s for s in crux.yes_side if s.persona_id not in both])
    no = _dedupe([s for s in crux.no_side if s.persona_id not in both])
    if not yes or not no:
        return crux.model_copy(update={"yes_side": [], "no_side": [], "sides_known": False})
    return crux.model_copy(update={"yes_side": yes, "no_side": no, "sides_known": True})


def _dedupe(sides: Sequence[CruxSide]) -> list[CruxSide]:
    """One entry per persona, in order: a persona with several arguments on a side is named
    once, its distinct statements joined.

    >>> [(s.persona_id, s.statement) for s in _dedupe([CruxSide(persona_id="a", statement="X."),
    ...     CruxSide(persona_id="b"), CruxSide(persona_id="a", statement="Y"), CruxSide(persona_id="a", statement="X.")])]
    [('a', 'X.; Y'), ('b', '')]
    """
    said: dict[str, list[str]] = {}
    for s in sides:
        texts = said.setdefault(s.persona_id, [])
        if s.statement and s.statement not in texts:
            texts.append(s.statement)
    return [CruxSide(persona_id=pid, statement="; ".join(texts)) for pid, texts in said.items()]


def cards_agree(card: CruxCard) -> bool:
    """Do the card's personas all hold the same definite position (YES or NO)?"""
    positions = {p.position.value for p in card.personas.values()}
    return len(positions) == 1 and positions <= {"YES", "NO"}


def tidy_card(card: CruxCard) -> CruxCard:
    """A card marked resolved while its positions still differ is not resolved: it stays open,
    and its resolution text (a concession, say) is kept as a note."""
    if card.resolved and not cards_agree(card):
        return card.model_copy(update={"resolved": False})
    return card


def tidy_sides(result: DebateResult, names: Mapping[str, str]) -> None:
    """Apply the guarantees above to ``result`` in place (idempotent)."""
    result.camps, extensions = tidy_camps(result.camps, names)
    if extensions:
        result.extensions = extensions
    result.cruxes = [tidy_crux(c) for c in result.cruxes]
    result.crux_cards = [tidy_card(c) for c in result.crux_cards]


def side_breaks(result: DebateResult, names: Mapping[str, str] | None = None) -> list[str]:
    """What in ``result`` breaks the camp and side properties, one line each (empty: none).
    With ``names`` (persona id -> display name), a camp's label must name its members."""
    out: list[str] = []
    personas = set(result.config.persona_ids)
    seen: dict[str, int] = {}
    for camp in result.camps:
        for pid in camp.persona_ids:
            if pid in seen:
                out.append(f"{pid} is in camps {seen[pid]} and {camp.index}")
            seen[pid] = camp.index
            if pid not in personas:
                out.append(f"camp {camp.index} names {pid}, not a persona of the debate")
        if any(re.search(rf"(?<![\w-]){re.escape(p)}(?![\w-])", camp.label) for p in personas if "-" in p):
            out.append(f"camp {camp.index} is labelled with a persona id: {camp.label!r}")
        if names is not None and not all(names.get(p, p) in camp.label for p in camp.persona_ids):
            out.append(f"camp {camp.index} does not name its members: {camp.label!r}")
    if len(result.camps) > len(personas):
        out.append(f"{len(result.camps)} camps for {len(personas)} personas")
    for crux in result.cruxes:
        yes = {s.persona_id for s in crux.yes_side}
        no = {s.persona_id for s in crux.no_side}
        if yes & no:
            out.append(f"crux {crux.id}: {sorted(yes & no)} on both sides")
        for side in (crux.yes_side, crux.no_side):
            twice = sorted({s.persona_id for s in side if sum(o.persona_id == s.persona_id for o in side) > 1})
            if twice:
                out.append(f"crux {crux.id}: {twice} named twice on one side")
        if crux.sides_known is False:
            if yes or no:
                out.append(f"crux {crux.id}: sides unknown but named")
        elif not yes or not no:
            out.append(f"crux {crux.id}: an empty side and not labelled as unknown")
        if (yes | no) - personas:
            out.append(f"crux {crux.id}: names {sorted((yes | no) - personas)}, not personas of the debate")
    for card in result.crux_cards:
        if card.resolved and not cards_agree(card):
            out.append(f"card {card.id}: resolved while its positions differ")
    return out
