"""The simulator's speaker: how a persona speaks, for every purpose where one does.

It answers the shared ``opening`` itself; each engine's simulator module (e.g.
``crux_lab/engines/crux_room/sim.py``) answers its own speaking purposes with :func:`speech`.

The answer is built from the speaker's ground-truth stance on the proposition in focus,
the turns so far (hints), and the failure knobs. The output fills whichever of the common
fields the request's schema has (``dialogue``/``utterance``/``text``..., ``move``, ``stance``,
``confidence``, ``reasoning``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from crux_lab.llm.base import LLMRequest
from crux_lab.llm.purposes import Purpose
from crux_lab.llm.simulated.core import (
    OPPOSITE,
    VAGUE_MARKERS,
    ReadTurn,
    SimContext,
    deny,
    fired_trigger,
    handler,
    lower_first,
    restates_in_words,
)
from crux_lab.llm.simulated.handlers_worldview import worldview_positions
from crux_lab.personas.models import Persona, Proposition, PropositionStance, StanceValue

_WORDS = re.compile(r"[a-z0-9]+")
TEXT_FIELDS = ("dialogue", "utterance", "text", "content", "message", "statement", "argument")
LONG_PURPOSES = {"opening": 5, "closing": 4, "resolution": 4, "take": 3}


def fill_schema(request: LLMRequest, values: dict[str, Any]) -> dict[str, Any]:
    """Map common values onto the field names of the request's output schema."""
    if request.output_schema is None:
        return values
    fields = request.output_schema.model_fields
    out: dict[str, Any] = {}
    for name in fields:
        if name in values:
            out[name] = values[name]
        elif name in TEXT_FIELDS and "text" in values:
            out[name] = values["text"]
    return out


def last_opponent_turn(ctx: SimContext, me: str) -> ReadTurn | None:
    for turn in reversed(ctx.turns):
        if turn.speaker_id != me:
            return turn
    return None


VAGUE_CRUX_TEXTS = (
    "I think the core disagreement is that we simply see this differently.",
    "Honestly, we just have different perspectives and priorities here.",
)


def is_vague(text: str) -> bool:
    """True for the generic crux statements the ``vague_crux`` knob produces."""
    return any(m in text for m in VAGUE_MARKERS)


def support_pool(persona: Persona, truth: PropositionStance | None) -> list[str]:
    """What a persona can say for a stance: its stock reason and the beliefs it rests on."""
    if truth is None:
        return []
    pool = [truth.reason]
    if persona.beliefs is not None:
        nodes = {n.id: n for n in persona.beliefs.nodes}
        pool += [nodes[i].concept for i in truth.belief_node_ids if i in nodes]
    return pool


def fresh_support(ctx: SimContext, persona: Persona, truth: PropositionStance | None) -> str | None:
    """A supporting point the speaker has not used yet (repeats only when it has run out)."""
    pool = support_pool(persona, truth)
    if not pool:
        return None
    said = " ".join(t.text for t in ctx.turns if t.speaker_id == persona.id)
    unused = [x for x in pool if x.rstrip(".") not in said]
    return str(ctx.pick(unused or pool))


def next_topic(ctx: SimContext, me: str, exclude: set[str]) -> Proposition | None:
    """The least-discussed proposition on which someone was heard to disagree with ``me``
    (else any the speaker holds)."""
    contested = {p.id: p for p in ctx.contested(me)}
    used: dict[str, int] = {}
    for turn in ctx.turns:
        for pid in turn.proposition_ids:
            used[pid] = used.get(pid, 0) + 1
    pool = [p for p in contested.values() if p.id not in exclude]
    if not pool:
        pool = [p for p in ctx.deck_propositions() if p.id not in exclude]
    if not pool:
        return None
    return min(pool, key=lambda p: (used.get(p.id, 0), p.id))


def sharpest_contested(ctx: SimContext, me: str) -> Proposition | None:
    """The disagreement heard in the turns that ``me`` holds most confidently (its crux)."""
    scored = [((t.confidence if (t := ctx.truth(me, p.id)) else 0.0), p) for p in ctx.contested(me)]
    return min(scored, key=lambda sp: (-sp[0], sp[1].id))[1] if scored else None


def buried_premise(ctx: SimContext, me: str, prop: Proposition) -> Proposition:
    """Asked for the premise under a disagreement, a persona whose claim in focus is the topic
    itself names instead the claim it was heard to disagree on that bears most on it."""
    topic = ctx.recognize(ctx.hints.topic)
    if topic is None or topic.id != prop.id:
        return prop
    under = [p for p in ctx.contested(me) if p.id != prop.id]
    context = f"{ctx.hints.focus or ''} {ctx.hints.topic}"
    return min(under, key=lambda p: (-ctx.relevance(p, context), p.id)) if under else prop


def recent_run(ctx: SimContext) -> tuple[str | None, int]:
    """The proposition the last turns were about and for how many turns in a row."""
    run_prop: str | None = None
    n = 0
    for turn in reversed(ctx.turns):
        pid = turn.proposition_ids[0] if turn.proposition_ids else None
        if run_prop is None:
            run_prop = pid
        if pid is None or pid != run_prop:
            break
        n += 1
    return run_prop, n


def speak(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Decide the move and render the utterance of ``hints.speaker_id``.

    Engine hints it reacts to (all optional, all generic): ``steering`` (``circling``:
    say what would change your mind; ``stuck``: move to the next disagreement; ``crux_seeking``:
    name the crux) and ``extra['positions']`` (how many positions an opening states).
    """
    me = ctx.persona()
    prop = ctx.focus()
    purpose = request.purpose
    phase = ctx.hints.phase or ""
    steering = str(ctx.hints.steering or "")
    dialogue = purpose == "dialogue_turn"
    moved_on = False
    if dialogue and prop is not None:
        run_prop, run_len = recent_run(ctx)
        # agreement heard on the claim in focus, turn after turn: look for where the two differ
        agreed = ctx.heard(me.id).get(prop.id) == ctx.current_stance(me.id, prop.id) and run_len >= 2
        # Its own view on the topic already stated (its request lists its own points): a speaker
        # goes on to a premise under it, as the request shows no transcript to follow.
        stated = restates_in_words(prop.text, ctx.hints.topic) and any(
            t.speaker_id == me.id and prop.id in t.proposition_ids for t in ctx.turns
        )
        if steering == "stuck" or stated or ((run_len >= 4 or agreed) and run_prop == prop.id and ctx.chance(0.5)):
            nxt = next_topic(ctx, me.id, {prop.id})
            if nxt is not None:
                prop, moved_on = nxt, True
        elif phase == "crux_seeking" and not any(prop.id == p.id for p in ctx.contested(me.id)):
            prop = sharpest_contested(ctx, me.id) or prop
    if phase == "convergence" and prop is not None:
        prop = buried_premise(ctx, me.id, prop)
    stance: StanceValue | None = ctx.current_stance(me.id, prop.id) if prop else None
    truth = me.stance_on(prop.id) if prop else None
    drifted = ctx.chance(ctx.knobs.drift)
    sycophantic = ctx.chance(ctx.knobs.sycophancy)
    if drifted and stance is not None:
        stance = OPPOSITE[stance] if stance != "uncertain" else "pro"

    against = last_opponent_turn(ctx, me.id)
    named_reason: str | None = None
    move = "CLAIM"
    if purpose in ("opening", "take", "closing", "resolution") or not ctx.turns:
        move = "CLAIM"
    elif moved_on:
        move = "REFRAME" if steering != "stuck" else "CLAIM"
    elif against is not None and prop is not None and prop.id in against.proposition_ids:
        opp_stance = against.stance
        trig = fired_trigger(truth, against) if truth else None
        if trig is not None:
            move, named_reason = "CONCEDE", trig.description
            stance = trig.new_stance
        elif sycophantic and stance in ("pro", "con") and opp_stance not in (None, stance):
            move, stance = "CONCEDE", "uncertain"
        elif dialogue and truth is not None and stance in ("pro", "con") and opp_stance not in (None, stance) and (
            point := persuasive_point(ctx, me.id, against, truth.confidence)
        ):
            # A weakly held stance, pressed by a confident opponent with fresh points: the
            # persona grants the point (a partial concession with a named reason).
            move, stance, named_reason = "CONCEDE", "uncertain", point
        elif against.move == "PROPOSE_CRUX" or phase in ("crux_seeking", "convergence"):
            move = "PROPOSE_CRUX"
        elif steering == "circling":
            move = "CLARIFY"
        elif opp_stance is not None and opp_stance != stance and stance != "uncertain":
            move = "CHALLENGE" if ctx.chance(0.75) else ctx.pick(["CLARIFY", "REFRAME"])
        else:
            move = ctx.pick(["CLARIFY", "CLAIM", "REFRAME"])
    elif phase in ("crux_seeking", "convergence"):
        move = "PROPOSE_CRUX"
    else:
        move = "CLAIM" if against is None else ctx.pick(["CHALLENGE", "CLAIM", "CLARIFY"])

    sentences = LONG_PURPOSES.get(purpose, 2 if purpose in ("channel_message",) else 3)
    if phase in ("position", "convergence"):
        sentences = max(sentences, 4)  # a stated position names what would change the speaker's mind
    if steering == "circling" and move == "CLARIFY":
        sentences = 4  # names the flip condition: "What would change my mind: ..."
    support = fresh_support(ctx, me, truth) if dialogue and move != "CONCEDE" else None
    text = ctx.utter(me, prop, stance, move, sentences=sentences, against=against, support=support)
    if move == "PROPOSE_CRUX" and ctx.chance(ctx.knobs.vague_crux):
        text = str(ctx.pick(VAGUE_CRUX_TEXTS))
    if move == "CONCEDE" and named_reason and truth is not None and any(
        named_reason == t.description for t in truth.flip_conditions
    ):
        text += f" You have met my condition: {named_reason.rstrip('.')}."
    elif move == "CONCEDE" and named_reason:
        text += " You make a fair point there."  # not quoted back: quoting could fire the opponent's own triggers
    if purpose == "opening" and prop is not None and int(ctx.hints.extra.get("positions", 1) or 1) > 1:
        extra_props = opening_positions(ctx, me, prop, int(ctx.hints.extra["positions"]) - 1)
        for p2 in extra_props:
            s2 = ctx.current_stance(me.id, p2.id)
            t2 = me.stance_on(p2.id)
            claim = {
                "pro": p2.text,
                "con": deny(p2.text),
            }.get(s2 or "", f"I am not sure that {lower_first(p2.text.rstrip('.'))}.")
            why = f" {t2.reason}" if t2 else ""
            text += f" Beyond that, {lower_first(claim.rstrip('.'))}.{why}"
    if move != "CONCEDE":
        text = say_anew(ctx, me, prop, truth, text, against)
    confidence = truth.confidence if truth else 0.5
    addresses = shown_ids_about(ctx, prop)
    if move == "CONCEDE":
        confidence = round(confidence * 0.5, 3)
    return fill_schema(
        request,
        {
            "text": text,
            "move": move,
            "stance": stance or "uncertain",
            "confidence": confidence,
            "reasoning": truth.reason if truth else "",
            "position": {"pro": "YES", "con": "NO"}.get(stance or "", "NUANCED"),
            "addresses": addresses,
            "named_reason": named_reason,
            # the point answered, in a few words: the first words of the turn it answers
            "answers": " ".join(against.text.split()[:10]) if against is not None else None,
        },
    )


MAX_NEW_POINTS = 3  # fresh points a turn said anew adds at most
SAY_ANEW_AT = 0.5  # a draft sharing this share of its word triples with an earlier text is said anew


def _triples(text: str) -> set[tuple[str, ...]]:
    w = _WORDS.findall(text.lower())
    return {tuple(w[i : i + 3]) for i in range(len(w) - 2)} if len(w) >= 3 else ({tuple(w)} if w else set())


def repeats(text: str, earlier: Sequence[str]) -> float:
    """The largest share of ``text``'s word triples that one of the ``earlier`` texts has.

    >>> repeats("Gold held its value for centuries.", ["Gold held its value for centuries, they say."])
    1.0
    >>> repeats("Bitcoin is scarce.", ["Gold held its value."])
    0.0
    """
    mine = _triples(text)
    if not mine:
        return 0.0
    return max((len(mine & _triples(e)) / len(mine) for e in earlier), default=0.0)


QUOTED = re.compile(r'"([^"]{12,}?)"(?=[);,.:]|\s|$)')


def quoted_in_repair(ctx: SimContext) -> list[str]:
    """The texts a repair message quotes back (a guard quotes the turn an answer repeated,
    which the request may not have shown): read from the repair itself, like any reader.

    >>> from crux_lab.llm.simulated.options import SimulatorKnobs
    >>> import random
    >>> from crux_lab.llm.base import Hints
    >>> c = SimContext(random.Random(0), SimulatorKnobs(), {}, {}, Hints(), repair='repeats your turn (that turn: "Gold held its value."); say it anew')
    >>> quoted_in_repair(c)
    ['Gold held its value.']
    """
    return [m.group(1) for m in QUOTED.finditer(ctx.repair)] if ctx.repair else []


def fresh_material(ctx: SimContext, persona: Persona, truth: PropositionStance | None, prop: Proposition) -> list[str]:
    """What the persona can still say on ``prop`` that neither the request's turns nor a turn
    its repair quotes already hold: its reasons and beliefs, its flip conditions, then its own
    corpus on the subject."""
    said = " ".join([t.text for t in ctx.turns] + quoted_in_repair(ctx)).lower()
    pool = support_pool(persona, truth)
    if truth is not None:
        pool += [f"What would change my mind: {lower_first(f.description.rstrip('.'))}" for f in truth.flip_conditions]
    about = set(_WORDS.findall(f"{prop.text} {prop.question}".lower()))
    chunks = sorted(persona.corpus, key=lambda c: (-len(about & set(_WORDS.findall(c.text.lower()))), c.id))
    pool += [c.text for c in chunks]
    out = []
    for item in pool:
        first = item.strip().split(". ")[0].rstrip(".")
        if first and first.lower() not in said and first not in out:
            out.append(first)
    return out


def say_anew(
    ctx: SimContext, persona: Persona, prop: Proposition | None, truth: PropositionStance | None, text: str,
    against: ReadTurn | None,
) -> str:
    """The draft ``text``, or, when it largely repeats a turn the request shows (its own or
    another speaker's) or the topic, or a guard sent it back, the same claim said anew: its
    first sentence (the claim, which the reader recognises) kept, an answer to the latest
    opponent's words, and points the persona has not made yet. Deterministic per seed."""
    earlier = [t.text for t in ctx.turns] + [ctx.hints.topic] + quoted_in_repair(ctx)
    if prop is None or (not ctx.repair and repeats(text, earlier) < SAY_ANEW_AT):
        return text
    sentences = [x for x in text.split(". ") if x.strip()]
    head = sentences[0].rstrip(".") + "."
    if len(sentences) > 1 and len(head.split()) < 4:  # a voice opener ("Hard money."): keep the claim too
        head = f"{head} {sentences[1].rstrip('.')}."
    parts = [head]
    if against is not None and against.text.strip():
        theirs = [x.strip().rstrip(".") for x in against.text.split(". ") if x.strip()]
        quoted = " ".join(ctx.pick(theirs).split()[:8]) if theirs else ""
        if quoted:
            parts.insert(0, f"You say \"{quoted}…\", and that does not settle it.")
    material = fresh_material(ctx, persona, truth, prop)[:8]
    ctx.rng.shuffle(material)
    for point in material[:MAX_NEW_POINTS]:
        parts.append(point.rstrip(".") + ".")
        if len(parts) >= 3 and not ctx.repair and repeats(" ".join(parts), earlier) < SAY_ANEW_AT:
            break  # sent back, it says all it can that is new: the turn it repeated may be one it was not shown
    return " ".join(parts).replace("?.", "?")


def shown_ids_about(ctx: SimContext, prop: Proposition | None) -> list[str]:
    """The ids, among those the prompt listed (``hints.extra['shown']``: id -> text), of the
    items that state ``prop``, as the speaker reads them."""
    shown = ctx.hints.extra.get("shown") or {}
    if prop is None or not isinstance(shown, dict):
        return []
    return [str(i) for i, text in shown.items() if (p := ctx.recognize(str(text))) is not None and p.id == prop.id]


PERSUADABLE_BELOW = 0.65  # a stance held with less confidence than this can be argued down
PRESSING_POINTS = 3  # by an opponent who has made this many distinct points on it (as heard)


def persuasive_point(ctx: SimContext, me: str, against: ReadTurn, my_confidence: float) -> str | None:
    """The opponent's latest point if it should persuade ``me`` to grant part of its case."""
    if my_confidence >= PERSUADABLE_BELOW or not against.proposition_ids:
        return None
    pid = against.proposition_ids[0]
    points = {t.text for t in ctx.turns if t.speaker_id == against.speaker_id and pid in t.proposition_ids[:1]}
    if len(points) < PRESSING_POINTS:
        return None
    sentences = [x.strip() for x in against.text.split(". ") if x.strip()]
    return sentences[1].rstrip(".") if len(sentences) > 1 else None


def opening_positions(ctx: SimContext, me: Persona, primary: Proposition, n: int) -> list[Proposition]:
    """The ``n`` further positions an opening states: the persona's most confident held stances,
    those it heard disputed first (what it most wants on the record)."""
    contested = {p.id for p in ctx.contested(me.id)}
    cands = []
    for st in me.stances.stances:
        if st.proposition_id == primary.id or st.stance == "uncertain" or st.proposition_id not in ctx.propositions:
            continue
        cands.append((st.proposition_id not in contested, -st.confidence, st.proposition_id))
    cands.sort()
    return [ctx.propositions[c[2]] for c in cands[:n]]


@handler(Purpose.opening)
def speech(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """A persona speaks: the answer to the shared opening, and to every engine's purpose where
    a persona speaks (each engine's simulator module answers its own with this)."""
    reply = speak(ctx, request)
    schema = request.output_schema
    if isinstance(reply, dict) and schema is not None and "positions" in schema.model_fields:
        # an opening that also asks for the speaker's positions and their assumptions

        stated = worldview_positions(ctx, request)
        reply["positions"] = stated["positions"] if isinstance(stated, dict) else []
    return reply
