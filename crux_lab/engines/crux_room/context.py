"""Tiered debate context and bounded crux-room context.

Each turn's user message carries, in order: the original topic; summaries of completed
rounds; open contested claims; crux card summaries; the persona's own earlier claims and the
attacks on them; the current round verbatim. When the whole exceeds the budget (2,000 tokens
by default) the oldest material goes first, so the context stays bounded however long the
debate runs.

History can be anonymized against sycophancy: the reader sees "You", "Speaker A", "Speaker B"...,
and persona names inside the text are replaced the same way.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from crux_lab.engines.crux_room.claims import ClaimIndex
from crux_lab.models.domain import CruxCard, DialogueTurn
from crux_lab.tokens import count_tokens


def speaker_labels(persona_ids: Sequence[str], viewer: str | None) -> dict[str, str]:
    """Anonymous labels: the viewer is "You", the others "Speaker A", "Speaker B", ...

    >>> speaker_labels(["x", "y", "z"], "y")
    {'y': 'You', 'x': 'Speaker A', 'z': 'Speaker B'}
    """
    labels: dict[str, str] = {}
    if viewer is not None and viewer in persona_ids:
        labels[viewer] = "You"
    letters = iter(string.ascii_uppercase)
    for pid in persona_ids:
        if pid != viewer:
            labels[pid] = f"Speaker {next(letters)}"
    return labels


@dataclass
class History:
    """Renders turns for one reader, anonymized or with names."""

    names: Mapping[str, str]  # persona id -> display name
    viewer: str | None = None
    anonymize: bool = True

    def label(self, persona_id: str) -> str:
        if not self.anonymize:
            return "You" if persona_id == self.viewer else self.names.get(persona_id, persona_id)
        return speaker_labels(list(self.names), self.viewer).get(persona_id, "Speaker ?")

    def possessive(self, persona_id: str) -> str:
        """The label as an owner: "Your" for the reader, else "Speaker A's", "Ann Lee's".

        >>> h = History({"a": "Ann Lee", "b": "Bob"}, viewer="a")
        >>> h.possessive("a"), h.possessive("b")
        ('Your', "Speaker A's")
        """
        label = self.label(persona_id)
        return "Your" if label == "You" else f"{label}'s"

    def scrub(self, text: str) -> str:
        """Replace persona names (and ids) in ``text`` by the reader's labels when anonymizing.

        >>> History({"a": "Ann Lee", "b": "Bob"}, viewer="a").scrub("Bob said Ann Lee is wrong")
        'Speaker A said You is wrong'
        """
        if not self.anonymize:
            return text
        for pid, name in sorted(self.names.items(), key=lambda kv: -len(kv[1])):
            for token in {name, pid}:
                if len(token) > 2:
                    text = re.sub(rf"\b{re.escape(token)}\b", self.label(pid), text)
        return text

    def line(self, turn: DialogueTurn) -> str:
        return f"{self.label(turn.persona_id)}: {self.scrub(turn.dialogue)}"

    def lines(self, turns: Sequence[DialogueTurn]) -> str:
        return "\n".join(self.line(t) for t in turns)


@dataclass
class ContestedClaim:
    """A claim two personas were detected opposing on, under its engine id (``c1``...)."""

    claim: str
    personas: tuple[str, str]
    status: str = "unresolved"  # or "resolved"
    claim_id: str = ""


@dataclass
class DebateMemory:
    """What a panel debate remembers between rounds."""

    topic: str
    names: dict[str, str]
    aspects: list[str] = field(default_factory=list)
    summaries: list[tuple[str, str]] = field(default_factory=list)  # (aspect label, summary)
    contested: list[ContestedClaim] = field(default_factory=list)
    cards: list[CruxCard] = field(default_factory=list)
    turns: list[DialogueTurn] = field(default_factory=list)  # every posted turn (main channel)
    claims: ClaimIndex = field(default_factory=ClaimIndex)  # contested claims by engine id

    def open_claims(self) -> dict[str, str]:
        """The contested claims a persona's prompt lists by id (engine id -> text)."""
        return {c.claim_id: self.claims.text(c.claim_id) for c in self.contested if c.claim_id}

    def card_line(self, card: CruxCard, history: History) -> str:
        sides = ", ".join(f"{history.label(p)} {pos.position.value}" for p, pos in card.personas.items())
        state = "resolved" if card.resolved else "open"
        return f"- {card.question} [{card.disagreement_type.value}, {state}; {sides}]"

    def own_claims(self, viewer: str, exclude: Sequence[DialogueTurn]) -> tuple[list[DialogueTurn], list[DialogueTurn]]:
        """The viewer's earlier turns and the turns that replied to them (per-persona emphasis)."""
        skip = {t.id for t in exclude}
        mine = [t for t in self.turns if t.persona_id == viewer and t.id not in skip]
        mine_ids = {t.id for t in mine}
        attacks = [t for t in self.turns if t.reply_to in mine_ids and t.persona_id != viewer and t.id not in skip]
        return mine[-2:], attacks[-2:]


def _shorten(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def turn_context(
    memory: DebateMemory,
    viewer: str | None,
    current: Sequence[DialogueTurn],
    *,
    anonymize: bool = True,
    budget: int = 2000,
    aspect: str | None = None,
) -> str:
    """The tiered context block for one persona's turn, at most ``budget`` tokens.

    Tiers are dropped oldest-first when over budget: older summaries, then older verbatim
    messages of the current round; the topic line always stays.
    """
    history = History(memory.names, viewer=viewer, anonymize=anonymize)
    topic = f"Debate on: {memory.topic}" + (f"\nCurrent round: {aspect}" if aspect else "")
    summaries = [f"- {label}: {history.scrub(s)}" for label, s in memory.summaries]
    contested = [
        f"- {history.scrub(c.claim)} ({history.label(c.personas[0])} vs {history.label(c.personas[1])}, {c.status})"
        for c in memory.contested
    ]
    cards = [memory.card_line(c, history) for c in memory.cards]
    mine, attacks = memory.own_claims(viewer, current) if viewer else ([], [])
    own = [f"- You said: {_shorten(history.scrub(t.dialogue))}" for t in mine]
    own += [f"- {history.label(t.persona_id)} challenged it: {_shorten(history.scrub(t.dialogue))}" for t in attacks]
    verbatim = [history.line(t) for t in current]

    def render() -> str:
        blocks = [topic]
        if summaries:
            blocks.append("What's been established:\n" + "\n".join(summaries))
        if contested:
            blocks.append("Open disagreements:\n" + "\n".join(contested))
        if cards:
            blocks.append("Crux cards so far (evidence, not verdicts):\n" + "\n".join(cards))
        if own:
            blocks.append("Your earlier claims and the challenges to them:\n" + "\n".join(own))
        if verbatim:
            blocks.append("This round:\n" + "\n".join(verbatim))
        return "\n\n".join(blocks)

    text = render()
    if len(text) <= budget:  # fewer characters than the budget is always within budget
        return text
    size = count_tokens(text)
    # Trim in the order that loses least: old summaries, own-claim notes, old cards, old verbatim.
    for pool in (summaries, own, cards, contested, verbatim):
        while size > budget and len(pool) > (1 if pool is verbatim else 0):
            pool.pop(0)
            text = render()
            size = count_tokens(text)
    return text


def room_context(
    topic: str,
    question: str,
    positions: Mapping[str, str],
    turns: Sequence[DialogueTurn],
    history: History,
    *,
    last: int = 4,
) -> str:
    """Bounded crux-room context: topic anchor, position summary, last ``last`` turns verbatim."""
    summary = " ".join(f"{history.possessive(pid)} position: {_shorten(history.scrub(text), 300)}" for pid, text in positions.items())
    recent = history.lines(list(turns)[-last:])
    return (
        f"This crux arose in a debate about: {topic}. Stay relevant.\n"
        f"Crux room about: {question}\n"
        f"So far: {summary}\n"
        + (f"Last exchanges:\n{recent}" if recent else "")
    )
