"""The events engines stream, one pydantic model per ``type`` tag."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import Field, PlainValidator, SerializeAsAny, TypeAdapter

from crux_lab.models.base import Model
from crux_lab.models.domain import (
    ArgumentGraph,
    Aspect,
    CommonGround,
    Crux,
    CruxCard,
    CruxPoll,
    DCGState,
    DebateOutput,
    DialogueTurn,
    PositionShift,
    Regime,
)
from crux_lab.registry import Registry, UnknownName


class EventBase(Model):
    """What every event carries: its place in the run's log (``seq``, numbered by the runner)
    and when it happened. Each event class adds a ``type`` tag and registers under it."""

    seq: int = 0
    ts: float = Field(default_factory=time.time)
    if TYPE_CHECKING:  # every subclass declares its own tag as a Literal field
        type: str


# The event types by ``type`` tag. Engine families register their own events with
# @register_event in their own package; the registry imports those modules (named below, never
# imported here) on the first tag it does not know, so a stored result validates whether or
# not the process has loaded those engines.
EVENT_TYPES: Registry[type[EventBase]] = Registry(
    "event type",
    plugins=(
        "crux_lab.engines.dialogue.events",  # dialogue, dcg
        "crux_lab.engines.crux_room.events",  # panel, crux_rooms
        "crux_lab.engines.blackboard.events",  # blitz, classical, graph
    ),
)

E = TypeVar("E", bound=type[EventBase])


def register_event(cls: E) -> E:
    """Class decorator: register an event class under its ``type`` tag."""
    event_class: type[EventBase] = cls
    tag = event_class.model_fields["type"].default
    if not isinstance(tag, str) or not tag:
        raise TypeError(f"{cls.__name__} needs a `type` field with a default tag to be registered")
    EVENT_TYPES.add(tag, cls, origin=cls.__module__)
    return cls


@register_event
class EngineStart(EventBase):
    type: Literal["engine_start"] = "engine_start"
    engine: str
    topic: str
    persona_ids: list[str]
    backend: str = ""
    run_id: str = ""


@register_event
class DialogueTurnEvent(EventBase):
    type: Literal["dialogue_turn"] = "dialogue_turn"
    turn: DialogueTurn


@register_event
class GraphUpdated(EventBase):
    type: Literal["graph_updated"] = "graph_updated"
    graph: ArgumentGraph
    in_count: int
    out_count: int
    undec_count: int


@register_event
class CruxProposed(EventBase):
    type: Literal["crux_proposed"] = "crux_proposed"
    persona_id: str
    statement: str
    acknowledged: bool = False


@register_event
class DCGUpdate(EventBase):
    type: Literal["dcg_update"] = "dcg_update"
    dcg: DCGState
    cruxes: list[Crux] = Field(default_factory=list)
    common_ground: list[CommonGround] = Field(default_factory=list)
    regime: Regime = Regime.unknown


@register_event
class EngineComplete(EventBase):
    type: Literal["engine_complete"] = "engine_complete"
    complete: bool = True
    regime: Regime = Regime.unknown
    summary: str = ""


@register_event
class EngineError(EventBase):
    """An error or a warning. ``level='warning'`` means the debate went on without it."""

    type: Literal["engine_error"] = "engine_error"
    level: Literal["warning", "error"] = "error"
    purpose: str = ""
    error: str


@register_event
class DebateStart(EventBase):
    type: Literal["debate_start"] = "debate_start"
    topic: str
    aspects: list[Aspect] = Field(default_factory=list)
    personas: list[str] = Field(default_factory=list)


@register_event
class DebateComplete(EventBase):
    type: Literal["debate_complete"] = "debate_complete"
    shifts: list[PositionShift] = Field(default_factory=list)
    output: DebateOutput | None = None


@register_event
class ErrorEvent(EventBase):
    type: Literal["error"] = "error"
    error: str


@register_event
class MessagePosted(EventBase):
    type: Literal["message_posted"] = "message_posted"
    message: DialogueTurn
    phase: Literal["opening", "take", "clash", "closing", "channel"]


@register_event
class CruxMessage(EventBase):
    type: Literal["crux_message"] = "crux_message"
    room_id: str
    message: DialogueTurn
    room_phase: Literal["position", "exchange", "convergence"] = "exchange"


@register_event
class CruxCardPosted(EventBase):
    type: Literal["crux_card_posted"] = "crux_card_posted"
    card: CruxCard


@register_event
class CruxPolled(EventBase):
    """A candidate crux put to every persona alone (``crux_lab.engines.poll``): its question,
    each persona's answer and pivot, and what the poll made of it."""

    type: Literal["crux_polled"] = "crux_polled"
    item_id: str
    kind: Literal["card", "crux"]
    poll: CruxPoll


@register_event
class GraphUpdate(EventBase):
    type: Literal["graph_update"] = "graph_update"
    round: int
    graph: ArgumentGraph


@register_event
class Status(EventBase):
    type: Literal["status"] = "status"
    message: str


@register_event
class AgentTurn(EventBase):
    type: Literal["agent_turn"] = "agent_turn"
    turn: DialogueTurn
    intent: str = ""
    urgency: float | None = None


def event_type(tag: str) -> type[EventBase]:
    """The event class of a ``type`` tag; an unknown tag gets an error listing the known ones.

    >>> event_type("status").__name__
    'Status'
    """
    known = EVENT_TYPES.entries.get(tag)
    return known if known is not None else EVENT_TYPES.get(tag)


def _validate_event(value: Any) -> EventBase:
    if isinstance(value, EventBase):
        return value
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise ValueError("an event is an object with a string 'type' tag")
    try:
        cls = event_type(value["type"])
    except UnknownName as exc:
        raise ValueError(str(exc)) from None
    return cls.model_validate(value)


# Any registered event: validated by its ``type`` tag, dumped with all of its own fields.
DebateEvent = Annotated[SerializeAsAny[EventBase], PlainValidator(_validate_event)]

EVENT_ADAPTER: TypeAdapter[DebateEvent] = TypeAdapter(DebateEvent)


def parse_event(data: str | bytes | dict[str, Any]) -> DebateEvent:
    """Parse one event from a JSON line or a dict.

    >>> e = parse_event('{"type": "status", "message": "hi"}')
    >>> type(e).__name__, e.message
    ('Status', 'hi')
    """
    if isinstance(data, dict):
        return EVENT_ADAPTER.validate_python(data)
    return EVENT_ADAPTER.validate_json(data)
