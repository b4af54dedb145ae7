"""One call for an engine's persona turn: grounding + tiered history + instruction, in budget.

:func:`persona_turn_message` composes :func:`crux_lab.personas.retrieval.grounding_for`,
:func:`crux_lab.personas.prompt.reanchor_line` and
:func:`crux_lab.personas.prompt.build_turn_message`. Engines that need finer control call
those directly.
"""

from __future__ import annotations

from crux_lab.personas.models import Persona
from crux_lab.personas.prompt import (
    DEFAULT_OUTPUT,
    TURN_BUDGET,
    Framing,
    HistoryContext,
    build_turn_message,
    reanchor_line,
)
from crux_lab.personas.retrieval import TextEmbedder, grounding_for

REANCHOR_EVERY = 4  # periodic identity re-anchoring, against the persona fading over a long context


def persona_turn_message(
    persona: Persona,
    instruction: str,
    *,
    history: HistoryContext | str | None = None,
    query: str | None = None,
    tension: str | None = None,
    opponent: str | None = None,
    turn_number: int | None = None,
    framing: Framing = "second",
    length: str = "2-4 sentences",
    output_format: str | None = DEFAULT_OUTPUT,
    max_tokens: int = TURN_BUDGET,
    embedder: TextEmbedder | None = None,
) -> str:
    """The per-turn user message for ``persona`` (≤ ``max_tokens``).

    ``query`` is the claim under discussion (e.g. the last opponent turn); its relevant beliefs
    are retrieved and prepended, or nothing when none clears the threshold (contract-only);
    ``opponent`` (display name of who made that claim) adds a "Tension:" line naming the belief that claim presses on.
    ``turn_number`` (the persona's own turn count) adds the re-anchoring line every
    ``REANCHOR_EVERY`` turns.
    """
    grounding = grounding_for(persona, query, tension=tension, opponent=opponent, framing=framing, embedder=embedder) if query else ""
    reanchor = ""
    if turn_number is not None and turn_number > 0 and turn_number % REANCHOR_EVERY == 0:
        reanchor = reanchor_line(persona, framing=framing)
    return build_turn_message(instruction, history=history, grounding=grounding, reanchor=reanchor,
                              length=length, output_format=output_format, max_tokens=max_tokens)
