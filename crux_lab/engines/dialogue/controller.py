"""The moderator of the dialogue engines: turn-taking, steering hints, crystallization triggers,
phases.

The controller is a moderator, not an optimizer. It alternates speakers (bringing in anyone
silent for ``fairness_gap`` turns), steers only in a few situations (a point left unanswered,
after a concession or a reframe, circling, a stuck crux search), decides when to crystallize,
and moves the debate through the four phases on a stable frontier, the turn budget, or a
crux proposed and acknowledged.
It never calls an LLM; circling is detected by embedding similarity of recent turns.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from crux_lab.models.domain import DialogueTurn, Move

PHASE_NAMES: dict[int, str] = {1: "opening", 2: "free_exchange", 3: "crux_seeking", 4: "resolution"}
PHASE_TITLES: dict[int, str] = {
    1: "Opening statements",
    2: "Free exchange",
    3: "Crux seeking",
    4: "Resolution",
}

# Moves that carry substance worth formalizing (CLARIFY narrows meaning but adds no position).
SUBSTANTIVE = frozenset({Move.CLAIM, Move.CHALLENGE, Move.CONCEDE, Move.REFRAME, Move.PROPOSE_CRUX})

Encoder = Callable[[Sequence[str]], np.ndarray]
"""Texts -> L2-normalised embeddings, one row per text (``get_embedder().encode``)."""


@dataclass(frozen=True)
class ControllerSettings:
    max_turns: int = 30
    crystallize_every: int = 5  # safety net: crystallize after this many turns regardless
    substantive_gap: int = 4  # min turns since the last crystallization for an exchange trigger
    circling_threshold: float = 0.9
    circling_window: int = 6
    fairness_gap: int = 3
    crux_budget: float = 0.6
    resolution_budget: float = 0.85
    stable_crystallizations: int = 3
    post_concession_steering: bool = True


@dataclass(frozen=True)
class SteeringDecision:
    hint: str
    situation: str  # circling | crux_seeking | after_concession | after_reframe | one_sided | stuck


_LEAD_INS = (
    "the real question is",
    "i think the core disagreement is",
    "the core disagreement is",
    "i'll grant part of that on",
    "i'll grant that",
    "to be precise about",
    "to be precise:",
    "beyond that,",
    "my answer:",
    "i disagree:",
)


def gist(text: str, words: int = 12) -> str:
    """A short handle for what a turn was about: its first clause, without a lead-in such as
    "The real question is", at most ``words`` words (for the moderator to quote).

    >>> gist("The real question is does proof of work secure the chain? It does.")
    'does proof of work secure the chain'

    >>> gist("Bitcoin's fixed supply makes it deflationary by design. Also more.")
    "Bitcoin's fixed supply makes it deflationary by design"
    >>> gist("I disagree: supply is fixed. Because.")
    'supply is fixed'
    >>> gist("Hurdle rate. I disagree: treasuries should hold it. More.")
    'treasuries should hold it'
    >>> gist("one two three four five", words=3)
    'one two three…'
    """
    sentences = [x for x in re.split(r"(?<=[.?!])\s+", text.strip()) if x.strip()]
    while len(sentences) > 1 and len(sentences[0].split()) <= 3:
        sentences.pop(0)  # a verbal tic ("Fiat.", "Hurdle rate.") says nothing about the point
    first = (sentences[0] if sentences else "").rstrip(".?! ")
    head, sep, rest = first.partition(": ")
    if sep and len(head.split()) <= 4 and rest:
        first = rest  # "I disagree: X" is about X
    low = first.lower()
    for lead in _LEAD_INS:
        if low.startswith(lead) and len(first) > len(lead) + 3:
            first = first[len(lead) :].lstrip(" :,")
            break
    parts = first.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


def quote(text: str) -> str:
    """A turn's gist in quotation marks, as the moderator cites it.

    >>> quote("The real question is does proof of work secure the chain? It does.")
    '"Does proof of work secure the chain"'
    """
    g = gist(text)
    return f'"{g[:1].upper()}{g[1:]}"'


def repeated_pairs(vectors: np.ndarray, speakers: Sequence[str], threshold: float) -> int:
    """Number of same-speaker turn pairs whose cosine similarity reaches ``threshold``.

    >>> v = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    >>> repeated_pairs(v, ["a", "b", "a", "b"], 0.9)
    2
    >>> repeated_pairs(v, ["a", "b", "a", "c"], 0.9)
    1
    """
    if len(vectors) < 2:
        return 0
    sims = vectors @ vectors.T
    count = 0
    for i in range(len(speakers)):
        for j in range(i + 1, len(speakers)):
            if speakers[i] == speakers[j] and sims[i, j] >= threshold:
                count += 1
    return count


@dataclass
class Controller:
    """Moderator state for one debate. Feed it every turn with :meth:`record`."""

    persona_ids: list[str]
    settings: ControllerSettings
    names: Mapping[str, str] = field(default_factory=dict)
    encoder: Encoder | None = None
    turns: list[DialogueTurn] = field(default_factory=list)
    phase: int = 1
    phase_started_at: int = 0
    last_crystallized_at: int = 0
    crystallizations: int = 0
    frontiers: list[frozenset[str]] = field(default_factory=list)
    stable_in_phase3: int = 0
    crux_proposers: set[str] = field(default_factory=set)
    crux_acknowledged: bool = False
    circling_hint_at: int | None = None
    steered_concessions: set[int] = field(default_factory=set)
    steered_reframes: set[int] = field(default_factory=set)
    passed: str | None = None  # whose turn was last kept out: the floor moves on from them
    _vectors: dict[str, np.ndarray] = field(default_factory=dict)

    # -- bookkeeping ------------------------------------------------------
    def name(self, persona_id: str) -> str:
        return self.names.get(persona_id, persona_id)

    def record(self, turn: DialogueTurn) -> None:
        self.turns.append(turn)
        self.passed = None
        if turn.move is Move.PROPOSE_CRUX:
            self.crux_proposers.add(turn.persona_id)

    @property
    def budget_used(self) -> float:
        return len(self.turns) / self.settings.max_turns

    def exchange_turns_left(self) -> int:
        """Turns left before the resolution phase must start (one resolution turn each)."""
        return self.settings.max_turns - len(self.persona_ids) - len(self.turns)

    def enter_phase(self, phase: int) -> None:
        self.phase = phase
        self.phase_started_at = len(self.turns)
        self.frontiers = []  # stability is judged on this phase's crystallizations only
        if phase == 3:
            self.stable_in_phase3 = 0

    # -- turn-taking ------------------------------------------------------
    def silent_for(self, persona_id: str) -> int:
        """Turns since ``persona_id`` last spoke (all turns so far if never)."""
        for back, turn in enumerate(reversed(self.turns)):
            if turn.persona_id == persona_id:
                return back
        return len(self.turns)

    def next_speaker(self) -> str:
        """Simple alternation, with fairness for N > 2.

        The default is to hand the floor back to whoever was just answered, so that a pair
        can go back and forth; anyone silent for ``fairness_gap`` or more turns is brought in
        first (the longest-silent one). A persona whose turn was just kept out
        (:meth:`kept_out`) counts as the last speaker: asked again on the same request,
        Qwen2.5-1.5B gave the same echo until the debate ended.
        """
        ids = self.persona_ids
        if not self.turns and self.passed is None:
            return ids[0]
        last = self.passed or self.turns[-1].persona_id
        silent = {p: self.silent_for(p) for p in ids if p != last}
        overdue = [p for p in ids if p != last and silent[p] >= self.settings.fairness_gap]
        if overdue:
            return max(overdue, key=lambda p: (silent[p], -ids.index(p)))
        for turn in reversed(self.turns):
            if turn.persona_id != last:
                return turn.persona_id
        return next(p for p in ids if p != last)

    def kept_out(self, persona_id: str) -> None:
        """``persona_id``'s turn was kept out (skipped): the next turn goes to another speaker."""
        self.passed = persona_id

    def brought_in(self, persona_id: str) -> bool:
        """Left out for longer than a normal rotation (worth a "you haven't responded" hint)."""
        n = len(self.persona_ids)
        return n > 2 and self.silent_for(persona_id) >= max(self.settings.fairness_gap, n)

    # -- circling ---------------------------------------------------------
    def _embed(self, turns: Sequence[DialogueTurn]) -> np.ndarray:
        assert self.encoder is not None
        missing = [t for t in turns if t.id not in self._vectors]
        if missing:
            for t, v in zip(missing, self.encoder([t.dialogue for t in missing]), strict=True):
                self._vectors[t.id] = np.asarray(v, dtype=np.float64)
        return np.stack([self._vectors[t.id] for t in turns])

    def circling(self) -> bool:
        """Recent exchange turns say the same things again (embedding similarity)."""
        if self.encoder is None:
            return False
        window = [t for t in self.turns[-self.settings.circling_window :] if t.phase != "opening"]
        if len(window) < 4:
            return False
        vectors = self._embed(window)
        pairs = repeated_pairs(vectors, [t.persona_id for t in window], self.settings.circling_threshold)
        return pairs >= 2

    # -- steering ---------------------------------------------------------
    def steer(self, speaker: str) -> SteeringDecision | None:
        """The hint for ``speaker``'s next turn, or None when the conversation flows."""
        if self.phase in (1, 4) or not self.turns:
            return None
        in_phase = len(self.turns) - self.phase_started_at
        last = self.turns[-1]
        if self.phase == 3:
            if speaker not in self.crux_proposers:
                return SteeringDecision(
                    "Can you name what you think the core disagreement is?", "crux_seeking"
                )
            if self.circling():
                return self._stuck(last)
            return None
        if in_phase < 2:
            return None  # positions are still being established
        if self.brought_in(speaker):
            return SteeringDecision(
                f"You haven't answered the other side's point yet: {quote(last.dialogue)}.",
                "one_sided",
            )
        if (
            self.settings.post_concession_steering
            and last.move is Move.CONCEDE
            and last.persona_id != speaker
            and last.turn_index not in self.steered_concessions
        ):
            self.steered_concessions.add(last.turn_index)
            mine = next((t for t in reversed(self.turns) if t.persona_id == speaker), None)
            about = f"{quote(mine.dialogue)}" if mine else "the main question"
            return SteeringDecision(
                f"The other side conceded a point ({quote(last.dialogue)}). "
                f"Does that change your position on {about}?",
                "after_concession",
            )
        if last.move is Move.REFRAME and last.persona_id != speaker and last.turn_index not in self.steered_reframes:
            self.steered_reframes.add(last.turn_index)
            return SteeringDecision(
                f"The other side reframed the debate: {quote(last.dialogue)}. "
                "Do you agree that's the right framing?",
                "after_reframe",
            )
        if last.move in (Move.CLARIFY, Move.CONCEDE):
            return None  # agents are already clarifying or conceding
        cooling = self.circling_hint_at is not None and len(self.turns) - self.circling_hint_at < 4
        if not cooling and self.circling():
            self.circling_hint_at = len(self.turns)
            mine = next((t for t in reversed(self.turns) if t.persona_id == speaker), last)
            return SteeringDecision(
                f"You've gone back and forth on {quote(mine.dialogue)} several times. "
                "What specific evidence would change your mind?",
                "circling",
            )
        return None

    def _stuck(self, last: DialogueTurn) -> SteeringDecision:
        return SteeringDecision(
            f"Let's move on from {quote(last.dialogue)}. "
            "What's the next most important thing you disagree about?",
            "stuck",
        )

    # -- crystallization --------------------------------------------------
    def crystallization_trigger(self) -> str | None:
        """Why to crystallize now (a concession, a reframe, a proposed crux, a claim challenged and
        answered, or too long since the last time), or None."""
        since = len(self.turns) - self.last_crystallized_at
        if since <= 0 or self.phase in (1, 4):
            return None
        last = self.turns[-1]
        if last.move is Move.CONCEDE:
            return "concede"
        if last.move is Move.REFRAME and since >= 2:
            return "reframe"
        if last.move is Move.PROPOSE_CRUX and since >= 2:
            return "propose_crux"
        if since >= self.settings.crystallize_every:
            return "safety_net"
        if since >= self.settings.substantive_gap and len(self.turns) >= 3:
            a, b, c = self.turns[-3:]
            if (
                a.move in SUBSTANTIVE
                and b.move is Move.CHALLENGE
                and c.persona_id == a.persona_id
                and b.persona_id != a.persona_id
            ):
                return "substantive_exchange"
        return None

    def crystallized(self, *, frontier: frozenset[str], new_nodes: int, changed: bool) -> None:
        """Note a crystallization: its contested frontier and whether the graph changed."""
        self.last_crystallized_at = len(self.turns)
        self.crystallizations += 1
        self.frontiers.append(frontier)
        if self.phase == 3:
            self.stable_in_phase3 = 0 if (new_nodes or changed) else self.stable_in_phase3 + 1

    def frontier_stable(self) -> bool:
        """The contested frontier was the same across the last ``stable_crystallizations``."""
        n = self.settings.stable_crystallizations
        recent = self.frontiers[-n:]
        return len(recent) == n and all(f == recent[0] for f in recent)

    # -- phases -----------------------------------------------------------
    def transition(self) -> tuple[int, str] | None:
        """The next phase and why, when one of the transition rules below fires."""
        if self.phase == 2:
            if self.frontier_stable():
                return 3, f"contested frontier stable across {self.settings.stable_crystallizations} crystallizations"
            if self.budget_used > self.settings.crux_budget:
                return 3, f"turn budget {self.budget_used:.0%} consumed (> {self.settings.crux_budget:.0%})"
            # circling that outlives the moderator's hint (each side had a turn to answer it)
            if self.circling_hint_at is not None and len(self.turns) >= self.circling_hint_at + 2 and self.circling():
                return 3, "dialogue is circling"
        if self.phase == 3:
            if self.crux_acknowledged:
                return 4, "crux proposed and acknowledged"
            if set(self.persona_ids) <= self.crux_proposers:
                return 4, "every agent has proposed a crux"
            if self.budget_used > self.settings.resolution_budget:
                return 4, f"turn budget {self.budget_used:.0%} consumed (> {self.settings.resolution_budget:.0%})"
            if self.stable_in_phase3 >= self.settings.stable_crystallizations:
                return 4, f"graph stable for {self.stable_in_phase3} crystallizations with no new nodes"
        return None
