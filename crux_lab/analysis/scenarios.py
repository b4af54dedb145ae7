"""Synthetic scenarios with planted cruxes: the ground truth of crux-recovery benchmarks.

A scenario is a small deck of synthetic archetypes with *planted* propositions:

- contested propositions, each of a known disagreement type, on which the personas are split
  (at least one pro and one con);
- consensus propositions that every persona holds the same way (the real common ground).

:func:`generate_scenarios` draws them from a bank of propositions in four policy domains,
seeded, so the same seed gives the same library. :func:`write_library` writes them as a
persona library folder in the formats of ``data/personas/`` (``contract.json``,
``voice.json``, ``stances.json``, ``corpus.jsonl``, ``beliefs.json`` per persona and a
``decks.json``) plus its answer key, ``answer_key.json`` (:data:`ANSWER_KEY`): for each
scenario its topic, personas and planted propositions with their disagreement type (``null``:
planted consensus). :func:`check_written` loads it back through the persona loader and the
library checker; :func:`load_scenarios` reads any such folder, a researcher's own included. :func:`use_library` points ``$CRUX_LAB_PERSONAS`` at it for a block, so any
engine runs on the scenarios unchanged::

    scenarios = generate_scenarios(3, seed=7)
    root = write_library(scenarios, tmp_dir)
    with use_library(root):
        result = run_debate_sync(scenarios[0].config(engine="dcg"))

Every persona is labelled synthetic and every text is written for this generator (no quotes).

``benchmarks/scenarios/`` holds a hand-written set in the same format, split into ``dev/`` (tune
on it) and a frozen ``test/``: :func:`set_digest` hashes a folder, :func:`load_scenarios` refuses
a folder whose ``frozen.json`` records another digest, and :func:`check_split` refuses a dev and
a test set that share a domain or a proposition.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crux_lab.models.config import DebateConfig
from crux_lab.models.domain import DisagreementType
from crux_lab.personas.loader import ENV_VAR, PersonaError, deck_for, get_deck, load_personas
from crux_lab.personas.validate import check_deck, check_persona

__all__ = [
    "ANSWER_KEY",
    "BANK",
    "PlantedProposition",
    "Scenario",
    "ScenarioError",
    "check_split",
    "check_written",
    "generate_scenario",
    "generate_scenarios",
    "load_scenarios",
    "scenario_digest",
    "set_digest",
    "use_library",
    "write_library",
]

ANSWER_KEY = "answer_key.json"
FROZEN = "frozen.json"  # beside the answer key of a frozen set: {"sha256": set_digest(root), "note": "..."}
SOURCE = "synthetic scenario written by crux_lab.analysis.scenarios (archetype, not a real person)"


class ScenarioError(ValueError):
    """A scenario request that cannot be met, or a written library that does not load."""


@dataclass(frozen=True)
class BankEntry:
    text: str
    question: str
    keywords: tuple[str, ...]
    type: DisagreementType
    pro: str  # reason of a persona holding it
    con: str  # reason of a persona rejecting it
    flip: tuple[str, ...]  # keywords of evidence that would move a holder to uncertain
    flip_description: str


T = DisagreementType
# Four domains, seven propositions each; "{city}" is filled per scenario.
BANK: dict[str, tuple[BankEntry, ...]] = {
    "transit": (
        BankEntry("Fare-free buses in {city} raise ridership enough to justify their cost.",
                  "Do fare-free buses in {city} raise ridership enough to justify their cost?",
                  ("fare-free", "ridership", "bus fares", "farebox"), T.evidence,
                  "Pilots in comparable cities saw ridership jump by a fifth within a year.",
                  "Most new riders were walkers and cyclists, so congestion did not fall.",
                  ("ridership", "fell"), "Ridership falls back within two years of the fare change"),
        BankEntry("Congestion pricing in downtown {city} is fair to low-income commuters.",
                  "Is congestion pricing in downtown {city} fair to low-income commuters?",
                  ("congestion pricing", "toll", "low-income", "downtown"), T.values,
                  "Low-income commuters mostly ride transit, which the toll revenue funds.",
                  "A flat toll takes a far larger share of a cleaner's wage than a banker's.",
                  ("commuters", "survey"), "Surveys show low-income drivers pay most of the toll"),
        BankEntry("Building the {city} light-rail line will pay off within thirty years.",
                  "Will the {city} light-rail line pay off within thirty years?",
                  ("light rail", "pay off", "thirty years", "capital cost"), T.horizon,
                  "Rail shapes land use for a century; thirty years is enough to recover the cost.",
                  "Cost overruns and slow ridership growth push any payback beyond a generation.",
                  ("overrun", "budget"), "The line's budget overrun exceeds half of its estimate"),
        BankEntry("Traffic deaths in {city} fall mainly because of street redesign, not enforcement.",
                  "Do traffic deaths in {city} fall mainly because of street redesign rather than enforcement?",
                  ("traffic deaths", "street redesign", "enforcement", "speed cameras"), T.premise,
                  "Narrower lanes and raised crossings slow drivers every hour of the day.",
                  "Speed cameras cut deaths faster than any redesign program has.",
                  ("cameras", "deaths"), "Camera corridors show larger drops in deaths than redesigned ones"),
        BankEntry("A 'complete street' in {city} means protected bike lanes on every arterial road.",
                  "Does a 'complete street' in {city} mean protected bike lanes on every arterial road?",
                  ("complete street", "bike lanes", "arterial", "protected"), T.definition,
                  "Without physical protection a street is not complete for a child on a bike.",
                  "Complete means fit for its context; some arterials need bus lanes instead.",
                  ("context", "bus lanes"), "Design guides define complete streets by context"),
        BankEntry("Public transit in {city} should be funded mainly from general taxes.",
                  "Should public transit in {city} be funded mainly from general taxes?",
                  ("general taxes", "transit funding", "subsidy", "fares"), T.claim,
                  "Transit is a public good that benefits drivers too, so everyone should pay.",
                  "Riders who benefit should pay a larger share through fares.",
                  ("fares", "riders"), "Riders prefer higher fares to service cuts"),
        BankEntry("Reliable bus service in {city} depends on frequent service more than on new routes.",
                  "Does reliable bus service in {city} depend on frequent service more than on new routes?",
                  ("frequency", "bus service", "routes", "waiting"), T.premise,
                  "Riders care most about how long they wait; frequency beats coverage.",
                  "Without routes where people live, frequency on the old routes helps nobody new.",
                  ("coverage", "routes"), "New routes draw more riders than frequency upgrades"),
    ),
    "energy": (
        BankEntry("Nuclear power is needed for {city}'s grid to reach zero carbon by 2045.",
                  "Is nuclear power needed for {city}'s grid to reach zero carbon by 2045?",
                  ("nuclear", "zero carbon", "2045", "grid"), T.premise,
                  "Wind and solar need firm power behind them when the weather fails.",
                  "Storage and transmission get cheaper every year; new reactors arrive too late.",
                  ("storage", "cheaper"), "Grid storage costs fall below the cost of firm nuclear power"),
        BankEntry("Rooftop solar lowers electricity bills for households that cannot afford panels.",
                  "Does rooftop solar lower electricity bills for households that cannot afford panels?",
                  ("rooftop solar", "electricity bills", "net metering", "households"), T.evidence,
                  "Solar at the peak lowers wholesale prices that every household pays.",
                  "Net metering shifts grid costs onto renters who cannot install panels.",
                  ("net metering", "renters"), "Utility filings show renters' bills rising with net metering"),
        BankEntry("A carbon tax in {city} should be returned to residents as an equal dividend.",
                  "Should a carbon tax in {city} be returned to residents as an equal dividend?",
                  ("carbon tax", "dividend", "rebate", "revenue"), T.values,
                  "An equal dividend leaves most low-income households better off.",
                  "The revenue should build clean infrastructure, not be handed back.",
                  ("dividend", "spent"), "Households spend dividends on fossil fuels"),
        BankEntry("Natural gas is a 'clean bridge fuel' for {city} over the next decade.",
                  "Is natural gas a 'clean bridge fuel' for {city} over the next decade?",
                  ("natural gas", "bridge fuel", "methane", "coal"), T.definition,
                  "Replacing coal with gas halves emissions at the smokestack.",
                  "Methane leaks make gas no cleaner than coal over twenty years.",
                  ("methane", "leak"), "Measured methane leak rates stay below one percent"),
        BankEntry("Heat pumps will pay for themselves in {city} homes within ten years.",
                  "Will heat pumps pay for themselves in {city} homes within ten years?",
                  ("heat pumps", "pay back", "ten years", "heating"), T.horizon,
                  "Lower running costs repay the installation within a decade.",
                  "Cold winters and high electricity prices stretch payback past the unit's life.",
                  ("winter", "efficiency"), "Field data show heat pumps lose efficiency in cold winters"),
        BankEntry("{city} should ban new gas connections in new buildings.",
                  "Should {city} ban new gas connections in new buildings?",
                  ("gas ban", "new buildings", "gas connections", "electrification"), T.claim,
                  "Every new gas connection locks in forty years of emissions.",
                  "A ban raises building costs when housing is already scarce.",
                  ("building costs", "raise"), "All-electric buildings cost more to build"),
        BankEntry("Blackouts in {city} are caused mainly by under-investment in transmission.",
                  "Are blackouts in {city} caused mainly by under-investment in transmission?",
                  ("blackouts", "transmission", "grid investment", "outages"), T.evidence,
                  "Outage reports trace most failures to overloaded lines.",
                  "Most outages start with storms hitting old distribution poles, not transmission.",
                  ("storms", "poles"), "Outage reports blame storms and poles"),
    ),
    "schools": (
        BankEntry("Smaller class sizes in {city} schools raise test scores.",
                  "Do smaller class sizes in {city} schools raise test scores?",
                  ("class size", "test scores", "teachers", "students"), T.evidence,
                  "Randomised trials found gains from smaller classes in the early grades.",
                  "Statewide class-size cuts hired weaker teachers and scores did not move.",
                  ("trials", "gains"), "Randomised trials show lasting gains from smaller classes"),
        BankEntry("Parents in {city} should be able to use public funds at private schools.",
                  "Should parents in {city} be able to use public funds at private schools?",
                  ("vouchers", "school choice", "private schools", "public funds"), T.values,
                  "Parents, not districts, should decide where their child learns.",
                  "Public money should build a common school open to every child.",
                  ("vouchers", "outcomes"), "Voucher students outperform their public-school peers"),
        BankEntry("Later school start times in {city} improve teenagers' grades within a year.",
                  "Do later school start times in {city} improve teenagers' grades within a year?",
                  ("start times", "sleep", "teenagers", "grades"), T.horizon,
                  "Teens sleep longer at once and attendance improves in the first year.",
                  "Grades move slowly; any effect takes years to show.",
                  ("sleep", "attendance"), "Districts that shifted start times report better attendance in year one"),
        BankEntry("'Learning loss' in {city} means students fell behind grade-level standards.",
                  "Does 'learning loss' in {city} mean students fell behind grade-level standards?",
                  ("learning loss", "grade level", "standards", "pandemic"), T.definition,
                  "Test scores against fixed standards are the only shared yardstick.",
                  "Students learned different things; measuring against old standards misreads it.",
                  ("standards", "measure"), "Alternative measures show the same gap as standards"),
        BankEntry("Phones should be banned during the school day in {city}.",
                  "Should phones be banned during the school day in {city}?",
                  ("phone ban", "smartphones", "school day", "distraction"), T.claim,
                  "Phones fragment attention and feed bullying during the day.",
                  "Bans are hard to enforce and cut students off from families.",
                  ("bullying", "fell"), "Schools with bans report bullying falling"),
        BankEntry("Teacher shortages in {city} are caused mainly by low pay.",
                  "Are teacher shortages in {city} caused mainly by low pay?",
                  ("teacher shortage", "pay", "salaries", "working conditions"), T.premise,
                  "Teachers leave for jobs that pay a third more for the same degree.",
                  "Exit surveys point to workload and discipline more than pay.",
                  ("exit surveys", "workload"), "Exit surveys rank workload above pay"),
        BankEntry("Free school meals for every student in {city} improve attendance.",
                  "Do free school meals for every student in {city} improve attendance?",
                  ("school meals", "free lunch", "attendance", "universal"), T.evidence,
                  "Universal meals remove stigma, and attendance rises where they start.",
                  "Attendance gains are small once poverty is accounted for.",
                  ("attendance", "rises"), "Attendance rises after universal meals start"),
    ),
    "work": (
        BankEntry("Remote work lowers productivity at {city} firms.",
                  "Does remote work lower productivity at {city} firms?",
                  ("remote work", "productivity", "office", "output"), T.evidence,
                  "Studies of call centres and engineers found output falling at home.",
                  "Firm-level data show output holding up while commuting time is saved.",
                  ("output", "held"), "Firm data show output held up under remote work"),
        BankEntry("A four-day work week in {city} keeps output constant within two years.",
                  "Does a four-day work week in {city} keep output constant within two years?",
                  ("four-day week", "output", "hours", "pilot"), T.horizon,
                  "Pilots kept output steady while burnout fell.",
                  "Pilot firms self-selected; gains fade after the first year.",
                  ("pilot", "fade"), "Pilot gains fade after the first year"),
        BankEntry("{city} should raise its minimum wage to twenty dollars an hour.",
                  "Should {city} raise its minimum wage to twenty dollars an hour?",
                  ("minimum wage", "twenty dollars", "wages", "jobs"), T.claim,
                  "A full-time worker should not need public assistance to pay rent.",
                  "A wage floor far above local productivity costs jobs for the least skilled.",
                  ("jobs", "lost"), "Employment falls after large minimum-wage increases"),
        BankEntry("Gig drivers in {city} are 'employees' rather than independent contractors.",
                  "Are gig drivers in {city} employees rather than independent contractors?",
                  ("gig drivers", "employees", "contractors", "platforms"), T.definition,
                  "The platform sets prices and disciplines drivers: that is employment.",
                  "Drivers choose their hours and work for several apps: that is contracting.",
                  ("hours", "choose"), "Drivers value choosing their hours above benefits"),
        BankEntry("Automation will reduce total employment in {city} over the next twenty years.",
                  "Will automation reduce total employment in {city} over the next twenty years?",
                  ("automation", "employment", "robots", "jobs"), T.premise,
                  "This wave replaces cognitive tasks, so new jobs will not absorb the displaced.",
                  "Every past wave of automation created more jobs than it destroyed.",
                  ("new jobs", "created"), "New occupations outnumber the jobs automated away"),
        BankEntry("Employers in {city} should be required to publish salary ranges.",
                  "Should employers in {city} be required to publish salary ranges?",
                  ("pay transparency", "salary ranges", "wage gap", "job ads"), T.values,
                  "Secret pay lets employers underpay people who do not know to ask.",
                  "Pay is a private matter between a firm and the person it hires.",
                  ("wage gap", "narrowed"), "The wage gap narrowed where ranges were published"),
        BankEntry("Union membership in {city} raises wages for non-members too.",
                  "Does union membership in {city} raise wages for non-members too?",
                  ("unions", "wages", "non-members", "bargaining"), T.evidence,
                  "Non-union firms raise pay to keep unions out.",
                  "The spillover vanishes once industry and region are controlled for.",
                  ("spillover", "controlled"), "Spillovers persist after controlling for industry"),
    ),
}

CITIES = ("Riverton", "Lakeview", "Port Ash", "Millbrook", "Eastfield", "Cedar Falls", "Northgate", "Harbor City")
ROLES = (
    ("pragmatist", "The Pragmatist", "Weighs costs and benefits; wants what works on the ground."),
    ("advocate", "The Advocate", "Speaks for the people a policy leaves out; impatient with delay."),
    ("skeptic", "The Skeptic", "Distrusts big claims; asks for the study behind every number."),
    ("economist", "The Economist", "Thinks in prices and incentives; quotes elasticities."),
    ("organizer", "The Organizer", "Builds coalitions; judges policy by who holds power."),
)


@dataclass(frozen=True)
class PlantedProposition:
    id: str
    text: str
    question: str
    keywords: tuple[str, ...]
    disagreement_type: DisagreementType | None  # None: planted consensus
    stances: dict[str, str]  # persona id -> "pro" | "con" | "uncertain"
    entry: BankEntry | None = None  # None: read from a scenarios folder, not drawn from the bank

    @property
    def contested(self) -> bool:
        return self.disagreement_type is not None


@dataclass(frozen=True)
class Scenario:
    """One synthetic deck with planted ground truth (runtime)."""

    id: str
    domain: str
    city: str
    topic: str
    persona_ids: tuple[str, ...]
    propositions: tuple[PlantedProposition, ...]
    confidences: dict[tuple[str, str], float] = field(default_factory=dict)
    flips: frozenset[tuple[str, str]] = frozenset()  # (persona, proposition) with a flip condition

    @property
    def contested(self) -> dict[str, DisagreementType]:
        """Planted contested propositions and their types."""
        return {p.id: p.disagreement_type for p in self.propositions if p.disagreement_type is not None}

    @property
    def consensus(self) -> set[str]:
        return {p.id for p in self.propositions if p.disagreement_type is None}

    def truth(self) -> dict[str, dict[str, str]]:
        """``{persona_id: {proposition_id: stance}}``."""
        return {pid: {p.id: p.stances[pid] for p in self.propositions} for pid in self.persona_ids}

    def config(
        self, engine: str, *, seed: int = 0, backend_options: Mapping[str, Any] | None = None, **params: object
    ) -> DebateConfig:
        """A debate config for this scenario (the engine's own defaults unless ``params``;
        ``backend_options``: the backend's own, e.g. failure knobs)."""
        return DebateConfig(
            topic=self.topic, persona_ids=list(self.persona_ids), engine=engine, seed=seed,
            backend_options=dict(backend_options or {}), deck=self.id, params=dict(params),
        )


def _fill(text: str, city: str) -> str:
    return text.replace("{city}", city)


def generate_scenario(
    index: int,
    rng: random.Random,
    *,
    n_personas: int = 3,
    n_contested: int = 4,
    n_consensus: int = 2,
    domain: str | None = None,
) -> Scenario:
    """One scenario: ``n_contested`` planted cruxes (each with at least one pro and one con
    persona) and ``n_consensus`` propositions every persona holds pro."""
    if not 2 <= n_personas <= len(ROLES):
        raise ScenarioError(f"n_personas must be 2..{len(ROLES)}, got {n_personas}.")
    domain = domain or rng.choice(sorted(BANK))
    if domain not in BANK:
        raise ScenarioError(f"unknown domain {domain!r}; known: {', '.join(sorted(BANK))}.")
    bank = BANK[domain]
    if n_contested < 1 or n_consensus < 0 or n_contested + n_consensus > len(bank):
        raise ScenarioError(
            f"n_contested + n_consensus must be 1..{len(bank)} with n_contested >= 1 "
            f"(got {n_contested} + {n_consensus})."
        )
    city = rng.choice(CITIES)
    sid = f"scn{index:03d}"
    roles = rng.sample(ROLES, n_personas)
    persona_ids = tuple(f"{sid}-{r[0]}" for r in roles)
    chosen = rng.sample(range(len(bank)), n_contested + n_consensus)
    props: list[PlantedProposition] = []
    confidences: dict[tuple[str, str], float] = {}
    flips: set[tuple[str, str]] = set()
    for k, bank_index in enumerate(chosen):
        entry = bank[bank_index]
        contested = k < n_contested
        pid = f"{sid}.p{k + 1}"
        if contested:
            order = list(persona_ids)
            rng.shuffle(order)
            stances = {order[0]: "pro", order[1]: "con"}
            for other in order[2:]:
                stances[other] = rng.choice(["pro", "con"])
        else:
            stances = dict.fromkeys(persona_ids, "pro")
        for persona in persona_ids:
            confidences[(persona, pid)] = round(rng.uniform(0.6, 0.95), 2)
            if contested and rng.random() < 0.5:
                flips.add((persona, pid))
        props.append(
            PlantedProposition(
                id=pid, text=_fill(entry.text, city), question=_fill(entry.question, city),
                keywords=entry.keywords, disagreement_type=entry.type if contested else None,
                stances={p: stances[p] for p in persona_ids}, entry=entry,
            )
        )
    topic = f"{domain.capitalize()} policy in {city}"
    return Scenario(sid, domain, city, topic, persona_ids, tuple(props), confidences, frozenset(flips))


def generate_scenarios(n: int, seed: int = 0, **kwargs: int) -> list[Scenario]:
    """``n`` scenarios from one seed (same seed, same scenarios); ``kwargs`` go to
    :func:`generate_scenario`.

    >>> [s.id for s in generate_scenarios(2, seed=1)]
    ['scn000', 'scn001']
    >>> generate_scenarios(1, seed=1)[0].topic == generate_scenarios(1, seed=1)[0].topic
    True
    """
    if n < 1:
        raise ScenarioError(f"the number of scenarios must be at least 1, got {n}.")
    rng = random.Random(seed)
    return [generate_scenario(i, rng, **kwargs) for i in range(n)]  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Writing a persona library
# ---------------------------------------------------------------------------


def _persona_files(s: Scenario, persona_id: str) -> dict[str, object]:
    role = next(r for r in ROLES if persona_id.endswith(r[0]))
    short = persona_id
    chunks: list[dict[str, str]] = []
    nodes: list[dict[str, object]] = []
    stances: list[dict[str, object]] = []
    for k, p in enumerate(s.propositions, start=1):
        stance = p.stances[persona_id]
        if p.entry is None:
            raise ScenarioError(f"proposition {p.id} was read from a folder; write_library writes generated scenarios only.")
        reason = p.entry.pro if stance == "pro" else p.entry.con
        chunk_id = f"{short}-c{k:02d}"
        node_id = f"{short}-n{k:02d}"
        chunks.append({"id": chunk_id, "text": f"{reason} ({p.text})", "source": SOURCE, "date": "2026", "kind": "synthetic"})
        nodes.append({"id": node_id, "concept": reason.rstrip("."), "type": "inference",
                      "confidence": s.confidences[(persona_id, p.id)], "grounding": [chunk_id]})
        flips = []
        if (persona_id, p.id) in s.flips:
            flips.append({
                "id": f"{short}.p{k}.f1", "kind": "evidence", "description": p.entry.flip_description,
                "propositionId": p.id, "keywords": list(p.entry.flip), "by": "any", "newStance": "uncertain",
            })
        stances.append({
            "propositionId": p.id, "stance": stance, "confidence": s.confidences[(persona_id, p.id)],
            "reason": reason, "flipConditions": flips,
            "disagreementType": p.disagreement_type.value if p.disagreement_type else None,
            "beliefNodeIds": [node_id], "grounding": [chunk_id],
        })
    contract = {
        "personaId": persona_id, "name": f"{role[1]} ({s.city})", "handle": "", "kind": "synthetic",
        "version": "scenario", "personality": f"A synthetic archetype. {role[2]}",
        "bias": "Reads the evidence in the light of the side it already holds.",
        "stakes": f"Lives and works in {s.city}.",
        "epistemology": "Local data first, then comparable cities.",
        "timeHorizon": "The next ten years.",
        "flipConditions": "Would move on well-identified local evidence.",
        "evidencePolicy": {"accepts": ["local data", "randomised trials"], "rejects": ["anecdotes"], "weighting": "Data over stories."},
        "anchorExcerpts": [{"text": chunks[0]["text"], "source": SOURCE, "date": "2026", "kind": "synthetic"}],
    }
    words = sorted({w for p in s.propositions for w in p.keywords})[:6]
    voice = {
        "speechPatterns": ["States a position, then one reason"], "vocabulary": words,
        "forbiddenPhrases": ["That's a great point"],
        "voiceExamples": [{"text": "(synthetic example) Show me the local numbers.", "source": SOURCE, "date": "", "kind": "synthetic"}],
        "rhetoricalFingerprint": ["plain"],
    }
    beliefs = {"personaId": persona_id, "nodes": nodes, "edges": [], "extractedAt": "scenario", "contradictions": []}
    return {
        "contract.json": contract, "voice.json": voice,
        "stances.json": {"personaId": persona_id, "stances": stances},
        "beliefs.json": beliefs, "corpus.jsonl": chunks,
    }


def _deck(s: Scenario) -> dict[str, object]:
    return {
        "id": s.id, "name": f"Scenario {s.id}: {s.topic}",
        "description": f"Synthetic scenario ({s.domain}) with {len(s.contested)} planted cruxes and {len(s.consensus)} consensus propositions.",
        "personaIds": list(s.persona_ids), "topics": [s.topic],
        "propositions": [
            {"id": p.id, "text": p.text, "question": p.question, "keywords": list(p.keywords),
             "aspect": p.keywords[0], "disagreementType": p.disagreement_type.value if p.disagreement_type else None}
            for p in s.propositions
        ],
    }


def write_library(scenarios: Sequence[Scenario], root: str | Path) -> Path:
    """Write the scenarios as one persona library folder (created; existing scenario files are
    overwritten) and return it. Use it with :func:`use_library` or ``$CRUX_LAB_PERSONAS``."""
    out = Path(root)
    out.mkdir(parents=True, exist_ok=True)
    for s in scenarios:
        for pid in s.persona_ids:
            folder = out / pid
            folder.mkdir(exist_ok=True)
            for name, data in _persona_files(s, pid).items():
                if name.endswith(".jsonl"):
                    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in data)  # type: ignore[attr-defined]
                else:
                    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
                (folder / name).write_text(text, encoding="utf-8")
    (out / "decks.json").write_text(json.dumps({"decks": [_deck(s) for s in scenarios]}, indent=1) + "\n", encoding="utf-8")
    key = [{**_answer(s), "domain": s.domain} if s.domain else _answer(s) for s in scenarios]
    (out / ANSWER_KEY).write_text(json.dumps({"scenarios": key}, indent=1) + "\n", encoding="utf-8")
    return out


def _answer(s: Scenario) -> dict[str, object]:
    """One scenario's entry in the answer key: what scoring needs, and nothing a model sees.
    (Its ``domain`` is added by :func:`write_library`; it is left out here so that
    :func:`scenario_digest`, and with it the run ids, stay as they were.)"""
    return {
        "id": s.id, "topic": s.topic, "personaIds": list(s.persona_ids),
        "propositions": [
            {"id": p.id, "text": p.text, "question": p.question,
             "type": p.disagreement_type.value if p.disagreement_type else None}
            for p in s.propositions
        ],
    }


@contextmanager
def use_library(root: str | Path) -> Iterator[Path]:
    """Point ``$CRUX_LAB_PERSONAS`` at ``root`` for the block (restored afterwards)."""
    old = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = str(root)
    try:
        yield Path(root)
    finally:
        if old is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = old


def check_written(root: str | Path, scenarios: Sequence[Scenario]) -> list[str]:
    """Load the written library back through the persona loader and the library checker;
    returns the checker's warnings and raises :class:`ScenarioError` on any error or any
    mismatch with the planted truth."""
    notes: list[str] = []
    with use_library(root):
        for s in scenarios:
            personas = load_personas(s.persona_ids)
            deck = get_deck(s.id)
            issues = [i for p in personas.values() for i in check_persona(p)] + check_deck(deck, personas)
            errors = [str(i) for i in issues if i.severity == "error"]
            if errors:
                raise ScenarioError(f"{root}: scenario {s.id} does not pass the persona checker: {errors[0]}")
            notes += [str(i) for i in issues]
            loaded = {pid: {st.proposition_id: st.stance for st in p.stances.stances} for pid, p in personas.items()}
            if loaded != s.truth():
                raise ScenarioError(f"{root}: scenario {s.id} stances do not round-trip.")
            planted = {p.id: p.disagreement_type for p in deck.propositions if p.disagreement_type}
            if planted != s.contested:
                raise ScenarioError(f"{root}: scenario {s.id} deck types do not round-trip.")
    return notes


# ---------------------------------------------------------------------------
# Reading a scenarios folder (a persona library and its answer key)
# ---------------------------------------------------------------------------


def _key_error(path: Path, where: str, problem: str) -> ScenarioError:
    return ScenarioError(f"{path}: {where}: {problem} (the format is in README.md, 'Your own scenarios').")


def _answer_entry(path: Path, k: int, raw: object) -> tuple[str, str, str, tuple[str, ...], list[dict[str, object]]]:
    """One answer-key entry checked field by field: id, domain (optional), topic, persona ids,
    propositions."""
    where = f"scenarios[{k}]"
    if not isinstance(raw, dict):
        raise _key_error(path, where, "each scenario must be an object with id, topic, personaIds and propositions")
    sid, topic, personas, props = raw.get("id"), raw.get("topic"), raw.get("personaIds"), raw.get("propositions")
    if not isinstance(sid, str) or not sid.strip():
        raise _key_error(path, f"{where}.id", "give the scenario an id, e.g. \"libraries\"")
    if not isinstance(topic, str) or not topic.strip():
        raise _key_error(path, f"{where}.topic", "give the debate topic as text")
    domain = raw.get("domain", "")
    if not isinstance(domain, str):
        raise _key_error(path, f"{where}.domain", "write the domain as text, e.g. \"housing\", or leave the field out")
    if not isinstance(personas, list) or len(personas) < 2 or not all(isinstance(p, str) and p for p in personas):
        raise _key_error(path, f"{where}.personaIds", "list at least two persona ids (folders of this library)")
    if not isinstance(props, list) or not props:
        raise _key_error(path, f"{where}.propositions", "list the planted propositions")
    for j, prop in enumerate(props):
        at = f"{where}.propositions[{j}]"
        if not isinstance(prop, dict):
            raise _key_error(path, at, "each proposition must be an object with id, text, question and type")
        for name in ("id", "text", "question"):
            if not isinstance(prop.get(name), str) or not str(prop.get(name)).strip():
                raise _key_error(path, f"{at}.{name}", "missing or empty; write it as text")
        kind = prop.get("type", "missing")
        if kind is not None and kind not in {t.value for t in DisagreementType}:
            raise _key_error(path, f"{at}.type", f"{kind!r} is not a type; use one of "
                             f"{', '.join(t.value for t in DisagreementType)}, or null for planted common ground")
    if not any(p.get("type") is not None for p in props):
        raise _key_error(path, f"{where}.propositions", "no proposition is contested; give at least one a type")
    return sid, domain.strip(), topic.strip(), tuple(personas), props


def _norm(text: str) -> str:
    """Text compared case- and space-insensitively: ``"A  b"`` and ``"a b"`` are the same."""
    return " ".join(text.lower().split())


def set_digest(root: str | Path) -> str:
    """The sha256 (hex) of a scenarios folder: every file in it and below, in sorted order of
    relative path, each as its path, its size and its bytes. ``frozen.json`` at the top (which
    holds this digest) and hidden files (names starting with ``.``) are left out.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "answer_key.json").write_text("{}")
    >>> before = set_digest(d)
    >>> _ = (d / FROZEN).write_text('{"sha256": "..."}')
    >>> set_digest(d) == before
    True
    >>> _ = (d / "answer_key.json").write_text("{ }")
    >>> set_digest(d) == before
    False
    """
    folder = Path(root)
    h = hashlib.sha256()
    files = sorted(
        (f.relative_to(folder).as_posix(), f) for f in folder.rglob("*")
        if f.is_file() and not any(part.startswith(".") for part in f.relative_to(folder).parts)
    )
    for rel, file in files:
        if rel == FROZEN:
            continue
        data = file.read_bytes()
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def _check_frozen(folder: Path) -> None:
    """A folder with ``frozen.json`` must hash to the digest it records."""
    path = folder / FROZEN
    if not path.is_file():
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScenarioError(f"{path}: not valid JSON ({exc}); restore the file from git.") from None
    expected = data.get("sha256") if isinstance(data, dict) else None
    if not isinstance(expected, str) or len(expected) != 64:
        raise ScenarioError(f"{path}: sha256: missing or not a sha256 hex digest; restore the file from git.")
    actual = set_digest(folder)
    if actual != expected:
        raise ScenarioError(
            f"{path}: sha256: the test set is frozen: its files changed since it was frozen (they hash to {actual[:12]}..., "
            f"frozen.json says {expected[:12]}...); do not tune on or edit test/, add scenarios to dev/ "
            "(restore the files with `git checkout -- <folder>`)."
        )


def _check_own_stances(folder: Path, sid: str, persona_ids: Sequence[str]) -> None:
    """Each persona's ``stances.json`` is its own: its ``personaId`` is the persona of its folder.
    (A file that is missing or not JSON is left to the persona loader, which names it.)"""
    for pid in persona_ids:
        path = folder / pid / "stances.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        owner = data.get("personaId") if isinstance(data, dict) else None
        if owner is not None and owner != pid:
            where = "a persona this scenario does not have" if owner not in persona_ids else "another persona of this scenario"
            raise ScenarioError(f"{path}: personaId: {owner!r} is {where}, not {pid!r} whose folder this is "
                                f"(scenario {sid}); set it to {pid!r}.")


def load_scenarios(root: str | Path) -> list[Scenario]:
    """The scenarios of a folder in the format :func:`write_library` writes: persona folders,
    ``decks.json`` and ``answer_key.json``. The planted stances are read from each persona's
    ``stances.json`` (its beliefs), and so are its flip conditions (``Scenario.flips``: which
    persona would move on which planted proposition); the answer key says which propositions
    are contested and how. Bad input raises :class:`ScenarioError`, one line naming the file, the field and the fix:
    among others a contested proposition nobody opposes, a stance file or flip condition naming
    a persona the scenario does not have, a proposition planted twice, and a frozen folder
    (one with ``frozen.json``) whose files no longer hash to the digest it records.
    """
    folder = Path(root)
    if not folder.is_dir():
        raise ScenarioError(f"{folder}: not a folder; pass a scenarios folder (persona folders, decks.json and "
                            f"{ANSWER_KEY}, as `crux-lab eval recovery --library DIR` writes them).")
    _check_frozen(folder)
    path = folder / ANSWER_KEY
    if not path.is_file():
        raise ScenarioError(f"{path}: file missing; a scenarios folder needs its answer key beside the persona "
                            "folders (the format is in README.md, 'Your own scenarios').")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScenarioError(f"{path}: not valid JSON ({exc}); fix the syntax.") from None
    entries = data.get("scenarios") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise _key_error(path, "scenarios", "write {\"scenarios\": [...]} with at least one scenario")
    out: list[Scenario] = []
    seen: dict[str, str] = {}  # normalised proposition text or question -> where it was first planted
    for k, raw in enumerate(entries):
        sid, domain, topic, persona_ids, props = _answer_entry(path, k, raw)
        if sid in {s.id for s in out}:
            raise _key_error(path, f"scenarios[{k}].id", f"{sid!r} is used twice; give each scenario its own id")
        for j, prop in enumerate(props):
            for name in ("text", "question"):
                at = f"scenarios[{k}].propositions[{j}].{name}"
                first = seen.setdefault(_norm(str(prop[name])), at)
                if first != at:
                    raise _key_error(path, at, f"the same words as {first}; a proposition is planted once in a set, "
                                     "so reword one of them or drop it")
        _check_own_stances(folder, sid, persona_ids)
        with use_library(folder):
            try:
                personas = load_personas(persona_ids)
                deck = deck_for(persona_ids)
            except PersonaError as exc:
                raise ScenarioError(f"{path}: scenarios[{k}].personaIds: {exc}") from None
        missing = [str(p["id"]) for p in props if deck is None or str(p["id"]) not in {d.id for d in deck.propositions}]
        if missing:
            raise ScenarioError(f"{folder / 'decks.json'}: decks: no deck lists the personas of scenario {sid} with "
                                f"proposition {missing[0]}; add it (the personas' beliefs are worded from the deck).")
        for pid, persona in personas.items():
            for i, st in enumerate(persona.stances.stances):
                for f, flip in enumerate(st.flip_conditions):
                    if flip.by != "any" and flip.by not in persona_ids:
                        raise ScenarioError(
                            f"{folder / pid / 'stances.json'}: stances[{i}].flipConditions[{f}].by: {flip.by!r} is not a "
                            f"persona of scenario {sid}; use one of {', '.join(persona_ids)} or \"any\".")
        held = {pid: {st.proposition_id: st.stance for st in p.stances.stances} for pid, p in personas.items()}
        planted: list[PlantedProposition] = []
        flips = {(pid, st.proposition_id) for pid, p in personas.items() for st in p.stances.stances if st.flip_conditions}
        for pid in persona_ids:
            if not any(str(prop["id"]) in held[pid] for prop in props):
                raise ScenarioError(f"{folder / pid / 'stances.json'}: stances: no planted beliefs; give {pid} a stance "
                                    f"on the propositions of scenario {sid} (their ids are in {ANSWER_KEY}).")
        for j, prop in enumerate(props):
            prop_id = str(prop["id"])
            stances: dict[str, str] = {pid: held[pid].get(prop_id, "uncertain") for pid in persona_ids}
            kind = DisagreementType(str(prop["type"])) if prop["type"] is not None else None
            if kind is not None and not {"pro", "con"} <= set(stances.values()):
                raise _key_error(path, f"scenarios[{k}].propositions[{j}].type",
                                 f"{prop_id} is marked contested but no persona holds it "
                                 f"{'con' if 'pro' in stances.values() else 'pro'}; set type to null or plant an opposing stance")
            planted.append(PlantedProposition(id=prop_id, text=str(prop["text"]), question=str(prop["question"]),
                                              keywords=(), disagreement_type=kind, stances=stances))
        planted_ids = {p.id for p in planted}
        out.append(Scenario(sid, domain, "", topic, persona_ids, tuple(planted),
                            flips=frozenset(f for f in flips if f[1] in planted_ids)))
    return out


def check_split(dev_root: str | Path, test_root: str | Path) -> tuple[list[Scenario], list[Scenario]]:
    """Load a dev and a test set (each checked by :func:`load_scenarios`) and check that they
    share no proposition (text or question, compared case- and space-insensitively) and no
    domain; every scenario of both must name its ``domain``. Returns ``(dev, test)``; raises
    :class:`ScenarioError` naming the test set's file and field otherwise."""
    dev, test = load_scenarios(dev_root), load_scenarios(test_root)
    for root, scenarios in ((dev_root, dev), (test_root, test)):
        for k, s in enumerate(scenarios):
            if not s.domain:
                raise _key_error(Path(root) / ANSWER_KEY, f"scenarios[{k}].domain",
                                 f"scenario {s.id} names no domain; dev/ and test/ are split by domain, so give it one")
    dev_key, test_key = Path(dev_root) / ANSWER_KEY, Path(test_root) / ANSWER_KEY
    dev_domains = {_norm(s.domain): s.id for s in dev}
    words = {_norm(getattr(p, name)): (s.id, p.id) for s in dev for p in s.propositions for name in ("text", "question")}
    for k, s in enumerate(test):
        if _norm(s.domain) in dev_domains:
            raise ScenarioError(f"{test_key}: scenarios[{k}].domain: {s.domain!r} is also the domain of scenario "
                                f"{dev_domains[_norm(s.domain)]} in {dev_key}; dev/ and test/ must not share a domain, "
                                "so keep each domain in one set.")
        for j, p in enumerate(s.propositions):
            for name in ("text", "question"):
                if _norm(getattr(p, name)) in words:
                    other = words[_norm(getattr(p, name))]
                    raise ScenarioError(f"{test_key}: scenarios[{k}].propositions[{j}].{name}: the same words as "
                                        f"{other[1]} (scenario {other[0]}) in {dev_key}; dev/ and test/ must not share a "
                                        "proposition, so reword or drop one of them.")
    return dev, test


def scenario_digest(root: str | Path, scenario: Scenario) -> str:
    """Eight hex digits of what its debates depend on: the scenario's answer key entry, its
    deck, and its personas' files. Part of each debate's run id, so editing a scenario folder
    reruns its debates instead of reusing stale ones."""
    folder = Path(root)
    parts: list[bytes] = [json.dumps(_answer(scenario), sort_keys=True).encode()]
    decks = folder / "decks.json"
    if decks.is_file():
        raw = json.loads(decks.read_text(encoding="utf-8")).get("decks", [])
        parts.append(json.dumps([d for d in raw if d.get("id") == scenario.id], sort_keys=True).encode())
    for pid in scenario.persona_ids:
        for file in sorted((folder / pid).glob("*")):
            if file.is_file():
                parts += [file.name.encode(), file.read_bytes()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:8]
