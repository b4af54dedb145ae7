"""The crux-room family: the ``panel`` and ``crux_rooms`` engines and their shared machinery.

- :mod:`.panel`, :mod:`.crux_rooms`: the engines, one module each;
- :mod:`.schemas`: the structured replies the engines ask the model for;
- :mod:`.prompts`: persona system prompt and per-phase instructions;
- :mod:`.context`: tiered debate context, bounded room context, anonymized history;
- :mod:`.antisyc`: the anti-sycophancy stack, one switch per measure;
- :mod:`.run`: the engine shell (persona maximum from params) and the per-run state both engines keep;
- :mod:`.speaker`: one persona turn = request -> reply -> check -> DialogueTurn;
- :mod:`.detection`: boolean disagreement detection, majority vote, queue, staged spawn gate;
- :mod:`.room`: crux rooms (three-phase and conversation loop) and card extraction;
- :mod:`.outcome`: DebateResult insight fields (cruxes, common ground, camps, shifts, regime);
- :mod:`.timeline`: which calls ran in parallel, for wall-time vs critical-path numbers;
- :mod:`.events`: the events only this family streams;
- :mod:`.purposes`: the purposes of its requests, with their tiers (declared here, not in
  :mod:`crux_lab.llm`); :mod:`.sim`: the simulator's answers to them.
"""
