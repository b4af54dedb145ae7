"""How often a persona, asked alone, answers a planted proposition as its planted stance says.

The poll (``crux_lab.engines.poll``) asks each persona every candidate crux in a fresh request:
its own system prompt and the question alone. This benchmark asks the cleanest candidates
there are, each planted proposition's own question, and compares each answer with the planted
stance (pro = YES, con = NO, uncertain = UNSURE). It is the poll's ceiling: an engine's
candidates are worded less well than the key's.

    .venv/bin/python benchmarks/poll_fidelity.py --set dev                     # the simulator
    .venv/bin/python benchmarks/poll_fidelity.py --set dev --backend openai \\
        --base-url http://127.0.0.1:8080/v1 --model qwen2.5-1.5b --order poll,yes-no [--scenarios housing]

``--pivot`` asks the pivot test instead, of every persona on every contested proposition it
holds or rejects: "You answered <its planted answer> to this question: <the planted question>.
Suppose it were settled that the answer is <the other>. Would your answer to <the topic>
change?" (``PIVOT_PROMPT``, as the poll sends it), and sets each answer against whether the
persona's beliefs plant a flip condition on that proposition (``Scenario.flips``): the pivot
test's ceiling, as the poll's is above.

``--order`` names the wordings to compare (``ORDERS``): ``poll`` is the question as the poll
sends it ("Do you hold the view it asks about, or reject it?", HOLD, REJECT or UNSURE);
``yes-no`` its first wording (YES, NO or UNSURE); ``reason-first`` and ``quote-first`` ask for
the reason, or the line of the persona's own stated views, before the answer; ``agree`` and
``hold-claim`` put the proposition as a claim to agree with or to hold; ``negated`` asks whether
the right answer is NO (its YES read as NO). The system prompt is the one the crux engines and
the one-call baselines send (the persona's stances quoted). Per wording it reports: answers
right on pro/con stances, the share of YES among all answers (a model that agrees with every
question scores high here and low on the first), and contested propositions whose every
pro persona answered YES and every con persona NO. Writes JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pydantic import BaseModel, Field  # noqa: E402

from crux_lab.analysis.scenarios import load_scenarios, use_library  # noqa: E402
from crux_lab.engines.poll import (  # noqa: E402
    PIVOT_ANSWERS,
    PIVOT_PROMPT,
    POLL_PROMPT,
    PivotReply,
    PollReply,
    read_answer,
)
from crux_lab.eval.items import pivot_tally  # noqa: E402
from crux_lab.llm import make_backend  # noqa: E402
from crux_lab.llm.base import LLMError, LLMRequest, allocation_for  # noqa: E402
from crux_lab.llm.purposes import Purpose  # noqa: E402
from crux_lab.llm.registry import options_for_library  # noqa: E402
from crux_lab.personas.loader import load_personas, propositions_for  # noqa: E402
from crux_lab.personas.prompt import build_system_prompt  # noqa: E402

_JSON = "Reply in JSON: "
_ASK = "One question, put to you alone. Answer it as yourself, from your own views.\n\nQuestion: {question}\n\n"


class ReasonFirst(BaseModel):
    reason: str = Field("", description="One sentence, in your own voice: what you think about it")
    answer: str = Field(description="YES, NO or UNSURE, as your reason says")
    confidence: float = Field(0.5, ge=0.0, le=1.0)


class QuoteFirst(BaseModel):
    my_view: str = Field("", description='The line of your own stated views that speaks to this question, copied; or "none"')
    answer: str = Field(description="YES, NO or UNSURE, as that line says")
    confidence: float = Field(0.5, ge=0.0, le=1.0)
    reason: str = ""


class Agree(BaseModel):
    answer: str = Field(description="AGREE, DISAGREE or UNSURE")
    confidence: float = Field(0.5, ge=0.0, le=1.0)
    reason: str = ""


class YesNo(BaseModel):
    answer: str = Field(description="YES, NO or UNSURE")
    confidence: float = Field(0.5, ge=0.0, le=1.0, description="How sure you are, 0 to 1")
    reason: str = Field("", description="One sentence, in your own voice: why")


class Hold(BaseModel):
    answer: str = Field(description="HOLD, REJECT or UNSURE")
    confidence: float = Field(0.5, ge=0.0, le=1.0)
    reason: str = ""


# order -> (user prompt, reply schema, asked the claim rather than the question). ``poll`` is the
# poll as crux_lab sends it (hold or reject the view the question asks about); the rest are
# the wordings tried on the dev scenarios: ``yes-no`` is the poll's first wording.
YES_NO = _ASK + _JSON + '"answer": YES, NO or UNSURE; "confidence": how sure you are, 0 to 1; "reason": one sentence, in your own voice, saying why.'
ORDERS: dict[str, tuple[str, type[BaseModel], bool]] = {
    "poll": (POLL_PROMPT, PollReply, False),
    "yes-no": (YES_NO, YesNo, False),
    "reason-first": (_ASK + _JSON + '"reason": one sentence, in your own voice, saying what you think about it; "answer": YES, NO or '
                     'UNSURE, as your reason says; "confidence": how sure you are, 0 to 1.', ReasonFirst, False),
    "quote-first": (_ASK.replace("from your own views", "from your own views as stated above") + _JSON
                    + '"my_view": the line of your stated views above that speaks to this question, copied word for word, or "none"; '
                    '"answer": YES, NO or UNSURE, as that line says (a view you hold that agrees with the question is YES, one you '
                    'reject is NO); "confidence": how sure you are, 0 to 1; "reason": one sentence, in your own voice, saying why.',
                    QuoteFirst, False),
    "agree": ("One claim, put to you alone. Say whether you agree with it, as yourself, from your own views.\n\nClaim: {question}\n\n"
              + _JSON + '"answer": AGREE, DISAGREE or UNSURE; "confidence": how sure you are, 0 to 1; "reason": one sentence, '
              "in your own voice, saying why.", Agree, True),
    "hold-claim": ("One claim, put to you alone. Do you hold it or reject it? Answer as yourself, from your own views.\n\nClaim: {question}\n\n"
                   + _JSON + '"answer": HOLD, REJECT or UNSURE; "confidence": how sure you are, 0 to 1; "reason": one sentence, '
                   "in your own voice, saying why.", Hold, True),
    "negated": (YES_NO, YesNo, False),
}
WORDS = ("YES", "NO", "UNSURE", "AGREE", "DISAGREE", "HOLD", "REJECT")
AS_YES_NO = {"AGREE": "YES", "DISAGREE": "NO", "HOLD": "YES", "REJECT": "NO"}

WANT = {"pro": "YES", "con": "NO", "uncertain": "UNSURE"}


def framed(order: str, question: str, claim: str) -> str:
    """What the persona is asked: the claim for ``agree`` and ``hold``, the question turned
    round for ``negated`` (whose YES means NO), else the question."""
    if ORDERS[order][2]:
        return claim
    return f'Is the right answer to this question NO: "{question}"' if order == "negated" else question


async def ask(backend: Any, system: str, question: str, claim: str, order: str) -> tuple[str, str, str, int, int]:
    alloc = allocation_for(Purpose.poll)
    prompt, schema, _ = ORDERS[order]
    request = LLMRequest(
        purpose=Purpose.poll, system=system, user=prompt.format(question=framed(order, question, claim)), tier=alloc.tier,
        temperature=alloc.temperature, max_tokens=alloc.max_tokens, output_schema=schema, cache_system=True,
    )
    try:
        response = await backend.generate(request)
    except LLMError as exc:
        return "UNSURE", f"(failed) {exc}"[:200], "", 0, 0
    reply = response.parsed
    said = read_answer(getattr(reply, "answer", ""), WORDS) or "UNSURE"
    flip = {"YES": "NO", "NO": "YES"} if order == "negated" else {}
    answer = flip.get(said, AS_YES_NO.get(said, said))
    view = str(getattr(reply, "my_view", ""))
    return answer, str(getattr(reply, "reason", "")), view, response.usage.input_tokens, response.usage.output_tokens


def scenario_backend(args: argparse.Namespace, sc: Any, folder: Path, models: dict[str, str] | None) -> tuple[Any, Any, Any]:
    """A scenario's personas, its deck, and the backend that asks them."""
    with use_library(folder):
        personas = load_personas(sc.persona_ids)
        deck = propositions_for(sc.persona_ids)
    return personas, deck, make_backend(args.backend, options=options_for_library(args.backend, personas, deck),
                                        base_url=args.base_url, models=models)


async def run_order(args: argparse.Namespace, scenarios: list[Any], folder: Path, order: str) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    start = time.monotonic()
    models = {"strong": args.model, "fast": args.model} if args.model else None
    for sc in scenarios:
        personas, deck, backend = scenario_backend(args, sc, folder, models)
        for pid in sc.persona_ids:
            system = build_system_prompt(personas[pid], propositions=deck)
            for prop in sc.propositions:
                answer, reason, view, tin, tout = await ask(backend, system, prop.question, prop.text, order)
                stance = prop.stances[pid]
                rows.append({"scenario": sc.id, "persona": pid, "proposition": prop.id, "contested": prop.contested,
                             "stance": stance, "answer": answer, "reason": reason, "view": view, "tokens_in": tin, "tokens_out": tout})
                print(f"  {order} {sc.id} {pid} {prop.id} {stance} -> {answer}: {(view + ' | ' if view else '') + reason[:90]}", flush=True)
    return {"order": order, "wall_s": round(time.monotonic() - start, 1), "rows": rows, **summary(rows, scenarios)}


async def run_pivot(args: argparse.Namespace, scenarios: list[Any], folder: Path) -> dict[str, Any]:
    """The pivot test on every (persona, contested proposition) with a planted pro or con stance."""
    rows: list[dict[str, Any]] = []
    start = time.monotonic()
    models = {"strong": args.model, "fast": args.model} if args.model else None
    alloc = allocation_for(Purpose.pivot)
    for sc in scenarios:
        personas, deck, backend = scenario_backend(args, sc, folder, models)
        for pid in sc.persona_ids:
            system = build_system_prompt(personas[pid], propositions=deck)
            for prop in sc.propositions:
                stance = prop.stances[pid]
                if not prop.contested or stance not in ("pro", "con"):
                    continue
                mine = WANT[stance]
                user = PIVOT_PROMPT.format(mine=mine, question=prop.question, other="NO" if mine == "YES" else "YES", topic=sc.topic)
                request = LLMRequest(purpose=Purpose.pivot, system=system, user=user, tier=alloc.tier, temperature=alloc.temperature,
                                     max_tokens=alloc.max_tokens, output_schema=PivotReply, cache_system=True)
                try:
                    response = await backend.generate(request)
                    answer = read_answer(getattr(response.parsed, "answer", ""), PIVOT_ANSWERS) or "?"
                    reason, tin, tout = str(getattr(response.parsed, "reason", "")), response.usage.input_tokens, response.usage.output_tokens
                except LLMError as exc:
                    answer, reason, tin, tout = "?", f"(failed) {exc}"[:200], 0, 0
                flip = (pid, prop.id) in sc.flips
                rows.append({"scenario": sc.id, "persona": pid, "proposition": prop.id, "stance": stance, "flip": flip,
                             "pivot": answer, "reason": reason, "tokens_in": tin, "tokens_out": tout})
                print(f"  pivot {sc.id} {pid} {prop.id} {stance} flip={flip} -> {answer}: {reason[:90]}", flush=True)
    return {"order": "pivot", "wall_s": round(time.monotonic() - start, 1), "rows": rows, **pivot_summary(rows)}


def pivot_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`crux_lab.eval.items.pivot_tally` of the answers ("?": unreadable), with their tokens.

    >>> s = pivot_summary([{"flip": True, "pivot": "YES"}, {"flip": False, "pivot": "NO"}, {"flip": False, "pivot": "?"}])
    >>> s["flip"], s["no_flip"], s["answers"]
    ({'YES': 1, 'PARTLY': 0, 'NO': 0}, {'YES': 0, 'PARTLY': 0, 'NO': 1, '?': 1}, 3)
    """
    return {**pivot_tally([(r["pivot"], r["flip"]) for r in rows]),
            "tokens_in": sum(r.get("tokens_in", 0) for r in rows), "tokens_out": sum(r.get("tokens_out", 0) for r in rows)}


def summary(rows: list[dict[str, Any]], scenarios: list[Any]) -> dict[str, Any]:
    """Answers right on pro/con stances, the YES share, and contested propositions split right.

    >>> rows = [{"scenario": "s", "persona": "a", "proposition": "p", "contested": True, "stance": "pro", "answer": "YES"},
    ...         {"scenario": "s", "persona": "b", "proposition": "p", "contested": True, "stance": "con", "answer": "YES"}]
    >>> s = summary(rows, [])
    >>> s["right"], s["yes_share"], s["split_right"]
    (0.5, 1.0, 0.0)
    """
    decided = [r for r in rows if r["stance"] in ("pro", "con")]
    right = sum(WANT[r["stance"]] == r["answer"] for r in decided)
    by_prop: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        if r["contested"]:
            by_prop.setdefault((r["scenario"], r["proposition"]), []).append(r)
    split = [all(WANT[r["stance"]] == r["answer"] for r in rs if r["stance"] in ("pro", "con")) for rs in by_prop.values()]
    return {
        "answers": len(rows),
        "right": round(right / len(decided), 3) if decided else None,
        "right_pro": _share([r for r in decided if r["stance"] == "pro"]),
        "right_con": _share([r for r in decided if r["stance"] == "con"]),
        "yes_share": round(sum(r["answer"] == "YES" for r in rows) / len(rows), 3) if rows else None,
        "contested_propositions": len(split),
        "split_right": round(sum(split) / len(split), 3) if split else None,
        "tokens_in": sum(r.get("tokens_in", 0) for r in rows),
        "tokens_out": sum(r.get("tokens_out", 0) for r in rows),
    }


def _share(rows: list[dict[str, Any]]) -> float | None:
    return round(sum(WANT[r["stance"]] == r["answer"] for r in rows) / len(rows), 3) if rows else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=("dev", "test"), default="dev")
    ap.add_argument("--backend", default="simulated")
    ap.add_argument("--base-url")
    ap.add_argument("--model")
    ap.add_argument("--order", default="poll", help="comma-separated: " + ", ".join(ORDERS))
    ap.add_argument("--scenarios", default="", help="only these scenario ids (comma-separated); default: the whole set")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--pivot", action="store_true", help="ask the pivot test on the contested propositions instead of the poll")
    args = ap.parse_args()
    folder = ROOT / "benchmarks/scenarios" / args.set
    scenarios = load_scenarios(folder)
    if wanted := [x.strip() for x in args.scenarios.split(",") if x.strip()]:
        scenarios = [s for s in scenarios if s.id in wanted]
    out: dict[str, Any] = {"set": args.set, "scenarios": [s.id for s in scenarios], "backend": args.backend, "model": args.model}
    if args.pivot:
        res = asyncio.run(run_pivot(args, scenarios, folder))
        f, n = res["flip"], res["no_flip"]
        print("| answers | flip condition planted: YES / PARTLY / NO | none planted: YES / PARTLY / NO | unreadable | kappa (decisive, flip planted) | tokens in / out | wall s |")
        print("|---|---|---|---|---|---|---|")
        print(f"| {res['answers']} | {f['YES']} / {f['PARTLY']} / {f['NO']} | {n['YES']} / {n['PARTLY']} / {n['NO']} | {f.get('?', 0) + n.get('?', 0)} | "
              f"{res['kappa']:.2f} | {res['tokens_in']:,} / {res['tokens_out']:,} | {res['wall_s']} |")
        out["pivot"] = res
    out["orders"] = []
    for order in [] if args.pivot else [o.strip() for o in args.order.split(",") if o.strip()]:
        out["orders"].append(asyncio.run(run_order(args, scenarios, folder, order)))
    if out["orders"]:
        print("| order | answers | right (pro/con) | right on pro | right on con | YES share | contested split right | tokens in / out | wall s |")
        print("|---|---|---|---|---|---|---|---|---|")
    for o in out["orders"]:
        print(f"| {o['order']} | {o['answers']} | {o['right']} | {o['right_pro']} | {o['right_con']} | {o['yes_share']} | "
              f"{round((o['split_right'] or 0) * o['contested_propositions'])} of {o['contested_propositions']} | {o['tokens_in']:,} / {o['tokens_out']:,} | {o['wall_s']} |")
    target = args.out or ROOT / f"benchmarks/results/poll_fidelity-{args.backend}-{args.set}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print("wrote", target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
