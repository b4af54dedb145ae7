"""Run folders: each debate writes its own files; ingest loads them into DuckDB later.

A run folder ``<runs>/<run_id>/`` holds::

    manifest.json       run id, the schema migrations the tables follow, row counts (written last)
    result.json         the whole DebateResult
    events.jsonl        the event log, one DebateEvent per line (enough to rebuild the result)
    transcript.md       the transcript, for reading
    metrics.json        the per-debate metrics (name -> value), when the run has any
    tables/<name>.parquet   one Parquet file per non-empty store table (typed like the database)

It is written into a hidden temporary folder beside it and renamed into place, so a reader
never sees a half-written run folder; rewriting a run (same run id) swaps the folder whole.
Everything written goes through :mod:`crux_lab.scrub` first (no API key reaches a file).

:func:`validate_run` is the test of a run folder that ingest and sweeps trust: the manifest
reads, ``result.json`` is a whole DebateResult of that run id, every line of
``events.jsonl`` is an event, and every table file holds the rows the manifest counts.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from crux_lab.models.events import DebateEvent, parse_event
from crux_lab.models.result import DebateResult
from crux_lab.personas.loader import display_names
from crux_lab.scrub import scrub, scrub_model
from crux_lab.scrub import write_text as write_scrubbed
from crux_lab.store._lazy import pa
from crux_lab.store.migrations import migration_names
from crux_lab.store.paths import default_runs_dir
from crux_lab.store.tables import RUN_TABLES, crux_lab_version, result_rows, to_arrow

MANIFEST = "manifest.json"
METRICS = "metrics.json"
RUN_FORMAT = 1


class RunFolderError(ValueError):
    """A run folder is missing files or is not readable; the message names the file."""


@dataclass(frozen=True)
class RunManifest:
    run_dir: Path
    run_id: str
    migrations: list[str]
    tables: dict[str, int]  # table -> row count

    def table_path(self, table: str) -> Path:
        return self.run_dir / "tables" / f"{table}.parquet"


def run_names(result: DebateResult) -> dict[str, str]:
    """Display names of a run's personas: those the run recorded, then the library's, then
    the ids themselves (:func:`~crux_lab.personas.loader.display_names`)."""
    return display_names(result.config.persona_ids, result.persona_names)


def render_transcript(result: DebateResult, names: Mapping[str, str] | None = None) -> str:
    """The transcript as Markdown (speaker, move and phase on each turn); personas appear by
    their ``names`` (id -> display name), or by id where a name is not given."""
    cfg = result.config
    name = {**{p: p for p in cfg.persona_ids}, **(names or {})}
    lines = [
        f"# {cfg.topic}",
        "",
        f"- run: `{result.run_id}`  engine: `{result.engine}`  backend: `{result.backend}`  seed: {cfg.seed}",
        f"- personas: {', '.join(name[p] for p in cfg.persona_ids)}",
        f"- regime: {result.regime.value}" + (f" ({result.regime_description})" if result.regime_description else ""),
        f"- complete: {result.complete}" + (f"  error: {result.error}" if result.error else ""),
        "",
        "## Transcript",
        "",
    ]
    for i, turn in enumerate(result.transcript, start=1):
        tags = ", ".join(x for x in (turn.move.value if turn.move else None, turn.phase, turn.room_id) if x)
        lines.append(f"**{i}. {name.get(turn.persona_id, turn.persona_id)}** ({tags})  ")
        lines.append(turn.dialogue.strip())
        if turn.role_flag:  # kept, not dropped: its stance contradicted the speaker's declared side
            lines.append(f"*Role flag: {turn.role_flag}*")
        lines.append("")
    if result.cruxes:
        lines += ["## Cruxes", ""]
        for c in result.cruxes:
            lines.append(f"- {c.statement}" + (f" *({c.disagreement_type.value})*" if c.disagreement_type else ""))
            # the two sides' own claims (or assumptions), labelled, when the crux records them
            for label, side in (("one side", c.yes_side), ("the other side", c.no_side)):
                lines += [f"  - {label}, **{name.get(s.persona_id, s.persona_id)}**: {s.statement}" for s in side if s.statement]
        lines.append("")
    if result.crux_cards:
        lines += ["## Crux cards", ""]
        for card in result.crux_cards:
            lines.append(f"### {card.question} ({card.disagreement_type.value})")
            lines.append(card.diagnosis)
            for pid, pos in card.personas.items():
                lines.append(f"- **{name.get(pid, pid)}**: {pos.position.value}: {pos.reasoning}")
            lines.append("")
    return "\n".join(lines) + "\n"


def _write_files(result: DebateResult, folder: Path, sweep_id: str | None) -> dict[str, int]:
    import pyarrow.parquet as pq  # loaded on first use: keeps the store's import cheap

    write_scrubbed(folder / "result.json", result.model_dump_json(indent=1))
    with (folder / "events.jsonl").open("w", encoding="utf-8") as fh:
        for event in result.events:
            fh.write(scrub(event.model_dump_json()) + "\n")
    write_scrubbed(folder / "transcript.md", render_transcript(result, run_names(result)))
    if result.metrics:  # per-debate metrics; ingest loads them into the metrics table
        write_scrubbed(folder / METRICS, json.dumps(result.metrics, indent=1, sort_keys=True))
    tables = folder / "tables"
    tables.mkdir()
    counts: dict[str, int] = {}
    for name, rows in result_rows(result, written_at=datetime.now(), sweep_id=sweep_id).items():
        counts[name] = len(rows)
        if rows:  # an empty table has no file: the manifest's 0 says so
            pq.write_table(to_arrow(name, rows), tables / f"{name}.parquet")
    manifest = {
        "format": RUN_FORMAT,
        "run_id": result.run_id,
        "migrations": migration_names(),
        "crux_lab_version": crux_lab_version(),
        "written_at": datetime.now().isoformat(timespec="seconds"),
        "engine": result.engine,
        "backend": result.backend,
        "complete": result.complete,
        "tables": counts,
    }
    write_scrubbed(folder / MANIFEST, json.dumps(manifest, indent=1))
    return counts


def write_run(result: DebateResult, out_dir: str | Path | None = None, *, sweep_id: str | None = None) -> Path:
    """Write the run folder ``<out_dir>/<run_id>`` atomically and return its path.

    ``out_dir`` defaults to :func:`~crux_lab.store.paths.default_runs_dir`.
    """
    out = Path(out_dir) if out_dir is not None else default_runs_dir()
    out.mkdir(parents=True, exist_ok=True)
    # One scrub of the whole result: every file and Parquet row below derives from it.
    result = scrub_model(result)
    final = out / result.run_id
    tmp = Path(tempfile.mkdtemp(prefix=f".{result.run_id}.", suffix=".tmp", dir=out))
    try:
        _write_files(result, tmp, sweep_id)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if final.exists():
        old = out / f".{result.run_id}.old-{uuid.uuid4().hex[:8]}"
        os.replace(final, old)
        os.replace(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, final)
    return final


def read_manifest(run_dir: str | Path) -> RunManifest:
    """Read and check a run folder's manifest; :class:`RunFolderError` names what is wrong."""
    folder = Path(run_dir)
    path = folder / MANIFEST
    if not path.is_file():
        raise RunFolderError(f"{folder}: not a run folder (no {MANIFEST}); pass a folder written by write_run.")
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        run_id = str(data["run_id"])
        migrations = [str(m) for m in data["migrations"]]
        tables = {str(k): int(v) for k, v in data["tables"].items()}
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RunFolderError(f"{path}: unreadable manifest ({type(exc).__name__}: {exc}); rewrite the run.") from None
    manifest = RunManifest(folder, run_id, migrations, tables)
    for table in tables:
        if table not in RUN_TABLES:
            raise RunFolderError(f"{path}: unknown table {table!r} (known: {', '.join(RUN_TABLES)}).")
        if tables[table] > 0 and not manifest.table_path(table).is_file():
            raise RunFolderError(f"{manifest.table_path(table)}: missing table file; rewrite the run.")
    return manifest


def find_run_dirs(paths: Sequence[str | Path]) -> list[Path]:
    """Run folders named by ``paths``: a run folder itself, or any folder containing run folders."""
    found: list[Path] = []
    for p in map(Path, paths):
        if (p / MANIFEST).is_file():
            found.append(p)
        elif p.is_dir():
            found.extend(sorted(m.parent for m in p.rglob(MANIFEST) if not m.parent.name.startswith(".")))
        else:
            raise RunFolderError(f"{p}: no such run folder.")
    return found


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(top level)"
    return f"field '{where}': {err['msg']}"


def validate_run(run_dir: str | Path) -> RunManifest:
    """Check a run folder end to end before anything trusts it (ingest, sweep resume).

    Raises :class:`RunFolderError` naming the file, the field and the fix; nothing is
    written. Reading the whole result and event log costs milliseconds per run.
    """
    import pyarrow.parquet as pq  # loaded on first use: keeps the store's import cheap

    manifest = read_manifest(run_dir)
    folder = manifest.run_dir
    fix = f"rewrite the run (rerun it) or move {folder} aside"
    result_path = folder / "result.json"
    try:
        result = DebateResult.model_validate_json(result_path.read_bytes())
    except FileNotFoundError:
        raise RunFolderError(f"{result_path}: missing; {fix}.") from None
    except ValidationError as exc:
        raise RunFolderError(f"{result_path}: not a whole DebateResult ({_first_error(exc)}); {fix}.") from None
    if result.run_id != manifest.run_id:
        raise RunFolderError(
            f"{result_path}: field 'run_id' is {result.run_id!r} but the manifest says "
            f"{manifest.run_id!r}; {fix}."
        )
    events_path = folder / "events.jsonl"
    try:
        with events_path.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    parse_event(line)
                except (ValidationError, ValueError) as exc:
                    detail = _first_error(exc) if isinstance(exc, ValidationError) else str(exc)[:200]
                    raise RunFolderError(
                        f"{events_path}, line {number}: not an event ({detail}); {fix}."
                    ) from None
    except FileNotFoundError:
        raise RunFolderError(f"{events_path}: missing; {fix}.") from None
    except UnicodeDecodeError:
        raise RunFolderError(f"{events_path}: not UTF-8 text; {fix}.") from None
    for table, expected in manifest.tables.items():
        if expected <= 0:
            continue
        path = manifest.table_path(table)
        try:
            rows = pq.read_metadata(path).num_rows
        except (OSError, pa.ArrowException) as exc:
            raise RunFolderError(f"{path}: unreadable Parquet ({str(exc).splitlines()[0]}); {fix}.") from None
        if rows != expected:
            raise RunFolderError(
                f"{path}: holds {rows} row(s) but the manifest's field 'tables.{table}' says "
                f"{expected}; {fix}."
            )
    return manifest


def run_folder_status(run_dir: str | Path) -> str | None:
    """None when ``run_dir`` holds a complete, valid run; otherwise why not, in a few words.

    A sweep treats a cell as done exactly when this is None.
    """
    folder = Path(run_dir)
    if not (folder / MANIFEST).is_file():
        return "no run folder" if not folder.exists() else "no manifest (not a finished run folder)"
    try:
        validate_run(folder)
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (RunFolderError, OSError, json.JSONDecodeError) as exc:
        return f"invalid: {exc}"
    if data.get("complete") is False:
        return "incomplete run (interrupted or stopped on an error)"
    return None


def load_result(run_dir: str | Path) -> DebateResult:
    """The DebateResult stored in a run folder."""
    path = Path(run_dir) / "result.json"
    try:
        return DebateResult.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunFolderError(f"{path}: missing; not a run folder.") from None
    except ValidationError as exc:
        raise RunFolderError(
            f"{path}: not a whole DebateResult ({_first_error(exc)}); rerun the debate or "
            f"move {path.parent} aside."
        ) from None


def read_events(run_dir: str | Path) -> Iterator[DebateEvent]:
    """Replay a run's event log, one typed event at a time."""
    with (Path(run_dir) / "events.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield parse_event(line)
