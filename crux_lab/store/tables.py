"""Flatten a DebateResult into the rows of the store's tables, typed by the schema.

The Arrow schema of each table is read from an in-memory database built by the same
migrations as the real one, so the run files always carry exactly the columns (and types)
of the schema version that wrote them.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from importlib import metadata
from typing import Any

from pydantic import BaseModel

from crux_lab.models.accounting import is_billed
from crux_lab.models.result import DebateResult
from crux_lab.store._lazy import duckdb, pa
from crux_lab.store.db import migrate

Row = dict[str, Any]

# The tables a run folder carries (``metrics`` is written later, by evaluation).
RUN_TABLES: tuple[str, ...] = (
    "runs",
    "debates",
    "events",
    "turns",
    "arguments",
    "attacks",
    "disputes",
    "stances",
    "reasons",
    "cruxes",
    "crux_cards",
    "crux_card_positions",
    "common_ground",
    "camps",
    "concessions",
    "positions",
    "position_shifts",
    "llm_calls",
    "crux_polls",
)


@lru_cache(maxsize=1)
def arrow_schemas() -> dict[str, pa.Schema]:
    """The Arrow schema of every table of the current DuckDB schema."""
    con = duckdb.connect(":memory:")
    try:
        migrate(con, ":memory:")
        names = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
        ).fetchall()]
        return {
            name: con.sql(f'SELECT * FROM "{name}" LIMIT 0').to_arrow_table().schema
            for name in names
            if not name.startswith("_")
        }
    finally:
        con.close()


@lru_cache(maxsize=1)
def crux_lab_version() -> str:
    try:
        return metadata.version("crux_lab")
    except metadata.PackageNotFoundError:  # running from a checkout without install
        return "0+unknown"


def _json(value: Any) -> Any:
    """Nested values bound for a JSON (string) column are serialized; None stays NULL."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _dump(model: BaseModel, **extra: Any) -> Row:
    row = model.model_dump(mode="json")
    row.update(extra)
    return row


def to_arrow(table: str, rows: list[Row]) -> pa.Table:
    """Rows -> an Arrow table with the schema's columns.

    Keys the table has no column for (fields the data model gained after this schema) go into
    its ``extra`` JSON column, so a new model field never breaks writing a run; a table
    without ``extra`` refuses them.

    >>> to_arrow("metrics", [{"run_id": "r", "name": "f1", "value": 1, "detail": {"k": 2}}]).column("detail").to_pylist()
    ['{"k": 2}']
    >>> to_arrow("turns", [{"run_id": "r", "id": "t0", "brand_new": 1}]).column("extra").to_pylist()
    ['{"brand_new": 1}']
    """
    schema = arrow_schemas()[table]
    columns = set(schema.names)
    fixed: list[Row] = []
    for row in rows:
        unknown = set(row) - columns
        out = dict(row)
        if unknown:
            if "extra" not in columns:
                raise KeyError(f"table {table} has no column(s) {sorted(unknown)}")
            out["extra"] = {k: out.pop(k) for k in sorted(unknown)}
        for f in schema:
            if pa.types.is_string(f.type) and f.name in out:
                out[f.name] = _json(out[f.name])
        fixed.append(out)
    return pa.Table.from_pylist(fixed, schema=schema)


def result_rows(
    result: DebateResult, *, written_at: datetime | None = None, sweep_id: str | None = None
) -> dict[str, list[Row]]:
    """Every run table's rows for one result (tables with nothing to say get ``[]``)."""
    rid = result.run_id
    cfg = result.config
    graph = result.graph
    grounded = set(graph.grounded)
    rows: dict[str, list[Row]] = {t: [] for t in RUN_TABLES}

    rows["runs"].append(
        {
            "run_id": rid,
            "schema_version": result.schema_version,
            "crux_lab_version": crux_lab_version(),
            "written_at": written_at or datetime.now(),
            "run_dir": None,
            "sweep_id": sweep_id,
            "engine": result.engine,
            "backend": result.backend,
            "topic": cfg.topic,
            "persona_ids": list(cfg.persona_ids),
            "deck": cfg.deck,
            "seed": cfg.seed,
            "max_turns": cfg.max_turns,
            "backend_options": cfg.backend_options,
            "params": cfg.params,
            "allocation": cfg.allocation,
            "config": cfg.model_dump(mode="json"),
            "complete": result.complete,
            "error": result.error,
            "duration_s": result.duration_s,
            "structured_mode": result.structured.mode if result.structured else None,
            "structured_canary": result.structured.canary if result.structured else None,
        }
    )
    usage = result.usage
    rows["debates"].append(
        {
            "run_id": rid,
            "topic": cfg.topic,
            "engine": result.engine,
            "backend": result.backend,
            "persona_ids": list(cfg.persona_ids),
            "complete": result.complete,
            "regime": result.regime.value,
            "regime_description": result.regime_description,
            "n_turns": len(result.transcript),
            "n_events": len(result.events),
            "n_arguments": len(graph.arguments),
            "n_attacks": len(graph.attacks),
            "n_disputes": len(result.dcg.disputes),
            "n_cruxes": len(result.cruxes),
            "n_crux_cards": len(result.crux_cards),
            "n_common_ground": len(result.common_ground),
            "n_camps": len(result.camps),
            "n_concessions": len(result.concession_trail),
            "n_shifted": sum(1 for s in result.position_shifts if s.shifted),
            "grounded": list(graph.grounded),
            "preferred": graph.preferred,
            "preferred_count": graph.preferred_count,
            "fault_lines": list(result.fault_lines),
            "resolution_paths": list(result.resolution_paths),
            "flip_conditions": result.flip_conditions,
            "evidence_ledger": result.evidence_ledger,
            "aspects": [a.model_dump(mode="json") for a in result.aspects],
            "calls": usage.calls,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "cost_usd": usage.cost_usd,
            "billed": is_billed(result.backend),
            "latency_s": usage.latency_s,
            "duration_s": result.duration_s,
        }
    )
    rows["events"] = [
        {"run_id": rid, "seq": e.seq, "type": e.type, "ts": e.ts, "payload": e.model_dump_json()}
        for e in result.events
    ]
    rows["turns"] = [_dump(t, run_id=rid, ord=i) for i, t in enumerate(result.transcript)]
    rows["arguments"] = [
        _dump(a, run_id=rid, label=(graph.labelling[a.id].value if a.id in graph.labelling else None), grounded=a.id in grounded)
        for a in graph.arguments
    ]
    for att in graph.attacks:
        row = _dump(att, run_id=rid)
        target = row.pop("target")
        row.update(target_arg_id=target["arg_id"], target_component=target["component"], target_index=target["index"])
        rows["attacks"].append(row)
    rows["disputes"] = [_dump(d, run_id=rid) for d in result.dcg.disputes]
    rows["stances"] = [_dump(s, run_id=rid) for s in result.dcg.stances]
    rows["reasons"] = [_dump(r, run_id=rid) for r in result.dcg.reasons]
    rows["cruxes"] = [_dump(c, run_id=rid) for c in result.cruxes]
    for card in result.crux_cards:
        rows["crux_cards"].append(_dump(card, run_id=rid))
        rows["crux_card_positions"].extend(
            _dump(pos, run_id=rid, card_id=card.id, persona_id=pid) for pid, pos in card.personas.items()
        )
    rows["common_ground"] = [_dump(g, run_id=rid) for g in result.common_ground]
    for camp in result.camps:
        row = _dump(camp, run_id=rid)
        row["camp_index"] = row.pop("index")
        rows["camps"].append(row)
    rows["concessions"] = [_dump(c, run_id=rid, ord=i) for i, c in enumerate(result.concession_trail)]
    rows["positions"] = [_dump(p, run_id=rid) for p in result.positions]
    rows["position_shifts"] = [_dump(s, run_id=rid) for s in result.position_shifts]
    rows["llm_calls"] = [_dump(c, run_id=rid, billed=is_billed(c.backend)) for c in result.llm_calls]
    rows["crux_polls"] = poll_rows(result)
    return rows


def poll_rows(result: DebateResult) -> list[Row]:
    """One row per polled candidate crux and persona: cards, cruxes (a crux mirroring a card is
    the card's row), common ground the poll found, and candidates it did not split."""
    polls = [c.poll for c in result.crux_cards if c.poll is not None]
    polls += [c.poll for c in result.cruxes if c.poll is not None]
    polls += [g.poll for g in result.common_ground if g.poll is not None]
    polls += list(result.poll.not_split) if result.poll is not None else []
    rows: list[Row] = []
    seen: set[tuple[str, str]] = set()
    for poll in polls:
        for a in poll.answers:
            key = (poll.item_id or poll.question, a.persona_id)
            if key in seen:
                continue
            seen.add(key)
            rows.append({
                "run_id": result.run_id, "crux_id": key[0], "question": poll.question, "status": poll.status,
                "persona_id": a.persona_id, "answer": a.answer, "confidence": a.confidence, "reason": a.reason,
                "debate_side": a.debate_side, "flipped": a.flipped, "pivot_answer": a.pivot,
                "pivot_reason": a.pivot_reason, "decisive": a.persona_id in poll.decisive_for, "raw_reply": a.raw_reply,
            })
    return rows
