"""A test oracle that reads result texts the way the simulator's extractors do: which deck
proposition a crux, a claim or a common-ground statement states (no misreading), and what
each persona truly holds on it. Tests use it to check engines against the planted ground truth
now that results carry no ground-truth ids."""

from __future__ import annotations

import random
from collections.abc import Sequence

from crux_lab.llm.base import Hints
from crux_lab.llm.simulated.core import SimContext
from crux_lab.llm.simulated.options import SimulatorKnobs
from crux_lab.personas.loader import load_personas, propositions_for


class Reader:
    def __init__(self, persona_ids: Sequence[str]) -> None:
        self.personas = load_personas(list(persona_ids))
        self.propositions = propositions_for(list(persona_ids))
        self.ctx = SimContext(
            rng=random.Random(0), knobs=SimulatorKnobs(), personas=self.personas,
            propositions=self.propositions, hints=Hints(),
        )

    def proposition(self, text: str) -> str | None:
        """The id of the deck proposition ``text`` states, if the reader recognises one."""
        prop = self.ctx.recognize(text)
        return prop.id if prop is not None else None

    def stances(self, proposition_id: str) -> set[str]:
        """What the personas truly hold on a proposition."""
        return {s.stance for p in self.personas.values() if (s := p.stance_on(proposition_id)) is not None}

    def contested(self, proposition_id: str | None) -> bool:
        return proposition_id is not None and {"pro", "con"} <= self.stances(proposition_id)
