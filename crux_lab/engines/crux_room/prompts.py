"""Prompt text of the crux engines: the persona system prompt and per-phase instructions.

The system prompt is the persona's consolidated single block (identity, how you think, what
changes your mind, voice, grounding) from :mod:`crux_lab.personas.prompt`; the per-turn
instructions cover the panel's rounds, clashes, crux-room phases and belief revision.
"""

from __future__ import annotations

from collections.abc import Mapping

from crux_lab.engines.base import ANSWER_STANCE_PROMPT, TURN_FIELDS_PROMPT, TURN_STANCE_PROMPT
from crux_lab.personas.models import Persona, Proposition
from crux_lab.personas.prompt import build_system_prompt


def persona_system_prompt(persona: Persona, propositions: Mapping[str, Proposition] | None = None) -> str:
    """The persona's consolidated system block (≤ 2,200 tokens), built by
    :func:`crux_lab.personas.prompt.build_system_prompt`; cached across the persona's calls."""
    return build_system_prompt(persona, propositions=propositions)


# "in words not yet used": Qwen2.5-Coder-1.5B copied its own last turn, or a belief line of its
# prompt, as its next turn, until the echo guard ended the debate.
JSON_SPEECH = (
    'Output ONLY JSON with these fields: "utterance": your response, in words not yet used in this '
    'debate (never copy a sentence from above); ' + ANSWER_STANCE_PROMPT
    + TURN_FIELDS_PROMPT.removeprefix(TURN_STANCE_PROMPT) + "."
)
CLAIMS_SHOWN = "Claims on the table (use these ids in \"addresses\"):\n{lines}"

OPENING = "Opening round. In 2-3 sentences, what's your take on: {topic}"
OPENING_POSITIONS = (
    "Also state your positions on this topic: up to {n} claims you would defend, each with the "
    "implicit assumptions it rests on (what must be true, or what you take for granted, for the "
    "claim to hold; things you rarely say out loud). Put them in one more JSON field, "
    '"positions": a list of {{"position": one sentence in your own words, "assumptions": a list '
    "of one-sentence assumptions}}."
)
TAKE = "Round: {label}. {description}\nWhat's your view on this aspect specifically? 2-4 sentences."
REBUTTAL = (
    "Clash on: {claim}\nPush back on the claim to answer, from your own side: target its weakest "
    "part. 2-3 sentences."
)
CLOSING = "Closing round. Given everything discussed, what's your final position on: {topic}? 2-4 sentences."
ROOM_POSITION = "State your position on the crux - {question} - and WHY you hold it. 2-3 sentences."
ROOM_EXCHANGE = "Where specifically do you disagree with the claim to answer, and why? 2-3 sentences."
ROOM_STEELMAN = (
    "Put the other side's strongest argument in one sentence. Then explain why you still disagree - "
    "or where you have updated. 2-4 sentences."
)
ROOM_CONVERGENCE = (
    "In one sentence: what is the premise buried under this disagreement - the specific assumption "
    "you and the other side hold differently, which one of you would have to give up to agree? Not the "
    "debate topic or the crux restated. Is it factual, values, or definitional?"
)
ROOM_AFTER_EXCHANGE = (
    "Did anything in this exchange give you specific reason to update? Name the exact claim and why "
    "it affects your position - or state why it doesn't."
)
CHANNEL = "In 1-2 sentences, from your own side: answer one specific point of the claim to answer, or raise one nobody has made."
CHANNEL_FIRST = "You open the group chat. In 1-2 sentences, say where you stand on the topic and the main reason why."



POSITION_STATEMENT = (
    "Before answering, commit: your current position is the one your earlier points state. If you "
    "update, say which challenge moved you; otherwise hold your position."
)
UPDATE_RULE = (
    "Only update your position if you can name the specific claim that changed your mind and why, "
    "or if one of your stated flip conditions is met. Repetition, rhetorical force and being "
    "outnumbered are not reasons."
)
REGENERATE = (
    "Your draft conceded without naming the specific claim or met condition that justifies it. "
    "Rewrite it: hold your position unless you can name that reason."
)

DECOMPOSE = (
    "Break this debate topic into {n} debatable aspects: {topic}\n"
    "Each aspect must be a specific, arguable sub-question (not just a category), different enough "
    "from the others that speakers won't repeat themselves, and relevant to the topic.\n"
    'Output ONLY JSON: {{"aspects": [{{"id": "a1", "label": "...", "description": "one sentence"}}]}}'
)
DETECT = (
    "Debate topic: {topic}\nAspect: {aspect}\nThe statements below were made independently.\n"
    "{statements}\n\nList every pair of speakers who directly oppose each other. For each, answer "
    "with booleans only: has_direct_opposition (they take opposite sides), has_specific_claim "
    "(on one specific, nameable claim), topic_relevant (is this disagreement relevant to the wider "
    "debate topic '{topic}'? Ignore tangential disputes). Name the two speakers as written before their words and state "
    "the claim they oppose on: a specific point under the topic, never the debate topic itself.{claim_id_rule}\n{known}"
    'Output ONLY JSON: {{"disagreements": [{{"has_direct_opposition": true, "has_specific_claim": '
    'true, "topic_relevant": true, "personas": {pair}, "claim": "...", "claim_id": null}}]}}'
)
KNOWN_CLAIMS = "Claims found earlier in this debate:\n{lines}\n"
KNOWN_CLAIM_ID = " If it is one of the claims listed below, also give its id as claim_id (else null)."
EXIT_CHECK = (
    "A crux room in a debate about: {topic}\nCrux under discussion: {question}\n"
    "Exchange turns so far: {n}. The last ones:\n{transcript}\n\n"
    "Has the crux been surfaced - are both now arguing about one specific, nameable point?\n"
    'Output ONLY JSON: {{"crux_surfaced": true|false, "reason": "..."}}'
)
CONVERGENCE_CHECK = (
    "Crux room in a debate about: {topic}\nTwo participants each named the premise buried under "
    "their disagreement:\n{statements}\n\nDo they name the same premise? If so, state it in one "
    "sentence as an assumption, not as the debate topic.\n"
    'Output ONLY JSON: {{"same_core": true|false, "core": "the shared premise, if any"}}'
)
# What a card's question must be (a card whose question uses only the instruction's words is refused).
CARD_QUESTION_RULE = (
    "the claim named in diagnosis, as a yes/no question that evidence or argument could settle, "
    "in the words of this conversation"
)
# The diagnosis comes first, in the prompt and in the reply's fields (which a JSON schema makes
# the order of writing): Qwen2.5-Coder-1.5B, asked for the question first, asked the
# instruction back, while its diagnosis named the real claim. The debate topic is not shown:
# with it on the first line, Qwen asked the topic itself as the card's question in every one of
# its replies, told or not that it must not; without it, the same conversation gave "Is it true
# that Bitcoin has no intrinsic value?" (the engine still refuses a question that restates it).
CARD = (
    "Aspect: {aspect}\n{setting} between {names} discussed: {question}\n\n"
    "Full conversation:\n{transcript}\n\nCorpus chunks each participant may cite, by id:\n{chunks}\n\n"
    "Extract the crux card. diagnosis: 1-2 sentences in your own words: the one specific claim "
    "in the conversation above that one of them holds and the other denies, and why they part ways "
    "on it. question: " + CARD_QUESTION_RULE + ": the specific point, not 'they disagree about X'. disagreement_type: "
    "one of premise, evidence, values, definition, horizon, claim. resolved and resolution: what "
    "changed and why, or why it is irreducible. For each participant (persona_id: the name written "
    "before their words): position YES|NO|NUANCED on the question, reasoning (2-3 sentences), falsifier "
    "('I would change my mind if...'), grounding_quotes: ids of the corpus chunks above that support "
    "the position (only ids listed above), quote: the sentence this participant said in the "
    "conversation above that shows the position, copied exactly.\n"
    'Output ONLY JSON: {{"diagnosis": "...", "question": "...", "disagreement_type": "...", '
    '"resolved": false, "resolution": null, "personas": [{{"persona_id": "...", "position": "YES", '
    '"reasoning": "...", "falsifier": "...", "grounding_quotes": ["chunk-id"], "quote": "..."}}]}}'
)
SUMMARIZE = (
    "Debate topic: {topic}\nRound: {label}\n{transcript}\n\nSummarize this round in 1-2 sentences: who "
    "argued what, and where they clashed.\n"
    'Output ONLY JSON: {{"summary": "..."}}'
)
SYCOPHANCY_CHECK = (
    "Previous turn by the other side:\n{previous}\n\nReply to check:\n{reply}\n\nSpeaker's flip "
    "conditions: {flips}\n\nDoes the reply capitulate (agree, concede or soften its position)? If so, "
    "does it name the specific claim that justifies the change, or is one of the speaker's flip "
    "conditions met?\n"
    'Output ONLY JSON: {{"capitulates": true|false, "names_specific_claim": true|false, '
    '"flip_condition_met": true|false}}'
)
