"""What the simulator can debate: the beliefs of one deck, on a topic those beliefs touch.

The simulator's personas know only their deck's propositions. A topic none of them touches
would silently turn into a debate about the deck, and personas of two decks share no
proposition at all. Both are refused before anything runs, with the nearest deck topics and
the way out: a real model (``--backend anthropic`` or ``--backend openai``) debates any topic.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from crux_lab.embed import get_embedder
from crux_lab.personas.models import Deck
from crux_lab.personas.reading import words

# Cosine similarity (MiniLM) of the topic with the deck's closest topic or proposition.
IN_SCOPE_AT = 0.50
# Between the two, a topic that shares a content word with the deck's keywords is in scope.
NEAR_AT = 0.40


class TopicOutsideDeck(ValueError):
    """The simulator cannot debate this topic with these personas."""


@lru_cache(maxsize=32)
def _deck_vectors(texts: tuple[str, ...]) -> np.ndarray:
    v = np.asarray(get_embedder().encode(list(texts)), dtype=float)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def _texts(deck: Deck) -> tuple[str, ...]:
    return tuple([*deck.topics, *(p.text for p in deck.propositions), *(p.question for p in deck.propositions)])


def topic_fit(topic: str, deck: Deck) -> tuple[float, str]:
    """The deck text closest to ``topic`` and its cosine similarity."""
    texts = _texts(deck)
    vecs = _deck_vectors(texts)
    q = _deck_vectors((topic,))[0]
    sims = vecs @ q
    k = int(np.argmax(sims))
    return float(sims[k]), texts[k]


def check_simulated_topic(topic: str, persona_ids: Sequence[str], decks: Sequence[Deck]) -> None:
    """Raise :class:`TopicOutsideDeck` unless the personas share a deck whose beliefs the topic
    touches."""
    home = [d for d in decks if set(persona_ids) <= set(d.persona_ids)]
    if not home:
        where = {pid: next((d.id for d in decks if pid in d.persona_ids), "no deck") for pid in persona_ids}
        listing = ", ".join(f"{pid} ({deck})" for pid, deck in where.items())
        raise TopicOutsideDeck(
            f"the simulated backend can only debate personas of one deck; these come from different decks: "
            f"{listing}. Pick personas of one deck (crux-lab personas decks), or run a real model "
            "(--backend anthropic or --backend openai), which can debate any mix of personas."
        )
    deck = home[0]
    score, _ = topic_fit(topic, deck)
    keywords = words(" ".join(k for p in deck.propositions for k in p.keywords))
    if score >= IN_SCOPE_AT or (score >= NEAR_AT and words(topic) & keywords):
        return
    q = _deck_vectors((topic,))[0]
    nearest = sorted(deck.topics, key=lambda t: -float(_deck_vectors((t,))[0] @ q))[:3]
    raise TopicOutsideDeck(
        f"the simulated backend cannot debate {topic!r}: its {deck.name!r} personas only hold beliefs on their "
        f"deck's questions (closest match {score:.2f}). Nearest deck topics: "
        + "; ".join(repr(t) for t in nearest)
        + ". A real model can debate any topic: --backend anthropic (ANTHROPIC_API_KEY) or --backend openai "
        "(a local server: crux-lab local-model start)."
    )
