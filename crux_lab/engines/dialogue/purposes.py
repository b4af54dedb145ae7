"""The purposes of the dialogue family's requests (``dialogue`` and ``dcg``), each with its
tier, temperature and token cap: everything on the strong tier. The simulator's answers to
them are in :mod:`.sim`.

A persona's opening is shared with the panel and kept in :mod:`crux_lab.llm.purposes`.
"""

from __future__ import annotations

from crux_lab.llm.base import declare_purpose
from crux_lab.models.domain import Tier

DIALOGUE_TURN = declare_purpose("dialogue_turn", Tier.strong, temperature=0.85, max_tokens=300, own_words=True, module=__name__)
CRYSTALLIZE = declare_purpose("crystallize", Tier.strong, temperature=0.3, max_tokens=2000, module=__name__)
DISCOVERY = declare_purpose("discovery", Tier.strong, temperature=0.3, max_tokens=1500, module=__name__)
RESOLUTION = declare_purpose("resolution", Tier.strong, temperature=0.85, max_tokens=500, own_words=True, module=__name__)
