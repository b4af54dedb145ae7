"""One channel, checked: a backend that records every request and reply of a debate and
fails when ground truth travels where a real model would not put it.

A deck's propositions are the planted answer. They may reach a persona's own system prompt
(its beliefs) but:

- no hint may hold a proposition id, nor a proposition's text or question that the prompt
  itself does not show;
- no reply field may hold a proposition id;
- an extractor's prompt (decompose, detection, crystallizer, validation, card, summary, exit
  check, sycophancy check, ...) may show a proposition's wording only when the debate put it
  there: the topic, or text some earlier reply produced. Never the deck's list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from crux_lab.llm.base import LLMRequest, LLMResponse
from crux_lab.models import Tier
from crux_lab.personas.models import Proposition

# Roles that read a transcript rather than speak as a persona.
EXTRACTOR_PURPOSES = frozenset(
    {
        "decompose",
        "detect_disagreement",
        "exit_check",
        "card",
        "summarize",
        "anti_sycophancy_check",
        "crystallize",
        "discovery",
        "validate_attacks",
        "decompose_claims",
        "blackboard_summary",
        "final_output",
        "urgency",
        "worldview",
        "crux_pairs",
        "judge",
        "direct_cards",
        "cot_cards",
        "judge_falsifiers",
    }
)


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


@dataclass
class Wrapped:
    """A backend that wraps another: the name and models are the inner backend's."""

    inner: Any

    @property
    def name(self) -> str:
        return str(self.inner.name)

    def model_for(self, tier: Tier) -> str:
        return str(self.inner.model_for(tier))


@dataclass
class LeakCheckingBackend(Wrapped):
    """Wraps a backend; ``violations`` lists every leak seen (empty = one channel held)."""

    propositions: Mapping[str, Proposition] = field(default_factory=dict)
    topic: str = ""
    violations: list[str] = field(default_factory=list)
    requests: list[LLMRequest] = field(default_factory=list)
    said: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        ids = sorted(self.propositions, key=len, reverse=True)
        self._id_re = re.compile(r"(?<![\w.-])(" + "|".join(re.escape(i) for i in ids) + r")(?![\w-])") if ids else None

    def _wordings(self) -> Iterable[tuple[str, str]]:
        for p in self.propositions.values():
            for w in (p.text.rstrip("."), p.question.rstrip("?")):
                if len(w) > 12:
                    yield p.id, w

    def _check_request(self, request: LLMRequest) -> None:
        prompt = f"{request.system}\n{request.user}"
        hints = request.hints.model_dump()
        hints.pop("topic")  # the researcher's topic is input, not planted truth (it may quote a deck question)
        for s in _strings(hints):
            if self._id_re is not None and (m := self._id_re.search(s)):
                self.violations.append(f"{request.purpose}: hint holds the ground-truth id {m.group(1)!r}")
            for pid, w in self._wordings():
                if w in s and w not in prompt:
                    self.violations.append(f"{request.purpose}: hint holds {pid}'s wording, which the prompt does not show")
        if request.purpose in EXTRACTOR_PURPOSES:
            produced = "\n".join([self.topic, *self.said])
            for pid, w in self._wordings():
                if w in prompt and w not in produced:
                    self.violations.append(f"{request.purpose}: extractor prompt shows {pid}'s wording, which no reply produced")

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        self._check_request(request)
        response: LLMResponse = await self.inner.generate(request)
        reply = response.text
        if response.parsed is not None:
            reply = json.dumps(response.parsed.model_dump(mode="json"))
        if self._id_re is not None and (m := self._id_re.search(reply)):
            self.violations.append(f"{request.purpose}: reply holds the ground-truth id {m.group(1)!r}")
        if "annotations" in type(response).model_fields:
            self.violations.append("LLMResponse still has an annotations side channel")
        self.said.append(response.text)
        return response
