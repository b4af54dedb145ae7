"""The crystallizer: reads a cluster of turns, writes graph mutations.

Two writers share one interface. :class:`GraphCrystallizer` writes the Dung argument graph of the ``dialogue`` engine
(``CrystallizationResult``); :class:`DCGCrystallizer` writes the dispute-centric graph. The
engine loop does not know which one it drives. A reply that cannot be parsed is never fatal:
the caller records a warning and the debate goes on without that mutation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from crux_lab.analysis.restates import restates_topic_flags
from crux_lab.engines.base import turn_hints
from crux_lab.engines.dialogue import prompts
from crux_lab.engines.dialogue.controller import gist
from crux_lab.engines.dialogue.dcg_state import DCGChange, DCGHolder, dcg_insights
from crux_lab.engines.dialogue.events import Crystallization
from crux_lab.engines.dialogue.graph import ArgumentGraphState, graph_insights
from crux_lab.engines.dialogue.schemas import (
    ConcessionNote,
    CruxNote,
    CrystallizationResult,
    DCGCrystallizationResult,
    DCGDiscoveryResult,
    DiscoveryResult,
    crystallization_reply_for,
)
from crux_lab.engines.guards import (
    Side,
    SideGuard,
    narrates,
    norm_words,
    position_sentences,
    quote_found,
)
from crux_lab.engines.names import persona_ref, quote
from crux_lab.llm.base import Hints, LLMOutputError, LLMResponse
from crux_lab.models.domain import (
    Argument,
    Attack,
    Camp,
    CommonGround,
    Concession,
    ConcessionKind,
    Crux,
    DialogueTurn,
    Move,
    Regime,
)
from crux_lab.models.events import DCGUpdate, DebateEvent, GraphUpdated


def parse_reply(purpose: str, response: LLMResponse, schema: type[BaseModel]) -> Any:
    """The parsed reply, validating the raw text when the backend did not parse it."""
    if isinstance(response.parsed, schema):
        return response.parsed
    try:
        return schema.model_validate_json(response.text)
    except ValidationError as exc:
        raise LLMOutputError(purpose, f"reply does not match {schema.__name__}: {exc.errors()[0]['msg']}") from None


@dataclass
class Applied:
    """What one crystallization did, as the engine loop needs it."""

    events: list[DebateEvent] = field(default_factory=list)
    concessions: list[Concession] = field(default_factory=list)
    new_nodes: int = 0
    changed: bool = False
    crux: CruxNote | None = None
    refused: list[str] = field(default_factory=list)
    reworded: list[str] = field(default_factory=list)  # stances shown in their speaker's own words


@dataclass
class Insights:
    cruxes: list[Crux]
    common_ground: list[CommonGround]
    camps: list[Camp]
    regime: Regime
    regime_description: str


R = TypeVar("R", bound=BaseModel)


class Crystallizer(ABC):
    """What the engine loop needs from a crystallizer, whichever graph it writes."""

    def side_guard(self, turns: Sequence[DialogueTurn]) -> SideGuard | None:
        """The grounded-sides guard of a crystallization reply (None: its items are no sides)."""
        return None

    def narrated(self, reply: DCGCrystallizationResult) -> list[str]:
        """The new disputes whose question speaks about the talk, not a point in it
        (:func:`~crux_lab.engines.guards.narrates`), as a problem the model can fix in its one
        repair; a question still so after it is refused (:meth:`off_topic`)."""
        return [f"the dispute {quote(d.question)} speaks about the talk, not the point in dispute: "
                "write the premise itself, as a statement one speaker holds and another denies"
                for d in reply.new_disputes if narrates(d.question)]

    def without_sides(self, reply: Any, drop: set[tuple[str, str]]) -> Any:
        return reply

    def reply_schema(self, cluster: Sequence[DialogueTurn]) -> type[BaseModel]:
        """The schema a crystallization of ``cluster`` is asked for and read with."""
        return self.schema

    schema: type[BaseModel]
    discovery_schema: type[BaseModel]
    shown_label: str

    def __init__(self, topic: str, persona_ids: Sequence[str], names: Mapping[str, str]) -> None:
        self.topic = topic
        self.persona_ids = list(persona_ids)
        self.names = dict(names)
        self.count = 0
        self._conceded: set[tuple[int, str]] = set()

    def named(self, reply: R) -> tuple[R, list[str]]:
        """``reply`` with every item's ``speaker_id`` resolved to a persona id, however the
        model named the speaker (:func:`persona_ref`); an item naming no one speaker is left
        out, and the refusal, quoting it, is returned for the run's warning."""
        refused: list[str] = []
        update: dict[str, list[Any]] = {}
        for name, value in reply:
            if not isinstance(value, list) or not any(hasattr(x, "speaker_id") for x in value):
                continue
            kept = []
            for item in value:
                pid = persona_ref(item.speaker_id, self.names)
                if pid is None:
                    what = getattr(item, "statement", "") or getattr(item, "claim", "") or getattr(item, "conceded_claim", "")
                    refused.append(f"{name} item by {quote(item.speaker_id)} ({quote(what)}): it names no one speaker")
                    continue
                kept.append(item.model_copy(update={"speaker_id": pid}) if pid != item.speaker_id else item)
            update[name] = kept
        return reply.model_copy(update=update), refused

    # -- requests ---------------------------------------------------------
    @abstractmethod
    def table(self) -> str: ...

    @abstractmethod
    def state_hint(self) -> dict[str, Any]:
        """The current graph as the prompt's table shows it (ids, speakers, texts), for a
        backend that reads hints (the offline one); model backends ignore hints."""

    @abstractmethod
    def shown(self) -> dict[str, str]:
        """What a persona turn's prompt lists for it to answer: engine id -> text."""

    @abstractmethod
    def user_prompt(self, cluster: Sequence[DialogueTurn], final: bool = False) -> str: ...

    @abstractmethod
    def discovery_prompt(self, openings: Sequence[DialogueTurn]) -> str: ...

    @abstractmethod
    def discoverable(self) -> bool:
        """Whether the record holds two speakers' items that discovery could link; without
        them the discovery call is not made (it could only invent links)."""

    def hints(self, turns: Sequence[DialogueTurn], phase: str) -> Hints:
        """The request's hints: the turns its prompt shows, and the graph as its table shows it."""
        return Hints(
            topic=self.topic,
            phase=phase,
            turns=turn_hints(turns),
            extra=self.state_hint(),
        )

    # -- applying ---------------------------------------------------------
    @abstractmethod
    def apply(self, reply: Any, cluster: Sequence[DialogueTurn], turn_range: tuple[int, int]) -> Applied: ...

    @abstractmethod
    def apply_discovery(self, reply: Any) -> Applied: ...

    @abstractmethod
    def frontier(self) -> frozenset[str]: ...

    @abstractmethod
    def size(self) -> int: ...

    @abstractmethod
    def insights(self) -> Insights: ...

    @abstractmethod
    def write_result(self, result: Any) -> None:
        """Put the Dung graph (``dialogue``) or the DCG (``dcg``) into the DebateResult."""

    def _new_concession(self, turn_index: int, speaker: str) -> bool:
        key = (turn_index, speaker)
        if key in self._conceded:
            return False
        self._conceded.add(key)
        return True


def _concede_turns(cluster: Sequence[DialogueTurn]) -> list[DialogueTurn]:
    return [t for t in cluster if t.move is Move.CONCEDE]


def _unrecorded(
    cryst: Crystallizer, cluster: Sequence[DialogueTurn], claim_of: Mapping[str, str]
) -> list[Concession]:
    """A trail entry for every CONCEDE turn the crystallizer's reply did not account for: the
    concession is kept (what the turn answered, the reason it named) even when the graph did
    not change. ``claim_of`` maps the engine's ids to their texts."""
    out = []
    for t in _concede_turns(cluster):
        if not cryst._new_concession(t.turn_index, t.persona_id):
            continue
        claim = next((claim_of[i] for i in t.proposition_ids if i in claim_of), "") or gist(t.dialogue)
        out.append(
            Concession(
                turn_index=t.turn_index,
                persona_id=t.persona_id,
                type=ConcessionKind.partial if t.named_reason else ConcessionKind.scope,
                conceded_claim=claim,
                effect="Recorded from the turn; the graph was not changed.",
                reason=t.named_reason,
            )
        )
    return out


# ---------------------------------------------------------------------------
# dialogue: the Dung argument graph
# ---------------------------------------------------------------------------


class GraphCrystallizer(Crystallizer):
    schema = CrystallizationResult
    discovery_schema = DiscoveryResult
    shown_label = "Positions in the argument graph so far"

    def __init__(self, topic: str, persona_ids: Sequence[str], names: Mapping[str, str]) -> None:
        super().__init__(topic, persona_ids, names)
        self.graph = ArgumentGraphState()

    def table(self) -> str:
        return self.graph.compact_table()

    def state_hint(self) -> dict[str, Any]:
        return {
            "graph": {
                "arguments": [
                    {"id": a.id, "speaker_id": a.speaker_id, "claim": a.claim, "assumptions": a.assumptions}
                    for a in self.graph.arguments.values()
                ],
                "attacks": [[t.from_arg_id, t.to_arg_id] for t in self.graph.attacks.values()],
            }
        }

    def shown(self) -> dict[str, str]:
        return {a.id: a.claim for a in self.graph.arguments.values()}

    def user_prompt(self, cluster: Sequence[DialogueTurn], final: bool = False) -> str:
        return prompts.crystallization_prompt(
            topic=self.topic, cluster=cluster, names=self.names, graph_table=self.table(), final=final
        )

    def discovery_prompt(self, openings: Sequence[DialogueTurn]) -> str:
        return prompts.discovery_prompt(topic=self.topic, graph_table=self.table(), openings=openings, names=self.names)

    def frontier(self) -> frozenset[str]:
        return self.graph.contested_frontier()

    def size(self) -> int:
        return len(self.graph.arguments)

    def _graph_event(self) -> GraphUpdated:
        snap = self.graph.snapshot()
        counts = {lab: sum(1 for v in snap.labelling.values() if v.value == lab) for lab in ("IN", "OUT", "UNDEC")}
        return GraphUpdated(graph=snap, in_count=counts["IN"], out_count=counts["OUT"], undec_count=counts["UNDEC"])

    def apply(self, reply: CrystallizationResult, cluster: Sequence[DialogueTurn], turn_range: tuple[int, int]) -> Applied:
        g = self.graph
        reply, refused = self.named(reply)
        out = Applied(crux=reply.crux, refused=refused)
        index = self.count
        self.count += 1
        alias: dict[str, str] = {}
        new_args: list[Argument] = []
        by_speaker = {p: [t.turn_index for t in cluster if t.persona_id == p] for p in self.persona_ids}
        existing_ids = set(g.arguments)
        for i, spec in enumerate(reply.new_args):
            if spec.speaker_id not in self.persona_ids:
                out.refused.append(f"new argument by unknown speaker {spec.speaker_id!r}")
                continue
            arg = g.add_argument(
                spec.speaker_id,
                spec.claim,
                premises=spec.premises,
                assumptions=spec.assumptions,
                evidence=spec.evidence,
                round=index,
                derived_from_turns=spec.derived_from_turns or by_speaker.get(spec.speaker_id, []),
            )
            handle = spec.id or f"new-{i + 1}"
            if handle not in existing_ids:  # a handle that reuses a graph id would be ambiguous
                alias[handle] = arg.id
            new_args.append(arg)

        def resolve(ref: str) -> str | None:
            rid = alias.get(ref, ref)
            return rid if rid in g.arguments else None

        updated: dict[str, str] = {}  # id -> "claim" | "assumptions" (what changed)
        for u in reply.updated_args:
            rid = resolve(u.id)
            if rid is None:
                out.refused.append(f"update of unknown argument {u.id!r}")
                continue
            before = g.arguments[rid]
            after = g.update_argument(rid, claim=u.claim, assumptions=u.assumptions)
            if after is not None and after != before:
                updated[rid] = "claim" if after.claim != before.claim else "assumptions"
        removed_args: list[str] = []
        removed_attacks: list[str] = []
        removed_claims: dict[str, Argument] = {}
        for ref in reply.removed_arg_ids:
            rid = resolve(ref)
            if rid is None:
                continue
            removed_claims[rid] = g.arguments[rid]
            removed_attacks += g.remove_argument(rid)
            removed_args.append(rid)
        new_attacks: list[Attack] = []
        for na in reply.new_attacks:
            a, b = resolve(na.from_arg_id), resolve(na.to_arg_id)
            if a is None or b is None:
                out.refused.append(f"attack {na.from_arg_id}->{na.to_arg_id} names an unknown argument")
                continue
            att = g.add_attack(a, b, type=na.type, rationale=na.rationale, round=index)
            if att is not None:
                new_attacks.append(att)
        for aid in reply.removed_attack_ids:
            if g.remove_attack(aid):
                removed_attacks.append(aid)

        # concessions: as the crystallizer reported them, else derived from the mutations
        notes = list(reply.concessions)
        if not notes:
            notes = self._derive_notes(cluster, removed_claims, updated)
        cluster_text = {(t.turn_index, t.persona_id): t.dialogue for t in cluster}
        named = {(t.turn_index, t.persona_id): t.named_reason for t in cluster if t.named_reason}
        for note in notes:
            if not self._new_concession(note.turn_index, note.speaker_id):
                continue
            rid = resolve(note.arg_id) if note.arg_id else None
            gone = note.arg_id and alias.get(note.arg_id, note.arg_id) in removed_claims
            arg_id = alias.get(note.arg_id, note.arg_id) if note.arg_id else None
            claim = note.conceded_claim or (
                removed_claims[arg_id].claim if gone and arg_id else g.arguments[rid].claim if rid else ""
            )
            if gone and arg_id:
                effect = "Withdrawn from the graph, with the attacks on and from it."
            elif rid and note.kind is ConcessionKind.partial:
                effect = f"Narrowed to: {g.arguments[rid].claim}"
            elif rid:
                effect = f"Qualified: {'; '.join(g.arguments[rid].assumptions[-1:])}"
            else:
                effect = "Recorded from the turn; the graph was not changed."
            out.concessions.append(
                Concession(
                    turn_index=note.turn_index,
                    persona_id=note.speaker_id,
                    type=note.kind,
                    conceded_claim=claim or gist(cluster_text.get((note.turn_index, note.speaker_id), "")),
                    effect=effect,
                    removed_arg_ids=[arg_id] if gone and arg_id else [],
                    updated_arg_ids=[rid] if rid and not gone else [],
                    reason=note.reason or named.get((note.turn_index, note.speaker_id)),
                )
            )
        claims = {a.id: a.claim for a in removed_claims.values()} | {a.id: a.claim for a in g.arguments.values()}
        out.concessions += _unrecorded(self, cluster, claims)
        out.new_nodes = len(new_args)
        out.changed = bool(new_args or updated or removed_args or new_attacks or removed_attacks)
        out.events.append(
            Crystallization(
                index=index,
                turn_range=turn_range,
                new_args=new_args,
                updated_arg_ids=list(updated),
                removed_arg_ids=removed_args,
                new_attacks=new_attacks,
                removed_attack_ids=removed_attacks,
            )
        )
        out.events.append(self._graph_event())
        return out

    def _derive_notes(
        self, cluster: Sequence[DialogueTurn], removed: Mapping[str, Argument], updated: Mapping[str, str]
    ) -> list[ConcessionNote]:
        """Concessions implied by mutations on a conceding speaker's arguments."""
        notes = []
        for t in _concede_turns(cluster):
            mine_removed = [a for a in removed.values() if a.speaker_id == t.persona_id]
            mine_updated = [
                (rid, what) for rid, what in updated.items() if self.graph.arguments[rid].speaker_id == t.persona_id
            ]
            if mine_removed:
                notes.append(ConcessionNote(turn_index=t.turn_index, speaker_id=t.persona_id, kind=ConcessionKind.full, arg_id=mine_removed[0].id))
            elif mine_updated:
                rid, what = mine_updated[0]
                kind = ConcessionKind.partial if what == "claim" else ConcessionKind.scope
                notes.append(ConcessionNote(turn_index=t.turn_index, speaker_id=t.persona_id, kind=kind, arg_id=rid))
        return notes

    def discoverable(self) -> bool:
        return len({a.speaker_id for a in self.graph.arguments.values()}) >= 2

    def apply_discovery(self, reply: DiscoveryResult) -> Applied:
        out = Applied()
        added = []
        for na in reply.new_attacks:
            a, b = na.from_arg_id, na.to_arg_id
            if a in self.graph.arguments and b in self.graph.arguments:
                if self.graph.arguments[a].speaker_id == self.graph.arguments[b].speaker_id:
                    continue  # discovery is about cross-speaker attacks
                att = self.graph.add_attack(a, b, type=na.type, rationale=na.rationale)
                if att is not None:
                    added.append(att)
            else:
                out.refused.append(f"discovered attack {a}->{b} names an unknown argument")
        out.changed = bool(added)
        out.events.append(
            Crystallization(index=self.count, turn_range=(0, 0), new_attacks=added)
        )
        self.count += 1
        out.events.append(self._graph_event())
        return out

    def insights(self) -> Insights:
        common, camps, cruxes, regime, desc = graph_insights(self.graph, self.persona_ids, self.names)
        return Insights(cruxes, common, camps, regime, desc)

    def write_result(self, result: Any) -> None:
        result.graph = self.graph.snapshot()


# ---------------------------------------------------------------------------
# DCG: the dispute-centric graph
# ---------------------------------------------------------------------------


class DCGCrystallizer(Crystallizer):
    schema = DCGCrystallizationResult
    discovery_schema = DCGDiscoveryResult
    shown_label = "Open disputes so far"

    def __init__(
        self, topic: str, persona_ids: Sequence[str], names: Mapping[str, str], max_new_disputes: int = 2
    ) -> None:
        super().__init__(topic, persona_ids, names)
        self.holder = DCGHolder(max_new_disputes=max_new_disputes)
        self.known_turns: set[int] = set()

    def table(self) -> str:
        return self.holder.compact_table()

    def state_hint(self) -> dict[str, Any]:
        s = self.holder.state
        return {
            "dcg": {
                "disputes": [{"id": d.id, "question": d.question, "active": d.active} for d in s.disputes],
                "stances": [
                    {"id": x.id, "dispute_id": x.dispute_id, "speaker_id": x.speaker_id, "side": x.side.value, "statement": x.statement}
                    for x in s.stances
                ],
                "reasons": [
                    {"id": r.id, "stance_id": r.stance_id, "polarity": r.polarity, "claim": r.claim, "attacks": list(r.attacks)}
                    for r in s.reasons
                ],
            }
        }

    def shown(self) -> dict[str, str]:
        return {d.id: d.question for d in self.holder.state.disputes if d.active}

    def user_prompt(self, cluster: Sequence[DialogueTurn], final: bool = False) -> str:
        return prompts.dcg_crystallization_prompt(
            topic=self.topic, cluster=cluster, names=self.names, dcg_table=self.table(),
            max_new=self.holder.max_new_disputes,
        )

    def discovery_prompt(self, openings: Sequence[DialogueTurn]) -> str:
        return prompts.dcg_discovery_prompt(topic=self.topic, dcg_table=self.table(), openings=openings, names=self.names)

    def hints(self, turns: Sequence[DialogueTurn], phase: str) -> Hints:
        self.known_turns |= {t.turn_index for t in turns}
        return super().hints(turns, phase)

    def frontier(self) -> frozenset[str]:
        return self.holder.frontier()

    def size(self) -> int:
        s = self.holder.state
        return len(s.disputes) + len(s.stances) + len(s.reasons)

    def _dcg_event(self) -> DCGUpdate:
        ins = self.insights()
        return DCGUpdate(dcg=self.holder.state, cruxes=ins.cruxes, common_ground=ins.common_ground, regime=ins.regime)

    def said(self, turns: Sequence[DialogueTurn]) -> dict[str, list[str]]:
        """Persona id -> what the crystallizer is shown of their ``turns``: the words and the
        reason each named (:func:`~crux_lab.engines.dialogue.prompts.turn_line`)."""
        said: dict[str, list[str]] = {pid: [] for pid in self.persona_ids}
        for t in turns:
            said.setdefault(t.persona_id, []).extend([t.dialogue, *([t.named_reason] if t.named_reason else [])])
        return said

    def reply_schema(self, cluster: Sequence[DialogueTurn]) -> type[BaseModel]:
        """A stance may quote only its speaker's sentences in ``cluster`` (what the prompt shows)
        that can show a position (:func:`~crux_lab.engines.guards.position_sentences`)."""
        said = self.said(cluster)
        return crystallization_reply_for({pid: [s for text in said[pid] for s in position_sentences(text)] for pid in said})

    def side_guard(self, turns: Sequence[DialogueTurn]) -> SideGuard | None:
        """The grounded-sides guard of a crystallization: each stance quotes its speaker's turns."""
        return SideGuard(
            lambda r: [Side(u.speaker_id, persona_ref(u.speaker_id, self.names), u.quote, u.dispute_id) for u in r.upsert_stances],
            self.said(turns),
            self.names,
            more=lambda r: self.undeclared(r) + self.swapped(r) + self.narrated(r),
        )

    def undeclared(self, reply: DCGCrystallizationResult) -> list[str]:
        """The dispute ids the reply's stances and reasons name that are neither in the graph
        nor among its new disputes, as a problem the model can fix."""
        named = [*(u.dispute_id for u in reply.upsert_stances), *(r.dispute_id for r in reply.new_reasons)]
        missing = list(dict.fromkeys(x for x in named if self.holder.dispute_ref(reply, x) is None))
        if not missing:
            return []
        which = ", ".join(f'"{x}"' for x in missing)
        return [
            f"your stances name the dispute {which}, which is not in the graph and not in new_disputes: "
            "add it to new_disputes with its question (the premise under the disagreement), or use a graph id"
        ]

    def swapped(self, reply: DCGCrystallizationResult) -> list[str]:
        """Sides that contradict their own quote: a NO on a dispute worded as a statement that
        is the speaker's quote, word for word (a quote that only contains it may negate it) (Qwen put the Cedar Falls Skeptic on NO on "I
        believe that public money should build a common school open to every child.", quoting
        her saying exactly that, and the two who disagreed with her on YES), as a problem the
        model can fix in its one repair.

        >>> from crux_lab.engines.dialogue.schemas import DCGCrystallizationResult as R
        >>> c = DCGCrystallizer("t", ["a", "b"], {"a": "Ann", "b": "Bo"})
        >>> q = "Public money should build a common school open to every child."
        >>> print(*c.swapped(R.model_validate({"new_disputes": [{"id": "n", "question": q}], "upsert_stances": [
        ...     {"dispute_id": "n", "speaker_id": "a", "side": "NO", "statement": "x", "quote": q},
        ...     {"dispute_id": "n", "speaker_id": "b", "side": "YES", "statement": "y", "quote": "No."}]})))
        the side of Ann is NO on "Public money should build a common school open to every child.", but Ann's quote says that very thing: a side is YES when its speaker holds the statement; check every side of that dispute
        """
        questions = {d.id: d.question for d in self.holder.state.disputes} | {d.id: d.question for d in reply.new_disputes}
        out = []
        for u in reply.upsert_stances:
            question = questions.get(self.holder.dispute_ref(reply, u.dispute_id) or u.dispute_id, "")
            words = norm_words(question)
            if u.side.value != "NO" or question.rstrip().endswith("?") or len(words) < 6 or words != norm_words(u.quote):
                continue
            who = self.names.get(u.speaker_id, u.speaker_id)
            out.append(f"the side of {who} is NO on {quote(question)}, but {who}'s quote says that very thing: "
                       "a side is YES when its speaker holds the statement; check every side of that dispute")
        return out

    def without_sides(self, reply: DCGCrystallizationResult, drop: set[tuple[str, str]]) -> DCGCrystallizationResult:
        """``reply`` without the stances the guard dropped, as (dispute id, persona id)."""
        kept = [u for u in reply.upsert_stances if (u.dispute_id, persona_ref(u.speaker_id, self.names)) not in drop]
        return reply.model_copy(update={"upsert_stances": kept})

    def off_topic(self, reply: DCGCrystallizationResult) -> tuple[DCGCrystallizationResult, list[str]]:
        """``reply`` without the new disputes whose question restates the debate topic or
        speaks about the talk (:func:`~crux_lab.engines.guards.narrates`), and without the
        stances and reasons on them; the refusals, quoted. A dispute on the topic names no
        premise under it (Qwen's first dispute on the Bitcoin debate was "Is Bitcoin a better
        long-term store of value than gold?", the topic word for word)."""
        flags = restates_topic_flags([d.question for d in reply.new_disputes], self.topic)
        why = {d.id: "it restates the debate topic, not a point under it" if restates else "it speaks about the talk, not a point in it"
               for d, restates in zip(reply.new_disputes, flags, strict=True) if restates or narrates(d.question)}
        topical = set(why)
        if not topical:
            return reply, []
        refused = [f"dispute {quote(d.question)}: {why[d.id]}" for d in reply.new_disputes if d.id in topical]
        return reply.model_copy(update={
            "new_disputes": [d for d in reply.new_disputes if d.id not in topical],
            "upsert_stances": [u for u in reply.upsert_stances if u.dispute_id not in topical],
            "new_reasons": [r for r in reply.new_reasons if r.dispute_id not in topical],
        }), refused

    def own_words(self, reply: DCGCrystallizationResult, said: Mapping[str, Sequence[str]]) -> tuple[DCGCrystallizationResult, list[str]]:
        """``reply`` with each stance stated in another speaker's words (found in what another
        speaker of the cluster said, ``said``, and in nothing its own speaker said) stated by
        its quote instead, its speaker's own words, which the grounded-sides guard holds; the
        changes, said. Only the quote was checked: on a Polis conversation Qwen gave the second
        group's NO side as "I disagree with the claim that the BG should focus solely on
        downtown.", a sentence only the first group said, and the card showed it.

        >>> from crux_lab.engines.dialogue.schemas import DCGCrystallizationResult as R
        >>> c = DCGCrystallizer("t", ["a", "b"], {"a": "Ann", "b": "Bo"})
        >>> said = {"a": ["Downtown should come first for the city."], "b": ["Rural roads need the money more than downtown."]}
        >>> r, notes = c.own_words(R.model_validate({"upsert_stances": [
        ...     {"dispute_id": "n", "speaker_id": "b", "side": "NO", "statement": "Downtown should come first for the city.",
        ...      "quote": "Rural roads need the money more than downtown."},
        ...     {"dispute_id": "n", "speaker_id": "a", "side": "YES", "statement": "Downtown first.", "quote": "x"}]}), said)
        >>> [u.statement for u in r.upsert_stances]
        ['Rural roads need the money more than downtown.', 'Downtown first.']
        >>> print(*notes)
        Bo's side was stated in Ann's words ("Downtown should come first for the city."); shown in Bo's own: "Rural roads need the money more than downtown."
        """
        out, notes = [], []
        for u in reply.upsert_stances:
            pid = persona_ref(u.speaker_id, self.names) or u.speaker_id
            own = said.get(pid, [])
            others = [p for p in said if p != pid and quote_found(u.statement, said[p])]
            if others and not quote_found(u.statement, own) and quote_found(u.quote, own):
                who, whose = self.names.get(pid, pid), self.names.get(others[0], others[0])
                notes.append(f"{who}'s side was stated in {whose}'s words ({quote(u.statement)}); shown in {who}'s own: {quote(u.quote)}")
                u = u.model_copy(update={"statement": u.quote})
            out.append(u)
        return reply.model_copy(update={"upsert_stances": out}), notes

    def apply(self, reply: DCGCrystallizationResult, cluster: Sequence[DialogueTurn], turn_range: tuple[int, int]) -> Applied:
        before = {s.id: s for s in self.holder.state.stances}
        reply, reworded = self.own_words(reply, self.said(cluster))
        reply, topical = self.off_topic(reply)
        reply, refused = self.named(reply)
        refused = topical + refused
        change = self.holder.apply(reply, known_turns=self.known_turns or None)
        out = Applied(crux=reply.crux, refused=refused + list(change.refused), reworded=reworded)
        index = self.count
        self.count += 1
        out.new_nodes = len(change.new_dispute_ids) + len(change.upserted_stance_ids) - len(change.flipped_stance_ids) - len(change.softened_stance_ids)
        out.changed = change.changed
        out.concessions = self._concessions(reply, cluster, change, before)
        out.events.append(
            Crystallization(
                index=index,
                turn_range=turn_range,
                updated_arg_ids=[*change.new_dispute_ids, *change.upserted_stance_ids, *change.new_reason_ids],
                removed_arg_ids=list(change.removed_reason_ids),
            )
        )
        out.events.append(self._dcg_event())
        return out

    def _concessions(
        self, reply: DCGCrystallizationResult, cluster: Sequence[DialogueTurn], change: DCGChange, before: Mapping[str, Any]
    ) -> list[Concession]:
        """The trail entries of this crystallization: each concession the reply noted (on the
        speaker's stance on the dispute it names), then every CONCEDE turn it did not note."""
        state = self.holder.state
        stances = {s.id: s for s in state.stances}
        questions = {d.id: d.question for d in state.disputes}
        touched = [*change.flipped_stance_ids, *change.softened_stance_ids]
        named = {(t.turn_index, t.persona_id): t.named_reason for t in cluster if t.named_reason}
        said = {(t.turn_index, t.persona_id): t.dialogue for t in cluster}
        out = []
        for note in reply.concessions:
            if not self._new_concession(note.turn_index, note.speaker_id):
                continue
            did = change.aliases.get(note.dispute_id or "", note.dispute_id or "")
            stance = self.holder.stance_of(did, note.speaker_id) if did else None
            if stance is None:
                sid = next((x for x in touched if stances[x].speaker_id == note.speaker_id), None)
                stance = stances[sid] if sid else None
            old = before.get(stance.id) if stance is not None else None
            if stance is not None and old is not None and old.side != stance.side:
                effect = f"Moved from {old.side.value} to {stance.side.value} on: {questions[stance.dispute_id]}"
            elif stance is not None and old is not None and old.statement != stance.statement:
                effect = f"Narrowed, on {questions[stance.dispute_id]!r}, to: {stance.statement}"
            elif stance is not None and old is None:
                effect = f"Recorded with the dispute: {questions[stance.dispute_id]}"
            else:
                effect = "Recorded from the turn; the graph was not changed."
            claim = note.conceded_claim or (old.statement if old is not None else "") or (
                questions.get(stance.dispute_id, "") if stance is not None else ""
            ) or gist(said.get((note.turn_index, note.speaker_id), ""))
            out.append(
                Concession(
                    turn_index=note.turn_index,
                    persona_id=note.speaker_id,
                    type=note.kind,
                    conceded_claim=claim,
                    effect=effect,
                    updated_arg_ids=[stance.id] if stance is not None else [],
                    reason=note.reason or named.get((note.turn_index, note.speaker_id)),
                )
            )
        return out + _unrecorded(self, cluster, questions)

    def discoverable(self) -> bool:
        """Some dispute has reasons under two speakers' stances.

        >>> from crux_lab.models import DCGState, Dispute, Reason, Stance
        >>> c = DCGCrystallizer("t", ["a", "b"], {"a": "A", "b": "B"})
        >>> c.holder.state = DCGState(disputes=[Dispute(id="d-0", question="q?")],
        ...     stances=[Stance(id="s-0", dispute_id="d-0", speaker_id="a", side="YES", statement="x"),
        ...              Stance(id="s-1", dispute_id="d-0", speaker_id="b", side="NO", statement="y")])
        >>> c.discoverable()  # stances, but no reasons yet: nothing to link
        False
        >>> c.holder.state.reasons = [Reason(id="r-0", stance_id="s-0", polarity="SUPPORT", claim="c"),
        ...                           Reason(id="r-1", stance_id="s-1", polarity="SUPPORT", claim="d")]
        >>> c.discoverable()
        True
        """
        st = self.holder.state
        speaker = {s.id: (s.dispute_id, s.speaker_id) for s in st.stances}
        per_dispute: dict[str, set[str]] = {}
        for r in st.reasons:
            if r.stance_id in speaker:
                d, who = speaker[r.stance_id]
                per_dispute.setdefault(d, set()).add(who)
        return any(len(who) >= 2 for who in per_dispute.values())

    def apply_discovery(self, reply: DCGDiscoveryResult) -> Applied:
        change = self.holder.add_reason_attacks(reply.reason_attacks)
        out = Applied(changed=change.changed, refused=list(change.refused))
        out.events.append(Crystallization(index=self.count, turn_range=(0, 0), updated_arg_ids=change.new_reason_ids))
        self.count += 1
        out.events.append(self._dcg_event())
        return out

    def insights(self) -> Insights:
        cruxes, common, camps, regime, desc = dcg_insights(self.holder.state, self.persona_ids)
        return Insights(cruxes, common, camps, regime, desc)

    def write_result(self, result: Any) -> None:
        result.dcg = self.holder.state
