"""Every engine on real model text: cassettes recorded from a local model
(Qwen2.5-Coder-1.5B-Instruct on llama.cpp's server, see tests/data/cassettes/README.md)
replayed without the server and without the simulator.

Nothing here judges the quality of the model's cruxes. It checks that real replies take the
code paths they must: the engine finishes; the event log validates; a reply that stayed
off-schema after its repair takes the documented path (a warning event, the debate goes on);
what the model's valid replies did state (turns, arguments, disputes, detections, cards) ends
up in the result; and the extractors' own replies, not only persona turns, reach it: a card
from a validated ``card`` reply in panel and crux_rooms, a dispute from a validated
``crystallize`` reply in dcg. Where a recorded model does not get that far (its sides quote
words nobody said, or a guard ends the debate early), the test is a strict expected failure
that says so (``NOT_ON_THIS_RECORDING``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from crux_lab.analysis.restates import restates_topic
from crux_lab.engines.names import world_question
from crux_lab.llm.replay import load_cassette
from crux_lab.models import DebateEvent, DebateResult, EngineError
from crux_lab.runner import run_debate
from tests.data.cassettes.record import HERE, config_for

# Cassettes that no longer replay: recorded before a change to their engine's prompts or reply
# schema. They need recording again on the real model (tests/data/cassettes/README.md); strict,
# so a re-recorded cassette that passes says so.
_NEW_TURN_SHAPE = ("a persona's turn request now holds no transcript (the claim to answer, its own points), its stance "
                   "lines speak in its own words, and its reply states its side and the point it answers first")
RERECORD: dict[str, str] = {}
# What the recorded model did not do on the current recording, so a test of it cannot hold there.
# These are findings about the model's text, kept visible as strict expected failures.
NOT_ON_THIS_RECORDING: dict[str, str] = {}


def _rerecord(engine: str, missing: dict[str, str] | None = None) -> Any:
    if engine in RERECORD:
        reason = f"record {engine}.jsonl again: {RERECORD[engine]}"
    elif missing and engine in missing:
        reason = f"on this recording of {engine}: {missing[engine]}"
    else:
        return engine
    return pytest.param(engine, marks=pytest.mark.xfail(strict=True, reason=reason))


ENGINES = [_rerecord(e) for e in sorted(json.loads((HERE / "debates.json").read_text())["engines"])]


def _replays(engine: str) -> pytest.MarkDecorator:
    """A test of one engine's cassette: a strict expected failure while it needs recording again."""
    if engine in RERECORD:
        return pytest.mark.xfail(strict=True, reason=f"record {engine}.jsonl again: {RERECORD[engine]}")
    return pytest.mark.xfail(False, reason="recorded on the current request shape")  # a condition that never holds


PERSONA_TURNS = {"opening", "take", "rebuttal", "crux_turn", "closing", "dialogue_turn", "resolution",
                 "channel_message", "agent_turn", "blackboard_turn", "initial_arguments"}
# purpose whose valid reply states a structure -> what must then be in the result
STATED = {
    "crystallize": lambda r: bool(r.graph.arguments or r.dcg.disputes or r.concession_trail),
    "discovery": lambda r: bool(r.graph.arguments or r.dcg.disputes),
    "initial_arguments": lambda r: bool(r.graph.arguments),
    "card": lambda r: bool(r.crux_cards),
    "direct_cards": lambda r: bool(r.crux_cards),
    "cot_cards": lambda r: bool(r.crux_cards),
    "initial_stance": lambda r: any(e.type == "initial_stance" and e.stances for e in r.events),  # type: ignore[union-attr]
    "decompose_claims": lambda r: any(e.type == "claims_decomposed" and e.claims for e in r.events),  # type: ignore[union-attr]
    "worldview_positions": lambda r: any(e.type == "status" and "positions and what they assume" in e.message for e in r.events),  # type: ignore[union-attr]
    "crux_pairs": lambda r: any(c.source == "assumption" for c in r.cruxes),
}


def _says_something(text: str) -> bool:
    """Whether a reply states anything: not empty, and not an object whose every field is empty
    (Qwen's ``{"conflicts": []}`` is a valid reply that found nothing)."""
    try:
        value = json.loads(text)
    except ValueError:
        return bool(text.strip())
    return any(value.values()) if isinstance(value, dict) else bool(value)


def _stated(cassette: Path) -> dict[str, int]:
    """Per purpose: replies that validated and stated something."""
    out: dict[str, int] = {}
    for e in load_cassette(cassette):
        if e.response is not None and _says_something(e.response.text):
            out[e.purpose] = out.get(e.purpose, 0) + 1
    return out


@pytest.mark.parametrize("engine", ENGINES)
async def test_engine_runs_on_recorded_real_model_text(engine: str) -> None:
    cassette = HERE / f"{engine}.jsonl"
    assert cassette.is_file(), f"no cassette for {engine}: record it (tests/data/cassettes/README.md)"
    entries = load_cassette(cassette)
    result = await run_debate(config_for(engine), cassette=cassette)
    # the engine finished, every call answered from the cassette, on the recorded model; or a
    # guard kept out every turn and ended the debate early, with that reason (the documented path
    # for a model too weak to play its personas)
    ended_early = result.error is not None and result.error.startswith("debate ended early: the ")
    if ended_early:
        assert any(isinstance(e, EngineError) and e.purpose.startswith("guard_") for e in result.events)
    else:
        assert result.error is None and result.complete, result.error
    assert result.backend == "replay"
    assert len(result.llm_calls) == len(entries)
    # the event log validates, and the result round-trips
    TypeAdapter(list[DebateEvent]).validate_python([e.model_dump(mode="json") for e in result.events])
    assert DebateResult.model_validate_json(result.model_dump_json()) == result
    # a reply that stayed off-schema took the documented path: a warning, and the debate went on
    off_schema = [e for e in entries if e.error is not None]
    warnings = [e for e in result.events if isinstance(e, EngineError) and e.level == "warning"]
    assert len(warnings) >= min(1, len(off_schema))
    errors = [e for e in result.events if isinstance(e, EngineError) and e.level == "error"]
    assert not errors or (ended_early and len(errors) == 1), errors
    # what valid replies stated is in the result
    stated = _stated(cassette)
    if any(p in PERSONA_TURNS for p in stated):
        assert result.transcript or result.graph.arguments, "valid persona replies left no turn"
    for purpose, check in STATED.items():
        if stated.get(purpose):
            # in the result, or dropped as unusable with a warning that says why
            # (a side whose quote is not that speaker's words is dropped by the grounded-sides guard)
            dropped = [w for w in warnings if w.purpose in (purpose, "guard_sides") and ("refused" in w.error or "dropped" in w.error)]
            assert check(result) or dropped, f"{engine}: {stated[purpose]} valid '{purpose}' replies, nothing in the result"


# engine -> (purpose, what a validated reply of that purpose must have put in the result)
EXTRACTED = {
    "dcg": ("crystallize", lambda r: bool(r.dcg.disputes)),
    "panel": ("card", lambda r: bool(r.crux_cards)),
    "crux_rooms": ("card", lambda r: bool(r.crux_cards)),
}


@pytest.mark.parametrize("engine", [_rerecord(e, NOT_ON_THIS_RECORDING) for e in sorted(EXTRACTED)])
async def test_an_extractor_reply_of_real_text_reaches_the_result(engine: str) -> None:
    purpose, found = EXTRACTED[engine]
    cassette = HERE / f"{engine}.jsonl"
    assert _stated(cassette).get(purpose), f"{engine}: no validated '{purpose}' reply was recorded"
    result = await run_debate(config_for(engine), cassette=cassette)
    assert found(result), f"{engine}: its validated '{purpose}' replies left nothing in the result"


def _cards(engine: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(the schema sent, the reply) of each recorded card call."""
    return [(e.request["schema"], json.loads(e.response.text)) for e in load_cassette(HERE / f"{engine}.jsonl")
            if e.purpose == "card" and e.response is not None]


@pytest.mark.parametrize("engine", [_rerecord(e, NOT_ON_THIS_RECORDING) for e in ("panel", "crux_rooms")])
async def test_a_card_offered_only_its_speakers_sentences_quotes_them_and_is_posted(engine: str) -> None:
    """Free to write any string, Qwen quoted a corpus chunk for both sides, and the grounded-sides
    guard dropped the card. Its schema now offers each participant only the sentences they said:
    in every recorded card reply each side quotes one of its own speaker's, and a card reaches
    the result with the question of one of those replies."""
    cards = _cards(engine)
    assert cards
    for schema, reply in cards:
        offered = {v["properties"]["persona_id"]["enum"][0]: v["properties"]["quote"]["enum"]
                   for v in schema["properties"]["personas"]["items"]["anyOf"]}
        assert sorted(offered) == sorted(p["persona_id"] for p in reply["personas"]) == ["Michael Saylor", "Peter Schiff"]  # labelled by name, as the prompt shows them
        assert all(p["quote"] in offered[p["persona_id"]] for p in reply["personas"])
    result = await run_debate(config_for(engine), cassette=HERE / f"{engine}.jsonl")
    # posted as written, or asked about the claim when it asked about a person ("Is Schiff correct in stating that ...?")
    written = {world_question(r["question"], result.persona_names) or r["question"] for _, r in cards}
    assert result.crux_cards and all(c.question in written for c in result.crux_cards)
    assert not [e for e in result.events if isinstance(e, EngineError) and e.purpose == "guard_sides"]


@_replays("panel")
async def test_aspects_that_restate_the_topic_are_left_out_and_the_rest_debated() -> None:
    """Asked for three aspects, Qwen has given the topic, or a question close to it, as one or
    more of them (on one recording as all three, and the reply was sent back once; on the
    current one the reply was sent back and its repair gave three narrower questions). Those
    are left out with a warning that names them, and the panel debates the rest, none of which
    restates the topic."""
    cassette = HERE / "panel.jsonl"
    entries = [e for e in load_cassette(cassette) if e.purpose == "decompose"]
    sent = [e.request["messages"][-1]["content"] for e in entries]
    assert len(sent) in (1, 2) and all("restates the debate topic" in repair for repair in sent[1:])
    labels = [a["label"] for a in json.loads(entries[-1].response.text)["aspects"]]  # type: ignore[union-attr]
    result = await run_debate(config_for("panel"), cassette=cassette)
    debated = [e.aspect.label for e in result.events if e.type == "round_start"]  # type: ignore[union-attr]
    assert debated and set(debated) <= set(labels)
    assert not any(restates_topic(label, result.config.topic) for label in debated)
    warned = [e.error for e in result.events if isinstance(e, EngineError) and e.purpose == "decompose"]
    left = [label for label in labels if label not in debated]
    assert all(any(label in w for w in warned) for label in left)  # none dropped silently
    assert all("it is the debate topic itself" in w for w in warned)


@_replays("dcg")
async def test_a_dcg_stance_offered_only_its_speakers_sentences_quotes_them_and_is_kept() -> None:
    """Free to write any string, Qwen's crystallizer quoted its own paraphrase ("Saylor argues
    that ...") and the grounded-sides guard dropped every stance. Its schema now offers each
    speaker only the sentences they said in the cluster: every recorded stance quotes one of its
    own speaker's, and no side is dropped for its quote."""
    replies = [(e.request["schema"], json.loads(e.response.text)) for e in load_cassette(HERE / "dcg.jsonl")
               if e.purpose == "crystallize" and e.response is not None]
    stances = [(schema, u) for schema, reply in replies for u in reply["upsert_stances"]]
    assert stances
    for schema, stance in stances:
        offered = {i["properties"]["speaker_id"]["enum"][0]: i["properties"]["quote"]["enum"]
                   for i in schema["properties"]["upsert_stances"]["items"]["anyOf"]}
        assert stance["quote"] in offered[stance["speaker_id"]]
    result = await run_debate(config_for("dcg"), cassette=HERE / "dcg.jsonl")
    assert not [e for e in result.events if isinstance(e, EngineError) and e.purpose == "guard_sides"]
    # the stances that did not reach the graph went with a dispute refused, with the rule that refused it,
    # or were replaced by a later stance of the same speaker on the same question (a new dispute
    # that asks a question already in the graph goes under it)
    asked = {(reply_no, d["id"]): d["question"] for reply_no, (_, reply) in enumerate(replies) for d in reply["new_disputes"]}
    pairs = {(asked.get((n, u["dispute_id"]), u["dispute_id"]), u["speaker_id"])
             for n, (_, reply) in enumerate(replies) for u in reply["upsert_stances"]}
    refused = [e.error for e in result.events if isinstance(e, EngineError) and e.purpose == "crystallize"]
    if len(result.dcg.stances) < len(pairs):
        assert refused and all(w.startswith("refused: dispute") for w in refused), refused
