"""The DuckDB schema, as an ordered list of migrations (the pattern of simonw/llm).

Each migration is a function that takes a connection. :func:`crux_lab.store.db.migrate` runs,
in order, every migration whose name is not yet in the ``_migrations`` table, each in its own
transaction, and records its name. Rules:

- never edit or reorder a migration that has shipped; add a new one at the end;
- a database holding a migration name this list does not know was made by a newer crux_lab.

Table layout (one row per thing per run; every table has ``run_id``):

- ``runs``: provenance of one execution (config, versions, where its files are, sweep id);
- ``debates``: the outcome summary of that run (regime, counts, usage, fault lines);
- ``events``, ``turns``, ``arguments``, ``attacks``, ``disputes``, ``stances``, ``reasons``,
  ``cruxes``, ``crux_cards``, ``crux_card_positions``, ``common_ground``, ``camps``,
  ``concessions``, ``positions``, ``position_shifts``, ``llm_calls``: the DebateResult, flat;
- ``metrics``: scores written after the run (evaluation), keyed by (run_id, name);
- view ``run_overview``: one row per run, provenance and outcome side by side;
- ``extra`` (JSON) on every run table: model fields newer than the schema (m003);
- ``crux_polls``: each candidate crux's answers from every persona asked alone (m008).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crux_lab.backends import billed_names
from crux_lab.store._lazy import duckdb

Migration = Callable[["duckdb.DuckDBPyConnection"], None]

MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    """Register ``fn`` as the next migration (its ``__name__`` is what gets recorded)."""
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_initial(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        """
        CREATE TABLE runs (
            run_id VARCHAR PRIMARY KEY,
            schema_version INTEGER,
            crux_lab_version VARCHAR,
            written_at TIMESTAMP,
            ingested_at TIMESTAMP DEFAULT current_timestamp,
            run_dir VARCHAR,
            sweep_id VARCHAR,
            engine VARCHAR,
            backend VARCHAR,
            topic VARCHAR,
            persona_ids VARCHAR[],
            deck VARCHAR,
            seed BIGINT,
            max_turns INTEGER,
            sim JSON,
            params JSON,
            allocation JSON,
            config JSON,
            complete BOOLEAN,
            error VARCHAR,
            duration_s DOUBLE
        );
        CREATE TABLE debates (
            run_id VARCHAR PRIMARY KEY,
            topic VARCHAR,
            engine VARCHAR,
            backend VARCHAR,
            persona_ids VARCHAR[],
            complete BOOLEAN,
            regime VARCHAR,
            regime_description VARCHAR,
            n_turns INTEGER,
            n_events INTEGER,
            n_arguments INTEGER,
            n_attacks INTEGER,
            n_disputes INTEGER,
            n_cruxes INTEGER,
            n_crux_cards INTEGER,
            n_common_ground INTEGER,
            n_camps INTEGER,
            n_concessions INTEGER,
            n_shifted INTEGER,
            grounded VARCHAR[],
            preferred JSON,
            preferred_count INTEGER,
            fault_lines VARCHAR[],
            resolution_paths VARCHAR[],
            flip_conditions JSON,
            evidence_ledger JSON,
            aspects JSON,
            calls INTEGER,
            input_tokens BIGINT,
            output_tokens BIGINT,
            cache_read_tokens BIGINT,
            cache_write_tokens BIGINT,
            cost_usd DOUBLE,
            latency_s DOUBLE,
            duration_s DOUBLE
        );
        CREATE TABLE events (
            run_id VARCHAR,
            seq INTEGER,
            type VARCHAR,
            ts DOUBLE,
            payload JSON,
            PRIMARY KEY (run_id, seq)
        );
        CREATE TABLE turns (
            run_id VARCHAR,
            ord INTEGER,
            id VARCHAR,
            turn_index INTEGER,
            persona_id VARCHAR,
            dialogue VARCHAR,
            move VARCHAR,
            phase VARCHAR,
            phase_number INTEGER,
            steering_hint VARCHAR,
            aspect_id VARCHAR,
            room_id VARCHAR,
            reply_to VARCHAR,
            proposition_ids VARCHAR[],
            stance VARCHAR,
            confidence DOUBLE,
            timestamp DOUBLE
        );
        CREATE TABLE arguments (
            run_id VARCHAR,
            id VARCHAR,
            speaker_id VARCHAR,
            claim VARCHAR,
            premises VARCHAR[],
            assumptions VARCHAR[],
            evidence VARCHAR[],
            round INTEGER,
            derived_from_turns INTEGER[],
            proposition_id VARCHAR,
            label VARCHAR,
            grounded BOOLEAN
        );
        CREATE TABLE attacks (
            run_id VARCHAR,
            id VARCHAR,
            from_arg_id VARCHAR,
            to_arg_id VARCHAR,
            type VARCHAR,
            target_arg_id VARCHAR,
            target_component VARCHAR,
            target_index INTEGER,
            counter_proposition VARCHAR,
            rationale VARCHAR,
            evidence VARCHAR[],
            confidence DOUBLE,
            speaker_id VARCHAR,
            round INTEGER
        );
        CREATE TABLE disputes (
            run_id VARCHAR,
            id VARCHAR,
            question VARCHAR,
            horizon VARCHAR,
            resolution_criteria VARCHAR[],
            created_from_turns INTEGER[],
            active BOOLEAN,
            proposition_id VARCHAR,
            disagreement_type VARCHAR
        );
        CREATE TABLE stances (
            run_id VARCHAR,
            id VARCHAR,
            dispute_id VARCHAR,
            speaker_id VARCHAR,
            side VARCHAR,
            statement VARCHAR,
            confidence DOUBLE,
            derived_from_turns INTEGER[]
        );
        CREATE TABLE reasons (
            run_id VARCHAR,
            id VARCHAR,
            stance_id VARCHAR,
            polarity VARCHAR,
            claim VARCHAR,
            assumptions VARCHAR[],
            evidence VARCHAR[],
            derived_from_turns INTEGER[],
            attacks VARCHAR[]
        );
        CREATE TABLE cruxes (
            run_id VARCHAR,
            id VARCHAR,
            statement VARCHAR,
            source VARCHAR,
            disagreement_type VARCHAR,
            proposed_by VARCHAR[],
            acknowledged BOOLEAN,
            assumptions VARCHAR[],
            yes_side JSON,
            no_side JSON,
            settling_question VARCHAR,
            dispute_id VARCHAR,
            argument_ids VARCHAR[],
            proposition_ids VARCHAR[],
            score DOUBLE
        );
        CREATE TABLE crux_cards (
            run_id VARCHAR,
            id VARCHAR,
            question VARCHAR,
            disagreement_type VARCHAR,
            diagnosis VARCHAR,
            resolved BOOLEAN,
            resolution VARCHAR,
            personas JSON,
            source_aspect VARCHAR,
            source_messages VARCHAR[],
            crux_room_id VARCHAR,
            timestamp DOUBLE,
            proposition_ids VARCHAR[]
        );
        CREATE TABLE crux_card_positions (
            run_id VARCHAR,
            card_id VARCHAR,
            persona_id VARCHAR,
            position VARCHAR,
            reasoning VARCHAR,
            falsifier VARCHAR,
            grounding_quotes VARCHAR[]
        );
        CREATE TABLE common_ground (
            run_id VARCHAR,
            id VARCHAR,
            statement VARCHAR,
            source VARCHAR,
            persona_ids VARCHAR[],
            argument_id VARCHAR,
            dispute_id VARCHAR,
            agreed_side VARCHAR,
            proposition_ids VARCHAR[]
        );
        CREATE TABLE camps (
            run_id VARCHAR,
            camp_index INTEGER,
            argument_ids VARCHAR[],
            persona_ids VARCHAR[],
            label VARCHAR
        );
        CREATE TABLE concessions (
            run_id VARCHAR,
            ord INTEGER,
            turn_index INTEGER,
            persona_id VARCHAR,
            type VARCHAR,
            conceded_claim VARCHAR,
            effect VARCHAR,
            removed_arg_ids VARCHAR[],
            updated_arg_ids VARCHAR[],
            proposition_id VARCHAR,
            reason VARCHAR
        );
        CREATE TABLE positions (
            run_id VARCHAR,
            persona_id VARCHAR,
            "at" VARCHAR,
            text VARCHAR,
            stances JSON,
            confidence JSON
        );
        CREATE TABLE position_shifts (
            run_id VARCHAR,
            persona_id VARCHAR,
            shifted BOOLEAN,
            embedding_distance DOUBLE,
            proposition_shifts JSON,
            attributed_rooms VARCHAR[],
            named_reason VARCHAR,
            summary VARCHAR
        );
        CREATE TABLE llm_calls (
            run_id VARCHAR,
            seq INTEGER,
            purpose VARCHAR,
            backend VARCHAR,
            model VARCHAR,
            tier VARCHAR,
            input_tokens BIGINT,
            output_tokens BIGINT,
            cache_read_tokens BIGINT,
            cache_write_tokens BIGINT,
            latency_s DOUBLE,
            cost_usd DOUBLE,
            retries INTEGER,
            outcome VARCHAR,
            error VARCHAR,
            request_hash VARCHAR,
            PRIMARY KEY (run_id, seq)
        );
        CREATE TABLE metrics (
            run_id VARCHAR,
            name VARCHAR,
            value DOUBLE,
            detail JSON,
            recorded_at TIMESTAMP DEFAULT current_timestamp,
            PRIMARY KEY (run_id, name)
        );
        """
    )


def migration_names() -> list[str]:
    """Names of the migrations this version knows, in order.

    >>> migration_names()[0]
    'm001_initial'
    """
    return [m.__name__ for m in MIGRATIONS]


@migration
def m002_run_overview(con: duckdb.DuckDBPyConnection) -> None:
    # One row per run with what a researcher looks at first (joins provenance and outcome).
    con.execute(
        """
        CREATE VIEW run_overview AS
        SELECT r.run_id, r.written_at, r.sweep_id, r.engine, r.backend, r.topic, r.persona_ids,
               r.seed, r.complete, d.regime, d.n_turns, d.n_cruxes, d.n_crux_cards,
               d.n_common_ground, d.n_shifted, d.calls, d.input_tokens, d.output_tokens,
               d.cost_usd, r.duration_s, r.run_dir
        FROM runs r LEFT JOIN debates d USING (run_id)
        """
    )


@migration
def m003_extra_and_named_reason(con: duckdb.DuckDBPyConnection) -> None:
    # ``extra`` (JSON) on every run table: fields the data model gained after this schema land
    # there instead of breaking the writer; a later migration may promote them to columns.
    tables = (
        "runs", "debates", "events", "turns", "arguments", "attacks", "disputes", "stances",
        "reasons", "cruxes", "crux_cards", "crux_card_positions", "common_ground", "camps",
        "concessions", "positions", "position_shifts", "llm_calls",
    )
    for table in tables:
        con.execute(f'ALTER TABLE "{table}" ADD COLUMN extra JSON')
    con.execute("ALTER TABLE turns ADD COLUMN named_reason VARCHAR")


def billed_sql() -> str:
    """crux_lab.models.is_billed in SQL (for rows written before the column existed): the
    billed backends of the registry."""
    return f"regexp_matches(backend, '(^|\\+)({'|'.join(billed_names())})(\\+|$)')"


def __getattr__(name: str) -> Any:
    if name == "BILLED_SQL":  # read from the backend registry when asked for
        return billed_sql()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@migration
def m004_billed(con: duckdb.DuckDBPyConnection) -> None:
    # Whether a run's (and a call's) cost was billed to an API key or only modelled: the same
    # rule as the CLI summary and the reports (crux_lab.models.is_billed), so cost queries
    # can say `WHERE billed` instead of guessing from backend names.
    for table in ("debates", "llm_calls"):
        con.execute(f'ALTER TABLE "{table}" ADD COLUMN billed BOOLEAN')
        con.execute(f'UPDATE "{table}" SET billed = {billed_sql()}')
    con.execute("DROP VIEW run_overview")
    con.execute(
        """
        CREATE VIEW run_overview AS
        SELECT r.run_id, r.written_at, r.sweep_id, r.engine, r.backend, r.topic, r.persona_ids,
               r.seed, r.complete, d.regime, d.n_turns, d.n_cruxes, d.n_crux_cards,
               d.n_common_ground, d.n_shifted, d.calls, d.input_tokens, d.output_tokens,
               d.cost_usd, d.billed, r.duration_s, r.run_dir
        FROM runs r LEFT JOIN debates d USING (run_id)
        """
    )


@migration
def m005_arena_judgements(con: duckdb.DuckDBPyConnection) -> None:
    # `crux-lab arena`: one row per judgement of two runs' crux cards (each pair of runs is
    # judged in both orders, judge_order 'ab' or 'ba'); winner is an engine name or 'tie'.
    con.execute(
        """
        CREATE TABLE arena_judgements (
            id VARCHAR PRIMARY KEY,
            judged_at TIMESTAMP DEFAULT current_timestamp,
            topic VARCHAR,
            engine_a VARCHAR,
            engine_b VARCHAR,
            run_a VARCHAR,
            run_b VARCHAR,
            judge_order VARCHAR,
            verdict VARCHAR,
            winner VARCHAR,
            reason VARCHAR,
            judge VARCHAR,
            rubric_version VARCHAR
        )
        """
    )


@migration
def m006_structured_output(con: duckdb.DuckDBPyConnection) -> None:
    # How the model server held replies to their JSON schema (openai backend): the mode the
    # run used (json_schema or prompt) and what the canary request showed (enforced, ignored,
    # rejected, not checked). NULL for backends without a server check.
    con.execute("ALTER TABLE runs ADD COLUMN structured_mode VARCHAR")
    con.execute("ALTER TABLE runs ADD COLUMN structured_canary VARCHAR")


@migration
def m007_backend_options(con: duckdb.DuckDBPyConnection) -> None:
    # Each backend carries its own options (DebateConfig.backend_options). Runs written before
    # kept the simulator's failure knobs in `sim`, which stays for their run folders; ingest
    # copies it into backend_options for them (LEGACY_OPTIONS_SQL).
    con.execute("ALTER TABLE runs ADD COLUMN backend_options JSON")
    con.execute(f"UPDATE runs SET backend_options = {LEGACY_OPTIONS_SQL}")


@migration
def m008_crux_polls(con: duckdb.DuckDBPyConnection) -> None:
    # The poll (crux_lab.engines.poll): one row per candidate crux and persona, the persona's own
    # answer asked alone, its confidence and reason, the side the debate had given it, whether
    # that flipped, and its pivot answer (would its answer on the topic change?).
    con.execute(
        """
        CREATE TABLE crux_polls (
            run_id VARCHAR,
            crux_id VARCHAR,
            question VARCHAR,
            status VARCHAR,
            persona_id VARCHAR,
            answer VARCHAR,
            confidence DOUBLE,
            reason VARCHAR,
            debate_side VARCHAR,
            flipped BOOLEAN,
            pivot_answer VARCHAR,
            pivot_reason VARCHAR,
            decisive BOOLEAN,
            raw_reply VARCHAR,
            extra JSON,
            PRIMARY KEY (run_id, crux_id, persona_id)
        )
        """
    )


# The options of a run written with a `sim` column: its non-zero knobs, as DebateConfig loads them.
LEGACY_OPTIONS_SQL = (
    "CAST(to_json(map_from_entries(list_filter(map_entries(CAST(sim AS MAP(VARCHAR, DOUBLE))), "
    "lambda e: e.value <> 0))) AS JSON)"
)
