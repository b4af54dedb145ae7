"""Crux extraction from an argumentation framework, and the debate's regime.

Input: an :class:`ArgumentFramework`, a map ``argument -> speaker`` and
optionally ``argument -> assumptions``. Output: a :class:`CruxReport` of plain
dataclasses (engines map them onto the pydantic models).

Everything is computed over the factorized preferred space
(:class:`~crux_lab.argumentation.space.ExtensionSpace`), so frameworks with an
astronomically large number of preferred extensions are fine as long as each
independent component has few alternatives.

>>> af = ArgumentFramework.from_edges(
...     ["s1", "h1", "x"], [("s1", "h1"), ("h1", "s1")])
>>> rep = extract_cruxes(af, {"s1": "saylor", "h1": "hayes", "x": "hayes"},
...                      {"s1": ["adoption is deterministic"], "h1": ["policy drives adoption"]})
>>> sorted(rep.common_ground), [c.personas for c in rep.camps]
(['x'], [('hayes',), ('saylor',)])
>>> sorted(rep.symmetric_difference), rep.regime.regime
(['h1', 's1'], 'partial')
>>> rep.crux_assumptions[0].settling_question
'What observable evidence would settle whether adoption is deterministic?'
>>> rep.regime.description
'Partial: 1 of 3 arguments in common ground; 2 preferred extensions, 2 camps of personas.'
>>> [(s.personas, sorted(s.arguments)) for s in rep.sides]
[(('hayes',), ['h1']), (('saylor',), ['s1'])]

Words: a *camp* is a group of personas (those whose arguments dominate the same preferred
extensions); a *preferred extension* is one coherent set of arguments. A debate of two
personas has at most a few camps however many preferred extensions its graph has, and
reader-facing text reports extensions as extensions, with their count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from crux_lab.argumentation.framework import Arg, ArgumentFramework, Extension, sort_args
from crux_lab.argumentation.space import ComponentSpace, ExtensionSpace, Status, extension_space

__all__ = [
    "CampResult",
    "CruxAssumption",
    "CruxReport",
    "PivotArgument",
    "RegimeResult",
    "SideClaims",
    "classify_af_regime",
    "compute_camps",
    "extract_cruxes",
    "format_count",
    "pivot_arguments",
    "rank_assumptions",
    "settling_question",
    "sides_statement",
]


@dataclass(frozen=True)
class CampResult:
    """A camp: a group of personas, with one preferred extension that stands for it.

    ``personas`` are the personas with the most arguments (outside the common ground) in
    the extension; every preferred extension dominated by the same personas belongs to the
    same camp, and ``extensions`` counts those seen (at least 1). ``arguments`` is the first
    such extension; ``support[p]`` counts persona ``p``'s arguments in it outside the
    common ground.
    """

    index: int
    arguments: Extension
    personas: tuple[str, ...]
    support: Mapping[str, int] = field(default_factory=dict)
    extensions: int = 1


@dataclass(frozen=True)
class SideClaims:
    """One side of a symmetric-difference crux: a camp's personas and the arguments its
    extension accepts that the other camp's rejects."""

    personas: tuple[str, ...]
    arguments: Extension


@dataclass(frozen=True)
class CruxAssumption:
    """An assumption under disputed arguments."""

    assumption: str
    dependent_args: tuple[Arg, ...]
    centrality: float
    settling_question: str


@dataclass(frozen=True)
class PivotArgument:
    """A contested argument whose status decides whose central claims stand.

    ``camps_if_in`` / ``camps_if_out``: personas all of whose central claims in
    the argument's component are accepted in every preferred extension that
    contains / excludes the argument.
    """

    argument: Arg
    camps_if_in: frozenset[str]
    camps_if_out: frozenset[str]


@dataclass(frozen=True)
class RegimeResult:
    """Regime label (consensus / polarized / partial) with a one-line description."""

    regime: str
    description: str


@dataclass(frozen=True)
class CruxReport:
    """Everything :func:`extract_cruxes` finds."""

    common_ground: Extension
    camps: tuple[CampResult, ...]
    extension_count: int
    symmetric_difference: Extension
    contested: Extension
    crux_assumptions: tuple[CruxAssumption, ...]
    regime: RegimeResult
    statuses: Mapping[Arg, Status]
    pivots: tuple[PivotArgument, ...]
    # The symmetric difference split by side (empty with fewer than two camps).
    sides: tuple[SideClaims, ...] = ()


# ---------------------------------------------------------------------------


def settling_question(assumption: str) -> str:
    """A readable question that would settle an assumption (a claim in words; "" for none).

    >>> settling_question("Rates stay high.")
    'What observable evidence would settle whether rates stay high?'
    >>> settling_question("AI capex pays off")
    'What observable evidence would settle whether AI capex pays off?'
    >>> settling_question("  ")
    ''
    """
    text = assumption.strip().rstrip(" .?!")
    if not text:
        return ""
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        text = text[0].lower() + text[1:]
    return f"What observable evidence would settle whether {text}?"


def _support(ext: Extension, common: Extension, speakers: Mapping[Arg, str]) -> Counter[str]:
    return Counter(speakers[a] for a in ext - common if a in speakers)


def _dominant(support: Counter[str]) -> tuple[str, ...]:
    if not support:
        return ()
    best = max(support.values())
    return tuple(sorted(p for p, c in support.items() if c == best))


def _best_for(comp: ComponentSpace, mine: Collection[Arg]) -> Extension:
    def score(alt: Extension) -> tuple[int, int]:
        own = sum(1 for a in alt if a in mine)
        return own, -(len(alt) - own)

    return max(comp.alternatives, key=score)


def compute_camps(
    space: ExtensionSpace, speakers: Mapping[Arg, str] | None = None, max_camps: int = 16
) -> tuple[CampResult, ...]:
    """Camps (groups of personas) from a preferred space.

    If the space has at most ``max_camps`` extensions, every extension is
    considered. Otherwise, for each persona ``p`` the extension with the most of
    ``p``'s arguments (ties: fewest other arguments) is built component by
    component — the score is additive, so the per-component argmax is the
    global argmax. Extensions dominated by the same personas form one camp, and
    extensions all personas dominate equally form none (they are no side), so a
    debate of two personas has at most two camps (without speakers, one camp with
    no personas).

    >>> from crux_lab.argumentation.space import extension_space
    >>> af = ArgumentFramework.from_edges("ab", [("a", "b"), ("b", "a")])
    >>> [c.personas for c in compute_camps(extension_space(af), {"a": "p", "b": "q"})]
    [('p',), ('q',)]
    >>> af4 = ArgumentFramework.from_edges("abcd", [("a", "b"), ("b", "a"), ("c", "d"), ("d", "c")])
    >>> [(c.personas, c.extensions) for c in compute_camps(extension_space(af4), dict(zip("abcd", "pqpq")))]
    [(('p',), 1), (('q',), 1)]
    """
    speakers = speakers or {}
    common = space.fixed
    if space.count() <= max_camps or not speakers:
        exts = list(space.iter_extensions(limit=max_camps))
    else:
        by_persona: dict[str, set[Arg]] = {}
        for a, p in speakers.items():
            by_persona.setdefault(p, set()).add(a)
        exts = []
        for p in sorted(by_persona):
            mine = by_persona[p]
            ext = space.fixed.union(*(_best_for(c, mine) for c in space.components))
            if ext not in exts:
                exts.append(ext)
    groups: dict[tuple[str, ...], list[Extension]] = {}
    for ext in exts:
        groups.setdefault(_dominant(_support(ext, common, speakers)), []).append(ext)
    # An extension every persona dominates equally is no side of the debate: not a camp
    # (unless it is all there is).
    everyone = tuple(sorted(set(speakers.values())))
    if len(everyone) >= 2 and len(groups) > 1:
        groups.pop(everyone, None)
    camps = []
    for i, (personas, members) in enumerate(sorted(groups.items())):
        sup = _support(members[0], common, speakers)
        camps.append(CampResult(i, members[0], personas, dict(sorted(sup.items())), len(members)))
    return tuple(camps)


def _top_two(camps: Sequence[CampResult]) -> tuple[CampResult, CampResult] | None:
    if len(camps) < 2:
        return None
    ranked = sorted(camps, key=lambda c: (-sum(c.support.values()), c.index))
    first = ranked[0]
    for other in ranked[1:]:
        if other.personas != first.personas:
            return first, other
    return first, ranked[1]


def rank_assumptions(
    af: ArgumentFramework,
    disputed: Collection[Arg],
    assumptions: Mapping[Arg, Sequence[str]] | None = None,
    top_k: int = 3,
    claims: Mapping[Arg, str] | None = None,
) -> tuple[CruxAssumption, ...]:
    """Rank assumptions of disputed arguments.

    Key: number of dependent disputed arguments (desc), then the summed degree
    centrality ``deg(a) / (n - 1)`` of those arguments (desc), then text.
    Arguments without listed assumptions stand for their claim (``claims[a]``), else for
    themselves (``str(arg)``); an argument known only by its id gets no settling question
    (an internal id is not a question a reader can answer).

    >>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "a"), ("c", "a")])
    >>> [c.assumption for c in rank_assumptions(af, "ab", {"a": ["x", "y"], "b": ["x"]})]
    ['x', 'y']
    >>> [(c.assumption, c.settling_question) for c in rank_assumptions(af, "a", claims={"a": "Rents fall."})]
    [('Rents fall.', 'What observable evidence would settle whether rents fall?')]
    >>> [c.settling_question for c in rank_assumptions(af, "b")]
    ['']
    """
    deps: dict[str, list[Arg]] = {}
    bare: set[str] = set()
    for a in sort_args(disputed):
        texts = list((assumptions or {}).get(a) or [])
        if not texts:
            claim = (claims or {}).get(a, "").strip()
            texts = [claim] if claim else [str(a)]
            if not claim:
                bare.add(str(a))
        for text in texts:
            deps.setdefault(text, []).append(a)
    scale = max(1, len(af) - 1)
    scored = []
    for text, args in deps.items():
        cent = sum(af.degree(a) for a in args) / scale
        scored.append((-len(args), -cent, text, args, cent))
    scored.sort(key=lambda t: (t[0], t[1], t[2]))
    return tuple(
        CruxAssumption(text, tuple(args), round(cent, 6), "" if text in bare else settling_question(text))
        for _, _, text, args, cent in scored[:top_k]
    )


def format_count(n: int) -> str:
    """Exact digits for counts up to 30 digits, else ``~10^k`` (never hits int-str limits).

    >>> format_count(12), format_count(3 * 10**40)
    ('12', '~10^40')
    """
    if n < 10**30:
        return str(n)
    k = int((n.bit_length() - 1) * 0.30102999566398120)
    return f"~10^{k}"


def classify_af_regime(
    n_arguments: int,
    common_ground: int,
    extension_count: int,
    polarized_share: float = 0.25,
    camps: int | None = None,
) -> RegimeResult:
    """The regime of a Dung graph.

    * consensus: a single preferred extension (one coherent worldview);
    * polarized: several preferred extensions and the grounded extension holds
      less than ``polarized_share`` of the arguments;
    * partial: several preferred extensions but a larger common ground.

    The description counts preferred extensions as extensions, and camps (groups of
    personas, :func:`compute_camps`) only when ``camps`` is given.

    >>> classify_af_regime(8, 6, 1).regime, classify_af_regime(8, 0, 2).regime
    ('consensus', 'polarized')
    >>> classify_af_regime(8, 4, 2).description
    'Partial: 4 of 8 arguments in common ground; 2 preferred extensions.'
    >>> classify_af_regime(8, 0, 16, camps=2).description
    'Polarized: 0 of 8 arguments in common ground; 16 preferred extensions, 2 camps of personas.'
    """
    exts = f"{format_count(extension_count)} preferred extension{'s' if extension_count != 1 else ''}"
    if camps is not None:
        exts += f", {camps} camp{'s' if camps != 1 else ''} of personas"
    cg = f"{common_ground} of {n_arguments} arguments in common ground"
    if extension_count <= 1:
        return RegimeResult("consensus", f"Consensus: {cg}; {exts}.")
    if n_arguments == 0 or common_ground / n_arguments < polarized_share:
        return RegimeResult("polarized", f"Polarized: {cg}; {exts}.")
    return RegimeResult("partial", f"Partial: {cg}; {exts}.")


def sides_statement(
    sides: Sequence[SideClaims],
    claims: Mapping[Arg, str],
    names: Mapping[str, str] | None = None,
    *,
    per_side: int = 2,
) -> str:
    """A symmetric-difference crux in words: each side's claims, labelled with its personas
    (never a bare list of claims joined with "vs."). Arguments without a claim text are left
    out; a side with none left says so. A persona without a name in ``names`` is shown by its
    id in words ("michael-saylor" -> "Michael Saylor").

    >>> s = (SideClaims(("saylor",), frozenset({"a1"})), SideClaims(("schiff",), frozenset({"a2", "a3"})))
    >>> sides_statement(s, {"a1": "Bitcoin is scarce.", "a2": "Gold has 5,000 years of history.", "a3": ""},
    ...                 {"saylor": "Michael Saylor", "schiff": "Peter Schiff"})
    'Michael Saylor holds that Bitcoin is scarce. Peter Schiff holds that Gold has 5,000 years of history.'
    """
    names = names or {}
    parts = []
    for side in sides:
        who = " and ".join(names.get(p) or p.replace("-", " ").replace("_", " ").title() for p in side.personas) or "One side"
        texts = [claims[a].strip().rstrip(".") for a in sort_args(side.arguments) if claims.get(a, "").strip()]
        if not texts:
            parts.append(f"{who} states no claim of its own here.")
            continue
        shown = "; and that ".join(texts[:per_side])
        more = f" (and {len(texts) - per_side} more)" if len(texts) > per_side else ""
        parts.append(f"{who} holds that {shown}{more}.")
    return " ".join(parts)


def pivot_arguments(
    space: ExtensionSpace,
    central_claims: Mapping[str, Collection[Arg]],
) -> tuple[PivotArgument, ...]:
    """Pivot arguments of a preferred space.

    Definition. Let ``K`` be the independent component holding a contested
    argument ``x`` (credulously but not skeptically accepted), ``In(x)`` the
    alternatives of ``K`` containing ``x`` and ``Out(x)`` the others. For a set
    ``S`` let ``W(S)`` be the personas ``p`` with ``C_p ∩ K ≠ ∅`` and
    ``C_p ∩ K ⊆ S`` (all of ``p``'s central claims in ``K`` accepted).
    ``x`` is a *pivot* iff ``W(∩ In(x)) ≠ W(∩ Out(x))``: deciding ``x`` alone
    changes which personas' central claims are guaranteed. Because other
    components are independent of ``K``, this is exactly the same as
    conditioning the whole preferred space on ``x``. Sorted by the number of
    personas that flip (desc), then argument order.

    >>> from crux_lab.argumentation.space import extension_space
    >>> af = ArgumentFramework.from_edges("abc", [("a", "b"), ("b", "a"), ("b", "c"), ("c", "b")])
    >>> sp = extension_space(af)
    >>> [(p.argument, sorted(p.camps_if_in)) for p in pivot_arguments(sp, {"P": ["a"], "Q": ["b"]})]
    [('a', ['P']), ('b', ['Q']), ('c', ['P'])]
    """
    if not space.exists():
        return ()
    out: list[tuple[int, int, PivotArgument]] = []
    pos = space.af._index.pos
    owners: dict[Arg, list[str]] = {}
    for p, cs in central_claims.items():
        for c in cs:
            owners.setdefault(c, []).append(p)
    for comp in space.components:
        if len(comp.alternatives) < 2:
            continue
        local: dict[str, set[Arg]] = {}
        for a in comp.arguments:
            for p in owners.get(a, ()):
                local.setdefault(p, set()).add(a)
        claims = {p: frozenset(c) for p, c in local.items()}
        if not claims:
            continue

        def winners(
            sets: list[Extension], claims: dict[str, frozenset[Arg]] = claims
        ) -> frozenset[str]:
            inter = frozenset.intersection(*sets)
            return frozenset(p for p, c in claims.items() if c <= inter)

        for x in comp.credulous - comp.skeptical:
            ins = [alt for alt in comp.alternatives if x in alt]
            outs = [alt for alt in comp.alternatives if x not in alt]
            w_in, w_out = winners(ins), winners(outs)
            if w_in != w_out:
                out.append((-len(w_in ^ w_out), pos[x], PivotArgument(x, w_in, w_out)))
    out.sort(key=lambda t: (t[0], t[1]))
    return tuple(p for _, _, p in out)


def extract_cruxes(
    af: ArgumentFramework,
    speakers: Mapping[Arg, str] | None = None,
    assumptions: Mapping[Arg, Sequence[str]] | None = None,
    *,
    central_claims: Mapping[str, Collection[Arg]] | None = None,
    max_camps: int = 16,
    top_k: int = 3,
    polarized_share: float = 0.25,
    max_alternatives: int | None = None,
    claims: Mapping[Arg, str] | None = None,
) -> CruxReport:
    """Common ground, camps, symmetric difference, crux assumptions, regime, pivots.

    1. common ground = grounded extension;
    2. camps = preferred extensions mapped to dominant personas (:func:`compute_camps`);
    3. symmetric difference of the top two camps (most persona support, with
       different dominant personas where possible);
    4. assumptions of the disputed arguments ranked by dependents and degree
       (:func:`rank_assumptions`), with settling questions;
    5. regime (:func:`classify_af_regime`), per-argument statuses, pivots
       (central claims default to each persona's own arguments).

    ``max_alternatives`` bounds the work per independent component (raises
    :class:`~crux_lab.argumentation.space.TooManyAlternatives`). ``claims`` gives each
    argument's claim text: an argument without listed assumptions stands for its claim in
    the ranked assumptions and their settling questions, never for its id.
    """
    speakers = speakers or {}
    space = extension_space(af, "preferred", max_alternatives)
    grounded = space.fixed
    camps = compute_camps(space, speakers, max_camps)
    top = _top_two(camps)
    symdiff = top[0].arguments ^ top[1].arguments if top else frozenset()
    sides = (
        (SideClaims(top[0].personas, top[0].arguments - top[1].arguments),
         SideClaims(top[1].personas, top[1].arguments - top[0].arguments))
        if top else ()
    )
    statuses = space.statuses()
    contested = frozenset(a for a, s in statuses.items() if s == "contested")
    if central_claims is None:
        by: dict[str, list[Arg]] = {}
        for a, p in speakers.items():
            by.setdefault(p, []).append(a)
        central_claims = by
    return CruxReport(
        common_ground=grounded,
        camps=camps,
        extension_count=space.count(),
        symmetric_difference=symdiff,
        contested=contested,
        crux_assumptions=rank_assumptions(af, symdiff, assumptions, top_k, claims),
        regime=classify_af_regime(
            len(af), len(grounded), space.count(), polarized_share,
            camps=sum(1 for c in camps if c.personas) if speakers else None,
        ),
        statuses=statuses,
        pivots=pivot_arguments(space, central_claims),
        sides=sides,
    )
