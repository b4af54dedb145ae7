"""The purposes of the blackboard family's requests (``graph``, ``blitz`` and ``classical``),
each with its tier, temperature and token cap: the fast tier for reading, checking and
summarising, the strong tier for what a persona says. The simulator's answers to them are in
:mod:`.sim`.
"""

from __future__ import annotations

from crux_lab.llm.base import declare_purpose
from crux_lab.models.domain import Tier

# graph: arguments, attacks on them, and the validation of the attacks
INITIAL_ARGUMENTS = declare_purpose("initial_arguments", Tier.strong, temperature=0.7, max_tokens=1500, own_words=True, module=__name__)
GENERATE_ATTACKS = declare_purpose("generate_attacks", Tier.strong, temperature=0.7, max_tokens=1500, module=__name__)
VALIDATE_ATTACKS = declare_purpose("validate_attacks", Tier.fast, temperature=0.2, max_tokens=1500, module=__name__)
# the shared first steps: sub-claims and initial stances
DECOMPOSE_CLAIMS = declare_purpose("decompose_claims", Tier.fast, temperature=0.3, max_tokens=600, module=__name__)
INITIAL_STANCE = declare_purpose("initial_stance", Tier.strong, temperature=0.7, max_tokens=500, module=__name__)
# a persona's turn (answered as a persona speaks; no engine sends it today)
AGENT_TURN = declare_purpose("agent_turn", Tier.strong, temperature=0.8, max_tokens=500, own_words=True, module=__name__)
# blitz and classical: the blackboard, its urgency bids, its summary and the final output
BLACKBOARD_TURN = declare_purpose("blackboard_turn", Tier.strong, temperature=0.8, max_tokens=500, own_words=True, module=__name__)
URGENCY = declare_purpose("urgency", Tier.fast, temperature=0.3, max_tokens=200, module=__name__)
BLACKBOARD_SUMMARY = declare_purpose("blackboard_summary", Tier.fast, temperature=0.3, max_tokens=500, module=__name__)
FINAL_OUTPUT = declare_purpose("final_output", Tier.fast, temperature=0.3, max_tokens=1500, module=__name__)
