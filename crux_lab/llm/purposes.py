"""The purposes of requests that belong to no single engine: what each call asks a model to do.

An engine names its request's purpose; the simulated backend answers each purpose with one
handler (``crux_lab.llm.simulated``) and the model allocation (``crux_lab.llm.base.ALLOCATION``)
picks its tier. ``Purpose`` is a ``str`` enum: a member equals its string, so a request may
name its purpose either way.

Only the shared purposes are here: a persona's opening (panel and dialogue), the worldview step
(its own engine, and panel and crux_rooms), the poll, the judges and persona building. Every
other purpose, crux_lab's own engines' included, is declared in its engine's package
(:func:`crux_lab.llm.base.declare_purpose`, e.g. ``crux_lab/engines/crux_room/purposes.py``)
with the simulator's answer beside the engine (:func:`crux_lab.llm.simulated.handler`, e.g.
``crux_lab/engines/crux_room/sim.py``).

>>> Purpose.poll == "poll"
True
"""

from __future__ import annotations

from enum import StrEnum


class Purpose(StrEnum):
    """The purposes no one engine owns; every other purpose is declared in its engine's module."""

    # a persona's opening statement (panel and dialogue)
    opening = "opening"
    # the worldview step (the worldview engine, and panel and crux_rooms before their debate)
    worldview_positions = "worldview_positions"
    crux_pairs = "crux_pairs"
    # the poll of candidate cruxes (every engine that finds cruxes): a persona answers alone
    poll = "poll"
    pivot = "pivot"
    # scoring
    judge = "judge"
    judge_falsifiers = "judge_falsifiers"
    # personas
    extract_beliefs = "extract_beliefs"


class Phase(StrEnum):
    """The stage of an engine a request belongs to: a label, like the purpose, of which
    instruction the prompt gives (the prompt states the instruction itself). A closed set, so a
    phase can carry no content of its own."""

    # panel and crux rooms
    decompose = "decompose"
    opening = "opening"
    take = "take"
    summarize = "summarize"
    clash = "clash"
    closing = "closing"
    channel = "channel"
    detect = "detect"
    crux_room = "crux_room"
    position = "position"
    exchange = "exchange"
    steelman = "steelman"
    convergence = "convergence"
    exit_check = "exit_check"
    card = "card"
    card_repair = "card_repair"
    # dialogue and dcg
    free_exchange = "free_exchange"
    crux_seeking = "crux_seeking"
    resolution = "resolution"
    # graph, blitz, worldview step and one-call baselines
    round = "round"
    worldview = "worldview"
    cards = "cards"


class SteeringLabel(StrEnum):
    """Which moderator's note a dialogue turn's prompt carries (the prompt shows the note)."""

    circling = "circling"
    crux_seeking = "crux_seeking"
    after_concession = "after_concession"
    after_reframe = "after_reframe"
    one_sided = "one_sided"
    stuck = "stuck"
