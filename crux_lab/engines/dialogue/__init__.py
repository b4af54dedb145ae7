"""The dialogue family: the ``dialogue`` and ``dcg`` engines and their shared machinery.

- :mod:`.dialogue`: the two engines (they differ only in the graph their crystallizer keeps);
- :mod:`.engine`: the shared engine loop;
- :mod:`.controller`: moderator (turn-taking, steering, crystallization triggers, phases);
- :mod:`.prompts`: dialogue, crystallizer and discovery prompts;
- :mod:`.schemas`: the LLM output schemas (``{dialogue, move}``, CrystallizationResult, DCG);
- :mod:`.graph`: the Dung argument graph; :mod:`.dcg_state`: the DCG under its hard rules;
- :mod:`.crystallizer`: the two crystallizers;
- :mod:`.events`: the events only this family streams;
- :mod:`.purposes`: the purposes of its requests, with their tiers (declared here, not in
  :mod:`crux_lab.llm`); :mod:`.sim`: the simulator's answers to them.
"""
