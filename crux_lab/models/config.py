"""A debate's configuration: topic, personas, engine, backend and its options, seed, parameters."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import Field, model_validator

from crux_lab.models.base import Model

MAX_TURNS = 10_000


class DebateConfig(Model):
    topic: str = Field(min_length=1)
    persona_ids: list[str] = Field(min_length=1)
    engine: str = "dialogue"
    backend: str = "simulated"
    # Bounds are checked before any call: a seed must fit the store's BIGINT, and a turn
    # budget beyond MAX_TURNS is a typo (it would run for days, then fail to store).
    seed: int = Field(0, ge=0, le=2**63 - 1)
    max_turns: int = Field(30, gt=0, le=MAX_TURNS)
    # The backend's own options (crux_lab.backends), checked by the backend when it is built;
    # left out of dumps while empty.
    backend_options: dict[str, Any] = Field(default_factory=dict, exclude_if=lambda v: not v)
    # Engine-specific parameters (e.g. max_rounds, aspects); each engine validates its own.
    params: dict[str, Any] = Field(default_factory=dict)
    # Per-purpose overrides of the model allocation: {"crux_turn": {"tier": "fast", "temperature": 0.5}}
    allocation: dict[str, dict[str, Any]] = Field(default_factory=dict)
    deck: str | None = None
    # The model each tier called ({"strong": ..., "fast": ...}, crux_lab.llm.tier_models) and
    # the server of the openai backend: provenance, and part of the run id when set. Left out
    # of dumps while empty, so the run ids of runs without them stay as they were.
    models: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)
    base_url: str | None = Field(default=None, exclude_if=lambda v: v is None)
    # --structured for the openai backend (auto, json_schema, prompt); left out while unset.
    structured: Literal["auto", "json_schema", "prompt"] | None = Field(default=None, exclude_if=lambda v: v is None)

    @model_validator(mode="before")
    @classmethod
    def _legacy_options(cls, data: Any) -> Any:
        """Configs written before backends carried their own options kept the simulator's
        failure knobs under ``sim``: they load with the knobs that were set (the non-zero
        ones) as the backend's options.

        >>> DebateConfig.model_validate({"topic": "t", "persona_ids": ["a"],
        ...     "sim": {"drift": 0.5, "misread": 0.0}}).backend_options
        {'drift': 0.5}
        """
        if isinstance(data, dict) and "sim" in data:
            data = dict(data)
            legacy = data.pop("sim") or {}
            if "backend_options" not in data:
                data["backend_options"] = {k: v for k, v in dict(legacy).items() if v}
        return data

    def run_id(self) -> str:
        """Stable id: a hash of the parameters and the seed (see DESIGN.md "One writer")."""
        payload = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]
