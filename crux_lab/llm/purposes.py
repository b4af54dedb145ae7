"""The purposes of requests: what each call asks a model to do.

An engine names its request's purpose; the simulated backend answers each purpose with one
handler (``crux_lab.llm.simulated``) and the model allocation (``crux_lab.llm.base.ALLOCATION``)
picks its tier. Both import these names, so the coupling shows in the imports. ``Purpose`` is a
``str`` enum: a member equals its string, so a request may name its purpose either way.

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
    # scoring
    judge = "judge"
    judge_falsifiers = "judge_falsifiers"
    # personas
    extract_beliefs = "extract_beliefs"
