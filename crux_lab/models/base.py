"""The base of every persisted model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 1


class Model(BaseModel):
    """Base for persisted models: strict about unknown keys, so typos fail loudly."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
