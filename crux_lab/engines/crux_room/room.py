"""Crux rooms and crux card extraction.

Two room shapes share this module:

- :func:`run_room` with ``three_phase=True`` (panel): position statements (or,
  for a room that follows a clash, each side's clash turn, the clash's later turns counting as
  exchange turns), a directed exchange of 2-8 adaptive turns (steelman prompts from turn
  ``steelman_after``), fast-tier exit checks every 2 turns, convergence statements, and a
  convergence check only when no exit check found the crux; when the two name different
  cores, 2 more exchange rounds and one more check (``max_convergence_checks``); a safety cap
  on the room's turns. In every exchange the sides alternate by turn asked for: a side whose
  turn was kept out (:mod:`crux_lab.engines.guards`) does not speak again at once, and two
  turns in a row kept out end the exchange (neither side has anything new on this claim);
- ``three_phase=False`` (crux_rooms engine): entry statements, free
  alternating exchange with an exit check after each exchange, then one closing statement each
  naming the premise buried under the disagreement (what the card is extracted from), all
  within the same cap.

Every room prompt carries the original topic and the room's claim (as the debate's detection
worded it), and its context is bounded: the position summary plus the last 4 turns. The card is
extracted on the strong tier from the conversation; it names the premise buried under the
disagreement, never the topic. It is validated: a grounding quote that is not the id of one of
that persona's corpus chunks is dropped with a warning (the card is kept, and each remaining
quote carries the chunk's words and source); a card that leaves out a participant or restates the
topic is asked for once more with the problem stated, then dropped with a warning
(``Speakers.rejected_cards`` records why).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field

from crux_lab.analysis.restates import content_words, restates_topic, within_topic
from crux_lab.engines.base import clip, turn_hints
from crux_lab.engines.crux_room import prompts
from crux_lab.engines.crux_room.antisyc import relevant_nodes
from crux_lab.engines.crux_room.claims import ClaimIndex
from crux_lab.engines.crux_room.context import room_context
from crux_lab.engines.crux_room.events import CruxRoomComplete, CruxRoomSpawning
from crux_lab.engines.crux_room.purposes import CARD, CRUX_TURN, EXIT_CHECK
from crux_lab.engines.crux_room.schemas import (
    CardPersonaReply,
    CardReply,
    ConvergenceReply,
    ExitCheckReply,
    card_reply_for,
)
from crux_lab.engines.crux_room.speaker import Speakers, spoken
from crux_lab.engines.guards import Side, SideGuard, clipped, quotable_sentences, side_outcome
from crux_lab.engines.names import labels, persona_ref, quote, world_question
from crux_lab.llm.purposes import Phase
from crux_lab.models.domain import Aspect, CruxCard, CruxCardPosition, DialogueTurn, GroundingQuote
from crux_lab.models.events import CruxCardPosted, CruxMessage, DebateEvent


@dataclass(frozen=True)
class RoomSettings:
    three_phase: bool = True
    min_exchange: int = 2
    max_exchange: int = 8
    steelman_after: int = 4
    extra_rounds: int = 2
    turn_cap: int = 20
    last_turns: int = 4
    # Convergence checks of a three-phase room: when the first finds different cores, one more
    # exchange of ``extra_rounds`` rounds and a second check, then the card.
    max_convergence_checks: int = 2


@dataclass
class RoomOutcome:
    room_id: str
    personas: tuple[str, str]
    question: str
    claim_id: str
    turns: list[DialogueTurn] = field(default_factory=list)
    exit_checks: int = 0
    surfaced: bool = False
    converged: bool = False
    card: CruxCard | None = None
    # Turns spoken before the room on its claim by its two personas (a panel clash): each
    # side's last one is its position statement, so phase 1 is not asked again.
    opened_by: list[DialogueTurn] = field(default_factory=list)


async def run_room(
    sp: Speakers,
    outcome: RoomOutcome,
    settings: RoomSettings,
    *,
    claims: ClaimIndex,
    aspect: Aspect | None = None,
    source_messages: Sequence[str] = (),
) -> AsyncIterator[DebateEvent]:
    """Run one room; yields its events and fills ``outcome``."""
    a, b = outcome.personas
    topic = sp.ctx.config.topic
    room_id = outcome.room_id
    yield CruxRoomSpawning(room_id=room_id, question=outcome.question, personas=[a, b])
    names = {pid: sp.names[pid] for pid in (a, b)}
    positions: dict[str, str] = {}
    for t in outcome.opened_by:
        if t.persona_id in names:
            positions[t.persona_id] = t.dialogue  # the last one each side said

    async def turn(pid: str, instruction: str, phase_hint: str) -> DialogueTurn | None:
        other = b if pid == a else a
        shown = [*outcome.opened_by, *outcome.turns]
        text = room_context(topic, outcome.question, pid, positions, shown, names)
        return await sp.speak(
            CRUX_TURN, pid, instruction.format(question=outcome.question), text,
            phase="crux_room", seen=shown, hint_phase=phase_hint, aspect=aspect.label if aspect else None,
            aspect_id=aspect.id if aspect else None, focus=outcome.question,
            claims={outcome.claim_id: outcome.question}, opponent_id=other,
            reply_to=shown[-1].id if shown else None, room_id=room_id, persona_ids=[a, b],
        )

    def room_full(reserve: int = 0) -> bool:
        """No room for another turn, keeping ``reserve`` turns for a later round."""
        return len(outcome.turns) + reserve >= settings.turn_cap

    # Phase 1: position (entry) statements, generated independently; skipped when both sides
    # stated their position on this claim just before the room (the clash that led to it),
    # whose turns beyond the first each count as exchange turns already made.
    carried = 0
    if set(positions) == {a, b}:
        carried = max(0, len(outcome.opened_by) - 2)
    else:
        firsts = spoken(await sp.timeline.parallel(
            "room-position", [turn(pid, prompts.ROOM_POSITION, "position") for pid in (a, b)]
        ))
        for t in firsts:
            outcome.turns.append(t)
            positions[t.persona_id] = t.dialogue
            yield CruxMessage(room_id=room_id, message=t, room_phase="position")
    opened = len(outcome.turns)

    async def exchange(n_min: int, n_max: int, start: int = 0) -> AsyncIterator[DebateEvent]:
        done = start
        if done > 0 and n_min <= done < n_max and done % 2 == 0 and await exit_check(done):
            outcome.surfaced = True  # the turns carried over already surfaced it
            return
        first = len(outcome.turns) - opened + carried  # who speaks first: the sides alternate from here
        kept_out = 0  # turns in a row kept out (skipped)
        # a three-phase room keeps two turns of its cap for the convergence round, which asks both sides at once
        while done < n_max and not room_full(2 if settings.three_phase else 0) and kept_out < 2:
            exchanged = len(outcome.turns) - opened + carried
            # The sides alternate by turn asked for, not by turn kept: a side whose turn was kept
            # out does not speak again at once. Asked again on the same request, Qwen2.5-1.5B gave
            # the same echo seven times in a row, each kept out.
            speaker = a if (first + done - start) % 2 == 0 else b
            steelman = settings.three_phase and exchanged >= settings.steelman_after
            instruction = prompts.ROOM_STEELMAN if steelman else prompts.ROOM_EXCHANGE
            if sp.antisyc.update_rule and exchanged >= 2:
                # after an exchange, name the exact claim that moved you, or say why none did
                instruction += "\n" + prompts.ROOM_AFTER_EXCHANGE
            t = await turn(speaker, instruction, "steelman" if steelman else "exchange")
            done += 1
            if t is None:  # skipped with a warning: the other side goes on; both in a row: nothing new here
                kept_out += 1
                continue
            kept_out = 0
            outcome.turns.append(t)
            yield CruxMessage(room_id=room_id, message=t, room_phase="exchange")
            if n_min <= done < n_max and done % 2 == 0 and await exit_check(exchanged + 1):
                outcome.surfaced = True
                return

    async def exit_check(exchanged: int) -> bool:
        # The checker is no debater: it reads the debaters by name, never as "You" and "Speaker A".
        last = [*outcome.opened_by, *outcome.turns][-settings.last_turns :]
        transcript = "\n".join(f"{names[t.persona_id]}: {t.dialogue}" for t in last)
        hints = sp.hints(  # the turns the prompt shows, nothing more
            turns=turn_hints(last), focus=outcome.question,
            phase="exit_check", extra={"exchange_turns": exchanged},
        )
        user = prompts.EXIT_CHECK.format(topic=topic, question=outcome.question, transcript=transcript, n=exchanged)
        reply = await sp.structured(EXIT_CHECK, user, ExitCheckReply, hints)
        outcome.exit_checks += 1
        return bool(reply and reply.crux_surfaced)

    # Phase 2: directed exchange (or the free loop of the crux_rooms engine).
    n_max = settings.max_exchange if settings.three_phase else settings.turn_cap - 4  # room for the premise round
    async for ev in exchange(settings.min_exchange, n_max, start=carried):
        yield ev
    if not settings.three_phase:
        premises = spoken(await sp.timeline.parallel(
            "room-premise", [turn(pid, prompts.ROOM_CONVERGENCE, "convergence") for pid in (a, b)]
        ))
        for t in premises:
            outcome.turns.append(t)
            yield CruxMessage(room_id=room_id, message=t, room_phase="convergence")

    # Phase 3: convergence statements. When the exit check has not already found one nameable
    # point, a convergence check; if the cores differ, ``extra_rounds`` more rounds and another
    # check, up to ``max_convergence_checks`` checks (or the cap).
    checks = 0
    while settings.three_phase and not room_full(1) and checks < settings.max_convergence_checks:
        cores = spoken(await sp.timeline.parallel(
            "room-convergence", [turn(pid, prompts.ROOM_CONVERGENCE, "convergence") for pid in (a, b)]
        ))
        if not cores:  # neither side produced a usable statement: stop rather than loop
            break
        for t in cores:
            outcome.turns.append(t)
            yield CruxMessage(room_id=room_id, message=t, room_phase="convergence")
        if outcome.surfaced:
            # The exit check already found one nameable point: the check below could only
            # start more rounds, which are not run then; the card reads both statements.
            break
        statements = "\n".join(f"- {names[t.persona_id]}: {t.dialogue}" for t in cores)
        hints = sp.hints(
            turns=turn_hints(cores), focus=outcome.question, phase="convergence"
        )
        verdict = await sp.structured(
            EXIT_CHECK, prompts.CONVERGENCE_CHECK.format(topic=topic, statements=statements), ConvergenceReply, hints
        )
        outcome.exit_checks += 1
        checks += 1
        if verdict is not None and verdict.same_core:
            outcome.converged = True
            break
        if checks >= settings.max_convergence_checks:
            break
        rounds = 2 * settings.extra_rounds
        async for ev in exchange(rounds, rounds):
            yield ev
    if not settings.three_phase:
        outcome.converged = outcome.surfaced  # the loop ends when the exit check says so

    outcome.card = await extract_card(
        sp, (a, b), [*outcome.opened_by, *outcome.turns], outcome.question, claims=claims, card_id=f"card-{room_id}", room_id=room_id,
        aspect=aspect, source_messages=source_messages,
    )
    for warning in sp.drain():
        yield warning
    if outcome.card is not None:
        yield CruxCardPosted(card=outcome.card)
    yield CruxRoomComplete(
        room_id=room_id, turns=len(outcome.turns), card_id=outcome.card.id if outcome.card else None
    )


# A corpus chunk in the card prompt's menu: cut at a sentence or word, never inside a word.
CHUNK_CHARS = 240


def _chunk_menu(sp: Speakers, pid: str, focus: str, limit: int = 6) -> list[tuple[str, str]]:
    """The corpus chunks shown for ``pid`` on a card prompt: (id, the line that shows it)."""
    persona = sp.ctx.personas[pid]
    node_chunks = [c for n in relevant_nodes(persona, focus, k=3) for c in n.grounding]
    ordered = list(dict.fromkeys(node_chunks + [c.id for c in persona.corpus]))[:limit]
    chunks = {c.id: c for c in persona.corpus}
    return [(cid, f"  [{cid}] {clip(chunks[cid].text, CHUNK_CHARS)} (source: {chunks[cid].source})")
            for cid in ordered if cid in chunks]


def _card_entries(reply: CardReply, names: Mapping[str, str]) -> tuple[dict[str, CardPersonaReply], list[str]]:
    """The reply's positions by persona id, each named by id, display name or a short form
    (:func:`persona_ref`); and the references that name none of ``names`` (or one already given)."""
    entries: dict[str, CardPersonaReply] = {}
    refused: list[str] = []
    for e in reply.personas:
        pid = persona_ref(e.persona_id, names)
        if pid is None or pid in entries:
            refused.append(e.persona_id)
        else:
            entries[pid] = e
    return entries, refused


DIAGNOSIS_WORDS = 40  # words of a card's diagnosis quoted back when its question restated the topic


def _card_problem(
    reply: CardReply, names: Mapping[str, str], topic: str, claims: ClaimIndex, conversation: str = ""
) -> str | None:
    """What makes a card reply unusable, in words the model can act on; None when it is fine.
    A question must name something the ``conversation`` said, beyond the instruction's own
    words: Qwen2.5-Coder-1.5B answered "What is the specific assumption on which the two
    positions (participants, speakers) part ways?"."""
    given, _ = _card_entries(reply, names)
    missing = [pid for pid in names if pid not in given]
    if missing:
        return f"it gives no position for {', '.join(missing)}; give one entry per participant"
    if within_topic(reply.diagnosis, prompts.CARD):
        # Qwen2.5-Coder-1.5B (a Polis debate) wrote the question rule as its diagnosis: "The
        # claim named in diagnosis, as a yes/no question that evidence or argument could settle, ..."
        return ("its diagnosis repeats the instruction; say in your own words which claim one of them holds and the "
                "other denies")
    if claims.same(reply.question, topic) or restates_topic(reply.question, topic):
        # The model's own diagnosis, quoted back when it names something beyond the topic: Qwen
        # 1.5B diagnosed "Schiff argues that ... scarcity alone does not create value" and, told
        # only that its question restated the topic, asked the topic again.
        named = reply.diagnosis.strip()
        if named and not restates_topic(named, topic) and content_words(named) - content_words(topic):
            return (f"its question {quote(reply.question)} restates the debate topic, while your diagnosis names what "
                    f"lies under it: {quote(clipped(named, DIAGNOSIS_WORDS))}; ask the claim your diagnosis names, as the yes/no question")
        return f"its question {quote(reply.question)} restates the debate topic; name the premise buried under the disagreement instead"
    substance = content_words(reply.question) - content_words(prompts.CARD)
    if within_topic(reply.question, prompts.CARD) or (conversation and not substance & content_words(conversation)):
        return ("its question repeats the instruction and names nothing from this conversation; ask about "
                "the one assumption these two speakers part ways on, in the words of this conversation")
    return None


async def extract_card(
    sp: Speakers,
    personas: tuple[str, str],
    turns: Sequence[DialogueTurn],
    question: str,
    *,
    claims: ClaimIndex,
    card_id: str,
    room_id: str = "",
    setting: str = "A crux room",
    aspect: Aspect | None = None,
    source_messages: Sequence[str] = (),
) -> CruxCard | None:
    """Strong-tier card extraction from a whole conversation (a room's, or a clash's), then
    validation: a bad card is asked for once more with its problem stated, then dropped with a
    warning; unknown grounding ids are dropped from the card with a warning."""
    a, b = personas
    topic = sp.ctx.config.topic
    shown = labels([a, b, *(t.persona_id for t in turns)], sp.names)  # names, which the model copies, not ids
    transcript = "\n".join(f"{shown[t.persona_id]}: {t.dialogue}" for t in turns)
    menus = {pid: _chunk_menu(sp, pid, question) for pid in (a, b)}
    chunks = "\n".join(f"{shown[pid]}:\n" + "\n".join(line for _, line in menus[pid]) for pid in (a, b))
    user = prompts.CARD.format(
        aspect=aspect.label if aspect else "(channel)", setting=setting, names=f"{shown[a]} and {shown[b]}",
        question=question, transcript=transcript, chunks=chunks,
    )
    hints = sp.hints(  # the prompt does not show the topic, so neither do the hints
        topic="", turns=turn_hints(turns), focus=question,
        aspect=aspect.label if aspect else None, phase="card",
    )
    pair_names = {pid: sp.names.get(pid, pid) for pid in (a, b)}
    said = {pid: [t.dialogue for t in turns if t.persona_id == pid] for pid in (a, b)}
    guard = SideGuard(
        lambda r: [Side(e.persona_id, persona_ref(e.persona_id, pair_names), e.quote) for e in r.personas], said, pair_names,
    )
    schema = card_reply_for({shown[pid]: [s for text in said[pid] for s in quotable_sentences(text)] for pid in (a, b)},
                            {shown[pid]: [cid for cid, _ in menus[pid]] for pid in (a, b)})
    reply = await sp.structured(CARD, user, schema, hints, validation=guard.context())
    problem = _card_problem(reply, pair_names, topic, claims, f"{topic}\n{question}\n{transcript}") if reply is not None else None
    if reply is not None and problem is not None:
        retry = f"{user}\n\nYour previous card was unusable: {problem}. Answer again, in the same JSON."
        reply = await sp.structured(CARD, retry, schema, hints.model_copy(update={"phase": Phase.card_repair}), validation=guard.context())
        problem = _card_problem(reply, pair_names, topic, claims, f"{topic}\n{question}\n{transcript}") if reply is not None else None
        if reply is not None and problem is not None:
            sp.warn("card", f"crux card of {setting.lower()} on \"{question}\" dropped after one repair: {problem}.")
            sp.rejected_cards.append({"card_id": card_id, "room_id": room_id, "reason": problem})
            return None
    drop, events = side_outcome(sp.ctx.scratch, guard, reply, sp.names)
    sp.pending += events
    if reply is None:
        return None
    entries, refused = _card_entries(reply, pair_names)
    entries = {pid: e for pid, e in entries.items() if ("", pid) not in drop}
    if drop and len(entries) < 2:
        sp.warn("card", f"crux card of {setting.lower()} on \"{question}\" dropped: fewer than two of its sides quote "
                        "what their participant said.")
        sp.rejected_cards.append({"card_id": card_id, "room_id": room_id, "reason": "ungrounded sides"})
        return None
    if refused:
        sp.warn("card", f"crux card {card_id}: position(s) of {', '.join(quote(r) for r in refused)} dropped: "
                        f"they name neither {shown[a]} nor {shown[b]}, or one already given.")
    positions = {}
    for pid, entry in entries.items():
        corpus = {c.id: c for c in sp.ctx.personas[pid].corpus}
        bad = [q for q in entry.grounding_quotes if q not in corpus]
        if bad:
            sp.warn(
                "card",
                f"crux card {card_id}: grounding of {pid} cites corpus chunk id(s) {', '.join(bad)} that do not "
                f"exist in {pid}'s corpus; dropped them and kept the card.",
            )
            sp.rejected_cards.append({"card_id": card_id, "room_id": room_id, "reason": "unknown grounding chunk", "persona_id": pid, "chunk_ids": bad})
        good = list(dict.fromkeys(q for q in entry.grounding_quotes if q in corpus))
        positions[pid] = CruxCardPosition(
            position=entry.position, reasoning=entry.reasoning, falsifier=entry.falsifier, grounding_quotes=good,
            grounding=[GroundingQuote(chunk_id=q, text=corpus[q].text, source=corpus[q].source) for q in good],
        )
    question = reply.question
    if (about_world := world_question(question, sp.names)) is not None:
        sp.warn("card", f"crux card {card_id}: its question asks about a person or the debate, not the claim, {quote(question)}; asked as {quote(about_world)}.")
        question = about_world
    return CruxCard(
        id=card_id,
        question=question,
        disagreement_type=reply.disagreement_type,
        diagnosis=reply.diagnosis,
        resolved=reply.resolved,
        resolution=reply.resolution,
        personas=positions,
        source_aspect=aspect.id if aspect else "",
        source_messages=list(dict.fromkeys([*source_messages, *(t.id for t in turns)])),
        crux_room_id=room_id,
    )
