"""Compact authoring format for the shipped persona library (build-time only, not packaged).

A persona is written once as a :class:`PersonaSpec`; ``build_library.py`` expands it into the
five files of ``data/personas/<id>/`` and validates them with the package's pydantic models.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# (text, source description, date)
Chunk = tuple[str, str, str]
# (concept, type, [chunk keys])
Node = tuple[str, str, list[str]]
# (from node key, to node key, polarity, [chunk keys])
Edge = tuple[str, str, int, list[str]]
# (kind, description, keywords, new_stance)
Trigger = tuple[str, str, list[str], str]


@dataclass
class StanceSpec:
    stance: str
    confidence: float
    reason: str
    nodes: list[str]  # hand-written node keys this stance rests on
    chunks: list[str]  # corpus chunk keys grounding it
    triggers: list[Trigger] = field(default_factory=list)


@dataclass
class PropSpec:
    key: str  # "p1"
    text: str
    question: str
    keywords: list[str]
    aspect: str
    disagreement_type: str | None  # None = consensus proposition


@dataclass
class PersonaSpec:
    id: str
    prefix: str  # short prefix for chunk and node ids, e.g. "saylor"
    name: str
    kind: str  # real | synthetic
    handle: str
    personality: str
    bias: str
    stakes: str
    epistemology: str
    time_horizon: str
    flip_conditions: str
    accepts: list[str]
    rejects: list[str]
    weighting: str
    speech_patterns: list[str]
    vocabulary: list[str]
    forbidden_phrases: list[str]
    voice_examples: list[str]
    fingerprint: list[str]
    corpus: dict[str, Chunk]
    nodes: dict[str, Node]
    edges: list[Edge]
    stances: dict[str, StanceSpec]
    anchors: list[str]  # chunk keys promoted to contract anchor excerpts


@dataclass
class DeckSpec:
    id: str
    name: str
    description: str
    topics: list[str]
    propositions: list[PropSpec]
    personas: list[PersonaSpec]
