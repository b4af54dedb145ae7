"""Parameters shared by the panel and crux_rooms engines (``DebateConfig.params``)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field, model_validator

from crux_lab.engines.base import EngineConfigError
from crux_lab.engines.crux_room.antisyc import AntiSycophancyParams
from crux_lab.engines.poll import PollParams

DEFAULT_MAX_PERSONAS = 6
HARD_MAX_PERSONAS = 12


class CruxParams(PollParams):
    max_personas: int = Field(
        DEFAULT_MAX_PERSONAS, ge=2, le=HARD_MAX_PERSONAS, description="Largest panel this run accepts."
    )
    context_budget: int = Field(2000, ge=300, le=8000, description="Token cap of the per-turn debate context.")
    # crux rooms
    room_min_exchange: int = Field(2, ge=0, le=20)
    room_max_exchange: int = Field(8, ge=1, le=20)
    room_turn_cap: int = Field(20, ge=4, le=60, description="Safety cap on the turns of one room.")
    room_last_turns: int = Field(4, ge=1, le=12, description="Verbatim turns in a room's bounded context.")
    max_rooms: int = Field(3, ge=0, le=20, description="Crux rooms per debate (cost control).")
    shift_embeddings: bool = Field(True, description="Compute opening/closing embedding distance.")
    worldview: bool = Field(
        True,
        description="Before the debate, each persona states its positions with their implicit assumptions, "
        "and a reader lists each pair's conflicting assumptions; they are kept as assumption cruxes "
        "(n + n(n-1)/2 calls for n personas).",
    )
    # anti-sycophancy stack (:mod:`.antisyc`): one switch per measure
    anonymize_history: bool = True
    position_statement: bool = True
    belief_anchoring: bool = True
    post_check: bool = True
    update_rule: bool = True

    @model_validator(mode="after")
    def _ranges(self) -> CruxParams:
        if self.room_min_exchange > self.room_max_exchange:
            raise ValueError("room_min_exchange must be <= room_max_exchange")
        return self

    def antisyc(self) -> AntiSycophancyParams:
        return AntiSycophancyParams(
            anonymize_history=self.anonymize_history,
            position_statement=self.position_statement,
            belief_anchoring=self.belief_anchoring,
            post_check=self.post_check,
            update_rule=self.update_rule,
        )


def check_max_personas(engine: str, persona_ids: Sequence[str], params: CruxParams) -> None:
    """Refuse a panel larger than this run's ``params.max_personas`` (the engines' own hard
    maximum is checked by the runner from the class attribute).

    >>> check_max_personas("panel", ["a", "b", "c"], CruxParams(max_personas=2))
    Traceback (most recent call last):
    ...
    crux_lab.engines.base.EngineConfigError: engine 'panel' is configured for at most 2 personas (params.max_personas); got 3. Remove personas or raise max_personas (up to 12).
    """
    n = len(persona_ids)
    if n > params.max_personas:
        raise EngineConfigError(
            f"engine '{engine}' is configured for at most {params.max_personas} personas (params.max_personas); "
            f"got {n}. Remove personas or raise max_personas (up to {HARD_MAX_PERSONAS})."
        )
