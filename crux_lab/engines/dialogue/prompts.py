"""Prompts of the dialogue and DCG engines.

Persona voice comes from the consolidated system prompt of :mod:`crux_lab.personas.prompt`
(which explicitly allows concession); the per-turn user message is built with its tiered
history. The crystallizer and discovery prompts are neutral (no persona).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from crux_lab.engines.base import ANSWER_STANCE_PROMPT, TURN_FIELDS_PROMPT, TURN_STANCE_PROMPT
from crux_lab.models.domain import DialogueTurn
from crux_lab.personas.prompt import build_history, build_turn_message
from crux_lab.tokens import count_tokens

MOVES_HELP = (
    "Tag your turn with exactly one move: CLAIM (assert a new position), CHALLENGE (directly "
    "dispute what was just said), CLARIFY (ask for or give precision), CONCEDE (grant a point, "
    "narrow your scope), REFRAME (redirect to what actually matters), PROPOSE_CRUX (name the "
    "core disagreement). You can and should concede points when the evidence warrants it."
)
# The stance is asked as the persona's yes or no (as panel asks it): on Qwen2.5-1.5B a take's
# stance field asked as pro or con disagreed with its words, asked as yes or no it agreed in 3 of 3.
TURN_FORMAT = (
    'Output ONLY JSON: {"answers": "the claim in a few words", "dialogue": "your words, in your own voice", '
    '"stance": "no", "move": "CHALLENGE", "addresses": [], "named_reason": null}, where "dialogue" is '
    "your new point, in words not yet used in this debate, " + ANSWER_STANCE_PROMPT.replace(
        "the claim you address", "the claim you address (in your opening, the debate question)"
    ) + TURN_FIELDS_PROMPT.removeprefix(TURN_STANCE_PROMPT) + "."
)

NEUTRAL_SYSTEM = (
    "You are the crystallizer of a structured debate. You read short dialogue turns and keep a "
    "sparse formal record of the distilled positions. You never take sides and never invent "
    "positions nobody stated. Output only JSON matching the requested schema."
)


def turn_line(t: DialogueTurn, names: Mapping[str, str]) -> str:
    """One turn as the crystallizer reads it: who, the move, stance and answered ids the
    speaker's reply stated, the words, and the reason named for a concession.

    >>> t = DialogueTurn(id="x", turn_index=3, persona_id="a", dialogue="Fine. ", move="CONCEDE", phase="clash",
    ...                  stance="uncertain", proposition_ids=["d-0"], named_reason="rents fell")
    >>> turn_line(t, {"a": "Ann"})
    '[turn 3] Ann (a) CONCEDE, stance uncertain, answers d-0: Fine. (reason named: rents fell)'
    """
    move = t.move.value if t.move else "-"
    said = [move]
    if t.stance:
        said.append(f"stance {t.stance}")
    if t.proposition_ids:
        said.append(f"answers {', '.join(t.proposition_ids)}")
    reason = f" (reason named: {t.named_reason})" if t.named_reason else ""
    return f"[turn {t.turn_index}] {names.get(t.persona_id, t.persona_id)} ({t.persona_id}) {', '.join(said)}: {t.dialogue.strip()}{reason}"


def shown_block(shown: Mapping[str, str], what: str) -> str:
    """The engine's current arguments or disputes, by id, for a persona to answer.

    >>> print(shown_block({"d-0": "Is supply fixed?"}, "Open disputes"))
    Open disputes (name the ids your turn answers in "addresses"):
    - [d-0] Is supply fixed?
    """
    if not shown:
        return ""
    lines = [f'{what} (name the ids your turn answers in "addresses"):']
    lines += [f"- [{i}] {text}" for i, text in shown.items()]
    return "\n".join(lines)


SHOWN_BUDGET = 250  # tokens the list of current arguments or disputes may take in a turn's prompt


def fit_shown(shown: Mapping[str, str], max_tokens: int = SHOWN_BUDGET) -> dict[str, str]:
    """The items a turn's prompt lists, within ``max_tokens``: each text once (under its newest
    id), the newest items kept when they do not all fit, in their original order. Without a
    cap a long graph crowds the turn's prompt and its budget cuts the history instead, and then
    the topic itself.

    >>> fit_shown({"a-0": "Gold is money.", "a-1": "Supply is fixed.", "a-2": "Gold is money."})
    {'a-1': 'Supply is fixed.', 'a-2': 'Gold is money.'}
    >>> list(fit_shown({f"a-{i}": f"Claim number {i} of a long debate." for i in range(5)}, 30))
    ['a-3', 'a-4']
    """
    newest: dict[str, str] = {}
    for i, text in shown.items():
        newest = {k: v for k, v in newest.items() if v != text} | {i: text}
    kept: list[str] = []
    used = 0
    for i in reversed(list(newest)):
        cost = count_tokens(f"- [{i}] {newest[i]}")
        if used + cost > max_tokens:
            break
        kept.append(i)
        used += cost
    return {i: newest[i] for i in newest if i in kept}


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
    shown: str = "",
    grounding: str = "",
    answer: str = "",
    recent: int = 6,
) -> str:
    """The per-turn user message: belief grounding, the debate as :func:`build_history` states
    it (the claim to answer, the persona's own points; no transcript), the moderator's hint,
    the engine's current arguments or disputes by id (``shown``), the move menu, the persona's
    own answer from its brief (``answer``, :func:`crux_lab.engines.guards.answer_line`: last,
    next to what it is asked), the format."""
    history = build_history(
        persona_id, topic=topic, turns=turns, names=names, current_round=phase.replace("_", " "), recent=recent,
    )
    parts = [instruction]
    if steering:
        parts.append(f"Moderator: {steering}")
    parts.append(MOVES_HELP)
    if shown:
        parts.append("\n" + shown + "\n")
    if answer:
        parts.append(answer)
    return build_turn_message(
        " ".join(parts), history=history, grounding=grounding, length=length, output_format=TURN_FORMAT
    )


OPENING_INSTRUCTION = (
    "Give your opening statement on the topic: state your position and your two or three main "
    "claims, each with the main reason for it."
)
EXCHANGE_INSTRUCTION = (
    "Answer the claim to answer directly, from your own side. Be concrete; no speeches."
)
RESOLUTION_INSTRUCTION = (
    "Summarize: what you now agree on, what you still disagree on, and what the core question "
    "between you is."
)


FINAL_CLEANUP = """
This is the FINAL crystallization: the debate is over, and the graph must end distilled, 4-8
positions in all. Remove (removed_arg_ids) every position no other speaker engaged (no attack
to or from a position of a different speaker) and every restatement of a position already in
the graph; keep the positions the speakers actually argued about."""


def crystallization_prompt(
    *, topic: str, cluster: Sequence[DialogueTurn], names: Mapping[str, str], graph_table: str, final: bool = False
) -> str:
    """The crystallizer prompt: the last 6-8 turns plus the graph as a compact table, with its ids.
    The reply states every mutation the engine applies; nothing else is read."""
    turns = "\n".join(turn_line(t, names) for t in cluster)
    return f"""Debate topic: "{topic}"

## Current argument graph
{graph_table}

## Recent dialogue (cluster)
{turns}

## Your job
Update the argument graph from this cluster only. Extract substantive positions only: most
turns do NOT create nodes, and a position already in the graph is never added again (a turn
that restates it may refine it through updated_args). One clean node per distilled position,
3-6 nodes per speaker at most; the graph shrinks as speakers concede.
- new_args: positions not yet in the graph, each {{id, speaker_id, claim, premises,
  assumptions, evidence, derived_from_turns}}: a provisional id like "new-1", the speaker's
  id as written in the dialogue, the claim in your own words, the turn numbers it comes from.
- new_attacks: {{from_arg_id, to_arg_id, type (rebut|undermine|undercut), rationale}} between
  positions of different speakers that contradict or undercut each other (graph ids or your
  provisional ids). Contradictory positions MUST attack each other, in both directions.
- Concessions: full ("I was wrong about X") -> removed_arg_ids (its attacks go with it);
  partial ("I grant X but Y still holds") -> updated_args {{id, claim}} with the narrower claim;
  scope ("true in general, not here") -> updated_args {{id, assumptions}} adding the qualifier.
  List each in concessions as {{turn_index, speaker_id, kind (full|partial|scope), arg_id (the
  conceded argument's graph id), conceded_claim, reason (what the speaker said moved them, or
  null)}}. Every CONCEDE turn gets a concessions entry.
- removed_attack_ids for attacks that no longer hold.
- If a PROPOSE_CRUX move appears: crux = {{statement, proposed_by, acknowledged}}: the
  statement in your own words names the premise under the disagreement, not the topic;
  acknowledged is true only if another speaker accepted that framing.{FINAL_CLEANUP if final else ""}
Output JSON: {{new_args, updated_args, removed_arg_ids, new_attacks, removed_attack_ids, concessions, crux}}"""


def discovery_prompt(*, topic: str, graph_table: str, openings: Sequence[DialogueTurn], names: Mapping[str, str]) -> str:
    """Centralized discovery: cross-speaker attacks among the opening positions."""
    turns = "\n".join(turn_line(t, names) for t in openings)
    return f"""Debate topic: "{topic}"

## Opening statements
{turns}

## Opening positions (the argument graph)
{graph_table}

## Your job
Find every attack between positions of DIFFERENT speakers: a position attacks another when it
contradicts its claim (rebut), denies a premise (undermine) or defeats the inference (undercut).
Contradictory positions attack each other in both directions. Use the graph ids above; do not
repeat listed edges.
Output JSON: {{new_attacks: [{{from_arg_id, to_arg_id, type, rationale}}]}}"""


DISPUTE_QUESTION_RULE = (
    "A dispute's question names the premise UNDER the disagreement: the specific assumption "
    "(about a mechanism, a measurement, a time horizon, a definition or a value) that one "
    "speaker affirms and the other denies, asked so that YES and NO are the two sides. It "
    "never restates the debate topic."
)


def dcg_crystallization_prompt(
    *, topic: str, cluster: Sequence[DialogueTurn], names: Mapping[str, str], dcg_table: str, max_new: int = 2
) -> str:
    """The DCG crystallizer prompt: its hard rules stated (few new disputes, none without real
    divergence, no free-floating claims, a concession updates a stance), every reply field named."""
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

{DISPUTE_QUESTION_RULE}

### Reply fields
- new_disputes: {{id (provisional, "new-1"), question, disagreement_type (evidence, values,
  definition, horizon, premise or claim: your own classification), resolution_criteria,
  created_from_turns}}. A divergence the cluster shows goes under the dispute already in the
  graph when it is the same question.
- upsert_stances: {{dispute_id (graph id or provisional), speaker_id, quote (the sentence that
  speaker said in the cluster that shows their side, copied exactly), side (YES|NO), statement
  (the speaker's position in your words), confidence, derived_from_turns}}, one per speaker
  and dispute; a later one for the same pair replaces it. side is YES when that speaker's own
  words answer the dispute's question yes, NO when they answer no: read each speaker's turns
  again before you choose. A new dispute needs a stance from each speaker, on opposite sides.
- new_reasons: {{dispute_id, speaker_id (whose stance it SUPPORTs or ATTACKs), polarity
  (SUPPORT|ATTACK), claim, derived_from_turns, attacks (ids of the reasons it defeats)}}.
- concessions: {{turn_index, speaker_id, kind (full: changed side | partial: narrowed |
  scope: qualified), dispute_id, conceded_claim, reason (what the speaker said moved them, or
  null)}}. Every CONCEDE turn gets an entry.
- crux: if a PROPOSE_CRUX move appears, {{statement, proposed_by, acknowledged}}.
Output JSON: {{new_disputes, updated_disputes, upsert_stances, new_reasons, removed_reason_ids, notes, concessions, crux}}"""


def dcg_discovery_prompt(*, topic: str, dcg_table: str, openings: Sequence[DialogueTurn], names: Mapping[str, str]) -> str:
    """Reason-layer discovery: which reasons defeat which, inside each dispute."""
    turns = "\n".join(turn_line(t, names) for t in openings)
    return f"""Debate topic: "{topic}"

## Opening statements
{turns}

## Dispute graph
{dcg_table}

## Your job
Inside each dispute, find reasons that defeat a reason on the other side (it contradicts its
claim or its evidence). Use the reason ids above; never link reasons of different disputes.
Output JSON: {{reason_attacks: [{{from_reason_id, to_reason_id}}]}}"""
