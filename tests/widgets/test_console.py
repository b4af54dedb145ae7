"""DebateConsole event handling, without a browser: feed it events, read its state and widgets."""

from __future__ import annotations

from crux_lab.models import (
    ArgumentGraph,
    CruxCard,
    CruxCardPosition,
    CruxCardPosted,
    DebateConfig,
    DialogueTurn,
    DialogueTurnEvent,
    EngineError,
    GraphUpdated,
    MessagePosted,
    Usage,
)
from crux_lab.runner import DebateRun
from crux_lab.widgets import DebateConsole

EVIL = "<script>alert(1)</script>"


def turn(i: int, text: str = "hello") -> DialogueTurn:
    return DialogueTurn(id=f"t{i}", turn_index=i, persona_id="michael-saylor", dialogue=text, phase="opening", move="CLAIM")


def test_persona_picker_follows_the_deck() -> None:
    console = DebateConsole(deck="housing")
    assert {pid for _name, pid in console.personas.options} == {"yimby-economist", "neighborhood-preservationist", "tenant-organizer"}
    assert ("The Tenant Organiser", "tenant-organizer") in console.personas.options  # names shown, ids kept
    console.deck.value = "crypto"
    assert ("Michael Saylor", "michael-saylor") in console.personas.options and len(console.personas.value) == 2
    assert console.topic.value in console.decks["crypto"].topics


def test_events_update_transcript_counts_cards_and_cost() -> None:
    console = DebateConsole()
    console.handle(DialogueTurnEvent(turn=turn(0, EVIL)), Usage(calls=1, cost_usd=0.0123))
    console.handle(MessagePosted(message=turn(1), phase="take"))
    console.handle(GraphUpdated(graph=ArgumentGraph(), in_count=3, out_count=2, undec_count=1), Usage(calls=2, cost_usd=0.5))
    card = CruxCard(id="c", question="Is it money?", disagreement_type="values", diagnosis="d",
                    personas={"michael-saylor": CruxCardPosition(position="YES", reasoning="r")})
    console.handle(CruxCardPosted(card=card))
    s = console.state
    assert len(s.turns) == 2 and s.counts == {"IN": 3, "OUT": 2, "UNDEC": 1} and len(s.cards) == 1
    assert "IN 3" in console.counts.value and "OUT 2" in console.counts.value and "UNDEC 1" in console.counts.value
    assert "$0.5000" in console.cost.value and "(2 calls)" in console.cost.value
    assert "Is it money?" in console.cards.value
    assert "&lt;script&gt;" in console.transcript.value and "<script>" not in console.transcript.value
    console.handle(EngineError(error="backend down"))
    assert "backend down" in console.status.value


def test_a_warning_is_not_an_error_and_a_new_engine_clears_the_status() -> None:
    console = DebateConsole()
    console.handle(EngineError(level="warning", error="card dropped after one repair"))
    assert console.state.errors == [] and "1 warning" in console.status.value
    assert "error:" not in console.status.value and "#d73027" not in console.status.value and "card dropped" in console.status.value
    console.engine.value = "dcg"  # a new engine: the form is reset, the old status goes
    assert console.status.value == "ready" and console.state.warnings == []
    assert "UNDEC" not in console.counts.value and "disputes 0" in console.counts.value


def test_run_button_streams_a_whole_debate() -> None:
    console = DebateConsole(deck="crypto", max_turns=6)
    console.engine.value = "dialogue"
    result = console.start()  # no running loop here: runs to the end
    assert result is not None and result.complete
    # every turn of the debate was streamed (it may end before its 6-turn budget)
    assert len(console.state.turns) == len(result.transcript) and 0 < len(result.transcript) <= 6
    last_graph = [e for e in result.events if e.type == "graph_updated"][-1]
    assert console.state.counts == {"IN": last_graph.in_count, "OUT": last_graph.out_count, "UNDEC": last_graph.undec_count}
    assert console.state.calls == result.usage.calls
    assert console.run_button.disabled is False and console.stop_button.disabled is True


async def test_stop_ends_the_debate_early_and_keeps_a_partial_result() -> None:
    console = DebateConsole(deck="crypto", max_turns=12)
    console.engine.value = "dialogue"
    seen: list[str] = []
    original = console.handle

    def handle_then_stop(event, usage=None):  # type: ignore[no-untyped-def]
        original(event, usage)
        seen.append(event.type)
        if event.type == "dialogue_turn" and seen.count("dialogue_turn") == 3:
            console.stop()  # as the stop button does

    console.handle = handle_then_stop  # type: ignore[method-assign]
    task = console.start()
    assert task is not None and console.stop_button.disabled is False  # running as a task on this loop
    result = await task  # type: ignore[misc]
    assert result.complete is False
    assert len(result.transcript) == 3 == len(console.state.turns)


def test_bad_form_input_is_shown_not_raised() -> None:
    console = DebateConsole(deck="crypto")
    console.personas.value = ()
    assert console.start() is None
    assert "error" in console.status.value


def test_console_feeds_from_a_debate_run() -> None:
    """``consume`` works on any DebateRun (e.g. one built with a custom backend)."""
    import asyncio

    console = DebateConsole()
    run = DebateRun(DebateConfig(topic="Bitcoin is digital gold", persona_ids=["michael-saylor", "peter-schiff"],
                                 engine="blitz", max_turns=4))
    result = asyncio.run(console.consume(run))
    assert len(console.state.turns) == len(result.transcript) > 0


def test_a_console_run_is_saved_ingested_and_reportable(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from crux_lab.store import query
    from crux_lab.workbench import find_run

    runs, db = tmp_path / "runs", tmp_path / "c.duckdb"
    console = DebateConsole(deck="crypto", engine="dcg", max_turns=4, runs_dir=runs, db=db)
    assert console.report_button.disabled
    result = console.start()
    assert result is not None
    assert (runs / result.run_id / "result.json").is_file()
    assert query("SELECT count(*) FROM runs WHERE run_id = ?", db, [result.run_id]).rows == [(1,)]
    assert find_run(result.run_id, db, roots=[runs]) == runs / result.run_id  # what `crux-lab report` looks up
    assert "and the database" in console.status.value and not console.report_button.disabled
    path = console.open_report()
    assert path is not None and path.is_file() and path.stat().st_size > 1_000_000
    assert path.name in console.report_link.value and "href=" in console.report_link.value


def test_a_busy_database_queues_the_run(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import crux_lab.runs
    from crux_lab.store.db import DatabaseLocked

    def locked(*_a, **_k):  # type: ignore[no-untyped-def]
        raise DatabaseLocked("Conflicting lock is held by another process")

    monkeypatch.setattr(crux_lab.runs, "ingest_runs", locked)  # the one run-and-save path
    console = DebateConsole(deck="crypto", engine="dcg", max_turns=4, runs_dir=tmp_path / "runs", db=tmp_path / "c.duckdb")
    result = console.start()
    assert result is not None and (tmp_path / "runs" / result.run_id / "manifest.json").is_file()
    assert "queued" in console.status.value and "crux-lab db ingest" in console.status.value
    assert not console.report_button.disabled  # the report reads the run folder


def test_panel_counts_cards_rooms_and_disagreements_and_shows_names() -> None:
    console = DebateConsole(deck="crypto", engine="panel", max_turns=6)
    assert ("Michael Saylor", "michael-saylor") in console.personas.options
    result = console.start()
    assert result is not None
    s = console.state
    assert s.structure == "rooms" and len(s.cards) == len(result.crux_cards)
    assert s.rooms == sum(1 for e in result.events if e.type == "crux_room_spawning")
    assert f"crux cards {len(result.crux_cards)}" in console.counts.value and "IN 0" not in console.counts.value
    assert "Michael Saylor" in console.transcript.value or "Peter Schiff" in console.transcript.value
    assert "michael-saylor</b>" not in console.transcript.value
    # The transcript box keeps its scroll at the bottom: the newest turn stays in view.
    assert console.transcript.layout.flex_flow == "column-reverse" and console.transcript.layout.overflow == "auto"


def test_counts_fit_the_engine_before_any_event() -> None:
    console = DebateConsole(deck="crypto", engine="dcg")
    assert "disputes 0" in console.counts.value and "IN 0" not in console.counts.value
    console.engine.value = "blitz"
    assert "turns 0" in console.counts.value and "IN" not in console.counts.value
    console.engine.value = "dialogue"
    assert "IN 0" in console.counts.value


def test_dcg_findings_show_disputes_with_two_sides_and_the_cruxes() -> None:
    from crux_lab.viz._text import esc

    console = DebateConsole(deck="crypto", engine="dcg", max_turns=16)  # the simulated speakers disagree once they heard each other
    result = console.start()
    assert result is not None and result.cruxes
    names = console.names
    html = console.cards.value
    assert "(no crux cards)" not in html and f"cruxes ({len(result.cruxes)})" in html
    for crux in result.cruxes:
        assert esc(crux.statement) in html
        assert crux.sides_known and all(names[s.persona_id] in html for s in [*crux.yes_side, *crux.no_side])
    assert "<th>YES</th><th>NO</th>" in html  # the disputes table
    assert not any(pid in html for pid in result.config.persona_ids)  # display names, not ids
    assert "IN 0" not in console.counts.value


def test_dialogue_findings_show_cruxes_camps_and_one_regime_label() -> None:
    from crux_lab.viz._text import esc

    console = DebateConsole(deck="crypto", engine="dialogue", max_turns=16)  # the simulated speakers disagree once they heard each other
    result = console.start()
    assert result is not None and result.cruxes
    html = console.cards.value
    assert f"cruxes ({len(result.cruxes)})" in html and "<b>camps</b>" in html
    assert "polarized: Polarized" not in html and "partial: Partial" not in html
    # the poll's sides on every crux, and its summary
    assert result.poll is not None and result.poll.note and esc(result.poll.note) in html
    assert any(c.poll is not None for c in result.cruxes) and "asked alone" in html


def test_the_report_link_is_served_by_the_jupyter_server(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import crux_lab.widgets as widgets

    server = {"root_dir": str(tmp_path), "base_url": "/", "url": "http://127.0.0.1:1/", "token": "t"}
    monkeypatch.setattr(widgets, "jupyter_server", lambda: server)
    monkeypatch.chdir(tmp_path)  # a lab started elsewhere than the checkout: the report goes under it
    console = DebateConsole(deck="crypto", engine="blitz", max_turns=4, runs_dir=tmp_path / "runs", db=tmp_path / "c.duckdb")
    assert console.open_report() is None and "run a debate first" in console.report_link.value
    result = console.start()
    assert result is not None
    path = console.open_report()
    assert path == tmp_path / "reports" / f"{result.run_id}.html" and path.stat().st_size > 1_000_000
    assert f'href="/files/reports/{result.run_id}.html"' in console.report_link.value
    assert 'target="_blank"' in console.report_link.value and "text-decoration:underline" in console.report_link.value
