"""Structured output shared by the real backends: the JSON contract, parsing, repair, strict schemas.

Every real backend validates a reply with the request's pydantic schema, whatever the server
promised: a server-side JSON schema (OpenAI ``response_format``, Anthropic
``output_config.format``) makes a valid first reply likely, never certain.
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from crux_lab.llm.base import LLMCallFailed, LLMOutputError, LLMRequest, LLMResponse
from crux_lab.models.accounting import Usage


class StructuredOutputInvalid(ValueError):
    """The answer is not JSON, or not JSON that validates against the schema."""


def extract_json(text: str) -> str:
    """The JSON object inside an answer: code fences and surrounding prose removed.

    >>> extract_json('```json\\n{"a": 1}\\n```')
    '{"a": 1}'
    >>> extract_json('Here it is: {"a": {"b": 2}} Hope that helps.')
    '{"a": {"b": 2}}'
    >>> extract_json("no json here")
    'no json here'
    """
    stripped = text.strip()
    fenced = re.match(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```$", stripped, re.DOTALL)
    if fenced:
        stripped = fenced.group(1).strip()
    if stripped.startswith(("{", "[")):
        return stripped
    start, end = stripped.find("{"), stripped.rfind("}")
    if start != -1 and end > start:
        return stripped[start : end + 1]
    return stripped


def parse_structured(text: str, schema: type[BaseModel], context: Any = None) -> BaseModel:
    """Parse and validate an answer; raises :class:`StructuredOutputInvalid` with a short reason.

    >>> from pydantic import BaseModel
    >>> class Vote(BaseModel):
    ...     side: str
    >>> parse_structured('{"side": "YES"}', Vote).side
    'YES'
    >>> parse_structured('{"side": ', Vote)
    Traceback (most recent call last):
    ...
    crux_lab.llm.structured.StructuredOutputInvalid: not valid JSON: Expecting value at line 1 column 9
    """
    blob = extract_json(text)
    try:
        data = json.loads(blob)
    except json.JSONDecodeError as exc:
        raise StructuredOutputInvalid(
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    try:
        return schema.model_validate(data, context=context)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors()[:10]
        ]
        more = f" (and {exc.error_count() - 10} more)" if exc.error_count() > 10 else ""
        raise StructuredOutputInvalid(
            f"JSON does not match the schema {schema.__name__}: " + "; ".join(problems) + more
        ) from None


def user_content(request: LLMRequest) -> str:
    """The user message: the request's text, plus the JSON contract when a schema is set."""
    schema = request.schema_json()
    if schema is None:
        return request.user
    return (
        f"{request.user}\n\n"
        "Answer with exactly one JSON object and nothing else (no prose, no code fences). "
        "It must validate against this JSON Schema:\n"
        f"{json.dumps(schema, ensure_ascii=False, sort_keys=True)}"
    )


def repair_instruction(problem: str) -> str:
    return (
        f"Your previous answer could not be used: {problem}. Reply again with only the "
        "corrected JSON object, valid against the JSON Schema given above."
    )


@dataclass(frozen=True)
class Reply:
    """One exchange with a model's API, reduced to what the repair flow needs (runtime-only)."""

    text: str
    usage: Usage
    retries: int
    model: str
    stop: str | None = None  # the API's stop reason, in its own words ("max_tokens", "length")
    cut_off: bool = False  # the answer stopped at the token limit
    cost_usd: float = 0.0

    def then(self, later: Reply) -> Reply:
        """This exchange followed by its repair: the later answer, what both consumed.

        >>> a = Reply("{", Usage(calls=1, input_tokens=10), 1, "m", cost_usd=0.5)
        >>> b = a.then(Reply("{}", Usage(calls=1, input_tokens=20), 0, "m", cost_usd=0.25))
        >>> b.text, b.usage.calls, b.usage.input_tokens, b.retries, b.cost_usd
        ('{}', 1, 30, 1, 0.75)
        """
        return Reply(
            text=later.text,
            usage=both_usage(self.usage, later.usage),
            retries=self.retries + later.retries,
            model=later.model,
            stop=later.stop,
            cut_off=later.cut_off,
            cost_usd=round(self.cost_usd + later.cost_usd, 10),
        )


def both_usage(a: Usage, b: Usage) -> Usage:
    """Two exchanges' usage as one call's."""
    return (a + b).model_copy(update={"calls": 1})


def response_of(backend: str, reply: Reply, text: str, parsed: BaseModel | None, started: float, *, repaired: bool) -> LLMResponse:
    return LLMResponse(
        text=text,
        parsed=parsed,
        model=reply.model,
        backend=backend,
        usage=reply.usage,
        latency_s=round(time.perf_counter() - started, 6),
        cost_usd=reply.cost_usd,
        retries=reply.retries,
        repaired=repaired,
    )


async def answer_with_one_repair(
    backend: str,
    request: LLMRequest,
    messages: list[dict[str, Any]],
    first: Reply,
    send: Callable[[list[dict[str, Any]]], Awaitable[Reply]],
    started: float,
    *,
    echo_chars: int | None = None,
) -> LLMResponse:
    """The answer to ``request`` from its ``first`` exchange over ``messages``: validated
    against the request's schema, or repaired once through ``send`` (the failed answer and
    what was wrong with it are shown to the model), or an :class:`LLMOutputError`.

    A cut-off answer is echoed in the repair turn only up to ``echo_chars``: one that ran to
    the token limit is mostly a loop, and echoing it whole invites the same loop again.
    """
    if request.output_schema is None:
        if not first.text.strip():
            hint = "; it ran to the token limit: raise max_tokens for this purpose" if first.cut_off else ""
            raise LLMOutputError(
                request.purpose,
                f"the answer has no text (the model stopped: {first.stop}){hint}",
                usage=first.usage,
                retries=first.retries,
                after_repair=False,
            )
        return response_of(backend, first, first.text, None, started, repaired=False)
    try:
        parsed = parse_structured(first.text, request.output_schema, request.validation_context)
        return response_of(backend, first, extract_json(first.text), parsed, started, repaired=False)
    except StructuredOutputInvalid as problem:
        reason = str(problem)
        shown = first.text.strip() or "(no answer)"
        if first.cut_off:
            reason += " (the answer was cut off at the token limit: be more concise)"
            if echo_chars is not None and len(shown) > echo_chars:
                shown = shown[:echo_chars] + " ..."
    try:
        second = await send([*messages, {"role": "assistant", "content": shown}, {"role": "user", "content": repair_instruction(reason)}])
    except LLMCallFailed as exc:
        exc.usage = both_usage(first.usage, exc.usage or Usage(cache_read_tokens=None))
        exc.retries += first.retries
        raise
    both = first.then(second)
    try:
        parsed = parse_structured(second.text, request.output_schema, request.validation_context)
    except StructuredOutputInvalid as problem:
        raise LLMOutputError(request.purpose, str(problem), usage=both.usage, retries=both.retries) from None
    return response_of(backend, both, extract_json(second.text), parsed, started, repaired=True)



def strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The schema in the form strict JSON-schema modes accept, or None when it has no such form.

    Strict modes (OpenAI ``strict: true``, Anthropic structured outputs) want every object
    closed (``additionalProperties: false``) with every property listed in ``required``, and
    no ``default``. A field with a default becomes required: the model states it, and the
    pydantic schema still validates the reply. A free-form mapping (``dict[str, X]``) has no
    strict form, so the caller falls back to a non-strict schema or the prompt contract.

    >>> strict_schema({"type": "object", "properties": {"a": {"type": "integer", "default": 1}}})
    {'type': 'object', 'properties': {'a': {'type': 'integer'}}, 'additionalProperties': False, 'required': ['a']}
    >>> strict_schema({"type": "object", "additionalProperties": {"type": "string"}}) is None
    True
    """
    out = copy.deepcopy(schema)
    return out if _make_strict(out) else None


def _make_strict(node: Any) -> bool:
    if isinstance(node, list):
        return all(_make_strict(item) for item in node)
    if not isinstance(node, dict):
        return True
    node.pop("default", None)
    if node.get("type") == "object" or "properties" in node:
        extra = node.get("additionalProperties", False)
        if extra is not False:
            return False
        node["additionalProperties"] = False
        node["required"] = list(node.get("properties", {}))
    for key, value in node.items():
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            if not all(_make_strict(v) for v in value.values()):
                return False
        elif key not in ("required", "enum", "const", "examples") and not _make_strict(value):
            return False
    return True


__all__ = [
    "StructuredOutputInvalid",
    "extract_json",
    "parse_structured",
    "repair_instruction",
    "strict_schema",
    "user_content",
]
