"""The ``crux_rooms`` engine: a dialogue channel that spawns crux rooms, with two fixes over the
first version: rooms spawn only on repeated detections (staged commitment), and a room is a
conversation rather than a fixed script.

- A main channel where the personas take turns round-robin, 1-2 sentences each.
- A disagreement detector every 3 messages over a sliding window of the last 6 (boolean
  decomposition; one call per window).
- Staged commitment: a candidate only becomes a room when it was seen in 3+
  consecutive windows, its pair never had a room on that claim, and the pair's cooldown has
  passed. One-off quibbles never spawn rooms; the same argument never spawns twice. "The same
  claim" is decided from the claim's text as the detector worded it (:mod:`.crux_room.claims`).
- Crux rooms as a conversation: entry statements, free alternating exchange, a
  fast-tier exit check after each exchange, a safety cap of 20 turns, then one strong-tier card
  extraction over the full room conversation.
- Cards are posted back to the channel (``crux_card_posted``) and enter the channel's context
  as evidence, not verdicts.

It shares rooms, cards, anti-sycophancy and the insight output with the ``panel`` engine, so
researchers can compare the two on the same personas.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import ClassVar

from pydantic import Field

from crux_lab.engines import register_engine
from crux_lab.engines.base import EngineContext
from crux_lab.engines.crux_room import (
    prompts,
    sim,  # noqa: F401  (registers the simulator's answers to the family's purposes)
)
from crux_lab.engines.crux_room.context import ContestedClaim, speaker_view
from crux_lab.engines.crux_room.detection import SpawnGate, Voted, detect
from crux_lab.engines.crux_room.events import DisagreementDetected
from crux_lab.engines.crux_room.outcome import finish
from crux_lab.engines.crux_room.params import CruxParams
from crux_lab.engines.crux_room.purposes import CHANNEL_MESSAGE
from crux_lab.engines.crux_room.room import RoomSettings
from crux_lab.engines.crux_room.run import CruxEngine, CruxRun
from crux_lab.models.events import DebateComplete, DebateEvent, DebateStart, MessagePosted
from crux_lab.personas.prompt import impersonal


class CruxRoomsParams(CruxParams):
    max_messages: int | None = Field(None, ge=3, le=500, description="Channel messages; default: config.max_turns.")
    detect_every: int = Field(3, ge=1, le=20, description="Run the detector every N channel messages.")
    window: int = Field(6, ge=2, le=30, description="Messages the detector reads (sliding window).")
    min_seen: int = Field(3, ge=1, le=20, description="Consecutive windows a candidate must be seen in.")
    cooldown_messages: int = Field(9, ge=0, le=200, description="Channel messages between rooms of one pair.")


def no_room_fits(messages: int, detect_every: int, min_seen: int) -> str | None:
    """Why no room can open in a channel of ``messages`` messages, or None when one can: the
    detector runs every ``detect_every`` messages, and a room needs its disagreement seen in
    ``min_seen`` windows in a row.

    >>> no_room_fits(12, 3, 3) is None
    True
    >>> print(no_room_fits(8, 3, 3))
    8 channel messages hold 2 detection windows, but a room opens only on a disagreement seen in 3 in a row: no room can open. Give the debate at least 9 turns, or set min_seen to 2 or less.
    """
    windows = messages // detect_every
    if windows >= min_seen:
        return None
    fix = f" or set min_seen to {windows} or less" if windows else ""
    return (f"{messages} channel messages hold {windows} detection window{'s' * (windows != 1)}, but a room opens only "
            f"on a disagreement seen in {min_seen} in a row: no room can open. "
            f"Give the debate at least {detect_every * min_seen} turns,{fix}.".replace(",.", "."))


class _ChannelRun(CruxRun[CruxRoomsParams]):
    def __init__(self, ctx: EngineContext, params: CruxRoomsParams) -> None:
        self.gate = SpawnGate(min_seen=params.min_seen, cooldown_messages=params.cooldown_messages)
        super().__init__(ctx, params, gate=self.gate)
        self.settings = RoomSettings(
            three_phase=False, min_exchange=params.room_min_exchange, max_exchange=params.room_max_exchange,
            turn_cap=params.room_turn_cap, last_turns=params.room_last_turns,
        )

    def channel_context(self, pid: str) -> str:
        """The group chat as a member's turn request shows it: its own points and the newest
        message of another member as the claim to answer (no transcript), and the crux cards."""
        cards = [impersonal(self.memory.card_line(c), self.memory.names, pid) for c in self.memory.cards[-3:]]
        parts = [f"Group chat about: {self.memory.topic}"]
        if cards:
            parts.append("Crux cards posted back from rooms (evidence, not verdicts):\n" + "\n".join(cards))
        parts += speaker_view(pid, self.memory.turns[-self.p.window :], self.memory.names)
        return "\n\n".join(parts)

    async def events(self) -> AsyncIterator[DebateEvent]:
        ctx, sp = self.ctx, self.sp
        ids = ctx.persona_ids
        total = self.p.max_messages or ctx.config.max_turns
        yield DebateStart(topic=ctx.config.topic, aspects=[], personas=ids)
        if self.p.max_rooms and (why := no_room_fits(total, self.p.detect_every, self.p.min_seen)):
            sp.warn("detect_disagreement", why)
            for w in sp.drain():
                yield w
        async for ev in self.worldview():
            yield ev
        window_index = 0
        detected = False
        for i in range(total):
            pid = ids[i % len(ids)]
            # The prompt shows the last `window` messages; the hints carry the whole channel so
            # that a persuaded persona stays persuaded (the offline backend reads stances from them).
            seen = self.memory.turns
            t = await sp.speak(
                CHANNEL_MESSAGE, pid, prompts.CHANNEL if seen else prompts.CHANNEL_FIRST, self.channel_context(pid),
                phase="channel", seen=seen, reply_to=seen[-1].id if seen else None,
                claims=self.memory.open_claims(),
            )
            if t is not None:
                self.memory.turns.append(t)
                yield MessagePosted(message=t, phase="channel")
            for w in sp.drain():
                yield w
            if (i + 1) % self.p.detect_every:
                continue
            window_index += 1
            window = self.memory.turns[-self.p.window :]
            voted = await detect(sp, window, aspect=None, claims=self.memory.claims, votes=1, threshold=1)
            for w in sp.drain():
                yield w
            detected = detected or bool(voted)
            for v in voted:
                yield DisagreementDetected(candidate=v.candidate, votes=v.votes)
            ready = self.gate.observe(window_index, voted, i + 1)
            if ready and len(self.rooms) < self.p.max_rooms:
                async for ev in self.room(ready[0], i + 1):
                    yield ev
        opening: dict[str, str] = {}
        closing: dict[str, str] = {}
        for t in self.memory.turns:
            opening.setdefault(t.persona_id, t.dialogue)
            closing[t.persona_id] = t.dialogue
        shifts = finish(
            ctx, sp, self.rooms, self.memory.cards, self.memory, opening=opening, closing=closing,
            embeddings=self.p.shift_embeddings, detected=detected, assumptions=self.assumption_cruxes,
        )
        yield DebateComplete(shifts=shifts)

    async def room(self, v: Voted, message_index: int) -> AsyncIterator[DebateEvent]:
        a, b = v.candidate.personas[0], v.candidate.personas[1]
        self.gate.mark_spawned(v, message_index)
        claim = ContestedClaim(v.candidate.claim, (a, b), claim_id=v.claim_id)
        self.memory.contested.append(claim)
        sources = [t.id for t in self.memory.turns[-self.p.window :] if t.persona_id in (a, b)]
        async for ev in self.crux_room(v, claim, sources):
            yield ev


@register_engine
class CruxRoomsEngine(CruxEngine[CruxRoomsParams]):
    name: ClassVar[str] = "crux_rooms"
    description: ClassVar[str] = (
        "Dialogue + crux rooms: round-robin channel, detector every 3 messages, "
        "staged-commitment spawn gate, conversational crux rooms, cards posted back."
    )
    params_model: ClassVar[type[CruxRoomsParams]] = CruxRoomsParams
    run_class: ClassVar[type[_ChannelRun]] = _ChannelRun
