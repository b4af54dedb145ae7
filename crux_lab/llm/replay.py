"""Record any backend's calls to a JSONL cassette and replay them with no API calls.

A cassette holds one JSON object per line (:class:`CassetteEntry`), keyed by
``LLMRequest.request_hash(model)``: purpose, model, system, messages, schema, temperature and
max tokens. Hints are not part of the key (real backends ignore them).

- ``record``: every call goes to ``inner`` and is appended to the cassette (flushed per line,
  so a crash loses at most the call in flight).
- ``replay``: every call is answered from the cassette; a request it does not hold raises
  :class:`~crux_lab.llm.base.CassetteMiss`, naming the purpose and the cassette.
- ``auto``: answered from the cassette when it can, otherwise by ``inner`` and recorded.

The same request may be made more than once in a run (a vote taken three times, say); the
n-th identical request replays the n-th recorded answer. A replayed response is the recorded
one byte for byte (text, usage, cost, model) with ``backend="replay"``;
``parsed`` is rebuilt by validating the recorded text against the request's schema.

A cassette holds prompts and answers, never a header or a key: nothing else is written, and
every line passes through :func:`crux_lab.scrub.scrub`, which removes the value of any
configured key (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, any ``*_API_KEY``).
"""

from __future__ import annotations

import json
import os
import time
import warnings
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from crux_lab.llm.base import (
    Backend,
    BackendUnavailable,
    CassetteMiss,
    LLMOutputError,
    LLMRequest,
    LLMResponse,
)
from crux_lab.llm.pricing import default_model
from crux_lab.models.domain import Tier
from crux_lab.scrub import scrub

ReplayMode = Literal["record", "replay", "auto"]
MODES: tuple[ReplayMode, ...] = ("record", "replay", "auto")
CASSETTE_VERSION = 1
API_KEY_ENV = "ANTHROPIC_API_KEY"


class CassetteError(BackendUnavailable):
    """The cassette file cannot be used (missing, unreadable or corrupt)."""


class CassetteEntry(BaseModel):
    """One recorded call: what was asked (for diagnosis) and what came back."""

    model_config = ConfigDict(extra="forbid")

    version: int = CASSETTE_VERSION
    request_hash: str
    # The n-th time this exact request was made in the recorded run (0-based). Concurrent
    # calls finish out of order; this puts repeated identical requests back in issue order.
    occurrence: int | None = None
    purpose: str
    tier: Tier
    model: str
    request: dict[str, Any] = Field(default_factory=dict)
    # What came back: a response, or, for a reply that stayed off-schema after the backend's
    # repair, the error (replayed as the same LLMOutputError, so the engine takes the same path).
    response: LLMResponse | None = None
    error: str | None = None
    recorded_at: float = Field(default_factory=time.time)


def load_cassette(path: Path) -> list[CassetteEntry]:
    """Read a cassette. A line that is not complete JSON (a write torn by a crash) is skipped
    with a warning; a JSON line that is not a cassette entry is an error naming the file, the
    line, the field and the fix."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CassetteError(
            f"replay cassette {path} does not exist: record one first (run with a real or "
            f"simulated backend and --cassette {path}), or check the path."
        ) from None
    except OSError as exc:
        raise CassetteError(f"replay cassette {path} cannot be read: {exc.strerror}") from None
    lines = text.split("\n")
    entries: list[CassetteEntry] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            json.loads(line)
        except json.JSONDecodeError:
            warnings.warn(
                f"replay cassette {path}: ignoring the incomplete line {number} "
                f"(a recording was interrupted)",
                stacklevel=2,
            )
            continue
        try:
            entries.append(CassetteEntry.model_validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(line)"
            raise CassetteError(
                f"replay cassette {path}, line {number}, field '{where}': {first['msg']}. "
                f"The file is not a crux_lab cassette or was edited by hand; delete that line "
                f"or record the cassette again."
            ) from None
    return entries


class ReplayBackend:
    """Records another backend to a cassette, or replays a cassette (see the module docstring)."""

    name = "replay"

    def __init__(
        self, cassette: Path, inner: Backend | None = None, mode: ReplayMode = "replay"
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown replay mode '{mode}'. Valid modes: {', '.join(MODES)}.")
        if mode != "replay" and inner is None:
            raise ValueError(f"replay mode '{mode}' records, so it needs an inner backend")
        self.cassette = Path(cassette)
        self.inner = inner
        self.mode: ReplayMode = mode
        # request hash -> occurrence -> recorded entry
        self._recorded: dict[str, dict[int, CassetteEntry]] = {}
        self._tier_models: dict[Tier, str] = {}
        self._served: dict[str, int] = {}
        self.hits = 0
        self.misses = 0
        if mode == "replay" or self.cassette.exists():
            for entry in load_cassette(self.cassette):
                self._remember(entry)
        # Recording onto an existing cassette continues its numbering: a later replay serves
        # the earlier run's answers first.
        self._base = {key: len(slots) for key, slots in self._recorded.items()}

    def __repr__(self) -> str:
        inner = f", inner={self.inner.name}" if self.inner is not None else ""
        return f"ReplayBackend({str(self.cassette)!r}, mode={self.mode!r}{inner})"

    def model_for(self, tier: Tier) -> str:
        if self.inner is not None:
            return self.inner.model_for(tier)
        # Pure replay: the model the recording used for this tier (the hash depends on it).
        return self._tier_models.get(tier, default_model(tier))

    def recorded_calls(self) -> int:
        return sum(len(v) for v in self._recorded.values())

    def _remember(self, entry: CassetteEntry) -> None:
        slots = self._recorded.setdefault(entry.request_hash, {})
        slot = entry.occurrence
        if slot is None or slot in slots:
            slot = max(slots, default=-1) + 1
        slots[slot] = entry
        self._tier_models.setdefault(entry.tier, entry.model)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        model = self.model_for(request.tier)
        key = request.request_hash(model)
        occurrence = self._served.get(key, 0)
        self._served[key] = occurrence + 1
        recorded = self._recorded.get(key, {})
        if self.mode != "record" and occurrence in recorded:
            self.hits += 1
            entry = recorded[occurrence]
            if entry.response is None:
                raise LLMOutputError(request.purpose, entry.error or "recorded as invalid")
            return self._replayed(request, entry.response)
        if self.mode == "replay":
            self.misses += 1
            raise CassetteMiss(request.purpose, str(self.cassette), key)
        assert self.inner is not None
        slot = occurrence + (self._base.get(key, 0) if self.mode == "record" else 0)
        entry = CassetteEntry(
            request_hash=key, occurrence=slot, purpose=request.purpose, tier=request.tier, model=model,
            request=request.hash_payload(model),
        )
        try:
            response = await self.inner.generate(request)
        except LLMOutputError as exc:
            self._append(entry.model_copy(update={"error": exc.detail}))
            raise
        self._append(entry.model_copy(update={"response": response}))
        return response

    def _replayed(self, request: LLMRequest, recorded: LLMResponse) -> LLMResponse:
        parsed: BaseModel | None = None
        if request.output_schema is not None:
            try:
                parsed = request.output_schema.model_validate_json(recorded.text)
            except ValidationError as exc:
                raise LLMOutputError(
                    request.purpose,
                    f"the answer recorded in {self.cassette} no longer validates against "
                    f"{request.output_schema.__name__}: {exc.errors()[0]['msg']}",
                ) from None
        return recorded.model_copy(update={"backend": self.name, "parsed": parsed}, deep=True)

    def _append(self, entry: CassetteEntry) -> None:
        # Through the one scrubber: any configured key (every backend's) becomes [REDACTED].
        line = scrub(entry.model_dump_json())
        self.cassette.parent.mkdir(parents=True, exist_ok=True)
        torn = (
            self.cassette.exists()
            and self.cassette.stat().st_size > 0
            and not _ends_with_newline(self.cassette)
        )
        # One write of one whole line, flushed: appends from one process never interleave.
        # After a torn write, start on a fresh line so the new entry stays whole.
        with self.cassette.open("a", encoding="utf-8") as fh:
            fh.write(("\n" if torn else "") + line + "\n")
            fh.flush()
        self._remember(entry)


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def cassette_stats(path: Path) -> dict[str, Any]:
    """Counts of a cassette by purpose (for ``crux-lab`` to print before a replay).

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "empty.jsonl"
    >>> _ = p.write_text("")
    >>> cassette_stats(p)
    {'calls': 0, 'by_purpose': {}}
    """
    entries = load_cassette(path)
    by_purpose: dict[str, int] = {}
    for e in entries:
        by_purpose[e.purpose] = by_purpose.get(e.purpose, 0) + 1
    return {"calls": len(entries), "by_purpose": dict(sorted(by_purpose.items()))}


__all__ = [
    "CassetteEntry",
    "CassetteError",
    "CassetteMiss",
    "ReplayBackend",
    "ReplayMode",
    "cassette_stats",
    "load_cassette",
]
