"""The persona library's tools that sit above the LLM layer.

- :mod:`crux_lab.persona_tools.build` — corpus -> ``beliefs.json`` pipeline (asks a backend);
- :mod:`crux_lab.persona_tools.cli` — the ``crux-lab personas`` commands.

The persona file formats, loader, retrieval and prompt material stay in :mod:`crux_lab.personas`,
below :mod:`crux_lab.llm` (which reads them).
"""
