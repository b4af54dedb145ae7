"""Compact items: what a recovery table is rebuilt from, small enough to commit.

A debate's run folder is megabytes; what scoring needs is a few kilobytes: each found item's
text, the sides its engine stated, and the debate's cost. :func:`debate_record` writes that
record (with what the scorer made of each item at the time: best match, cosine, sides,
recovered), one JSON file per debate or canary, in an items folder beside a ``table.json``
naming the scenario set and the run's settings. :func:`rescore` scores a folder again with the
current scorer, against the committed scenario set, and :func:`table_markdown` writes the table
that ``benchmarks/README.md`` keeps; ``crux-lab eval rescore`` rebuilds and checks every one.

An *arm* is an engine with parameters, written ``engine+key=value+...`` (``direct+informed=true``,
``direct+informed=true+samples=6``): one row of a table. Canaries are arms too
(``canary:topic``, ``canary:vague``, ``canary:oracle``).
"""

from __future__ import annotations

import json
import math
import os
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crux_lab.analysis.recovery import (
    CANARIES,
    Encoder,
    Item,
    RecoveryScore,
    canaries,
    score_items,
    summarize,
)
from crux_lab.analysis.scenarios import Scenario, load_scenarios
from crux_lab.analysis.stats import cell, cohen_kappa

__all__ = [
    "ItemsError",
    "Table",
    "arm_label",
    "canary_scores",
    "debate_record",
    "k_for_budget",
    "load_table",
    "parse_arm",
    "poll_against_debate",
    "poll_markdown",
    "reader_agreement",
    "reader_markdown",
    "rescore",
    "table_markdown",
    "write_record",
]

VERSION = 1
TABLE_FILE = "table.json"
READER_FILE = "reader.jsonl"  # a reader's labels, one a line (see :func:`reader_agreement`)
CANARY = "canary:"


class ItemsError(ValueError):
    """An items folder or record that cannot be read: one line naming the file, the field and the fix."""


def parse_arm(spec: str) -> tuple[str, dict[str, Any]]:
    """``"direct+informed=true+samples=4"`` -> ``("direct", {"informed": True, "samples": 4})``;
    a value is read as JSON, else kept as text.

    >>> parse_arm("direct+informed=true+samples=4")
    ('direct', {'informed': True, 'samples': 4})
    >>> parse_arm("panel")
    ('panel', {})
    """
    engine, *parts = [p.strip() for p in spec.strip().split("+")]
    params: dict[str, Any] = {}
    for part in parts:
        key, sep, raw = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{spec!r}: {part!r} is not KEY=VALUE (write engine+key=value, e.g. direct+informed=true)")
        try:
            params[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            params[key.strip()] = raw.strip()
    return engine, params


def arm_label(engine: str, params: Mapping[str, Any]) -> str:
    """The row label of an engine with parameters (keys sorted).

    >>> arm_label("direct", {"samples": 4, "informed": True})
    'direct+informed=true+samples=4'
    """
    return "+".join([engine, *(f"{k}={json.dumps(v)}" for k, v in sorted(params.items()))])


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text).strip("_")


def _raw(item: Item) -> dict[str, Any]:
    """An item as a record keeps it (:func:`_item` reads it back); ``pivots`` only when the
    poll asked the pivot test."""
    raw: dict[str, Any] = {"text": item.text, "kind": item.kind, "type": item.type, "yes": list(item.yes), "no": list(item.no)}
    if item.pivots:
        raw["pivots"] = dict(item.pivots)
    return raw


def _item_dict(j: Any) -> dict[str, Any]:
    m = j.match
    return {
        **_raw(j.item),
        "best": m.best, "cosine": m.similarity, "topic_cosine": m.topic_similarity, "matched": m.how,
        "sides": j.sides, "recovered": j.recovered,
    }


def _item(raw: Mapping[str, Any]) -> Item:
    """An item as a record keeps it, read back for the scorer."""
    pivots = raw.get("pivots") or {}
    return Item(raw["text"], tuple(raw.get("yes") or ()), tuple(raw.get("no") or ()), raw.get("kind", "crux"), raw.get("type"),
                tuple((str(k), str(v)) for k, v in pivots.items()) if isinstance(pivots, dict) else ())


def debate_record(
    score: RecoveryScore, *, arm: str, engine: str, params: Mapping[str, Any], seed: int,
    common_ground: Sequence[str] = (), personas: Mapping[str, str] | None = None, model: str = "",
    poll: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One debate's compact record (JSON-ready): its items as scored now, and its cost.
    ``poll`` (a debate whose candidates were polled): ``debate_items``, the candidates with the
    sides the debate gave them (:func:`~crux_lab.analysis.crux_text.as_debated`, as
    :class:`~crux_lab.analysis.recovery.Item`), ``flips``, and the poll's ``calls`` and
    ``tokens``; kept under ``"poll"`` so a table can set the poll's sides beside the debate's."""
    record = {
        "version": VERSION, "arm": arm, "engine": engine, "params": dict(params), "scenario": score.scenario,
        "seed": seed, "run_id": score.run_id, "model": model, "calls": score.calls,
        "prompt_tokens": score.prompt_tokens, "output_tokens": score.output_tokens, "wall_s": round(score.wall_s, 1),
        "personas": dict(personas or {}), "common_ground": list(common_ground),
        "items": [_item_dict(j) for j in score.judged],
    }
    if poll is not None:
        record["poll"] = {
            "flips": int(poll.get("flips", 0)), "calls": int(poll.get("calls", 0)), "tokens": int(poll.get("tokens", 0)),
            "debate_items": [_raw(i) for i in poll.get("debate_items", [])],
        }
    return record


def canary_scores(scenario: Scenario, seed: int, encoder: Encoder | None = None) -> list[RecoveryScore]:
    """The three canaries of one scenario, scored (arm ``canary:<name>``; no debate, no cost).
    Their records are :func:`debate_record` of these scores."""
    out = []
    for name, items in canaries(scenario, encoder).items():
        score = score_items(items, scenario, encoder, engine=CANARY + name)
        score.seed = seed
        out.append(score)
    return out


def write_record(folder: str | Path, record: Mapping[str, Any]) -> Path:
    """Write one record as ``<scenario>__<arm>__s<seed>.json`` (atomically: a stopped run
    never leaves half a file)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{_slug(record['scenario'])}__{_slug(record['arm'])}__s{record['seed']}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


@dataclass
class Table:
    """An items folder read back: its settings, its records, and what the reading noticed."""

    folder: Path
    settings: dict[str, Any]
    records: list[dict[str, Any]]
    notes: list[str]

    @property
    def name(self) -> str:
        return self.folder.name


def _repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def _resolve(path: str, folder: Path) -> Path:
    """A path written in ``table.json``: as given when it exists, else from the repository."""
    p = Path(path)
    if p.is_absolute() or p.exists():
        return p
    return _repo_root() / p


def _read_json(path: Path, fix: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ItemsError(f"{path}: not valid JSON ({exc}); {fix}.") from None


def load_table(folder: str | Path) -> Table:
    """An items folder: its ``table.json`` and every record, each checked field by field."""
    root = Path(folder)
    head = root / TABLE_FILE
    if not head.is_file():
        raise ItemsError(f"{head}: file missing; an items folder needs its table.json "
                         '({"title": ..., "scenarios": "<scenario set folder>", ...}).')
    settings = _read_json(head, "fix the syntax")
    if not isinstance(settings, dict) or not isinstance(settings.get("scenarios"), str):
        raise ItemsError(f"{head}: scenarios: give the scenario set folder the items were scored against, as text.")
    records: list[dict[str, Any]] = []
    notes: list[str] = []
    for path in sorted(root.glob("*.json")):
        if path.name == TABLE_FILE:
            continue
        rec = _read_json(path, "fix the syntax or delete the file")
        for name, kind in (("arm", str), ("scenario", str), ("seed", int), ("items", list)):
            if not isinstance(rec.get(name) if isinstance(rec, dict) else None, kind):
                raise ItemsError(f"{path}: {name}: missing or not {kind.__name__}; each record needs arm, scenario, seed and items.")
        for k, item in enumerate(rec["items"]):
            if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                raise ItemsError(f"{path}: items[{k}].text: missing; each item needs its text.")
        if rec["items"] and all("yes" not in i and "no" not in i for i in rec["items"]):
            notes.append(f"{path.name}: its items state no sides; they count as matched by text only, never recovered.")
        records.append(rec)
    return Table(root, settings, records, notes)


def table_scenarios(table: Table) -> dict[str, Scenario]:
    """The scenario set ``table.json`` names, by scenario id."""
    return {s.id: s for s in load_scenarios(_resolve(str(table.settings["scenarios"]), table.folder))}


def rescore(table: Table, encoder: Encoder | None = None) -> list[RecoveryScore]:
    """Every record of ``table`` scored again with the current scorer, against the scenario
    set that ``table.json`` names (each score's ``engine`` is the record's arm)."""
    scenarios = table_scenarios(table)
    out = []
    for rec in table.records:
        scenario = scenarios.get(rec["scenario"])
        if scenario is None:
            raise ItemsError(f"{table.folder}: scenario {rec['scenario']!r} of arm {rec['arm']!r} is not in "
                             f"{_resolve(str(table.settings['scenarios']), table.folder)}; point table.json's scenarios at the set it was run on.")
        items = [_item(i) for i in rec["items"]]
        score = score_items(items, scenario, encoder, common_ground=rec.get("common_ground", []),
                            run_id=rec.get("run_id", ""), engine=rec["arm"])
        score.seed, score.calls, score.wall_s = rec["seed"], rec.get("calls", 0), rec.get("wall_s", 0.0)
        score.prompt_tokens, score.output_tokens = rec.get("prompt_tokens", 0), rec.get("output_tokens", 0)
        out.append(score)
    return out


def _order(arm: str, first: Sequence[str] = ()) -> tuple[int, int, str]:
    """Rows in a table: the arms of the engines in ``first`` (a table's debate engines) in that
    order, then the other arms by name, then the canaries in their own order."""
    engine = arm.split("+")[0]
    if arm.startswith(CANARY):
        name = arm[len(CANARY):]
        return (2, CANARIES.index(name) if name in CANARIES else len(CANARIES), arm)
    if engine in first:
        return (0, list(first).index(engine), arm)
    return (1, 0, arm)


def _ci(mean: float, ci: tuple[float, float]) -> str:
    low, high = ci
    if math.isnan(mean):
        return "–"
    if math.isnan(low):
        return f"{mean:.2f}"
    return f"{mean:.2f} [{low:.2f}–{high:.2f}]"


def table_markdown(scores: Sequence[RecoveryScore], first: Sequence[str] = ()) -> str:
    """The recovery table as Markdown: one row per arm (the engines in ``first`` on top, the
    canaries last), the headline P, R and F1 recovered with sides (95% intervals over
    scenarios), then F1 by text alone, the item counts and the cost."""
    rows = sorted(summarize(scores, intervals=True), key=lambda r: _order(r["engine"], first))
    head = ("| arm | debates | items | matched by text | recovered with sides | sides wrong | no sides | restated topic "
            "| P [95% CI] | R [95% CI] | F1 [95% CI] | F1 by text | calls | tokens in / out | wall s | recovered per 100k tokens |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for r in rows:
        lines.append("| " + " | ".join([
            f"`{r['engine']}`", str(r["debates"]), str(r["items"]), str(r["found_by_text"]), str(r["found"]),
            str(r["sides_wrong"]), str(r["sides_missing"]), str(r["restated_topic"]),
            _ci(r["precision"], r["precision_ci"]), _ci(r["recall"], r["recall_ci"]), _ci(r["f1"], r["f1_ci"]),
            cell(r["text_f1"]), str(r["calls"]), f"{r['prompt_tokens']:,} / {r['output_tokens']:,}",
            cell(r["wall_s"], 0), cell(r["per_100k_tokens"]),
        ]) + " |")
    return "\n".join(lines)


def _share(judged: Sequence[Any]) -> tuple[int, int]:
    """(items matched by text to a contested proposition, of them with their sides right)."""
    matched = [j for j in judged if j.sides != "n/a"]
    return len(matched), sum(1 for j in matched if j.sides == "right")


def poll_against_debate(table: Table, encoder: Encoder | None = None) -> list[dict[str, Any]]:
    """The poll's sides against the debate's own, on the same debates: per arm whose records
    keep their poll (:func:`debate_record`), the items matched by text and the share of them
    with their sides right, and the recovered-with-sides F1 (95% interval over scenarios), once
    as the run shows them (the poll's sides; candidates it did not split left out) and once with
    every candidate on the sides the debate gave it; then the side flips and the poll's calls
    and tokens per debate. Records without a poll are left out."""
    scenarios = table_scenarios(table)
    polled = [r for r in table.records if isinstance(r.get("poll"), dict) and r["scenario"] in scenarios]
    rows = []
    first = table.settings.get("debate_engines", [])
    for arm in sorted(dict.fromkeys(r["arm"] for r in polled), key=lambda a: _order(a, first)):
        mine = [r for r in polled if r["arm"] == arm]
        views: dict[str, list[RecoveryScore]] = {"poll": [], "debate": []}
        for rec in mine:
            scenario = scenarios[rec["scenario"]]
            for view, raw in (("poll", rec["items"]), ("debate", rec["poll"].get("debate_items", []))):
                score = score_items([_item(i) for i in raw], scenario, encoder, engine=arm)
                score.seed = rec["seed"]
                views[view].append(score)
        row: dict[str, Any] = {"arm": arm, "debates": len(mine)}
        for view, scores in views.items():
            summary = summarize(scores, intervals=True)[0]
            matched, right = _share([j for s in scores for j in s.judged])
            row[view] = {"items": sum(s.n_items for s in scores), "matched": matched, "right": right,
                         "f1": summary["f1"], "f1_ci": summary["f1_ci"]}
        tokens = sum(r.get("prompt_tokens", 0) + r.get("output_tokens", 0) for r in mine)
        poll_tokens = sum(int(r["poll"].get("tokens", 0)) for r in mine)
        row.update({"flips": sum(int(r["poll"].get("flips", 0)) for r in mine),
                    "poll_calls": sum(int(r["poll"].get("calls", 0)) for r in mine), "poll_tokens": poll_tokens,
                    "poll_token_share": poll_tokens / tokens if tokens else math.nan})
        rows.append(row)
    return rows


def poll_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """:func:`poll_against_debate` as a Markdown table."""
    head = ("| arm | debates | debate's sides: candidates | matched by text | sides right | F1 [95% CI] "
            "| poll's sides: items | matched by text | sides right | F1 [95% CI] | side flips | poll calls "
            "| poll tokens (share of run) |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]

    def right(view: Mapping[str, Any]) -> str:
        return f"{view['right']} ({view['right'] / view['matched']:.2f})" if view["matched"] else "0"

    for r in rows:
        d, p = r["debate"], r["poll"]
        lines.append("| " + " | ".join([
            f"`{r['arm']}`", str(r["debates"]), str(d["items"]), str(d["matched"]), right(d), _ci(d["f1"], d["f1_ci"]),
            str(p["items"]), str(p["matched"]), right(p), _ci(p["f1"], p["f1_ci"]), str(r["flips"]),
            str(r["poll_calls"]), f"{r['poll_tokens']:,} ({cell(r['poll_token_share'])})",
        ]) + " |")
    return "\n".join(lines)


def k_for_budget(scores: Sequence[RecoveryScore], baseline: str, debate_arms: Sequence[str]) -> int | None:
    """How many samples of ``baseline`` spend the tokens of the median debate arm (per debate,
    rounded, at least 1); ``None`` when either has no tokens recorded.

    >>> s = [RecoveryScore("r", a, "x", 0, 4, 0, 0, 0.0, 0.0, 0.0, 0.0, 0, 0, 0, 0, prompt_tokens=t)
    ...      for a, t in [("d", 1000), ("p", 9000), ("q", 5000), ("r", 2000)]]
    >>> k_for_budget(s, "d", ["p", "q", "r"])
    5
    """
    def per_debate(arm: str) -> float | None:
        mine = [s.prompt_tokens + s.output_tokens for s in scores if s.engine == arm]
        return sum(mine) / len(mine) if mine and sum(mine) else None

    base = per_debate(baseline)
    debates = [t for a in debate_arms if (t := per_debate(a)) is not None]
    if base is None or not debates:
        return None
    return max(1, round(statistics.median(debates) / base))


def reader_agreement(table: Table, scores: Sequence[RecoveryScore], encoder: Encoder | None = None) -> dict[str, Any] | None:
    """A reader's check of a table: the labels in its ``reader.jsonl``, each found among the
    rescored items, against the scorer. A label names its item (``arm``, ``scenario``,
    ``seed``, ``text``) and the sides it was read with (``view``: ``"poll"``, the run's items as
    ``scores`` holds them, in :func:`rescore`'s order; or ``"debate"``, a polled record's
    candidates on the sides its debate gave them), and gives the reader's two verdicts:
    ``matches`` (the item asks a contested planted proposition's question; default ``accept``)
    and ``accept`` (that, with its sides right), with one line ``why``. Cohen's kappa of
    ``matches`` against the scorer's text match to a contested proposition, and of ``accept``
    against its recovery with sides, overall and per arm, and the items where reader and
    scorer disagree. ``None`` when there is no reader file; a label whose item is not in the
    table is a named error."""
    path = table.folder / READER_FILE
    if not path.is_file():
        return None
    judged: dict[tuple[str, str, str, int, str], Any] = {}
    scenarios: dict[str, Scenario] | None = None
    for rec, score in zip(table.records, scores, strict=True):
        for j in score.judged:
            judged[("poll", rec["arm"], rec["scenario"], rec["seed"], j.item.text)] = j
        if isinstance(rec.get("poll"), dict):
            if scenarios is None:
                scenarios = table_scenarios(table)
            raw = rec["poll"].get("debate_items", [])
            for j in score_items([_item(i) for i in raw], scenarios[rec["scenario"]], encoder, engine=rec["arm"]).judged:
                judged[("debate", rec["arm"], rec["scenario"], rec["seed"], j.item.text)] = j
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            label = json.loads(line)
            view = label.get("view", "poll")
            key = (view, label["arm"], label["scenario"], int(label["seed"]), label["text"])
            accept = bool(label["accept"])
            matches = bool(label.get("matches", accept))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ItemsError(f"{path}: line {n}: {exc}; each line is {{\"arm\", \"scenario\", \"seed\", \"text\", "
                             f"\"view\", \"matches\", \"accept\", \"why\"}}.") from None
        if view not in ("poll", "debate"):
            raise ItemsError(f"{path}: line {n}: view {view!r}; use \"poll\" (the run's items) or \"debate\" (the debate's sides).")
        if key not in judged:
            raise ItemsError(f"{path}: line {n}: no item {label['text']!r} of {label['arm']} on {label['scenario']} "
                             f"s{label['seed']} ({view} sides) in this table.")
        j = judged[key]
        rows.append({"arm": label["arm"], "view": view, "text": label["text"], "why": label.get("why", ""),
                     "reader_matches": matches, "reader_accepts": accept,
                     "matched": j.match.how == "embedding" and j.sides != "n/a", "recovered": j.recovered})

    def kappas(mine: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        return {"labels": len(mine), "accepted": sum(r["reader_accepts"] for r in mine),
                "reader_matched": sum(r["reader_matches"] for r in mine),
                "matched": sum(r["matched"] for r in mine), "recovered": sum(r["recovered"] for r in mine),
                "kappa_text": cohen_kappa([r["reader_matches"] for r in mine], [r["matched"] for r in mine]),
                "kappa_sides": cohen_kappa([r["reader_accepts"] for r in mine], [r["recovered"] for r in mine])}

    return {
        **kappas(rows),
        "per_arm": {arm: kappas([r for r in rows if r["arm"] == arm]) for arm in dict.fromkeys(r["arm"] for r in rows)},
        "disagreements": [{"arm": r["arm"], "view": r["view"], "text": r["text"], "reader_matches": r["reader_matches"],
                           "matched": r["matched"], "reader": r["reader_accepts"], "recovered": r["recovered"], "why": r["why"]}
                          for r in rows if r["reader_accepts"] != r["recovered"] or r["reader_matches"] != r["matched"]],
    }


def reader_markdown(agreement: Mapping[str, Any]) -> str:
    """:func:`reader_agreement` as a Markdown table: per arm and in all, the labels, the items
    the reader and the scorer each match by text and accept (recovered with sides), and
    Cohen's kappa of each pair ("–" where one rater gives a single verdict throughout)."""
    head = ("| arm | labels | text match: reader | text match: scorer | kappa | with sides: reader accepts "
            "| with sides: scorer recovers | kappa |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for arm, k in [*agreement["per_arm"].items(), ("**all**", agreement)]:
        lines.append("| " + " | ".join([
            f"`{arm}`" if not arm.startswith("*") else arm, str(k["labels"]), str(k["reader_matched"]), str(k["matched"]),
            cell(k["kappa_text"]), str(k["accepted"]), str(k["recovered"]), cell(k["kappa_sides"]),
        ]) + " |")
    return "\n".join(lines)


PIVOTS = ("YES", "PARTLY", "NO")


def pivot_tally(pairs: Sequence[tuple[str, bool]]) -> dict[str, Any]:
    """Pivot answers against planted flip conditions, from ``(answer, flip planted)`` pairs: the
    answers with and without a flip condition (YES, PARTLY, NO, and any other answer under its
    own key), their number, and Cohen's kappa of "decisive" (YES) against "a flip condition is
    planted" (``nan`` when every answer is the same: kappa says nothing then).

    >>> t = pivot_tally([("YES", True), ("NO", False), ("YES", False)])
    >>> t["flip"], t["no_flip"], t["answers"], round(t["kappa"], 2)
    ({'YES': 1, 'PARTLY': 0, 'NO': 0}, {'YES': 1, 'PARTLY': 0, 'NO': 1}, 3, 0.4)
    """
    counts: dict[bool, dict[str, int]] = {True: dict.fromkeys(PIVOTS, 0), False: dict.fromkeys(PIVOTS, 0)}
    for answer, planted in pairs:
        counts[planted][answer] = counts[planted].get(answer, 0) + 1
    decisive = [answer == "YES" for answer, _ in pairs]
    kappa = cohen_kappa(decisive, [planted for _, planted in pairs]) if len(set(decisive)) > 1 else math.nan
    return {"flip": counts[True], "no_flip": counts[False], "answers": len(pairs), "kappa": kappa}


def pivots_against_flips(table: Table, scores: Sequence[RecoveryScore]) -> list[dict[str, Any]]:
    """The personas' pivot answers against the scenarios' planted flip conditions: on every
    item matched by text to a contested planted proposition, each persona the pivot test asked
    ("were this settled against you, would your answer on the topic change?"), set against
    whether that persona's beliefs plant a flip condition on that proposition
    (``Scenario.flips``). Per arm whose records keep pivot answers: the debates and items read
    and :func:`pivot_tally` of their answers. ``scores``: :func:`rescore`'s, in record order.
    Arms with no pivot answer on a matched item are left out."""
    scenarios: dict[str, Scenario] | None = None
    debates: dict[str, set[tuple[str, int]]] = {}
    items: dict[str, int] = {}
    pairs: dict[str, list[tuple[str, bool]]] = {}
    for rec, score in zip(table.records, scores, strict=True):
        judged = [j for j in score.judged if j.item.pivots and j.sides != "n/a" and j.match.proposition_id]
        if not judged:
            continue
        if scenarios is None:
            scenarios = table_scenarios(table)
        flips, arm = scenarios[rec["scenario"]].flips, rec["arm"]
        debates.setdefault(arm, set()).add((rec["scenario"], rec["seed"]))
        items[arm] = items.get(arm, 0) + len(judged)
        pairs.setdefault(arm, []).extend((answer, (persona, j.match.proposition_id) in flips)
                                         for j in judged for persona, answer in j.item.pivots)
    first = table.settings.get("debate_engines", [])
    return [{"arm": arm, "debates": len(debates[arm]), "items": items[arm], **pivot_tally(pairs[arm])}
            for arm in sorted(pairs, key=lambda a: _order(a, first))]


def pivots_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """:func:`pivots_against_flips` as a Markdown table."""
    head = ("| arm | debates | matched items with pivot answers | answers | flip condition planted: YES / PARTLY / NO "
            "| none planted: YES / PARTLY / NO | kappa (decisive, flip planted) |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for r in rows:
        lines.append("| " + " | ".join([
            f"`{r['arm']}`", str(r["debates"]), str(r["items"]), str(r["answers"]),
            " / ".join(str(r["flip"].get(a, 0)) for a in PIVOTS), " / ".join(str(r["no_flip"].get(a, 0)) for a in PIVOTS),
            cell(r["kappa"]),
        ]) + " |")
    return "\n".join(lines)
