"""The blackboard family: the ``blitz``, ``classical`` and ``graph`` engines.

- :mod:`.blitz`, :mod:`.classical`, :mod:`.graph`: the engines, one module each;
- :mod:`.claims`: the shared first steps (sub-claims, tables, initial stances);
- :mod:`.board`: the shared blackboard of blitz and classical (stances, disputes, convergence);
- :mod:`.output`: the final output of blitz and classical, mapped onto the result;
- :mod:`.graph_state`: the graph engine's argument graph and its output;
- :mod:`.events`: the events only this family streams;
- :mod:`.purposes`: the purposes of its requests, with their tiers (declared here, not in
  :mod:`crux_lab.llm`); :mod:`.sim`: the simulator's answers to them.
"""
