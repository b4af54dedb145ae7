"""Polis conversations as ground truth for crux finding: definitions, personas, scores.

A Polis conversation (:mod:`crux_lab.analysis.polis` loads it) holds participants' agree /
disagree / pass votes on short statements that participants wrote, and Polis's own opinion
group per participant (``group-id``). Everything here is computed **from the votes alone**
(no model, no text judgement), with Polis's own statistics where they exist
(``polismath/math/repness.clj``), as the red-dwarf library ports them (PyPI ``red-dwarf``, from
the Polis community: its one- and two-proportion tests and smoothed probability; on every
vendored conversation its counts, tests, representativeness and group-aware consensus equal the
ones crux_lab computed by hand before, ``benchmarks/polis_reddwarf.py``). The selection rules
below (divisive statements, the minds, group-informed consensus) are crux_lab's own: they differ
from red-dwarf's Polis-report selections on purpose (``benchmarks/README.md``, "red-dwarf"):

For opinion group ``g`` and statement ``c``: ``A`` agrees, ``D`` disagrees, ``S`` votes seen
(agree + disagree + pass) among the group's members; the agree rate is ``A / S``; Polis's
smoothed probabilities ``pa = (A + 1) / (S + 2)``, ``pd = (D + 1) / (S + 2)``; Polis's
one-proportion test :func:`prop_test` and two-proportion test :func:`two_prop_test`, read at
Polis's 90% level (``z > 1.2816``, :data:`Z90`).

- **Divisive statements** (the empirical cruxes): every group has at least ``min_votes``
  votes on the statement (default 5); divisiveness = the largest minus the smallest group
  agree rate; the difference must be significant by Polis's two-proportion test between those
  two groups (``z > 1.2816``) and at least ``min_difference`` (default 0.25); a consensus
  statement (below) is never divisive, however unequal the groups' majorities. Ranked by
  divisiveness (ties by statement id); the top ``k`` (default 5) are the ones recall is
  measured on.
- **Consensus statements** (real common ground): Polis's group-informed consensus. Every group
  has at least ``min_votes`` votes and clearly agrees by Polis's own consensus rule applied per
  group (``pa > 0.5`` and ``prop_test(A, S) > 1.2816``); ranked by group-informed consensus,
  the product over groups of ``pa``.
- **A group's mind** (what its persona holds): the statements the group clearly agrees or
  disagrees with (``pa`` or ``pd`` > 0.5 with its one-proportion test significant at 90%,
  at least ``min_votes`` votes), most representative first by Polis's repness metric
  ``ra * rat * pa * pat`` (``ra = pa / pa(rest)``, ``rat`` the two-proportion test against the
  other groups pooled), of which the ``per_group`` most representative that also pass Polis's
  repness test (``rat > 1.2816``), plus the ``n_consensus`` strongest consensus statements.
  A group with fewer than ``min_clear`` such statements gets no persona (it is named and
  skipped, never filled with invented statements).

Each persona is a labelled synthetic archetype ("opinion group 1 of Polis conversation X"):
its corpus is its group's statements verbatim, marked ``quote`` with the statement id, the
conversation and the licence as the source (participants' own words, CC BY 4.0, The
Computational Democracy Project); its stance reasons state only vote counts. The debate deck
holds every statement of any persona's mind, and each persona's stance on it is its group's
vote (``uncertain`` where the group is not clear).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import warnings
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from crux_lab.analysis.alignment import CampVotes, camp_votes
from crux_lab.analysis.metrics import _content_words
from crux_lab.analysis.polis import PolisConversation, PolisDataError, polis_groups

__all__ = [
    "Z90",
    "GroupMind",
    "GroupStats",
    "MindStance",
    "PolisTruth",
    "debate_topic",
    "group_minds",
    "ground_truth",
    "persona_id",
    "prop_test",
    "two_prop_test",
    "write_polis_library",
]

Z90 = 1.2816  # Polis's z-sig-90
LICENCE = "CC BY 4.0, The Computational Democracy Project (Polis open data)"


@functools.cache
def _reddwarf_stats() -> Any:
    """red-dwarf's port of Polis's statistics (``reddwarf.utils.stats``), loaded on first use
    (it brings pandas and scipy) and without the pydantic warning its import prints."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            from reddwarf.utils import stats
        except ImportError as exc:
            raise RuntimeError(
                f"red-dwarf is not installed ({exc}); crux_lab lists it in pyproject.toml: run `make setup` "
                "(or pip install red-dwarf)."
            ) from None
    return stats


def prop_test(succ: int, n: int) -> float:
    """Polis's one-proportion test of ``succ`` out of ``n`` against 1/2 (with +1 smoothing):
    red-dwarf's ``one_prop_test``.

    >>> round(prop_test(9, 10), 3)
    2.714
    >>> prop_test(0, 0) < Z90  # no votes: never significant
    True
    """
    return float(_reddwarf_stats().one_prop_test(succ, n))


def two_prop_test(succ1: int, n1: int, succ2: int, n2: int) -> float:
    """Polis's two-proportion z test (each count +1), positive when group 1's share is higher:
    red-dwarf's ``two_prop_test`` (which takes the successes first, then the totals).

    >>> round(two_prop_test(9, 10, 2, 10), 2)
    3.04
    >>> two_prop_test(5, 5, 5, 5)
    0.0
    """
    return float(_reddwarf_stats().two_prop_test(succ1, succ2, n1, n2))


def probability(succ: int, n: int) -> float:
    """Polis's smoothed probability ``(succ + 1) / (n + 2)``: red-dwarf's ``probability``.

    >>> probability(3, 4)
    0.6666666666666666
    """
    return float(_reddwarf_stats().probability(succ, n))


@dataclass(frozen=True)
class GroupStats:
    """One group's votes on one statement, with Polis's smoothed rates and tests."""

    group: int  # Polis's group-id
    agree: int
    disagree: int
    seen: int

    @property
    def agree_rate(self) -> float:
        return self.agree / self.seen if self.seen else math.nan

    @property
    def pa(self) -> float:
        return probability(self.agree, self.seen)

    @property
    def pd(self) -> float:
        return probability(self.disagree, self.seen)


@dataclass(frozen=True)
class Statement:
    """A statement with every group's votes, and its divisiveness (nan if not measurable)."""

    id: str
    text: str
    groups: tuple[GroupStats, ...]
    divisiveness: float
    significant: bool
    consensus: float  # group-informed consensus: product of pa over groups

    def rate(self, group: int) -> float:
        return next(g.agree_rate for g in self.groups if g.group == group)


@dataclass(frozen=True)
class PolisTruth:
    """The ground truth of one conversation (see the module docstring)."""

    conversation: str
    topic: str
    url: str
    groups: tuple[int, ...]  # Polis group-ids
    group_sizes: dict[int, int]
    statements: dict[str, Statement]
    divisive: tuple[str, ...]  # every qualifying statement id, most divisive first
    consensus: tuple[str, ...]  # most consensual first
    k: int
    min_votes: int
    min_difference: float

    @property
    def top_divisive(self) -> tuple[str, ...]:
        return self.divisive[: self.k]

    def thresholds(self) -> dict[str, float]:
        return {"k": self.k, "min_votes": self.min_votes, "min_difference": self.min_difference, "z": Z90}


def _stats(conv: PolisConversation) -> tuple[list[int], list[tuple[GroupStats, ...]]]:
    camps = polis_groups(conv)
    ids = sorted(int(g) for g in set(conv.group_ids.tolist()) if g >= 0)
    per_statement: list[tuple[GroupStats, ...]] = []
    for votes in camp_votes(conv.matrix, camps):
        per_statement.append(tuple(_group_stat(ids[v.camp], v) for v in votes))
    return ids, per_statement


def _group_stat(group: int, v: CampVotes) -> GroupStats:
    return GroupStats(group, v.agree, v.disagree, v.n_votes)


def ground_truth(
    conv: PolisConversation,
    *,
    k: int = 5,
    min_votes: int = 5,
    min_difference: float = 0.25,
    url: str = "",
    votes_file: str | Path | None = None,
) -> PolisTruth:
    """Divisive and consensus statements of ``conv`` from the votes alone (module docstring).

    Raises :class:`PolisDataError` naming ``participants-votes.csv`` when the conversation has
    fewer than two opinion groups or no statement with ``min_votes`` votes in every group.
    """
    votes_file = votes_file or f"{conv.name}/participants-votes.csv"
    ids, per_statement = _stats(conv)
    if len(ids) < 2:
        found = f"only group {ids[0]}" if ids else "no group at all"
        raise PolisDataError(
            f"{votes_file}: field 'group-id' has {found}; crux ground truth needs at least two "
            "opinion groups (use a conversation Polis split into groups)."
        )
    sizes = {g: int((conv.group_ids == g).sum()) for g in ids}
    statements: dict[str, Statement] = {}
    for j, groups in enumerate(per_statement):
        sid = conv.matrix.col_labels[j]
        text = conv.matrix.col_texts[j] if conv.matrix.col_texts is not None else ""
        enough = all(g.seen >= min_votes for g in groups)
        div, sig = math.nan, False
        if enough:
            hi = max(groups, key=lambda g: (g.agree_rate, -g.group))
            lo = min(groups, key=lambda g: (g.agree_rate, g.group))
            div = hi.agree_rate - lo.agree_rate
            sig = two_prop_test(hi.agree, hi.seen, lo.agree, lo.seen) > Z90
        gic = float(np.prod([g.pa for g in groups]))
        statements[sid] = Statement(sid, text, groups, div, sig, gic)
    measurable = [s for s in statements.values() if not math.isnan(s.divisiveness)]
    if not measurable:
        smallest = min(sizes, key=lambda g: sizes[g])
        raise PolisDataError(
            f"{votes_file}: too few votes; no statement has {min_votes} votes in every opinion group "
            f"(group {smallest} has {sizes[smallest]} participant(s)); lower --min-votes or use a "
            "larger conversation."
        )
    consensus = sorted(
        (s for s in measurable if all(g.pa > 0.5 and prop_test(g.agree, g.seen) > Z90 for g in s.groups)),
        key=lambda s: (-s.consensus, _num(s.id)),
    )
    common = {s.id for s in consensus}
    divisive = sorted(
        (s for s in measurable if s.significant and s.divisiveness >= min_difference and s.id not in common),
        key=lambda s: (-s.divisiveness, _num(s.id)),
    )
    return PolisTruth(
        conversation=conv.name, topic=conv.topic, url=url, groups=tuple(ids), group_sizes=sizes,
        statements=statements, divisive=tuple(s.id for s in divisive),
        consensus=tuple(s.id for s in consensus), k=k, min_votes=min_votes, min_difference=min_difference,
    )


def _num(sid: str) -> tuple[int, str]:
    return (int(sid), sid) if sid.isdigit() else (10**9, sid)


# ---------------------------------------------------------------------------
# One persona per opinion group
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MindStance:
    statement: str
    stance: str  # "pro" | "con"
    rate: float  # the group's agree rate (pro) or disagree rate (con)
    votes: int
    repness: float


@dataclass(frozen=True)
class GroupMind:
    group: int
    persona_id: str
    size: int
    stances: tuple[MindStance, ...]


def slug(name: str) -> str:
    """A persona-id-safe form of a conversation name.

    >>> slug("london.youth.policing")
    'london-youth-policing'
    """
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "conversation"


def persona_id(conversation: str, group: int) -> str:
    """The persona id of one opinion group of a conversation.

    >>> persona_id("15-per-hour-seattle", 1)
    'polis-15-per-hour-seattle-g1'
    """
    return f"polis-{slug(conversation)}-g{group}"


def _clear(g: GroupStats, min_votes: int) -> str | None:
    if g.seen < min_votes:
        return None
    if g.pa > 0.5 and prop_test(g.agree, g.seen) > Z90:
        return "pro"
    if g.pd > 0.5 and prop_test(g.disagree, g.seen) > Z90:
        return "con"
    return None


def _repness(s: Statement, group: int, stance: str) -> tuple[float, float]:
    """Polis's repness metric ``ra * rat * pa * pat`` (or its disagree form) and ``rat``."""
    me = next(g for g in s.groups if g.group == group)
    rest = [g for g in s.groups if g.group != group]
    succ = me.agree if stance == "pro" else me.disagree
    rest_succ = sum(g.agree if stance == "pro" else g.disagree for g in rest)
    rest_seen = sum(g.seen for g in rest)
    p = probability(succ, me.seen)
    p_rest = probability(rest_succ, rest_seen)
    rat = two_prop_test(succ, me.seen, rest_succ, rest_seen)
    return (p / p_rest) * rat * p * prop_test(succ, me.seen), rat


def group_minds(
    truth: PolisTruth,
    *,
    per_group: int = 5,
    n_consensus: int = 2,
    min_clear: int = 3,
    exclude: Collection[str] = frozenset(),
) -> tuple[list[GroupMind], list[str]]:
    """Each group's mind (module docstring), and one note per group skipped for having fewer
    than ``min_clear`` clear statements. No mind holds a statement of ``exclude`` (the held-out
    statements, :mod:`crux_lab.analysis.polis_heldout`); the consensus statements a mind holds
    are then the strongest ones not excluded."""
    minds: list[GroupMind] = []
    notes: list[str] = []
    common = [sid for sid in truth.consensus if sid not in exclude][:n_consensus]
    for group in truth.groups:
        ranked: list[MindStance] = []
        for s in truth.statements.values():
            me = next(g for g in s.groups if g.group == group)
            stance = _clear(me, truth.min_votes)
            if stance is None or s.id in common or s.id in exclude:
                continue
            rep, rat = _repness(s, group, stance)
            if rat <= Z90:
                continue
            rate = me.agree / me.seen if stance == "pro" else me.disagree / me.seen
            ranked.append(MindStance(s.id, stance, rate, me.seen, rep))
        ranked.sort(key=lambda m: (-m.repness, _num(m.statement)))
        chosen = ranked[:per_group]
        for sid in common:
            me = next(g for g in truth.statements[sid].groups if g.group == group)
            chosen.append(MindStance(sid, "pro", me.agree / me.seen, me.seen, math.nan))
        if len(chosen) < min_clear:
            notes.append(
                f"opinion group {group} of {truth.conversation} ({truth.group_sizes[group]} participants) "
                f"has {len(chosen)} clear statement(s), fewer than {min_clear}: no persona for it."
            )
            continue
        minds.append(GroupMind(group, persona_id(truth.conversation, group), truth.group_sizes[group], tuple(chosen)))
    return minds, notes


def debate_topic(conv: PolisConversation, description: str = "") -> str:
    """The conversation's topic, followed by the description's first sentence when that is a
    question (Polis topics are often a few words: "$15/hour").

    >>> from crux_lab.analysis.alignment import alignment_matrix
    >>> conv = PolisConversation("x", "$15/hour", alignment_matrix({"a": {"p": 1}}), np.array([0]), 1, 0)
    >>> debate_topic(conv, "How will it affect Seattle? Will it be better?")
    '$15/hour: How will it affect Seattle?'
    >>> debate_topic(conv, "An experiment.")
    '$15/hour'
    """
    first = re.split(r"(?<=[.!?])\s+", description.strip(), maxsplit=1)[0].strip() if description.strip() else ""
    if first.endswith("?") and len(first) <= 200 and first.lower() != conv.topic.lower():
        return f"{conv.topic.rstrip(':?. ')}: {first}"
    return conv.topic


# ---------------------------------------------------------------------------
# Writing the personas as a persona library (the formats of data/personas/)
# ---------------------------------------------------------------------------


def _keywords(text: str, n: int = 4) -> list[str]:
    return list(dict.fromkeys(_content_words(text)))[:n]


def _source(truth: PolisTruth, m: MindStance, group: int) -> str:
    where = f" ({truth.url})" if truth.url else ""
    verb = "agreed" if m.stance == "pro" else "disagreed"
    return (
        f"Polis conversation {truth.conversation}{where}, statement {m.statement}: written by a participant "
        f"(their own words, verbatim); opinion group {group} {verb} ({m.rate:.0%} of {m.votes} votes); {LICENCE}"
    )


def _views(truth: PolisTruth, mind: GroupMind) -> str:
    """The group's clear votes, one line each, with the statements in quotation marks."""
    lines = []
    for m in mind.stances:
        verb = "Agrees" if m.stance == "pro" else "Does not agree"
        lines.append(f"{verb} with \"{truth.statements[m.statement].text.strip()}\" ({m.rate:.0%} of {m.votes} votes).")
    return "\n".join(lines)


def _stance_row(truth: PolisTruth, s: Statement, group: int, mind: dict[str, MindStance], prefix: str) -> dict[str, object]:
    """The persona's stance on one deck statement; ``prefix`` is the persona id."""
    me = next(g for g in s.groups if g.group == group)
    chunk = f"{prefix}-s{s.id}"
    if s.id in mind:
        m = mind[s.id]
        verb = "agreed" if m.stance == "pro" else "disagreed"
        reason = f"{m.rate:.0%} of the {m.votes} votes of opinion group {group} {verb} with statement {s.id}."
        stance, conf = m.stance, round(me.pa if m.stance == "pro" else me.pd, 3)
        nodes, grounding = [f"{prefix}-n{s.id}"], [chunk]
    else:
        stance, conf, nodes, grounding = "uncertain", 0.5, [], []
        if me.seen:
            reason = (f"Opinion group {group} is not clear on statement {s.id}: {me.agree / me.seen:.0%} agree, "
                      f"{me.disagree / me.seen:.0%} disagree of {me.seen} votes.")
        else:
            reason = f"Opinion group {group} did not vote on statement {s.id}."
    return {"propositionId": f"{_deck_prefix(truth)}.s{s.id}", "stance": stance, "confidence": conf, "reason": reason,
            "flipConditions": [], "disagreementType": None, "beliefNodeIds": nodes, "grounding": grounding}


def _persona_files(truth: PolisTruth, mind: GroupMind, deck_ids: Sequence[str], prefix: str) -> dict[str, object]:
    held = {m.statement: m for m in mind.stances}
    chunks = [{"id": f"{prefix}-s{m.statement}", "text": truth.statements[m.statement].text,
               "source": _source(truth, m, mind.group), "date": "", "kind": "quote"} for m in mind.stances]
    nodes = [{"id": f"{prefix}-n{m.statement}",
              "concept": truth.statements[m.statement].text if m.stance == "pro"
              else f"Rejects the statement: {truth.statements[m.statement].text}",
              "type": "assumption", "confidence": round(m.rate, 3), "grounding": [f"{prefix}-s{m.statement}"]}
             for m in mind.stances]
    stances = [_stance_row(truth, truth.statements[sid], mind.group, held, prefix) for sid in deck_ids]
    label = f"Opinion group {mind.group} of Polis conversation {truth.conversation}"
    contract = {
        "personaId": mind.persona_id, "name": label, "handle": "", "kind": "synthetic", "version": "polis",
        "personality": (f"A labelled synthetic archetype standing for the {mind.size} participants Polis placed in "
                        f"opinion group {mind.group} of the conversation {truth.topic!r}. It holds what the group's "
                        "votes say, and nothing more; the statements are participants' own words.\n" + _views(truth, mind)),
        "bias": "Holds its group's majority vote on each statement it knows; has no view beyond them.",
        "stakes": f"Speaks for opinion group {mind.group} ({mind.size} participants).",
        "epistemology": "Only the group's votes on participants' statements (agree, disagree, pass).",
        "timeHorizon": "Not stated by the votes.",
        "flipConditions": "Not recorded: votes do not say what would change a participant's mind.",
        "evidencePolicy": {"accepts": ["the group's votes"], "rejects": [], "weighting": ""},
        "anchorExcerpts": [{k: c[k] for k in ("text", "source", "date", "kind")}
                           for c, m in zip(chunks, mind.stances, strict=True) if m.stance == "pro"][:3],
    }
    voice = {"speechPatterns": ["Says whether its group agrees or disagrees, in the participants' words"],
             "vocabulary": [], "forbiddenPhrases": [], "voiceExamples": [], "rhetoricalFingerprint": []}
    return {
        "contract.json": contract, "voice.json": voice,
        "stances.json": {"personaId": mind.persona_id, "stances": stances},
        "beliefs.json": {"personaId": mind.persona_id, "nodes": nodes, "edges": [], "extractedAt": "polis",
                         "contradictions": []},
        "corpus.jsonl": chunks,
    }


def _deck_prefix(truth: PolisTruth) -> str:
    return f"polis-{slug(truth.conversation)}"


@dataclass
class PolisLibrary:
    """A written persona library for one conversation (runtime)."""

    root: Path
    deck_id: str  # carries a digest of the personas' content, so run ids change with it
    topic: str
    persona_ids: tuple[str, ...]
    persona_group: dict[str, int]  # persona id -> Polis group-id
    proposition_statement: dict[str, str] = field(default_factory=dict)  # deck proposition id -> statement id


def write_polis_library(
    truth: PolisTruth, minds: Sequence[GroupMind], root: str | Path, *, topic: str,
    votes_file: str | Path | None = None,
) -> PolisLibrary:
    """Write the minds as a persona library folder (``root``, created) with one deck holding
    every statement of any mind; return what a debate needs to use it."""
    if len(minds) < 2:
        raise PolisDataError(
            f"{votes_file or truth.conversation + '/participants-votes.csv'}: only {len(minds)} opinion group(s) have enough clear "
            "statements for a persona; a debate needs two (lower --min-votes, or use another conversation)."
        )
    prefix = _deck_prefix(truth)
    deck_ids = sorted({m.statement for mind in minds for m in mind.stances}, key=_num)
    files = {mind.persona_id: _persona_files(truth, mind, deck_ids, mind.persona_id) for mind in minds}
    digest = hashlib.sha256(json.dumps([topic, files], sort_keys=True).encode()).hexdigest()[:8]
    deck_id = f"{prefix}-{digest}"
    propositions = [
        {"id": f"{prefix}.s{sid}", "text": truth.statements[sid].text,
         "question": f"Do you agree with the statement \"{truth.statements[sid].text.strip().rstrip('.?!')}\"?",
         "keywords": _keywords(truth.statements[sid].text), "aspect": "", "disagreementType": None}
        for sid in deck_ids
    ]
    deck = {"id": deck_id, "name": f"Polis conversation {truth.conversation}",
            "description": (f"One labelled synthetic persona per Polis opinion group of {truth.conversation}; "
                            f"statements are participants' own words ({LICENCE})."),
            "personaIds": [m.persona_id for m in minds], "topics": [topic], "propositions": propositions}
    out = Path(root)
    out.mkdir(parents=True, exist_ok=True)
    for pid, persona in files.items():
        folder = out / pid
        folder.mkdir(exist_ok=True)
        for name, data in persona.items():
            if name.endswith(".jsonl"):
                text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in data)  # type: ignore[attr-defined]
            else:
                text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
            (folder / name).write_text(text, encoding="utf-8")
    (out / "decks.json").write_text(json.dumps({"decks": [deck]}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return PolisLibrary(
        root=out, deck_id=deck_id, topic=topic, persona_ids=tuple(m.persona_id for m in minds),
        persona_group={m.persona_id: m.group for m in minds},
        proposition_statement={f"{prefix}.s{sid}": sid for sid in deck_ids},
    )

