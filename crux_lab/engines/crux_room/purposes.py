"""The purposes of the crux-room family's requests (``panel`` and ``crux_rooms``), each with its
tier, temperature and token cap: the fast tier for reading and checking, the strong tier for
what a persona says and for cards. The simulator's answers to them are in :mod:`.sim`.

Shared with other engines and kept in :mod:`crux_lab.llm.purposes`: a persona's opening, the
worldview step, the poll.
"""

from __future__ import annotations

from crux_lab.llm.base import declare_purpose
from crux_lab.models.domain import Tier

# panel: the topic's aspects, each persona's take on one, its summary, rebuttals, closings
DECOMPOSE = declare_purpose("decompose", Tier.fast, temperature=0.3, max_tokens=600, module=__name__)
TAKE = declare_purpose("take", Tier.strong, temperature=0.85, max_tokens=400, own_words=True, module=__name__)
REBUTTAL = declare_purpose("rebuttal", Tier.strong, temperature=0.8, max_tokens=400, own_words=True, module=__name__)
SUMMARIZE = declare_purpose("summarize", Tier.fast, temperature=0.3, max_tokens=300, module=__name__)
CLOSING = declare_purpose("closing", Tier.strong, temperature=0.85, max_tokens=500, own_words=True, module=__name__)
# both: disagreement detection, the crux rooms, their exit checks and cards
DETECT_DISAGREEMENT = declare_purpose("detect_disagreement", Tier.fast, temperature=0.2, max_tokens=300, module=__name__)
CRUX_TURN = declare_purpose("crux_turn", Tier.strong, temperature=0.75, max_tokens=400, own_words=True, module=__name__)
EXIT_CHECK = declare_purpose("exit_check", Tier.fast, temperature=0.2, max_tokens=200, module=__name__)
CARD = declare_purpose("card", Tier.strong, temperature=0.3, max_tokens=1200, module=__name__)
ANTI_SYCOPHANCY_CHECK = declare_purpose("anti_sycophancy_check", Tier.fast, temperature=0.2, max_tokens=200, module=__name__)
# crux_rooms: a message on the shared channel
CHANNEL_MESSAGE = declare_purpose("channel_message", Tier.strong, temperature=0.85, max_tokens=200, own_words=True, module=__name__)
