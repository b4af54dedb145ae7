"""The poll (crux_lab.engines.poll): every candidate crux put to each persona alone.

Offline and deterministic: the poll runs on a result whose cards and cruxes the test writes
(through :func:`run_poll`, on the simulator or on a backend the test scripts), and a few whole
debates run on the simulator (direct: one call; dcg and panel: small).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from crux_lab import engines
from crux_lab.analysis.crux_text import as_debated, crux_texts
from crux_lab.engines.base import EngineContext
from crux_lab.engines.direct.direct import BaselineParams
from crux_lab.engines.poll import (
    OPEN_NOTE,
    POLL_PROMPT,
    PollReply,
    as_question,
    decisive_line,
    names_in,
    run_poll,
)
from crux_lab.llm.base import Hints, LLMCallFailed, LLMOutputError, LLMRequest, LLMResponse
from crux_lab.llm.ledger import Ledger
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.models import (
    Argument,
    ArgumentGraph,
    Attack,
    AttackTarget,
    CardPosition,
    Crux,
    CruxCard,
    CruxCardPosition,
    CruxSide,
    DebateConfig,
    DebateEvent,
    DebateResult,
    DisagreementType,
    Tier,
)
from crux_lab.personas.loader import load_personas, propositions_for
from crux_lab.personas.prompt import build_system_prompt
from crux_lab.runner import DebateRun, run_debate
from crux_lab.store import connect, ingest, write_run
from crux_lab.tokens import count_tokens

TOPIC = "Is Bitcoin a better long-term store of value than gold?"
IDS = ["michael-saylor", "peter-schiff"]
GOLD = "Gold will outperform Bitcoin in the next major financial crisis."  # Saylor con, Schiff pro
LEDGER = "Bitcoin's ledger has run reliably since 2009 without a successful attack on its protocol."  # both pro
TREASURY = "Companies should hold Bitcoin as a primary treasury reserve asset."  # Saylor pro, Schiff con


def _card(cid: str, question: str, yes: str, no: str) -> CruxCard:
    return CruxCard(
        id=cid, question=question, disagreement_type=DisagreementType.evidence, diagnosis="d",
        personas={
            yes: CruxCardPosition(position=CardPosition.YES, reasoning=f"{yes} said yes in the room"),
            no: CruxCardPosition(position=CardPosition.NO, reasoning=f"{no} said no in the room"),
        },
    )


def _ctx(backend: Any, persona_ids: list[str] = IDS, **params: Any) -> EngineContext:
    config = DebateConfig(topic=TOPIC, persona_ids=persona_ids, engine="direct", backend="simulated", params=params)
    result = DebateResult(run_id="r", config=config, engine="direct", backend="simulated")
    return EngineContext(config=config, backend=Ledger(backend, run_id="r"), personas=load_personas(persona_ids),
                         run_id="r", result=result, params=BaselineParams.model_validate(params))


def _sim() -> SimulatedBackend:
    return SimulatedBackend(load_personas(IDS), propositions_for(IDS), seed=0)


def _poll(ctx: EngineContext) -> list[DebateEvent]:
    async def go() -> list[DebateEvent]:
        return [e async for e in run_poll(ctx, object())]

    return asyncio.run(go())


class Recording:
    """Wraps a backend: records requests; per purpose, a reply function (request, n) -> data
    (validated with the request's validation context and sent back once, as a backend's one
    repair does) or an exception."""

    def __init__(self, inner: Any, replies: dict[str, Callable[[LLMRequest, int], Any]] | None = None) -> None:
        self.inner, self.name, self.replies = inner, "simulated", replies or {}
        self.requests: list[LLMRequest] = []
        self.counts: dict[str, int] = {}

    def model_for(self, tier: Tier) -> str:
        return self.inner.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        fn = self.replies.get(request.purpose)
        if fn is None:
            return await self.inner.generate(request)
        n = self.counts.get(request.purpose, 0)
        self.counts[request.purpose] = n + 1
        data = fn(request, n)
        if isinstance(data, Exception):
            raise data
        assert request.output_schema is not None
        try:
            parsed = request.output_schema.model_validate(data, context=request.validation_context)
            repaired = False
        except ValidationError:
            data = fn(request, n)  # the one repair: asked again
            try:
                parsed = request.output_schema.model_validate(data, context=request.validation_context)
            except ValidationError as exc:
                raise LLMOutputError(request.purpose, str(exc)) from exc
            repaired = True
        return LLMResponse(text=json.dumps(data), parsed=parsed, model="m", backend=self.name, repaired=repaired, retries=int(repaired))


def test_the_poll_replaces_sides_and_keeps_the_debates_as_evidence() -> None:
    ctx = _ctx(_sim())
    # the debate put Saylor on YES and Schiff on NO of "gold will outperform": both the wrong way round
    card = _card("c1", GOLD, yes="michael-saylor", no="peter-schiff")
    ctx.result.crux_cards = [card]
    events = _poll(ctx)
    [card] = ctx.result.crux_cards
    assert card.personas["michael-saylor"].position == CardPosition.NO
    assert card.personas["peter-schiff"].position == CardPosition.YES
    poll = card.poll
    assert poll is not None and poll.status == "split"
    assert [s.persona_id for s in poll.debate_yes_side] == ["michael-saylor"]
    assert poll.debate_yes_side[0].statement == "michael-saylor said yes in the room"  # the debate's words, kept
    saylor = poll.answer_of("michael-saylor")
    assert saylor is not None and saylor.flipped and saylor.debate_side == "YES" and saylor.answer == "NO"
    assert saylor.reason and 0 < saylor.confidence <= 1
    assert saylor.flip_line("Michael Saylor") == "Michael Saylor stated YES in the room, answers NO when asked alone"
    assert ctx.result.poll is not None and ctx.result.poll.flips == 2
    assert any(e.type == "crux_polled" for e in events)
    assert any("stated YES in the room, answers NO when asked alone" in getattr(e, "message", "") for e in events)


def test_the_debates_own_sides_stay_readable_beside_the_polls() -> None:
    """What the run would show with poll=false, on the same debate: the split card on the sides
    the debate gave it, and the candidate the poll made common ground back as a candidate."""
    ctx = _ctx(_sim())
    ctx.result.crux_cards = [_card("c1", GOLD, yes="michael-saylor", no="peter-schiff"),
                             _card("c2", LEDGER, yes="peter-schiff", no="michael-saylor")]
    _poll(ctx)
    shown = {t.item_id: (t.yes, t.no) for t in crux_texts(ctx.result)}
    debated = {t.item_id: (t.text, t.yes, t.no) for t in as_debated(ctx.result)}
    assert shown == {"c1": (("peter-schiff",), ("michael-saylor",))}  # the poll's sides; c2 is common ground
    assert debated["c1"] == (GOLD, ("michael-saylor",), ("peter-schiff",))
    assert debated["c2"] == (as_question(LEDGER, names_in(TOPIC)), ("peter-schiff",), ("michael-saylor",))


def test_a_crux_statement_takes_the_polls_sides() -> None:
    ctx = _ctx(_sim())
    ctx.result.cruxes = [Crux(id="x", statement=TREASURY, source="assumption",
                              yes_side=[CruxSide(persona_id="peter-schiff", statement="Schiff's words")],
                              no_side=[CruxSide(persona_id="michael-saylor", statement="Saylor's words")])]
    _poll(ctx)
    [crux] = ctx.result.cruxes
    assert [s.persona_id for s in crux.yes_side] == ["michael-saylor"]
    assert [s.persona_id for s in crux.no_side] == ["peter-schiff"]
    assert crux.poll is not None and [s.statement for s in crux.poll.debate_yes_side] == ["Schiff's words"]


def test_a_crux_worded_as_a_speakers_stance_is_asked_and_stated_as_its_claim() -> None:
    # "I don't accept that X", with its speaker on YES: the personas are asked X, the debate's
    # sides are read the other way round, and the crux states X with the poll's sides
    denial = f"I don't accept that {TREASURY[0].lower()}{TREASURY[1:]}"
    backend = Recording(_sim())
    ctx = _ctx(backend)
    ctx.result.cruxes = [Crux(id="x", statement=denial, source="assumption",
                              yes_side=[CruxSide(persona_id="peter-schiff", statement=denial)],
                              no_side=[CruxSide(persona_id="michael-saylor", statement="Saylor's words")])]
    ctx.result.fault_lines = [denial]
    _poll(ctx)
    asked = {r.user for r in backend.requests if r.purpose == "poll"}
    assert all("Question: Is it true that companies should hold Bitcoin" in u and "accept" not in u for u in asked)
    [crux] = ctx.result.cruxes
    assert crux.statement == TREASURY and ctx.result.fault_lines == [TREASURY]
    assert [s.persona_id for s in crux.yes_side] == ["michael-saylor"] and [s.persona_id for s in crux.no_side] == ["peter-schiff"]
    assert crux.poll is not None and crux.poll.flips == []  # the debate had them the same way round


def test_a_candidate_every_persona_answers_alike_is_common_ground_not_a_crux() -> None:
    ctx = _ctx(_sim())
    ctx.result.crux_cards = [_card("c1", LEDGER, yes="michael-saylor", no="peter-schiff")]
    ctx.result.cruxes = [Crux(id="crux-c1", statement=LEDGER, source="card")]
    ctx.result.fault_lines = [LEDGER]
    _poll(ctx)
    assert ctx.result.crux_cards == [] and ctx.result.cruxes == [] and ctx.result.fault_lines == []
    [ground] = [g for g in ctx.result.common_ground if g.source == "poll"]
    assert ground.poll is not None and ground.poll.note == "every persona answered YES when asked alone"
    assert ground.agreed_side is not None and ground.agreed_side.value == "YES" and ground.persona_ids == IDS
    # the run's description no longer reads as if the candidate were a crux
    assert ctx.result.regime_description.endswith("split on none of the candidate cruxes; 1 they answered alike is common ground, not cruxes.")


def test_a_candidate_the_poll_does_not_split_is_dropped_and_kept_in_the_summary() -> None:
    unsure = {"poll": lambda r, n: {"answer": "YES" if "Saylor" in r.system[:200] else "UNSURE", "confidence": 0.5, "reason": "r"}}
    ctx = _ctx(Recording(_sim(), unsure))
    ctx.result.crux_cards = [_card("c1", GOLD, yes="michael-saylor", no="peter-schiff")]
    _poll(ctx)
    assert ctx.result.crux_cards == [] and not [g for g in ctx.result.common_ground if g.source == "poll"]
    assert ctx.result.poll is not None and [p.status for p in ctx.result.poll.not_split] == ["unsplit"]


def test_an_open_question_is_ruled_out_without_asking_anyone() -> None:
    """Qwen's cards asked "Which of the two statements aligns more with ...?": a question with no
    yes and no no, which the personas had "split" on when polled yes/no."""
    backend = Recording(_sim())
    ctx = _ctx(backend)
    ctx.result.crux_cards = [_card("c1", "Which of the two statements aligns more with sound money?", yes="peter-schiff", no="michael-saylor"),
                             _card("c2", GOLD, yes="peter-schiff", no="michael-saylor")]
    _poll(ctx)
    assert {r.hints.focus for r in backend.requests if r.purpose == "poll"} == {as_question(GOLD)}  # the open one was asked of no one
    assert [c.id for c in ctx.result.crux_cards] == ["c2"]
    assert ctx.result.poll is not None and [p.note for p in ctx.result.poll.not_split] == [OPEN_NOTE]


def test_the_cli_summary_and_the_report_say_the_same_of_what_the_poll_ruled_out() -> None:
    from crux_lab.analysis.polled import poll_lines
    from crux_lab.viz.transcript import poll_html

    unsure = {"poll": lambda r, n: {"answer": "YES" if "Saylor" in r.system[:200] or "ledger" in r.user else "UNSURE",
                                    "confidence": 0.5, "reason": "r"}}
    ctx = _ctx(Recording(_sim(), unsure))
    ctx.result.crux_cards = [_card("c1", GOLD, yes="michael-saylor", no="peter-schiff"),
                             _card("c2", LEDGER, yes="michael-saylor", no="peter-schiff")]
    _poll(ctx)
    names = {"michael-saylor": "Michael Saylor", "peter-schiff": "Peter Schiff"}
    lines, html = poll_lines(ctx.result, names), poll_html(ctx.result, names).html
    ledger = next(line for line in lines if "Common ground" in line)
    gold = next(line for line in lines if "Not cruxes" in line)
    assert "ledger" in ledger and "every persona answered YES when asked alone" in ledger
    assert "gold will outperform" in gold and "Michael Saylor YES" in gold and "Peter Schiff UNSURE" in gold
    for line in (ledger, gold):
        item = line.split("): ", 1)[1]
        assert html.count(item.replace("'", "&#x27;")) == 1, item
    assert "<b>Common ground</b>" in html and "<b>Not cruxes</b>" in html


def test_the_pivot_test_ranks_decisive_cruxes_first() -> None:
    # decisive for Schiff on the second card only
    def pivot(request: LLMRequest, n: int) -> dict[str, str]:
        treasury = "treasury" in request.user and "Schiff" in request.system[:200]
        return {"answer": "YES" if treasury else "NO", "reason": "one sentence"}

    backend = Recording(_sim(), {"pivot": pivot})
    ctx = _ctx(backend)
    ctx.result.crux_cards = [_card("c1", GOLD, yes="peter-schiff", no="michael-saylor"),
                             _card("c2", TREASURY, yes="michael-saylor", no="peter-schiff")]
    _poll(ctx)
    assert [c.id for c in ctx.result.crux_cards] == ["c2", "c1"]
    first = ctx.result.crux_cards[0].poll
    assert first is not None and first.decisive_for == ["peter-schiff"] and first.not_decisive_for == ["michael-saylor"]
    assert decisive_line(first, {"peter-schiff": "Peter Schiff", "michael-saylor": "Michael Saylor"}) == \
        "decisive for Peter Schiff, not for Michael Saylor"
    pivots = [r for r in backend.requests if r.purpose == "pivot"]
    assert len(pivots) == 4 and all("Suppose it were settled that the answer is" in r.user for r in pivots)
    # the opposite of the persona's own answer, and the topic
    saylor_gold = next(r for r in pivots if "Saylor" in r.system[:200] and "outperform" in r.user)
    assert "You answered NO" in saylor_gold.user and "the answer is YES" in saylor_gold.user and TOPIC in saylor_gold.user


def test_at_most_two_requests_per_persona_per_candidate() -> None:
    backend = Recording(_sim())
    ctx = _ctx(backend)
    ctx.result.crux_cards = [_card("c1", GOLD, yes="peter-schiff", no="michael-saylor"),
                             _card("c2", LEDGER, yes="peter-schiff", no="michael-saylor")]
    _poll(ctx)
    per: dict[tuple[str, str], int] = {}
    for r in backend.requests:
        key = (r.hints.speaker_id or "", r.hints.focus or "")
        per[key] = per.get(key, 0) + 1
    assert per and max(per.values()) <= 2 and len(backend.requests) == 2 + 2 + 2  # split: 2+2, alike: 2


def test_an_answer_neither_yes_no_nor_unsure_after_the_repair_is_unsure_with_the_reply_kept() -> None:
    maybe = {"poll": lambda r, n: {"answer": "MAYBE", "confidence": 0.9, "reason": "it depends"}
             if "Saylor" in r.system[:200] else {"answer": "YES", "confidence": 0.9, "reason": "yes"}}
    backend = Recording(_sim(), maybe)
    ctx = _ctx(backend)
    ctx.result.crux_cards = [_card("c1", GOLD, yes="peter-schiff", no="michael-saylor")]
    events = _poll(ctx)
    assert backend.counts["poll"] == 2  # one request each; Saylor's sent back once inside it
    [dropped] = ctx.result.poll.not_split if ctx.result.poll else []
    saylor = dropped.answer_of("michael-saylor")
    assert saylor is not None and saylor.answer == "UNSURE" and saylor.raw_reply is not None and "MAYBE" in saylor.raw_reply
    assert any("answered neither YES, NO nor UNSURE" in getattr(e, "error", "") for e in events)


def test_a_server_error_leaves_the_candidate_unpolled_with_its_debate_sides() -> None:
    down = {"poll": lambda r, n: LLMCallFailed("poll", "server error", status=500) if "Schiff" in r.system[:200]
            else {"answer": "NO", "confidence": 0.9, "reason": "no"}}
    ctx = _ctx(Recording(_sim(), down))
    ctx.result.crux_cards = [_card("c1", GOLD, yes="peter-schiff", no="michael-saylor"),
                             _card("c2", TREASURY, yes="michael-saylor", no="peter-schiff")]
    events = _poll(ctx)
    assert [c.id for c in ctx.result.crux_cards] == ["c1", "c2"]
    for card in ctx.result.crux_cards:
        assert card.poll is not None and card.poll.status == "unpolled" and "debate's sides stand" in card.poll.note
    assert ctx.result.crux_cards[0].personas["peter-schiff"].position == CardPosition.YES  # the debate's
    assert ctx.result.poll is not None and ctx.result.poll.unpolled == [f"Is it true that {GOLD[0].lower()}{GOLD[1:-1]}?",
                                                                       f"Is it true that {TREASURY[0].lower()}{TREASURY[1:-1]}?"]
    assert sum("left unpolled, with its debate sides" in getattr(e, "error", "") for e in events) == 2


def test_a_run_whose_poll_fails_on_the_server_completes_and_names_what_it_skipped() -> None:
    sim = SimulatedBackend(load_personas(IDS), propositions_for(IDS), seed=0)
    backend = Recording(sim, {"poll": lambda r, n: LLMCallFailed("poll", "server error", status=503)})
    config = DebateConfig(topic=TOPIC, persona_ids=IDS, engine="direct", backend="simulated", params={"informed": True})
    result = asyncio.run(run_debate(config, backend=backend))
    assert result.complete and result.error is None
    assert result.crux_cards and all(c.poll is not None and c.poll.status == "unpolled" for c in result.crux_cards)
    assert result.poll is not None and len(result.poll.unpolled) == len(result.crux_cards)


def test_a_debate_with_one_persona_skips_the_poll_with_a_note() -> None:
    backend = Recording(_sim())
    ctx = _ctx(backend, ["michael-saylor"])
    ctx.result.crux_cards = [_card("c1", GOLD, yes="michael-saylor", no="michael-saylor")]
    events = _poll(ctx)
    assert backend.requests == []
    assert ctx.result.poll is not None and ctx.result.poll.status == "skipped" and "one persona" in ctx.result.poll.note
    assert any("poll skipped" in getattr(e, "message", "") for e in events)


def test_poll_max_keeps_the_strongest_and_warns_about_the_rest() -> None:
    ctx = _ctx(_sim(), poll_max=1)
    split = _card("c2", TREASURY, yes="michael-saylor", no="peter-schiff")
    one_sided = CruxCard(id="c1", question=GOLD, disagreement_type=DisagreementType.evidence, diagnosis="d",
                         personas={"peter-schiff": CruxCardPosition(position=CardPosition.YES, reasoning="r")})
    ctx.result.crux_cards = [one_sided, split]
    events = _poll(ctx)
    assert ctx.result.poll is not None and ctx.result.poll.polled == 1 and len(ctx.result.poll.over_limit) == 1
    assert split.poll is not None and one_sided.poll is None  # the split the debate stated is the stronger
    assert any("poll_max=1: 1 of 2 candidate cruxes left unpolled" in getattr(e, "error", "") for e in events)


def test_poll_false_leaves_the_result_as_the_engine_made_it() -> None:
    config = DebateConfig(topic=TOPIC, persona_ids=IDS, engine="direct", backend="simulated",
                          params={"informed": True, "poll": False})
    result = asyncio.run(run_debate(config))
    posted = [e.card for e in result.events if e.type == "crux_card_posted"]  # type: ignore[attr-defined]
    assert result.complete and result.poll is None and posted
    assert not [c for c in result.llm_calls if c.purpose in ("poll", "pivot")]
    assert [c.model_dump(exclude={"timestamp"}) for c in result.crux_cards] == [c.model_dump(exclude={"timestamp"}) for c in posted]
    assert all(c.poll is None for c in result.cruxes)
    on = asyncio.run(run_debate(config.model_copy(update={"params": {"informed": True}})))
    assert on.poll is not None and [c for c in on.llm_calls if c.purpose == "poll"]


@pytest.fixture(scope="module")
def dialogue_requests() -> tuple[DebateResult, list[LLMRequest]]:
    backend = Recording(SimulatedBackend(load_personas(IDS), propositions_for(IDS), seed=0))
    config = DebateConfig(topic=TOPIC, persona_ids=IDS, engine="dialogue", backend="simulated", max_turns=16)
    run = DebateRun(config, backend=backend)

    async def go() -> None:
        async for _ in run.events():
            pass

    asyncio.run(go())
    return run.result, backend.requests


def test_a_poll_request_holds_the_personas_own_system_prompt_and_the_question_alone(
    dialogue_requests: tuple[DebateResult, list[LLMRequest]],
) -> None:
    result, requests = dialogue_requests
    polls = [r for r in requests if r.purpose == "poll"]
    assert polls and result.poll is not None and result.poll.polled
    turns = {r.hints.speaker_id: r.system for r in requests if r.purpose == "dialogue_turn"}
    names = {pid: p.name for pid, p in load_personas(IDS).items()}
    sentences = [s for t in result.transcript for s in re.split(r"(?<=[.!?])\s+", t.dialogue) if len(s.split()) >= 6]
    for r in polls:
        me = r.hints.speaker_id
        assert me in turns and r.system == turns[me]  # the same bytes as its debate turns
        assert r.cache_system
        assert not any(s in r.user for s in sentences)  # no transcript
        assert not any(name in r.user for pid, name in names.items() if pid != me)  # no other persona
        assert not r.hints.turns
        assert count_tokens(r.user) <= 300  # short, beyond the cached system prompt
    # the persona's prompt as the engine builds it
    assert turns["michael-saylor"] == build_system_prompt(load_personas(IDS)["michael-saylor"], propositions=propositions_for(IDS))


def test_the_poll_asks_hold_or_reject_and_reads_them_as_yes_and_no() -> None:
    # the words a server that enforces the schema offers, and what the poll makes of them
    asked = {"poll": lambda r, n: {"answer": "REJECT" if "Saylor" in r.system[:200] else "HOLD", "reason": "r", "confidence": 0.8}}
    backend = Recording(_sim(), asked)
    ctx = _ctx(backend)
    ctx.result.crux_cards = [_card("c1", GOLD, yes="michael-saylor", no="peter-schiff")]
    _poll(ctx)
    [request] = [r for r in backend.requests if r.purpose == "poll"][:1]
    assert "Do you hold the view it asks about, or reject it?" in request.user
    assert request.schema_json()["properties"]["answer"]["enum"] == ["HOLD", "REJECT", "UNSURE"]
    [card] = ctx.result.crux_cards
    assert card.poll is not None and card.poll.answer_of("michael-saylor").answer == "NO"
    assert card.personas["peter-schiff"].position == CardPosition.YES


def test_the_poll_prompt_stays_short() -> None:
    long_question = "Is it true that " + " ".join(["gold"] * 60) + "?"
    assert count_tokens(POLL_PROMPT.format(question=long_question)) <= 300


def test_crux_polls_rows_after_ingest(tmp_path: Path) -> None:
    ctx = _ctx(_sim())
    ctx.result.crux_cards = [_card("c1", GOLD, yes="michael-saylor", no="peter-schiff"),
                             _card("c2", LEDGER, yes="michael-saylor", no="peter-schiff")]
    _poll(ctx)
    ctx.result.run_id = ctx.result.config.run_id()
    run_dir = write_run(ctx.result, tmp_path / "runs")
    db = tmp_path / "x.duckdb"
    ingest([run_dir], db)
    con = connect(db, read_only=True)
    try:
        rows = con.execute(
            "SELECT crux_id, persona_id, answer, status, debate_side, flipped, pivot_answer, confidence > 0, reason <> '' "
            "FROM crux_polls ORDER BY crux_id, persona_id").fetchall()
    finally:
        con.close()
    assert rows == [
        ("c1", "michael-saylor", "NO", "split", "YES", True, rows[0][6], True, True),
        ("c1", "peter-schiff", "YES", "split", "NO", True, rows[1][6], True, True),
        ("c2", "michael-saylor", "YES", "unanimous", "YES", False, None, True, True),
        ("c2", "peter-schiff", "YES", "unanimous", "NO", True, None, True, True),
    ]
    assert rows[0][6] in ("YES", "NO", "PARTLY") and rows[1][6] in ("YES", "NO", "PARTLY")


def test_the_simulator_answers_from_the_requests_text_alone() -> None:
    sim = _sim()
    personas = load_personas(IDS)
    props = propositions_for(IDS)

    def ask(pid: str, question: str) -> str:
        system = build_system_prompt(personas[pid], propositions=props)
        request = LLMRequest(purpose="poll", system=system, user=POLL_PROMPT.format(question=question),
                             hints=Hints(), cache_system=True)  # no speaker in the hints: read from the prompt
        request = request.model_copy(update={"output_schema": PollReply})
        reply = asyncio.run(sim.generate(request)).parsed
        assert isinstance(reply, PollReply) and reply.answer in ("HOLD", "REJECT", "UNSURE")  # the poll's own words
        return str(reply.said)

    gold = f"Is it true that {GOLD[0].lower()}{GOLD[1:-1]}?"
    assert (ask("michael-saylor", gold), ask("peter-schiff", gold)) == ("NO", "YES")
    negated = f"Is it true that it is not the case that {GOLD[0].lower()}{GOLD[1:-1]}?"
    assert (ask("michael-saylor", negated), ask("peter-schiff", negated)) == ("YES", "NO")
    assert ask("michael-saylor", "Is it true that tulips bloom in April in Holland?") == "UNSURE"


def test_where_there_is_an_argument_graph_its_pivots_are_compared_with_the_personas_answers() -> None:
    def pivot(request: LLMRequest, n: int) -> dict[str, str]:  # Saylor says decisive, Schiff not
        return {"answer": "YES" if "Saylor" in request.system[:200] else "NO", "reason": "one sentence"}

    ctx = _ctx(Recording(_sim(), {"pivot": pivot}))
    target = AttackTarget(arg_id="b")
    ctx.result.graph = ArgumentGraph(
        arguments=[Argument(id="a", speaker_id="peter-schiff", claim=GOLD),
                   Argument(id="b", speaker_id="michael-saylor", claim=f"I don't accept that {GOLD[0].lower()}{GOLD[1:]}")],
        attacks=[Attack(id="x", from_arg_id="a", to_arg_id="b", type="rebut", target=target),
                 Attack(id="y", from_arg_id="b", to_arg_id="a", type="rebut", target=target.model_copy(update={"arg_id": "a"}))],
    )
    ctx.result.cruxes = [Crux(id="k", statement=GOLD, source="assumption", argument_ids=["a", "b"],
                              yes_side=[CruxSide(persona_id="peter-schiff")], no_side=[CruxSide(persona_id="michael-saylor")])]
    _poll(ctx)
    # the graph: deciding either argument decides both personas' claims; Saylor agrees, Schiff does not
    assert ctx.result.poll is not None and ctx.result.poll.graph_pivot_pairs == 2
    assert ctx.result.poll.graph_pivot_agreement == 0.5


POLLED_BY_DEFAULT = [n for n in engines.registered() if getattr(engines.ENGINES.get(n).params_model(), "poll", False)]


@pytest.mark.parametrize("engine", POLLED_BY_DEFAULT)
def test_no_engine_shows_a_crux_its_own_poll_did_not_split(engine: str) -> None:
    result = asyncio.run(run_debate(DebateConfig(topic=TOPIC, persona_ids=IDS, engine=engine, seed=0, max_turns=8)))
    assert result.poll is not None and result.poll.status == "done"
    over = set(result.poll.over_limit)
    for item, poll in [*((c.statement, c.poll) for c in result.cruxes), *((c.question, c.poll) for c in result.crux_cards)]:
        asked = poll is not None and (poll.status == "split" or poll.status == "unpolled" and poll.note)
        assert asked or any(item in q or q.endswith(f"{item[1:]}?") for q in over), (engine, item, poll)


class _EndsEarly:
    """An engine whose guards end the debate after it has made one card."""

    name = "direct"

    async def run(self, ctx: EngineContext) -> Any:
        from crux_lab.engines.guards import TooWeakToPlay

        ctx.result.crux_cards = [_card("c1", GOLD, yes="michael-saylor", no="peter-schiff")]
        raise TooWeakToPlay("debate ended early: the echo guard kept out 4 persona turns in a row (a test)")
        yield  # an async generator, as engines are


def test_a_debate_the_guards_end_early_still_polls_its_candidates() -> None:
    run = DebateRun(DebateConfig(topic=TOPIC, persona_ids=IDS, engine="direct", seed=0))
    run.engine = _EndsEarly()  # type: ignore[assignment]

    async def go() -> list[DebateEvent]:
        return [e async for e in run.events()]

    events = asyncio.run(go())
    result = run.result
    assert not result.complete and result.error and result.error.startswith("debate ended early")
    [card] = result.crux_cards
    assert card.poll is not None and card.poll.status == "split"  # asked, and the poll's sides
    assert card.personas["michael-saylor"].position == CardPosition.NO
    kinds = [e.type for e in events]
    assert kinds.index("engine_error") < kinds.index("crux_polled")
