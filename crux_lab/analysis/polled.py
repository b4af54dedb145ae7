"""The poll's answers in words (pure): who answered what when asked alone, side flips, which
cruxes are decisive for whom, and the run's poll in a few lines. Read by the CLI summary, the
reports, the console and the poll itself (:mod:`crux_lab.engines.poll`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from crux_lab.models.domain import Crux, CruxCard, CruxPoll
from crux_lab.models.result import DebateResult

__all__ = ["answers_line", "poll_sections", "crux_poll_lines", "decisive_line", "flip_lines", "names_text", "poll_lines",
           "polls_of", "unanimous_line"]


def names_text(ids: Sequence[str], names: Mapping[str, str]) -> str:
    """Display names joined as a reader writes them.

    >>> names_text(["a", "b", "c"], {"a": "Ann"})
    'Ann, b and c'
    """
    shown = [names.get(p, p) for p in ids]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1] if shown else ""


def polls_of(result: DebateResult) -> list[CruxPoll]:
    """Every candidate the run's poll asked, each once: the split ones on the crux cards and
    cruxes, then those it ruled out (answered alike, in common ground; or not split).

    >>> polls_of(DebateResult.model_construct(crux_cards=[], cruxes=[], common_ground=[], poll=None))
    []
    """
    polls = [c.poll for c in result.crux_cards if c.poll is not None]
    polls += [c.poll for c in result.cruxes if c.poll is not None]
    polls += [g.poll for g in result.common_ground if g.source == "poll" and g.poll is not None]
    polls += result.poll.not_split if result.poll is not None else []
    first: dict[str, CruxPoll] = {}
    for poll in polls:
        first.setdefault(poll.item_id, poll)
    return list(first.values())


def decisive_line(poll: CruxPoll, names: Mapping[str, str]) -> str:
    """"decisive for A, not for B" (or "" before the pivot test).

    >>> p = CruxPoll(status="split", question="q", decisive_for=["a"], not_decisive_for=["b"])
    >>> decisive_line(p, {"a": "Ann", "b": "Bo"})
    'decisive for Ann, not for Bo'
    >>> decisive_line(CruxPoll(status="split", question="q", not_decisive_for=["b"]), {"b": "Bo"})
    'decisive for no one: Bo would keep their answer on the topic'
    """
    if poll.decisive_for:
        line = f"decisive for {names_text(poll.decisive_for, names)}"
        return line + (f", not for {names_text(poll.not_decisive_for, names)}" if poll.not_decisive_for else "")
    if poll.not_decisive_for:
        return f"decisive for no one: {names_text(poll.not_decisive_for, names)} would keep their answer on the topic"
    return ""


def unanimous_line(poll: CruxPoll) -> str:
    """The common-ground wording of a candidate every persona answered alike.

    >>> from crux_lab.models.domain import PersonaPollAnswer as A
    >>> unanimous_line(CruxPoll(status="unanimous", question="q", answers=[A(persona_id="a", answer="YES")]))
    'every persona answered YES when asked alone'
    """
    said = {a.answer for a in poll.answers}
    return f"every persona answered {next(iter(said))} when asked alone" if len(said) == 1 else ""


def answers_line(poll: CruxPoll, names: Mapping[str, str]) -> str:
    """Who answered what, asked alone.

    >>> from crux_lab.models.domain import PersonaPollAnswer as A
    >>> p = CruxPoll(status="split", question="q", answers=[A(persona_id="a", answer="YES", confidence=0.9), A(persona_id="b", answer="NO", confidence=0.6)])
    >>> answers_line(p, {"a": "Ann"})
    'asked alone: Ann YES (0.9), b NO (0.6)'
    """
    if poll.status == "unpolled":
        return "unpolled: " + (poll.note or "the debate's sides stand")
    return "asked alone: " + ", ".join(f"{names.get(a.persona_id, a.persona_id)} {a.answer} ({a.confidence:.1f})" for a in poll.answers)


def flip_lines(poll: CruxPoll, names: Mapping[str, str]) -> list[str]:
    """One line per persona whose answer is the opposite of the side the debate gave it."""
    return [a.flip_line(names.get(a.persona_id, a.persona_id)) for a in poll.flips]


def crux_poll_lines(crux: Crux | CruxCard, names: Mapping[str, str]) -> list[str]:
    """A crux's (or card's) polled sides, flips and decisiveness, in lines.

    >>> from crux_lab.models.domain import PersonaPollAnswer as A
    >>> p = CruxPoll(status="split", question="q", decisive_for=["a"], answers=[
    ...     A(persona_id="a", answer="YES", confidence=0.9, debate_side="NO", flipped=True, pivot="YES"),
    ...     A(persona_id="b", answer="NO", confidence=0.6)])
    >>> crux_poll_lines(Crux(id="c", statement="q", source="card", poll=p), {"a": "Ann", "b": "Bo"})
    ['asked alone: Ann YES (0.9), Bo NO (0.6)', 'decisive for Ann', 'Ann stated NO in the room, answers YES when asked alone']
    """
    poll = crux.poll
    if poll is None:
        return []
    out = [answers_line(poll, names)]
    if line := decisive_line(poll, names):
        out.append(line)
    return out + flip_lines(poll, names)


def poll_sections(result: DebateResult, names: Mapping[str, str]) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """What the run's poll left out of the cruxes, in words: ``(heading, items)`` sections
    (common ground, not cruxes, unpolled) and plain lines after them. One source for the CLI
    summary and the report."""
    s = result.poll
    if s is None:
        return [], []
    ground = [f"{g.statement} ({g.poll.note or unanimous_line(g.poll)})" for g in result.common_ground if g.poll is not None]
    sections = [
        ("Common ground (every persona gave the same answer when asked alone)", ground),
        ("Not cruxes (asked alone, no persona answered against another)", [f"{p.question} ({answers_line(p, names)})" for p in s.not_split]),
        ("Unpolled (a request failed; the debate's sides stand)", list(s.unpolled)),
    ]
    lines = [f"{len(s.over_limit)} more candidate(s) were over the poll's limit and keep their debate sides."] if s.over_limit else []
    if s.graph_pivot_agreement is not None:
        lines.append(f"The argument graph's pivots agree with the personas' own pivot answers in "
                     f"{s.graph_pivot_agreement:.0%} of {s.graph_pivot_pairs} crux-persona pairs.")
    return [(h, items) for h, items in sections if items], lines


def poll_lines(result: DebateResult, names: Mapping[str, str]) -> list[str]:
    """The run's poll in a few lines (the CLI summary and the console)."""
    s = result.poll
    if s is None:
        return []
    if s.status == "skipped":
        return [f"poll: skipped ({s.note})"]
    sections, lines = poll_sections(result, names)
    out = [f"poll: {s.note}" if s.note else "poll: done"]
    for heading, items in sections:
        out += [f"  {heading}: {item}" for item in items]
    return out + [f"  {line}" for line in lines]
