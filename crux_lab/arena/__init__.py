"""``crux-lab arena``: a blind pairwise judge of engines' crux cards (see :mod:`crux_lab.arena.core`)."""

from crux_lab.arena.core import (
    RUBRIC,
    ArenaError,
    CardSet,
    Judgement,
    Scores,
    bradley_terry,
    bt_with_bootstrap,
    judge_pair,
    load_card_sets,
    pair_runs,
)

__all__ = [
    "RUBRIC",
    "ArenaError",
    "CardSet",
    "Judgement",
    "Scores",
    "bradley_terry",
    "bt_with_bootstrap",
    "judge_pair",
    "load_card_sets",
    "pair_runs",
]
