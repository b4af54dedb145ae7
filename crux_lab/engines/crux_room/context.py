"""Tiered debate context and bounded crux-room context, with no transcript to continue.

Each turn's user message carries, in order: the original topic; summaries of completed
rounds; open contested claims; crux card summaries; the persona's own earlier points; and the
one point it must answer, stated by the engine as a claim ("The claim to answer: ..."). Other
speakers' names and raw turns are not in it: shown a transcript, Qwen2.5-1.5B wrote the next
line as whoever spoke last. When the whole exceeds the budget (2,000 tokens by default) the
oldest material goes first, so the context stays bounded however long the debate runs.

"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from crux_lab.engines.crux_room.claims import ClaimIndex
from crux_lab.models.domain import CruxCard, DialogueTurn
from crux_lab.personas.prompt import (
    OWN_POINTS,
    OWN_POINTS_HEAD,
    claim_to_answer,
    impersonal,
    point,
    speaker_view,
)
from crux_lab.tokens import count_tokens


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

    @staticmethod
    def card_line(card: CruxCard) -> str:
        """A crux card as a turn request lists it: its question, type and state (no sides)."""
        return f"- {card.question} [{card.disagreement_type.value}, {'resolved' if card.resolved else 'open'}]"


def _shorten(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def turn_context(
    memory: DebateMemory,
    viewer: str | None,
    current: Sequence[DialogueTurn],
    *,
    budget: int = 2000,
    aspect: str | None = None,
) -> str:
    """The tiered context block for one persona's turn, at most ``budget`` tokens: the topic
    and round, the engine's summaries of earlier rounds, open disagreements and crux cards (no
    speaker named), the persona's own earlier points, and the newest turn of another speaker in
    ``current`` (this round) as the claim to answer. No transcript.

    Tiers are dropped oldest-first when over budget: older summaries, own points, cards,
    disagreements; the topic line and the claim to answer always stay.
    """
    names = memory.names
    topic = f"Debate on: {memory.topic}" + (f"\nCurrent round: {aspect}" if aspect else "")
    summaries = [f"- {label}: {impersonal(s, names, viewer)}" for label, s in memory.summaries]
    contested = [
        f"- {impersonal(c.claim, names, viewer)}" + (" (you are one side)" if viewer in c.personas else "") + f" ({c.status})"
        for c in memory.contested
    ]
    cards = [impersonal(memory.card_line(c), names, viewer) for c in memory.cards]
    mine = [*memory.turns, *(t for t in current if t not in memory.turns)]
    own = [] if viewer is None else [point(t.dialogue) for t in mine if t.persona_id == viewer]
    own = list(dict.fromkeys(own))[-OWN_POINTS:]
    view = [] if viewer is None else speaker_view(viewer, current, names, own=0)

    def render() -> str:
        blocks = [topic]
        if summaries:
            blocks.append("What's been established:\n" + "\n".join(summaries))
        if contested:
            blocks.append("Open disagreements:\n" + "\n".join(contested))
        if cards:
            blocks.append("Crux cards so far (evidence, not verdicts):\n" + "\n".join(cards))
        if own:
            blocks.append(OWN_POINTS_HEAD + "\n" + "\n".join(f"- {m}" for m in own))
        return "\n\n".join(blocks + view)

    text = render()
    if len(text) <= budget:  # fewer characters than the budget is always within budget
        return text
    size = count_tokens(text)
    for pool in (summaries, own, cards, contested):
        while size > budget and pool:
            pool.pop(0)
            text = render()
            size = count_tokens(text)
    return text


def room_context(
    topic: str,
    question: str,
    viewer: str,
    positions: Mapping[str, str],
    turns: Sequence[DialogueTurn],
    names: Mapping[str, str],
) -> str:
    """Bounded crux-room context: topic anchor, the room's question, the viewer's own position
    and points, and the other side's newest turn (else its position) as the claim to answer."""
    lines = [f"This crux arose in a debate about: {topic}. Stay relevant.", f"Crux room about: {impersonal(question, names, viewer)}"]
    if viewer in positions:
        lines.append(f"Your position: {_shorten(positions[viewer], 300)}")
    view = speaker_view(viewer, turns, names)
    if not any(t.persona_id != viewer for t in turns):
        other = next((text for pid, text in positions.items() if pid != viewer), None)
        if other is not None:
            view.append(claim_to_answer(other, names, viewer))
    return "\n".join(lines) + ("\n\n" + "\n\n".join(view) if view else "")
