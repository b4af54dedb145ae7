"""crux-lab arena: pairing, Bradley-Terry with bootstrap intervals, the judge in both orders,
judgements in DuckDB, and clear messages when there is nothing to compare."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from crux_lab.arena.cli import plan
from crux_lab.arena.core import (
    ArenaError,
    Card,
    CardSet,
    Judgement,
    JudgeReply,
    bradley_terry,
    bt_with_bootstrap,
    judge_pair,
    pair_runs,
)
from crux_lab.cli import app
from crux_lab.eval.compare import run_comparison
from crux_lab.llm.base import LLMOutputError, LLMRequest, LLMResponse

HOUSING = ["yimby-economist", "neighborhood-preservationist", "tenant-organizer"]
TOPIC = "Will building more housing make the city affordable?"


def cs(engine: str, seed: int, topic: str = "t", personas: tuple[str, ...] = ("a", "b")) -> CardSet:
    return CardSet(f"{engine}-{seed}-{topic}", engine, topic, personas, seed, (Card("Q?"),))


def test_runs_pair_by_topic_personas_and_seed() -> None:
    a = [cs("x", 0), cs("x", 1), cs("x", 5, "other")]
    b = [cs("y", 1), cs("y", 2), cs("y", 0, "t", ("a", "c"))]
    pairs = [(p.run_id, q.run_id) for p, q in pair_runs(a, b)]
    assert pairs == [("x-1-t", "y-1-t"), ("x-0-t", "y-2-t")]


def test_bradley_terry_orders_by_wins_and_ties_even_out() -> None:
    s = bradley_terry([("a", "b", 1.0), ("a", "b", 1.0), ("b", "c", 1.0), ("a", "c", 0.5)])
    assert s["a"] > s["b"] and abs(sum(s.values())) < 1e-3
    assert bradley_terry([("a", "b", 0.5), ("b", "a", 0.5)]) == {"a": 0.0, "b": 0.0}


def test_bootstrap_interval_contains_the_score_and_keeps_orders_together() -> None:
    js = []
    for i in range(6):
        for order in ("ab", "ba"):
            winner = "x" if i < 5 else "tie"
            js.append(Judgement("t", "x", "y", f"rx{i}", f"ry{i}", order, "first", winner, "", "sim"))  # type: ignore[arg-type]
    scores = bt_with_bootstrap(js, samples=200)
    assert scores.n_pairs == 6 and scores.n_judgements == 12
    for e in ("x", "y"):
        assert scores.low[e] <= scores.score[e] <= scores.high[e]
    assert scores.score["x"] > 0 > scores.score["y"] and scores.record["x"] == {"wins": 10, "ties": 2, "losses": 0}


def test_plan_names_what_to_run() -> None:
    with pytest.raises(ArenaError, match=r"no stored runs for y.*--engines x,y --topic 't' --personas a,b"):
        plan({"x": [cs("x", 0)], "y": []}, ["x", "y"])
    with pytest.raises(ArenaError, match=r"no runs on a shared topic.*crux-lab debate --engine y --topic 't'"):
        plan({"x": [cs("x", 0)], "y": [cs("y", 0, "other")]}, ["x", "y"])


def test_arena_judges_both_orders_prints_scores_and_stores_judgements(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "a.duckdb"
    for seed in (0, 1):
        # panel writes cards on the simulator, the one-call baseline none: the judge has a set to read
        run_comparison(TOPIC, HOUSING, ["direct", "panel"], seed=seed, db_path=db, runs_dir=tmp_path / "runs")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    out = CliRunner().invoke(app, ["arena", "direct", "panel", "--db", str(db), "--backend", "simulated", "--bootstrap", "50"])
    assert out.exit_code == 0, out.output
    assert "Bradley-Terry" in out.output and "direct" in out.output and "panel" in out.output
    assert "judge: the simulator" in out.output and "planted ground truth" in out.output
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT judge_order, winner, reason FROM arena_judgements ORDER BY run_a, judge_order").fetchall()
    con.close()
    assert [r[0] for r in rows] == ["ab", "ba", "ab", "ba"]
    assert all(r[1] in ("direct", "panel", "tie") and r[2].startswith("Simulated judge") for r in rows)
    # The simulated judge is symmetric: both orders of a pair agree.
    assert rows[0][1] == rows[1][1] and rows[2][1] == rows[3][1]

    # The rubric judge also rates each run's falsifiers when asked (on the simulator: the heuristic, said so).
    again = CliRunner().invoke(app, ["arena", "direct", "panel", "--db", str(db), "--backend", "simulated", "--bootstrap", "0", "--falsifiers"])
    assert again.exit_code == 0, again.output
    con = duckdb.connect(str(db), read_only=True)
    judged = con.execute("SELECT count(*), min(detail) FROM metrics WHERE name = 'falsifier_concreteness_judged'").fetchone()
    # the honest simulated analyst writes cards (and so falsifiers) only where the contracts state a split
    with_falsifiers = con.execute("SELECT count(DISTINCT run_id) FROM crux_card_positions WHERE falsifier IS NOT NULL AND falsifier <> ''").fetchone()
    n_judgements = con.execute("SELECT count(*) FROM arena_judgements").fetchone()
    con.close()
    assert judged is not None and with_falsifiers is not None and judged[0] == with_falsifiers[0]
    assert judged[0] == 0 or "heuristic" in judged[1]
    assert n_judgements == (4,)  # re-judging the same pairs replaces, never duplicates

    missing = CliRunner().invoke(app, ["arena", "direct", "crux_rooms", "--db", str(db), "--backend", "simulated"])
    assert missing.exit_code == 2 and "no stored runs for crux_rooms" in missing.output


class _OneBadVerdict:
    """A judge whose first verdict stays off-schema after the repair; the second is valid."""

    name = "fake"

    def __init__(self) -> None:
        self.calls = 0

    def model_for(self, tier: object) -> str:
        return "judge-model"

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        if self.calls == 1:
            raise LLMOutputError("arena_judge", "reply is not valid JSON for JudgeReply")
        reply = JudgeReply(verdict="first", reason="The first set names a premise under the topic.")
        return LLMResponse(text=reply.model_dump_json(), parsed=reply, model="judge-model", backend="fake")


async def test_an_off_schema_verdict_is_left_out_with_its_reason_and_the_other_order_kept() -> None:
    skipped: list[str] = []
    judgements = await judge_pair(_OneBadVerdict(), cs("x", 0), cs("y", 0), skipped=skipped)
    assert [(j.order, j.winner) for j in judgements] == [("ba", "y")]
    assert len(skipped) == 1 and skipped[0].startswith("x vs y") and "after one repair" in skipped[0]


async def test_two_empty_card_sets_tie_without_a_call_and_one_empty_set_is_still_judged() -> None:
    judge = _OneBadVerdict()
    empty_x, empty_y = (CardSet(f"{e}-0", e, "t", ("a", "b"), 0, ()) for e in ("x", "y"))
    ties = await judge_pair(judge, empty_x, empty_y)
    assert judge.calls == 0
    assert [(j.order, j.verdict, j.winner) for j in ties] == [("ab", "tie", "tie"), ("ba", "tie", "tie")]
    assert all("without asking the judge" in j.reason for j in ties)
    judged = await judge_pair(judge, empty_x, cs("y", 0), skipped=[])
    assert judge.calls == 2 and [j.order for j in judged] == ["ba"]
