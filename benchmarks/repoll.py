"""The poll asked again, in other wordings, on the candidates of finished debates.

A poll wording is judged by the sides it gives the engines' own candidates, not the key's
clean questions (``poll_fidelity.py``): a debate's candidates are worded by the model, and a
wording that reads planted questions well may not read them. This benchmark takes the
candidates every finished run of a recovery table put to its personas (the run folders'
``result.json``, poll records included), asks each persona again in each wording named by
``--order``, and scores every wording on the same candidates: how many match a contested
planted proposition by text, and of those how many have their sides right (the recovery
scorer's rule, :func:`~crux_lab.analysis.recovery.sides_agree`), beside the debate's own
sides and the sides the run's poll gave them.

Wordings (``ORDERS``):

- ``poll``: the poll as crux_lab sends it (``POLL_PROMPT``), asked again: the run-to-run noise
  of the stored poll.
- ``either-or``: the question's two answers written out as claims, the claim and "It is not
  true that" the claim, and the persona picks the one that is its view (1, 2 or UNSURE): two
  statements to choose between, where a yes/no question draws a small model's yes. Which comes
  first is drawn for each persona and question (a stable hash), so a model that always picks
  the first splits the personas at random; the pick-first share is reported. It needs the
  claim, so it applies to the poll's "Is it true that X?" questions; any other question is
  asked the ``poll`` way, as the poll asks it (its ``poll`` answers are used, not asked twice).
  No other persona's words are shown: the poll's rule.

Every persona is asked with the crux engines' system prompt (its stances quoted), which the
worldview step and the one-call baselines send; panel's poll sends panel's own.

    .venv/bin/python benchmarks/repoll.py --runs benchmarks/results/recovery-qwen-dev/runs \\
        --base-url http://127.0.0.1:8080/v1 --model qwen2.5-1.5b --order poll,either-or --claims-only \\
        --out benchmarks/poll_fidelity_items/repoll-qwen-dev.json
    .venv/bin/python benchmarks/repoll.py --table benchmarks/poll_fidelity_items/repoll-qwen-dev.json   # rescore, no model

The either-or wording was tried here and not put into the poll: on dev (Qwen2.5-1.5B, the 16
"Is it true that" candidates of the dev table) its picks followed the order shown (the first
of the two picked 78% of the time), so the splits it made were the order's, not the
personas' (benchmarks/README.md).

The output holds every candidate with its debate sides and every answer with its reason, so
the table is rebuilt from it without a model (``--table``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pydantic import BaseModel, Field  # noqa: E402

from crux_lab.analysis.polled import polls_of  # noqa: E402
from crux_lab.analysis.recovery import match_texts, sides_agree  # noqa: E402
from crux_lab.analysis.scenarios import load_scenarios, use_library  # noqa: E402
from crux_lab.engines.base import shaped  # noqa: E402
from crux_lab.engines.poll import POLL_PROMPT, POLL_SCHEMA, PollReply, answer_enum, is_open  # noqa: E402
from crux_lab.llm import make_backend  # noqa: E402
from crux_lab.llm.base import LLMError, LLMRequest, allocation_for  # noqa: E402
from crux_lab.llm.purposes import Purpose  # noqa: E402
from crux_lab.llm.registry import options_for_library  # noqa: E402
from crux_lab.models import DebateResult  # noqa: E402
from crux_lab.personas.loader import load_personas, propositions_for  # noqa: E402
from crux_lab.personas.prompt import build_system_prompt  # noqa: E402

EITHER_PROMPT = """One question, put to you alone. Answer as yourself, from your own views.

Question: {question}

Which of these two is your view?
1. {first}
2. {second}

Reply in JSON: "answer": 1 or 2, or UNSURE; "reason": one sentence, in your own voice; "confidence": how sure you are, 0 to 1."""


class PickReply(BaseModel):
    answer: str = Field(description="1, 2 or UNSURE")
    reason: str = ""
    confidence: float = Field(0.5, ge=0.0, le=1.0)

    @property
    def picked(self) -> str | None:
        """"1" or "2", or None.

        >>> PickReply(answer="2").picked, PickReply(answer=" 1.").picked, PickReply(answer="UNSURE").picked
        ('2', '1', None)
        """
        m = re.search(r"\b([12])\b", self.answer)
        return None if m is None else m.group(1)


# What the server is shown, as the poll shows its own: the answer from a closed list.
PICK_SCHEMA = shaped(PickReply, answer_enum(("1", "2", "UNSURE")))


def claim_of(question: str) -> tuple[str, str] | None:
    """A question the poll made from a statement ("Is it true that X?") as its two answers, the
    claim and its denial; None for any other question.

    >>> claim_of("Is it true that the old mains fail quickly?")
    ('The old mains fail quickly.', 'It is not true that the old mains fail quickly.')
    >>> claim_of("Do rents fall?") is None
    True
    """
    m = re.match(r"is it true that (.+?)\?$", question.strip(), re.I)
    if m is None:
        return None
    body = m.group(1)
    return f"{body[:1].upper()}{body[1:]}.", f"It is not true that {body}."


def claim_first(question: str, persona_id: str) -> bool:
    """Whether the claim comes first for this persona: drawn per persona and question by a
    stable hash, so a model that always picks the first splits the personas at random."""
    return zlib.crc32(f"{question}|{persona_id}".encode()) % 2 == 0


ORDERS = ("poll", "either-or")


def candidates(result: DebateResult) -> list[dict[str, Any]]:
    """Every candidate the run's poll asked (open questions left out): its question, the
    debate's sides with their words, and the poll's answers."""
    out = []
    for p in polls_of(result):
        if not p.answers or is_open(p.question):
            continue
        out.append({
            "item_id": p.item_id, "question": p.question,
            "debate_yes": [[s.persona_id, s.statement] for s in p.debate_yes_side],
            "debate_no": [[s.persona_id, s.statement] for s in p.debate_no_side],
            "poll": {a.persona_id: a.answer for a in p.answers},
            "answers": {},
        })
    return out


async def _generate(backend: Any, system: str, user: str, schema: type[BaseModel]) -> tuple[Any, str, int, int]:
    alloc = allocation_for(Purpose.poll)
    request = LLMRequest(purpose=Purpose.poll, system=system, user=user, tier=alloc.tier, temperature=alloc.temperature,
                         max_tokens=alloc.max_tokens, output_schema=schema, cache_system=True)
    try:
        response = await backend.generate(request)
    except LLMError as exc:
        return None, f"(failed) {exc}"[:200], 0, 0
    return response.parsed, response.text, response.usage.input_tokens, response.usage.output_tokens


async def ask(backend: Any, system: str, cand: dict[str, Any], order: str, pid: str) -> dict[str, Any]:
    """One persona's answer to one candidate in one wording, as YES, NO or UNSURE."""
    answers = claim_of(cand["question"])
    if order == "either-or" and answers is not None:
        yes_first = claim_first(cand["question"], pid)
        first, second = answers if yes_first else answers[::-1]
        reply, text, tin, tout = await _generate(backend, system, EITHER_PROMPT.format(question=cand["question"], first=first, second=second), PICK_SCHEMA)
        pick = reply.picked if isinstance(reply, PickReply) else None
        answer = {"1": "YES" if yes_first else "NO", "2": "NO" if yes_first else "YES"}.get(pick or "", "UNSURE")
        return {"answer": answer, "picked": pick, "yes_first": yes_first, "reason": str(getattr(reply, "reason", "") or text)[:300],
                "tokens_in": tin, "tokens_out": tout}
    reply, text, tin, tout = await _generate(backend, system, POLL_PROMPT.format(question=cand["question"]), POLL_SCHEMA)
    said = reply.said if isinstance(reply, PollReply) else None
    return {"answer": said or "UNSURE", "reason": str(getattr(reply, "reason", "") or text)[:300], "tokens_in": tin, "tokens_out": tout}


async def repoll(args: argparse.Namespace, runs: list[Path], scenarios: dict[str, Any], folder: Path, orders: list[str],
                 done: list[dict[str, Any]], save: Any) -> list[dict[str, Any]]:
    """Every candidate of every run asked in each wording; ``done`` (a file this benchmark
    wrote before) is kept and not asked again, and ``save`` is called after each candidate."""
    models = {"strong": args.model, "fast": args.model} if args.model else None
    out = list(done)
    seen = {(r["run"], r["item_id"]) for r in done}
    for path in runs:
        result = DebateResult.model_validate_json(path.read_text(encoding="utf-8"))
        sc = scenarios.get(result.config.topic)
        if sc is None:
            print(f"  skipped {path}: its topic is not a scenario of {folder}", flush=True)
            continue
        with use_library(folder):
            personas = load_personas(result.config.persona_ids)
            deck = propositions_for(result.config.persona_ids)
        backend = make_backend(args.backend, options=options_for_library(args.backend, personas, deck), base_url=args.base_url, models=models)
        systems = {pid: build_system_prompt(personas[pid], propositions=deck) for pid in result.config.persona_ids}
        for cand in candidates(result):
            if (result.run_id, cand["item_id"]) in seen or (args.claims_only and claim_of(cand["question"]) is None):
                continue
            for order in orders:
                if order == "either-or" and "poll" in cand["answers"] and claim_of(cand["question"]) is None:
                    cand["answers"][order] = cand["answers"]["poll"]  # asked the poll way: the same request
                    continue
                cand["answers"][order] = {}
                for pid in result.config.persona_ids:
                    cand["answers"][order][pid] = await ask(backend, systems[pid], cand, order, pid)
            print(f"  {sc.id} {result.config.engine}: {cand['question'][:80]} | " + " | ".join(
                f"{o}: " + " ".join(a["answer"][0] for a in cand["answers"][o].values()) for o in orders), flush=True)
            out.append({"scenario": sc.id, "arm": result.config.engine, "run": result.run_id, "personas": result.config.persona_ids, **cand})
            save(out)
    return out


def _sides(answers: dict[str, str]) -> tuple[list[str], list[str]]:
    return [p for p, a in answers.items() if a == "YES"], [p for p, a in answers.items() if a == "NO"]


def table(rows: list[dict[str, Any]], folder: Path, orders: list[str]) -> list[dict[str, Any]]:
    """Per arm and in all: candidates, those matched to a contested planted proposition by text,
    and of those the sides right on the debate's sides, the run's poll and each wording; the
    share of candidates each wording made unanimous; its YES share; for ``either-or`` the share
    of picks that were the first answer shown."""
    scenarios = {s.id: s for s in load_scenarios(folder)}
    by_scen: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_scen.setdefault(r["scenario"], []).append(r)
    for sid, rs in by_scen.items():
        for r, m in zip(rs, match_texts([r["question"] for r in rs], scenarios[sid]), strict=True):
            prop = next((p for p in scenarios[sid].propositions if p.id == m.proposition_id), None)
            r["_stances"] = prop.stances if prop is not None and prop.contested else None
    out = []
    for arm in [*sorted({r["arm"] for r in rows}), "all"]:
        rs = [r for r in rows if arm in ("all", r["arm"])]
        matched = [r for r in rs if r["_stances"] is not None]
        row: dict[str, Any] = {"arm": arm, "candidates": len(rs), "two_sided": sum(bool(r["debate_yes"] and r["debate_no"]) for r in rs),
                               "matched": len(matched), "claims": sum(claim_of(r["question"]) is not None for r in rs)}
        row["debate_right"] = sum(sides_agree([p for p, _ in r["debate_yes"]], [p for p, _ in r["debate_no"]], r["_stances"]) for r in matched)
        row["run_poll_right"] = sum(sides_agree(*_sides(r["poll"]), r["_stances"]) for r in matched)
        for o in orders:
            said = [{p: a["answer"] for p, a in r["answers"][o].items()} for r in rs]
            row[f"{o}_right"] = sum(sides_agree(*_sides(s), r["_stances"]) for r, s in zip(rs, said, strict=True) if r["_stances"] is not None)
            row[f"{o}_unanimous"] = sum(len(set(s.values()) - {"UNSURE"}) == 1 and "UNSURE" not in s.values() for s in said)
            answers = Counter(a for s in said for a in s.values())
            row[f"{o}_yes_share"] = round(answers["YES"] / max(1, sum(answers.values())), 2)
            picks = [a for r in rs for a in r["answers"][o].values() if a.get("picked") in ("1", "2")]
            if picks:
                row[f"{o}_first_share"] = round(sum(a["picked"] == "1" for a in picks) / len(picks), 2)
            row[f"{o}_tokens"] = sum(a.get("tokens_in", 0) + a.get("tokens_out", 0) for r in rs for a in r["answers"][o].values())
        out.append(row)
    return out


def markdown(rows: list[dict[str, Any]], orders: list[str]) -> str:
    head = ["arm", "candidates", "two-sided", "\"Is it true that\" questions", "matched (contested)", "sides right: debate", "the run's poll"]
    head += [f"{o}: sides right" for o in orders] + [f"{o}: unanimous" for o in orders] + [f"{o}: YES share" for o in orders]
    head += [f"{o}: first picked" for o in orders if any(f"{o}_first_share" in r for r in rows)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [f"`{r['arm']}`" if r["arm"] != "all" else "**all**", r["candidates"], r["two_sided"], r["claims"], r["matched"], r["debate_right"], r["run_poll_right"]]
        cells += [r[f"{o}_right"] for o in orders] + [r[f"{o}_unanimous"] for o in orders] + [r[f"{o}_yes_share"] for o in orders]
        cells += [r[f"{o}_first_share"] for o in orders if f"{o}_first_share" in r]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, nargs="*", default=[], help="run folders, or folders of run folders")
    ap.add_argument("--set", choices=("dev", "test"), default="dev")
    ap.add_argument("--backend", default="openai")
    ap.add_argument("--base-url")
    ap.add_argument("--model")
    ap.add_argument("--order", default="poll,either-or", help="comma-separated: " + ", ".join(ORDERS))
    ap.add_argument("--engines", default="", help="only runs of these engines (comma-separated)")
    ap.add_argument("--out", type=Path, help="the JSON file to write; a file from a stopped run is resumed")
    ap.add_argument("--claims-only", action="store_true", help='only the candidates asked "Is it true that X?", where either-or applies')
    ap.add_argument("--table", type=Path, help="rebuild the table from a file this benchmark wrote, without a model")
    args = ap.parse_args()
    folder = ROOT / "benchmarks/scenarios" / args.set
    if args.table:
        data = json.loads(args.table.read_text(encoding="utf-8"))
        print(markdown(table(data["rows"], ROOT / data["scenarios"], data["orders"]), data["orders"]))
        return 0
    orders = [o.strip() for o in args.order.split(",") if o.strip()]
    if bad := [o for o in orders if o not in ORDERS]:
        ap.error(f"--order: unknown wording {', '.join(bad)}; choose from {', '.join(ORDERS)}")
    runs = sorted(p for r in args.runs for p in ([r / "result.json"] if (r / "result.json").exists() else r.glob("*/result.json")))
    engines = {e.strip() for e in args.engines.split(",") if e.strip()}
    if engines:
        runs = [p for p in runs if json.loads(p.read_text(encoding="utf-8"))["config"]["engine"] in engines]
    if not runs:
        ap.error("--runs: no result.json found in the folders given; name run folders or a folder of them")
    scenarios = {s.topic: s for s in load_scenarios(folder)}
    target = args.out or ROOT / "benchmarks/results/repoll.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    done: list[dict[str, Any]] = []
    before: dict[str, Any] = {}
    if target.exists():  # a run stopped part way: its candidates are kept, the rest asked
        before = json.loads(target.read_text(encoding="utf-8"))
        if before.get("orders") != orders:
            ap.error(f"--out: {target} holds the wordings {before.get('orders')}, not {orders}; name another file")
        done = before["rows"]
    start = time.monotonic()
    spent = float(before.get("wall_s", 0.0))

    def save(rows: list[dict[str, Any]]) -> None:
        data = {"scenarios": str(folder.relative_to(ROOT)), "model": args.model, "orders": orders, "claims_only": args.claims_only,
                "wall_s": round(spent + time.monotonic() - start, 1), "rows": rows}
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        tmp.replace(target)

    rows = asyncio.run(repoll(args, runs, scenarios, folder, orders, done, save))
    save(rows)
    print(markdown(table(rows, folder, orders), orders))
    print("wrote", target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
