"""A two-persona synthetic panel built in code, so the llm tests need no persona library."""

from __future__ import annotations

from pathlib import Path

from crux_lab.personas.models import (
    BeliefGraph,
    BeliefNode,
    Deck,
    DeckFile,
    EvidencePolicy,
    FlipTrigger,
    Persona,
    PersonaContract,
    PersonaStances,
    Proposition,
    PropositionStance,
    VoiceProfile,
)

PROPOSITIONS = {
    "t.p1": Proposition(
        id="t.p1",
        text="Remote work raises productivity.",
        question="Does remote work raise productivity?",
        keywords=["remote", "productivity"],
        aspect="productivity",
    ),
    "t.p2": Proposition(
        id="t.p2",
        text="Offices are needed to train junior staff.",
        question="Are offices needed to train junior staff?",
        keywords=["office", "training", "junior"],
        aspect="training",
    ),
}


def _persona(pid: str, name: str, p1: str, p2: str) -> Persona:
    contract = PersonaContract(
        persona_id=pid,
        name=name,
        kind="synthetic",
        personality=f"{name} is a synthetic archetype for tests.",
        bias="Has a view on remote work.",
        stakes="None.",
        epistemology="Trusts field studies.",
        time_horizon="Five years.",
        flip_conditions="A large controlled study.",
        evidence_policy=EvidencePolicy(accepts=["field studies"], rejects=["anecdotes"]),
    )
    stances = PersonaStances(
        persona_id=pid,
        stances=[
            PropositionStance(
                proposition_id="t.p1",
                stance=p1,
                confidence=0.8,
                reason=f"{name}'s reason about productivity.",
                flip_conditions=[
                    FlipTrigger(
                        id=f"{pid}.f1",
                        kind="evidence",
                        description="a randomized trial shows the opposite",
                        proposition_id="t.p1",
                        keywords=["randomized trial"],
                    )
                ],
                disagreement_type="evidence",
                belief_node_ids=[f"{pid}-n1"],
            ),
            PropositionStance(
                proposition_id="t.p2",
                stance=p2,
                confidence=0.7,
                reason=f"{name}'s reason about training.",
                disagreement_type="values",
            ),
        ],
    )
    beliefs = BeliefGraph(
        persona_id=pid,
        nodes=[BeliefNode(id=f"{pid}-n1", concept="Output is what counts", type="core_value", confidence=0.8)],
    )
    voice = VoiceProfile(vocabulary=["look", "frankly"], speech_patterns=["short sentences"])
    return Persona(id=pid, contract=contract, voice=voice, corpus=[], stances=stances, beliefs=beliefs)


def tiny_panel() -> tuple[dict[str, Persona], dict[str, Proposition]]:
    personas = {
        "ada-remote": _persona("ada-remote", "Ada Remote", "pro", "con"),
        "bo-office": _persona("bo-office", "Bo Office", "con", "pro"),
    }
    return personas, dict(PROPOSITIONS)


def write_library(root: Path) -> list[str]:
    """Write the panel as a persona library folder (for runs that load personas from disk)."""
    personas, propositions = tiny_panel()
    root.mkdir(parents=True, exist_ok=True)
    for pid, persona in personas.items():
        folder = root / pid
        folder.mkdir()
        (folder / "contract.json").write_text(persona.contract.model_dump_json(by_alias=True))
        (folder / "voice.json").write_text(persona.voice.model_dump_json(by_alias=True))
        (folder / "stances.json").write_text(persona.stances.model_dump_json(by_alias=True))
        (folder / "corpus.jsonl").write_text("")
        assert persona.beliefs is not None
        (folder / "beliefs.json").write_text(persona.beliefs.model_dump_json(by_alias=True))
    deck = Deck(
        id="remote",
        name="Remote work",
        description="Test deck.",
        persona_ids=list(personas),
        topics=["Is remote work better?"],
        propositions=list(propositions.values()),
    )
    (root / "decks.json").write_text(DeckFile(decks=[deck]).model_dump_json(by_alias=True))
    return list(personas)


PREFERRED_ENGINES = ("dialogue", "classical", "blitz", "dcg", "graph", "panel", "crux_rooms")


def first_loadable_engine(engines: object) -> str | None:
    """The first engine that imports (another engine being mid-edit must not matter here)."""
    for name in PREFERRED_ENGINES:
        try:
            engines.get(name)  # type: ignore[attr-defined]
        except Exception:
            continue
        return name
    return None


__all__ = ["first_loadable_engine", "tiny_panel", "write_library"]
