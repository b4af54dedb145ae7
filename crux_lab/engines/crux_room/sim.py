"""The simulator's answers to the panel and crux-room engines' purposes (:mod:`.purposes`),
registered with :func:`crux_lab.llm.simulated.handler`.

Extractor roles: ``decompose``, ``detect_disagreement``, ``exit_check``, ``card``,
``summarize`` and ``anti_sycophancy_check``. Speech itself (take, rebuttal, crux_turn, closing,
channel_message) is the simulator's speaker (:func:`crux_lab.llm.simulated.handlers_speech.speech`,
which answers the shared opening too).

These handlers answer from what the request shows, as a model reading the prompt would: the
turn texts (``ctx.turns``, read with :meth:`SimContext.recognize`, so they misread with
probability ``knobs.misread``), the claim the prompt puts in front of them (``hints.focus``),
the topic, and, for the card, the corpus chunks the prompt lists. They answer in their own
words (:meth:`SimContext.paraphrase`), classify disagreement types themselves
(:meth:`SimContext.classify`), and never copy a persona's ground-truth stance or type. A
little seeded noise gives majority votes and exit checks work to do; ``vague_crux`` makes
detections and cards generic.
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import combinations
from typing import Any

from crux_lab.engines.crux_room.purposes import (
    ANTI_SYCOPHANCY_CHECK,
    CARD,
    CHANNEL_MESSAGE,
    CLOSING,
    CRUX_TURN,
    DECOMPOSE,
    DETECT_DISAGREEMENT,
    EXIT_CHECK,
    REBUTTAL,
    SUMMARIZE,
    TAKE,
)
from crux_lab.llm.base import LLMRequest
from crux_lab.llm.simulated.core import (
    HandlerResult,
    ReadTurn,
    SimContext,
    fired_trigger,
    handler,
    lower_first,
    split_sentences,
    words,
)
from crux_lab.llm.simulated.handlers_speech import speech
from crux_lab.paraphrase import paraphrase
from crux_lab.personas.models import Proposition

# Probability that one detection vote misses a real opposition stated once (an opposition both
# sides stated k times is missed with DETECT_MISS ** k), or invents a vague one.
DETECT_MISS = 0.15
DETECT_SPURIOUS = 0.1
# Probability that an exit check answers wrongly.
EXIT_NOISE = 0.1

CARD_POSITION = {"pro": "YES", "con": "NO"}
_CONCEDE = re.compile(r"\b(i'll grant|you're right|you are right|i now agree|fair point|i concede)\b", re.I)
_FALSIFIER = re.compile(r"what would change my mind:\s*([^.]+)", re.I)
_CHUNK = re.compile(r"^\s*\[([^\]]+)\]\s*(.*)$")
_LEADS = re.compile(r"^(in short,|the point is that|it rests on|my answer:|i disagree:)\s*", re.I)


def _schema_fields(request: LLMRequest) -> set[str]:
    return set(request.output_schema.model_fields) if request.output_schema is not None else set()


def _name(ctx: SimContext, pid: str) -> str:
    return ctx.personas[pid].name if pid in ctx.personas else pid


def _opposed(ctx: SimContext, turns: list[ReadTurn]) -> list[tuple[str, str, Proposition]]:
    """(a, b, proposition) for every pair of speakers whose turns, as read, took opposite sides
    on one proposition; in order of first appearance."""
    last: dict[tuple[str, str], str] = {}
    first_seen: dict[str, int] = {}
    for n, t in enumerate(turns):
        for pid, stance in ctx.stances_in(t).items():
            last[(t.speaker_id, pid)] = stance
            first_seen.setdefault(pid, n)
    speakers = list(dict.fromkeys(t.speaker_id for t in turns))
    out = []
    for a, b in combinations(speakers, 2):
        for pid in sorted({p for (s, p) in last if s == a}, key=lambda p: first_seen[p]):
            if {last.get((a, pid)), last.get((b, pid))} == {"pro", "con"}:
                out.append((a, b, ctx.propositions[pid]))
    return out


@handler(DECOMPOSE)
def decompose(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Aspects of the topic: the areas of the debate most relevant to it, each with one
    sub-question in the extractor's own words."""
    n = int(ctx.hints.extra.get("n_aspects", 3))
    props = ctx.rank_propositions(ctx.hints.topic)
    groups: dict[str, list[Proposition]] = {}
    for p in props:
        groups.setdefault(p.aspect or p.question, []).append(p)
    aspects = []
    for i, (label, members) in enumerate(list(groups.items())[:n], start=1):
        aspects.append({"id": f"a{i}", "label": label, "description": paraphrase(members[0].text, "question", ctx.rng)})  # a planner: no turns to read
    if not aspects:
        aspects = [{"id": "a1", "label": ctx.hints.topic, "description": "The topic as a whole."}]
    return {"aspects": aspects}


@handler(DETECT_DISAGREEMENT)
def detect(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Boolean decomposition from reading the statements: two speakers whose texts take
    opposite sides on one claim are a direct, specific opposition on that claim (named in the
    reader's words); relevance is word overlap with the topic and aspect."""
    items = []
    context = f"{ctx.hints.topic} {ctx.hints.aspect or ''}"
    shown = ctx.hints.extra.get("shown") or {}
    for a, b, prop in _opposed(ctx, ctx.turns):
        said = [sum(1 for t in ctx.turns if t.speaker_id == who and prop.id in t.proposition_ids) for who in (a, b)]
        if ctx.chance(DETECT_MISS ** max(1, min(said))):
            continue
        # a listed claim the reader recognises as this one is named by its id
        listed = next((str(i) for i, text in shown.items() if (p := ctx.recognize(str(text))) is not None and p.id == prop.id), None)
        items.append(
            {
                "has_direct_opposition": True,
                "has_specific_claim": not ctx.chance(ctx.knobs.vague_crux),
                "topic_relevant": ctx.relevance(prop, context) > 0,
                "personas": [a, b],
                "claim": ctx.paraphrase(prop, "question"),
                "claim_id": listed,
            }
        )
    speakers = list(dict.fromkeys(t.speaker_id for t in ctx.turns))
    if len(speakers) >= 2 and ctx.chance(DETECT_SPURIOUS):
        a, b = ctx.rng.sample(speakers, 2)
        items.append(
            {
                "has_direct_opposition": True,
                "has_specific_claim": False,
                "topic_relevant": True,
                "personas": [a, b],
                "claim": "they see the issue differently",
            }
        )
    return {"disagreements": items}


@handler(EXIT_CHECK)
def exit_check(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Exit check and convergence check, answered from the room's turns as read."""
    turns = ctx.turns
    last_by: dict[str, ReadTurn] = {}
    for t in turns:
        last_by[t.speaker_id] = t
    finals = list(last_by.values())[-2:]
    shared = sorted(set(finals[0].proposition_ids) & set(finals[1].proposition_ids)) if len(finals) == 2 else []
    read = [ctx.stances_in(t) for t in finals]
    if "same_core" in _schema_fields(request):
        same = bool(shared)
        if ctx.chance(EXIT_NOISE):
            same = not same
        core = ""
        if same and shared and shared[0] in ctx.propositions:
            core = ctx.paraphrase(ctx.propositions[finals[0].proposition_ids[0] if finals[0].proposition_ids[0] in shared else shared[0]], "claim")
        return {"same_core": same, "core": core}
    exchange = int(ctx.hints.extra.get("exchange_turns", len(turns)))
    conceded = any(t.move == "CONCEDE" for t in turns[-2:])
    opposed = any({read[0].get(p), read[1].get(p)} == {"pro", "con"} for p in shared)
    narrowing = any(t.move in ("PROPOSE_CRUX", "REFRAME") for t in turns[-2:])
    surfaced = conceded or (opposed and (exchange >= 4 or narrowing))
    if ctx.chance(EXIT_NOISE):
        surfaced = not surfaced
    return {"crux_surfaced": surfaced, "reason": "positions narrowed to one claim" if surfaced else "still broad"}


def _premise(ctx: SimContext, room: list[str], avoid: set[str]) -> Proposition | None:
    """The claim a conversation's disagreement rests on, as a reader finds it: a claim the two
    took opposite sides on (those named as the core of the disagreement first), not one that
    merely restates the topic; else the claim the prompt asked about; else any claim stated."""
    said: Counter[str] = Counter()
    side: dict[tuple[str, str], str] = {}
    for t in ctx.turns:
        weight = 3 if t.move == "PROPOSE_CRUX" else 1
        for pid, stance in ctx.stances_in(t).items():
            said[pid] += weight
            if t.speaker_id in room:
                side[(t.speaker_id, pid)] = stance
    opposed = [pid for pid in said if len(room) == 2 and {side.get((room[0], pid)), side.get((room[1], pid))} == {"pro", "con"}]
    for pool in (opposed, list(said)):
        ranked = sorted((p for p in pool if p not in avoid), key=lambda p: -said[p])
        if ranked:
            return ctx.propositions[ranked[0]]
    focus = ctx.recognize(ctx.hints.focus or "")
    if focus is not None and focus.id not in avoid:
        return focus
    ranked = [p for p, _ in said.most_common() if p in ctx.propositions]
    return ctx.propositions[ranked[0]] if ranked else focus


def _chunk_menu(ctx: SimContext, request: LLMRequest) -> dict[str, tuple[str, dict[str, str]]]:
    """The corpus chunks the card prompt lists, per participant: ``{persona id: (the label the
    prompt gives them (a display name, or an id), {chunk id: text})}``."""
    by_label = {key.lower(): pid for pid, p in ctx.personas.items() for key in (pid, p.name)}
    return {by_label[label.lower()]: (label, chunks) for label, chunks in _labelled_menu(request).items() if label.lower() in by_label}


def _labelled_menu(request: LLMRequest) -> dict[str, dict[str, str]]:
    menu: dict[str, dict[str, str]] = {}
    current: str | None = None
    section = request.user.split("Corpus chunks each participant may cite, by id:", 1)[-1]
    for line in section.splitlines():
        if line.strip().startswith("Extract the crux card"):
            break
        if line.endswith(":") and not line.startswith(" "):
            current = line[:-1].strip()
            menu[current] = {}
        elif current and (m := _CHUNK.match(line)):
            menu[current][m.group(1)] = m.group(2)
    return menu


def _own_words(ctx: SimContext, pid: str, prop: Proposition | None) -> tuple[str | None, str, str | None]:
    """What a participant said about ``prop``: (stance as read, reasoning sentences, falsifier)."""
    stance: str | None = None
    reasoning = ""
    falsifier: str | None = None
    for t in ctx.turns:
        if t.speaker_id != pid:
            continue
        if (m := _FALSIFIER.search(t.text)) is not None:
            falsifier = f"I would change my mind if {lower_first(m.group(1).strip())}."
        read = ctx.stances_in(t)
        if prop is not None and prop.id in read:
            stance = read[prop.id]
            sentences = [
                s for s in split_sentences(t.text)
                if ctx.recognize(s, at=0.45) is None and not _FALSIFIER.search(s) and len(words(s)) > 3
            ]
            if sentences:
                plain = [_LEADS.sub("", x.strip()) for x in sentences[:2]]
                reasoning = " ".join(x[:1].upper() + x[1:] for x in plain if x)
    return stance, reasoning, falsifier




def own_quote(ctx: SimContext, pid: str, prop: Proposition | None, limit: int = 12) -> str:
    """A few of ``pid``'s own words, copied from the request's turns: the start of a sentence
    of its latest turn on ``prop`` (else of its latest turn); "" when it said nothing."""
    mine = [t for t in ctx.turns if t.speaker_id == pid]
    on = [t for t in mine if prop is not None and prop.id in t.proposition_ids] or mine
    if not on:
        return ""
    sentences = [x for x in split_sentences(on[-1].text) if len(x.split()) >= 4] or [on[-1].text]
    return " ".join(sentences[-1].split()[:limit])


def _clause(text: str) -> str:
    """A sentence as a clause to embed in another: first sentence, no lead-in, lower case."""
    first = (split_sentences(text) or [text])[0]
    return lower_first(_LEADS.sub("", first.strip()).rstrip(".?!"))


def _diagnosis(ctx: SimContext, room: list[str], premise: Proposition, reasons: dict[str, str], stances: dict[str, str | None]) -> str:
    """Why the two part ways, in the reader's words, from what each said."""
    a, b = room[0], room[1]
    claim = _reword(ctx, premise)
    ra, rb = reasons.get(a, ""), reasons.get(b, "")
    if ra and rb and {stances.get(a), stances.get(b)} == {"pro", "con"}:
        pro, con = (a, b) if stances.get(a) == "pro" else (b, a)
        rp = _clause(ra if pro == a else rb)
        rc = _clause(rb if pro == a else ra)
        forms = (
            f"{_name(ctx, pro)} accepts that {claim} because {rp}; {_name(ctx, con)} rejects it because {rc}.",
            f"The split sits underneath the topic: {_name(ctx, pro)} relies on the premise that {claim}, which {_name(ctx, con)} denies ({rc}).",
        )
        return str(ctx.pick(forms))
    return f"Both circle the premise that {claim}, but they never state opposite sides of it plainly."


@handler(CARD)
def card(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """A crux card from reading the conversation: the premise the two took opposite sides on
    (never the topic itself when another premise was stated), each side's position, reasons and
    falsifier as they said them, and grounding chosen from the chunks the prompt lists."""
    room = list(ctx.cast())
    topic = ctx.recognize(ctx.hints.topic)
    avoid = {topic.id} if topic is not None else set()
    # Sent back because its question restated the topic (the repair quotes it): the writer asks
    # about another premise the two parted on, as a model told so does.
    restated = re.search(r'its question "(.+?)" restates the debate topic', f"{ctx.repair}\n{ctx.user}")
    if restated and (was := ctx.recognize(restated.group(1).rstrip("…"))) is not None:
        avoid.add(was.id)
    premise = _premise(ctx, room, avoid)
    vague = ctx.chance(ctx.knobs.vague_crux)
    menu = _chunk_menu(ctx, request)
    question = ctx.paraphrase(premise, "question") if premise is not None else ""
    personas = []
    stances: dict[str, str | None] = {}
    reasons: dict[str, str] = {}
    for pid in room:
        stance, reasoning, falsifier = _own_words(ctx, pid, premise)
        stances[pid], reasons[pid] = stance, reasoning
        label, chunks = menu.get(pid, (pid, {}))
        about = words(f"{reasoning} {question}")
        ranked = sorted(chunks, key=lambda c: (-len(about & words(chunks[c])), c))
        personas.append(
            {
                "persona_id": label,
                "position": CARD_POSITION.get(stance or "", "NUANCED"),
                "reasoning": reasoning or "Did not give a reason on this point.",
                "falsifier": falsifier,
                "grounding_quotes": [c for c in ranked[:1] if about & words(chunks[c])],
                "quote": own_quote(ctx, pid, premise),
            }
        )
    if vague or premise is None:
        return {
            "question": "Whether they see the issue differently",
            "disagreement_type": "claim",
            "diagnosis": "They have different perspectives on the topic.",
            "resolved": False,
            "resolution": None,
            "personas": personas,
        }
    dtype = ctx.classify(question).value
    moved = [t for t in ctx.turns if t.move == "CONCEDE" and t.speaker_id in room and t.named_reason]
    resolved = bool(moved) and {s for s in stances.values()} != {"pro", "con"}
    resolution = None
    if resolved:
        t = moved[-1]
        resolution = f"{_name(ctx, t.speaker_id)} moved after a named argument: {lower_first((t.named_reason or '').rstrip('.'))}."
    elif dtype == "values":
        resolution = "Irreducible: a difference of values, which can only be acknowledged."
    return {
        "question": question,
        "disagreement_type": dtype,
        "diagnosis": _diagnosis(ctx, room, premise, reasons, stances),
        "resolved": resolved,
        "resolution": resolution,
        "personas": personas,
    }


def _reword(ctx: SimContext, prop: Proposition) -> str:
    """The claim as a clause in the reader's own words (reworded until it differs from the deck's)."""
    plain = _clause(prop.text)
    clause = plain
    for _ in range(4):
        clause = _clause(ctx.paraphrase(prop, "claim"))
        if clause.lower() != plain.lower():
            break
    return clause


@handler(SUMMARIZE)
def summarize(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """One or two sentences from reading the round: who argued what, and where they clashed."""
    sides: dict[str, dict[str, list[str]]] = {}
    for t in ctx.turns:
        read = ctx.stances_in(t)
        if t.proposition_ids and read.get(t.proposition_ids[0]) in ("pro", "con"):
            pid = t.proposition_ids[0]
            names = sides.setdefault(pid, {"pro": [], "con": []})[read[pid]]
            if _name(ctx, t.speaker_id) not in names:
                names.append(_name(ctx, t.speaker_id))
    parts = []
    for pid, by in list(sides.items())[:3]:
        clause = _reword(ctx, ctx.propositions[pid])
        pro, con = " and ".join(by["pro"]), " and ".join(by["con"])
        if pro and con:
            parts.append(f"{pro} argued that {clause}, and {con} disputed it")
        elif pro or con:
            parts.append(f"{pro or con} {'argued' if pro else 'denied'} that {clause}")
    text = ("; ".join(parts) + ".") if parts else "The panel restated general views."
    clashes = _opposed(ctx, ctx.turns)
    if clashes:
        a, b, prop = clashes[0]
        text += f" The sharpest clash, between {_name(ctx, a)} and {_name(ctx, b)}, was over whether {_reword(ctx, prop)}."
    return {"summary": text[:1].upper() + text[1:]}


@handler(ANTI_SYCOPHANCY_CHECK)
def anti_sycophancy_check(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Judge the last turn as read: does it capitulate, and if so, does it name a specific claim
    or does the previous turn meet one of the speaker's flip conditions (which the prompt lists)?"""
    if not ctx.turns:
        return {"capitulates": False}
    turn = ctx.turns[-1]
    me = ctx.hints.speaker_id or turn.speaker_id
    capitulates = turn.move == "CONCEDE" or bool(_CONCEDE.search(turn.text))
    named = "met my condition" in turn.text.lower()
    met = False
    previous = [t for t in ctx.turns[:-1] if not me or t.speaker_id != me]
    if previous and turn.proposition_ids and me in ctx.personas:
        truth = ctx.truth(me, turn.proposition_ids[0])
        met = truth is not None and fired_trigger(truth, previous[-1]) is not None
    return {"capitulates": capitulates, "names_specific_claim": named, "flip_condition_met": met}


@handler(TAKE, REBUTTAL, CRUX_TURN, CLOSING, CHANNEL_MESSAGE)
def persona_speaks(ctx: SimContext, request: LLMRequest) -> HandlerResult:
    """A persona's take, rebuttal, crux-room turn, closing or channel message: the simulator's
    speaker, as for every engine."""
    return speech(ctx, request)
