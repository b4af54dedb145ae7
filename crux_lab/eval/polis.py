"""Run the Polis evaluation: debate one prepared conversation with every engine and seed.

The orchestration half of :mod:`crux_lab.analysis.polis_eval` (which prepares a conversation
and scores a debate, purely): runs or resumes each debate (:mod:`crux_lab.runs`), scores
it, then ingests the run folders and records the scores in the database.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from crux_lab.analysis.polis_eval import (
    HELDOUT_FILE,
    PolisEvalRun,
    PolisScore,
    PolisSetup,
    add_sides,
    camp_frame,
    canary_scores,
    crux_frame,
    divisive_frame,
    prepare,
    score_debate,
    summarize,
)
from crux_lab.analysis.recovery import _repo_path
from crux_lab.analysis.scenarios import use_library
from crux_lab.backends import OFFLINE
from crux_lab.eval.items import arm_label, parse_arm, write_record
from crux_lab.models.config import DebateConfig
from crux_lab.models.domain import PersonaPollAnswer
from crux_lab.models.result import DebateResult
from crux_lab.runs import DebateStopped, cassette_path, is_finished, run_or_resume
from crux_lab.store import connect, ingest, record_metrics, resolve_db_path
from crux_lab.store.runfiles import find_run_dirs, load_result

__all__ = [
    "FidelityItems",
    "ask_each_persona",
    "conversation_view",
    "finished_runs",
    "polis_record",
    "rescore_fidelity",
    "rescore_polis",
    "run_polis_eval",
]



def run_polis_eval(
    setup: PolisSetup,
    engines: Sequence[str],
    workdir: str | Path,
    *,
    backend: str = OFFLINE,
    seeds: Sequence[int] = (0,),
    max_turns: int = 30,
    models: Mapping[str, str] | None = None,
    base_url: str | None = None,
    structured: str | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    cassettes: str | Path | None = None,
    db: str | Path | None = None,
    store: bool = True,
    encoder: Any = None,
    on_result: Callable[[PolisScore], None] | None = None,
    items_dir: str | Path | None = None,
) -> PolisEvalRun:
    """Debate one prepared conversation (:func:`prepare`) with every arm of ``engines`` (engine
    names, or ``engine+key=value`` arms such as ``direct+informed=true+samples=4``:
    :func:`crux_lab.eval.items.parse_arm`) and seed, score each debate, and (``store``) ingest
    the run folders and record the scores in the database. With held-out statements, the
    canaries are scored beside (:func:`~crux_lab.analysis.polis_eval.canary_scores`, in
    ``canaries``) and the split is written into every run folder (``heldout.json``).
    ``items_dir``: write each debate's and canary's compact record there (:func:`polis_record`;
    commit it and :func:`rescore_polis` rebuilds the table without the run folders).

    ``workdir/runs/`` holds one folder per debate; a complete one is reused, not run again. ``cassettes`` is a folder of one cassette
    per debate (``<conversation>-<engine>-s<seed>.jsonl``): recorded on a live backend, replayed
    with ``backend="replay"``. A debate that does not finish (the server went down, Ctrl-C)
    ends the loop: ``stopped`` says why; what finished before it is kept and stored.
    """
    started = time.perf_counter()
    out = PolisEvalRun(setup)
    runs_dir = Path(workdir) / "runs"
    lib = setup.library
    arms = []
    for spec in engines:
        engine, own = parse_arm(spec)
        arms.append((arm_label(engine, own) if own else engine, engine, {**(params or {}).get(engine, {}), **own}))
    with use_library(lib.root):
        try:
            model = (models or {}).get("strong", "")
            for seed in seeds:
                for canary in canary_scores(setup, seed, encoder=encoder):
                    out.canaries.append(canary)
                    if items_dir is not None:
                        write_record(items_dir, polis_record(canary, setup))
                for arm, engine, arm_params in arms:
                    config = DebateConfig(
                        topic=lib.topic, persona_ids=list(lib.persona_ids), engine=engine, backend=backend, seed=seed,
                        max_turns=max_turns, deck=lib.deck_id, params=arm_params,
                        models=dict(models or {}), base_url=base_url, structured=structured,
                    )
                    label = f"{arm}/s{seed}"
                    try:
                        done = run_or_resume(config, runs_dir, label=f"{setup.truth.conversation}/{label}",
                                             sweep_id="eval-polis",
                                             cassette=cassette_path(cassettes, setup.truth.conversation,
                                                                    arm.replace("+", "_"), f"s{seed}"))
                    except DebateStopped:
                        raise
                    except Exception as exc:  # one engine's failure must not cost the others' runs
                        out.failures[label] = f"{type(exc).__name__}: {exc}"
                        continue
                    score = _add(out, done.result, done.run_dir, resumed=done.resumed, encoder=encoder, arm=arm)
                    if items_dir is not None and setup.held is not None:
                        write_record(items_dir, polis_record(score, setup, params=arm_params, model=model))
                    if on_result is not None:
                        on_result(score)
        except DebateStopped as stop:
            out.stopped = stop
    if store and out.results:
        out.db_path = _store(out, db)
    out.wall_s = round(time.perf_counter() - started, 3)
    return out


def _add(out: PolisEvalRun, result: DebateResult, run_dir: Path, *, resumed: bool, encoder: Any = None,
         arm: str | None = None) -> PolisScore:
    """Score one finished debate of ``out``'s conversation and keep it, with its run folder
    (into which the held-out split is written, ``heldout.json``)."""
    setup = out.setup
    score = score_debate(result, setup.truth, setup.library, setup.conversation.group_ids, encoder=encoder,
                         held=setup.held)
    score.resumed = resumed
    if arm is not None:
        score.engine = arm
    if setup.held is not None:
        (run_dir / HELDOUT_FILE).write_text(json.dumps(setup.held.as_dict(), indent=1) + "\n", encoding="utf-8")
    out.results.append(result)
    out.scores.append(score)
    out.run_dirs.append(run_dir)
    return score


def finished_runs(setup: PolisSetup, runs: str | Path, engines: Sequence[str], *, seed: int = 0) -> PolisEvalRun:
    """The finished debates of one prepared conversation in the folder ``runs`` (those on its
    persona library, by ``engines``, at ``seed``), scored as :func:`run_polis_eval` scores them;
    nothing is debated. A folder that is not there or holds no run folder is a
    :class:`~crux_lab.store.runfiles.RunFolderError` naming it."""
    out = PolisEvalRun(setup)
    labels = {}
    for spec in engines:
        engine, own = parse_arm(spec)
        labels[arm_label(engine, own) if own else engine] = spec
    for run_dir in find_run_dirs([runs]):
        if not is_finished(run_dir):
            continue  # unfinished or unreadable: a rerun of the eval redoes these, a view skips them
        result = load_result(run_dir)
        params = result.config.params
        arm = arm_label(result.engine, params) if params else result.engine
        if result.config.deck != setup.library.deck_id or arm not in labels or result.config.seed != seed:
            continue
        _add(out, result, run_dir, resumed=True, arm=labels[arm])
    order = {e: i for i, e in enumerate(engines)}
    out.scores.sort(key=lambda s: order[s.engine])
    out.results.sort(key=lambda r: order[r.engine])
    return out


def _store(out: PolisEvalRun, db: str | Path | None) -> Path:
    path = resolve_db_path(db)
    con = connect(path)
    try:
        ingest(out.run_dirs, con)
        held = out.setup.held.as_dict() if out.setup.held is not None else None
        for s in out.scores:
            detail = {key: v for key, v in asdict(s).items() if key not in ("precision", "recall_at_k", "camp_ari")}
            detail["thresholds"] = out.setup.truth.thresholds()
            detail["top_divisive"] = list(out.setup.truth.top_divisive)
            detail["heldout"] = held
            details: dict[str, Any] = {"polis_crux_precision": detail}
            if held is not None:
                details["polis_sides_f1"] = {"arm": s.engine, "heldout": held, "items": s.items}
            record_metrics(con, s.run_id, s.metrics(), details)
    finally:
        con.close()
    return path


def conversation_view(
    folder: str | Path | None,
    engines: Sequence[str],
    *,
    backend: str = OFFLINE,
    seed: int = 0,
    max_turns: int = 30,
    workdir: str | Path | None = None,
    runs: str | Path | None = None,
    holdout: bool = False,
) -> dict[str, Any]:
    """Notebook 07's Polis view of one conversation: run the engines (not stored; finished
    debates in ``workdir`` are reused), or, with ``runs``, read the finished debates of this
    conversation in that folder (a real model's, from ``benchmarks/polis_eval.py``) without
    debating; return DataFrames ``divisive``, ``cruxes``, ``camps``, ``summary``, and ``notes``
    (skipped groups, failures, or why nothing ran). The personas hold every statement unless
    ``holdout`` (the evaluation's split, :mod:`crux_lab.analysis.polis_heldout`)."""
    import pandas as pd  # loaded on use: the CLI imports this module at start

    empty = {"divisive": pd.DataFrame(), "cruxes": pd.DataFrame(), "camps": pd.DataFrame(), "summary": pd.DataFrame()}
    path = _repo_path(folder)
    if path is None or not path.is_dir():
        return {**empty, "notes": [f"no Polis conversation at {str(folder)!r}"]}
    work = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="crux-polis-"))
    setup = prepare(path, work / "library" / path.name, holdout=holdout)
    if runs:
        run = finished_runs(setup, runs, engines, seed=seed)
    else:
        run = run_polis_eval(setup, engines, work, backend=backend, seeds=(seed,), max_turns=max_turns, store=False)
    notes = list(setup.skipped) + [f"failed {k}: {v}" for k, v in run.failures.items()]
    if runs and not run.results:
        notes.append(f"no finished debate of {setup.truth.conversation} by {', '.join(engines)} (seed {seed}) in {runs}")
    summary = pd.DataFrame(summarize(run.scores))
    return {"divisive": divisive_frame(setup.truth), "cruxes": crux_frame(run), "camps": camp_frame(run),
            "summary": summary, "notes": notes, "topic": setup.library.topic}


def ask_each_persona(
    setup: PolisSetup,
    *,
    backend: str = OFFLINE,
    seed: int = 0,
    models: Mapping[str, str] | None = None,
    base_url: str | None = None,
    structured: str | None = None,
    known: Mapping[tuple[str, str], str] | None = None,
    on_answer: Callable[[str, str, PersonaPollAnswer], None] | None = None,
) -> dict[tuple[str, str], str]:
    """Persona fidelity's answers, from the poll: each persona of ``setup``, alone with its own
    system prompt, is asked each held-out fidelity statement as the poll asks a candidate crux
    (:func:`crux_lab.engines.poll.ask_alone`: hold or reject the view), one request per persona
    and statement. Returns ``{(persona_id, statement_id): "YES" | "NO" | "UNSURE"}``, the mapping
    :func:`crux_lab.analysis.polis_fidelity.score_fidelity` reads; empty when the setup has no
    held-out statements. Pairs in ``known`` are not asked again (a resumed run); ``on_answer``
    gets each new answer whole, with its reason, as it comes. On the simulator a persona answers
    from its mind: the closest of its views by shared words, as the poll's simulator reads it."""
    from crux_lab.engines.poll import ask_alone
    from crux_lab.runner import DebateRun

    held, lib = setup.held, setup.library
    if held is None or not held.fidelity:
        return {}
    texts = {sid: setup.truth.statements[sid].text for sid in held.fidelity}
    with use_library(lib.root):
        config = DebateConfig(topic=lib.topic, persona_ids=list(lib.persona_ids), engine="direct", backend=backend,
                              seed=seed, deck=lib.deck_id, models=dict(models or {}), base_url=base_url,
                              structured=structured)
        run = DebateRun(config)

        async def ask() -> dict[tuple[str, str], str]:
            out: dict[tuple[str, str], str] = {}
            try:
                for pid in lib.persona_ids:
                    for sid, text in texts.items():
                        if known is not None and (pid, sid) in known:
                            out[(pid, sid)] = known[(pid, sid)]
                            continue
                        reply = await ask_alone(run.ctx, pid, text)
                        out[(pid, sid)] = reply.answer
                        if on_answer is not None:
                            on_answer(pid, sid, reply)
            finally:
                close = getattr(run.ledger.backend, "aclose", None)
                if close is not None:
                    await close()
            return out

        return asyncio.run(ask())


class FidelityItems:
    """One conversation's fidelity answers kept as they come, in ``<folder>/<conversation>.json``:
    the held-out statements asked, and each persona's answer with its reason. A stopped run
    resumes from the file (:attr:`known`); :func:`rescore_fidelity` scores a folder of them again.
    The file is rewritten whole after each answer (atomically), so it is never half written."""

    def __init__(self, folder: str | Path, setup: PolisSetup, *, model: str = "", backend: str = OFFLINE) -> None:
        if setup.held is None:
            raise ValueError(f"{setup.truth.conversation}: no held-out statements to keep fidelity answers for")
        self.path = Path(folder) / f"{setup.truth.conversation}.json"
        self.record: dict[str, Any] = {
            "version": 1, "conversation": setup.truth.conversation, "backend": backend, "model": model,
            "topic": setup.library.topic, "personas": dict(setup.library.persona_group),
            "fidelity": list(setup.held.fidelity), "answers": [],
        }
        if self.path.is_file():
            old = json.loads(self.path.read_text(encoding="utf-8"))
            same = all(old.get(k) == self.record[k] for k in ("backend", "model", "fidelity", "personas"))
            if not same:
                raise ValueError(f"{self.path}: answers from another model, backend or held-out split; "
                                 "move the file away to ask again.")
            self.record["answers"] = list(old.get("answers", []))

    @property
    def known(self) -> dict[tuple[str, str], str]:
        """The answers kept so far, as :func:`ask_each_persona` reads them."""
        return {(a["persona"], a["statement"]): a["answer"] for a in self.record["answers"]}

    def add(self, persona_id: str, statement_id: str, reply: PersonaPollAnswer) -> None:
        """Keep one answer and write the file."""
        self.record["answers"].append({"persona": persona_id, "statement": statement_id, "answer": reply.answer,
                                       "confidence": reply.confidence, "reason": reply.reason})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp.replace(self.path)


def rescore_fidelity(items_dir: str | Path, data: str | Path, *,
                     prepared: dict[str, PolisSetup] | None = None) -> list[dict[str, Any]]:
    """Every conversation's fidelity answers in ``items_dir`` (:class:`FidelityItems`) scored
    again: the conversation prepared from ``data/<conversation>/`` as the run prepared it, and
    one :func:`~crux_lab.analysis.polis_fidelity.fidelity_row` each, beside both baselines. A
    file whose held-out statements differ from the ones the data gives now, or that cannot be
    read, raises :class:`~crux_lab.eval.items.ItemsError` naming the file and the field.
    ``prepared`` keeps each conversation prepared once across calls (several folders)."""
    from crux_lab.analysis.polis_fidelity import fidelity_row
    from crux_lab.eval.items import ItemsError

    rows = []
    for path in sorted(Path(items_dir).glob("*.json")):
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
            answers = {(a["persona"], a["statement"]): a["answer"] for a in rec["answers"]}
            conv, asked = rec["conversation"], list(rec["fidelity"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ItemsError(f"{path}: {exc}; a fidelity file needs conversation, fidelity and answers "
                             "(persona, statement, answer each), as crux_lab.eval.polis.FidelityItems writes it.") from None
        prepared = {} if prepared is None else prepared
        if conv not in prepared:
            with tempfile.TemporaryDirectory() as tmp:
                prepared[conv] = prepare(Path(data) / conv, Path(tmp) / conv)
        setup = prepared[conv]
        if setup.held is None or list(setup.held.fidelity) != asked:
            raise ItemsError(f"{path}: field 'fidelity' lists other held-out statements than {Path(data) / conv} "
                             "gives now; run the fidelity answers again.")
        rows.append(fidelity_row(answers, setup.truth, setup.held, setup.minds))
    return rows


def polis_record(score: PolisScore, setup: PolisSetup, *, params: Mapping[str, Any] | None = None,
                 model: str = "") -> dict[str, Any]:
    """One debate's (or canary's) compact record, JSON-ready and small enough to commit: its crux
    items with their sides and what the scorer made of them, its cost, and the held-out split it
    was scored against. :func:`rescore_polis` scores a folder of them again."""
    held = setup.held.as_dict() if setup.held is not None else None
    return {
        "version": 1, "arm": score.engine, "engine": score.engine.split("+")[0], "params": dict(params or {}),
        "scenario": setup.truth.conversation, "conversation": setup.truth.conversation, "seed": score.seed,
        "run_id": score.run_id, "model": model, "calls": score.calls, "prompt_tokens": score.prompt_tokens,
        "output_tokens": score.output_tokens, "wall_s": round(score.wall_s, 1), "topic": setup.library.topic,
        "personas": dict(setup.library.persona_group), "heldout": held,
        "items": [{k: i[k] for k in ("text", "kind", "yes", "no", "statement", "cosine", "sides", "recovered")}
                  for i in score.items],
    }


def rescore_polis(items_dir: str | Path, data: str | Path, *, encoder: Any = None) -> list[PolisScore]:
    """Every record in ``items_dir`` (:func:`polis_record`, one JSON file each) scored again with
    the current scorer: its conversation's truth from ``data/<conversation>/``, its held-out
    split and personas as recorded. A record that cannot be read raises
    :class:`~crux_lab.eval.items.ItemsError` naming the file and the field."""
    from crux_lab.analysis.polis import load_conversation
    from crux_lab.analysis.polis_heldout import HeldOut
    from crux_lab.analysis.polis_heldout import score_items as score_sides
    from crux_lab.analysis.polis_truth import ground_truth
    from crux_lab.analysis.recovery import Item
    from crux_lab.eval.items import ItemsError

    truths: dict[str, Any] = {}
    out = []
    for path in sorted(Path(items_dir).glob("*.json")):
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))
            conv, held_raw, groups = rec["conversation"], rec["heldout"], rec["personas"]
            held = HeldOut(
                conversation=str(held_raw["conversation"]), divisive=tuple(held_raw["divisive"]),
                fidelity=tuple(held_raw["fidelity"]), near=tuple(held_raw["near"]), k=int(held_raw["k"]),
                cosine=float(held_raw["cosine"]), fraction=float(held_raw["fraction"]), seed=int(held_raw["seed"]),
                clear_left=int(held_raw["clear_left"]),
            )
            items = [Item(i["text"], tuple(i.get("yes") or ()), tuple(i.get("no") or ()), i.get("kind", "crux"))
                     for i in rec["items"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ItemsError(f"{path}: {exc}; a Polis record needs conversation, heldout, personas and items "
                             "(as crux_lab.eval.polis.polis_record writes them).") from None
        if conv not in truths:
            truths[conv] = ground_truth(load_conversation(Path(data) / conv), k=len(held.divisive))
        sides = score_sides(items, truths[conv], held, groups, topic=rec.get("topic", ""), encoder=encoder)
        score = PolisScore(run_id=rec.get("run_id", ""), engine=rec["arm"], conversation=conv, seed=rec.get("seed", 0),
                           k=len(held.divisive), top_held=0, n_items=len(items), divisive_items=0,
                           precision=float("nan"), recall_at_k=float("nan"), found_top=[], n_common_ground=0,
                           false_common_ground=0, camp_ari=float("nan"), calls=rec.get("calls", 0),
                           wall_s=rec.get("wall_s", 0.0), complete=True, prompt_tokens=rec.get("prompt_tokens", 0),
                           output_tokens=rec.get("output_tokens", 0))
        out.append(add_sides(score, sides))
    return out
