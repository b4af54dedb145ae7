"""A small synthetic deck with planted cruxes, for the tests and benchmarks of the crux engines.

Four synthetic archetypes (labelled ``synthetic``; no real person) debate a strategic bitcoin
reserve. Seven propositions spread over three aspects. Five are contested,
one per disagreement type premise/horizon/evidence/definition/values; two are consensus
propositions (the only honest common ground). One flip condition is planted so that a real,
reason-named position shift can happen (``trader`` on ``p2`` when someone cites the halving
cycle).

:func:`write_test_deck` writes the deck in the persona library format (``decks.json`` plus one
folder per persona), so the ordinary loader reads it through ``$CRUX_LAB_PERSONAS``.
"""

from __future__ import annotations

import json
from pathlib import Path

from crux_lab.personas.models import (
    AnchorExcerpt,
    BeliefEdge,
    BeliefGraph,
    BeliefNode,
    CorpusChunk,
    Deck,
    DeckFile,
    EvidencePolicy,
    FlipTrigger,
    PersonaContract,
    PersonaStances,
    Proposition,
    PropositionStance,
    VoiceProfile,
)

TOPIC = "Should the US create a strategic bitcoin reserve?"
DECK_ID = "reserve-test"
PERSONA_IDS = ("maximalist", "trader", "goldbug", "protocol_dev")

MONETARY = "Monetary policy and store of value"
SECURITY = "Security, custody and operational risk"
REGULATORY = "Regulatory precedent and global implications"

# (id, text, question, keywords, aspect, disagreement type or None for consensus)
PROPOSITIONS: list[tuple[str, str, str, list[str], str, str | None]] = [
    ("p1", "Bitcoin's fixed supply makes it a superior store of value.",
     "Does a fixed supply make bitcoin a superior store of value?",
     ["supply", "store", "value", "scarcity", "monetary"], MONETARY, "premise"),
    ("p2", "Bitcoin's volatility makes it unsuitable for a treasury reserve.",
     "Is bitcoin's volatility disqualifying for a treasury reserve?",
     ["volatility", "treasury", "reserve", "monetary", "drawdown"], MONETARY, "horizon"),
    ("p3", "Government custody of bitcoin can be made secure against theft and loss.",
     "Can government custody of bitcoin be made secure?",
     ["custody", "security", "theft", "keys", "operational"], SECURITY, "evidence"),
    ("p4", "Proof-of-work energy expenditure is what secures the network.",
     "Does proof-of-work energy expenditure constitute security?",
     ["proof", "work", "energy", "security", "network"], SECURITY, "definition"),
    ("p5", "Monetary sovereignty matters more than fiscal prudence for a reserve decision.",
     "Should monetary sovereignty outweigh fiscal prudence?",
     ["sovereignty", "prudence", "fiscal", "regulatory", "global"], REGULATORY, "values"),
    ("p6", "A US reserve would set a precedent that other nations follow.",
     "Would a US reserve set a global precedent?",
     ["precedent", "nations", "global", "regulatory"], REGULATORY, None),
    ("p7", "Bitcoin's protocol caps the supply at 21 million coins.",
     "Is the bitcoin supply capped at 21 million?",
     ["supply", "cap", "million", "protocol"], MONETARY, None),
]

# persona -> proposition -> (stance, confidence, reason)
STANCES: dict[str, dict[str, tuple[str, float, str]]] = {
    "maximalist": {
        "p1": ("pro", 0.95, "Absolute scarcity is the one property no central bank can debase."),
        "p2": ("con", 0.85, "Volatility fades with adoption; every halving cycle shows lower drawdowns over decades."),
        "p3": ("pro", 0.7, "Multisignature cold storage already protects institutional holdings."),
        "p4": ("pro", 0.9, "Energy spent is the cost an attacker must match, so it is the security."),
        "p5": ("pro", 0.8, "A nation that holds hard money keeps its monetary sovereignty."),
        "p6": ("pro", 0.8, "Game theory forces other nations to follow the first mover."),
        "p7": ("pro", 0.99, "The cap is enforced by every node that validates blocks."),
    },
    "trader": {
        "p1": ("pro", 0.6, "Scarcity supports the long-run bid even if the path is noisy."),
        "p2": ("pro", 0.7, "A reserve asset with sixty percent drawdowns fails the treasury mandate on a five-year view."),
        "p3": ("con", 0.65, "Exchange hacks show custody failures are routine, not exceptional."),
        "p4": ("pro", 0.55, "Hash rate is the market's measure of what attacking the chain would cost."),
        "p5": ("con", 0.7, "Fiscal prudence comes first; sovereignty talk is a marketing story."),
        "p6": ("pro", 0.7, "Central banks copy each other; one reserve invites others."),
        "p7": ("pro", 0.95, "The supply schedule is public and has never changed."),
    },
    "goldbug": {
        "p1": ("con", 0.9, "Value needs intrinsic use; a fixed ledger entry is not a store of value."),
        "p2": ("pro", 0.9, "No treasury can hold an asset that halves in a year."),
        "p3": ("con", 0.8, "Lost keys and insider theft are unrecoverable, unlike vaulted gold."),
        "p4": ("con", 0.6, "Burning energy proves cost, not security of the holder."),
        "p5": ("con", 0.85, "Prudence with taxpayer money outweighs speculative sovereignty claims."),
        "p6": ("pro", 0.6, "Others would follow, which is exactly the danger."),
        "p7": ("pro", 0.9, "The code caps the supply, whatever that is worth."),
    },
    "protocol_dev": {
        "p1": ("uncertain", 0.5, "Scarcity matters but utility and security budgets matter too."),
        "p2": ("pro", 0.6, "Treasury reserves need stability that bitcoin has not shown yet."),
        "p3": ("pro", 0.75, "Threshold signatures and audited key ceremonies make custody tractable."),
        "p4": ("con", 0.85, "Security comes from economic finality and validator stake, not energy burned."),
        "p5": ("pro", 0.6, "Sovereign control of settlement rails is worth a prudent allocation."),
        "p6": ("pro", 0.75, "Reserve adoption spreads through trade partners."),
        "p7": ("pro", 0.99, "The cap is in the consensus rules."),
    },
}

FLIPS: dict[tuple[str, str], FlipTrigger] = {
    ("trader", "p2"): FlipTrigger(
        id="trader-flip-halving",
        kind="argument",
        description="someone shows drawdowns shrinking across halving cycles",
        proposition_id="p2",
        keywords=["halving"],
        new_stance="uncertain",
    ),
}

VOCAB: dict[str, list[str]] = {
    "maximalist": ["Hard money wins", "Fix the money"],
    "trader": ["Look at the tape", "Follow the flows"],
    "goldbug": ["History is clear", "Sound money is tangible"],
    "protocol_dev": ["Read the spec", "Incentives decide"],
}

NAMES: dict[str, str] = {
    "maximalist": "The Maximalist",
    "trader": "The Macro Trader",
    "goldbug": "The Gold Advocate",
    "protocol_dev": "The Protocol Developer",
}


def _chunk_id(persona_id: str, prop_id: str) -> str:
    return f"{persona_id}-c-{prop_id}"


def propositions() -> list[Proposition]:
    return [
        Proposition(id=pid, text=text, question=q, keywords=kw, aspect=aspect)
        for pid, text, q, kw, aspect, _ in PROPOSITIONS
    ]


def planted_contested(persona_ids: tuple[str, ...] | list[str] = PERSONA_IDS) -> dict[str, str]:
    """Proposition id -> planted disagreement type, for the contested propositions that at least
    two of ``persona_ids`` hold on opposite sides (pro vs con)."""
    out: dict[str, str] = {}
    for pid, *_, dtype in PROPOSITIONS:
        sides = {STANCES[p][pid][0] for p in persona_ids}
        if dtype is not None and {"pro", "con"} <= sides:
            out[pid] = dtype
    return out


def _persona_files(persona_id: str, bad_grounding: bool) -> dict[str, object]:
    name = NAMES[persona_id]
    contract = PersonaContract(
        persona_id=persona_id,
        name=name,
        handle=f"@{persona_id}",
        kind="synthetic",
        version="test",
        personality=f"{name} is a synthetic archetype used to test the crux engines.",
        bias="Sticks to its archetype's priors.",
        stakes="None; synthetic.",
        epistemology="Weighs evidence according to its archetype.",
        time_horizon="Decades" if persona_id == "maximalist" else "Five years",
        flip_conditions="Changes its mind only on a specific, named argument or evidence.",
        evidence_policy=EvidencePolicy(accepts=["data"], rejects=["appeals to popularity"], weighting="data first"),
        anchor_excerpts=[
            AnchorExcerpt(text=STANCES[persona_id]["p1"][2], source="synthetic archetype", kind="synthetic")
        ],
    )
    voice = VoiceProfile(
        speech_patterns=["Short declarative sentences."],
        vocabulary=VOCAB[persona_id],
        forbidden_phrases=["great point", "I understand your perspective"],
    )
    corpus = [
        CorpusChunk(id=_chunk_id(persona_id, pid), text=reason, source="synthetic archetype", kind="synthetic")
        for pid, (_, _, reason) in STANCES[persona_id].items()
    ]
    nodes: list[BeliefNode] = []
    edges: list[BeliefEdge] = []
    stances: list[PropositionStance] = []
    for pid, (stance, conf, reason) in STANCES[persona_id].items():
        node_id = f"{persona_id}-n-{pid}"
        nodes.append(
            BeliefNode(
                id=node_id,
                concept=reason.rstrip("."),
                type="factual_claim" if pid in ("p3", "p7") else "inference",
                confidence=conf,
                grounding=[_chunk_id(persona_id, pid)],
            )
        )
        dtype = next(d for p, *_, d in PROPOSITIONS if p == pid)
        grounding = [_chunk_id(persona_id, pid)]
        if bad_grounding and pid == "p1":
            grounding = [f"{persona_id}-c-missing"]
        stances.append(
            PropositionStance(
                proposition_id=pid,
                stance=stance,
                confidence=conf,
                reason=reason,
                flip_conditions=[FLIPS[(persona_id, pid)]] if (persona_id, pid) in FLIPS else [],
                disagreement_type=dtype,
                belief_node_ids=[node_id],
                grounding=grounding,
            )
        )
    # A small causal chain: the store-of-value belief supports the reserve and sovereignty beliefs.
    for a, b in (("p1", "p2"), ("p1", "p5"), ("p4", "p3")):
        edges.append(
            BeliefEdge.model_validate(
                {
                    "from": f"{persona_id}-n-{a}",
                    "to": f"{persona_id}-n-{b}",
                    "polarity": 1,
                    "confidence": 0.7,
                    "sourceChunks": [_chunk_id(persona_id, a)],
                }
            )
        )
    return {
        "contract.json": contract,
        "voice.json": voice,
        "stances.json": PersonaStances(persona_id=persona_id, stances=stances),
        "beliefs.json": BeliefGraph(persona_id=persona_id, nodes=nodes, edges=edges),
        "corpus.jsonl": corpus,
    }


def write_test_deck(root: Path, *, bad_grounding_for: str | None = None) -> Deck:
    """Write the deck and its four personas under ``root`` (a persona library folder).

    ``bad_grounding_for`` makes that persona's stance on ``p1`` cite a corpus chunk that does not
    exist, so card validation can be tested.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     deck = write_test_deck(Path(d))
    ...     sorted(p.name for p in Path(d).iterdir())[:2]
    ['decks.json', 'goldbug']
    >>> deck.id, len(deck.propositions)
    ('reserve-test', 7)
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    deck = Deck(
        id=DECK_ID,
        name="Strategic reserve (test)",
        description="Synthetic archetypes with planted cruxes of five disagreement types.",
        persona_ids=list(PERSONA_IDS),
        topics=[TOPIC],
        propositions=propositions(),
    )
    (root / "decks.json").write_text(DeckFile(decks=[deck]).model_dump_json(by_alias=True, indent=1))
    for pid in PERSONA_IDS:
        folder = root / pid
        folder.mkdir(exist_ok=True)
        for fname, content in _persona_files(pid, bad_grounding_for == pid).items():
            if isinstance(content, list):
                text = "\n".join(json.dumps(c.model_dump(mode="json", by_alias=True)) for c in content)
            else:
                text = content.model_dump_json(by_alias=True, indent=1)  # type: ignore[attr-defined]
            (folder / fname).write_text(text + "\n", encoding="utf-8")
    return deck
