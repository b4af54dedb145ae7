"""Did any reply of a sweep cross into another cell? Read every card and poll answer of every run.

A sweep's cells debate different topics with different personas. A reply that crossed from
another request is about the other request's prompt, so it names the other cell's personas.
For each run folder this reads every event the run recorded (turns, cards as the model wrote
them before the poll, poll answers; all but progress lines), and flags a run whose text names a
persona (by name or id) that is in another cell of the sweep and not in its own, or that
quotes another cell's topic while its own topic is a different one.

    .venv/bin/python benchmarks/sweep_crossings.py SWEEP_RUNS_DIR [SWEEP_RUNS_DIR ...] [--out F]

Prints one line per run and the count of crossed ones; ``--out`` writes them as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from crux_lab.personas.loader import load_personas  # noqa: E402

SKIP = ("status",)  # progress lines: no model text


def run_text(run: Path) -> tuple[str, int]:
    """The text of the run's events, and how many events it came from."""
    parts: list[str] = []
    for line in (run / "events.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("type") not in SKIP:
            parts.append(json.dumps(event, ensure_ascii=False))
    return "\n".join(parts), len(parts)


def check(runs: list[Path]) -> list[dict[str, Any]]:
    cells = {run: json.loads((run / "result.json").read_text(encoding="utf-8"))["config"] for run in runs}
    ids = sorted({pid for c in cells.values() for pid in c["persona_ids"]})
    names = {pid: p.name for pid, p in load_personas(ids).items()}
    topics = {c["topic"] for c in cells.values()}
    rows = []
    for run, cell in cells.items():
        text, n = run_text(run)
        others = [pid for pid in ids if pid not in cell["persona_ids"]]
        named = [names[pid] for pid in others if names[pid] in text or pid in text]
        quoted = [t for t in topics if t != cell["topic"] and t in text]
        rows.append({"run": run.name, "topic": cell["topic"], "personas": cell["persona_ids"], "events_read": n,
                     "other_personas_named": named, "other_topics_quoted": quoted,
                     "crossed": bool(named or quoted)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", type=Path, help="a sweep's runs folder(s)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    runs = sorted(p for d in args.dirs for p in d.iterdir() if (p / "result.json").is_file())
    rows = check(runs)
    for r in rows:
        verdict = "CROSSED" if r["crossed"] else "own"
        print(f"{r['run']}  {verdict:<7} {r['events_read']} events  {r['topic'][:48]!r} "
              f"{'+'.join(r['personas'])}  {r['other_personas_named'] or ''}{r['other_topics_quoted'] or ''}")
    print(f"{sum(r['crossed'] for r in rows)} of {len(rows)} runs crossed")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
