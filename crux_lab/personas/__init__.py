"""Personas: file formats, the shipped library, prompts, retrieval and revision.

Modules (import what you need; only the loader is re-exported here, to keep imports light):

- :mod:`crux_lab.personas.models` — pydantic file formats and the runtime ``Persona``;
- :mod:`crux_lab.personas.loader` — ``load_persona``, ``load_decks``, ``propositions_for`` ...;
- :mod:`crux_lab.personas.prompt` — consolidated system prompt, tiered history, turn message;
- :mod:`crux_lab.personas.retrieval` — per-turn belief retrieval with cached embeddings;
- :mod:`crux_lab.personas.revision` — accepted/rejected claim lists and position history.

The belief-graph build pipeline (it asks a backend) and the ``crux-lab personas`` commands
live above the LLM layer, in :mod:`crux_lab.persona_tools`.
"""

from crux_lab.personas.loader import (
    PersonaError,
    PersonaFileError,
    UnknownDeck,
    UnknownPersona,
    deck_for,
    get_deck,
    list_personas,
    load_decks,
    load_persona,
    load_personas,
    persona_root,
    propositions_for,
)

__all__ = [
    "PersonaError",
    "PersonaFileError",
    "UnknownDeck",
    "UnknownPersona",
    "deck_for",
    "get_deck",
    "list_personas",
    "load_decks",
    "load_persona",
    "load_personas",
    "persona_root",
    "propositions_for",
]
