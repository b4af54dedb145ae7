"""The whole outcome of one debate (:class:`DebateResult`), as every engine fills it."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from crux_lab.models.accounting import LLMCall, Usage
from crux_lab.models.base import SCHEMA_VERSION, Model
from crux_lab.models.config import DebateConfig
from crux_lab.models.domain import (
    AcceptedClaim,
    ArgumentGraph,
    Aspect,
    Camp,
    CommonGround,
    Concession,
    Crux,
    CruxCard,
    DCGState,
    DialogueTurn,
    PersonaPosition,
    PollSummary,
    PositionShift,
    Regime,
)
from crux_lab.models.events import DebateEvent


class StructuredCheck(Model):
    """How a model server's replies were held to their JSON schema in one run.

    ``mode`` is what the run used: ``json_schema`` (the schema sent as ``response_format``)
    or ``prompt`` (the schema stated in the prompt, every reply validated either way).
    ``canary`` is what a one-off request whose schema admits a single sentinel value showed:
    the server ``enforced`` the schema, ``ignored`` it (answered HTTP 200 with other text),
    ``rejected`` it (HTTP 400), or it was ``not checked`` (``--structured prompt``).

    >>> StructuredCheck(mode="prompt", canary="ignored", server="http://127.0.0.1:8080/v1").line()
    'structured output: prompt contract (the server at http://127.0.0.1:8080/v1 ignored a JSON schema it was sent)'
    """

    mode: Literal["json_schema", "prompt"]
    canary: Literal["enforced", "ignored", "rejected", "not checked"]
    server: str = ""
    requested: Literal["auto", "json_schema", "prompt"] = "auto"

    def line(self) -> str:
        mode = "JSON schema (response_format)" if self.mode == "json_schema" else "prompt contract"
        why = {
            "enforced": "enforced a JSON schema it was sent",
            "ignored": "ignored a JSON schema it was sent",
            "rejected": "refused a JSON schema it was sent",
            "not checked": "was not checked: --structured prompt",
        }[self.canary]
        return f"structured output: {mode} (the server at {self.server} {why})"

    def warning(self) -> str | None:
        """A warning when the server does not hold replies to a schema it is sent."""
        if self.canary not in ("ignored", "rejected"):
            return None
        if self.mode == "prompt":
            return (
                f"the server at {self.server} {self.canary} a JSON schema it was sent (response_format): "
                f"prompt mode is in use, the schema is stated in each prompt and every reply is validated"
            )
        return (
            f"the server at {self.server} {self.canary} a JSON schema it was sent, but --structured "
            f"json_schema keeps sending it; use --structured auto or prompt"
        )


class DebateResult(Model):
    """The whole outcome of one debate. Engines fill what applies and leave the rest empty."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    config: DebateConfig
    engine: str
    backend: str
    # Each persona's display name as the run saw it, so a report read later names the
    # personas even when their library is gone (an eval's scenarios live in a temporary one).
    persona_names: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)
    complete: bool = False
    transcript: list[DialogueTurn] = Field(default_factory=list)
    events: list[DebateEvent] = Field(default_factory=list)
    aspects: list[Aspect] = Field(default_factory=list)
    graph: ArgumentGraph = Field(default_factory=ArgumentGraph)
    dcg: DCGState = Field(default_factory=DCGState)
    cruxes: list[Crux] = Field(default_factory=list)
    crux_cards: list[CruxCard] = Field(default_factory=list)
    common_ground: list[CommonGround] = Field(default_factory=list)
    # Accepted but contested claims (graph mode): grounded arguments another persona attacked.
    accepted_claims: list[AcceptedClaim] = Field(default_factory=list)
    camps: list[Camp] = Field(default_factory=list)
    # The groups camps came from when they overlapped (preferred extensions: a persona's
    # arguments can sit in several); camps themselves are disjoint (analysis.sides).
    extensions: list[Camp] = Field(default_factory=list, exclude_if=lambda v: not v)
    concession_trail: list[Concession] = Field(default_factory=list)
    regime: Regime = Regime.unknown
    regime_description: str = ""
    # How the server held replies to their schema (openai backend; None elsewhere).
    structured: StructuredCheck | None = Field(default=None, exclude_if=lambda v: v is None)
    positions: list[PersonaPosition] = Field(default_factory=list)
    position_shifts: list[PositionShift] = Field(default_factory=list)
    # the output every engine fills
    fault_lines: list[str] = Field(default_factory=list)
    flip_conditions: dict[str, list[str]] = Field(default_factory=dict)
    resolution_paths: list[str] = Field(default_factory=list)
    evidence_ledger: dict[str, list[str]] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)
    llm_calls: list[LLMCall] = Field(default_factory=list)
    duration_s: float = 0.0
    error: str | None = None
    # Per-debate evaluation metrics (crux_lab.analysis.metrics.compute_metrics); NaN-free.
    metrics: dict[str, float] = Field(default_factory=dict)
    # What the poll of candidate cruxes did (crux_lab.engines.poll); None: no poll ran.
    poll: PollSummary | None = Field(default=None, exclude_if=lambda v: v is None)
