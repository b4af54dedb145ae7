from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from crux_lab.llm.base import LLMRequest, LLMResponse
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.models import Tier
from crux_lab.persona_tools.build import (
    BuildChunk,
    CausalTriple,
    EmptyCorpus,
    ExtractedBelief,
    ExtractionReply,
    aggregate,
    build_beliefs,
    chunk_corpus,
    load_for_build,
)
from crux_lab.persona_tools.cli import app
from crux_lab.personas.loader import PersonaFileError, load_persona_dir, propositions_for
from crux_lab.personas.models import CorpusChunk
from crux_lab.tokens import count_tokens

SHIPPED = Path(__file__).resolve().parents[2] / "data" / "personas"


def _copy(tmp_path: Path, pid: str = "michael-saylor") -> Path:
    dst = tmp_path / pid
    shutil.copytree(SHIPPED / pid, dst)
    return dst


def _sim(folder: Path, seed: int = 0) -> SimulatedBackend:
    p = load_for_build(folder)
    return SimulatedBackend({p.id: p}, propositions_for([p.id]), seed=seed)


def test_simulated_build_reproduces_curated_graph(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    before = json.loads((folder / "beliefs.json").read_text())
    result = asyncio.run(build_beliefs(folder, _sim(folder)))
    after = json.loads((folder / "beliefs.json").read_text())
    assert result.calls == result.chunks == len(load_for_build(folder).corpus)
    assert {n["id"] for n in after["nodes"]} == {n["id"] for n in before["nodes"]}
    assert {(e["from"], e["to"], e["polarity"]) for e in after["edges"]} == {(e["from"], e["to"], e["polarity"]) for e in before["edges"]}
    old = {n["id"]: set(n["grounding"]) for n in before["nodes"]}
    for n in after["nodes"]:  # grounding merged across chunks: never loses a source
        assert old[n["id"]] <= set(n["grounding"])
    assert result.dangling_stance_links == []
    assert load_persona_dir(folder).beliefs is not None


def test_build_without_ground_truth_graph_uses_stances(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "tenant-organizer")
    (folder / "beliefs.json").unlink()
    result = asyncio.run(build_beliefs(folder, _sim(folder)))
    assert (folder / "beliefs.json").is_file()
    assert len(result.graph.nodes) >= 9 and result.graph.edges
    assert result.dangling_stance_links  # stance links to the old curated ids are reported


def test_replay_backend_rebuilds_identically(tmp_path: Path) -> None:
    replay = pytest.importorskip("crux_lab.llm.replay")
    folder = _copy(tmp_path, "arthur-hayes")
    cassette = tmp_path / "build.jsonl"
    recorder = replay.ReplayBackend(cassette, inner=_sim(folder), mode="record")
    first = asyncio.run(build_beliefs(folder, recorder, concurrency=1))
    assert cassette.is_file() and len(cassette.read_text().splitlines()) == first.calls
    player = replay.ReplayBackend(cassette, mode="replay")
    second = asyncio.run(build_beliefs(folder, player, concurrency=1, write=False))
    strip = lambda g: g.model_dump(exclude={"extracted_at"})  # noqa: E731
    assert strip(second.graph) == strip(first.graph)


class _Exploding:
    """Answers a few calls like the simulator, then fails as an interrupted run would."""

    name = "exploding"

    def __init__(self, inner: SimulatedBackend, after: int, exc: BaseException) -> None:
        self.inner, self.after, self.exc, self.calls = inner, after, exc, 0

    def model_for(self, tier: Tier) -> str:
        return self.inner.model_for(tier)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        if self.calls > self.after:
            raise self.exc
        return await self.inner.generate(request)


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), RuntimeError("connection reset")])
def test_interrupted_build_leaves_old_beliefs_intact(tmp_path: Path, exc: BaseException) -> None:
    folder = _copy(tmp_path)
    before = (folder / "beliefs.json").read_bytes()
    with pytest.raises(type(exc)):
        asyncio.run(build_beliefs(folder, _Exploding(_sim(folder), after=5, exc=exc), concurrency=1))
    assert (folder / "beliefs.json").read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in (SHIPPED / "michael-saylor").iterdir())


def test_empty_corpus_is_a_clear_error(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "corpus.jsonl").write_text("\n")
    with pytest.raises(EmptyCorpus) as err:
        asyncio.run(build_beliefs(folder, _Exploding(_sim(_copy(tmp_path / "x")), 0, RuntimeError())))
    assert isinstance(err.value, PersonaFileError)
    assert "corpus.jsonl" in str(err.value) and "empty" in str(err.value)


def _bc(i: str) -> BuildChunk:
    return BuildChunk(i, "text", (i,), 1)


def test_aggregate_dedupes_merges_grounding_and_uses_density() -> None:
    t = CausalTriple(cause="Fixed supply", effect="Store of value", polarity=1, confidence=0.99)
    t2 = CausalTriple(cause="fixed  supply.", effect="store of value", polarity=1, confidence=0.1)
    g = aggregate("p-x", [(_bc("c1"), ExtractionReply(triples=[t])), (_bc("c2"), ExtractionReply(triples=[t2])),
                          (_bc("c3"), ExtractionReply(beliefs=[ExtractedBelief(concept="Fixed supply", type="factual_claim")]))])
    assert len(g.nodes) == 2 and len(g.edges) == 1
    fixed = next(n for n in g.nodes if "upply" in n.concept)
    assert fixed.grounding == ["c1", "c2", "c3"] and fixed.confidence == pytest.approx(0.78)
    assert g.edges[0].source_chunks == ["c1", "c2"] and g.edges[0].confidence == pytest.approx(0.64)
    assert g.contradictions == []


def test_aggregate_flags_contradictions_and_caps_nodes() -> None:
    pro = CausalTriple(cause="Printing", effect="Bitcoin rises", polarity=1)
    con = CausalTriple(cause="Printing", effect="Bitcoin rises", polarity=-1)
    extra = [(_bc(f"x{i}"), ExtractionReply(beliefs=[ExtractedBelief(concept=f"claim number {i}")])) for i in range(10)]
    g = aggregate("p-x", [(_bc("c1"), ExtractionReply(triples=[pro])), (_bc("c2"), ExtractionReply(triples=[pro])),
                          (_bc("c3"), ExtractionReply(triples=[con])), *extra], max_nodes=5)
    assert len(g.nodes) == 5
    assert g.edges[0].polarity == 1 and len(g.contradictions) == 1
    assert {n.concept for n in g.nodes} >= {"Printing", "Bitcoin rises"}  # best-grounded kept


def test_chunking_splits_long_text_and_keeps_source_ids() -> None:
    long = CorpusChunk(id="c9", text=" ".join(f"Sentence number {i} about liquidity and money." for i in range(120)),
                       source="s", kind="synthetic")
    pieces = chunk_corpus([long])
    assert len(pieces) > 1 and all(p.source_ids == ("c9",) for p in pieces)
    assert all(count_tokens(p.text) <= 290 for p in pieces)
    assert " ".join(p.text for p in pieces) == long.text


runner = CliRunner()


def test_cli_list_show_decks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRUX_LAB_PERSONAS", raising=False)
    res = runner.invoke(app, ["list", "--json"])
    assert res.exit_code == 0 and "michael-saylor" in json.loads(res.stdout)
    res = runner.invoke(app, ["show", "peter-schiff", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["contract"]["name"] == "Peter Schiff"
    res = runner.invoke(app, ["show", "nobody"])
    assert res.exit_code == 2 and "valid ids" in res.output
    res = runner.invoke(app, ["decks", "--json"])
    assert res.exit_code == 0 and {d["id"] for d in json.loads(res.stdout)} >= {"crypto", "ai-policy"}


def test_cli_build(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "peter-schiff")
    res = runner.invoke(app, ["build", str(folder), "--backend", "simulated", "--seed", "3"])
    assert res.exit_code == 0, res.output
    assert "nodes" in res.output and (folder / "beliefs.json").is_file()
    (folder / "corpus.jsonl").write_text("")
    res = runner.invoke(app, ["build", str(folder), "--backend", "simulated"])
    assert res.exit_code == 2 and "corpus.jsonl" in res.output


def test_build_with_anthropic_backend_against_a_fake_api(tmp_path: Path) -> None:
    """The real SDK path (request shape, fast tier, JSON contract, parsing) with a mock transport."""
    httpx2 = pytest.importorskip("httpx2")
    from crux_lab.llm.anthropic_backend import AnthropicBackend
    from crux_lab.llm.pricing import default_model

    seen: list[dict] = []

    async def api(request):  # type: ignore[no-untyped-def]
        body = json.loads(request.content)
        seen.append(body)
        user = body["messages"][0]["content"]
        user = user if isinstance(user, str) else " ".join(part.get("text", "") for part in user)
        passage = user.split('"""')[1].strip()
        first = passage.split(". ")[0].strip().rstrip(".")
        reply = {"triples": [{"cause": first, "effect": "The author's position", "polarity": 1,
                              "cause_type": "factual_claim", "effect_type": "inference", "confidence": 0.97}],
                 "beliefs": [{"concept": "The author's position", "type": "inference"}]}
        return httpx2.Response(200, json={
            "id": "msg", "type": "message", "role": "assistant", "model": body["model"],
            "content": [{"type": "text", "text": json.dumps(reply)}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 300, "output_tokens": 60, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        })

    folder = _copy(tmp_path, "labor-economist")
    backend = AnthropicBackend(api_key="sk-ant-test-FAKE", http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(api)))
    result = asyncio.run(build_beliefs(folder, backend, concurrency=2))
    corpus = load_for_build(folder).corpus
    assert len(seen) == len(corpus) == result.calls and result.failed_chunks == []
    assert {b["model"] for b in seen} == {default_model(Tier.fast)}
    hub = next(n for n in result.graph.nodes if n.concept == "The author's position")
    assert len(hub.grounding) == len(corpus)  # merged across every chunk
    assert all(e.confidence == pytest.approx(0.4) for e in result.graph.edges)  # density, not the stated 0.97
    assert json.loads((folder / "beliefs.json").read_text())["personaId"] == "labor-economist"
    assert result.input_tokens == 300 * len(corpus)


def test_rebuild_reports_a_diff(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    same = asyncio.run(build_beliefs(folder, _sim(folder), write=False))
    assert same.diff is not None and same.diff.summary() == "+0/-0 nodes, +0/-0 edges, 0 edge(s) changed polarity"
    (folder / "beliefs.json").unlink()
    fresh = asyncio.run(build_beliefs(folder, _sim(folder)))
    assert fresh.diff is not None and fresh.diff.added_nodes and not fresh.diff.removed_nodes


def test_cli_schema() -> None:
    res = runner.invoke(app, ["schema", "stances.json"])
    assert res.exit_code == 0
    schema = json.loads(res.stdout)
    assert "personaId" in schema["properties"] and "stances" in schema["required"]
    res = runner.invoke(app, ["schema", "nonsense.json"])
    assert res.exit_code == 2 and "contract.json" in res.output
