"""The shared blackboard of the blitz and classical engines.

A blackboard belongs to one table. It holds the claims, every agent's stance history, the
arguments posted, dispute tracking (claims with both a pro and a con), crux candidates (with
how many summaries named them), flip conditions per agent, and the running summary written by
the ``blackboard_summary`` call (fast tier).

Convergence is pure code: the entropy of the stance distribution per
claim, and the confidence-weighted distance between agents. A table stops when entropy drops
below a threshold (consensus), when the distance stays high without shrinking (divergence), or
at max rounds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from pydantic import BaseModel, Field

from crux_lab.engines.base import (
    TURN_FIELDS_PROMPT,
    TURN_STANCE_PROMPT,
    EngineContext,
    TurnReply,
    TurnText,
    turn_hints,
)
from crux_lab.engines.blackboard import purposes
from crux_lab.engines.blackboard.claims import (
    AgentStance,
    Claim,
    StanceWord,
    claim_ref,
    claims_block,
    claims_extra,
)
from crux_lab.llm.base import Hints
from crux_lab.models.domain import DialogueTurn
from crux_lab.models.events import EngineError
from crux_lab.personas.prompt import impersonal

STANCE_VALUE: dict[str, float] = {"pro": 1.0, "con": -1.0, "uncertain": 0.0}


# ---------------------------------------------------------------------------
# Pure convergence metrics
# ---------------------------------------------------------------------------


def stance_entropy(stances: Sequence[str]) -> float:
    """Shannon entropy of a pro/con/uncertain distribution, normalised to [0, 1].

    >>> stance_entropy(["pro", "pro", "pro"])
    0.0
    >>> round(stance_entropy(["pro", "con", "uncertain"]), 3)
    1.0
    >>> round(stance_entropy(["pro", "con"]), 3)
    0.631
    """
    if not stances:
        return 0.0
    n = len(stances)
    h = 0.0
    for value in ("pro", "con", "uncertain"):
        k = sum(1 for s in stances if s == value)
        if k:
            p = k / n
            h -= p * math.log(p)
    return h / math.log(3)


def signed(stance: AgentStance) -> float:
    """A stance as a number in [-1, 1]: +confidence for pro, -confidence for con, 0 uncertain."""
    return STANCE_VALUE[stance.stance] * stance.confidence


def confidence_distance(a: Mapping[str, AgentStance], b: Mapping[str, AgentStance]) -> float:
    """Confidence-weighted distance between two agents over the claims both hold, in [0, 1].

    >>> pro = {"c1": AgentStance("c1", "pro", 0.9)}
    >>> con = {"c1": AgentStance("c1", "con", 0.7)}
    >>> confidence_distance(pro, con)
    0.8
    >>> confidence_distance(pro, pro)
    0.0
    """
    shared = sorted(set(a) & set(b))
    if not shared:
        return 0.0
    return round(sum(abs(signed(a[c]) - signed(b[c])) / 2 for c in shared) / len(shared), 6)


def mean_pairwise_distance(latest: Mapping[str, Mapping[str, AgentStance]]) -> float:
    """Mean confidence-weighted distance over all pairs of agents."""
    pairs = list(combinations(sorted(latest), 2))
    if not pairs:
        return 0.0
    return round(sum(confidence_distance(latest[a], latest[b]) for a, b in pairs) / len(pairs), 6)


def mean_entropy(latest: Mapping[str, Mapping[str, AgentStance]], claim_ids: Sequence[str]) -> float:
    """Mean stance entropy over the claims."""
    if not claim_ids:
        return 0.0
    values = [
        stance_entropy([s[c].stance for s in latest.values() if c in s]) for c in claim_ids
    ]
    return round(sum(values) / len(values), 6)


def dispute_score(stances: Sequence[AgentStance]) -> float:
    """How hard a claim is disputed: 0 unless someone is pro and someone con; then the sum of
    the strongest pro and the strongest con confidence (in (0, 2]).

    >>> dispute_score([AgentStance("c", "pro", 0.9), AgentStance("c", "con", 0.6)])
    1.5
    >>> dispute_score([AgentStance("c", "pro", 0.9), AgentStance("c", "uncertain", 0.6)])
    0.0
    """
    pro = [s.confidence for s in stances if s.stance == "pro"]
    con = [s.confidence for s in stances if s.stance == "con"]
    if not pro or not con:
        return 0.0
    return round(max(pro) + max(con), 6)


@dataclass(frozen=True)
class ConvergenceRule:
    max_rounds: int
    entropy_threshold: float = 0.35
    divergence_distance: float = 0.45
    divergence_rounds: int = 2
    min_progress: float = 0.02


def check_convergence(
    entropies: Sequence[float], distances: Sequence[float], rule: ConvergenceRule, disputed: int = 0
) -> tuple[bool, str]:
    """Decide whether a table stops after the latest round (index ``len(entropies) - 1``).

    Index 0 is the state after the initial stances; each later index is one round. Low mean
    entropy stops the table only when no claim is ``disputed`` (someone pro, someone con): a
    mean over claims can be low while two agents still hold opposite stances on one of them.

    >>> rule = ConvergenceRule(max_rounds=4)
    >>> check_convergence([0.8, 0.2], [0.5, 0.1], rule)
    (True, 'consensus: stance entropy 0.2 below 0.35')
    >>> check_convergence([0.8, 0.2], [0.5, 0.1], rule, disputed=1)
    (False, '')
    >>> check_convergence([0.8, 0.8, 0.8], [0.6, 0.6, 0.61], rule)[1]
    'divergence: distance 0.61 has not shrunk for 2 rounds'
    >>> check_convergence([0.8, 0.7], [0.6, 0.5], rule)
    (False, '')
    """
    rounds = len(entropies) - 1
    if entropies[-1] <= rule.entropy_threshold and disputed == 0:
        return True, f"consensus: stance entropy {round(entropies[-1], 3)} below {rule.entropy_threshold}"
    k = rule.divergence_rounds
    if len(distances) > k and distances[-1] >= rule.divergence_distance:
        window = distances[-(k + 1) :]
        if all(later > earlier - rule.min_progress for earlier, later in zip(window, window[1:], strict=False)):
            return True, f"divergence: distance {round(distances[-1], 3)} has not shrunk for {k} rounds"
    if rounds >= rule.max_rounds:
        return True, f"max rounds ({rule.max_rounds}) reached"
    return False, ""


# ---------------------------------------------------------------------------
# Blackboard state
# ---------------------------------------------------------------------------


@dataclass
class Blackboard:
    """One table's shared state (runtime)."""

    table: int
    persona_ids: list[str]
    claims: list[Claim]
    history: dict[str, list[dict[str, AgentStance]]] = field(default_factory=dict)
    turns: list[DialogueTurn] = field(default_factory=list)
    summary: str = ""
    crux_candidates: dict[str, int] = field(default_factory=dict)
    flip_conditions: dict[str, list[str]] = field(default_factory=dict)
    entropies: list[float] = field(default_factory=list)
    distances: list[float] = field(default_factory=list)
    converged: bool = False
    reason: str = ""
    rounds_per_claim: int = 2
    turn_claim: dict[str, str] = field(default_factory=dict)
    round_focus: dict[int, str] = field(default_factory=dict)
    passed: str | None = None  # whose turn was last kept out (classical picks another speaker next)

    @property
    def claim_ids(self) -> list[str]:
        return [c.id for c in self.claims]

    def latest(self) -> dict[str, dict[str, AgentStance]]:
        return {pid: dict(h[-1]) for pid, h in self.history.items() if h}

    def record(self, persona_id: str, stances: Mapping[str, AgentStance]) -> None:
        """Append a new stance snapshot; claims not mentioned keep their previous stance."""
        prev = self.history.get(persona_id, [{}])[-1] if self.history.get(persona_id) else {}
        self.history.setdefault(persona_id, []).append({**prev, **stances})

    def measure(self) -> tuple[float, float]:
        latest = self.latest()
        e, d = mean_entropy(latest, self.claim_ids), mean_pairwise_distance(latest)
        self.entropies.append(e)
        self.distances.append(d)
        return e, d

    def disputes(self) -> list[Claim]:
        """Claims with at least one pro and one con now, hardest first."""
        latest = self.latest()
        scored = [
            (dispute_score([s[c.id] for s in latest.values() if c.id in s]), i, c)
            for i, c in enumerate(self.claims)
        ]
        return [c for score, _, c in sorted(scored, key=lambda t: (-t[0], t[1])) if score > 0]

    def post(self, turn: DialogueTurn, claim: Claim) -> None:
        """Put a turn on the board, remembering which claim it answered."""
        self.turns.append(turn)
        self.turn_claim[turn.id] = claim.id

    def posts_on(self, claim: Claim) -> list[DialogueTurn]:
        return [t for t in self.turns if self.turn_claim.get(t.id) == claim.id]

    def focus_claim(self, round_number: int) -> Claim:
        """The claim a round debates (fixed once chosen for that round).

        A live dispute stays in focus for ``rounds_per_claim`` consecutive rounds, so agents can
        answer each other's posts on it; then the hardest dispute debated least so far takes over.
        """
        by_id = {c.id: c for c in self.claims}
        if round_number in self.round_focus:
            return by_id[self.round_focus[round_number]]
        disputed = self.disputes()
        prev = self.round_focus.get(round_number - 1)
        streak = 0
        while prev is not None and self.round_focus.get(round_number - 1 - streak) == prev:
            streak += 1
        if prev is not None and streak < self.rounds_per_claim and any(c.id == prev for c in disputed):
            choice = by_id[prev]
        else:
            pool = disputed or self.claims
            used = list(self.round_focus.values())
            fresh = [c for c in pool if c.id != prev] or pool
            choice = min(fresh, key=lambda c: (used.count(c.id), pool.index(c)))
        self.round_focus[round_number] = choice.id
        return choice

    def past_stances_text(self, persona_id: str) -> str:
        """A persona's stance history as a prompt shows it, claims named by their ids."""
        lines = []
        for r, snap in enumerate(self.history.get(persona_id, [])):
            parts = [f"{c.id}={snap[c.id].stance}({snap[c.id].confidence:.2f})" for c in self.claims if c.id in snap]
            lines.append(("initial: " if r == 0 else f"update {r}: ") + ", ".join(parts))
        return "\n".join(lines) or "(none yet)"

    def top_crux_candidates(self, k: int = 5) -> list[str]:
        return [c for c, _ in sorted(self.crux_candidates.items(), key=lambda t: (-t[1], t[0]))[:k]]


# ---------------------------------------------------------------------------
# LLM steps
# ---------------------------------------------------------------------------


class FlipNote(BaseModel):
    persona_id: str
    condition: str


class BlackboardSummaryReply(BaseModel):
    summary: str
    crux_candidates: list[str] = Field(default_factory=list)
    flip_conditions: list[FlipNote] = Field(default_factory=list)


class StanceUpdate(BaseModel):
    claim_id: str
    stance: StanceWord
    confidence: float = Field(ge=0.0, le=1.0)


class BlackboardTurnReply(TurnReply):
    """What an agent posts in one blitz or classical turn: its words, its stance on the
    round's claim, the turn fields every persona turn states (move, addresses, named reason),
    stance updates on other claims (by id) and its flip condition."""

    content: TurnText
    stance: StanceWord
    confidence: float = Field(ge=0.0, le=1.0)
    stance_updates: list[StanceUpdate] = Field(default_factory=list)
    flip_condition: str = ""


BLACKBOARD_SUMMARY = """You keep the shared blackboard of a structured debate.
Summarise the state of play in at most five sentences: who holds what on each claim and
where they clash. Name crux candidates: the premise under each clash, as a specific question
that, if settled, would move someone (not the topic restated). Record flip conditions only
when an agent stated one. Return JSON:
{"summary": "...", "crux_candidates": ["..."], "flip_conditions": [{"persona_id": "...", "condition": "..."}]}"""


def turn_prompt(
    board: Blackboard, persona_id: str, focus: Claim, intent: str = "", grounding: str = "", topic: str = "",
    names: Mapping[str, str] | None = None, answer: str = "",
) -> str:
    """The per-turn context: topic, claims, summary (no speaker named: ``names`` are replaced,
    :func:`crux_lab.personas.prompt.impersonal`), own past stances, the round's claim, the
    persona's belief grounding, its own answer from its brief (``answer``,
    :func:`crux_lab.engines.guards.answer_line`, next to what it is asked), and the fields the
    reply must state."""
    intent_line = f"\nYour intent this turn: {intent}." if intent else ""
    answer_part = f"\n\n{answer}" if answer else ""
    topic_line = f"Topic: {topic}\n" if topic else ""
    summary = impersonal(board.summary, {**dict.fromkeys(board.persona_ids, ""), **(names or {})}, persona_id)
    return (
        f"{topic_line}Claims on the table:\n{claims_block(board.claims)}\n\n"
        f"Blackboard summary:\n{summary or '(first round: no summary yet)'}\n\n"
        f"Your past stances:\n{board.past_stances_text(persona_id)}\n\n"
        f"This round's claim [{focus.id}]: {focus.text}{intent_line}{grounding}{answer_part}\n\n"
        + post_format(focus.id)
    )


def post_format(claim_id: str) -> str:
    """What a post's request asks of it, and its reply's fields (the echo guard's ``form``)."""
    return (
        "From your own side, answer the claim to answer (or, when there is none, the strongest "
        "opposing point) in two to four sentences in your own voice, then update your stance. Return JSON with: \"content\": your post; \"stance\": \"pro\", \"con\" or "
        f"\"uncertain\" on claim [{claim_id}]; \"confidence\": 0.0-1.0; {TURN_FIELDS_PROMPT.removeprefix(TURN_STANCE_PROMPT)}; "
        '"stance_updates": [{"claim_id": "c1", "stance": "pro|con|uncertain", "confidence": 0.0}] for '
        'other claims whose stance you changed; "flip_condition": what would change your mind, if anything'
    )


def post_lines(turns: Sequence[DialogueTurn], claims: Sequence[Claim]) -> str:
    """Posts as a prompt shows them: who, on which claim, with which stance, and the words.

    >>> t = DialogueTurn(id="t0", turn_index=0, persona_id="a", dialogue="Yes.", phase="round",
    ...                  proposition_ids=["c1"], stance="pro")
    >>> post_lines([t], [Claim("c1", "X.")])
    'a on [c1] (pro): Yes.'
    """
    known = {c.id for c in claims}
    lines = []
    for t in turns:
        on = [c for c in t.proposition_ids if c in known]
        where = f" on [{', '.join(on)}]" if on else ""
        stance = f" ({t.stance})" if t.stance else ""
        lines.append(f"{t.persona_id}{where}{stance}: {t.dialogue}")
    return "\n".join(lines)


async def summarize(ctx: EngineContext, board: Blackboard) -> EngineError | None:
    """The ``blackboard_summary`` call (fast tier) over the table's latest posts; merges crux
    candidates and flip conditions. An unusable reply keeps the previous summary (warning)."""
    shown = board.turns[-3 * len(board.persona_ids) :]
    user = (
        f"Topic: {ctx.config.topic}\nClaims:\n{claims_block(board.claims)}\n\n"
        f"Previous summary: {board.summary or '(none)'}\n\nLatest posts:\n{post_lines(shown, board.claims)}"
    )
    request = ctx.request(
        purposes.BLACKBOARD_SUMMARY,
        BLACKBOARD_SUMMARY,
        user,
        output_schema=BlackboardSummaryReply,
        hints=Hints(
            topic=ctx.config.topic,
            turns=turn_hints(shown),
            extra=claims_extra(board.claims),
        ),
    )
    response, warning = await ctx.call_or_warn(request)
    if response is None:
        return warning
    reply = response.parsed if isinstance(response.parsed, BlackboardSummaryReply) else BlackboardSummaryReply(summary=response.text[:800])
    board.summary = reply.summary
    for cand in reply.crux_candidates:
        key = cand.strip()
        if key:
            board.crux_candidates[key] = board.crux_candidates.get(key, 0) + 1
    for note in reply.flip_conditions:
        if note.persona_id in board.persona_ids and note.condition.strip():
            conds = board.flip_conditions.setdefault(note.persona_id, [])
            if note.condition not in conds:
                conds.append(note.condition)
    return None


def apply_turn(board: Blackboard, persona_id: str, focus: Claim, reply: BlackboardTurnReply, round_number: int) -> dict[str, AgentStance]:
    """Turn a reply into a stance snapshot (focus claim + any other updates) and record it."""
    snap: dict[str, AgentStance] = {
        focus.id: AgentStance(focus.id, reply.stance, reply.confidence, reply.content[:300], round_number)
    }
    known = set(board.claim_ids)
    before = board.latest().get(persona_id, {})
    for u in reply.stance_updates:
        cid = claim_ref(u.claim_id)
        if cid in known and cid != focus.id:
            prev = before.get(cid)
            reason = prev.reasoning if prev is not None and prev.stance == u.stance else ""  # unchanged: same grounds
            snap[cid] = AgentStance(cid, u.stance, u.confidence, reason, round_number)
    board.record(persona_id, snap)
    if reply.flip_condition.strip():
        conds = board.flip_conditions.setdefault(persona_id, [])
        if reply.flip_condition not in conds:
            conds.append(reply.flip_condition.strip())
    return snap
