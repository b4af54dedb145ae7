"""Simulator handlers for the crystallizer calls of the dialogue (v2) and DCG engines.

They behave like a faithful extractor reading the cluster of turns named in
``hints.extra['cluster']`` (turn indices into ``hints.turns``) and the current graph in
``hints.extra['graph']`` (v2) or ``hints.extra['dcg']`` (DCG). Which reply to build is decided
by the request's output schema, as a real model would: a schema with ``new_disputes`` gets a
DCG update, one with ``new_args`` a CrystallizationResult.

- v2: one argument per speaker per proposition, rebut attacks (both ways) between opposite
  stances of different speakers on the same proposition, concessions as removal (full),
  narrowing (partial, a named reason) or a qualifier (scope, no named reason).
- DCG: a dispute per proposition once the cluster shows a real YES/NO split (at most two per
  call), stances upserted per speaker, SUPPORT/ATTACK reasons with derivedFromTurns.

``missed_attack`` is the probability that the extractor leaves out the link between two
contradictory claims. In v2 that drops the attack edges (both directions) when the newer
argument is extracted: both claims then stand unattacked, which is the fake consensus of
seed 01. In the DCG the same slip makes the extractor file one stance under a dispute of its
own and the other free-floating; the DCG invariants refuse both, so the slip can cost a crux
but can never produce common ground.
"""

from __future__ import annotations

import re
from typing import Any

from crux_lab.llm.base import LLMRequest
from crux_lab.llm.simulated.core import OPPOSITE, ReadTurn, SimContext, handler, lower_first
from crux_lab.llm.simulated.handlers_speech import is_vague
from crux_lab.personas.models import Proposition, StanceValue

MAX_NEW_ARGS_PER_SPEAKER = 3  # seed 01: sparse, 3-6 nodes per speaker
MAX_NEW_DISPUTES = 2
CONDITION = re.compile(r"You have met my condition: (.+?)\.?$")
FAIR_POINT = "You make a fair point"
NARROWED = ", except where "
QUALIFIER = "Holds in general, but not in the case just raised"
DCG_QUALIFIER = " (in general, not in the case just raised)"
GENERIC_CRUX = "The participants see the issue differently."
_SENT = re.compile(r"(?<=[.!?])\s+")


def schema_fields(request: LLMRequest) -> set[str]:
    return set(request.output_schema.model_fields) if request.output_schema is not None else set()


def cluster_turns(ctx: SimContext) -> list[ReadTurn]:
    wanted = ctx.hints.extra.get("cluster")
    if not wanted:
        return list(ctx.turns)
    keep = set(wanted)
    return [t for t in ctx.turns if t.turn_index in keep]


def said_stance(ctx: SimContext, turn: ReadTurn, proposition_id: str) -> StanceValue | None:
    """The stance a turn took on a proposition: its own for the main one, the speaker's held
    stance for the further positions an opening lists."""
    if turn.proposition_ids and turn.proposition_ids[0] == proposition_id:
        return turn.stance if turn.stance in ("pro", "con", "uncertain") else None  # type: ignore[return-value]
    truth = ctx.truth(turn.speaker_id, proposition_id)
    return truth.stance if truth else None


def claim_text(prop: Proposition, stance: StanceValue | None) -> str:
    if stance == "pro":
        return prop.text
    if stance == "con":
        return f"It is not the case that {lower_first(prop.text.rstrip('.'))}."
    return f"It is uncertain whether {lower_first(prop.text.rstrip('.'))}."


def reason_from(ctx: SimContext, turn: ReadTurn, proposition_id: str) -> str:
    """The reason a turn gave for its stance: the supporting point it actually used (the stock
    reason or a belief the stance rests on), else the stock reason."""
    from crux_lab.llm.simulated.handlers_speech import support_pool

    truth = ctx.truth(turn.speaker_id, proposition_id)
    persona = ctx.personas.get(turn.speaker_id)
    if truth is None or persona is None:
        return ""
    if turn.proposition_ids and turn.proposition_ids[0] == proposition_id:
        for point in support_pool(persona, truth):
            if point.rstrip(".") in turn.text:
                return point.rstrip(".") + "."
    return truth.reason


def assumptions_for(ctx: SimContext, speaker: str, proposition_id: str) -> list[str]:
    persona = ctx.personas.get(speaker)
    truth = ctx.truth(speaker, proposition_id)
    if persona is None or truth is None or persona.beliefs is None:
        return []
    nodes = {n.id: n for n in persona.beliefs.nodes}
    return [nodes[i].concept for i in truth.belief_node_ids if i in nodes and nodes[i].type == "assumption"][:2]


def concession_kind(ctx: SimContext, turn: ReadTurn, proposition_id: str) -> tuple[str, str | None]:
    """full (moved to the other side), partial (a named reason) or scope (no reason named)."""
    truth = ctx.truth(turn.speaker_id, proposition_id)
    m = CONDITION.search(turn.text)
    reason = m.group(1).strip() if m else None
    if reason is None and FAIR_POINT in turn.text:
        earlier = [t for t in ctx.turns if t.speaker_id != turn.speaker_id
                   and (t.turn_index or 0) < (turn.turn_index or 0) and proposition_id in t.proposition_ids[:1]]
        reason = reason_from(ctx, earlier[-1], proposition_id).rstrip(".") if earlier else "the opponent's point"
    if truth is not None and truth.stance in ("pro", "con") and turn.stance == OPPOSITE[truth.stance]:
        return "full", reason
    if reason:
        return "partial", reason
    return "scope", None


def crux_note(ctx: SimContext, cluster: list[ReadTurn]) -> dict[str, Any] | None:
    """A crux proposed in the cluster; acknowledged when another speaker named the same one."""
    by_prop: dict[str, list[ReadTurn]] = {}
    for t in cluster:
        if t.move == "PROPOSE_CRUX" and t.proposition_ids:
            by_prop.setdefault(t.proposition_ids[0], []).append(t)
    if not by_prop:
        return None
    pid, group = max(by_prop.items(), key=lambda kv: (len({t.speaker_id for t in kv[1]}), kv[1][-1].turn_index or 0))
    vague = any(is_vague(t.text) for t in group)
    speakers = list(dict.fromkeys(t.speaker_id for t in group))
    prop = ctx.propositions.get(pid)
    return {
        "statement": GENERIC_CRUX if vague or prop is None else prop.question,
        "proposed_by": speakers,
        "acknowledged": len(speakers) >= 2 and not vague,
        "proposition_ids": [] if vague else [pid],
    }


# ---------------------------------------------------------------------------
# v2
# ---------------------------------------------------------------------------


def _arg_stance(ctx: SimContext, arg: dict[str, Any], by_index: dict[int, ReadTurn]) -> StanceValue | None:
    pid = arg.get("proposition_id")
    if not pid:
        return None
    for ti in arg.get("derived_from_turns") or []:
        if ti in by_index:
            return said_stance(ctx, by_index[ti], pid)
    truth = ctx.truth(arg["speaker_id"], pid)
    return truth.stance if truth else None


def crystallize_graph(ctx: SimContext) -> dict[str, Any]:
    graph = ctx.hints.extra.get("graph") or {}
    args: list[dict[str, Any]] = list(graph.get("arguments") or [])
    by_index = {t.turn_index: t for t in ctx.turns if t.turn_index is not None}
    stance_of = {a["id"]: _arg_stance(ctx, a, by_index) for a in args}
    existing = {(a["speaker_id"], a.get("proposition_id")): a for a in args if a.get("proposition_id")}
    new_args: list[dict[str, Any]] = []
    new_attacks: list[dict[str, Any]] = []
    updated: list[dict[str, Any]] = []
    removed: list[str] = []
    concessions: list[dict[str, Any]] = []
    cluster = cluster_turns(ctx)
    for t in cluster:
        for pid in t.proposition_ids:
            prop = ctx.propositions.get(pid)
            if prop is None:
                continue
            key = (t.speaker_id, pid)
            st = said_stance(ctx, t, pid)
            if t.move == "CONCEDE" and pid == t.proposition_ids[0]:
                a = existing.get(key)
                if a is None or a["id"] in removed:
                    continue
                kind, reason = concession_kind(ctx, t, pid)
                if kind == "partial" and NARROWED in a["claim"] or kind == "scope" and QUALIFIER in a.get("assumptions", []):
                    continue  # the graph already shows this concession
                if kind == "full":
                    removed.append(a["id"])
                    del existing[key]
                elif kind == "partial":
                    updated.append({"id": a["id"], "claim": f"{a['claim'].rstrip('.')}{NARROWED}{lower_first(reason or 'the opponent showed otherwise')}."})
                else:
                    updated.append({"id": a["id"], "assumptions": [*a.get("assumptions", []), QUALIFIER]})
                concessions.append(
                    {"turn_index": t.turn_index, "speaker_id": t.speaker_id, "kind": kind, "arg_id": a["id"],
                     "conceded_claim": a["claim"], "reason": reason, "proposition_id": pid}
                )
                continue
            if st not in ("pro", "con") or key in existing:
                continue
            if sum(a["speaker_id"] == t.speaker_id for a in new_args) >= MAX_NEW_ARGS_PER_SPEAKER:
                continue
            nid = f"new-{len(new_args) + 1}"
            spec = {
                "id": nid,
                "speaker_id": t.speaker_id,
                "claim": claim_text(prop, st),
                "premises": [reason_from(ctx, t, pid)],
                "assumptions": assumptions_for(ctx, t.speaker_id, pid),
                "derived_from_turns": [t.turn_index],
                "proposition_id": pid,
            }
            for other in list(existing.values()):
                if other["speaker_id"] == t.speaker_id or other.get("proposition_id") != pid or other["id"] in removed:
                    continue
                if {stance_of.get(other["id"]), st} != {"pro", "con"}:
                    continue
                if ctx.chance(ctx.knobs.missed_attack):
                    continue  # the extractor leaves the link out: a free-floating pair
                for src, dst in ((nid, other["id"]), (other["id"], nid)):
                    new_attacks.append({"from_arg_id": src, "to_arg_id": dst, "type": "rebut",
                                        "rationale": f"Opposite answers to: {prop.question}"})
            new_args.append(spec)
            existing[key] = spec
            stance_of[nid] = st
    if ctx.hints.phase == "resolution":
        # Final clean-up (seed 01 phase 4): one-sided positions nobody engaged are dropped, so
        # the final graph holds the distilled positions both sides argued about.
        for a in args:
            topic = a.get("proposition_id")
            if a["id"] in removed or not topic:
                continue
            if not any(b["speaker_id"] != a["speaker_id"] and b.get("proposition_id") == topic for b in args + new_args):
                removed.append(a["id"])
    return {
        "new_args": new_args,
        "updated_args": updated,
        "removed_arg_ids": removed,
        "new_attacks": new_attacks,
        "removed_attack_ids": [],
        "concessions": concessions,
        "crux": crux_note(ctx, cluster),
    }


def discover_graph(ctx: SimContext) -> dict[str, Any]:
    graph = ctx.hints.extra.get("graph") or {}
    args: list[dict[str, Any]] = list(graph.get("arguments") or [])
    have = {tuple(x) for x in graph.get("attacks") or []}
    by_index = {t.turn_index: t for t in ctx.turns if t.turn_index is not None}
    stance_of = {a["id"]: _arg_stance(ctx, a, by_index) for a in args}
    out = []
    for i, a in enumerate(args):
        for b in args[i + 1 :]:
            if a["speaker_id"] == b["speaker_id"] or not a.get("proposition_id") or a.get("proposition_id") != b.get("proposition_id"):
                continue
            if {stance_of[a["id"]], stance_of[b["id"]]} != {"pro", "con"}:
                continue
            if (a["id"], b["id"]) in have or (b["id"], a["id"]) in have:
                continue
            if ctx.chance(ctx.knobs.missed_attack):
                continue
            out += [
                {"from_arg_id": a["id"], "to_arg_id": b["id"], "type": "rebut", "rationale": "contradictory claims"},
                {"from_arg_id": b["id"], "to_arg_id": a["id"], "type": "rebut", "rationale": "contradictory claims"},
            ]
    return {"new_attacks": out}


# ---------------------------------------------------------------------------
# DCG
# ---------------------------------------------------------------------------


def _side(stance: StanceValue | None) -> str | None:
    return {"pro": "YES", "con": "NO"}.get(stance or "")


def crystallize_dcg(ctx: SimContext) -> dict[str, Any]:
    dcg = ctx.hints.extra.get("dcg") or {}
    disputes = list(dcg.get("disputes") or [])
    stances = list(dcg.get("stances") or [])
    reasons = list(dcg.get("reasons") or [])
    by_prop = {d.get("proposition_id"): d for d in disputes if d.get("proposition_id")}
    stance_by = {(s["dispute_id"], s["speaker_id"]): s for s in stances}
    cluster = cluster_turns(ctx)

    # what each speaker said on each proposition in the cluster (latest stance, its turns)
    said: dict[str, dict[str, tuple[StanceValue | None, list[int], ReadTurn]]] = {}
    for t in cluster:
        for pid in t.proposition_ids:
            if pid not in ctx.propositions:
                continue
            st = said_stance(ctx, t, pid)
            prev = said.setdefault(pid, {}).get(t.speaker_id)
            turns = ([*prev[1]] if prev else []) + [t.turn_index or 0]
            said[pid][t.speaker_id] = (st, turns, t)

    new_disputes: list[dict[str, Any]] = []
    upserts: list[dict[str, Any]] = []
    new_reasons: list[dict[str, Any]] = []
    concessions: list[dict[str, Any]] = []
    notes: list[str] = []

    def stance_item(did: str, speaker: str, st: StanceValue | None, turns: list[int], prop: Proposition) -> dict[str, Any]:
        truth = ctx.truth(speaker, prop.id)
        return {"dispute_id": did, "speaker_id": speaker, "side": _side(st), "statement": claim_text(prop, st),
                "confidence": truth.confidence if truth else None, "derived_from_turns": turns}

    def reason_items(did: str, pid: str, per: dict[str, tuple[StanceValue | None, list[int], ReadTurn]]) -> None:
        for speaker, (st, turns, last) in per.items():
            if _side(st) is None:
                continue
            new_reasons.append({"dispute_id": did, "speaker_id": speaker, "polarity": "SUPPORT",
                                "claim": reason_from(ctx, last, pid), "derived_from_turns": turns[-1:]})
            if last.move == "CHALLENGE":
                for opp, (ost, _, _) in per.items():
                    if opp == speaker or _side(ost) in (None, _side(st)):
                        continue
                    opp_stance = stance_by.get((did, opp))
                    targets = [r["id"] for r in reasons if opp_stance and r["stance_id"] == opp_stance["id"] and r["polarity"] == "SUPPORT"]
                    new_reasons.append({"dispute_id": did, "speaker_id": opp, "polarity": "ATTACK",
                                        "claim": reason_from(ctx, last, pid), "derived_from_turns": turns[-1:],
                                        "attacks": targets[:2]})

    for pid, per in said.items():
        prop = ctx.propositions[pid]
        d = by_prop.get(pid)
        if d is None:
            yes = [sp for sp, (st, _, _) in per.items() if st == "pro"]
            no = [sp for sp, (st, _, _) in per.items() if st == "con"]
            if not yes or not no:
                continue  # rule 3: no dispute without real divergence in the dialogue
            if len(new_disputes) >= MAX_NEW_DISPUTES:
                notes.append(f"divergence on {prop.question!r} left for the next call (rule 1)")
                continue
            nid = f"new-{len(new_disputes) + 1}"
            criteria = []
            for sp in yes[:1] + no[:1]:
                truth = ctx.truth(sp, pid)
                if truth is not None and truth.flip_conditions:
                    criteria.append(truth.flip_conditions[0].description)
            criteria = criteria or [f"Observable evidence that answers: {prop.question}"]
            truth0 = ctx.truth(yes[0], pid)
            new_disputes.append({"id": nid, "question": prop.question, "resolution_criteria": criteria,
                                 "created_from_turns": sorted({i for _, ts, _ in per.values() for i in ts}),
                                 "proposition_id": pid,
                                 "disagreement_type": truth0.disagreement_type.value if truth0 and truth0.disagreement_type else None})
            if ctx.chance(ctx.knobs.missed_attack):
                # The slip: one stance filed under the new dispute, the other free-floating.
                st, ts, _ = per[yes[0]]
                upserts.append(stance_item(nid, yes[0], st, ts, prop))
                st, ts, _ = per[no[0]]
                upserts.append(stance_item(f"floating-{pid}", no[0], st, ts, prop))
                continue
            for sp in yes + no:
                st, ts, _ = per[sp]
                upserts.append(stance_item(nid, sp, st, ts, prop))
            reason_items(nid, pid, per)
            continue
        did = d["id"]
        for sp, (st, ts, _) in per.items():
            old = stance_by.get((did, sp))
            conceded = next((t for t in reversed(cluster) if t.speaker_id == sp and t.move == "CONCEDE"
                             and t.proposition_ids[:1] == [pid]), None)
            if conceded is not None:
                if old is None:
                    continue
                kind, reason = concession_kind(ctx, conceded, pid)
                item = dict(old)
                item.pop("id", None)
                item["derived_from_turns"] = ts
                if kind == "full":
                    target = _side(said_stance(ctx, conceded, pid))
                    if target is None or target == old["side"]:
                        continue  # already applied
                    item["side"] = target
                    item["statement"] = claim_text(prop, said_stance(ctx, conceded, pid))
                elif kind == "partial":
                    if NARROWED in old["statement"]:
                        continue
                    item["confidence"] = round((old.get("confidence") or 0.8) * 0.5, 3)
                    item["statement"] = f"{old['statement'].rstrip('.')}{NARROWED}{lower_first(reason or 'shown otherwise')}."
                else:
                    if DCG_QUALIFIER in old["statement"]:
                        continue
                    item["statement"] = f"{old['statement'].rstrip('.')}{DCG_QUALIFIER}."
                upserts.append(item)
                concessions.append({"turn_index": conceded.turn_index, "speaker_id": sp, "kind": kind,
                                    "arg_id": old["id"], "conceded_claim": old["statement"], "reason": reason,
                                    "proposition_id": pid})
                continue
            side = _side(st)
            if side is None:
                continue
            if old is None:
                if ctx.chance(ctx.knobs.missed_attack):
                    upserts.append(stance_item(f"floating-{pid}", sp, st, ts, prop))
                    continue
                upserts.append(stance_item(did, sp, st, ts, prop))
            elif old["side"] != side:
                upserts.append(stance_item(did, sp, st, ts, prop))
        reason_items(did, pid, per)
    return {
        "new_disputes": new_disputes,
        "updated_disputes": [],
        "upsert_stances": upserts,
        "new_reasons": new_reasons,
        "removed_reason_ids": [],
        "notes": "; ".join(notes),
        "concessions": concessions,
        "crux": crux_note(ctx, cluster),
    }


def discover_dcg(ctx: SimContext) -> dict[str, Any]:
    """Reason attacks inside each dispute: an ATTACK reason defeats the SUPPORT reasons it targets."""
    dcg = ctx.hints.extra.get("dcg") or {}
    reasons = list(dcg.get("reasons") or [])
    out = []
    for r in reasons:
        if r.get("polarity") != "ATTACK":
            continue
        for s in reasons:
            if s["stance_id"] == r["stance_id"] and s.get("polarity") == "SUPPORT" and s["id"] not in r.get("attacks", []):
                if ctx.chance(ctx.knobs.missed_attack):
                    continue
                out.append({"from_reason_id": r["id"], "to_reason_id": s["id"]})
    return {"reason_attacks": out}


@handler("crystallize")
def crystallize(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    if "new_disputes" in schema_fields(request):
        return crystallize_dcg(ctx)
    return crystallize_graph(ctx)


@handler("discovery")
def discovery(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    if "reason_attacks" in schema_fields(request):
        return discover_dcg(ctx)
    return discover_graph(ctx)
