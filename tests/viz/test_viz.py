"""Figure builders: pure (data in, figure out), correct colours and counts, LLM text escaped."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from crux_lab.analysis.alignment import disagreement_matrix
from crux_lab.analysis.insights import card_alignment
from crux_lab.models import (
    Argument,
    ArgumentGraph,
    Attack,
    AttackTarget,
    Crux,
    CruxCard,
    CruxCardPosition,
    DebateConfig,
    DialogueTurn,
    GraphUpdated,
    PersonaPosition,
    PositionShift,
)
from crux_lab.runner import run_debate_sync
from crux_lab.viz.alignment import crux_heatmap, crux_types_figure, disagreement_heatmap
from crux_lab.viz.benchmark import (
    engine_comparison_figure,
    mean_ci,
    regime_figure,
    seed_distribution_figure,
)
from crux_lab.viz.framework import (
    argument_framework_figure,
    framework_steps,
    framework_steps_figure,
    graph_stats_figure,
)
from crux_lab.viz.shifts import position_shift_figure
from crux_lab.viz.transcript import crux_cards_html, ledger_html, transcript_html

EVIL = '<img src=x onerror="alert(1)">'


def arg(i: str, speaker: str, claim: str = "c") -> Argument:
    return Argument(id=i, speaker_id=speaker, claim=claim)


def attack(a: str, b: str) -> Attack:
    return Attack(id=f"{a}>{b}", from_arg_id=a, to_arg_id=b, target=AttackTarget(arg_id=b), rationale=EVIL)


def figure_text(fig) -> str:
    return json.dumps(fig.to_plotly_json(), default=str)


def test_framework_colours_by_grounded_label_and_outlines_cruxes() -> None:
    # a attacks b, c and d attack each other: a IN, b OUT, c and d UNDEC (each defensible).
    graph = ArgumentGraph(arguments=[arg("a", "p1", EVIL), arg("b", "p2"), arg("c", "p1"), arg("d", "p2"), arg("e", "p2")],
                          attacks=[attack("a", "b"), attack("c", "d"), attack("d", "c"), attack("e", "e")])
    fig = argument_framework_figure(graph, names={"p1": "Persona One", "p2": "Persona Two"},
                                    cruxes=[Crux(id="x", statement="s", source="proposed", argument_ids=["c"])])
    by_kind = {t.meta: t for t in fig.data if t.meta}
    assert [len(by_kind[k].x) for k in ("IN", "OUT", "UNDEC defensible", "UNDEC")] == [1, 1, 2, 1]
    assert by_kind["IN"].marker.color == "#1a9850" and by_kind["OUT"].marker.color == "#d73027"
    # Grouped by persona: p1's arguments in column 0, p2's in column 1, named in the column heads.
    assert by_kind["IN"].x[0] == 0 and by_kind["OUT"].x[0] == 1
    subtitle, *heads = [a.text for a in fig.layout.annotations if not a.showarrow]
    assert heads == ["<b>Persona One</b>", "<b>Persona Two</b>"]
    assert subtitle.startswith("5 arguments, 4 attacks")
    # Directed: one arrow per attack between two arguments, from the attacker (a, at column 0) to b.
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    assert len(arrows) == 4 and (arrows[0].ax, arrows[0].x) == (0, 1)
    undec = by_kind["UNDEC defensible"]
    widths = dict(zip(undec.hovertext, undec.marker.line.width, strict=True))
    assert [w for h, w in widths.items() if "<b>crux</b>" in h] == [4]
    text = figure_text(fig)
    assert "<img" not in text and "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in text


def test_labels_are_short_titles_with_the_full_claim_on_hover() -> None:
    long = "It is not the case that companies should hold Bitcoin as a primary treasury reserve asset for the long run."
    graph = ArgumentGraph(arguments=[arg("a", "p1", long), arg("b", "p2", "Gold is money.")], attacks=[attack("a", "b")])
    fig = argument_framework_figure(graph)
    label = next(t for t in fig.data if t.meta == "IN").text[0]
    assert label.startswith("NOT: companies should hold") and label.endswith("…") and len(label) <= 44
    hover = next(t for t in fig.data if t.meta == "IN").hovertext[0]
    assert "reserve asset for the long run." in hover.replace("<br>", " ")


def test_dispute_view_and_card_map() -> None:
    from crux_lab.models import DCGState, Dispute, Reason, Stance
    from crux_lab.viz.framework import card_map, dispute_view

    dcg = DCGState(disputes=[Dispute(id="d-0", question="Is gold money?")],
                   stances=[Stance(id="s-0", dispute_id="d-0", speaker_id="p1", side="YES", statement="Gold is money."),
                            Stance(id="s-1", dispute_id="d-0", speaker_id="p2", side="NO", statement=EVIL)],
                   reasons=[Reason(id="r-0", stance_id="s-1", polarity="SUPPORT", claim="It has no yield.")])
    fig = dispute_view(dcg, cruxes=[Crux(id="c", statement="s", source="dispute", dispute_id="d-0")], names={"p1": "One"})
    cells = fig.data[0].cells.values
    assert "Is gold money?" in cells[0][0] and cells[1][0] == "crux"
    assert "<b>One</b>: Gold is money." in cells[2][0] and "+ It has no yield." in cells[3][0]
    assert "<img" not in figure_text(fig)
    cmap = card_map(cards())
    assert list(cmap.data[0].x) == ["a", "b", "c"] and cmap.data[0].z[0][:2] == [1.0, -1.0]
    assert "<img" not in figure_text(cmap)


def test_steps_follow_the_graph_growing_and_shrinking() -> None:
    g1 = ArgumentGraph(arguments=[arg("a", "p1"), arg("b", "p2")], attacks=[attack("a", "b")])
    g2 = ArgumentGraph(arguments=[arg("a", "p1")])
    events = [GraphUpdated(seq=1, graph=g1, in_count=1, out_count=1, undec_count=0),
              GraphUpdated(seq=5, graph=g2, in_count=1, out_count=0, undec_count=0)]
    steps = framework_steps(events)
    assert [len(s.graph.arguments) for s in steps] == [2, 1]
    fig = framework_steps_figure(steps)
    assert len(fig.frames) == 2 and len(fig.layout.sliders[0].steps) == 2
    stats = graph_stats_figure(events)
    assert list(next(t for t in stats.data if t.name == "OUT").y) == [1, 0]
    # Lines that coincide stay visible: each its own dash, the earlier ones wider.
    assert len({t.line.dash for t in stats.data}) == len(stats.data)
    widths = [t.line.width for t in stats.data]
    assert widths == sorted(widths, reverse=True) and widths[0] > widths[-1]
    # The subtitle follows the slider: each frame says which step it shows and what it holds.
    subs = [next(a.text for a in f.layout.annotations if "crystallization" in a.text) for f in fig.frames]
    assert subs[0].startswith("crystallization 1 of 2: 2 arguments, 1 attack ")
    assert subs[1].startswith("crystallization 2 of 2: 1 argument, 0 attacks")
    assert [s.label for s in fig.layout.sliders[0].steps] == ["1", "2"]  # short labels, none clipped


def test_an_edge_is_routed_around_the_nodes_it_does_not_touch() -> None:
    from crux_lab.viz.routing import path_clearance

    # One column of four: a (top) attacks d (bottom), past b and c.
    graph = ArgumentGraph(arguments=[arg(i, "p1") for i in "abcd"], attacks=[attack("a", "d"), attack("a", "b")])
    fig = argument_framework_figure(graph)
    edges = next(t for t in fig.data if t.name == "attacks")
    path = [(x, y) for x, y in zip(edges.x, edges.y, strict=True) if x is not None]
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    assert len(arrows) == 2 and path and path[0] == (0, 0)  # a-d bent (its legs drawn), a-b straight
    bent = [*path, (arrows[0].x, arrows[0].y)]
    assert bent[-1] == (0, -3) and any(x != 0 for x, _y in bent)
    assert path_clearance(bent, [(0, -1), (0, -2)], (850, 56)) >= 14


def test_real_dialogue_run_figures() -> None:
    result = run_debate_sync(DebateConfig(topic="Is gold money?", persona_ids=["michael-saylor", "peter-schiff"],
                                          engine="dialogue", max_turns=8, seed=2))
    n_updates = sum(1 for e in result.events if e.type == "graph_updated")
    steps = framework_steps(result.events)
    assert len(steps) == n_updates > 0
    assert steps[-1].graph == result.graph
    fig = argument_framework_figure(result.graph, camps=result.camps, cruxes=result.cruxes)
    shown = sum(len(t.x) for t in fig.data if t.meta)
    assert shown == len(result.graph.arguments)
    html = transcript_html(result.transcript).html
    assert html.count('class="cl-turn"') == len(result.transcript)
    phases = 1 + sum(1 for a, b in zip(result.transcript, result.transcript[1:], strict=False) if (a.phase, a.room_id) != (b.phase, b.room_id))
    assert html.count('class="cl-phase"') == phases
    ledger = ledger_html(result.usage, result.llm_calls).html
    assert f"<td>total</td><td>{result.usage.calls}</td>" in ledger


def test_transcript_and_cards_escape_llm_text() -> None:
    turn = DialogueTurn(id="t", turn_index=0, persona_id="p", dialogue=EVIL, phase="opening", move="CHALLENGE")
    assert "<img" not in transcript_html([turn]).html
    card = CruxCard(id="c", question=EVIL, disagreement_type="values", diagnosis=EVIL,
                    personas={"p": CruxCardPosition(position="YES", reasoning=EVIL)})
    assert "<img" not in crux_cards_html([card]).html


def cards() -> list[CruxCard]:
    def pos(p: str) -> CruxCardPosition:
        return CruxCardPosition(position=p, reasoning="r")
    return [
        CruxCard(id="c1", question=EVIL, disagreement_type="evidence", diagnosis="", personas={"a": pos("YES"), "b": pos("NO")}),
        CruxCard(id="c2", question="q2", disagreement_type="values", diagnosis="", personas={"a": pos("YES"), "b": pos("YES"), "c": pos("NUANCED")}),
    ]


def test_alignment_heatmaps() -> None:
    matrix = card_alignment(cards(), ["a", "b", "c"])
    fig = crux_heatmap(matrix)
    z = np.array(fig.data[0].z, dtype=float)
    assert z[0].tolist() == [1.0, 1.0] and z[1].tolist() == [-1.0, 1.0] and math.isnan(z[2][0])
    assert "<img" not in figure_text(fig)
    dm = disagreement_matrix(matrix)
    dfig = disagreement_heatmap(dm)
    assert dfig.data[0].z[0][1] == pytest.approx(0.5)  # a vs b: opposite on c1, same on c2
    types = crux_types_figure(cards=cards())
    assert sorted(zip(types.data[0].x, types.data[0].y, strict=True)) == [("evidence", 1), ("values", 1)]


def test_position_shift_figure_marks_shifts() -> None:
    positions = [PersonaPosition(persona_id="a", at="opening", text="", stances={"p1": "pro", "p2": "con"}),
                 PersonaPosition(persona_id="a", at="closing", text="", stances={"p1": "con", "p2": "con"})]
    shifts = [PositionShift(persona_id="a", shifted=True, attributed_rooms=["room-1"], named_reason=EVIL, summary="moved")]
    fig = position_shift_figure(positions, shifts)
    closing = next(t for t in fig.data if t.name == "closing")
    assert list(closing.x) == [-1.0, -1.0]
    assert list(closing.marker.color) == ["#d73027", "#2166ac"]  # p1 shifted, p2 held
    assert "room-1" in closing.hovertext[0] and "<img" not in figure_text(fig)


def test_mean_ci_matches_the_t_interval() -> None:
    m, lo, hi = mean_ci([2.0, 4.0, 6.0, 8.0])
    sd = math.sqrt(sum((x - 5.0) ** 2 for x in (2, 4, 6, 8)) / 3)
    half = 3.182446305284263 * sd / 2  # t(0.975, 3)
    assert (m, lo, hi) == pytest.approx((5.0, 5.0 - half, 5.0 + half))
    assert mean_ci([3.0]) == (3.0, 3.0, 3.0)


def test_benchmark_figures() -> None:
    records = [{"engine": e, "seed": s, "topic": "t", "calls": c, "tokens": 10 * c, "cost_usd": 0.1, "n_cruxes": s,
                "fake_consensus": 0.0, "regime": r}
               for e, s, c, r in [("dcg", 0, 10, "polarized"), ("dcg", 1, 12, "polarized"), ("dialogue", 0, 20, "consensus")]]
    fig = engine_comparison_figure(records)
    calls = fig.data[0]
    assert list(calls.x) == ["dcg", "dialogue"] and list(calls.y) == [11.0, 20.0]
    assert calls.error_y.array[1] == 0  # one run: no interval
    regimes = {t.name: list(t.y) for t in regime_figure(records).data}
    assert regimes["polarized"] == [1.0, 0.0] and regimes["consensus"] == [0.0, 1.0]
    # every run is counted: no disagreement found has its own bar, an unknown regime counts as unknown
    found_none = [{"engine": "direct", "regime": "no_disagreement_found"}, {"engine": "direct", "regime": "odd"}]
    regimes = {t.name: list(t.y) for t in regime_figure(found_none).data}
    assert regimes["no disagreement found"] == [0.5] and regimes["unknown"] == [0.5]
    assert sum(y[0] for y in regimes.values()) == 1.0
    assert len(seed_distribution_figure(records, "n_cruxes").data) == 2


def test_crux_table_labels_each_side_with_its_claim_and_skips_a_repeated_question() -> None:
    from crux_lab.models import Crux, CruxSide
    from crux_lab.viz.transcript import cruxes_html

    question = "Did rents fall where supply rose?"
    crux = Crux(
        id="wv1", statement=question, source="assumption", settling_question=question,
        yes_side=[CruxSide(persona_id="yimby", statement="New supply lowers rents.")],
        no_side=[CruxSide(persona_id="tenant", statement="Rents follow demand <not> supply.")],
    )
    html = cruxes_html([crux], names={"yimby": "The YIMBY", "tenant": "The organizer"}).html
    assert "<b>The YIMBY</b>: New supply lowers rents." in html
    assert "<b>The organizer</b>: Rents follow demand &lt;not&gt; supply." in html
    assert html.count(question) == 1  # the settling question is the statement: not shown twice
    assert "wv1" not in html
