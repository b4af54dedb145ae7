"""The JSON schema of a card request narrows the reply to the conversation it is about: one
entry per participant, each naming that participant, quoting one sentence that participant
said there, and citing only the corpus chunks shown for them. A server that enforces schemas
(llama.cpp does) then cannot write a side that quotes a corpus chunk or the other speaker, as
Qwen2.5-Coder-1.5B did when the quote was any string. The reply still validates as before, so
a backend that ignores the schema gets the grounded-sides guard's repair instead."""

from __future__ import annotations

import re
from typing import Any

import pytest

from crux_lab.engines.crux_room.schemas import CardPersonaReply, card_reply_for
from crux_lab.engines.guards import quote_found
from crux_lab.models import DebateConfig
from crux_lab.runner import DebateRun
from tests.engines.crux_deck import NAMES, PERSONA_IDS, TOPIC
from tests.engines.scripted import ScriptedBackend
from tests.engines.test_panel import run, sim

pytestmark = pytest.mark.usefixtures("use_test_deck")


def said_in(user: str) -> dict[str, list[str]]:
    """Each speaker's turns in a card prompt's conversation."""
    conversation = user.split("Full conversation:\n", 1)[1].split("\n\nCorpus chunks", 1)[0]
    out: dict[str, list[str]] = {}
    for line in conversation.splitlines():
        if (m := re.match(r"([^:]+): (.*)", line)) is not None:
            out.setdefault(m.group(1), []).append(m.group(2))
    return out


def variants(schema: dict[str, Any]) -> list[dict[str, Any]]:
    personas = schema["properties"]["personas"]
    assert personas["minItems"] == personas["maxItems"] == len(personas["items"]["anyOf"])
    return [v["properties"] for v in personas["items"]["anyOf"]]


async def test_a_card_request_offers_each_participant_only_their_own_sentences() -> None:
    backend = ScriptedBackend(sim())
    r = await run({"n_aspects": 2}, backend=backend)
    cards = [q for q in backend.requests if q.purpose == "card"]
    assert cards and r.result.crux_cards
    for request in cards:
        said = said_in(request.user)
        sides = variants(request.schema_json() or {})
        assert sorted(s["persona_id"]["enum"][0] for s in sides) == sorted(said)
        assert set(said) <= set(NAMES.values())  # turns and sides go by display name, never by id
        for side in sides:
            me = side["persona_id"]["enum"][0]
            assert side["quote"]["enum"] and all(quote_found(s, said[me]) for s in side["quote"]["enum"])
            shown = set(re.findall(r"\[([\w-]+)\] ", request.user.split("Corpus chunks", 1)[1]))
            assert set(side["grounding_quotes"]["items"]["enum"]) <= shown


async def test_the_detector_and_card_prompts_name_speakers_not_ids() -> None:
    """Qwen2.5-Coder-1.5B, shown turns labelled "[scn001-skeptic]", copied the ids into the
    card's sides ("The crux room between scn001-skeptic and scn001-organizer discussed...")."""
    backend = ScriptedBackend(sim())
    r = await run({"n_aspects": 2}, backend=backend)
    asked = [q for q in backend.requests if q.purpose in ("detect_disagreement", "card")]
    assert {q.purpose for q in asked} == {"detect_disagreement", "card"} and r.result.crux_cards
    for request in asked:
        text = re.sub(r"\[[\w-]+\]", "", request.user)  # corpus chunk ids, which a card cites, aside
        assert not [pid for pid in PERSONA_IDS if re.search(rf"\b{pid}\b", text)], request.user
        assert any(f"{name}: " in request.user for name in NAMES.values())


async def test_a_decomposition_request_asks_for_as_many_aspects_as_the_panel_debates() -> None:
    backend = ScriptedBackend(sim())
    await run({"n_aspects": 3}, backend=backend)
    [decompose] = [q for q in backend.requests if q.purpose == "decompose"]
    aspects = (decompose.schema_json() or {})["properties"]["aspects"]
    assert aspects["minItems"] == aspects["maxItems"] == 3


def test_a_side_of_the_narrowed_schema_has_every_field_a_card_side_has() -> None:
    """The side schema is written out by hand (each participant's own id, sentences and chunk
    ids): a field added to a card side must be added there too, or a server that enforces the
    schema would never let the model write it."""
    schema = card_reply_for({"a": ["Gold is money."], "b": ["Bitcoin is money."]}, {}).model_json_schema()
    for side in schema["properties"]["personas"]["items"]["anyOf"]:
        assert set(side["properties"]) == set(CardPersonaReply.model_fields)


def cluster_said(user: str) -> dict[str, list[str]]:
    """Each speaker's lines in a DCG crystallization prompt's cluster, by persona id."""
    cluster = user.split("## Recent Dialogue (cluster)\n", 1)[1].split("\n\n## ", 1)[0]
    out: dict[str, list[str]] = {}
    for line in cluster.splitlines():
        if (m := re.match(r"\[turn \d+\] .*? \(([^)]+)\) [^:]*: (.*)", line)) is not None:
            out.setdefault(m.group(1), []).append(m.group(2))
    return out


async def test_a_dcg_crystallization_lets_a_stance_quote_only_its_speakers_sentences_in_the_cluster() -> None:
    """A stance names a speaker of the cluster and quotes that speaker's words there, written
    before its side; the reply still validates as a crystallization (the guard checks the rest)."""
    backend = ScriptedBackend(sim())
    config = DebateConfig(topic=TOPIC, persona_ids=list(PERSONA_IDS), engine="dcg", max_turns=10)
    r = DebateRun(config, backend=backend)
    async for _ in r.events():
        pass
    crystallizations = [q for q in backend.requests if q.purpose == "crystallize"]
    assert crystallizations and r.result.transcript
    for request in crystallizations:
        said = cluster_said(request.user)
        items = (request.schema_json() or {})["properties"]["upsert_stances"]["items"]["anyOf"]
        assert sorted(i["properties"]["speaker_id"]["enum"][0] for i in items) == sorted(said)
        for item in items:
            props = item["properties"]
            me = props["speaker_id"]["enum"][0]
            assert props["quote"]["enum"] and all(quote_found(s, said[me]) for s in props["quote"]["enum"])
            assert list(props).index("quote") < list(props).index("side") and "quote" in item["required"]
