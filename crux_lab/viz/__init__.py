"""Figure builders: pure functions, data in, plotly figure (or escaped HTML) out.

- :mod:`~crux_lab.viz.transcript`: colour-coded transcript, crux cards, ledger;
- :mod:`~crux_lab.viz.framework`: argument framework (IN/OUT/UNDEC, camps, cruxes, steps),
  live graph statistics;
- :mod:`~crux_lab.viz.alignment`: persona × crux, persona × persona, crux types;
- :mod:`~crux_lab.viz.polls`: persona × crux of the personas' own answers, asked alone, decisive cells starred;
- :mod:`~crux_lab.viz.shifts`: opening → closing per persona, stance timeline;
- :mod:`~crux_lab.viz.benchmark`: engine comparison over a sweep with confidence intervals;
- :mod:`~crux_lab.viz.belief_graph` and :mod:`~crux_lab.viz.network`: belief graphs (persona
  issue).

Every piece of LLM or persona text is escaped (``_text.esc``) before it becomes HTML.
"""
