"""The simulator's own options: the hooks its backend entry (:mod:`.factory`) names.

Its options are its failure knobs (``DebateConfig.backend_options``, ``--sim KEY=VALUE``) and
its persona library: the personas it speaks for and their deck's propositions. Building it for
a debate also checks that the debate is one it can hold (:mod:`crux_lab.llm.simulated.scope`).
Only pydantic at import time: the CLI reads the knobs' names for ``--sim`` without loading the
simulator.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import Field

from crux_lab.models.base import Model
from crux_lab.models.config import DebateConfig
from crux_lab.personas.models import Persona, Proposition


class SimulatorKnobs(Model):
    """Failure modes of the persona simulator, each a probability (0 = off)."""

    sycophancy: float = Field(0.0, ge=0.0, le=1.0)
    missed_attack: float = Field(0.0, ge=0.0, le=1.0)
    vague_crux: float = Field(0.0, ge=0.0, le=1.0)
    drift: float = Field(0.0, ge=0.0, le=1.0)
    # Extractor roles misread a turn: recognise the wrong claim (or none), or misclassify a type.
    misread: float = Field(0.0, ge=0.0, le=1.0)

    def as_options(self) -> dict[str, float]:
        """The knobs that are set, as ``DebateConfig.backend_options``.

        >>> SimulatorKnobs(drift=0.5).as_options()
        {'drift': 0.5}
        """
        return {k: v for k, v in self.model_dump().items() if v}


@dataclass(frozen=True)
class SimulatorOptions:
    """What the simulator is built from: the personas it speaks for, their propositions, the
    seed of its randomness and its knobs."""

    personas: Mapping[str, Persona]
    propositions: Mapping[str, Proposition]
    seed: int = 0
    knobs: SimulatorKnobs = field(default_factory=SimulatorKnobs)


def for_debate(config: DebateConfig) -> SimulatorOptions:
    """The simulator's options for ``config``: its personas' library and the configured knobs.

    Raises :class:`~crux_lab.llm.simulated.scope.TopicOutsideDeck` (one line) when the
    personas come from several decks or the topic touches none of their deck's beliefs: the
    simulator debates only its deck's questions, so it refuses before a call or a file.
    """
    from crux_lab.llm.simulated.scope import check_simulated_topic
    from crux_lab.personas.loader import load_decks, load_personas, propositions_for

    knobs = SimulatorKnobs(**config.backend_options)
    check_simulated_topic(config.topic, config.persona_ids, load_decks())
    return SimulatorOptions(
        personas=load_personas(config.persona_ids),
        propositions=propositions_for(config.persona_ids),
        seed=config.seed,
        knobs=knobs,
    )


def for_library(
    personas: Mapping[str, Persona], propositions: Mapping[str, Proposition], seed: int = 0
) -> SimulatorOptions:
    """The simulator's options for a run that is not a debate (building a persona, judging)."""
    return SimulatorOptions(personas=personas, propositions=propositions, seed=seed)
