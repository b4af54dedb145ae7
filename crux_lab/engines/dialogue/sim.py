"""Simulator handlers for the crystallizer and discovery calls of the dialogue and DCG engines.

They behave like a careful extractor that only has the request: the cluster of turns its
prompt shows (``hints.turns``, read by :class:`~crux_lab.personas.reading.ReadTurn`: which
belief each sentence states is recognised from the words, the stance from the wording or the
stance the speaker's reply stated) and the graph as the prompt's table shows it
(``hints.extra['graph']`` for the Dung graph, ``hints.extra['dcg']`` for the DCG: the engine's ids with
their texts, each text recognised by reading it). Which reply to build is decided by the
request's output schema, as a real model would: a schema with ``new_disputes`` gets a DCG
update, one with ``new_args`` a CrystallizationResult. Claims, dispute questions and crux
statements come out in the extractor's own words (:meth:`SimContext.paraphrase`), types from
its own classification (:meth:`SimContext.classify`); no persona's ground truth is consulted.

- Dung graph: one argument per speaker per belief, rebut attacks (both ways) between opposite
  stances of different speakers on the same belief, concessions as removal (full: the
  speaker's reply states the other side), narrowing (partial: a reason named) or a qualifier
  (scope: no reason named). The final crystallization drops the positions no other speaker
  engaged and keeps the graph to at most 8 distilled positions.
- DCG: a dispute per belief once the cluster shows a real YES/NO split (at most two per
  call), its question on that belief (a premise under the topic, never the topic itself),
  stances upserted per speaker, SUPPORT/ATTACK reasons with derivedFromTurns, and every
  concession noted on its dispute.

``missed_attack`` is the probability that the extractor leaves out the link between two
contradictory claims. In the Dung graph that drops the attack edges (both directions) when the newer
argument is extracted: both claims then stand unattacked, which is a fake consensus (both
sides count as common ground). In the DCG the same slip makes the extractor file one stance under a dispute of its
own and the other free-floating; the DCG invariants refuse both, so the slip can cost a crux
but can never produce common ground. ``misread`` acts through the reading itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from crux_lab.engines.dialogue.purposes import CRYSTALLIZE, DIALOGUE_TURN, DISCOVERY, RESOLUTION
from crux_lab.llm.base import LLMRequest
from crux_lab.llm.simulated.core import (
    CONDITION,
    OPPOSITE,
    HandlerResult,
    ReadTurn,
    SimContext,
    handler,
    lower_first,
    read_stance,
    split_sentences,
    words,
)
from crux_lab.llm.simulated.handlers_speech import is_vague, speech
from crux_lab.personas.models import Proposition, StanceValue

MAX_NEW_ARGS_PER_SPEAKER = 3  # the graph stays sparse: a few nodes per speaker
MAX_FINAL_ARGS = 8  # the final graph holds 4-8 distilled positions
MAX_NEW_DISPUTES = 2
CHANGE_MY_MIND = re.compile(r"What would change my mind: (.+?)\.?$")
RESTS_ON = re.compile(r"It rests on (.+?)\.?$")
FAIR_POINT = "You make a fair point"
NARROWED = ", except where "
QUALIFIER = "Holds in general, but not in the case just raised"
DCG_QUALIFIER = " (in general, not in the case just raised)"
GENERIC_CRUX = "The participants see the issue differently."
_LEADS = ("In short, ", "The point is that ")
_FILLER = ("i'll grant", "i disagree", "you make a fair point", "you have met my condition", "my answer",
           "i think the core", "the real question", "to be precise", "it rests on", "what would change my mind",
           "i also hold this")


RESTATES_TOPIC_AT = 0.6  # content-word cosine between a belief's text and the topic


def restates_topic(ctx: SimContext, prop: Proposition) -> bool:
    """The belief merely restates the debate topic (the prompt asks for the premise under a
    disagreement, never the topic): content-word cosine of its text with the topic.

    A reader's judgement, from the two texts only."""
    a, b = words(prop.text), words(ctx.hints.topic)
    return bool(a and b) and len(a & b) / (len(a) * len(b)) ** 0.5 >= RESTATES_TOPIC_AT


def schema_fields(request: LLMRequest) -> set[str]:
    return set(request.output_schema.model_fields) if request.output_schema is not None else set()


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------


_CLAIM_AFTER = ("i disagree:", "to be precise", "my answer:", "i also hold this:")


def stated_stance(ctx: SimContext, turn: ReadTurn, pid: str) -> StanceValue | None:
    """The stance a turn takes on a belief it states, read from the wording of the sentence
    that states it (after a lead-in such as "I disagree:", which says nothing about the
    claim's polarity; questions are skipped). A concession, whose words grant rather than
    state, takes the stance its words say the speaker now holds (read with the turn)."""
    if turn.move == "CONCEDE" and turn.proposition_ids[:1] == [pid]:
        return turn.stance if turn.stance in ("pro", "con", "uncertain") else None  # type: ignore[return-value]
    prop = ctx.propositions.get(pid)
    claims = []
    for sentence in split_sentences(turn.text):
        if sentence.rstrip().endswith("?"):
            continue
        if sentence.lower().startswith(_CLAIM_AFTER) and ": " in sentence:
            sentence = sentence.split(": ", 1)[1]
        claims.append(sentence)
    if prop is None or not claims:
        return None
    return read_stance(max(claims, key=lambda s: ctx.relevance(prop, s)))


def point_of(ctx: SimContext, turn: ReadTurn, prop: Proposition) -> str:
    """The supporting point a turn makes for its claim on ``prop``, in the speaker's words:
    the first sentence after the one stating the claim that is not a stock phrase."""
    sentences = split_sentences(turn.text)
    if not sentences:
        return ""
    claim_at = max(range(len(sentences)), key=lambda i: ctx.relevance(prop, sentences[i]))
    for s in sentences[claim_at + 1 :] + sentences[:claim_at]:
        low = s.lower()
        if len(s.split()) > 3 and not any(low.startswith(f) for f in _FILLER) and ctx.relevance(prop, s) < 0.45:
            return s.rstrip(".") + "."
    return ""


def said_in(turns: list[ReadTurn], pattern: re.Pattern[str]) -> list[str]:
    out = []
    for t in turns:
        for s in split_sentences(t.text):
            if m := pattern.search(s):
                out.append(m.group(1).strip()[:1].upper() + m.group(1).strip()[1:] + ".")
    return list(dict.fromkeys(out))


def own_claim(ctx: SimContext, prop: Proposition, stance: StanceValue | None) -> str:
    """The belief as a turn stated it, with ``stance`` where a turn did (a sentence of the turns)."""
    return ctx.paraphrase(prop, "claim", stance)


def concession_kind(
    ctx: SimContext, turn: ReadTurn, prop: Proposition, held: StanceValue | None
) -> tuple[str, str | None]:
    """full (the reply states the other side), partial (a reason named) or scope (none named)."""
    reason = turn.named_reason
    if reason is None and FAIR_POINT in turn.text:
        earlier = [t for t in ctx.turns if t.speaker_id != turn.speaker_id
                   and (t.turn_index or 0) < (turn.turn_index or 0) and prop.id in t.proposition_ids[:1]]
        reason = point_of(ctx, earlier[-1], prop).rstrip(".") if earlier else None
        reason = reason or "the other side's point"
    now = stated_stance(ctx, turn, prop.id)
    if held in ("pro", "con") and now == OPPOSITE[held]:
        return "full", reason
    if reason:
        return "partial", reason
    return "scope", None


def crux_note(ctx: SimContext, cluster: list[ReadTurn]) -> dict[str, Any] | None:
    """A crux proposed in the cluster; acknowledged when another speaker named the same one."""
    by_prop: dict[str, list[ReadTurn]] = {}
    for t in cluster:
        if t.move == "PROPOSE_CRUX":
            by_prop.setdefault(t.proposition_ids[0] if t.proposition_ids else "", []).append(t)
    if not by_prop:
        return None
    pid, group = max(by_prop.items(), key=lambda kv: (len({t.speaker_id for t in kv[1]}), kv[1][-1].turn_index or 0))
    vague = any(is_vague(t.text) for t in group) or pid not in ctx.propositions
    if not vague and restates_topic(ctx, ctx.propositions[pid]):
        return None  # the topic is not a crux: nothing under it was named
    speakers = list(dict.fromkeys(t.speaker_id for t in group))
    return {
        "statement": GENERIC_CRUX if vague else ctx.paraphrase(ctx.propositions[pid], "question"),
        "proposed_by": speakers,
        "acknowledged": len(speakers) >= 2 and not vague,
    }


@dataclass
class Read:
    """An item of the shown graph as read: the belief its text states and its stance."""

    id: str
    speaker_id: str
    text: str
    pid: str | None
    stance: StanceValue | None


def read_item(ctx: SimContext, item_id: str, speaker: str, text: str) -> Read:
    prop = ctx.recognize(text)
    return Read(item_id, speaker, text, prop.id if prop else None, read_stance(text) if prop else None)


# ---------------------------------------------------------------------------
# Dung graph (dialogue engine)
# ---------------------------------------------------------------------------


def crystallize_graph(ctx: SimContext) -> dict[str, Any]:
    graph = ctx.hints.extra.get("graph") or {}
    shown = [read_item(ctx, a["id"], a["speaker_id"], a["claim"]) for a in graph.get("arguments") or []]
    assumptions = {a["id"]: list(a.get("assumptions") or []) for a in graph.get("arguments") or []}
    attacked = {tuple(x) for x in graph.get("attacks") or []}
    existing: dict[tuple[str, str | None], Read] = {(a.speaker_id, a.pid): a for a in shown if a.pid}
    new_args: list[dict[str, Any]] = []
    new_attacks: list[dict[str, Any]] = []
    updated: list[dict[str, Any]] = []
    removed: list[str] = []
    concessions: list[dict[str, Any]] = []
    cluster = list(ctx.turns)
    for t in cluster:
        for pid in t.proposition_ids:
            prop = ctx.propositions.get(pid)
            if prop is None:
                continue
            key = (t.speaker_id, pid)
            if t.move == "CONCEDE" and pid == t.proposition_ids[0]:
                a = existing.get(key)
                if a is None or a.id in removed:
                    continue
                kind, reason = concession_kind(ctx, t, prop, a.stance)
                if kind == "partial" and NARROWED in a.text or kind == "scope" and QUALIFIER in assumptions.get(a.id, []):
                    continue  # the graph already shows this concession
                if kind == "full":
                    removed.append(a.id)
                    existing.pop(key, None)
                elif kind == "partial":
                    updated.append({"id": a.id, "claim": f"{a.text.rstrip('.')}{NARROWED}{lower_first(reason or 'the other side showed otherwise')}."})
                else:
                    updated.append({"id": a.id, "assumptions": [*assumptions.get(a.id, []), QUALIFIER]})
                concessions.append({"turn_index": t.turn_index, "speaker_id": t.speaker_id, "kind": kind,
                                    "arg_id": a.id, "conceded_claim": a.text, "reason": reason})
                continue
            st = stated_stance(ctx, t, pid)
            if st not in ("pro", "con") or key in existing:
                continue
            if sum(a["speaker_id"] == t.speaker_id for a in new_args) >= MAX_NEW_ARGS_PER_SPEAKER:
                continue
            nid = f"new-{len(new_args) + 1}"
            point = point_of(ctx, t, prop)
            spec = {
                "id": nid,
                "speaker_id": t.speaker_id,
                "claim": own_claim(ctx, prop, st),
                "premises": [point] if point else [],
                "assumptions": said_in([t], RESTS_ON) if t.proposition_ids[:1] == [pid] else [],  # it follows the main claim
                "derived_from_turns": [t.turn_index],
            }
            for other in list(existing.values()):
                if other.speaker_id == t.speaker_id or other.pid != pid or other.id in removed:
                    continue
                if {other.stance, st} != {"pro", "con"}:
                    continue
                if ctx.chance(ctx.knobs.missed_attack):
                    continue  # the extractor leaves the link out: a free-floating pair
                for src, dst in ((nid, other.id), (other.id, nid)):
                    new_attacks.append({"from_arg_id": src, "to_arg_id": dst, "type": "rebut",
                                        "rationale": "They answer the same question opposite ways."})
            new_args.append(spec)
            existing[key] = Read(nid, t.speaker_id, str(spec["claim"]), pid, st)
    if ctx.hints.phase == "resolution":
        removed += final_cleanup(shown, existing, attacked, new_attacks, removed)
    return {
        "new_args": new_args,
        "updated_args": [u for u in updated if u["id"] not in removed],
        "removed_arg_ids": removed,
        "new_attacks": new_attacks,
        "removed_attack_ids": [],
        "concessions": concessions,
        "crux": crux_note(ctx, cluster),
    }


def final_cleanup(
    shown: list[Read], existing: dict[tuple[str, str | None], Read], attacked: set[tuple[str, ...]],
    new_attacks: list[dict[str, Any]], removed: list[str],
) -> list[str]:
    """Final crystallization: drop the positions no other speaker engaged (no attack to or from a
    position of another speaker, no other speaker's position on the same belief), then, if
    more than :data:`MAX_FINAL_ARGS` remain, the least engaged ones."""
    engaged: dict[str, int] = {}
    for a, b in [*attacked, *((x["from_arg_id"], x["to_arg_id"]) for x in new_attacks)]:
        engaged[a] = engaged.get(a, 0) + 1
        engaged[b] = engaged.get(b, 0) + 1
    alive = [a for a in shown if a.id not in removed]
    everyone = alive + [r for r in existing.values() if r.id.startswith("new-")]
    drop = []
    for a in alive:
        others = any(b.speaker_id != a.speaker_id and b.pid == a.pid and a.pid for b in everyone)
        if not engaged.get(a.id) and not others:
            drop.append(a.id)
    keep = [a for a in alive if a.id not in drop]
    extra = len(keep) + sum(r.id.startswith("new-") for r in existing.values()) - MAX_FINAL_ARGS
    if extra > 0:
        drop += [a.id for a in sorted(keep, key=lambda a: (engaged.get(a.id, 0), a.id))[:extra]]
    return drop


def discover_graph(ctx: SimContext) -> dict[str, Any]:
    graph = ctx.hints.extra.get("graph") or {}
    args = [read_item(ctx, a["id"], a["speaker_id"], a["claim"]) for a in graph.get("arguments") or []]
    have = {tuple(x) for x in graph.get("attacks") or []}
    out = []
    for i, a in enumerate(args):
        for b in args[i + 1 :]:
            if a.speaker_id == b.speaker_id or not a.pid or a.pid != b.pid:
                continue
            if {a.stance, b.stance} != {"pro", "con"}:
                continue
            if (a.id, b.id) in have or (b.id, a.id) in have:
                continue
            if ctx.chance(ctx.knobs.missed_attack):
                continue
            out += [
                {"from_arg_id": a.id, "to_arg_id": b.id, "type": "rebut", "rationale": "contradictory claims"},
                {"from_arg_id": b.id, "to_arg_id": a.id, "type": "rebut", "rationale": "contradictory claims"},
            ]
    return {"new_attacks": out}


# ---------------------------------------------------------------------------
# DCG
# ---------------------------------------------------------------------------


def _side(stance: StanceValue | None) -> str | None:
    return {"pro": "YES", "con": "NO"}.get(stance or "")


@dataclass
class Said:
    """What one speaker said on one belief in the cluster."""

    position: StanceValue | None  # the last pro/con stance it argued (before any concession)
    turns: list[int]
    last: ReadTurn  # its last turn that argued a position
    conceded: ReadTurn | None = None  # its last CONCEDE turn on the belief


def stance_quote(ctx: SimContext, speaker: str, turn_indices: list[int], limit: int = 12) -> str:
    """A few of ``speaker``'s own words, copied from the turns a stance was derived from
    (else its latest turn the request shows): the start of the last sentence that says
    something; "" when the request shows no turn of it."""
    mine = [t for t in ctx.turns if t.speaker_id == speaker]
    chosen = [t for t in mine if t.turn_index in turn_indices] or mine
    if not chosen:
        return ""
    text = chosen[-1].text
    sentences = [x for x in split_sentences(text) if len(x.split()) >= 4] or [text]
    return " ".join(sentences[-1].split()[:limit])


def crystallize_dcg(ctx: SimContext) -> dict[str, Any]:
    dcg = ctx.hints.extra.get("dcg") or {}
    disputes = [read_item(ctx, d["id"], "", d["question"]) for d in dcg.get("disputes") or [] if d.get("active", True)]
    stances = list(dcg.get("stances") or [])
    reasons = list(dcg.get("reasons") or [])
    by_prop = {d.pid: d for d in disputes if d.pid}
    stance_by = {(s["dispute_id"], s["speaker_id"]): s for s in stances}
    cluster = list(ctx.turns)

    said: dict[str, dict[str, Said]] = {}
    for t in cluster:
        for pid in t.proposition_ids:
            if pid not in ctx.propositions:
                continue
            prev = said.setdefault(pid, {}).get(t.speaker_id)
            turns = (prev.turns if prev else []) + [t.turn_index or 0]
            if t.move == "CONCEDE" and t.proposition_ids[:1] == [pid]:
                if prev is not None:
                    prev.turns, prev.conceded = turns, t
                else:
                    said[pid][t.speaker_id] = Said(None, turns, t, t)
                continue
            st = stated_stance(ctx, t, pid)
            if prev is not None and st not in ("pro", "con"):
                prev.turns = turns
                continue
            said[pid][t.speaker_id] = Said(st if st in ("pro", "con") else None, turns, t,
                                           prev.conceded if prev else None)

    new_disputes: list[dict[str, Any]] = []
    upserts: list[dict[str, Any]] = []
    new_reasons: list[dict[str, Any]] = []
    concessions: list[dict[str, Any]] = []
    notes: list[str] = []

    def stance_item(did: str, speaker: str, st: StanceValue | None, turns: list[int], prop: Proposition) -> dict[str, Any]:
        return {"dispute_id": did, "speaker_id": speaker, "side": _side(st), "statement": own_claim(ctx, prop, st),
                "derived_from_turns": turns}

    def reason_items(did: str, prop: Proposition, per: dict[str, Said]) -> None:
        for speaker, s in per.items():
            if _side(s.position) is None:
                continue
            point = point_of(ctx, s.last, prop)
            if not point:
                continue
            new_reasons.append({"dispute_id": did, "speaker_id": speaker, "polarity": "SUPPORT",
                                "claim": point, "derived_from_turns": [s.last.turn_index or 0]})
            if s.last.move == "CHALLENGE":
                for opp, o in per.items():
                    if opp == speaker or _side(o.position) in (None, _side(s.position)):
                        continue
                    opp_stance = stance_by.get((did, opp))
                    targets = [r["id"] for r in reasons if opp_stance and r["stance_id"] == opp_stance["id"] and r["polarity"] == "SUPPORT"]
                    new_reasons.append({"dispute_id": did, "speaker_id": opp, "polarity": "ATTACK",
                                        "claim": point, "derived_from_turns": [s.last.turn_index or 0],
                                        "attacks": targets[:2]})

    def concede(did: str, speaker: str, s: Said, prop: Proposition, statement: str, side: str | None) -> dict[str, Any] | None:
        """The stance upsert a concession calls for (None when the graph already shows it)."""
        assert s.conceded is not None
        held: StanceValue | None = {"YES": "pro", "NO": "con"}.get(side or "")  # type: ignore[assignment]
        if held is not None and stated_stance(ctx, s.conceded, prop.id) == held:
            return None  # the stance already shows the side the concession moved to
        kind, reason = concession_kind(ctx, s.conceded, prop, held)
        item: dict[str, Any] = {"dispute_id": did, "speaker_id": speaker, "side": side,
                                "derived_from_turns": s.turns}
        if kind == "full":
            now = stated_stance(ctx, s.conceded, prop.id)
            item["side"], item["statement"] = _side(now), own_claim(ctx, prop, now)
        elif kind == "partial":
            if NARROWED in statement:
                return None
            item["statement"] = f"{statement.rstrip('.')}{NARROWED}{lower_first(reason or 'shown otherwise')}."
        else:
            if DCG_QUALIFIER in statement:
                return None
            item["statement"] = f"{statement.rstrip('.')}{DCG_QUALIFIER}."
        concessions.append({"turn_index": s.conceded.turn_index, "speaker_id": speaker, "kind": kind,
                            "dispute_id": did, "conceded_claim": statement, "reason": reason})
        return item

    for pid, per in said.items():
        prop = ctx.propositions[pid]
        d = by_prop.get(pid)
        if d is None:
            yes = [sp for sp, s in per.items() if s.position == "pro"]
            no = [sp for sp, s in per.items() if s.position == "con"]
            if not yes or not no:
                continue  # rule 3: no dispute without real divergence in the dialogue
            if restates_topic(ctx, prop):
                continue  # the split on the topic itself: its premises are the disputes
            if len(new_disputes) >= MAX_NEW_DISPUTES:
                notes.append("a further divergence is left for the next call (rule 1)")
                continue
            nid = f"new-{len(new_disputes) + 1}"
            question = ctx.paraphrase(prop, "question")
            involved = [t for t in cluster if t.proposition_ids[:1] == [pid]]  # a flip condition follows the main claim
            new_disputes.append({"id": nid, "question": question, "disagreement_type": ctx.classify(question).value,
                                 "resolution_criteria": said_in(involved, CHANGE_MY_MIND) + said_in(involved, CONDITION),
                                 "created_from_turns": sorted({i for s in per.values() for i in s.turns})})
            if ctx.chance(ctx.knobs.missed_attack):
                # The slip: one stance filed under the new dispute, the other free-floating.
                upserts.append(stance_item(nid, yes[0], "pro", per[yes[0]].turns, prop))
                upserts.append(stance_item(f"floating-{len(new_disputes)}", no[0], "con", per[no[0]].turns, prop))
                continue
            for sp in yes + no:
                item = stance_item(nid, sp, per[sp].position, per[sp].turns, prop)
                upserts.append(item)
                gave = per[sp].conceded
                if gave is not None and (gave.turn_index or 0) > (per[sp].last.turn_index or 0):
                    change = concede(nid, sp, per[sp], prop, item["statement"], item["side"])
                    if change is not None:
                        upserts.append(change)  # a later upsert for the same pair replaces the first
            reason_items(nid, prop, per)
            continue
        did = d.id
        for sp, s in per.items():
            old = stance_by.get((did, sp))
            if s.conceded is not None and (s.conceded.turn_index or 0) >= (s.last.turn_index or 0):
                if old is None:
                    continue
                change = concede(did, sp, s, prop, old["statement"], old["side"])
                if change is not None and (change["side"], change["statement"]) != (old["side"], old["statement"]):
                    upserts.append(change)
                continue
            side = _side(s.position)
            if side is None:
                continue
            if old is None:
                if ctx.chance(ctx.knobs.missed_attack):
                    upserts.append(stance_item(f"floating-{did}", sp, s.position, s.turns, prop))
                    continue
                upserts.append(stance_item(did, sp, s.position, s.turns, prop))
            elif old["side"] != side:
                upserts.append(stance_item(did, sp, s.position, s.turns, prop))
        reason_items(did, prop, per)
    for item in upserts:
        item["quote"] = stance_quote(ctx, item["speaker_id"], item.get("derived_from_turns") or [])
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


@handler(CRYSTALLIZE)
def crystallize(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    if "new_disputes" in schema_fields(request):
        return crystallize_dcg(ctx)
    return crystallize_graph(ctx)


@handler(DISCOVERY)
def discovery(ctx: SimContext, request: LLMRequest) -> dict[str, Any]:
    if "reason_attacks" in schema_fields(request):
        return discover_dcg(ctx)
    return discover_graph(ctx)


@handler(DIALOGUE_TURN, RESOLUTION)
def persona_speaks(ctx: SimContext, request: LLMRequest) -> HandlerResult:
    """A persona's dialogue turn or resolution: the simulator's speaker, as for every engine."""
    return speech(ctx, request)
