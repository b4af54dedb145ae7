"""How well the persona speakers held up in debate run folders: echoes, roles, recited sides, cost.

For the issue "Speakers that hold their side on a small model": run it on the run folders of a
recovery evaluation before and after a change to how persona turns are requested, and compare.

    PYTHONPATH=. .venv/bin/python benchmarks/speaker_health.py RUNS_DIR [RUNS_DIR ...] \\
        --scenarios benchmarks/scenarios/dev [--out FILE.json] [--label before]

A RUNS_DIR holds run folders (each with result.json), e.g. the ``--runs-dir`` of
``crux-lab eval recovery``; ``--scenarios`` is the scenario folder those debates were run on
(the planted stances are the truth). Per run, and summed per engine:

- ``persona_turns``: persona turns attempted, kept and kept out by a guard, as
  :func:`crux_lab.analysis.metrics.guard_rates` counts them;
- ``echo_rate``: echo guard firings (one warning event each) per persona turn attempted, and
  ``kept_out_echo``, the echo firings that kept a turn out;
- ``kept_repeats``: kept turns that repeat the topic or an earlier kept turn by the echo
  guard's rule as it is now (:func:`crux_lab.engines.guards.echo_problem`), so a run made under an
  older rule, or a copy a repair let through, is read the same way; ``repeat_rate`` is
  (kept-out echoes + kept repeats) per persona turn attempted;
- ``role_flags``: kept turns with ``role_flag`` set, and ``guard_role``: role guard firings;
- ``role_consistency``: among kept turns with stance pro or con whose addressed claim (the
  engine's own id) ties to a planted proposition by the recovery scorer's text match, the share
  whose stance is the speaker's planted stance on it (``role_n`` turns judged);
- ``recites_rejected``: the share of kept turns that contain a proposition the speaker's
  planted stance rejects (``containment >= 0.6`` of its word triples), with up to 5 examples;
- ``ended_early``: the guards ended the debate ("debate ended early");
- ``calls``, ``prompt_tokens_per_persona_turn`` (uncached) and ``cached_tokens_per_persona_turn``
  over the speaking purposes' calls, and ``wall_s`` of the run.

Writes benchmarks/results/speaker_health[-LABEL].json (or ``--out``) and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from crux_lab.analysis.metrics import guard_counts, guard_rates
from crux_lab.analysis.recovery import Encoder, closest_to_topic, match_texts
from crux_lab.analysis.scenarios import PlantedProposition, Scenario, ScenarioError, load_scenarios
from crux_lab.engines.guards import clipped, containment, echo_problem, said_of
from crux_lab.models import DebateResult, DialogueTurn
from crux_lab.models.events import EngineError
from crux_lab.personas.reading import read_stance, split_sentences

OUT_DIR = Path(__file__).resolve().parent / "results"
# The purposes whose calls ask for one persona turn (tests/engines/test_real_model_cassettes.py,
# PERSONA_TURNS): the calls and tokens below are over these.
SPEAKING = ("opening", "take", "rebuttal", "crux_turn", "closing", "dialogue_turn", "resolution",
            "channel_message", "agent_turn", "blackboard_turn", "initial_arguments")
RECITES_AT = 0.6  # containment of a proposition's word triples in a turn that recites it
EXAMPLES = 5
EXAMPLE_WORDS = 40
TOPIC = "topic"  # the engines' id of the debate topic itself

NOTES = [
    "persona_turns, guard_echo, guard_role, echo_rate and ended_early are crux_lab.analysis.metrics.guard_rates "
    "and guard_counts (one warning event per firing); kept_out_echo counts the guard_echo events whose "
    "outcome says the turn was skipped, the rule guard_rates counts kept-out turns by.",
    "role_consistency ties a turn's addressed claim ids (the engine's own: topic, c1, arg-4, d-0, a-3) to "
    "their text, then the text to a planted proposition by the recovery scorer's match "
    "(crux_lab.analysis.recovery.match_texts, calibrated threshold); the topic ties when a proposition's "
    "cosine reaches that threshold. It assumes a claim and its proposition have the same polarity (pro on "
    "the claim is pro on the proposition): a dialogue argument worded as a speaker's stance (\"I don't accept "
    "that X\") ties to X, and a turn's stance is read as its stance on X, as the simulator gives it and as "
    "the role guard compares stances. A turn is judged on the first of its addressed ids that ties to a "
    "proposition the speaker holds pro or con.",
    "Claim texts come from: the topic (config), claims_decomposed events (blackboard: c1, c2...), graph "
    "arguments (result and events), DCG disputes (result and events), crux rooms' questions (the id the "
    "room's turns address besides topic) and detected disagreements that carry their id. Panel and "
    "crux_rooms record no text for a claim id that never got a room, so turns addressing only such ids "
    "are not judged.",
    "recites_rejected reads words only (containment >= 0.6 of the proposition's word triples in the turn): "
    "a turn that quotes or denies a proposition the speaker rejects (\"I don't accept that ...\") contains its "
    "words too and counts. recites_rejected_asserted counts only the turns where a sentence that contains "
    "it states it as the speaker's own: not a question, no quotation mark, and read as pro by "
    "crux_lab.personas.reading.read_stance (not a denial, not a doubt).",
    "calls and tokens are over the speaking purposes' rows of result.json's llm_calls (the ledger; also "
    "tables/llm_calls.parquet): input_tokens are uncached prompt tokens, cache_read_tokens the cached "
    "ones. Per persona turn = over persona turns attempted. cached_tokens_per_persona_turn is null when "
    "no such call recorded a cache figure (the backend reported none).",
    "wall_s is result.json's duration_s, the runner's wall clock of the debate (a replayed cassette's "
    "run is replay time); when it is 0, the span of the event timestamps.",
    "Runs of engines without persona turns (direct, cot) are left out, as guard_rates leaves them out. "
    "Totals are per engine, as guard_rates groups them: arms of one engine with other params are summed "
    "(each row carries its params).",
]


class BadInput(ValueError):
    """A path the script cannot read; the message names it and the fix."""


# ---------------------------------------------------------------------------
# Reading run folders
# ---------------------------------------------------------------------------


def run_folders(paths: Sequence[Path]) -> list[Path]:
    """The run folders (with result.json) in ``paths``, each a run folder or a folder of them."""
    found: list[Path] = []
    for p in paths:
        if not p.is_dir():
            raise BadInput(f"{p}: no such folder; pass a folder of run folders (the --runs-dir of crux-lab eval recovery).")
        here = [p] if (p / "result.json").is_file() else sorted(
            f.parent for f in p.rglob("result.json") if not any(part.startswith(".") for part in f.relative_to(p).parts)
        )
        if not here:
            raise BadInput(f"{p}: no run folders in it (none holds result.json); pass the --runs-dir of crux-lab "
                           "eval recovery, or a folder of run folders.")
        found += here
    return found


_TURN_FIELDS = frozenset(DialogueTurn.model_fields)
_TURN_KEYS = frozenset(("turn_index", "persona_id", "dialogue", "phase"))


def _known_turn_fields(node: Any) -> Any:
    """``node`` with the turn fields this version of DialogueTurn does not know left out of every
    turn in it (a run written by a newer version, e.g. with ``role_flag``, still loads)."""
    if isinstance(node, list):
        return [_known_turn_fields(v) for v in node]
    if not isinstance(node, dict):
        return node
    a_turn = node.keys() >= _TURN_KEYS
    return {k: _known_turn_fields(v) for k, v in node.items() if not a_turn or k in _TURN_FIELDS}


def load_run(folder: Path) -> tuple[DebateResult, list[dict[str, Any]]]:
    """The run's result, and its transcript as stored (turn fields this version may not know,
    such as ``role_flag``, are read from these)."""
    raw = json.loads((folder / "result.json").read_text(encoding="utf-8"))
    turns = list(raw.get("transcript") or [])
    return DebateResult.model_validate(_known_turn_fields(raw)), turns


def scenario_of(result: DebateResult, scenarios: Sequence[Scenario]) -> Scenario | None:
    """The scenario a run debated: the one with its personas (and its topic, if several have)."""
    same = [s for s in scenarios if set(s.persona_ids) == set(result.config.persona_ids)]
    if len(same) > 1:
        same = [s for s in same if s.topic == result.config.topic] or same[:1]
    return same[0] if same else next((s for s in scenarios if s.topic == result.config.topic), None)


# ---------------------------------------------------------------------------
# Claims and their propositions
# ---------------------------------------------------------------------------


def claim_texts(result: DebateResult) -> dict[str, str]:
    """The engine's own claim ids and their texts, as the run recorded them (a later text of an
    id replaces an earlier one; the result's final state comes last)."""
    out: dict[str, str] = {TOPIC: result.config.topic}
    rooms: dict[str, str] = {}
    for e in result.events:
        kind = getattr(e, "type", "")
        if kind == "claims_decomposed":
            out.update({f"c{i + 1}": str(text) for i, text in enumerate(getattr(e, "claims", []))})
        elif kind == "crux_room_spawning":
            rooms[str(getattr(e, "room_id", ""))] = str(getattr(e, "question", ""))
        elif kind == "disagreement_detected":
            cand = getattr(e, "candidate", None)
            if cand is not None and cand.proposition_id:
                out[cand.proposition_id] = cand.claim
        graph = getattr(e, "graph", None)
        args = [*(graph.arguments if graph is not None else []), *getattr(e, "new_args", []),
                *getattr(e, "arguments", []), *getattr(e, "counter_arguments", [])]
        out.update({a.id: a.claim for a in args})
        dcg = getattr(e, "dcg", None)
        if dcg is not None:
            out.update({d.id: d.question for d in dcg.disputes})
    out.update({a.id: a.claim for a in result.graph.arguments})
    out.update({d.id: d.question for d in result.dcg.disputes})
    for t in result.transcript:  # a room's turns address its claim (and the topic) only
        ids = [i for i in t.proposition_ids if i != TOPIC]
        if t.room_id in rooms and len(ids) == 1:
            out.setdefault(ids[0], rooms[t.room_id])
    return out


def tie_claims(claims: Mapping[str, str], scenario: Scenario, encoder: Encoder) -> dict[str, PlantedProposition]:
    """Claim id -> the planted proposition its text states, by the recovery scorer's match; the
    topic to the contested proposition closest to it, as the topic canary reads its sides
    (:func:`~crux_lab.analysis.recovery.closest_to_topic`; the scorer's rule against restating
    the topic would refuse it)."""
    by_id = {p.id: p for p in scenario.propositions}
    ids = [k for k in claims if k != TOPIC]
    out = {k: by_id[m.proposition_id] for k, m in zip(ids, match_texts([claims[k] for k in ids], scenario, encoder), strict=True)
           if m.proposition_id is not None}
    if TOPIC in claims:
        out[TOPIC] = closest_to_topic(scenario, encoder)
    return out


def role_consistency(turns: Iterable[DialogueTurn], ties: Mapping[str, PlantedProposition]) -> tuple[int, int]:
    """(turns whose stance is the speaker's planted stance, turns judged): kept turns with stance
    pro or con, judged on the first addressed id that ties to a proposition the speaker holds
    pro or con."""
    held = judged = 0
    for t in turns:
        if t.stance not in ("pro", "con"):
            continue
        planted = next((s for i in t.proposition_ids if i in ties and (s := ties[i].stances.get(t.persona_id)) in ("pro", "con")), None)
        if planted is not None:
            judged += 1
            held += planted == t.stance
    return held, judged


def recitations(turns: Iterable[DialogueTurn], scenario: Scenario) -> tuple[int, int, list[dict[str, str]]]:
    """(kept turns that contain a proposition their speaker rejects, those of them that assert it,
    examples, asserted ones first). A turn asserts it when a sentence of it that contains the
    proposition :func:`asserts` it."""
    count, asserted, examples = 0, 0, []
    for t in turns:
        rejected = [p for p in scenario.propositions if p.stances.get(t.persona_id) == "con"]
        hits = [p for p in rejected if containment(p.text, t.dialogue) >= RECITES_AT]
        if not hits:
            continue
        count += 1
        said = next(((p, s) for p in hits for s in split_sentences(t.dialogue)
                     if containment(p.text, s) >= RECITES_AT and asserts(s)), None)
        asserted += said is not None
        hit = said[0] if said is not None else hits[0]
        examples.append({"speaker": t.persona_id, "proposition": hit.id, "asserted": said is not None,
                         "turn": clipped(t.dialogue, EXAMPLE_WORDS)})
    return count, asserted, _examples(examples)


def asserts(sentence: str) -> bool:
    """Whether a sentence states what it says as the speaker's own: not a question, quoting no
    one (no quotation mark), and read as pro by :func:`crux_lab.personas.reading.read_stance`.

    >>> asserts("New flats slow rents."), asserts("I don't accept that new flats slow rents.")
    (True, False)
    >>> asserts("The real question is: do new flats slow rents?"), asserts('You say "new flats slow rents", and that does not settle it.')
    (False, False)
    """
    s = sentence.strip()
    return not s.endswith("?") and not any(q in s for q in '"“”') and read_stance(s) == "pro"


def _examples(found: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Up to :data:`EXAMPLES` examples, those that assert the rejected proposition first."""
    return sorted(found, key=lambda x: not x["asserted"])[:EXAMPLES]


# ---------------------------------------------------------------------------
# Cost and time
# ---------------------------------------------------------------------------


def speaking_calls(result: DebateResult, purposes: Iterable[str]) -> dict[str, Any]:
    """Calls of the speaking purposes, their uncached prompt tokens, and their cached ones (None
    when no such call recorded a cache figure)."""
    rows = [c for c in result.llm_calls if c.purpose in set(purposes)]
    cached = [c.cache_read_tokens for c in rows if c.cache_read_tokens is not None]
    return {"calls": len(rows), "prompt_tokens": sum(c.input_tokens for c in rows),
            "cached_tokens": sum(cached) if cached else None}


def wall(result: DebateResult) -> tuple[float, str]:
    """The run's wall time in seconds, and where it comes from."""
    if result.duration_s > 0:
        return round(result.duration_s, 1), "duration_s"
    ts = [e.ts for e in result.events]
    return (round(max(ts) - min(ts), 1), "event timestamps") if ts else (0.0, "none")


def kept_repeats(result: DebateResult) -> int:
    """Kept turns that the echo guard as it is now would send back (:func:`echo_problem`): a
    repeat of the topic or of an earlier kept turn."""
    turns = result.transcript
    names = dict(result.persona_names)
    return sum(echo_problem(t.dialogue, said_of(turns[:i], names), result.config.topic, t.persona_id, t.stance) is not None
               for i, t in enumerate(turns))


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def per_turn(total: int | None, turns: int) -> float | None:
    return None if total is None or not turns else round(total / turns, 1)


# ---------------------------------------------------------------------------
# Rows and totals
# ---------------------------------------------------------------------------


def run_row(folder: Path, result: DebateResult, stored: Sequence[Mapping[str, Any]], scenario: Scenario | None,
            encoder: Encoder, purposes: Sequence[str]) -> dict[str, Any]:
    """One run's figures (see the module docstring)."""
    rates = guard_rates([result])[result.engine]
    kept = result.transcript
    kept_out_echo = sum(1 for e in result.events if isinstance(e, EngineError) and e.purpose == "guard_echo" and "skipped" in e.error)
    repeated = kept_repeats(result)
    cost = speaking_calls(result, purposes)
    seconds, source = wall(result)
    row: dict[str, Any] = {
        "run": folder.name, "engine": result.engine, "scenario": scenario.id if scenario else None,
        "topic": result.config.topic, "seed": result.config.seed, "personas": list(result.config.persona_ids),
        "params": dict(result.config.params), "backend": result.backend,
        "persona_turns": rates["persona_turns"], "kept_turns": len(kept),
        "guard_echo": rates["guard_echo"], "echo_rate": rates["echo_rate"], "kept_out_echo": kept_out_echo,
        "kept_repeats": repeated,
        "repeat_rate": _share(kept_out_echo + repeated, rates["persona_turns"]),
        "role_flags": sum(1 for t in stored if t.get("role_flag")), "guard_role": rates["guard_role"],
        "role_held": None, "role_n": None, "role_consistency": None,
        "recites": None, "recites_rejected": None, "recites_asserted": None, "recites_rejected_asserted": None,
        "recites_examples": [],
        "ended_early": bool(guard_counts(result)["guard_ended"]), "error": result.error,
        **cost,
        "prompt_tokens_per_persona_turn": per_turn(cost["prompt_tokens"], rates["persona_turns"]),
        "cached_tokens_per_persona_turn": per_turn(cost["cached_tokens"], rates["persona_turns"]),
        "wall_s": seconds, "wall_from": source,
    }
    if scenario is not None:
        held, judged = role_consistency(kept, tie_claims(claim_texts(result), scenario, encoder))
        recites, asserted, examples = recitations(kept, scenario)
        row.update(role_held=held, role_n=judged, role_consistency=_share(held, judged),
                   recites=recites, recites_rejected=_share(recites, len(kept)), recites_asserted=asserted,
                   recites_rejected_asserted=_share(asserted, len(kept)), recites_examples=examples)
    return row


def engine_totals(rows: Sequence[Mapping[str, Any]], results: Sequence[DebateResult]) -> dict[str, dict[str, Any]]:
    """Per engine: the rows summed; persona turns, firings, rates and ended-early are
    guard_rates over the engine's runs."""
    rates = guard_rates(results)
    out: dict[str, dict[str, Any]] = {}
    for engine, g in rates.items():
        mine = [r for r in rows if r["engine"] == engine]
        judged = [r for r in mine if r["role_n"] is not None]
        held, n = sum(r["role_held"] for r in judged), sum(r["role_n"] for r in judged)
        scored = [r for r in mine if r["recites"] is not None]
        recites, kept = sum(r["recites"] for r in scored), sum(r["kept_turns"] for r in scored)
        asserted = sum(r["recites_asserted"] for r in scored)
        known = [r["cached_tokens"] for r in mine if r["cached_tokens"] is not None]
        turns = g["persona_turns"]
        out[engine] = {
            "runs": g["debates"], "persona_turns": turns, "guard_echo": g["guard_echo"], "echo_rate": g["echo_rate"],
            "kept_out_echo": sum(r["kept_out_echo"] for r in mine), "kept_repeats": sum(r["kept_repeats"] for r in mine),
            "repeat_rate": _share(sum(r["kept_out_echo"] + r["kept_repeats"] for r in mine), turns),
            "role_flags": sum(r["role_flags"] for r in mine),
            "guard_role": g["guard_role"], "role_consistency": _share(held, n), "role_n": n,
            "recites_rejected": _share(recites, kept), "recites": recites,
            "recites_rejected_asserted": _share(asserted, kept), "recites_asserted": asserted,
            "recites_examples": _examples(x for r in scored for x in r["recites_examples"]),
            "ended_early": g["ended_early"], "calls": sum(r["calls"] for r in mine),
            "prompt_tokens_per_persona_turn": per_turn(sum(r["prompt_tokens"] for r in mine), turns),
            "cached_tokens_per_persona_turn": per_turn(sum(known), turns) if known else None,
            "wall_s": round(sum(r["wall_s"] for r in mine), 1),
        }
    return out


def markdown(totals: Mapping[str, Mapping[str, Any]]) -> str:
    """The per-engine totals as a Markdown table."""
    def num(v: Any, fmt: str = "{:.2f}") -> str:
        return "—" if v is None else fmt.format(v)

    lines = ["| engine | runs | persona turns | echo rate | repeat rate (kept repeats) | role consistency (n) | "
             "role flags (turns / guard) | recites rejected (asserted) | ended early | calls | prompt tok/turn | wall s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for engine, t in totals.items():
        lines.append(f"| {engine} | {t['runs']} | {t['persona_turns']} | {num(t['echo_rate'])} | "
                     f"{num(t['repeat_rate'])} ({t['kept_repeats']}) | "
                     f"{num(t['role_consistency'])} ({t['role_n']}) | {t['role_flags']} / {t['guard_role']} | "
                     f"{num(t['recites_rejected'])} ({num(t['recites_rejected_asserted'])}) | {t['ended_early']} | {t['calls']} | "
                     f"{num(t['prompt_tokens_per_persona_turn'], '{:.0f}')} | {t['wall_s']:.0f} |")
    return "\n".join(lines) + "\n"


def report(paths: Sequence[Path], scenarios_dir: Path, *, label: str = "", purposes: Sequence[str] = SPEAKING,
           encoder: Encoder | None = None) -> dict[str, Any]:
    """The whole report of the run folders in ``paths`` against the scenarios of ``scenarios_dir``.
    Raises :class:`BadInput` when a path is not what it should be."""
    folders = run_folders(paths)
    try:
        scenarios = load_scenarios(scenarios_dir)
    except ScenarioError as exc:
        raise BadInput(f"--scenarios: {exc}") from None
    if encoder is None:
        from crux_lab.embed import get_embedder

        encoder = get_embedder()
    rows: list[dict[str, Any]] = []
    results: list[DebateResult] = []
    skipped: dict[str, str] = {}
    unmatched: list[str] = []
    silent: dict[str, int] = {}  # engine -> runs without persona turns
    for folder in folders:
        try:
            result, stored = load_run(folder)
        except (OSError, ValueError) as exc:
            skipped[str(folder)] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            continue
        if math.isnan(guard_counts(result)["guard_echo"]):  # no persona turns: guard_rates leaves it out
            silent[result.engine] = silent.get(result.engine, 0) + 1
            continue
        scenario = scenario_of(result, scenarios)
        if scenario is None:
            unmatched.append(folder.name)
        results.append(result)
        rows.append(run_row(folder, result, stored, scenario, encoder, purposes))
    notes = list(NOTES)
    if silent:
        notes.append("Left out, no persona turns: " + ", ".join(f"{n} {e} run(s)" for e, n in sorted(silent.items())) + ".")
    if unmatched:
        notes.append(f"{len(unmatched)} run(s) debated no scenario of {scenarios_dir} (no scenario has their personas "
                     f"or topic): role_consistency and recites_rejected are null for them ({', '.join(unmatched[:5])}).")
    return {"label": label, "runs_dirs": [str(p) for p in paths], "scenarios": str(scenarios_dir),
            "purposes": list(purposes), "totals": engine_totals(rows, results), "rows": rows,
            "skipped": skipped, "notes": notes}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("runs_dirs", nargs="+", type=Path, metavar="RUNS_DIR", help="a folder of run folders")
    ap.add_argument("--scenarios", type=Path, required=True, help="the scenario folder the debates ran on")
    ap.add_argument("--out", type=Path, help="JSON file (default benchmarks/results/speaker_health[-LABEL].json)")
    ap.add_argument("--label", default="", help="a name for these runs, e.g. before or after")
    ap.add_argument("--purposes", default=",".join(SPEAKING), help="the speaking purposes, comma-separated")
    args = ap.parse_args(argv)
    try:
        data = report(args.runs_dirs, args.scenarios, label=args.label,
                      purposes=[p.strip() for p in args.purposes.split(",") if p.strip()])
    except BadInput as exc:
        print(f"speaker_health: {exc}", file=sys.stderr)
        return 2
    out = args.out or OUT_DIR / f"speaker_health{'-' + args.label if args.label else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(markdown(data["totals"]))
    for folder, why in data["skipped"].items():
        print(f"skipped {folder}: {why}")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
