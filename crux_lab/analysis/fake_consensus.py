"""Fake-consensus audit of a finished dialogue/dcg debate against simulator ground truth.

The bug it counts: a polarized pair reported as "consensus", with contradictory claims in the
common ground. With the persona simulator the truth is known, so the bug can be counted:

- a pair is *polarized* when two personas end the debate with opposite stances (pro vs con)
  on at least one proposition of their deck;
- *contradictory common ground*: two common-ground items of different personas on the same
  proposition whose personas end with opposite stances (``dialogue``: two grounded arguments), or one
  item (a DCG dispute) backed by personas that end with opposite stances;
- *contested common ground* (broader): any common-ground item on a proposition the pair ends
  up disputing, even if only one side stated it (an unattacked one-sided claim in ``dialogue``).

The audit is a scorer: it matches the result's items (arguments, disputes, cruxes, turns) to
the deck's planted propositions by their TEXT alone, with the word-overlap recognizer the
simulator reads with too (:meth:`crux_lab.personas.reading.Reader.recognize`: content-word
overlap with a proposition's text, question and keywords, at its recognition threshold, never
misreading). No id the engine or the simulator wrote is trusted.

"End with" = the ground-truth stance after the debate's own concessions and fired flip
conditions, as read from the transcript (:meth:`~crux_lab.personas.reading.Reader.current_stance`),
so legitimate agreement reached in the debate is never counted as fake.

The result's shape decides what its common ground is: a result with a dispute graph (DCG)
holds its disputes as common ground, any other its grounded arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from crux_lab.llm.base import TurnHint
from crux_lab.models.domain import Regime
from crux_lab.models.result import DebateResult
from crux_lab.personas.models import Persona, Proposition
from crux_lab.personas.reading import DeckReader


@dataclass(frozen=True)
class FakeConsensusAudit:
    polarized: bool
    labelled_consensus: bool
    contradictory_common_ground: list[str] = field(default_factory=list)
    contested_common_ground: list[str] = field(default_factory=list)
    # the cost side: contested propositions both sides spoke to, and those found as structural cruxes
    discussed_contested: list[str] = field(default_factory=list)
    found_cruxes: list[str] = field(default_factory=list)

    @property
    def crux_recall(self) -> float | None:
        """Share of the discussed contested propositions that ended up as a structural crux."""
        if not self.discussed_contested:
            return None
        return len(set(self.found_cruxes) & set(self.discussed_contested)) / len(self.discussed_contested)

    @property
    def fake_consensus(self) -> bool:
        """Fake consensus: a polarized pair called consensus, or contradictions as common ground."""
        return self.polarized and (self.labelled_consensus or bool(self.contradictory_common_ground))


def reader(
    result: DebateResult, personas: Mapping[str, Persona], propositions: Mapping[str, Proposition]
) -> DeckReader:
    """A reader of the result's texts: the transcript read turn by turn, no misreading."""
    said = [TurnHint(speaker_id=t.persona_id, text=t.dialogue, turn_index=t.turn_index) for t in result.transcript]
    return DeckReader.of(personas, propositions, said)


def final_stances(
    result: DebateResult, personas: Mapping[str, Persona], propositions: Mapping[str, Proposition]
) -> dict[tuple[str, str], str | None]:
    """(persona, proposition) -> ground-truth stance at the end of the debate."""
    read = reader(result, personas, propositions)
    return {
        (pid, prop): read.current_stance(pid, prop)
        for pid in result.config.persona_ids
        for prop in propositions
    }


def audit(
    result: DebateResult, personas: Mapping[str, Persona], propositions: Mapping[str, Proposition]
) -> FakeConsensusAudit:
    """Audit one result for fake consensus, matching its items by text."""
    read = reader(result, personas, propositions)
    final = {(pid, prop): read.current_stance(pid, prop) for pid in result.config.persona_ids for prop in propositions}
    ids = list(result.config.persona_ids)

    def about(text: str) -> str | None:
        prop = read.recognize(text)
        return prop.id if prop is not None else None

    def opposed(prop: str, who: list[str]) -> bool:
        seen = {final.get((p, prop)) for p in who}
        return {"pro", "con"} <= seen

    polarized = any(opposed(prop, ids) for prop in propositions)
    contradictory: list[str] = []
    contested: list[str] = []
    questions = {d.id: d.question for d in result.dcg.disputes}
    claims = {a.id: a.claim for a in result.graph.arguments}
    if result.dcg.disputes:  # a dispute graph's common ground: its disputes (dcg)
        for cg in result.common_ground:
            prop = about(questions.get(cg.dispute_id or "", cg.statement))
            if prop is None:
                continue
            if opposed(prop, cg.persona_ids):
                contradictory.append(f"{cg.dispute_id}:{prop}")
            if opposed(prop, ids):
                contested.append(f"{cg.dispute_id}:{prop}")
    else:
        args = {a.id: a for a in result.graph.arguments}
        grounded = [(args[a], about(args[a].claim)) for a in result.graph.grounded if a in args]
        for i, (a, pa) in enumerate(grounded):
            if pa and opposed(pa, ids):
                contested.append(f"{a.id}:{pa}")
            for b, pb in grounded[i + 1 :]:
                if pa and pa == pb and a.speaker_id != b.speaker_id and opposed(pa, [a.speaker_id, b.speaker_id]):
                    contradictory.append(f"{a.id}+{b.id}:{pa}")
    spoke: dict[str, set[str]] = {}
    for t in read.turns:
        for prop in t.proposition_ids:
            spoke.setdefault(prop, set()).add(t.speaker_id)
    discussed = sorted(p for p, who in spoke.items() if len(who) >= 2 and opposed(p, sorted(who)))
    found: set[str] = set()
    for c in result.cruxes:
        if c.source not in ("dispute", "symmetric_difference", "assumption"):
            continue
        texts = [questions[c.dispute_id]] if c.dispute_id in questions else [claims[a] for a in c.argument_ids if a in claims]
        found |= {p for p in map(about, texts or [c.statement]) if p}
    return FakeConsensusAudit(
        discussed_contested=discussed,
        found_cruxes=sorted(found),
        polarized=polarized,
        labelled_consensus=result.regime is Regime.consensus,
        contradictory_common_ground=contradictory,
        contested_common_ground=contested,
    )
