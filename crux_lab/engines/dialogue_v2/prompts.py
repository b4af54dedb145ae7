"""Prompts of the dialogue (v2) and DCG engines (seed 01 ``lib/debate/prompts.ts``).

Persona voice comes from the consolidated system prompt of :mod:`crux_lab.personas.prompt`
(which explicitly allows concession); the per-turn user message is built with its tiered
history. The crystallizer and discovery prompts are neutral (no persona).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from crux_lab.models import DialogueTurn
from crux_lab.personas.prompt import RoundSummary, build_history, build_turn_message

MOVES_HELP = (
    "Tag your turn with exactly one move: CLAIM (assert a new position), CHALLENGE (directly "
    "dispute what was just said), CLARIFY (ask for or give precision), CONCEDE (grant a point, "
    "narrow your scope), REFRAME (redirect to what actually matters), PROPOSE_CRUX (name the "
    "core disagreement). You can and should concede points when the evidence warrants it."
)
TURN_FORMAT = 'Output ONLY JSON: {"dialogue": "your words, in your own voice", "move": "CHALLENGE"}'

NEUTRAL_SYSTEM = (
    "You are the crystallizer of a structured debate. You read short dialogue turns and keep a "
    "sparse formal record of the distilled positions. You never take sides and never invent "
    "positions nobody stated. Output only JSON matching the requested schema."
)


def turn_line(t: DialogueTurn, names: Mapping[str, str]) -> str:
    move = t.move.value if t.move else "-"
    return f"[turn {t.turn_index}] {names.get(t.persona_id, t.persona_id)} ({t.persona_id}) {move}: {t.dialogue.strip()}"


def phase_summaries(turns: Sequence[DialogueTurn], keep_recent: int) -> list[RoundSummary]:
    """Extractive one-line digests of the phases older than the verbatim window."""
    older = turns[: max(0, len(turns) - keep_recent)]
    by_phase: dict[str, list[DialogueTurn]] = {}
    for t in older:
        by_phase.setdefault(str(t.phase), []).append(t)
    out = []
    for phase, ts in by_phase.items():
        said = "; ".join(f"{t.persona_id}: {t.dialogue.split('. ')[0][:160]}" for t in ts[-3:])
        out.append(RoundSummary(label=f"{phase} ({len(ts)} turns)", summary=said))
    return out


def dialogue_message(
    *,
    persona_id: str,
    topic: str,
    turns: Sequence[DialogueTurn],
    names: Mapping[str, str],
    phase: str,
    instruction: str,
    length: str,
    steering: str | None = None,
    recent: int = 6,
) -> str:
    """The per-turn user message: tiered history, the moderator's hint, the move menu, format."""
    history = build_history(
        persona_id,
        topic=topic,
        turns=turns,
        names=names,
        round_summaries=phase_summaries(turns, recent),
        current_round=phase.replace("_", " "),
        recent=recent,
    )
    parts = [instruction]
    if steering:
        parts.append(f"Moderator: {steering}")
    parts.append(MOVES_HELP)
    return build_turn_message(
        " ".join(parts), history=history, length=length, output_format=TURN_FORMAT
    )


OPENING_INSTRUCTION = (
    "Give your opening statement on the topic: state your position and your two or three main "
    "claims, each with the main reason for it."
)
EXCHANGE_INSTRUCTION = (
    "Respond directly to the last point made. Be concrete; no speeches."
)
RESOLUTION_INSTRUCTION = (
    "Summarize: what you now agree on, what you still disagree on, and what the core question "
    "between you is."
)


def crystallization_prompt(
    *, topic: str, cluster: Sequence[DialogueTurn], names: Mapping[str, str], graph_table: str
) -> str:
    """Seed 01 crystallizer: the last 6-8 turns plus the graph as a compact table."""
    turns = "\n".join(turn_line(t, names) for t in cluster)
    return f"""Debate topic: "{topic}"

## Current argument graph
{graph_table}

## Recent dialogue (cluster)
{turns}

## Your job
Update the argument graph from this cluster only. Extract substantive positions only: most
turns do NOT create nodes. One clean node per distilled position (claim, premises,
assumptions, evidence, speaker_id, derived_from_turns), 3-6 nodes per speaker at most.
- new_args: positions not yet in the graph (give each a provisional id like "new-1").
- new_attacks: attacks between positions that contradict or undercut each other (use graph ids
  or your provisional ids). Contradictory positions MUST attack each other.
- Concessions: full ("I was wrong about X") -> removed_arg_ids (its attacks go with it);
  partial ("I grant X but Y still holds") -> updated_args with the narrower claim;
  scope ("true in general, not here") -> updated_args adding the qualifier to assumptions.
  List each in concessions with kind full|partial|scope, turn_index, speaker_id, arg_id.
- updated_args / removed_attack_ids for refined or superseded positions.
- If a PROPOSE_CRUX move appears: crux = {{statement, proposed_by, acknowledged}}; acknowledged
  is true only if another speaker accepted that framing.
Output JSON: {{new_args, updated_args, removed_arg_ids, new_attacks, removed_attack_ids, concessions, crux}}"""


def discovery_prompt(*, topic: str, graph_table: str) -> str:
    """Seed 01 centralized discovery: cross-speaker attacks among the opening positions."""
    return f"""Debate topic: "{topic}"

## Opening positions
{graph_table}

## Your job
Find every attack between positions of DIFFERENT speakers: a position attacks another when it
contradicts its claim (rebut), denies a premise (undermine) or defeats the inference (undercut).
Contradictory positions attack each other in both directions. Do not repeat listed edges.
Output JSON: {{new_attacks: [{{from_arg_id, to_arg_id, type, rationale}}]}}"""


def dcg_crystallization_prompt(
    *, topic: str, cluster: Sequence[DialogueTurn], names: Mapping[str, str], dcg_table: str, max_new: int = 2
) -> str:
    """Seed 01 ``crystallizationPromptDCG``, hard rules verbatim."""
    turns = "\n".join(turn_line(t, names) for t in cluster)
    return f"""You are maintaining a DISPUTE-CENTRIC GRAPH for a debate on "{topic}".
This graph isolates TRUE CRUXES and prevents fake consensus.

## Current Dispute Graph
{dcg_table}

## Recent Dialogue (cluster)
{turns}

## Your job
Update the dispute graph based ONLY on the dialogue cluster.

### Hard rules (must follow)
1) You may add at most {max_new} new disputes per call.
2) DO NOT create free-floating claims: every stance must be tied to a dispute.
3) A dispute should exist ONLY if there is real divergence in the dialogue.
4) Every stance/reason MUST include derivedFromTurns.
5) If a speaker concedes, UPDATE their stance; do NOT create duplicates.
6) Resolution criteria must be concrete observable evidence, not vibes.

New disputes get a provisional id ("new-1"); stances name the dispute (existing or
provisional) and a side YES/NO; reasons name the dispute and the speaker whose stance they
SUPPORT or ATTACK. If a PROPOSE_CRUX move appears, add crux = {{statement, proposed_by,
acknowledged}}.
Output JSON: {{new_disputes, updated_disputes, upsert_stances, new_reasons, removed_reason_ids, notes, concessions, crux}}"""


def dcg_discovery_prompt(*, topic: str, dcg_table: str) -> str:
    """Reason-layer discovery: which reasons defeat which, inside each dispute."""
    return f"""Debate topic: "{topic}"

## Dispute graph
{dcg_table}

## Your job
Inside each dispute, find reasons that defeat a reason on the other side (it contradicts its
claim or its evidence). Never link reasons of different disputes.
Output JSON: {{reason_attacks: [{{from_reason_id, to_reason_id}}]}}"""
