"""Polis check: the workbench's camp and crux analysis on real human votes.

A Polis conversation (data: ``shared/data/polis``, a copy in ``tests/data/polis``; CC BY 4.0,
The Computational Democracy Project) is a participants x comments matrix of agree (+1),
disagree (-1), pass (0) or unseen votes: the shape of a personas x propositions stance
matrix. This module loads it as a :class:`~crux_lab.analysis.alignment.StanceMatrix` and runs
the same functions the engines' alignment matrices use (:func:`find_camps`,
:func:`divisive_statements`, :func:`consensus_statements`); there is no separate path.

Ground truth is Polis's own opinion groups (``group-id`` in ``participants-votes.csv``).
The check reports, per conversation:

- the adjusted Rand index between our camps and Polis's groups, over the participants both
  assigned (Polis leaves participants with few votes ungrouped; we leave out those with fewer
  than ``min(7, n_comments)`` votes, Polis's own threshold); and, as a diagnostic separating
  the choice of k from the partition itself, the ARI with k fixed to Polis's group count;
- divisive statements: ours (with our camps) against those computed from Polis's groups'
  per-group agree rates with the same rule: precision, recall, Jaccard, and overlap of the
  top 10;
- consensus statements (every camp agrees, rate >= 0.6): the same comparison.

Moderated-out comments (``moderated == -1``) are dropped, as Polis's own math does.
"""

from __future__ import annotations

import csv
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from crux_lab.analysis.alignment import (
    Camps,
    StanceMatrix,
    StanceMatrixError,
    consensus_statements,
    divisive_statements,
    find_camps,
)

__all__ = [
    "PolisConversation",
    "PolisDataError",
    "PolisReport",
    "StatementOverlap",
    "evaluate_conversation",
    "list_conversations",
    "load_conversation",
    "polis_groups",
]

POLIS_MIN_VOTES = 7  # Polis clusters only participants with at least this many votes
TOP_N = 10


class PolisDataError(ValueError):
    """A Polis export file is missing or malformed (message names file, field and fix)."""


@dataclass(frozen=True)
class PolisConversation:
    """One loaded conversation: the stance matrix plus Polis's own group per participant."""

    name: str
    topic: str
    matrix: StanceMatrix
    group_ids: np.ndarray  # Polis group per row, -1 = ungrouped by Polis
    n_comments_total: int
    n_moderated_out: int


def list_conversations(root: Path) -> list[Path]:
    """Conversation folders under ``root`` (those holding ``participants-votes.csv``)."""
    if not root.is_dir():
        raise PolisDataError(f"{root}: not a folder; point at the Polis data folder.")
    return sorted(p for p in root.iterdir() if (p / "participants-votes.csv").is_file())


def _read_csv(path: Path) -> list[dict[str, str]]:
    """The rows of a Polis CSV file, each with its line number under ``"__line__"`` (where the
    row starts). A missing file, an empty one, bytes that are not UTF-8 or a row whose field count
    differs from the header's raise :class:`PolisDataError` naming the file and the line."""
    if not path.is_file():
        raise PolisDataError(
            f"{path}: file missing; a Polis conversation folder needs participants-votes.csv (each participant's "
            "latest votes; the raw votes.csv log is not read) and comments.csv (export them from Polis or copy "
            "the conversation folder whole)."
        )
    rows: list[dict[str, str]] = []
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if not header:
                raise PolisDataError(f"{path}: line 1: no header; use an unmodified Polis export.")
            start = reader.line_num + 1
            for record in reader:
                if record and len(record) != len(header):
                    raise PolisDataError(
                        f"{path}: line {start}: {len(record)} field(s) where the header has {len(header)}; "
                        "fix or remove the row (an unmodified Polis export has none like it)."
                    )
                if record:
                    rows.append({**dict(zip(header, record, strict=True)), "__line__": str(start)})
                start = reader.line_num + 1
    except UnicodeDecodeError as exc:
        raise PolisDataError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); use an unmodified Polis export.") from None
    except csv.Error as exc:
        raise PolisDataError(f"{path}: line {start}: {exc}; fix the quoting of that row.") from None
    return rows


def _summary_topic(folder: Path) -> str:
    path = folder / "summary.csv"
    if not path.is_file():
        return folder.name
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.reader(fh):
            if len(row) >= 2 and row[0] == "topic":
                return row[1]
    return folder.name


def load_conversation(folder: Path, *, include_moderated_out: bool = False) -> PolisConversation:
    """Load a conversation folder as a participants x comments stance matrix.

    Rows are participants (label = participant id), columns comment ids (texts from
    ``comments.csv``); empty cells (comment not seen / not voted) are NaN. A missing file or
    column, or a malformed row (wrong field count, a comment id that is not a number, a
    ``moderated`` or vote value Polis never writes), raises one :class:`PolisDataError` naming the
    file and the line.
    """
    folder = Path(folder)
    comments = _read_csv(folder / "comments.csv")
    votes_path = folder / "participants-votes.csv"
    rows = _read_csv(votes_path)
    for field_name in ("comment-id", "moderated", "comment-body"):
        if comments and field_name not in comments[0]:
            raise PolisDataError(
                f"{folder / 'comments.csv'}: column {field_name!r} missing; use an unmodified "
                "Polis export."
            )
    comments_path = folder / "comments.csv"
    for c in comments:
        if not c["comment-id"].strip().isdigit():
            raise PolisDataError(
                f"{comments_path}: line {c['__line__']}: field 'comment-id' is {c['comment-id']!r}; expected a "
                "whole number."
            )
        if c["moderated"].strip() not in ("-1", "0", "1"):
            raise PolisDataError(
                f"{comments_path}: line {c['__line__']}: field 'moderated' is {c['moderated']!r}; expected -1, 0 or 1."
            )
    text_of = {c["comment-id"].strip(): c["comment-body"] for c in comments}
    moderated_out = {c["comment-id"].strip() for c in comments if c["moderated"].strip() == "-1"}
    if not rows:
        raise PolisDataError(f"{votes_path}: no participants.")
    header = [h for h in rows[0] if h != "__line__"]
    for field_name in ("participant", "group-id"):
        if field_name not in header:
            raise PolisDataError(
                f"{votes_path}: column {field_name!r} missing; use an unmodified Polis export."
            )
    comment_cols = [h for h in header if h.isdigit()]
    if not include_moderated_out:
        comment_cols = [c for c in comment_cols if c not in moderated_out]
    values = np.full((len(rows), len(comment_cols)), np.nan)
    groups = np.full(len(rows), -1, dtype=np.int64)
    for i, row in enumerate(rows):
        line = row["__line__"]
        gid = (row.get("group-id") or "").strip()
        if gid:
            try:
                groups[i] = int(float(gid))
            except ValueError as exc:
                raise PolisDataError(
                    f"{votes_path}: line {line}, field 'group-id' is {gid!r}; expected an "
                    "integer or empty."
                ) from exc
        for j, col in enumerate(comment_cols):
            cell = (row.get(col) or "").strip()
            if not cell:
                continue
            try:
                vote = float(cell)
            except ValueError as exc:
                raise PolisDataError(
                    f"{votes_path}: line {line}, comment column {col!r} holds {cell!r}; "
                    "expected 1, -1, 0 or empty."
                ) from exc
            if vote not in (1.0, -1.0, 0.0):
                raise PolisDataError(
                    f"{votes_path}: line {line}, comment column {col!r} holds {cell!r}; "
                    "expected 1, -1, 0 or empty."
                )
            values[i, j] = vote
    try:
        matrix = StanceMatrix(
            values,
            tuple(r["participant"] for r in rows),
            tuple(comment_cols),
            col_texts=tuple(text_of.get(c, "") for c in comment_cols),
        )
    except StanceMatrixError as exc:
        raise PolisDataError(f"{votes_path}: {exc}") from exc
    return PolisConversation(
        name=folder.name,
        topic=_summary_topic(folder),
        matrix=matrix,
        group_ids=groups,
        n_comments_total=len(comments),
        n_moderated_out=len(moderated_out),
    )


def polis_groups(conv: PolisConversation) -> Camps:
    """Polis's own groups as a :class:`Camps` over the same rows (ungrouped = -1)."""
    ids = sorted(int(g) for g in set(conv.group_ids.tolist()) if g >= 0)
    remap = {g: i for i, g in enumerate(ids)}
    assignment = np.array([remap.get(int(g), -1) for g in conv.group_ids], dtype=np.int64)
    return Camps(conv.matrix.row_labels, assignment, len(ids), None, method="polis group-id")


@dataclass(frozen=True)
class StatementOverlap:
    """Our statement set against the set computed from Polis's groups with the same rule."""

    ours: int
    polis: int
    both: int
    precision: float
    recall: float
    jaccard: float
    top_overlap: float  # |our top N  &  Polis top N| / N (N = min(TOP_N, sizes))

    @classmethod
    def of(cls, ours: list[str], polis: list[str], top: int = TOP_N) -> StatementOverlap:
        a, b = set(ours), set(polis)
        both = len(a & b)
        n = min(top, len(ours), len(polis))
        top_both = len(set(ours[:n]) & set(polis[:n])) if n else 0
        return cls(
            ours=len(a),
            polis=len(b),
            both=both,
            precision=both / len(a) if a else math.nan,
            recall=both / len(b) if b else math.nan,
            jaccard=both / len(a | b) if a | b else math.nan,
            top_overlap=top_both / n if n else math.nan,
        )


@dataclass(frozen=True)
class PolisReport:
    """The check's result for one conversation."""

    conversation: str
    participants: int
    comments: int
    votes: int
    density: float
    polis_groups: int
    our_camps: int
    silhouette: float | None
    ari: float
    ari_participants: int
    ari_at_polis_k: float  # diagnostic: ARI when k is fixed to Polis's number of groups
    divisive: StatementOverlap
    consensus: StatementOverlap

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def evaluate_conversation(
    conv: PolisConversation,
    *,
    k: int | None = None,
    min_votes_per_camp: int = 3,
    min_divisiveness: float = 0.5,
    min_agree_rate: float = 0.6,
    seed: int = 0,
) -> PolisReport:
    """Run the camp/crux analysis on one conversation and compare it with Polis's groups."""
    from sklearn.metrics import adjusted_rand_score

    m = conv.matrix
    min_votes = min(POLIS_MIN_VOTES, m.shape[1])
    ours = find_camps(m, k=k, min_votes=min_votes, seed=seed)
    truth = polis_groups(conv)
    both = (ours.assignment >= 0) & (truth.assignment >= 0)
    ari = (
        float(adjusted_rand_score(truth.assignment[both], ours.assignment[both]))
        if both.sum() >= 2
        else math.nan
    )

    def labels_div(camps: Camps) -> list[str]:
        return [
            s.label
            for s in divisive_statements(
                m,
                camps,
                min_divisiveness=min_divisiveness,
                min_votes_per_camp=min_votes_per_camp,
            )
        ]

    def labels_cons(camps: Camps) -> list[str]:
        return [
            s.label
            for s in consensus_statements(
                m, camps, min_agree_rate=min_agree_rate, min_votes_per_camp=min_votes_per_camp
            )
        ]

    ari_fixed_k = math.nan
    if k is None and truth.k >= 2 and truth.k != ours.k:
        fixed = find_camps(m, k=truth.k, min_votes=min_votes, seed=seed)
        both_fixed = (fixed.assignment >= 0) & (truth.assignment >= 0)
        if both_fixed.sum() >= 2:
            ari_fixed_k = float(
                adjusted_rand_score(truth.assignment[both_fixed], fixed.assignment[both_fixed])
            )
    elif truth.k == ours.k:
        ari_fixed_k = ari

    n_votes = int(m.observed.sum())
    return PolisReport(
        conversation=conv.name,
        participants=m.shape[0],
        comments=m.shape[1],
        votes=n_votes,
        density=n_votes / max(m.shape[0] * m.shape[1], 1),
        polis_groups=truth.k,
        our_camps=ours.k,
        silhouette=ours.silhouette,
        ari=ari,
        ari_participants=int(both.sum()),
        ari_at_polis_k=ari_fixed_k,
        divisive=StatementOverlap.of(labels_div(ours), labels_div(truth)),
        consensus=StatementOverlap.of(labels_cons(ours), labels_cons(truth)),
    )
