"""No internal id or template text reaches a reader: every text field of a result, from every
engine (the direct/cot baselines included), is scanned for the engine's own ids (arguments
like arg-6, claims like c2, disputes, cards, cruxes...), persona corpus chunk ids, deck
proposition ids (crypto.p3) and leftover template text ("... vs. ...", "{field}", "None",
"the split is a evidence dispute", preferred extensions called camps)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from crux_lab.engines import available
from crux_lab.llm.simulated import SimulatedBackend
from crux_lab.models import DebateConfig, DebateResult
from crux_lab.personas.loader import load_personas, propositions_for
from crux_lab.runner import run_debate

TOPIC = "Is Bitcoin a better long-term store of value than gold?"
PERSONAS = {
    "panel": ["michael-saylor", "peter-schiff", "arthur-hayes"],
    "crux_rooms": ["michael-saylor", "peter-schiff", "arthur-hayes"],
}
# Engines whose conversion to one channel (issue 12/14) another engineer has not finished:
# they fail here for that reason only. Remove an engine from this set once it passes.
NOT_YET_CONVERTED: set[str] = set()

PROPOSITION_ID = re.compile(r"\b[a-z][a-z0-9-]*\.p\d+\b")
GENERIC_IDS = re.compile(r"\b(arg-\d+|att-\d+|chunk[-_]\w+|c\d{1,3}|disp-\d+|d\d{1,3}|x\d{1,3}|g\d{1,3})\b")
TEMPLATE = re.compile(
    r"\{[a-z_]+\}|\bNone\b|\s+vs\.\s+|the split is a \w+ dispute|settle whether [a-z]+-\d+|"
    r"reframed the debate around the real question|\bsplit on whether\b.*\bsplit on\b"
)


def texts(result: DebateResult) -> Iterator[tuple[str, str]]:
    """(where, text) for every reader-facing text field of a result."""
    for c in result.cruxes:
        yield f"crux {c.id} statement", c.statement
        if c.settling_question:
            yield f"crux {c.id} settling question", c.settling_question
        for a in c.assumptions:
            yield f"crux {c.id} assumption", a
        for s in [*c.yes_side, *c.no_side]:
            yield f"crux {c.id} side", s.statement
    for card in result.crux_cards:
        yield f"card {card.id} question", card.question
        yield f"card {card.id} diagnosis", card.diagnosis
        if card.resolution:
            yield f"card {card.id} resolution", card.resolution
        for pid, pos in card.personas.items():
            yield f"card {card.id} {pid} reasoning", pos.reasoning
            if pos.falsifier:
                yield f"card {card.id} {pid} falsifier", pos.falsifier
    for g in result.common_ground:
        yield f"common ground {g.id}", g.statement
    for a in result.accepted_claims:
        yield f"accepted claim {a.id}", a.statement
    for camp in result.camps:
        yield f"camp {camp.index} label", camp.label
    for c in result.concession_trail:
        yield "concession claim", c.conceded_claim
        if c.effect:
            yield "concession effect", c.effect
        if c.reason:
            yield "concession reason", c.reason
    for s in result.position_shifts:
        if s.summary:
            yield f"shift {s.persona_id}", s.summary
        if s.named_reason:
            yield f"shift {s.persona_id} reason", s.named_reason
    for p in result.positions:
        yield f"position {p.persona_id} {p.at}", p.text
    yield "regime description", result.regime_description
    for f in result.fault_lines:
        yield "fault line", f
    for r in result.resolution_paths:
        yield "resolution path", r
    for pid, fs in result.flip_conditions.items():
        for f in fs:
            yield f"flip condition {pid}", f
    for t in result.transcript:
        yield f"turn {t.turn_index} ({t.persona_id})", t.dialogue
        if t.steering_hint:
            yield f"turn {t.turn_index} steering hint", t.steering_hint


def internal_ids(result: DebateResult) -> set[str]:
    """Every id the engine gave a thing of its own in this result."""
    ids = {a.id for a in result.graph.arguments} | {a.id for a in result.graph.attacks}
    ids |= {d.id for d in result.dcg.disputes} | {s.id for s in result.dcg.stances} | {r.id for r in result.dcg.reasons}
    ids |= {c.id for c in result.cruxes} | {c.id for c in result.crux_cards} | {g.id for g in result.common_ground}
    ids |= {a.id for a in result.accepted_claims} | {a.id for a in result.aspects}
    return {i for i in ids if len(i) >= 2}


def violations(result: DebateResult) -> list[str]:
    chunk_ids = {c.id for p in load_personas(result.config.persona_ids).values() for c in p.corpus}
    own = internal_ids(result)
    own_re = re.compile(r"(?<![\w-])(" + "|".join(re.escape(i) for i in sorted(own, key=len, reverse=True)) + r")(?![\w-])") if own else None
    n_personas = len(result.config.persona_ids)
    out = []
    for where, text in texts(result):
        for name, pattern in (("proposition id", PROPOSITION_ID), ("internal id", GENERIC_IDS), ("template text", TEMPLATE)):
            if m := pattern.search(text):
                out.append(f"{where}: {name} {m.group(0)!r} in {text[:120]!r}")
        if own_re is not None and (m := own_re.search(text)):
            out.append(f"{where}: the engine's own id {m.group(0)!r} in {text[:120]!r}")
        for cid in chunk_ids:
            if cid in text:
                out.append(f"{where}: corpus chunk id {cid!r}")
        if (m := re.search(r"\b(\d+) camps?\b", text)) and int(m.group(1)) > n_personas:
            out.append(f"{where}: {m.group(0)!r} for {n_personas} personas (preferred extensions called camps)")
    return out


def engine_params() -> list[object]:
    return [
        pytest.param(e, marks=pytest.mark.xfail(reason=f"{e}: conversion by another engineer not finished", strict=False))
        if e in NOT_YET_CONVERTED else e
        for e in sorted(available())
    ]


@pytest.mark.parametrize("engine", engine_params())
async def test_no_internal_id_or_template_text_reaches_a_reader(engine: str) -> None:
    ids = PERSONAS.get(engine, ["michael-saylor", "peter-schiff"])
    backend = SimulatedBackend(load_personas(ids), propositions_for(ids), seed=3)
    result = await run_debate(DebateConfig(topic=TOPIC, persona_ids=ids, engine=engine, max_turns=14, seed=3), backend=backend)
    assert result.error is None
    assert violations(result) == []


def test_the_scan_catches_what_it_should() -> None:
    from crux_lab.models import Crux

    config = DebateConfig(topic=TOPIC, persona_ids=["michael-saylor", "peter-schiff"])
    bad = DebateResult(
        run_id="r", config=config, engine="x", backend="simulated",
        cruxes=[Crux(id="crux-1", statement="Bitcoin is scarce vs. gold is money", source="symmetric_difference",
                     settling_question="What observable evidence would settle whether arg-6?")],
        regime_description="Polarized: 0 of 8 arguments in common ground, 16 camps.",
        fault_lines=["split on crypto.p3"],
    )
    found = "\n".join(violations(bad))
    for expected in ("template text ' vs. '", "'arg-6'", "'16 camps'", "'crypto.p3'"):
        assert expected in found
