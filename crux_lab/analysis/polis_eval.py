"""``crux-lab eval polis``: do the engines find the statements real people divide on?

Ground truth and personas come from :mod:`crux_lab.analysis.polis_truth` (the votes alone).
One debate per engine and seed runs on the conversation's topic with one persona per Polis
opinion group; each debate is scored **by text** with the calibrated matcher
(:mod:`crux_lab.analysis.textmatch`, :mod:`crux_lab.analysis.calibration`), never by ids:

- every crux item (crux cards, cruxes, DCG disputes: :func:`~crux_lab.analysis.metrics.crux_texts`)
  is matched to its closest statement of the conversation (every statement that is not
  moderated out, not only the personas'), by MiniLM cosine at the calibrated threshold; an item
  below recovery's specificity floor (:data:`~crux_lab.analysis.recovery.GENERIC_FLOOR`)
  matches nothing;
- **crux precision** = items whose match is a divisive statement / items (``nan`` when the
  debate reported none);
- **recall@k** = top-k divisive statements matched by some item / k;
- **false common ground** = common-ground items whose match is a divisive statement;
- **camp ARI** = adjusted Rand index between Polis's groups and the engine's camps over the
  participants (each participant takes the camp of its group's persona; a persona in no camp
  is a camp of its own); ``nan`` when the engine reports no camps.

The offline backend debates only its deck's topics (it checks the topic when it is built); the
persona library written for a conversation is a deck whose topic is the debate topic and whose
propositions are the personas' statements, so the offline backend runs it exactly as it runs recovery's planted
scenarios (``--library``): a plumbing check, since its personas say what their stances say.
Real models (``--backend openai``/``anthropic``) debate the same library.

Run folders go to ``<workdir>/runs/``; a debate whose folder is complete and valid is not run
again (the run id hashes the configuration, whose ``deck`` carries a digest of the personas).
Scores land in the ``metrics`` table (names :data:`METRIC_NAMES`, details in
``polis_crux_precision``'s ``detail``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from crux_lab.analysis.calibration import default_calibration
from crux_lab.analysis.metrics import crux_texts, question_specificity
from crux_lab.analysis.polis import PolisConversation, PolisDataError, load_conversation
from crux_lab.analysis.polis_heldout import (
    FIDELITY_FRACTION,
    NEAR_COSINE,
    HeldOut,
    SidesScore,
    hold_out,
    minds_without,
    polis_canaries,
)
from crux_lab.analysis.polis_heldout import score_items as score_sides
from crux_lab.analysis.polis_truth import (
    GroupMind,
    PolisLibrary,
    PolisTruth,
    debate_topic,
    ground_truth,
    group_minds,
    write_polis_library,
)
from crux_lab.analysis.recovery import GENERIC_FLOOR, items_of
from crux_lab.analysis.stats import bootstrap_interval as _interval
from crux_lab.analysis.stats import cluster_interval as _cluster
from crux_lab.analysis.stats import nanmean as _nanmean
from crux_lab.analysis.stats import with_interval
from crux_lab.analysis.textmatch import unit_vectors
from crux_lab.models.domain import Camp
from crux_lab.models.result import DebateResult

__all__ = [
    "METRIC_NAMES",
    "PolisEvalRun",
    "PolisScore",
    "PolisSetup",
    "StatementMatch",
    "add_sides",
    "camp_ari",
    "canary_scores",
    "match_statements",
    "prepare",
    "score_debate",
    "sides_markdown",
    "summarize",
]

METRIC_NAMES = ("polis_crux_precision", "polis_recall_at_k", "polis_false_common_ground", "polis_camp_ari")
SIDES_METRIC_NAMES = ("polis_sides_precision", "polis_sides_recall_at_k", "polis_sides_f1")
HELDOUT_FILE = "heldout.json"


@dataclass(frozen=True)
class StatementMatch:
    text: str
    kind: str  # "card" | "crux" | "dispute" | "common_ground"
    statement: str | None  # the closest statement at or above the threshold, else None
    closest: str | None  # the closest statement, whatever its score
    score: float | None  # cosine with the closest statement (None: generic item)
    divisive: bool
    restated: bool = False  # at least as close to the debate topic as to the closest statement


def match_statements(
    texts: Sequence[str],
    kinds: Sequence[str],
    truth: PolisTruth,
    *,
    threshold: float | None = None,
    encoder: Any = None,
    topic: str | None = None,
) -> list[StatementMatch]:
    """Each text's closest statement of the conversation (module docstring). With ``topic``,
    a text at least as close to the topic as to its closest statement restates the topic and
    matches nothing (``restated``)."""
    if threshold is None:
        threshold = default_calibration().threshold
    ids = [sid for sid, s in truth.statements.items() if s.text.strip()]
    divisive = set(truth.divisive)
    out: list[StatementMatch] = []
    need = [i for i, t in enumerate(texts) if question_specificity(t) >= GENERIC_FLOOR]
    sims = np.zeros((0, len(ids)))
    if need and ids:
        sims = unit_vectors([texts[i] for i in need], encoder) @ unit_vectors(
            [truth.statements[s].text for s in ids], encoder).T
    topic_sims = np.zeros(len(need))
    if topic is not None and need:
        topic_sims = unit_vectors([texts[i] for i in need], encoder) @ unit_vectors([topic], encoder)[0]
    row_of = {i: r for r, i in enumerate(need)}
    for i, (text, kind) in enumerate(zip(texts, kinds, strict=True)):
        if i not in row_of or not ids:
            out.append(StatementMatch(text, kind, None, None, None, False))
            continue
        row = sims[row_of[i]]
        best = int(np.argmax(row))
        score = round(float(row[best]), 4)
        restated = topic is not None and float(topic_sims[row_of[i]]) >= float(row[best])
        sid = ids[best] if score >= threshold and not restated else None
        out.append(StatementMatch(text, kind, sid, ids[best], score, sid in divisive, restated))
    return out


def camp_ari(camps: Sequence[Camp], persona_group: Mapping[str, int], group_ids: np.ndarray) -> float:
    """ARI between Polis's groups and the engine's camps over the participants of the groups
    that have a persona (module docstring).

    >>> from crux_lab.models import Camp
    >>> groups = np.array([0, 0, 1, 1, -1])
    >>> camp_ari([Camp(index=0, persona_ids=["a"]), Camp(index=1, persona_ids=["b"])], {"a": 0, "b": 1}, groups)
    1.0
    >>> camp_ari([Camp(index=0, persona_ids=["a", "b"])], {"a": 0, "b": 1}, groups)
    0.0
    >>> math.isnan(camp_ari([], {"a": 0, "b": 1}, groups))
    True
    """
    if not camps:
        return math.nan
    from sklearn.metrics import adjusted_rand_score

    label: dict[int, int] = {}
    for pid, group in persona_group.items():
        home = next((c.index for c in camps if pid in c.persona_ids), None)
        label[group] = home if home is not None else -1000 - group
    keep = np.isin(group_ids, list(label))
    truth = group_ids[keep]
    if truth.size < 2:
        return math.nan
    pred = np.array([label[int(g)] for g in truth])
    return float(adjusted_rand_score(truth, pred))


@dataclass
class PolisScore:
    """One debate scored against its conversation (persisted as ``metrics`` rows)."""

    run_id: str
    engine: str
    conversation: str
    seed: int
    k: int
    top_held: int  # top-k divisive statements some persona holds: the ceiling of recall@k
    n_items: int
    divisive_items: int
    precision: float
    recall_at_k: float
    found_top: list[str]
    n_common_ground: int
    false_common_ground: int
    camp_ari: float
    calls: int
    wall_s: float
    complete: bool
    resumed: bool = False
    matches: list[dict[str, Any]] = field(default_factory=list)
    # With held-out statements (:mod:`crux_lab.analysis.polis_heldout`): recovered with sides
    held_out: bool = False
    matched_by_text: int = 0  # held-out divisive statements matched by text, sides or not
    recovered: int = 0  # ... with their sides right
    sides_wrong: int = 0
    no_sides: int = 0
    restated_topic: int = 0
    sides_precision: float = math.nan
    sides_recall_at_k: float = math.nan
    sides_f1: float = math.nan
    recovered_statements: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    output_tokens: int = 0
    items: list[dict[str, Any]] = field(default_factory=list)  # each crux item with its sides and verdict

    def progress(self) -> str:
        """One line for a run's log: with held-out statements, the crux finding with sides first
        (what the table reports), then the match by text to any divisive statement (the
        personas' own included)."""
        def f(x: float) -> str:
            return "n/a" if math.isnan(x) else f"{x:.2f}"

        head = f"{self.engine} s{self.seed}{' (reused)' if self.resumed else ''}: {self.n_items} crux items"
        if self.held_out:
            head += (f"; held out, with sides: P {f(self.sides_precision)}, R@{self.k} {f(self.sides_recall_at_k)}, "
                     f"F1 {f(self.sides_f1)} ({self.recovered} recovered, {self.sides_wrong} sides wrong)")
        return (f"{head}; by text, any divisive statement: P {f(self.precision)}, R@{self.k} {f(self.recall_at_k)}; "
                f"false common ground {self.false_common_ground}, camp ARI {f(self.camp_ari)}, {self.calls} calls, {self.wall_s:.0f} s")

    def metrics(self) -> dict[str, float]:
        out = {
            "polis_crux_precision": self.precision,
            "polis_recall_at_k": self.recall_at_k,
            "polis_false_common_ground": float(self.false_common_ground),
            "polis_camp_ari": self.camp_ari,
        }
        if self.held_out:
            out |= {"polis_sides_precision": self.sides_precision, "polis_sides_recall_at_k": self.sides_recall_at_k,
                    "polis_sides_f1": self.sides_f1}
        return out


def add_sides(score: PolisScore, sides: SidesScore) -> PolisScore:
    """``score`` with the held-out crux finding of ``sides`` filled in."""
    score.held_out = True
    score.matched_by_text, score.recovered = sides.matched_by_text, sides.recovered
    score.sides_wrong, score.no_sides, score.restated_topic = sides.sides_wrong, sides.no_sides, sides.restated_topic
    score.sides_precision, score.sides_recall_at_k, score.sides_f1 = sides.precision, sides.recall_at_k, sides.f1
    score.recovered_statements = list(sides.found)
    score.items = [{"text": j.item.text, "kind": j.item.kind, "yes": list(j.item.yes), "no": list(j.item.no),
                    "statement": j.statement, "closest": j.closest, "cosine": j.score, "matched": j.how,
                    "sides": j.sides, "recovered": j.recovered} for j in sides.judged]
    return score


def score_debate(
    result: DebateResult,
    truth: PolisTruth,
    library: PolisLibrary,
    group_ids: np.ndarray,
    *,
    threshold: float | None = None,
    encoder: Any = None,
    held: HeldOut | None = None,
) -> PolisScore:
    """Score one debate against the conversation's ground truth (module docstring); with
    ``held``, also its crux finding with sides against the held-out divisive statements."""
    items = crux_texts(result)
    cg = [g.statement for g in result.common_ground]
    matches = match_statements(
        [i.text for i in items] + cg, [i.kind for i in items] + ["common_ground"] * len(cg), truth,
        threshold=threshold, encoder=encoder,
    )
    cruxes, common = matches[: len(items)], matches[len(items):]
    hits = sum(1 for m in cruxes if m.divisive)
    top = truth.top_divisive
    found = sorted({m.statement for m in cruxes if m.statement in top}, key=top.index)
    score = PolisScore(
        run_id=result.run_id, engine=result.engine, conversation=truth.conversation, seed=result.config.seed,
        k=len(top), top_held=sum(1 for sid in top if sid in library.proposition_statement.values()),
        n_items=len(items), divisive_items=hits,
        precision=hits / len(items) if items else math.nan,
        recall_at_k=len(found) / len(top) if top else math.nan, found_top=found,
        n_common_ground=len(cg), false_common_ground=sum(1 for m in common if m.divisive),
        camp_ari=camp_ari(result.camps, library.persona_group, group_ids),
        calls=len(result.llm_calls), wall_s=round(result.duration_s, 3), complete=result.complete,
        matches=[asdict(m) for m in matches],
        prompt_tokens=sum(c.input_tokens for c in result.llm_calls),
        output_tokens=sum(c.output_tokens for c in result.llm_calls),
    )
    if held is None:
        return score
    return add_sides(score, score_sides(items_of(result), truth, held, library.persona_group, topic=library.topic,
                                         threshold=threshold, encoder=encoder))


def canary_scores(setup: PolisSetup, seed: int = 0, *, threshold: float | None = None, encoder: Any = None) -> list[PolisScore]:
    """The canaries of one prepared conversation with held-out statements, scored as debates are
    (engine ``canary:topic`` and ``canary:oracle``; no debate, no cost). Empty without a hold-out."""
    held, truth, lib = setup.held, setup.truth, setup.library
    if held is None:
        return []
    out = []
    for name, items in polis_canaries(truth, held, lib.persona_group, topic=lib.topic, encoder=encoder).items():
        base = PolisScore(run_id="", engine=f"canary:{name}", conversation=truth.conversation, seed=seed, k=len(held.divisive),
                          top_held=0, n_items=len(items), divisive_items=0, precision=math.nan, recall_at_k=math.nan,
                          found_top=[], n_common_ground=0, false_common_ground=0, camp_ari=math.nan, calls=0, wall_s=0.0,
                          complete=True)
        out.append(add_sides(base, score_sides(items, truth, held, lib.persona_group, topic=lib.topic,
                                                threshold=threshold, encoder=encoder)))
    return out


# ---------------------------------------------------------------------------
# Running the evaluation
# ---------------------------------------------------------------------------


@dataclass
class PolisSetup:
    """A conversation made ready to debate (runtime)."""

    conversation: PolisConversation
    truth: PolisTruth
    minds: list[GroupMind]
    skipped: list[str]  # one note per opinion group without a persona
    library: PolisLibrary
    held: HeldOut | None = None  # what the personas' minds leave out (None: minds from every statement)


def _summary_field(folder: Path, key: str) -> str:
    import csv

    path = folder / "summary.csv"
    if not path.is_file():
        return ""
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.reader(fh):
            if len(row) >= 2 and row[0] == key:
                return row[1]
    return ""


def prepare(
    folder: str | Path,
    library_root: str | Path,
    *,
    k: int = 5,
    min_votes: int = 5,
    min_difference: float = 0.25,
    per_group: int = 5,
    n_consensus: int = 2,
    min_clear: int = 3,
    topic: str | None = None,
    holdout: bool = True,
    holdout_seed: int = 0,
    near: float = NEAR_COSINE,
    fidelity_fraction: float = FIDELITY_FRACTION,
    encoder: Any = None,
) -> PolisSetup:
    """Load a conversation folder, compute its ground truth and personas, and write the persona
    library to ``library_root``. With ``holdout`` (the default) the minds leave out the top-k
    divisive statements, a seeded fifth of the other clear statements and every statement within
    cosine ``near`` of one of those (:mod:`crux_lab.analysis.polis_heldout`); the split is written
    to ``library_root/heldout.json``. Bad input raises :class:`PolisDataError` (one line naming the
    file and what is missing); a conversation that keeps fewer than two minds after the hold-out
    raises :class:`~crux_lab.analysis.polis_heldout.HoldOutError` with the counts."""
    folder = Path(folder)
    if not folder.is_dir():
        raise PolisDataError(f"{folder}: not a folder; pass a Polis conversation folder (participants-votes.csv, comments.csv).")
    for name in ("participants-votes.csv", "comments.csv"):
        if not (folder / name).is_file():
            raise PolisDataError(
                f"{folder / name}: file missing; a Polis conversation folder needs participants-votes.csv and "
                "comments.csv (copy the conversation's export folder whole)."
            )
    conv = load_conversation(folder)
    truth = ground_truth(conv, k=k, min_votes=min_votes, min_difference=min_difference,
                         url=_summary_field(folder, "url"), votes_file=folder / "participants-votes.csv")
    held = None
    if holdout:
        held = hold_out(truth, k=k, cosine=near, fraction=fidelity_fraction, seed=holdout_seed, encoder=encoder)
        minds, skipped = minds_without(truth, held, per_group=per_group, n_consensus=n_consensus, min_clear=min_clear)
    else:
        minds, skipped = group_minds(truth, per_group=per_group, n_consensus=n_consensus, min_clear=min_clear)
    chosen = (topic or "").strip() or debate_topic(conv, _summary_field(folder, "conversation-description"))
    library = write_polis_library(truth, minds, library_root, topic=chosen,
                                  votes_file=folder / "participants-votes.csv")
    if held is not None:
        (library.root / HELDOUT_FILE).write_text(json.dumps(held.as_dict(), indent=1) + "\n", encoding="utf-8")
    return PolisSetup(conv, truth, minds, skipped, library, held)


@dataclass
class PolisEvalRun:
    """What :func:`crux_lab.eval.polis.run_polis_eval` produced (runtime)."""

    setup: PolisSetup
    scores: list[PolisScore] = field(default_factory=list)
    results: list[DebateResult] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)  # "<arm>/s<seed>" -> error
    canaries: list[PolisScore] = field(default_factory=list)  # scored like debates, never stored as runs
    run_dirs: list[Path] = field(default_factory=list)
    db_path: Path | None = None
    wall_s: float = 0.0
    stopped: Any = None  # a crux_lab.runs.DebateStopped when a debate did not finish


def summarize(scores: Sequence[PolisScore]) -> list[dict[str, Any]]:
    """One row per engine (canaries last): mean precision, recall@k and camp ARI over its
    debates (with 95% bootstrap intervals over debates), false common ground in total, calls and
    wall time; with held-out statements, the crux finding with sides (precision, recall@k and F1
    against the held-out divisive statements, 95% intervals resampling whole conversations)."""
    rows = []
    for engine in dict.fromkeys(s.engine for s in scores):
        mine = [s for s in scores if s.engine == engine]
        precision = [s.precision for s in mine]
        recall = [s.recall_at_k for s in mine]
        rows.append({
            "engine": engine, "debates": len(mine),
            "conversations": len({s.conversation for s in mine}),
            "precision": _nanmean(precision), "precision_ci": _interval(precision),
            "recall_at_k": _nanmean(recall), "recall_ci": _interval(recall),
            "recall_ceiling": _nanmean([s.top_held / s.k if s.k else math.nan for s in mine]),
            "false_common_ground": sum(s.false_common_ground for s in mine),
            "common_ground": sum(s.n_common_ground for s in mine),
            "camp_ari": _nanmean([s.camp_ari for s in mine]),
            "items": sum(s.n_items for s in mine),
            "calls": sum(s.calls for s in mine), "wall_s": round(sum(s.wall_s for s in mine), 2),
        })
        held = [s for s in mine if s.held_out]
        convs = [s.conversation for s in held]
        sp, sr, sf = ([getattr(s, name) for s in held] for name in ("sides_precision", "sides_recall_at_k", "sides_f1"))
        rows[-1] |= {
            "held_out_debates": len(held), "matched_by_text": sum(s.matched_by_text for s in held),
            "recovered": sum(s.recovered for s in held), "sides_wrong": sum(s.sides_wrong for s in held),
            "no_sides": sum(s.no_sides for s in held), "restated_topic": sum(s.restated_topic for s in held),
            "sides_precision": _nanmean(sp), "sides_precision_ci": _cluster(sp, convs),
            "sides_recall_at_k": _nanmean(sr), "sides_recall_ci": _cluster(sr, convs),
            "sides_f1": _nanmean(sf), "sides_f1_ci": _cluster(sf, convs),
            "prompt_tokens": sum(s.prompt_tokens for s in mine), "output_tokens": sum(s.output_tokens for s in mine),
        }
    return sorted(rows, key=lambda r: r["engine"].startswith("canary:"))


def sides_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The rows of :func:`summarize` that have held-out debates as a Markdown table: cruxes
    recovered with sides against the held-out divisive statements, canaries last.

    >>> row = {"engine": "panel", "held_out_debates": 2, "items": 6, "matched_by_text": 2, "recovered": 1,
    ...        "sides_wrong": 1, "no_sides": 0, "restated_topic": 0, "sides_precision": 0.25,
    ...        "sides_precision_ci": (0.0, 0.5), "sides_recall_at_k": 0.1, "sides_recall_ci": (0.0, 0.2),
    ...        "sides_f1": 0.14, "sides_f1_ci": (0.0, 0.29), "calls": 40, "prompt_tokens": 1200, "output_tokens": 300}
    >>> print(sides_markdown([row, {"engine": "direct", "held_out_debates": 0}]).splitlines()[-1])
    | `panel` | 2 | 6 | 2 | 1 | 1 | 0 | 0 | 0.25 [0.00–0.50] | 0.10 [0.00–0.20] | 0.14 [0.00–0.29] | 40 | 1,200 / 300 |
    """
    head = ["arm", "debates", "items", "matched by text", "recovered with sides", "sides wrong", "no sides",
            "restated topic", "P [95% CI]", "recall@5 [95% CI]", "F1 [95% CI]", "calls", "tokens in / out"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        if not r.get("held_out_debates"):
            continue
        lines.append("| " + " | ".join([
            f"`{r['engine']}`", str(r["held_out_debates"]), str(r["items"]), str(r["matched_by_text"]),
            str(r["recovered"]), str(r["sides_wrong"]), str(r["no_sides"]), str(r["restated_topic"]),
            *(with_interval(r[key], r[ci]).replace("—", "–") for key, ci in
              (("sides_precision", "sides_precision_ci"), ("sides_recall_at_k", "sides_recall_ci"),
               ("sides_f1", "sides_f1_ci"))),
            str(r["calls"]), f"{r.get('prompt_tokens', 0):,} / {r.get('output_tokens', 0):,}",
        ]) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Notebook 07: one conversation at a glance
# ---------------------------------------------------------------------------


def divisive_frame(truth: PolisTruth) -> Any:
    """The divisive statements, most divisive first: id, text, divisiveness, top-k flag and
    each group's agree rate and votes."""
    import pandas as pd

    rows = []
    for rank, sid in enumerate(truth.divisive, start=1):
        s = truth.statements[sid]
        row: dict[str, Any] = {"rank": rank, "statement": sid, "text": s.text, "divisiveness": round(s.divisiveness, 3),
                               "top_k": rank <= truth.k}
        for g in s.groups:
            row[f"group {g.group} agree"] = round(g.agree_rate, 2)
            row[f"group {g.group} votes"] = g.seen
        rows.append(row)
    return pd.DataFrame(rows)


def crux_frame(run: PolisEvalRun) -> Any:
    """Every crux item and common-ground claim the engines reported, beside its closest
    statement and the match score (``matched``: at or above the calibrated threshold)."""
    import pandas as pd

    truth = run.setup.truth
    rows = []
    for score in run.scores:
        for m in score.matches:
            closest = m["closest"]
            rows.append({"engine": score.engine, "seed": score.seed, "kind": m["kind"], "found": m["text"],
                         "closest statement": closest,
                         "statement text": truth.statements[closest].text if closest else "",
                         "score": m["score"], "matched": m["statement"] is not None, "divisive": m["divisive"],
                         "top_k": m["statement"] in truth.top_divisive})
    return pd.DataFrame(rows)


def camp_frame(run: PolisEvalRun) -> Any:
    """Per engine and persona: the Polis group it stands for, the group's size, and the camp
    the engine put it in (empty: no camp)."""
    import pandas as pd

    lib = run.setup.library
    rows = []
    for result in run.results:
        for pid in lib.persona_ids:
            camp = next((c for c in result.camps if pid in c.persona_ids), None)
            group = lib.persona_group[pid]
            rows.append({"engine": result.engine, "seed": result.config.seed, "persona": pid, "Polis group": group,
                         "participants": run.setup.truth.group_sizes[group],
                         "engine camp": "" if camp is None else (camp.label or str(camp.index))})
    return pd.DataFrame(rows)
