"""The argument graph's pivots, per persona, and their agreement with the personas' own pivot
answers (pure; read by the poll, :mod:`crux_lab.engines.poll`).

A *pivot* of a preferred space (:func:`crux_lab.argumentation.crux.pivot_arguments`) is a
contested argument whose status alone decides whose central claims stand. Here every argument a
persona made is one of its central claims, so an argument is pivotal *for* a persona when
deciding it changes whether that persona's claims stand. A crux is graph-pivotal for a persona
when one of its arguments is; the persona's own answer to the pivot test ("would your answer to
the topic change?") agrees when it says YES exactly where the graph says pivotal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from crux_lab.argumentation import ArgumentFramework, TooManyAlternatives, extension_space
from crux_lab.argumentation.crux import pivot_arguments
from crux_lab.models.domain import ArgumentGraph

__all__ = ["graph_pivots", "pivot_agreement"]


def graph_pivots(graph: ArgumentGraph) -> dict[str, frozenset[str]]:
    """Argument id -> the personas for whom it is pivotal (empty when the graph has none).

    >>> from crux_lab.models.domain import Argument, Attack, AttackTarget
    >>> args = [Argument(id="a", speaker_id="p", claim="Rents fall."), Argument(id="b", speaker_id="q", claim="They rise.")]
    >>> t = AttackTarget(arg_id="b", component="claim")
    >>> atts = [Attack(id="x", from_arg_id="a", to_arg_id="b", type="rebut", target=t),
    ...         Attack(id="y", from_arg_id="b", to_arg_id="a", type="rebut", target=t.model_copy(update={"arg_id": "a"}))]
    >>> sorted((k, sorted(v)) for k, v in graph_pivots(ArgumentGraph(arguments=args, attacks=atts)).items())
    [('a', ['p', 'q']), ('b', ['p', 'q'])]
    """
    if not graph.arguments:
        return {}
    af = ArgumentFramework.from_edges([a.id for a in graph.arguments], [(x.from_arg_id, x.to_arg_id) for x in graph.attacks])
    central: dict[str, list[str]] = {}
    for a in graph.arguments:
        central.setdefault(a.speaker_id, []).append(a.id)
    try:
        pivots = pivot_arguments(extension_space(af), central)
    except TooManyAlternatives:
        return {}
    return {str(p.argument): frozenset(p.camps_if_in ^ p.camps_if_out) for p in pivots}


def pivot_agreement(
    pairs: Iterable[tuple[Iterable[str], str, bool]], pivots: Mapping[str, frozenset[str]]
) -> tuple[float | None, int]:
    """``(share, n)``: over ``(argument ids of a crux, persona id, persona said decisive)``
    triples whose crux has arguments, the share where the graph's pivot and the persona agree.

    >>> pivot_agreement([(["a"], "p", True), (["a"], "r", True), ([], "p", True)], {"a": frozenset({"p"})})
    (0.5, 2)
    >>> pivot_agreement([], {})
    (None, 0)
    """
    n = agree = 0
    for args, pid, decisive in pairs:
        ids = list(args)
        if not ids:
            continue
        n += 1
        agree += (any(pid in pivots.get(a, frozenset()) for a in ids)) == decisive
    return (round(agree / n, 4) if n else None), n
