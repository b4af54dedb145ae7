"""Graph-mode state and output extraction, pure code with no LLM.

``GraphState`` is immutable: every update returns a new state. Semantics come from
:mod:`crux_lab.argumentation` (grounded labelling, preferred extensions, crux extraction);
this module only builds the framework from validated attacks, deduplicates, and maps the
crux report onto the DebateResult fields every engine fills.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from crux_lab.argumentation import (
    ArgumentFramework,
    CruxReport,
    count_extensions,
    extract_cruxes,
    grounded_labelling,
    iter_extensions,
)
from crux_lab.argumentation.crux import format_count
from crux_lab.engines.blackboard.claims import short_claim, stance_groups
from crux_lab.models.domain import (
    AcceptedClaim,
    Argument,
    ArgumentGraph,
    Attack,
    Camp,
    CommonGround,
    Crux,
    CruxSide,
    Label,
    Regime,
    ValidationResult,
)
from crux_lab.models.result import DebateResult


@dataclass(frozen=True)
class ArgMeta:
    """What an argument's reply stated besides its text: the engine's claim it is about
    (``c1``...; None when it named none the prompt listed), its stance on that claim, and the
    observation that would show its key assumption wrong."""

    claim_id: str | None = None
    stance: str | None = None
    falsifier: str = ""


@dataclass(frozen=True)
class GraphState:
    """The graph engine's runtime state (persisted as :class:`ArgumentGraph`)."""

    topic: str
    arguments: tuple[Argument, ...] = ()
    attacks: tuple[Attack, ...] = ()
    validations: tuple[ValidationResult, ...] = ()
    meta: Mapping[str, ArgMeta] = field(default_factory=dict)
    grounded: frozenset[str] = frozenset()
    preferred: tuple[frozenset[str], ...] = ()
    preferred_count: int = 0
    labelling: Mapping[str, Label] = field(default_factory=dict)
    round: int = 0

    def argument(self, arg_id: str) -> Argument | None:
        return next((a for a in self.arguments if a.id == arg_id), None)

    def speakers(self) -> dict[str, str]:
        return {a.id: a.speaker_id for a in self.arguments}


def create_graph_state(topic: str) -> GraphState:
    """An empty graph.

    >>> create_graph_state("t").arguments
    ()
    """
    return GraphState(topic=topic)


def add_arguments(state: GraphState, args: Iterable[Argument], meta: Mapping[str, ArgMeta] | None = None) -> GraphState:
    """Append arguments (ids must be new)."""
    new = tuple(args)
    known = {a.id for a in state.arguments}
    clash = [a.id for a in new if a.id in known]
    if clash:
        raise ValueError(f"argument ids already in the graph: {', '.join(clash)}")
    return replace(state, arguments=state.arguments + new, meta={**state.meta, **(meta or {})})


def add_attacks(
    state: GraphState, attacks: Iterable[Attack], validations: Iterable[ValidationResult]
) -> GraphState:
    """Append the attacks a validation result marks valid; record every validation result.

    >>> from crux_lab.models import AttackTarget
    >>> s = add_arguments(create_graph_state("t"), [Argument(id=i, speaker_id="p", claim=i) for i in "ab"])
    >>> atk = Attack(id="k1", from_arg_id="a", to_arg_id="b", target=AttackTarget(arg_id="b"))
    >>> len(add_attacks(s, [atk], [ValidationResult(attack_id="k1", valid=False)]).attacks)
    0
    """
    vals = tuple(validations)
    ok = {v.attack_id for v in vals if v.valid}
    return replace(
        state,
        attacks=state.attacks + tuple(a for a in attacks if a.id in ok),
        validations=state.validations + vals,
    )


def attack_key(a: Attack) -> tuple[str, str, int, str]:
    return (a.to_arg_id, a.target.component.value, a.target.index, a.type.value)


def deduplicate_attacks(attacks: Sequence[Attack], existing: Sequence[Attack] = ()) -> list[Attack]:
    """Same target argument + component + index + type: keep the most confident (first on ties);
    an attack duplicating an edge already in the graph is dropped.

    >>> from crux_lab.models import AttackTarget
    >>> def atk(i, conf): return Attack(id=i, from_arg_id="x" + i, to_arg_id="b",
    ...     target=AttackTarget(arg_id="b"), confidence=conf)
    >>> [a.id for a in deduplicate_attacks([atk("1", .5), atk("2", .9)])]
    ['2']
    >>> deduplicate_attacks([atk("3", .9)], existing=[atk("1", .5)])
    []
    """
    taken = {attack_key(a) for a in existing}
    best: dict[tuple[str, str, int, str], Attack] = {}
    for a in attacks:
        key = attack_key(a)
        if key in taken:
            continue
        if key not in best or a.confidence > best[key].confidence:
            best[key] = a
    keep = {id(a) for a in best.values()}
    return [a for a in attacks if id(a) in keep]


def build_framework(state: GraphState) -> ArgumentFramework:
    """Dung framework over the graph's arguments and its (validated) attacks."""
    return ArgumentFramework.from_edges(
        [a.id for a in state.arguments], [(k.from_arg_id, k.to_arg_id) for k in state.attacks]
    )


def recompute_semantics(state: GraphState, preferred_limit: int = 64, round_number: int | None = None) -> GraphState:
    """Grounded extension, labelling, preferred extensions (enumerated up to ``preferred_limit``;
    the count is exact).

    >>> from crux_lab.models import AttackTarget
    >>> s = add_arguments(create_graph_state("t"), [Argument(id=i, speaker_id="p", claim=i) for i in "ab"])
    >>> s = add_attacks(s, [Attack(id="k", from_arg_id="a", to_arg_id="b", target=AttackTarget(arg_id="b"))],
    ...                 [ValidationResult(attack_id="k", valid=True)])
    >>> r = recompute_semantics(s)
    >>> sorted(r.grounded), {k: v.value for k, v in r.labelling.items()}
    (['a'], {'a': 'IN', 'b': 'OUT'})
    """
    af = build_framework(state)
    labels = {str(a): Label(lab.value) for a, lab in grounded_labelling(af).items()}
    preferred = tuple(frozenset(str(a) for a in e) for e in iter_extensions(af, "preferred", preferred_limit))
    return replace(
        state,
        grounded=frozenset(a for a, lab in labels.items() if lab is Label.IN),
        preferred=preferred,
        preferred_count=count_extensions(af, "preferred"),
        labelling=labels,
        round=state.round if round_number is None else round_number,
    )


def to_argument_graph(state: GraphState) -> ArgumentGraph:
    return ArgumentGraph(
        arguments=list(state.arguments),
        attacks=list(state.attacks),
        grounded=sorted(state.grounded),
        preferred=[sorted(e) for e in state.preferred],
        preferred_count=state.preferred_count,
        labelling=dict(state.labelling),
    )


def labelling_stable(before: Mapping[str, Label], after: Mapping[str, Label]) -> bool:
    """True when no argument that existed before changed its label.

    >>> labelling_stable({"a": Label.IN}, {"a": Label.IN, "b": Label.OUT})
    True
    >>> labelling_stable({"a": Label.IN}, {"a": Label.OUT})
    False
    """
    return all(after.get(a) == lab for a, lab in before.items())


def contradictory_pairs(state: GraphState, ids: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of arguments in ``ids`` whose replies stated opposite stances on the same claim but
    that have no attack between them: a fake consensus (a contradiction nobody turned into an
    edge, so both sides look uncontested)."""
    edges = {(k.from_arg_id, k.to_arg_id) for k in state.attacks}
    pool = sorted(ids)
    out = []
    for i, a in enumerate(pool):
        ma = state.meta.get(a)
        if ma is None or ma.claim_id is None or ma.stance not in ("pro", "con"):
            continue
        for b in pool[i + 1 :]:
            mb = state.meta.get(b)
            if (
                mb is not None
                and mb.claim_id == ma.claim_id
                and {ma.stance, mb.stance} == {"pro", "con"}
                and (a, b) not in edges
                and (b, a) not in edges
            ):
                out.append((a, b))
    return out


def cross_persona_conflicts(state: GraphState) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Attacks between arguments of different personas, as ``(attacked_by, targets)``:
    ``{argument id: [ids of other personas' arguments attacking it]}`` and
    ``{argument id: [ids of other personas' arguments it attacks]}``.

    The grounded extension alone is not common ground: an argument that was attacked
    and merely defended is not agreed by its attacker, and an attack left unanswered when the
    rounds ran out is not agreed by its target. Only grounded arguments in neither map are
    common ground (uncontested, and not opposed: :func:`opposing_arguments`); the rest are
    accepted claims (:func:`accepted_claims`).

    >>> s = GraphState(topic="t", arguments=(Argument(id="a", speaker_id="p", claim="x"),
    ...     Argument(id="b", speaker_id="q", claim="y")),
    ...     attacks=(Attack(id="k", from_arg_id="b", to_arg_id="a", type="rebut",
    ...                     target={"arg_id": "a"}, counter_proposition="y", speaker_id="q"),))
    >>> cross_persona_conflicts(s)
    ({'a': ['b']}, {'b': ['a']})
    """
    speaker = {a.id: a.speaker_id for a in state.arguments}
    attacked_by: dict[str, list[str]] = {}
    targets: dict[str, list[str]] = {}
    for k in state.attacks:
        if speaker.get(k.from_arg_id) != speaker.get(k.to_arg_id):
            attacked_by.setdefault(k.to_arg_id, []).append(k.from_arg_id)
            targets.setdefault(k.from_arg_id, []).append(k.to_arg_id)
    return attacked_by, targets


def opposing_arguments(state: GraphState) -> dict[str, list[str]]:
    """``{argument id: [ids of other personas' arguments of the opposite stated stance on its
    claim]}``, whatever their labels.

    >>> s = GraphState(topic="t", arguments=(Argument(id="a", speaker_id="p", claim="x"),
    ...     Argument(id="b", speaker_id="q", claim="y"), Argument(id="c", speaker_id="r", claim="z")),
    ...     meta={"a": ArgMeta("p1", "pro"), "b": ArgMeta("p1", "con"), "c": ArgMeta("p1", "pro")})
    >>> opposing_arguments(s)
    {'a': ['b'], 'b': ['a', 'c'], 'c': ['b']}
    """
    sided = [
        (a.id, a.speaker_id, m.claim_id, m.stance)
        for a in state.arguments
        if (m := state.meta.get(a.id)) is not None and m.claim_id and m.stance in ("pro", "con")
    ]
    out: dict[str, list[str]] = {}
    for a, sa, pa, ta in sided:
        against = [b for b, sb, pb, tb in sided if pb == pa and sb != sa and tb != ta]
        if against:
            out[a] = against
    return out


def accepted_claims(state: GraphState, argument_ids: Sequence[str]) -> list[AcceptedClaim]:
    """The accepted but contested claims among ``argument_ids`` (grounded arguments in conflict
    with another persona): who attacked each, which accepted arguments defeat those attackers,
    and which other personas' arguments it attacks itself."""
    by_id = {a.id: a for a in state.arguments}
    attacked_by, targets = cross_persona_conflicts(state)
    opposed = opposing_arguments(state)
    beaten_by: dict[str, list[str]] = {}
    for k in state.attacks:
        if state.labelling.get(k.from_arg_id) is Label.IN:
            beaten_by.setdefault(k.to_arg_id, []).append(k.from_arg_id)
    out: list[AcceptedClaim] = []
    for a in argument_ids:
        arg = by_id[a]
        against = sorted(set(attacked_by.get(a, [])))
        out.append(
            AcceptedClaim(
                id=f"w{len(out) + 1}",
                statement=arg.claim,
                argument_id=a,
                persona_ids=[arg.speaker_id],
                attacked_by=sorted({by_id[b].speaker_id for b in against if b in by_id}),
                attacker_argument_ids=against,
                defender_argument_ids=sorted({d for b in against for d in beaten_by.get(b, [])}),
                target_argument_ids=sorted(set(targets.get(a, []))),
                opposing_argument_ids=opposed.get(a, []),
            )
        )
    return out


def extract_graph_output(state: GraphState, top_k: int = 3) -> CruxReport:
    """Common ground, camps, symmetric difference, ranked crux assumptions with settling
    questions, and regime, from :func:`crux_lab.argumentation.extract_cruxes`."""
    speakers: dict[Hashable, str] = {k: v for k, v in state.speakers().items()}
    return extract_cruxes(
        build_framework(state),
        speakers,
        # An argument that lists no assumption stands for its own claim.
        {a.id: list(a.assumptions) or [a.claim] for a in state.arguments},
        top_k=top_k,
    )


def stated_stances(state: GraphState) -> dict[str, dict[str, str]]:
    """``{persona: {claim id: stance}}``: the stance each persona last stated on each claim,
    across its arguments and counter-arguments (later rounds win).

    >>> s = GraphState(topic="t", arguments=(Argument(id="a", speaker_id="p", claim="x"),
    ...     Argument(id="b", speaker_id="p", claim="y", round=1)),
    ...     meta={"a": ArgMeta("c1", "pro"), "b": ArgMeta("c1", "con")})
    >>> stated_stances(s)
    {'p': {'c1': 'con'}}
    """
    out: dict[str, dict[str, str]] = {}
    for a in sorted(state.arguments, key=lambda x: x.round):
        m = state.meta.get(a.id)
        if m is not None and m.claim_id and m.stance in ("pro", "con", "uncertain"):
            out.setdefault(a.speaker_id, {})[m.claim_id] = m.stance
    return out


def stance_camps(
    state: GraphState, persona_ids: Sequence[str], claim_texts: Mapping[str, str]
) -> tuple[list[Camp], list[str]]:
    """Camps (groups of personas with the same stated stances on the disputed claims) and one
    fault line per disputed claim, in words. A claim is disputed when one persona argued for
    it and another against it."""
    held = stated_stances(state)
    claim_ids = sorted({c for h in held.values() for c in h}, key=lambda c: (c not in claim_texts, c))
    disputed = [c for c in claim_ids if {"pro", "con"} <= {h.get(c) for h in held.values()}]
    if not disputed:
        return [], []
    camps = []
    for i, (members, label) in enumerate(stance_groups(held, persona_ids, disputed, claim_texts, missing="silent")):
        args = sorted(
            a.id for a in state.arguments
            if a.speaker_id in members and (m := state.meta.get(a.id)) is not None and m.claim_id in disputed
        )
        camps.append(Camp(index=i, argument_ids=args, persona_ids=members, label=label))
    fault_lines = []
    for c in disputed:
        pro = sorted(p for p, h in held.items() if h.get(c) == "pro")
        con = sorted(p for p, h in held.items() if h.get(c) == "con")
        fault_lines.append(f"{', '.join(pro)} for, {', '.join(con)} against: {short_claim(claim_texts.get(c, 'a claim no prompt listed'), 200)}")
    return camps, fault_lines


def graph_regime(
    state: GraphState, report: CruxReport, common_ground: int, claim_texts: Mapping[str, str]
) -> tuple[Regime, str]:
    """The regime, from what the personas stated and did:

    - no_disagreement_found: no persona attacked another's argument and no two personas
      argued opposite stances on a claim;
    - consensus: the same, and every persona argued the same side of at least one claim
      (agreement on a named claim, never the mere absence of attacks);
    - polarized / partial: personas in conflict, with several preferred extensions, split by
      how much of the graph is uncontested common ground (polarized below a quarter);
    - partial, when the conflicts were all decided in the graph (one preferred extension):
      one side's arguments were defeated, which is not agreement.
    """
    attacked_by, _ = cross_persona_conflicts(state)
    opposed = opposing_arguments(state)
    n = len(state.arguments)
    extensions = f"{format_count(report.extension_count)} preferred extension{'s' if report.extension_count != 1 else ''}"
    if not attacked_by and not opposed:
        held = stated_stances(state)
        speakers = {a.speaker_id for a in state.arguments}
        shared = [
            c for c in claim_texts
            if speakers and all(held.get(p, {}).get(c) == "pro" for p in speakers)
            or speakers and all(held.get(p, {}).get(c) == "con" for p in speakers)
        ]
        if len(speakers) > 1 and shared:
            said = "; ".join(short_claim(claim_texts[c]) for c in shared[:3])
            return Regime.consensus, (
                f"Consensus: no persona attacked another's argument, and every persona argued the same side of "
                f"{len(shared)} claim(s): {said}."
            )
        return Regime.no_disagreement_found, (
            f"No disagreement found: in {n} arguments, no persona attacked another's argument and no two "
            "personas argued opposite sides of the same claim."
        )
    conflicts = len({a for a in attacked_by} | set(opposed))
    if report.extension_count <= 1:
        return Regime.partial, (
            f"Partial: {conflicts} argument(s) in conflict between personas, all decided in the graph "
            f"({extensions}): the losing side's arguments were defeated, which is not agreement; "
            f"{common_ground} of {n} arguments are uncontested common ground."
        )
    regime = Regime.polarized if n == 0 or len(report.common_ground) / n < 0.25 else Regime.partial
    return regime, (
        f"{regime.value.capitalize()}: {conflicts} argument(s) in conflict between personas; "
        f"{common_ground} of {n} arguments are uncontested common ground; {extensions}."
    )


def common_ground_items(state: GraphState, argument_ids: Sequence[str]) -> list[CommonGround]:
    """Uncontested grounded arguments as common ground; arguments of several personas that
    state the same side of the same claim (or the same words) are one item naming them all.

    >>> s = GraphState(topic="t", arguments=(Argument(id="a", speaker_id="p", claim="X."),
    ...     Argument(id="b", speaker_id="q", claim="X holds."), Argument(id="c", speaker_id="q", claim="Y.")),
    ...     meta={"a": ArgMeta("c1", "pro"), "b": ArgMeta("c1", "pro")})
    >>> [(g.statement, g.persona_ids) for g in common_ground_items(s, ["a", "b", "c"])]
    [('X.', ['p', 'q']), ('Y.', ['q'])]
    """
    by_id = {a.id: a for a in state.arguments}
    groups: dict[tuple[str, str], list[Argument]] = {}
    for a in argument_ids:
        arg = by_id[a]
        m = state.meta.get(a, ArgMeta())
        key = (m.claim_id, m.stance or "") if m.claim_id else ("", " ".join(arg.claim.lower().split()).rstrip("."))
        groups.setdefault(key, []).append(arg)
    return [
        CommonGround(
            id=f"g{n + 1}",
            statement=args[0].claim,
            source="grounded",
            persona_ids=sorted({x.speaker_id for x in args}),
            argument_id=args[0].id,
        )
        for n, args in enumerate(groups.values())
    ]


def _sentence_start(text: str) -> str:
    """A sentence to continue another one: no final stop, first letter lowered unless the
    first word is an acronym or a name that keeps its capital mid-sentence (a guess: a
    capital followed by lower case is lowered).

    >>> _sentence_start("Institutional adoption reverses."), _sentence_start("ETF flows stop.")
    ('institutional adoption reverses', 'ETF flows stop')
    """
    text = text.strip().rstrip(".")
    return text[:1].lower() + text[1:] if len(text) > 1 and text[1].islower() else text


def split_claims(
    state: GraphState, report: CruxReport, claim_texts: Mapping[str, str], start: int = 0
) -> list[Crux]:
    """The listed claims the graph leaves split between the two leading camps: arguments for
    and against the claim (as their replies stated) by different personas, in the symmetric
    difference of the top two camps. Each is shown as the two sides' claims, labelled: the
    personas for it with their arguments, and those against with theirs."""
    symdiff = {str(a) for a in report.symmetric_difference}
    out: list[Crux] = []
    for cid, text in claim_texts.items():
        sided = [
            (a, m.stance) for a in state.arguments
            if a.id in symdiff and (m := state.meta.get(a.id)) is not None and m.claim_id == cid and m.stance in ("pro", "con")
        ]
        yes = [a for a, st in sided if st == "pro"]
        no = [a for a, st in sided if st == "con"]
        if not yes or not no or {a.speaker_id for a in yes} == {a.speaker_id for a in no}:
            continue
        falsifiers = [f for a in yes + no if (f := state.meta.get(a.id, ArgMeta()).falsifier)]
        out.append(
            Crux(
                id=f"x{start + len(out) + 1}",
                statement=text,
                source="symmetric_difference",
                yes_side=[CruxSide(persona_id=a.speaker_id, statement=a.claim) for a in yes],
                no_side=[CruxSide(persona_id=a.speaker_id, statement=a.claim) for a in no],
                settling_question=f"Would it settle this to find that {_sentence_start(falsifiers[0])}?" if falsifiers else None,
                argument_ids=[a.id for a in yes + no],
            )
        )
    return out


def map_to_debate_output(
    report: CruxReport,
    state: GraphState,
    persona_ids: Sequence[str],
    result: DebateResult,
    claim_texts: Mapping[str, str] | None = None,
) -> list[tuple[str, str]]:
    """The graph mapped onto the result every engine fills: crux assumptions -> cruxes, per-persona evidence ->
    evidence ledger, settling questions and stated falsifiers -> resolution paths, defeated
    arguments -> flip conditions. Camps (groups of personas), fault lines and the regime come
    from the stances the replies stated (``claim_texts``: the engine's claims, id -> text).
    Also fills graph, common ground and accepted claims.

    Returns the contradictory pairs withheld from common ground (see :func:`contradictory_pairs`).
    """
    claim_texts = dict(claim_texts or {})
    by_id = {a.id: a for a in state.arguments}
    fake = contradictory_pairs(state, report.common_ground)
    withheld = {x for pair in fake for x in pair}

    cruxes = []
    paths: list[str] = []
    symdiff = {str(a) for a in report.symmetric_difference}
    for i, ca in enumerate(report.crux_assumptions):
        deps = [by_id[str(a)] for a in ca.dependent_args if str(a) in by_id]
        dep_ids = {d.id for d in deps}
        # The other side: disputed arguments in direct conflict with those resting on it.
        rivals = sorted(
            {k.to_arg_id for k in state.attacks if k.from_arg_id in dep_ids}
            | {k.from_arg_id for k in state.attacks if k.to_arg_id in dep_ids}
        )
        opponents = [by_id[a] for a in rivals if a in symdiff and a not in dep_ids and a in by_id]
        falsifiers = [
            f"{f.rstrip('.')} (would move {d.speaker_id} on: {ca.assumption.rstrip('.')})"
            for d in deps if (f := state.meta.get(d.id, ArgMeta()).falsifier)
        ]
        cruxes.append(
            Crux(
                id=f"x{i + 1}",
                statement=ca.assumption,
                source="assumption",
                assumptions=[ca.assumption],
                yes_side=[CruxSide(persona_id=d.speaker_id, statement=d.claim) for d in deps],
                no_side=[CruxSide(persona_id=o.speaker_id, statement=o.claim) for o in opponents],
                settling_question=ca.settling_question or None,
                argument_ids=[d.id for d in deps] + [o.id for o in opponents],
                score=ca.centrality,
            )
        )
        paths += [f for f in falsifiers[:1]] or ([ca.settling_question] if ca.settling_question else [])
    cruxes += split_claims(state, report, claim_texts, start=len(cruxes))
    result.cruxes = cruxes
    result.resolution_paths = list(dict.fromkeys(paths))

    result.camps, result.fault_lines = stance_camps(state, persona_ids, claim_texts)

    grounded = [a for a in sorted(str(x) for x in report.common_ground if str(x) not in withheld) if a in by_id]
    attacked_by, targets = cross_persona_conflicts(state)
    opposed = opposing_arguments(state)
    contested = {a for a in grounded if a in attacked_by or a in targets or a in opposed}
    result.common_ground = common_ground_items(state, [a for a in grounded if a not in contested])
    result.accepted_claims = accepted_claims(state, [a for a in grounded if a in contested])

    ledger: dict[str, list[str]] = {p: [] for p in persona_ids}
    for a in state.arguments:
        for ev in a.evidence:
            if ev not in ledger.setdefault(a.speaker_id, []):
                ledger[a.speaker_id].append(ev)
    result.evidence_ledger = {p: evs for p, evs in ledger.items() if evs}

    flips: dict[str, list[str]] = {}
    for a in state.arguments:
        if state.labelling.get(a.id) is Label.OUT:
            beaters = [k.from_arg_id for k in state.attacks if k.to_arg_id == a.id and state.labelling.get(k.from_arg_id) is Label.IN]
            by = "; ".join(by_id[b].claim.strip().rstrip(".") for b in beaters[:2] if b in by_id)
            claim = a.claim.strip().rstrip(".")
            flips.setdefault(a.speaker_id, []).append(
                f'Would give up "{claim}" if this holds: {by}.' if by else f'Would give up "{claim}".'
            )
    result.flip_conditions = flips

    result.regime, result.regime_description = graph_regime(state, report, len(result.common_ground), claim_texts)
    if withheld:
        result.regime_description += (
            f" {len(fake)} contradictory pair(s) without an attack edge withheld from common ground."
        )
    if result.accepted_claims:
        result.regime_description += (
            f" {len(result.accepted_claims)} accepted but contested claim(s) (in an attack with, or opposed"
            " by, another persona's argument) reported as accepted claims, not common ground."
        )
    result.graph = to_argument_graph(state)
    return fake
