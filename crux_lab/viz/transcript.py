"""The debate as HTML: a colour-coded transcript with phase markers, crux cards and the ledger.

Pure builders: data in, :class:`~crux_lab.viz._text.HTMLBlock` or plotly figure out. All
dialogue, card and persona text is escaped here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from crux_lab.analysis.polled import answers_line, decisive_line, flip_lines, poll_sections
from crux_lab.backends import registered
from crux_lab.models.accounting import LLMCall, Usage
from crux_lab.models.domain import Camp, Crux, CruxCard, CruxPoll, CruxSide, DCGState, DialogueTurn
from crux_lab.models.result import DebateResult
from crux_lab.viz._text import HTMLBlock, esc, short_title

MOVE_COLORS: dict[str, str] = {
    "CLAIM": "#2166ac",
    "CHALLENGE": "#d73027",
    "CLARIFY": "#4d9221",
    "CONCEDE": "#7b3294",
    "REFRAME": "#e08214",
    "PROPOSE_CRUX": "#b8860b",
}
PHASE_COLORS: dict[str, str] = {
    "opening": "#f7f7f7",
    "free_exchange": "#eef4fb",
    "crux_seeking": "#fff6e5",
    "resolution": "#eef8ee",
    "take": "#eef4fb",
    "clash": "#fdecec",
    "closing": "#eef8ee",
    "crux_room": "#fff6e5",
    "channel": "#f7f7f7",
    "round": "#f7f7f7",
}
STANCE_MARK = {"pro": "▲ pro", "con": "▼ con", "uncertain": "◆ uncertain"}
POSITION_COLORS = {"YES": "#1a9850", "NO": "#d73027", "NUANCED": "#999999"}


def _phase_key(turn: DialogueTurn) -> tuple[str, str | None]:
    return (turn.phase, turn.room_id)


def _phase_label(turn: DialogueTurn, rooms: dict[str, int]) -> str:
    label = "phase: " + turn.phase.replace("_", " ")
    if turn.room_id:
        rooms.setdefault(turn.room_id, len(rooms) + 1)
        label += f" · crux room {rooms[turn.room_id]}"
    return label


def transcript_html(turns: Sequence[DialogueTurn], *, names: dict[str, str] | None = None, limit: int | None = None,
                    refs: Mapping[str, str] | None = None) -> HTMLBlock:
    """The transcript with a marker at every phase (or crux room) change and moves colour-coded.
    ``refs`` maps the ids a turn addresses (arguments, claims, disputes) to their text: a turn
    shows what it replies to by a short title (full text on hover); ids without a text are left
    out, never shown raw.

    >>> t = DialogueTurn(id="t0", turn_index=0, persona_id="a", dialogue="<b>hi</b>", phase="opening", move="CLAIM")
    >>> h = transcript_html([t]).html
    >>> "&lt;b&gt;hi&lt;/b&gt;" in h and "phase: opening" in h and "CLAIM" in h
    True
    """
    names = names or {}
    refs = refs or {}
    rooms: dict[str, int] = {}
    shown = list(turns if limit is None else turns[:limit])
    rows: list[str] = []
    previous: tuple[str, str | None] | None = None
    for turn in shown:
        key = _phase_key(turn)
        if key != previous:
            label = _phase_label(turn, rooms)
            if turn.phase_number is not None:
                label += f" (#{turn.phase_number})"
            rows.append(
                f'<div class="cl-phase" style="margin:10px 0 4px;padding:2px 8px;border-left:4px solid #555;'
                f'font-weight:bold;background:#e8e8e8">{esc(label)}</div>'
            )
            previous = key
        move = turn.move.value if turn.move else ""
        color = MOVE_COLORS.get(move, "#555555")
        badge = (
            f'<span style="background:{color};color:#fff;border-radius:3px;padding:0 5px;font-size:85%">{esc(move)}</span> '
            if move else ""
        )
        stance = f' <span style="color:#666;font-size:85%">{esc(STANCE_MARK[turn.stance])}</span>' if turn.stance else ""
        named = [refs[i] for i in dict.fromkeys(turn.proposition_ids) if i in refs]
        props = "".join(f' <span style="color:#777;font-size:80%" title="{esc(t)}">↪ {esc(short_title(t, 48))}</span>'
                        for t in named[:2])
        speaker = names.get(turn.persona_id, turn.persona_id)
        rows.append(
            f'<div class="cl-turn" style="padding:4px 8px;margin:2px 0;border-left:4px solid {color};'
            f'background:{PHASE_COLORS.get(turn.phase, "#fff")}">'
            f'<b>{turn.turn_index + 1}. {esc(speaker)}</b> {badge}{stance}{props}<br>{esc(turn.dialogue)}</div>'
        )
    if limit is not None and len(turns) > limit:
        rows.append(f"<div><i>… {len(turns) - limit} more turns</i></div>")
    if not rows:
        rows.append("<div><i>(no turns)</i></div>")
    legend = " ".join(
        f'<span style="background:{c};color:#fff;border-radius:3px;padding:0 5px;font-size:85%">{m}</span>'
        for m, c in MOVE_COLORS.items()
    )
    return HTMLBlock(f'<div class="cl-transcript"><div style="margin-bottom:6px">moves: {legend}</div>{"".join(rows)}</div>')


def crux_cards_html(cards: Sequence[CruxCard], *, names: dict[str, str] | None = None) -> HTMLBlock:
    """Crux cards: the question, its type, the diagnosis and each persona's position.

    >>> from crux_lab.models import CruxCardPosition as P
    >>> c = CruxCard(id="c", question="Q<?>", disagreement_type="values", diagnosis="d",
    ...              personas={"a": P(position="YES", reasoning="r")})
    >>> "Q&lt;?&gt;" in crux_cards_html([c]).html
    True
    """
    names = names or {}
    if not cards:
        return HTMLBlock("<div><i>(no crux cards)</i></div>")
    out = []
    for card in cards:
        falsifiers = any((pos.falsifier or "").strip() for pos in card.personas.values())
        rows = "".join(
            f'<tr><td style="white-space:nowrap"><b>{esc(names.get(pid, pid))}</b></td>'
            f'<td style="color:{POSITION_COLORS.get(pos.position.value, "#333")};font-weight:bold">{esc(pos.position.value)}</td>'
            f"<td>{esc(pos.reasoning)}</td>" + (f"<td>{esc(pos.falsifier or '')}</td>" if falsifiers else "") + "</tr>"
            for pid, pos in card.personas.items()
        )
        positions = {pos.position.value for pos in card.personas.values()}
        if card.resolved and len(positions) == 1 and positions <= {"YES", "NO"}:
            status = "resolved: " + esc(card.resolution or f"everyone answers {positions.pop()}")
        elif card.resolution:  # a concession whose positions still differ: open, with the note
            status = "open (positions still differ) · " + esc(card.resolution)
        else:
            status = "open"
        head = "<th>persona</th><th>position</th><th>reasoning</th>" + ("<th>would change if</th>" if falsifiers else "")
        out.append(
            '<div class="cl-card" style="border:1px solid #ccc;border-radius:6px;padding:8px;margin:8px 0">'
            f'<div><b>{esc(card.question)}</b> <span style="background:#fdb863;border-radius:3px;padding:0 5px">'
            f"{esc(card.disagreement_type.value)}</span> <i>{status}</i>{decisive_badge(card.poll, names)}</div>"
            f'<div style="margin:4px 0">{esc(card.diagnosis)}</div>'
            f'<table class="cl-table" style="font-size:90%;width:100%">{head}{rows}</table>{poll_note_html(card.poll, names)}</div>'
        )
    return HTMLBlock("".join(out))


def decisive_badge(poll: CruxPoll | None, names: Mapping[str, str]) -> str:
    """A crux's decisive mark: "decisive for A, not for B" (the pivot test), or "unpolled".

    >>> decisive_badge(CruxPoll(status="split", question="q", decisive_for=["a"]), {"a": "Ann"})
    ' <span class="cl-decisive" style="background:#b2df8a;border-radius:3px;padding:0 5px">★ decisive for Ann</span>'
    """
    if poll is None:
        return ""
    if poll.status == "unpolled":
        return ' <span class="cl-unpolled" style="background:#eee;border-radius:3px;padding:0 5px">unpolled</span>'
    line = decisive_line(poll, names)
    if not line:
        return ""
    star = "★ " if poll.decisive_for else ""
    color = "#b2df8a" if poll.decisive_for else "#eee"
    return f' <span class="cl-decisive" style="background:{color};border-radius:3px;padding:0 5px">{star}{esc(line)}</span>'


def poll_note_html(poll: CruxPoll | None, names: Mapping[str, str]) -> str:
    """Under a crux or card: each persona's answer asked alone with its reason, and side flips."""
    if poll is None:
        return ""
    if poll.status == "unpolled":
        return f'<div style="font-size:90%;color:#555">{esc(answers_line(poll, names))}</div>'
    reasons = "".join(
        f"<li><b>{esc(names.get(a.persona_id, a.persona_id))}</b> {esc(a.answer)} ({a.confidence:.1f})"
        + (f": {esc(a.reason)}" if a.reason else "")
        + (f' <span style="color:#b35806">(reply kept: {esc(a.raw_reply[:120])})</span>' if a.raw_reply else "")
        + "</li>"
        for a in poll.answers
    )
    flips = "".join(f'<li style="color:#b35806">{esc(line)}</li>' for line in flip_lines(poll, names))
    return (f'<div class="cl-poll" style="font-size:90%;margin-top:4px"><i>asked alone, each persona answered:</i>'
            f'<ul style="margin:2px 0">{reasons}{flips}</ul></div>')


def poll_html(result: DebateResult, names: Mapping[str, str] | None = None) -> HTMLBlock:
    """The run's poll: what it did, the common ground it found (every persona answered alike when
    asked alone), the candidates it did not split, what it left unpolled.

    >>> from crux_lab.models import DebateConfig
    >>> r = DebateResult(run_id="r", config=DebateConfig(topic="t", persona_ids=["a", "b"]), engine="dcg", backend="simulated")
    >>> poll_html(r).html
    '<div><i>(no poll in this run)</i></div>'
    """
    names = names or {}
    s = result.poll
    if s is None:
        return HTMLBlock("<div><i>(no poll in this run)</i></div>")
    parts = [f"<div>{esc(s.note)}</div>"] if s.note else []
    sections, lines = poll_sections(result, names)
    for heading, items in sections:
        title, _, why = heading.partition(" (")
        parts.append(f"<div><b>{esc(title)}</b> ({esc(why)}:<ul>{''.join(f'<li>{esc(i)}</li>' for i in items)}</ul></div>")
    parts += [f"<div>{esc(line)}</div>" for line in lines]
    return HTMLBlock('<div class="cl-poll-summary">' + "".join(parts) + "</div>")


def disputes_html(dcg: DCGState, *, names: Mapping[str, str] | None = None) -> HTMLBlock:
    """A dispute-centric graph's disputes, each with its two sides: who answers YES, who NO.

    >>> from crux_lab.models import Dispute, Stance
    >>> d = DCGState(disputes=[Dispute(id="d1", question="Is <it> money?")],
    ...              stances=[Stance(id="s1", dispute_id="d1", speaker_id="a", side="YES", statement="It is."),
    ...                       Stance(id="s2", dispute_id="d1", speaker_id="b", side="NO", statement="No.")])
    >>> h = disputes_html(d, names={"a": "Ann"}).html
    >>> "Is &lt;it&gt; money?" in h and "<b>Ann</b>: It is." in h and "d1" not in h
    True
    """
    names = names or {}
    if not dcg.disputes:
        return HTMLBlock("<div><i>(no disputes yet)</i></div>")

    def side(did: str, value: str) -> str:
        held = [s for s in dcg.stances if s.dispute_id == did and s.side.value == value]
        return "<br>".join(f"<b>{esc(names.get(s.speaker_id, s.speaker_id))}</b>: {esc(s.statement)}" for s in held) or "<i>nobody yet</i>"

    rows = "".join(
        f"<tr><td>{esc(d.question)}</td><td>{'open' if d.active else 'closed'}</td>"
        f"<td>{side(d.id, 'YES')}</td><td>{side(d.id, 'NO')}</td></tr>"
        for d in dcg.disputes
    )
    return HTMLBlock('<table class="cl-table cl-disputes" style="width:100%"><tr><th>dispute</th><th>status</th>'
                     f"<th>YES</th><th>NO</th></tr>{rows}</table>")


def camps_html(camps: Sequence[Camp], extensions: Sequence[Camp] = ()) -> HTMLBlock:
    """The camps in words (labels carry display names), and the preferred extensions when they
    say more than the camps.

    >>> camps_html([Camp(index=0, persona_ids=["a"], label="Ann")]).html
    '<div><b>camps</b>: Ann</div>'
    """
    if not camps:
        return HTMLBlock("<div><b>camps</b>: <i>none found</i></div>")
    text = " · ".join(esc(c.label) for c in camps)
    more = ""
    if extensions:
        more = (f'<div style="color:#555">the argument graph has {len(extensions)} preferred extensions, '
                "each held by: " + " · ".join(esc(e.label) for e in extensions) + "</div>")
    return HTMLBlock(f"<div><b>camps</b>: {text}</div>{more}")


def ledger_html(usage: Usage, calls: Sequence[LLMCall]) -> HTMLBlock:
    """The call ledger summed per purpose: calls, tokens (with cache), latency and cost.

    >>> c = LLMCall(run_id="r", seq=0, purpose="opening", backend="simulated", model="m", tier="fast",
    ...             input_tokens=10, output_tokens=5, cost_usd=0.01)
    >>> "opening" in ledger_html(Usage(calls=1, input_tokens=10, output_tokens=5, cost_usd=0.01), [c]).html
    True
    """
    per: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0, 0.0, 0.0])
    for c in calls:
        row = per[c.purpose]
        row[0] += 1
        row[1] += c.input_tokens
        row[2] += c.output_tokens
        row[3] += c.cache_read_tokens or 0  # an unknown figure (None) adds nothing
        row[4] += c.latency_s
        row[5] += c.cost_usd
    body = "".join(
        f"<tr><td>{esc(p)}</td><td>{int(r[0])}</td><td>{int(r[1]):,}</td><td>{int(r[2]):,}</td>"
        f"<td>{int(r[3]):,}</td><td>{r[4]:.2f}</td><td>${r[5]:.4f}</td></tr>"
        for p, r in sorted(per.items(), key=lambda kv: -kv[1][5])
    )
    modelled = bool(calls) and all(c.backend in modelled_backends() for c in calls)
    cached = "unknown" if usage.cache_read_tokens is None else f"{usage.cache_read_tokens:,}"
    total = (
        f"<tr style='font-weight:bold'><td>total</td><td>{usage.calls}</td><td>{usage.input_tokens:,}</td>"
        f"<td>{usage.output_tokens:,}</td><td>{cached}</td><td>{usage.latency_s:.2f}</td>"
        f"<td>${usage.cost_usd:.4f}</td></tr>"
    )
    cost_head = "cost (modelled, not billed)" if modelled else "cost"
    return HTMLBlock(
        '<table class="cl-table cl-ledger"><tr><th>purpose</th><th>calls</th><th>input tokens</th><th>output tokens</th>'
        f"<th>cache read</th><th>latency s</th><th>{cost_head}</th></tr>{body}{total}</table>"
    )


def ledger_figure(calls: Sequence[LLMCall]) -> go.Figure:
    """Cumulative cost and tokens over the calls of a debate (in call order). Both axes start
    at zero. When no call cost anything (a server on this machine) only tokens are drawn: a
    flat cost line would only push the axis below zero.

    >>> free = [LLMCall(run_id="r", seq=i, purpose="take", backend="openai", model="m", tier="strong",
    ...                 input_tokens=100, output_tokens=10) for i in range(3)]
    >>> fig = ledger_figure(free)
    >>> [t.name for t in fig.data], list(fig.data[0].y), fig.layout.yaxis.rangemode
    (['tokens (uncached input + output)'], [110, 220, 330], 'tozero')
    """
    ordered = sorted(calls, key=lambda c: c.seq)
    cost, tokens = [], []
    running_cost, running_tokens = 0.0, 0
    for c in ordered:
        running_cost += c.cost_usd
        running_tokens += c.input_tokens + c.output_tokens
        cost.append(running_cost)
        tokens.append(running_tokens)
    xs = list(range(1, len(ordered) + 1))
    hover = [f"#{c.seq} {esc(c.purpose)} ({esc(c.tier.value)})" for c in ordered]
    modelled = bool(ordered) and all(c.backend in modelled_backends() for c in ordered)
    costs = modelled or any(c.cost_usd for c in ordered)
    fig = go.Figure()
    name = "tokens (uncached input + output)"
    if costs:
        fig.add_trace(go.Scatter(x=xs, y=cost, name="cost (USD)", mode="lines", hovertext=hover))
        fig.add_trace(go.Scatter(x=xs, y=tokens, name=name, mode="lines", yaxis="y2", hovertext=hover))
        axes = {"yaxis": {"title": "USD", "rangemode": "tozero"},
                "yaxis2": {"title": "tokens", "overlaying": "y", "side": "right", "rangemode": "tozero"}}
        title = "Ledger: cumulative cost and tokens" + (" (cost modelled, not billed)" if modelled else "")
    else:
        fig.add_trace(go.Scatter(x=xs, y=tokens, name=name, mode="lines", hovertext=hover))
        axes = {"yaxis": {"title": "tokens", "rangemode": "tozero"}}
        title = "Ledger: cumulative tokens (no call cost anything)"
    fig.update_layout(title=title, height=320, xaxis_title="call", margin={"l": 50, "r": 50, "t": 50, "b": 40},
                      showlegend=True, **axes)
    return fig


CRUX_SOURCES = {"proposed": "proposed by a persona", "symmetric_difference": "where the camps' accepted arguments differ",
                "assumption": "an assumption under the disputed positions", "dispute": "a dispute with both sides held",
                "card": "a crux card", "blackboard": "the blackboard's stances", "pivot": "a pivotal argument"}


def cruxes_html(cruxes: Sequence[Crux], *, names: dict[str, str] | None = None) -> HTMLBlock:
    """The cruxes a run found: statement, type, how it was found, who holds which side.

    >>> "&lt;x&gt;" in cruxes_html([Crux(id="c", statement="<x>", source="proposed")]).html
    True
    """
    names = names or {}
    if not cruxes:
        return HTMLBlock("<div><i>(no cruxes)</i></div>")

    def side(sides: Sequence[CruxSide]) -> str:
        # each persona once, labelled, with the claim (or assumption) it holds on this side
        held: dict[str, list[str]] = {}
        for s in sides:
            held.setdefault(s.persona_id, [])
            if s.statement and s.statement not in held[s.persona_id]:
                held[s.persona_id].append(s.statement)
        return "<br>".join(
            f"<b>{esc(names.get(pid, pid))}</b>" + (": " + esc(" / ".join(claims)) if claims else "")
            for pid, claims in held.items()
        )

    def settle(c: Crux) -> str:
        return "" if (c.settling_question or "").strip() == c.statement.strip() else (c.settling_question or "")

    def sides(c: Crux) -> str:
        if c.yes_side and c.no_side:
            return f"<td>{side(c.yes_side)}</td><td>{side(c.no_side)}</td>"
        return '<td colspan="2"><i>this run cannot say who holds which side</i></td>'

    rows = "".join(
        f"<tr><td>{esc(c.statement)}{decisive_badge(c.poll, names)}{poll_note_html(c.poll, names)}</td>"
        f"<td>{esc(c.disagreement_type.value if c.disagreement_type else 'not typed')}</td>"
        f"<td>{esc(CRUX_SOURCES.get(c.source, c.source))}</td>{sides(c)}<td>{esc(settle(c))}</td></tr>"
        for c in cruxes
    )
    return HTMLBlock(
        '<table class="cl-table cl-cruxes"><tr><th>crux</th><th>type</th><th>found by</th><th>one side (YES)</th>'
        f"<th>the other side (NO)</th><th>what would settle it</th></tr>{rows}</table>"
    )


def modelled_backends() -> frozenset[str]:
    """Backends whose cost is what the calls would cost on the model, not what was billed."""
    return frozenset(n for n, s in registered().items() if not s.billed)


def cost_text(cost_usd: float, backend: str) -> str:
    """``$0.1029 (modelled, not billed)`` on the simulated and replay backends.

    >>> cost_text(0.10293, "simulated"), cost_text(0.5, "anthropic")
    ('$0.1029 (modelled, not billed)', '$0.5000')
    """
    return f"${cost_usd:.4f}" + (" (modelled, not billed)" if backend in modelled_backends() else "")


def regime_text(result: DebateResult) -> str:
    """The regime once: its description when that already names it, else ``regime: description``.

    >>> from crux_lab.models import DebateConfig, Regime
    >>> r = DebateResult(run_id="r", config=DebateConfig(topic="t", persona_ids=["a", "b"]), engine="dcg",
    ...                  backend="simulated", regime=Regime.polarized, regime_description="Polarized: 2 disputes.")
    >>> regime_text(r)
    'Polarized: 2 disputes.'
    >>> regime_text(r.model_copy(update={"regime_description": "2 of 4 claims disputed."}))
    'polarized: 2 of 4 claims disputed.'
    >>> regime_text(r.model_copy(update={"regime": Regime.no_disagreement_found, "regime_description": ""}))
    'no disagreement found'
    """
    word = result.regime.value.replace("_", " ")
    text = result.regime_description.strip()
    if not text:
        return word
    return text if text.lower().startswith(word) else f"{word}: {text}"


def run_header_html(result: DebateResult, names: dict[str, str] | None = None) -> HTMLBlock:
    """One line per fact: run id, engine, backend, regime, completeness and counts."""
    cfg = result.config
    names = names or {}
    status = "complete" if result.complete else "incomplete"
    facts = [
        ("topic", cfg.topic), ("run", result.run_id), ("engine", result.engine), ("backend", result.backend),
        ("personas", ", ".join(names.get(p, p) for p in cfg.persona_ids)), ("seed", cfg.seed),
        ("status", status + (f" ({result.error})" if result.error else "")),
        ("regime", regime_text(result)),
        ("turns / cruxes / cards", f"{len(result.transcript)} / {len(result.cruxes)} / {len(result.crux_cards)}"),
        ("calls / tokens / cost", f"{result.usage.calls} / {result.usage.input_tokens + result.usage.output_tokens:,} / "
                                  f"{cost_text(result.usage.cost_usd, result.backend)}"),
    ]
    rows = "".join(f"<tr><th style='text-align:left'>{esc(k)}</th><td style='text-align:left'>{esc(v)}</td></tr>" for k, v in facts)
    return HTMLBlock(f'<table class="cl-table cl-header">{rows}</table>')
