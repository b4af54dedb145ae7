"""The one-call family: the ``direct`` and ``cot`` baselines.

- :mod:`.direct`: the two engines (``cot`` is ``direct`` asked to reason first), their prompts,
  their reply schema and their purposes (``direct_cards``, ``cot_cards``);
- :mod:`.sim`: the simulator's answer to those purposes.
"""
