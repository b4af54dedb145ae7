"""Simulator handlers for the blitz, classical and graph engines (seed 02 §1-2, seed 03).

Each answer is what a competent model would return given the prompt, computed from the
personas' ground truth plus the structured hints the engine sends alongside the prompt
(claims, the propositions they came from, argument and attack metadata). Failure knobs:

- ``drift``: a persona states the opposite stance, or attacks an argument it agrees with
  (or its own), which a validator must reject;
- ``missed_attack``: an attack the persona should make is left out (the seed's
  "free-floating claim" behind fake consensus);
- ``vague_crux``: crux statements come out generic.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from crux_lab.llm.base import LLMRequest
from crux_lab.llm.simulated.core import OPPOSITE, SimContext, handler, lower_first
from crux_lab.llm.simulated.handlers_speech import speak
from crux_lab.personas.models import Persona, Proposition, PropositionStance, StanceValue

VAGUE_CRUX = "The participants weigh the issue differently."
FLIP_PATTERN = re.compile(r"what would change my mind:\s*([^.]+)", re.IGNORECASE)
COMPONENT_FOR_TYPE = {"rebut": "claim", "undermine": "premise", "undercut": "assumption"}


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def claim_propositions(ctx: SimContext) -> list[Proposition | None]:
    """The proposition behind each claim of ``hints.extra['claims']`` (by id, else by wording)."""
    claims: list[str] = list(ctx.hints.extra.get("claims") or [])
    ids: list[str | None] = list(ctx.hints.extra.get("claim_proposition_ids") or [])
    out: list[Proposition | None] = []
    for i, text in enumerate(claims):
        pid = ids[i] if i < len(ids) else None
        if pid and pid in ctx.propositions:
            out.append(ctx.propositions[pid])
            continue
        ranked = ctx.rank_propositions(text)
        out.append(ranked[0] if ranked and ctx.relevance(ranked[0], text) > 0 else None)
    return out


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
        return f"It is not the case that {lower_first(text)}."
    return f"It is unclear whether {lower_first(text)}."


def contested_by(ctx: SimContext, prop: Proposition, persona_ids: list[str]) -> bool:
    held = {ctx.current_stance(p, prop.id) for p in persona_ids}
    return {"pro", "con"} <= held


def dominant_type(ctx: SimContext, prop: Proposition, persona_ids: list[str]) -> str | None:
    types = Counter(
        t.disagreement_type.value
        for p in persona_ids
        if (t := ctx.truth(p, prop.id)) is not None and t.disagreement_type is not None
    )
    return min(types, key=lambda k: (-types[k], k)) if types else None


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


# ---------------------------------------------------------------------------
# blitz / classical
# ---------------------------------------------------------------------------


@handler("decompose_claims")
def decompose_claims(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """2-4 testable claims: the deck propositions most relevant to the topic, contested first."""
    high = int(ctx.hints.extra.get("max_claims", 4))
    ids = list(ctx.hints.persona_ids or ctx.personas)
    ranked = ctx.rank_propositions(ctx.hints.topic, ids)
    contested = [p for p in ranked if contested_by(ctx, p, ids)]
    settled = [p for p in ranked if p not in contested]
    chosen = contested[: max(1, high - 1)] + settled[:1]
    chosen = (chosen + [p for p in ranked if p not in chosen])[: max(2, min(high, len(ranked)))]
    chosen.sort(key=ranked.index)
    ctx.annotations["proposition_ids"] = [p.id for p in chosen]
    return {"claims": [p.text for p in chosen] or [ctx.hints.topic]}


@handler("initial_stance")
def initial_stance(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    me = ctx.persona()
    out = []
    for i, prop in enumerate(claim_propositions(ctx)):
        stance, confidence, reason = stance_of(ctx, me.id, prop)
        out.append({"claim_index": i, "stance": stance, "confidence": confidence, "reasoning": reason})
    ctx.annotations["proposition_ids"] = [p.id if p else None for p in claim_propositions(ctx)]
    return {"stances": out or [{"claim_index": 0, "stance": "uncertain", "confidence": 0.5, "reasoning": ""}]}


@handler("blackboard_turn")
def blackboard_turn(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """A blackboard post: the shared speech model on the round's claim, plus stance updates
    on the other claims and the speaker's flip condition for the claim."""
    values = speak(ctx, request)
    me = ctx.persona()
    props = claim_propositions(ctx)
    focus = int(ctx.hints.extra.get("focus_index", 0))
    updates = []
    for i, prop in enumerate(props):
        if i == focus or prop is None:
            continue
        stance = ctx.current_stance(me.id, prop.id)
        truth = ctx.truth(me.id, prop.id)
        if stance is not None and truth is not None:
            updates.append({"claim_index": i, "stance": stance, "confidence": truth.confidence})
    values["stance_updates"] = updates
    focus_prop = props[focus] if 0 <= focus < len(props) else None
    truth = ctx.truth(me.id, focus_prop.id) if focus_prop else None
    flip = ""
    if truth is not None and truth.flip_conditions and values.get("stance") != "uncertain":
        flip = truth.flip_conditions[0].description
    values["flip_condition"] = flip
    return values


@handler("urgency")
def urgency(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """How urgently the speaker wants the floor, and to do what (from the last posts)."""
    me = ctx.persona()
    props = claim_propositions(ctx)
    turns = ctx.turns
    noise = ctx.rng.uniform(-0.05, 0.05)
    spoken = {t.speaker_id for t in turns}
    if turns and turns[-1].speaker_id == me.id:
        return {"urgency": round(max(0.0, 0.1 + noise), 3), "intent": "pass", "claim_index": None}
    best: tuple[float, str, int | None, str | None] = (0.0, "pass", None, None)
    recent = turns[-len(ctx.hints.persona_ids or [1]) :]
    for turn in reversed(recent):
        if turn.speaker_id == me.id:
            break
        for pid in turn.proposition_ids:
            idx = next((i for i, p in enumerate(props) if p is not None and p.id == pid), None)
            truth = ctx.truth(me.id, pid)
            mine = ctx.current_stance(me.id, pid)
            if idx is None or truth is None or mine is None:
                continue
            if mine != truth.stance:  # a flip condition fired: concede while it is fresh
                cand = (0.9, "concede", idx, turn.speaker_id)
            elif turn.stance in ("pro", "con") and mine in ("pro", "con") and turn.stance != mine:
                cand = (0.5 + 0.45 * truth.confidence, "challenge", idx, turn.speaker_id)
            elif turn.stance == mine:
                cand = (0.3, "defend", idx, turn.speaker_id)
            else:
                cand = (0.35, "clarify", idx, turn.speaker_id)
            if cand[0] > best[0]:
                best = cand
    if me.id not in spoken and best[0] < 0.6:
        # Not heard yet: state the position held most firmly on a claim nobody has taken up.
        discussed = {pid for t in turns for pid in t.proposition_ids}
        scored = [
            (p.id not in discussed, t.confidence, -i)
            for i, p in enumerate(props)
            if p is not None and (t := ctx.truth(me.id, p.id)) is not None and t.stance != "uncertain"
        ]
        idx = -max(scored)[2] if scored else None
        best = (0.6, "defend", idx, None)
    score = min(1.0, max(0.0, best[0] + noise))
    return {"urgency": round(score, 3), "intent": best[1], "claim_index": best[2], "target_persona_id": best[3]}


@handler("blackboard_summary")
def blackboard_summary(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Who holds what on each claim (latest post per agent), crux candidates, stated flips."""
    props = claim_propositions(ctx)
    latest: dict[str, dict[str, str]] = {}
    for turn in ctx.turns:
        for pid in turn.proposition_ids:
            if turn.stance:
                latest.setdefault(pid, {})[turn.speaker_id] = turn.stance
    lines, candidates = [], []
    for prop in props:
        if prop is None or prop.id not in latest:
            continue
        held = latest[prop.id]
        groups = {s: sorted(p for p, v in held.items() if v == s) for s in ("pro", "con", "uncertain")}
        parts = [f"{', '.join(ids)} {s}" for s, ids in groups.items() if ids]
        lines.append(f"On '{prop.question}': {'; '.join(parts)}.")
        if groups["pro"] and groups["con"]:
            candidates.append(VAGUE_CRUX if ctx.chance(ctx.knobs.vague_crux) else prop.question)
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


@handler("final_output")
def final_output(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Cruxes = claims with opposite final stances, hardest first; settling questions and
    resolution paths from the holders' flip conditions; evidence = the reasons they argued."""
    props = claim_propositions(ctx)
    finals: dict[str, dict[str, list[Any]]] = ctx.hints.extra.get("final_stances") or {}
    scored = []
    for i, prop in enumerate(props):
        held = [v for s in finals.values() if (v := s.get(str(i)))]
        pro = [float(c) for st, c in held if st == "pro"]
        con = [float(c) for st, c in held if st == "con"]
        if pro and con:
            scored.append((-(max(pro) + max(con)), i, prop))
    scored.sort(key=lambda t: (t[0], t[1]))
    cruxes: list[dict[str, Any]] = []
    paths: list[str] = []
    fault_lines: list[str] = []
    claims: list[str] = list(ctx.hints.extra.get("claims") or [])
    for _, i, prop in scored[:3]:
        pro_ids = sorted(p for p, s in finals.items() if s.get(str(i), [None])[0] == "pro")
        con_ids = sorted(p for p, s in finals.items() if s.get(str(i), [None])[0] == "con")
        if ctx.chance(ctx.knobs.vague_crux) or prop is None:
            cruxes.append({"statement": VAGUE_CRUX, "claim_index": None, "settling_question": ""})
            continue
        flips = [
            f.description
            for p in pro_ids + con_ids
            if (t := ctx.truth(p, prop.id)) is not None
            for f in t.flip_conditions[:1]
        ]
        cruxes.append(
            {
                "statement": prop.question,
                "claim_index": i,
                "disagreement_type": dominant_type(ctx, prop, pro_ids + con_ids),
                "settling_question": f"Does the evidence show that {lower_first(flips[0].rstrip('.'))}?" if flips else prop.question,
            }
        )
        paths += [f"{f.rstrip('.')} (would move one side on: {claims[i] if i < len(claims) else prop.text})" for f in flips]
        fault_lines.append(f"{', '.join(pro_ids)} vs {', '.join(con_ids)} on {lower_first(prop.question)}")
    ledger = []
    for turn in ctx.turns:
        for pid in turn.proposition_ids[:1]:
            truth = ctx.truth(turn.speaker_id, pid)
            if truth is not None:
                entry = {"persona_id": turn.speaker_id, "text": truth.reason}
                if entry not in ledger:
                    ledger.append(entry)
    return {
        "cruxes": cruxes,
        "fault_lines": fault_lines,
        "flip_conditions": [],
        "resolution_paths": list(dict.fromkeys(paths)),
        "evidence_ledger": ledger,
    }


# ---------------------------------------------------------------------------
# graph mode (seed 03)
# ---------------------------------------------------------------------------


@handler("initial_arguments")
def initial_arguments(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """2-4 structured arguments: the claims the persona holds a definite view on, firmest first,
    topped up with its firmest other deck propositions."""
    me = ctx.persona()
    claim_props = [p for p in claim_propositions(ctx) if p is not None]
    others = [p for p in ctx.deck_propositions() if p not in claim_props]
    def firm(p: Proposition) -> float:
        t = ctx.truth(me.id, p.id)
        return -1.0 if t is None or t.stance == "uncertain" else t.confidence
    ordered = sorted(claim_props, key=lambda p: -firm(p)) + sorted(others, key=lambda p: (-firm(p), p.id))
    chosen = [p for p in ordered if firm(p) >= 0][:4]
    if len(chosen) < 2:
        chosen = (chosen + [p for p in ordered if p not in chosen])[:2]
    args, meta = [], []
    for prop in chosen:
        truth = ctx.truth(me.id, prop.id)
        stance, confidence, _ = stance_of(ctx, me.id, prop)
        if truth is None:
            continue
        args.append(
            {
                "claim": stance_sentence(prop, stance),
                "premises": premises_for(me, truth),
                "assumptions": assumptions_for(me, truth),
                "evidence": evidence_for(me, truth),
            }
        )
        meta.append({"proposition_id": prop.id, "stance": stance, "confidence": confidence})
    ctx.annotations["arguments"] = meta
    ctx.annotations["proposition_ids"] = [m["proposition_id"] for m in meta]
    return {"arguments": args}


def _attack_type(ctx: SimContext, truth: PropositionStance, target: dict[str, Any]) -> tuple[str, str, int]:
    """Type and target component. Half the time a persona contradicts the claim head-on;
    otherwise the kind of disagreement decides (values -> an assumption, evidence -> a premise)."""
    dtype = truth.disagreement_type.value if truth.disagreement_type else "claim"
    head_on = ctx.chance(0.5)
    if dtype == "claim" or head_on:
        return "rebut", "claim", 0
    if dtype in ("values", "definition", "horizon") and target.get("assumptions", 0) > 0:
        return "undercut", "assumption", ctx.rng.randrange(target["assumptions"])
    if target.get("premises", 0) > 0:
        return "undermine", "premise", ctx.rng.randrange(target["premises"])
    return "rebut", "claim", 0


def _counter_text(prop: Proposition, stance: str, target: dict[str, Any], component: str, index: int) -> str:
    """What the counter-argument says: the opposite claim, or the denial of the premise or
    assumption it targets."""
    texts = target.get(f"{component}_texts") or []
    if component == "premise" and index < len(texts):
        return f"It is not true that {lower_first(str(texts[index]).rstrip('.'))}."
    if component == "assumption" and index < len(texts):
        return f"The assumption that {lower_first(str(texts[index]).rstrip('.'))} does not hold."
    return stance_sentence(prop, stance)


@handler("generate_attacks")
def generate_attacks(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """0-4 attacks on opposing arguments (never one's own): targets whose stance opposes the
    speaker's current stance, IN-labelled first (the strategic choice), not attacked before."""
    me = ctx.persona()
    limit = int(ctx.hints.extra.get("max_attacks", 4))
    arguments: list[dict[str, Any]] = list(ctx.hints.extra.get("arguments") or [])
    already = set(ctx.hints.extra.get("already_attacked") or [])
    label_rank = {"IN": 0, "UNDEC": 1, "OUT": 2}
    candidates = []
    for arg in arguments:
        pid = arg.get("proposition_id")
        if arg.get("speaker_id") == me.id or not pid or arg["id"] in already:
            continue
        mine = ctx.current_stance(me.id, pid)
        if {mine, arg.get("stance")} == {"pro", "con"}:
            truth = ctx.truth(me.id, pid)
            conf = truth.confidence if truth else 0.5
            candidates.append((label_rank.get(arg.get("label", "IN"), 1), -conf, arg["id"], arg))
    candidates.sort(key=lambda t: (t[0], t[1], t[2]))
    attacks: list[dict[str, Any]] = []
    meta: list[dict[str, Any]] = []
    for _, _, _, arg in candidates:
        if len(attacks) >= limit:
            break
        if ctx.chance(ctx.knobs.missed_attack):
            continue  # the free-floating claim: a contradiction left without an edge
        pid = arg["proposition_id"]
        prop = ctx.propositions[pid]
        truth = ctx.truth(me.id, pid)
        stance = ctx.current_stance(me.id, pid)
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
            }
        )
        meta.append({"proposition_id": pid, "stance": stance})
    if ctx.chance(ctx.knobs.drift):
        # Persona drift: an attack on an argument the speaker agrees with, or on its own.
        bad = [a for a in arguments if a.get("speaker_id") == me.id or (
            a.get("proposition_id") and ctx.current_stance(me.id, a["proposition_id"]) == a.get("stance"))]
        target = ctx.pick(bad)
        if target is not None and limit > 0:
            if len(attacks) >= limit:  # the drifted attack displaces a genuine one
                attacks.pop()
                meta.pop()
            attacks.append(
                {
                    "to_arg_id": target["id"], "type": "rebut", "target_component": "claim", "target_index": 0,
                    "counter_proposition": f"{me.name} disputes this after all.", "rationale": "", "evidence": [],
                    "confidence": 0.4,
                }
            )
            meta.append({"proposition_id": target.get("proposition_id"), "stance": target.get("stance")})
    ctx.annotations["attacks"] = meta
    ctx.annotations["proposition_ids"] = [m["proposition_id"] for m in meta]
    return {"attacks": attacks}


@handler("validate_attacks")
def validate_attacks(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    """Batch validation: the target exists, is not the attacker's own, the component index is in
    range, the type fits the component, and the counter-argument really contradicts the target."""
    arguments = {a["id"]: a for a in ctx.hints.extra.get("arguments") or []}
    results = []
    for atk in ctx.hints.extra.get("attacks") or []:
        target = arguments.get(atk.get("to_arg_id", ""))
        problem = None
        fallacy = None
        if target is None:
            problem = f"target {atk.get('to_arg_id')!r} does not exist"
        elif target.get("speaker_id") == atk.get("speaker_id"):
            problem = "attacks the speaker's own argument"
        elif COMPONENT_FOR_TYPE.get(atk.get("type", "")) != atk.get("component"):
            problem = f"a {atk.get('type')} must target a {COMPONENT_FOR_TYPE.get(atk.get('type', ''), 'claim')}"
        elif atk.get("component") != "claim" and not 0 <= int(atk.get("index", 0)) < int(target.get(atk["component"] + "s", 0)):
            problem = f"{atk.get('component')} index {atk.get('index')} is out of range"
        elif target.get("proposition_id") and atk.get("proposition_id") == target.get("proposition_id") and atk.get("stance") == target.get("stance"):
            problem, fallacy = "irrelevant: the counter-argument does not contradict its target", "ignoratio elenchi"
        elif target.get("proposition_id") and atk.get("proposition_id") not in (None, target.get("proposition_id")):
            problem, fallacy = "irrelevant: it answers a different question", "red herring"
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
