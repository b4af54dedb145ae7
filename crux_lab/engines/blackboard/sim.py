"""Simulator handlers for the blitz, classical and graph engines.

Speaker roles (initial stance, blackboard post, urgency, initial arguments, attacks) act from
the persona's own beliefs; they learn which of its beliefs a claim or an argument states by
reading its text (:meth:`SimContext.recognize`), and name the engine's claims and arguments
only by the ids the prompt listed. Extractor roles (claim decomposition, blackboard summary,
final output, attack validation) know nothing but the request: they read the topic, the
claim and argument texts and the posts, classify types themselves and answer in their own
words. Failure knobs:

- ``drift``: a persona states the opposite stance, or attacks an argument it agrees with
  (or its own), which a validator must reject;
- ``missed_attack``: an attack the persona should make is left out (a contradiction left
  without an edge, so both claims look uncontested: fake consensus);
- ``vague_crux``: crux statements come out generic;
- ``misread``: a reader takes a claim or argument for the wrong belief.
"""

from __future__ import annotations

import re
from typing import Any

from crux_lab.engines.blackboard.purposes import (
    AGENT_TURN,
    BLACKBOARD_SUMMARY,
    BLACKBOARD_TURN,
    DECOMPOSE_CLAIMS,
    FINAL_OUTPUT,
    GENERATE_ATTACKS,
    INITIAL_ARGUMENTS,
    INITIAL_STANCE,
    URGENCY,
    VALIDATE_ATTACKS,
)
from crux_lab.llm.base import LLMRequest
from crux_lab.llm.simulated.core import (
    OPPOSITE,
    HandlerResult,
    SimContext,
    deny,
    fired_trigger,
    handler,
    lower_first,
    read_stance,
    restates_in_words,
    split_sentences,
    words,
)
from crux_lab.llm.simulated.handlers_speech import speak, speech
from crux_lab.paraphrase import _NAMES, paraphrase
from crux_lab.personas.models import Persona, Proposition, PropositionStance, StanceValue

VAGUE_CRUX = "The participants weigh the issue differently."
FLIP_PATTERN = re.compile(r"what would change my mind:\s*([^.]+)", re.IGNORECASE)
COMPONENT_FOR_TYPE = {"rebut": "claim", "undermine": "premise", "undercut": "assumption"}


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def shown_claims(ctx: SimContext) -> list[tuple[str, str, Proposition | None]]:
    """The claims the prompt listed (``hints.extra['shown']``: id -> text), each with the belief
    its text states as the reader reads it (``None`` when it recognises none)."""
    shown = ctx.hints.extra.get("shown") or {}
    if not isinstance(shown, dict):
        return []
    return [(str(cid), str(text), ctx.recognize(str(text))) for cid, text in shown.items()]


def claim_id_for(ctx: SimContext, prop: Proposition | None) -> str | None:
    """The id of the first listed claim whose text states ``prop`` (as read), if any."""
    if prop is None:
        return None
    return next((cid for cid, _, p in shown_claims(ctx) if p is not None and p.id == prop.id), None)


def stance_of(ctx: SimContext, persona_id: str, prop: Proposition | None) -> tuple[StanceValue, float, str]:
    """Current stance, confidence and reason of a persona on a proposition (drift applied)."""
    if prop is None:
        return "uncertain", 0.5, ""
    truth = ctx.truth(persona_id, prop.id)
    stance = ctx.current_stance(persona_id, prop.id)
    if truth is None or stance is None:
        return "uncertain", 0.5, ""
    if ctx.chance(ctx.knobs.drift):
        stance = OPPOSITE[stance] if stance != "uncertain" else "pro"
    confidence = truth.confidence if stance == truth.stance else round(truth.confidence * 0.5, 3)
    return stance, confidence, truth.reason


def stance_sentence(prop: Proposition, stance: str) -> str:
    text = prop.text.rstrip(".")
    if stance == "pro":
        return f"{text}."
    if stance == "con":
        return deny(text)
    return f"It is unclear whether {lower_first(text)}."


def own_words(ctx: SimContext, prop: Proposition, form: str) -> str:
    """What the extractor writes for the proposition: the sentence of the request's turns that
    states it (:meth:`SimContext.paraphrase`); a claim without its framing phrase."""
    text = ctx.paraphrase(prop, form)
    if form != "question" and text:
        bare = _bare(text)
        text = bare[:1].upper() + bare[1:] + "."
    return text


def _lower_first_word(text: str) -> str:
    """Lower-case the first letter unless the first word is a name or an acronym.

    >>> _lower_first_word("Bitcoin is scarce"), _lower_first_word("Gold is heavy"), _lower_first_word("AI grows")
    ('Bitcoin is scarce', 'gold is heavy', 'AI grows')
    """
    first = text.split(" ", 1)[0]
    return text if first.isupper() or first.rstrip("'s") in _NAMES else lower_first(text)


def assumptions_for(persona: Persona, truth: PropositionStance) -> list[str]:
    """The assumption-type belief nodes a stance rests on; else its stated reason."""
    if persona.beliefs is not None:
        nodes = {n.id: n for n in persona.beliefs.nodes}
        linked = [nodes[i] for i in truth.belief_node_ids if i in nodes]
        picked = [n.concept for n in linked if n.type in ("assumption", "core_value")]
        if picked:
            return picked[:2]
    return [f"{truth.reason.rstrip('.')}"]


def premises_for(persona: Persona, truth: PropositionStance) -> list[str]:
    out = [truth.reason]
    if persona.beliefs is not None:
        nodes = {n.id: n for n in persona.beliefs.nodes}
        out += [nodes[i].concept for i in truth.belief_node_ids if i in nodes and nodes[i].type in ("factual_claim", "inference")][:2]
    return out


def evidence_for(persona: Persona, truth: PropositionStance) -> list[str]:
    chunks = {c.id: c for c in persona.corpus}
    return [f"{chunks[g].text[:140]} ({chunks[g].kind}: {chunks[g].source})" for g in truth.grounding[:2] if g in chunks]


def falsifier_for(truth: PropositionStance) -> str:
    return truth.flip_conditions[0].description if truth.flip_conditions else ""


# ---------------------------------------------------------------------------
# blitz / classical
# ---------------------------------------------------------------------------


@handler(DECOMPOSE_CLAIMS)
def decompose_claims(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """2-4 testable claims, chosen by reading the topic: the beliefs the topic's words point
    to, most relevant first, each said in the decomposer's own words."""
    high = int(ctx.hints.extra.get("max_claims", 4))
    topic = ctx.hints.topic
    ranked = [p for p in ctx.rank_propositions(topic) if not restates_in_words(p.text, topic)]
    relevant = [p for p in ranked if ctx.relevance(p, topic) > 0]
    chosen = (relevant or ranked)[: max(2, high)][:high]
    # A planner with no turns to read: it names sub-claims from what it knows of the subject
    # (the deck, reworded), as a model names them from what it knows.
    return {"claims": [planned_claim(ctx, p) for p in chosen] or [topic]}


def planned_claim(ctx: SimContext, prop: Proposition) -> str:
    """A sub-claim the planner names: the deck belief reworded until it differs from the deck's
    wording (a few attempts; a planner restates, it does not copy)."""
    planted = {prop.text.strip().rstrip(".?").lower(), prop.question.strip().rstrip(".?").lower()}
    text = prop.text
    for _ in range(6):
        bare = _bare(paraphrase(prop.text, "claim", ctx.rng))
        text = bare[:1].upper() + bare[1:] + "."
        if text.rstrip(".?").lower() not in planted:
            break
    return text


@handler(INITIAL_STANCE)
def initial_stance(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """The persona's stance on every listed claim, read for the belief it states."""
    me = ctx.persona()
    out = []
    for cid, _, prop in shown_claims(ctx):
        stance, confidence, reason = stance_of(ctx, me.id, prop)
        out.append({"claim_id": cid, "stance": stance, "confidence": confidence, "reasoning": reason})
    return {"stances": out or [{"claim_id": "c1", "stance": "uncertain", "confidence": 0.5, "reasoning": ""}]}


@handler(BLACKBOARD_TURN)
def blackboard_turn(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """A blackboard post: the shared speech model on the round's claim, plus stance updates
    on the other listed claims and the speaker's flip condition for the claim."""
    values = speak(ctx, request)
    me = ctx.persona()
    focus_id = str(ctx.hints.extra.get("focus_id") or "")
    updates = []
    for cid, _, prop in shown_claims(ctx):
        if cid == focus_id or prop is None:
            continue
        stance = ctx.current_stance(me.id, prop.id)
        truth = ctx.truth(me.id, prop.id)
        if stance is not None and truth is not None:
            updates.append({"claim_id": cid, "stance": stance, "confidence": truth.confidence})
    values["stance_updates"] = updates
    focus_prop = ctx.recognize(ctx.hints.focus or "")
    truth = ctx.truth(me.id, focus_prop.id) if focus_prop else None
    flip = ""
    if truth is not None and truth.flip_conditions and values.get("stance") != "uncertain":
        flip = truth.flip_conditions[0].description
    values["flip_condition"] = flip
    return values


def _claim_of_turn(ctx: SimContext, proposition_ids: list[str]) -> str | None:
    """The listed claim a post was about: the one whose text states what the post states."""
    listed = shown_claims(ctx)
    for pid in proposition_ids[:1]:
        return next((cid for cid, _, p in listed if p is not None and p.id == pid), None)
    return None


@handler(URGENCY)
def urgency(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """How urgently the speaker wants the floor, and to do what, from the latest posts and the
    speaker's own stances as the prompt lists them (a flip condition met in a post: concede)."""
    me = ctx.persona()
    listed = {cid: prop for cid, _, prop in shown_claims(ctx)}
    mine: dict[str, list[Any]] = dict(ctx.hints.extra.get("my_stances") or {})
    turns = ctx.turns
    noise = ctx.rng.uniform(-0.05, 0.05)
    spoken = {t.speaker_id for t in turns}
    if turns and turns[-1].speaker_id == me.id:
        return {"urgency": round(max(0.0, 0.1 + noise), 3), "intent": "pass", "claim_id": None}
    best: tuple[float, str, str | None, str | None] = (0.0, "pass", None, None)
    for turn in reversed(turns):
        if turn.speaker_id == me.id:
            break
        cid = _claim_of_turn(ctx, turn.proposition_ids)
        if cid is None or cid not in mine:
            continue
        my_stance, my_conf = str(mine[cid][0]), float(mine[cid][1])
        prop = listed.get(cid)
        truth = ctx.truth(me.id, prop.id) if prop is not None else None
        if truth is not None and my_stance != "uncertain" and fired_trigger(truth, turn) is not None:
            cand = (0.9, "concede", cid, turn.speaker_id)  # a flip condition met: concede while it is fresh
        elif turn.stance in ("pro", "con") and my_stance in ("pro", "con") and turn.stance != my_stance:
            cand = (0.5 + 0.45 * my_conf, "challenge", cid, turn.speaker_id)
        elif turn.stance == my_stance:
            cand = (0.3, "defend", cid, turn.speaker_id)
        else:
            cand = (0.35, "clarify", cid, turn.speaker_id)
        if cand[0] > best[0]:
            best = cand
    if me.id not in spoken and best[0] < 0.6:
        # Not heard yet: state the position held most firmly on a claim nobody has taken up.
        discussed = {c for t in turns if (c := _claim_of_turn(ctx, t.proposition_ids))}
        order = list(listed)
        scored = [
            (cid not in discussed, float(v[1]), -order.index(cid), cid)
            for cid, v in mine.items()
            if cid in listed and v[0] != "uncertain"
        ]
        best = (0.6, "defend", max(scored)[3] if scored else None, None)
    score = min(1.0, max(0.0, best[0] + noise))
    return {"urgency": round(score, 3), "intent": best[1], "claim_id": best[2], "target_persona_id": best[3]}


@handler(BLACKBOARD_SUMMARY)
def blackboard_summary(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Who holds what on each claim (latest post per agent, as read), crux candidates in the
    summariser's own words, flip conditions the posts stated."""
    latest: dict[str, dict[str, str]] = {}
    for turn in ctx.turns:
        cid = _claim_of_turn(ctx, turn.proposition_ids)
        if cid is not None and turn.stance:
            latest.setdefault(cid, {})[turn.speaker_id] = turn.stance
    lines, candidates = [], []
    for cid, text, prop in shown_claims(ctx):
        if cid not in latest:
            continue
        held = latest[cid]
        groups = {s: sorted(p for p, v in held.items() if v == s) for s in ("pro", "con", "uncertain")}
        parts = [f"{', '.join(ids)} {s}" for s, ids in groups.items() if ids]
        lines.append(f"On '{text.rstrip('.')}': {'; '.join(parts)}.")
        if groups["pro"] and groups["con"] and prop is not None:
            candidates.append(VAGUE_CRUX if ctx.chance(ctx.knobs.vague_crux) else own_words(ctx, prop, "question"))
    flips = []
    for turn in ctx.turns:
        m = FLIP_PATTERN.search(turn.text)
        if m:
            flips.append({"persona_id": turn.speaker_id, "condition": m.group(1).strip()})
    return {
        "summary": " ".join(lines) or "No positions posted yet.",
        "crux_candidates": list(dict.fromkeys(candidates)),
        "flip_conditions": flips,
    }


_FRAMES = ("in short, ", "the point is that ")


def _bare(claim: str) -> str:
    """A claim without a leading framing phrase or final stop.

    >>> _bare("In short, gold is heavy.")
    'gold is heavy'
    """
    text = claim.strip().rstrip(".")
    for frame in _FRAMES:
        if text.lower().startswith(frame):
            return text[len(frame) :]
    return text


_NOT_EVIDENCE = (
    "what would change my mind", "you have met my condition", "you make a fair point", "i'll grant",
    "it is not the case", "i disagree", "to be precise", "i am not sure", "the real question",
    "i think the core", "my answer", "i also hold",
)


def cited_evidence(ctx: SimContext) -> list[dict[str, str]]:
    """What each agent offered in support, read from its posts: the first sentence that is
    neither the position itself (a sentence that states the post's main claim) nor a formula."""
    out: list[dict[str, str]] = []
    per: dict[str, int] = {}
    for turn in ctx.turns:
        main = turn.proposition_ids[0] if turn.proposition_ids else None
        for sentence in split_sentences(turn.text):
            low = sentence.lower()
            if any(low.startswith(x) for x in _NOT_EVIDENCE) or len(words(sentence)) < 4:
                continue
            said = ctx.recognize(sentence, at=0.45)
            if said is not None and said.id == main and read_stance(sentence) == turn.stance:
                continue  # the position, not what supports it
            entry = {"persona_id": turn.speaker_id, "text": sentence}
            if entry not in out and per.get(turn.speaker_id, 0) < 3:
                out.append(entry)
                per[turn.speaker_id] = per.get(turn.speaker_id, 0) + 1
            break
    return out


@handler(FINAL_OUTPUT)
def final_output(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Cruxes under the claims with opposite final stances (as the prompt lists them), hardest
    first: the belief each such claim turns on, as a question in the writer's own words, typed
    by the writer's reading; settling questions from the flip conditions the agents stated;
    evidence from what the posts said."""
    finals: dict[str, dict[str, list[Any]]] = ctx.hints.extra.get("final_stances") or {}
    stated: dict[str, list[str]] = ctx.hints.extra.get("flip_conditions") or {}
    scored = []
    for order, (cid, text, prop) in enumerate(shown_claims(ctx)):
        held = [v for s in finals.values() if (v := s.get(cid))]
        pro = [float(c) for st, c in held if st == "pro"]
        con = [float(c) for st, c in held if st == "con"]
        if pro and con:
            scored.append((-(max(pro) + max(con)), order, cid, text, prop))
    scored.sort(key=lambda t: (t[0], t[1]))
    cruxes: list[dict[str, Any]] = []
    paths: list[str] = []
    fault_lines: list[str] = []
    for _, _, cid, text, prop in scored[:3]:
        pro_ids = sorted(p for p, s in finals.items() if s.get(cid, [None])[0] == "pro")
        con_ids = sorted(p for p, s in finals.items() if s.get(cid, [None])[0] == "con")
        if ctx.chance(ctx.knobs.vague_crux) or prop is None:
            cruxes.append({"statement": VAGUE_CRUX, "claim_id": None, "settling_question": ""})
            continue
        if restates_in_words(prop.text, ctx.hints.topic):
            continue  # the topic itself, not a premise under it
        statement = own_words(ctx, prop, "question")
        flips = [
            c for p in pro_ids + con_ids for c in stated.get(p, [])
            if (r := ctx.recognize(c, at=0.15)) is not None and r.id == prop.id
        ]
        settle = (
            f"Would it settle this to find that {lower_first(flips[0].strip().rstrip('.'))}?"
            if flips else f"What observation would show whether {_lower_first_word(_bare(text))}?"
        )
        cruxes.append(
            {
                "statement": statement,
                "claim_id": cid,
                "disagreement_type": ctx.classify(statement).value,
                "settling_question": settle,
            }
        )
        paths += [f"{f.strip().rstrip('.')} (would move one side on: {_bare(text)})" for f in flips[:2]] or [settle]
        fault_lines.append(f"{', '.join(pro_ids)} for, {', '.join(con_ids)} against: {text.strip().rstrip('.')}")
    return {
        "cruxes": cruxes,
        "fault_lines": fault_lines,
        "flip_conditions": [],
        "resolution_paths": list(dict.fromkeys(paths)),
        "evidence_ledger": cited_evidence(ctx),
    }


# ---------------------------------------------------------------------------
# graph mode
# ---------------------------------------------------------------------------


def shown_arguments(ctx: SimContext) -> list[dict[str, Any]]:
    """The arguments the prompt listed (``hints.extra['arguments']``), each as the prompt shows
    it: id, speaker, claim text, the claim id and stance its author stated, label, premises
    and assumptions."""
    return [a for a in ctx.hints.extra.get("arguments") or [] if isinstance(a, dict)]


def argument_stance(arg: dict[str, Any]) -> str | None:
    """The stance an argument takes: what its author stated, else what its wording says."""
    stance = arg.get("stance")
    return str(stance) if stance in ("pro", "con", "uncertain") else read_stance(str(arg.get("claim", "")))


@handler(INITIAL_ARGUMENTS)
def initial_arguments(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """2-4 structured arguments: on the listed claims the persona holds a definite view on,
    firmest first, topped up with its firmest other beliefs (about no listed claim)."""
    me = ctx.persona()
    listed = [(cid, prop) for cid, _, prop in shown_claims(ctx) if prop is not None]
    claim_props = list(dict.fromkeys(prop.id for _, prop in listed))
    others = [p for p in ctx.deck_propositions() if p.id not in claim_props]

    def firm(p: Proposition) -> float:
        t = ctx.truth(me.id, p.id)
        return -1.0 if t is None or t.stance == "uncertain" else t.confidence

    ordered = sorted((ctx.propositions[i] for i in claim_props), key=lambda p: -firm(p))
    ordered += sorted(others, key=lambda p: (-firm(p), p.id))
    chosen = [p for p in ordered if firm(p) >= 0][:4]
    if len(chosen) < 2:
        chosen = (chosen + [p for p in ordered if p not in chosen])[:2]
    args = []
    for prop in chosen:
        truth = ctx.truth(me.id, prop.id)
        stance, _, _ = stance_of(ctx, me.id, prop)
        if truth is None:
            continue
        args.append(
            {
                "claim": stance_sentence(prop, stance),
                "about": claim_id_for(ctx, prop),
                "stance": stance,
                "premises": premises_for(me, truth),
                "assumptions": assumptions_for(me, truth),
                "evidence": evidence_for(me, truth),
                "falsifier": falsifier_for(truth),
            }
        )
    return {"arguments": args}


def _attack_type(ctx: SimContext, truth: PropositionStance, target: dict[str, Any]) -> tuple[str, str, int]:
    """Type and target component. Half the time a persona contradicts the claim head-on;
    otherwise the kind of disagreement decides (values -> an assumption, evidence -> a premise)."""
    dtype = truth.disagreement_type.value if truth.disagreement_type else "claim"
    head_on = ctx.chance(0.5)
    assumptions = list(target.get("assumptions") or [])
    premises = list(target.get("premises") or [])
    if dtype == "claim" or head_on:
        return "rebut", "claim", 0
    if dtype in ("values", "definition", "horizon") and assumptions:
        return "undercut", "assumption", ctx.rng.randrange(len(assumptions))
    if premises:
        return "undermine", "premise", ctx.rng.randrange(len(premises))
    return "rebut", "claim", 0


def _counter_text(prop: Proposition, stance: str, target: dict[str, Any], component: str, index: int) -> str:
    """What the counter-argument says: the opposite claim, or the denial of the premise or
    assumption it targets."""
    texts = list(target.get(f"{component}s") or [])
    if component == "premise" and index < len(texts):
        return f"It is not true that {lower_first(str(texts[index]).rstrip('.'))}."
    if component == "assumption" and index < len(texts):
        return f"The assumption that {lower_first(str(texts[index]).rstrip('.'))} does not hold."
    return stance_sentence(prop, stance)


@handler(GENERATE_ATTACKS)
def generate_attacks(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """0-4 attacks on opposing arguments (never one's own): arguments whose claim, as read,
    states a belief the speaker now holds the opposite of; IN-labelled first (the strategic
    choice), not attacked before. Each names its target by the id the prompt listed and the
    claim it is about by the listed claim's id."""
    me = ctx.persona()
    limit = int(ctx.hints.extra.get("max_attacks", 4))
    arguments = shown_arguments(ctx)
    already = set(ctx.hints.extra.get("already_attacked") or [])
    label_rank = {"IN": 0, "UNDEC": 1, "OUT": 2}
    candidates = []
    for arg in arguments:
        if arg.get("speaker_id") == me.id or arg.get("id") in already:
            continue
        prop = ctx.recognize(str(arg.get("claim", "")))
        if prop is None:
            continue
        mine = ctx.current_stance(me.id, prop.id)
        if {mine, argument_stance(arg)} == {"pro", "con"}:
            truth = ctx.truth(me.id, prop.id)
            conf = truth.confidence if truth else 0.5
            candidates.append((label_rank.get(str(arg.get("label", "IN")), 1), -conf, str(arg["id"]), arg, prop))
    candidates.sort(key=lambda t: (t[0], t[1], t[2]))
    attacks: list[dict[str, Any]] = []
    for _, _, _, arg, prop in candidates:
        if len(attacks) >= limit:
            break
        if ctx.chance(ctx.knobs.missed_attack):
            continue  # the free-floating claim: a contradiction left without an edge
        truth = ctx.truth(me.id, prop.id)
        stance = ctx.current_stance(me.id, prop.id)
        if truth is None or stance is None:
            continue
        kind, component, index = _attack_type(ctx, truth, arg)
        attacks.append(
            {
                "to_arg_id": arg["id"],
                "type": kind,
                "target_component": component,
                "target_index": index,
                "counter_proposition": _counter_text(prop, stance, arg, component, index),
                "rationale": truth.reason,
                "assumptions": assumptions_for(me, truth),
                "evidence": evidence_for(me, truth),
                "confidence": truth.confidence,
                "about": claim_id_for(ctx, prop) or arg.get("about"),
                "stance": stance,
                "falsifier": falsifier_for(truth),
            }
        )
    if ctx.chance(ctx.knobs.drift):
        # Persona drift: an attack on an argument the speaker agrees with, or on its own.
        bad = []
        for a in arguments:
            prop = ctx.recognize(str(a.get("claim", "")))
            agrees = prop is not None and ctx.current_stance(me.id, prop.id) == argument_stance(a)
            if a.get("speaker_id") == me.id or agrees:
                bad.append(a)
        target = ctx.pick(bad)
        if target is not None and limit > 0:
            if len(attacks) >= limit:  # the drifted attack displaces a genuine one
                attacks.pop()
            attacks.append(
                {
                    "to_arg_id": target["id"], "type": "rebut", "target_component": "claim", "target_index": 0,
                    "counter_proposition": f"{me.name} disputes this after all.", "rationale": "", "evidence": [],
                    "confidence": 0.4, "about": target.get("about"), "stance": target.get("stance"),
                }
            )
    return {"attacks": attacks}


def _quotes(counter: str, component: str) -> bool:
    """True when a counter-argument takes up the wording of the component it targets."""
    target = words(component)
    return bool(target) and len(words(counter) & target) >= max(1, len(target) // 2)


@handler(VALIDATE_ATTACKS)
def validate_attacks(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Batch validation, by reading: the target exists, is not the attacker's own, the
    component index is in range, the type fits the component, and the counter-argument
    contradicts what it targets (the same belief with the opposite stance for a rebuttal, the
    targeted premise or assumption taken up for the others)."""
    arguments = {str(a.get("id")): a for a in shown_arguments(ctx)}
    results = []
    for atk in ctx.hints.extra.get("attacks") or []:
        target = arguments.get(str(atk.get("to_arg_id", "")))
        counter = str(atk.get("counter", ""))
        component = str(atk.get("component", "claim"))
        index = int(atk.get("index", 0) or 0)
        problem = None
        fallacy = None
        if target is None:
            problem = f"the target {atk.get('to_arg_id')!r} does not exist"
        elif target.get("speaker_id") == atk.get("speaker_id"):
            problem = "it attacks the speaker's own argument"
        elif COMPONENT_FOR_TYPE.get(str(atk.get("type", ""))) != component:
            problem = f"a {atk.get('type')} must target a {COMPONENT_FOR_TYPE.get(str(atk.get('type', '')), 'claim')}"
        elif component != "claim" and not 0 <= index < len(target.get(component + "s") or []):
            problem = f"{component} index {index} is out of range"
        elif component != "claim":
            if not _quotes(counter, str((target.get(component + "s") or [])[index])):
                problem, fallacy = f"irrelevant: the counter-argument does not take up the {component} it targets", "red herring"
        else:
            theirs, ours = ctx.recognize(str(target.get("claim", ""))), ctx.recognize(counter)
            if ours is None or (theirs is not None and ours.id != theirs.id):
                problem, fallacy = "irrelevant: it answers a different question than the target's claim", "red herring"
            elif read_stance(counter) == argument_stance(target):
                problem, fallacy = "irrelevant: the counter-argument does not contradict its target", "ignoratio elenchi"
        strength = round(float(atk.get("confidence", 0.5)) * (0.8 + 0.2 * ctx.rng.random()), 3)
        results.append(
            {
                "attack_id": atk.get("id", ""),
                "valid": problem is None,
                "attack_strength": strength if problem is None else 0.0,
                "corrections": problem or "",
                "fallacy": fallacy,
            }
        )
    return {"results": results}


@handler(AGENT_TURN)
def persona_speaks(ctx: SimContext, request: LLMRequest) -> HandlerResult:
    """A persona's turn: the simulator's speaker, as for every engine."""
    return speech(ctx, request)
