"""``crux-lab eval recovery`` on any backend: planted scenarios debated, scored by text and sides.

Every arm (an engine with parameters, :func:`crux_lab.eval.items.parse_arm`) debates every
scenario once per seed. Speakers hold their planted beliefs in their own system prompts (the
persona library); extractors see the transcript; the ``direct`` and ``cot`` baselines see the
topic and the persona contracts in one call, or with ``informed=true`` the speakers' whole
system prompts. Each debate is scored by :func:`crux_lab.analysis.recovery.score_recovery`
(by text and sides, never ids), and so are the three canaries of every scenario
(:func:`crux_lab.analysis.recovery.canaries`). With ``items_dir``, each debate's and each
canary's compact record is written there (:mod:`crux_lab.eval.items`), so the table can be
scored again without the run folders.

``runs_dir`` holds one run folder per debate; a complete one is read back, not run again, so
an interrupted evaluation resumes where it stopped. A debate that does not finish (the server
went down, Ctrl-C) ends the evaluation: :attr:`RecoveryEval.stopped` says why, and every
debate finished before it is in ``runs_dir`` and in the returned scores.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crux_lab.analysis.recovery import Encoder, RecoveryScore, items_of, score_recovery
from crux_lab.analysis.scenarios import Scenario, scenario_digest, use_library
from crux_lab.eval.items import arm_label, canary_scores, debate_record, parse_arm, write_record
from crux_lab.llm.purposes import Purpose
from crux_lab.models.config import DebateConfig
from crux_lab.models.result import DebateResult
from crux_lab.runs import DebateStopped, cassette_path, run_or_resume

__all__ = ["LLMChoice", "RecoveryEval", "recovery_config", "run_recovery_eval"]

SWEEP_ID = "eval-recovery"


@dataclass(frozen=True)
class LLMChoice:
    """Which backend debates, and how: models per tier, the server, the structured mode."""

    backend: str = "simulated"
    models: Mapping[str, str] = field(default_factory=dict)
    base_url: str | None = None
    structured: str | None = None


@dataclass
class RecoveryEval:
    """What :func:`run_recovery_eval` produced (runtime)."""

    scores: list[RecoveryScore] = field(default_factory=list)
    results: list[DebateResult] = field(default_factory=list)
    run_dirs: list[Path] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)  # "<arm>/<scenario>/s<seed>" -> error
    canaries: list[RecoveryScore] = field(default_factory=list)  # scored like debates, never stored as runs
    stopped: DebateStopped | None = None
    wall_s: float = 0.0


def poll_record(result: DebateResult) -> dict[str, Any] | None:
    """What a record keeps of a debate's poll (:func:`crux_lab.eval.items.debate_record`): the
    candidates with the debate's own sides, the side flips, and the poll's calls and tokens
    (its ``poll`` and ``pivot`` requests); None when no poll ran."""
    if result.poll is None or result.poll.status != "done":
        return None
    calls = [c for c in result.llm_calls if c.purpose in (Purpose.poll, Purpose.pivot)]
    return {
        "debate_items": items_of(result, as_debated=True),
        "flips": result.poll.flips, "calls": len(calls), "tokens": sum(c.input_tokens + c.output_tokens for c in calls),
    }


def recovery_config(
    scenario: Scenario,
    engine: str,
    seed: int,
    *,
    deck: str,
    llm: LLMChoice = LLMChoice(),
    max_turns: int = 30,
    backend_options: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
) -> DebateConfig:
    """The debate of one scenario, engine and seed (``deck`` names the scenario and its digest)."""
    return DebateConfig(
        topic=scenario.topic, persona_ids=list(scenario.persona_ids), engine=engine, backend=llm.backend,
        seed=seed, max_turns=max_turns, backend_options=dict(backend_options or {}), deck=deck, params=dict(params or {}),
        models=dict(llm.models), base_url=llm.base_url, structured=llm.structured,
    )


def run_recovery_eval(
    scenarios: Sequence[Scenario],
    engines: Sequence[str],
    library: str | Path,
    runs_dir: str | Path,
    *,
    llm: LLMChoice = LLMChoice(),
    seeds: Sequence[int] = (0,),
    max_turns: int = 30,
    backend_options: Mapping[str, Any] | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    cassettes: str | Path | None = None,
    encoder: Encoder | None = None,
    on_result: Callable[[RecoveryScore, bool], None] | None = None,
    items_dir: str | Path | None = None,
) -> RecoveryEval:
    """Debate every scenario of ``library`` (already written: :func:`write_library`, or a
    researcher's folder read by :func:`load_scenarios`) with every arm of ``engines`` (engine
    names, or ``engine+key=value`` arms), once per seed, and score each debate; ``params``
    (engine -> parameters) apply under an arm's own. Seeds run one after another (all of seed 0
    first), so a stopped run has whole seeds done. ``cassettes``: one cassette per debate,
    ``<scenario>-<arm>-s<seed>.jsonl``, recorded on a live backend, replayed with
    ``backend="replay"``. ``on_result(score, resumed)`` after each debate. ``items_dir``: write
    each debate's and each canary's compact record there."""
    started = time.perf_counter()
    out = RecoveryEval()
    decks = {s.id: f"{s.id}-{scenario_digest(library, s)}" for s in scenarios}
    arms = []
    for spec in engines:
        engine, own = parse_arm(spec)
        merged = {**(params or {}).get(engine, {}), **own}
        arms.append((arm_label(engine, own) if own else engine, engine, merged))
    model = llm.models.get("strong", "") if llm.models else ""
    with use_library(library):
        try:
            for seed in seeds:
                for scenario in scenarios:
                    for canary in canary_scores(scenario, seed, encoder):
                        out.canaries.append(canary)
                        if items_dir is not None:
                            write_record(items_dir, debate_record(canary, arm=canary.engine, engine=canary.engine, params={}, seed=seed))
                    for label_arm, engine, arm_params in arms:
                        label = f"{label_arm}/{scenario.id}/s{seed}"
                        config = recovery_config(scenario, engine, seed, deck=decks[scenario.id], llm=llm,
                                                 max_turns=max_turns, backend_options=backend_options,
                                                 params=arm_params)
                        try:
                            done = run_or_resume(config, runs_dir, label=label, sweep_id=SWEEP_ID,
                                                 cassette=cassette_path(cassettes, scenario.id, label_arm.replace("+", "_"), f"s{seed}"))
                        except DebateStopped:
                            raise
                        except Exception as exc:  # one engine's bug must not cost the others' runs
                            out.failures[label] = f"{type(exc).__name__}: {exc}"
                            continue
                        score = score_recovery(done.result, scenario, encoder)
                        score.engine, score.seed = label_arm, seed
                        out.results.append(done.result)
                        out.scores.append(score)
                        out.run_dirs.append(done.run_dir)
                        if items_dir is not None:
                            write_record(items_dir, debate_record(
                                score, arm=label_arm, engine=engine, params=arm_params, seed=seed,
                                common_ground=[g.statement for g in done.result.common_ground],
                                personas=done.result.persona_names, model=model, poll=poll_record(done.result),
                            ))
                        if on_result is not None:
                            on_result(score, done.resumed)
        except DebateStopped as stop:
            out.stopped = stop
    out.wall_s = round(time.perf_counter() - started, 3)
    return out
