"""The purposes of requests: what each call asks a model to do.

An engine names its request's purpose; the simulated backend answers each purpose with one
handler (``crux_lab.llm.simulated``) and the model allocation (``crux_lab.llm.base.ALLOCATION``)
picks its tier. Both import these names, so the coupling shows in the imports. ``Purpose`` is a
``str`` enum: a member equals its string, so a request may name its purpose either way.

These are crux_lab's own. An engine outside them declares its purposes in its own module
(:func:`crux_lab.llm.base.declare_purpose`) and, optionally, the simulator's answer
(:func:`crux_lab.llm.simulated.handler`).

>>> Purpose.card == "card"
True
"""

from __future__ import annotations

from enum import StrEnum


class Purpose(StrEnum):
    # panel and crux rooms
    decompose = "decompose"
    opening = "opening"
    take = "take"
    rebuttal = "rebuttal"
    detect_disagreement = "detect_disagreement"
    crux_turn = "crux_turn"
    exit_check = "exit_check"
    card = "card"
    summarize = "summarize"
    closing = "closing"
    channel_message = "channel_message"
    anti_sycophancy_check = "anti_sycophancy_check"
    # dialogue and dcg
    dialogue_turn = "dialogue_turn"
    crystallize = "crystallize"
    discovery = "discovery"
    resolution = "resolution"
    # graph, blitz, classical
    initial_arguments = "initial_arguments"
    generate_attacks = "generate_attacks"
    validate_attacks = "validate_attacks"
    decompose_claims = "decompose_claims"
    initial_stance = "initial_stance"
    agent_turn = "agent_turn"
    blackboard_turn = "blackboard_turn"
    urgency = "urgency"
    blackboard_summary = "blackboard_summary"
    final_output = "final_output"
    # worldview step and one-call baselines
    worldview_positions = "worldview_positions"
    crux_pairs = "crux_pairs"
    direct_cards = "direct_cards"
    cot_cards = "cot_cards"
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
