"""The dialogue engine's argument graph: sparse, mutable, shrinking.

Operations: add arguments and attacks, update an
argument, remove an argument (cascading its attacks), remove an attack. After every
mutation the caller takes a :meth:`ArgumentGraphState.snapshot`, which recomputes grounded,
preferred and the labelling with :mod:`crux_lab.argumentation` (never here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from crux_lab.argumentation import (
    ArgumentFramework,
    extract_cruxes,
    grounded_labelling,
    preferred_extensions,
)
from crux_lab.argumentation.crux import CruxReport, SideClaims
from crux_lab.models.domain import (
    Argument,
    ArgumentGraph,
    Attack,
    AttackTarget,
    AttackType,
    Camp,
    CommonGround,
    Crux,
    CruxSide,
    Label,
    Regime,
)


@dataclass
class ArgumentGraphState:
    """Arguments and attacks by id, in insertion order, with id counters.

    >>> g = ArgumentGraphState()
    >>> a = g.add_argument("saylor", "Adoption is deterministic.")
    >>> b = g.add_argument("hayes", "Adoption depends on policy mistakes.")
    >>> _ = g.add_attack(a.id, b.id); _ = g.add_attack(b.id, a.id)
    >>> snap = g.snapshot()
    >>> snap.grounded, len(snap.preferred)
    ([], 2)
    >>> g.remove_argument(b.id)
    ['att-0', 'att-1']
    >>> g.snapshot().grounded
    ['arg-0']
    """

    arguments: dict[str, Argument] = field(default_factory=dict)
    attacks: dict[str, Attack] = field(default_factory=dict)
    next_arg: int = 0
    next_attack: int = 0

    # -- mutations ----------------------------------------------------------
    def add_argument(
        self,
        speaker_id: str,
        claim: str,
        *,
        premises: list[str] | None = None,
        assumptions: list[str] | None = None,
        evidence: list[str] | None = None,
        round: int = 0,
        derived_from_turns: list[int] | None = None,
    ) -> Argument:
        arg = Argument(
            id=f"arg-{self.next_arg}",
            speaker_id=speaker_id,
            claim=claim,
            premises=list(premises or []),
            assumptions=list(assumptions or []),
            evidence=list(evidence or []),
            round=round,
            derived_from_turns=sorted(set(derived_from_turns or [])),
        )
        self.next_arg += 1
        self.arguments[arg.id] = arg
        return arg

    def add_attack(
        self,
        from_id: str,
        to_id: str,
        *,
        type: AttackType = AttackType.rebut,
        rationale: str = "",
        round: int = 0,
    ) -> Attack | None:
        """Add ``from_id -> to_id``; None if an endpoint is unknown, it is a self-attack or a duplicate."""
        if from_id not in self.arguments or to_id not in self.arguments or from_id == to_id:
            return None
        if any(a.from_arg_id == from_id and a.to_arg_id == to_id for a in self.attacks.values()):
            return None
        att = Attack(
            id=f"att-{self.next_attack}",
            from_arg_id=from_id,
            to_arg_id=to_id,
            type=type,
            target=AttackTarget(arg_id=to_id),
            rationale=rationale,
            speaker_id=self.arguments[from_id].speaker_id,
            round=round,
        )
        self.next_attack += 1
        self.attacks[att.id] = att
        return att

    def update_argument(
        self, arg_id: str, *, claim: str | None = None, assumptions: list[str] | None = None
    ) -> Argument | None:
        arg = self.arguments.get(arg_id)
        if arg is None:
            return None
        upd: dict[str, object] = {}
        if claim:
            upd["claim"] = claim
        if assumptions is not None:
            upd["assumptions"] = list(assumptions)
        self.arguments[arg_id] = arg.model_copy(update=upd)
        return self.arguments[arg_id]

    def remove_argument(self, arg_id: str) -> list[str]:
        """Remove an argument and cascade-remove its incident attacks; returns their ids."""
        if self.arguments.pop(arg_id, None) is None:
            return []
        gone = [
            a.id for a in self.attacks.values() if arg_id in (a.from_arg_id, a.to_arg_id)
        ]
        for aid in gone:
            del self.attacks[aid]
        return gone

    def remove_attack(self, attack_id: str) -> bool:
        return self.attacks.pop(attack_id, None) is not None

    # -- views --------------------------------------------------------------
    def framework(self) -> ArgumentFramework:
        return ArgumentFramework.from_edges(
            self.arguments, ((a.from_arg_id, a.to_arg_id) for a in self.attacks.values())
        )

    def snapshot(self) -> ArgumentGraph:
        """The graph with freshly computed grounded, preferred and grounded labelling."""
        af = self.framework()
        order = list(self.arguments)
        pos = {a: i for i, a in enumerate(order)}
        labels = grounded_labelling(af)
        preferred = [sorted(ext, key=pos.__getitem__) for ext in preferred_extensions(af)]
        return ArgumentGraph(
            arguments=list(self.arguments.values()),
            attacks=list(self.attacks.values()),
            grounded=[a for a in order if labels[a].value == "IN"],
            preferred=preferred,
            preferred_count=len(preferred),
            labelling={a: Label(labels[a].value) for a in order},
        )

    def report(self) -> CruxReport:
        """Common ground, camps, symmetric difference, assumptions and regime."""
        return extract_cruxes(
            self.framework(),
            {a.id: a.speaker_id for a in self.arguments.values()},
            {a.id: a.assumptions for a in self.arguments.values() if a.assumptions},
            claims={a.id: a.claim for a in self.arguments.values()},
        )

    def contested_frontier(self) -> frozenset[str]:
        """Arguments neither accepted nor rejected in the grounded labelling (UNDEC)."""
        labels = grounded_labelling(self.framework())
        return frozenset(str(a) for a, lab in labels.items() if lab.value == "UNDEC")

    def compact_table(self) -> str:
        """The graph as the crystallizer reads it: one line per node, one per edge."""
        if not self.arguments:
            return "(empty graph)"
        lines = ["Nodes:", "id | speaker | claim | assumptions"]
        for a in self.arguments.values():
            lines.append(f"{a.id} | {a.speaker_id} | {a.claim} | {'; '.join(a.assumptions) or '-'}")
        lines.append("Edges (attacker -> target):")
        if not self.attacks:
            lines.append("(none)")
        for att in self.attacks.values():
            lines.append(f"{att.id}: {att.from_arg_id} -> {att.to_arg_id} ({att.type.value})")
        return "\n".join(lines)


def labelled_sides(sides: Sequence[SideClaims], claims: Mapping[str, str], names: Mapping[str, str], per_side: int = 2) -> str:
    """A symmetric-difference crux as each side's claims, labelled with its personas.

    >>> s = (SideClaims(("a",), frozenset({"x"})), SideClaims(("b",), frozenset({"y"})))
    >>> labelled_sides(s, {"x": "Rents fall.", "y": "It is not the case that rents fall."}, {"a": "Ann"})
    'Ann holds: Rents fall. B holds: It is not the case that rents fall.'
    """
    parts = []
    for side in sides:
        who = " and ".join(names.get(p) or p.replace("-", " ").title() for p in side.personas) or "One side"
        texts = [claims[str(a)].strip().rstrip(".") for a in sorted(side.arguments, key=str) if claims.get(str(a), "").strip()]
        if texts:
            more = f" (and {len(texts) - per_side} more)" if len(texts) > per_side else ""
            parts.append(f"{who} holds: {'; '.join(texts[:per_side])}{more}.")
    return " ".join(parts)


Sides = tuple[list[CruxSide], list[CruxSide]]


def _two_sides(sides: Sequence[SideClaims], claims: Mapping[str, str]) -> Sides:
    """Who holds which side of a symmetric-difference crux: with exactly two sides, each side's
    personas with the claims their side holds (else none: the crux cannot say)."""
    if len(sides) != 2:
        return [], []
    yes, no = ([CruxSide(persona_id=p, statement="; ".join(claims.get(str(a), "") for a in sorted(s.arguments, key=str)))
                for p in s.personas] for s in sides)
    return yes, no


def _assumption_sides(state: ArgumentGraphState, deps: Sequence[str], text: str) -> Sides:
    """An assumption crux's sides: the speakers of the arguments resting on it hold it; the
    speakers of arguments attacking those reject it."""
    holders = list(dict.fromkeys(state.arguments[a].speaker_id for a in deps if a in state.arguments))
    attackers = list(dict.fromkeys(
        state.arguments[x.from_arg_id].speaker_id for x in state.attacks.values()
        if x.to_arg_id in deps and x.from_arg_id in state.arguments
    ))
    return [CruxSide(persona_id=p, statement=text) for p in holders], [CruxSide(persona_id=p) for p in attackers]


def graph_insights(
    state: ArgumentGraphState, persona_ids: list[str], names: Mapping[str, str] | None = None
) -> tuple[list[CommonGround], list[Camp], list[Crux], Regime, str]:
    """Common ground (grounded), camps (preferred), structural cruxes and regime.

    Cruxes read as sentences: the symmetric difference as each side's claims labelled with
    its personas, an assumption crux as its text with a settling question in words.
    """
    if not state.arguments:
        return [], [], [], Regime.no_disagreement_found, (
            "No disagreement found: the crystallizer distilled no positions from the dialogue, "
            "so there is nothing to call common ground or a crux. This is not consensus."
        )
    rep = state.report()
    args = state.arguments
    common = [
        CommonGround(
            id=f"cg-{aid}",
            statement=args[aid].claim,
            source="grounded",
            persona_ids=list(persona_ids),
            argument_id=aid,
        )
        for aid in args
        if aid in rep.common_ground
    ]
    camps = [
        Camp(
            index=c.index,
            argument_ids=[a for a in args if a in c.arguments],
            persona_ids=list(c.personas),
            label=", ".join((names or {}).get(p, p) for p in c.personas),
        )
        for c in rep.camps
    ]
    cruxes: list[Crux] = []
    symdiff = [a for a in args if a in rep.symmetric_difference]
    claims = {a: x.claim for a, x in args.items()}
    if symdiff and rep.sides:
        yes, no = _two_sides(rep.sides, claims)
        cruxes.append(
            Crux(
                id="crux-symdiff",
                statement=labelled_sides(rep.sides, claims, names or {}),
                source="symmetric_difference",
                argument_ids=symdiff,
                yes_side=yes,
                no_side=no,
            )
        )
    for i, ca in enumerate(rep.crux_assumptions):
        deps = [str(d) for d in ca.dependent_args]
        text = ca.assumption if ca.assumption not in args else args[ca.assumption].claim
        holders, rejecters = _assumption_sides(state, deps, text)
        cruxes.append(
            Crux(
                id=f"crux-assumption-{i}",
                statement=text,
                source="assumption",
                assumptions=[text] if ca.assumption not in args else list(args[ca.assumption].assumptions),
                settling_question=ca.settling_question or None,
                argument_ids=deps,
                score=ca.centrality,
                yes_side=holders,
                no_side=rejecters,
            )
        )
    return common, camps, cruxes, Regime(rep.regime.regime), rep.regime.description
