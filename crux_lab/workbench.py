"""The notebook-facing API: thin calls that notebooks make, so no logic lives in a cell.

    import crux_lab.workbench as wb
    wb.setup_plotly()                          # offline HTML export keeps the figures
    result = wb.run_debate_from_parameters(topic=..., personas=[...], engine="dialogue",
                                           run_dir=run_dir)   # run + write the run folder
    result = wb.load_run("3f2a9c...")          # by run id (DuckDB or files) or by folder

A debate run from notebook parameters builds its :class:`~crux_lab.models.DebateConfig` with
:func:`crux_lab.sweep.spec.config_from_params`, so its run id is the sweep cell's run id.
"""

from __future__ import annotations

import asyncio
import difflib
import math
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from crux_lab.analysis.crux_groups import describes_sides, found_cruxes, group_cruxes
from crux_lab.analysis.fake_consensus import audit
from crux_lab.analysis.insights import alignment_report
from crux_lab.analysis.shifts import observations_from_turns
from crux_lab.analysis.shifts import shift_timeline as timeline
from crux_lab.llm import resolve_backend_name
from crux_lab.models.config import DebateConfig
from crux_lab.models.result import DebateResult
from crux_lab.personas.loader import PersonaError, display_names, load_personas, propositions_for
from crux_lab.personas.loader import load_persona as load
from crux_lab.personas.retrieval import retrieve
from crux_lab.runner import run_debate
from crux_lab.runs import save_runs
from crux_lab.store import (
    RunFolderError,
    StoreError,
    default_runs_dir,
    ingest,
    load_result,
    query,
    resolve_db_path,
)
from crux_lab.store.paths import project_root
from crux_lab.store.runfiles import run_names
from crux_lab.sweep.spec import config_from_params
from crux_lab.viz._text import HTMLBlock, esc, fmt_number, short_title
from crux_lab.viz.benchmark import mean_ci, metric_bounds
from crux_lab.viz.framework import framework_steps
from crux_lab.viz.polls import poll_matrix_figure

T = TypeVar("T")
# The "notebook" renderer puts plotly.js itself into the first figure's HTML output, so an
# nbconvert export shows the figures with no CDN; "plotly_mimetype" keeps JupyterLab's renderer
# (plotly 6+ drops figures from exported HTML with the mimetype alone: plotly/plotly.py#5365).
# Plotly's own notebook renderer also adds a MathJax <script src=cdn> to every figure, so
# crux_lab registers a variant without it ("crux_offline").
OFFLINE_RENDERER = "plotly_mimetype+crux_offline"


class UnknownRunError(LookupError):
    """A run id that is neither in the database nor among the run folders; lists the nearest."""

    def __init__(self, ref: str, known: Sequence[str]) -> None:
        near = difflib.get_close_matches(ref, list(known), n=5, cutoff=0.6)
        if not near:
            near = [k for k in known if k.startswith(ref[:4])][:5] if ref else []
        msg = f"unknown run {ref!r}."
        msg += f" Nearest known run ids: {', '.join(near)}." if near else f" {len(known)} run(s) known, none close."
        msg += " List them with `crux-lab db query \"SELECT run_id, engine, topic FROM runs\"`."
        super().__init__(msg)
        self.ref, self.nearest = ref, near

    def __str__(self) -> str:
        return str(self.args[0])

    def _render_traceback_(self) -> list[str]:
        """What IPython shows for this error in a notebook: the message, not a traceback."""
        return [f"No such run: {self}", "Set the notebook's run parameter to one of the ids above, or leave it empty to run a debate here."]


def _register_offline_renderer() -> None:
    import plotly.io as pio
    from plotly.io._base_renderers import NotebookRenderer

    class OfflineNotebookRenderer(NotebookRenderer):
        """plotly's notebook renderer (plotly.js inlined once) without the MathJax CDN tag."""

        def to_mimebundle(self, fig_dict: Any) -> dict[str, str]:
            from plotly.io import to_html

            html = to_html(fig_dict, config=self.config, auto_play=self.auto_play, include_plotlyjs=False,
                           include_mathjax=False, post_script=self.post_script, full_html=False,
                           animation_opts=self.animation_opts, default_width="100%", default_height=525,
                           validate=False)
            return {"text/html": html}

    if "crux_offline" not in pio.renderers:
        pio.renderers["crux_offline"] = OfflineNotebookRenderer()


def setup_plotly(renderer: str = OFFLINE_RENDERER) -> str:
    """Set plotly's default renderer for notebooks whose HTML export must work offline.

    >>> import plotly.io as pio
    >>> before = pio.renderers.default
    >>> setup_plotly()
    'plotly_mimetype+crux_offline'
    >>> pio.renderers.default = before  # leave the process as it was
    """
    import plotly.io as pio

    _register_offline_renderer()
    pio.renderers.default = renderer
    return renderer


def _run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to the end, also from inside a Jupyter kernel (whose loop is running)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def debate_config(
    topic: str,
    personas: Sequence[str] | str,
    engine: str = "dialogue",
    backend: str = "simulated",
    seed: int = 0,
    max_turns: int = 30,
    sim: Mapping[str, float] | None = None,
    params: Mapping[str, Any] | None = None,
    deck: str | None = None,
    *,
    base_url: str | None = None,
    structured: str | None = None,
) -> DebateConfig:
    """The debate configuration of notebook parameters (``backend='auto'`` resolved).

    >>> c = debate_config("t", "a, b", engine="dcg", seed=2)
    >>> (c.persona_ids, c.engine, c.seed)
    (['a', 'b'], 'dcg', 2)
    """
    raw: dict[str, Any] = {"topic": topic, "personas": personas, "engine": engine,
                           "backend": resolve_backend_name(backend), "seed": seed, "max_turns": max_turns}
    if sim:
        raw["sim"] = dict(sim)
    if params:
        raw["params"] = dict(params)
    if deck:
        raw["deck"] = deck
    if base_url:  # the openai backend's server, and how it holds replies to their schema
        raw["base_url"] = base_url
    if structured:
        raw["structured"] = structured
    return config_from_params(raw)


def save_run(result: DebateResult, run_dir: str | Path | None = None, *, sweep_id: str | None = None) -> Path:
    """Write the run folder. ``run_dir`` ending in the run id is used as is (a sweep cell's
    folder); any other folder gets ``<run_dir>/<run_id>``; None means the default runs folder."""

    if run_dir is None or str(run_dir) == "":
        folder = None
    else:
        folder = Path(run_dir).parent if Path(run_dir).name == result.run_id else Path(run_dir)
    return save_runs([result], folder, ingest=False, sweep_id=sweep_id).run_dirs[0]


def run_debate_from_parameters(
    topic: str,
    personas: Sequence[str] | str,
    engine: str = "dialogue",
    backend: str = "simulated",
    seed: int = 0,
    max_turns: int = 30,
    sim: Mapping[str, float] | None = None,
    params: Mapping[str, Any] | None = None,
    deck: str | None = None,
    run_dir: str | Path | None = None,
    sweep: str | None = None,
    save: bool = True,
    base_url: str | None = None,
    structured: str | None = None,
) -> DebateResult:
    """Run one debate from notebook parameters and (by default) write its run folder.

    Ingest into DuckDB is not done here: a sweep ingests from its single coordinating process,
    and :func:`ingest_run` does it for an interactive notebook.
    """
    config = debate_config(topic, personas, engine, backend, seed, max_turns, sim, params, deck,
                           base_url=base_url, structured=structured)
    result = _run_sync(lambda: run_debate(config))
    if save:
        save_run(result, run_dir, sweep_id=sweep or None)
    return result


def ingest_run(run_dir: str | Path, db: str | Path | None = None) -> int:
    """Load one run folder into DuckDB (the notebook is then the writer; close it before a CLI
    ingest). Returns the rows loaded."""
    return ingest([run_dir], db).total_rows


# ---------------------------------------------------------------------------
# Loading runs
# ---------------------------------------------------------------------------


def _db_runs(db: str | Path | None) -> dict[str, str]:
    path = resolve_db_path(db)
    if not path.is_file():
        return {}
    try:
        res = query("SELECT run_id, coalesce(run_dir, '') FROM runs", path)
    except StoreError:
        return {}
    return {str(r[0]): str(r[1]) for r in res.rows}


def run_folders(roots: Iterable[Path] | None = None) -> dict[str, Path]:
    """Run folders found on disk: the default runs folder and every ``experiments/*/runs``."""
    if roots is None:
        root = project_root()
        roots = [default_runs_dir(), *sorted((root / "experiments").glob("*/runs"))]
    found: dict[str, Path] = {}
    for base in roots:
        if base.is_dir():
            for manifest in base.glob("*/manifest.json"):
                if not manifest.parent.name.startswith("."):
                    found.setdefault(manifest.parent.name, manifest.parent)
    return found


def known_runs(db: str | Path | None = None, roots: Iterable[Path] | None = None) -> dict[str, Path | None]:
    """run id -> run folder (None when only the database knows it)."""
    out: dict[str, Path | None] = {k: (Path(v) if v else None) for k, v in _db_runs(db).items()}
    for run_id, folder in run_folders(roots).items():
        if out.get(run_id) is None or not out[run_id].is_dir():  # type: ignore[union-attr]
            out[run_id] = folder
    return out


def find_run(ref: str | Path, db: str | Path | None = None, roots: Iterable[Path] | None = None) -> Path:
    """The run folder of a run id (or a folder path); :class:`UnknownRunError` lists the nearest ids."""
    p = Path(ref)
    if (p / "result.json").is_file():
        return p
    known = known_runs(db, roots)
    folder = known.get(str(ref))
    if folder is None:
        matches = [k for k in known if k.startswith(str(ref))] if len(str(ref)) >= 6 else []
        if len(matches) == 1:
            folder = known[matches[0]]
    if folder is None or not (folder / "result.json").is_file():
        raise UnknownRunError(str(ref), sorted(known))
    return folder


def load_run(ref: str | Path, db: str | Path | None = None, roots: Iterable[Path] | None = None) -> DebateResult:
    """A run's :class:`DebateResult` by run id (or unique prefix), via DuckDB or the run folders."""
    return load_result(find_run(ref, db, roots))


# ---------------------------------------------------------------------------
# Helpers notebooks call
# ---------------------------------------------------------------------------


def persona_names(personas: DebateResult | Iterable[str]) -> dict[str, str]:
    """Display names of a run's personas (the names the run recorded), or of persona ids
    (read from the library); the id itself when neither knows the name."""
    if isinstance(personas, DebateResult):
        return run_names(personas)
    return display_names(personas)


def fake_consensus(result: DebateResult) -> float:
    """1.0 when the audit against the simulator's ground truth finds fake consensus (a polarized
    panel labelled consensus, or contradictory common ground), else 0.0; NaN when the personas
    cannot be loaded."""
    try:
        personas = load_personas(result.config.persona_ids)
    except PersonaError:
        return math.nan
    return 1.0 if audit(result, personas, propositions_for(result.config.persona_ids)).fake_consensus else 0.0


SWEEP_SQL = """
SELECT r.run_id, r.sweep_id, r.engine, r.topic, r.seed, r.backend, r.run_dir,
       d.complete, d.regime, d.n_turns, d.n_cruxes, d.n_crux_cards, d.n_common_ground, d.n_shifted,
       d.calls, d.input_tokens + d.output_tokens AS tokens, d.cost_usd, d.duration_s
FROM runs r JOIN debates d USING (run_id)
WHERE (? IS NULL OR r.sweep_id = ?)
ORDER BY r.engine, r.topic, r.seed
"""
SWEEP_COLUMNS = ["run_id", "sweep_id", "engine", "topic", "seed", "backend", "run_dir", "complete", "regime", "n_turns",
                 "n_cruxes", "n_crux_cards", "n_common_ground", "n_shifted", "calls", "tokens", "cost_usd", "duration_s"]


def sweep_table(sweep: str | None = None, db: str | Path | None = None, *, audit: bool = True) -> Any:
    """One row per run of a sweep (all runs when ``sweep`` is None) as a pandas DataFrame, from
    DuckDB; ``fake_consensus`` is audited from each run folder against ground truth."""
    import pandas as pd

    path = resolve_db_path(db)
    if not path.is_file():  # no database yet: an empty table, and the figures say so
        return pd.DataFrame(columns=[*SWEEP_COLUMNS, "fake_consensus"])
    res = query(SWEEP_SQL, path, [sweep or None, sweep or None])
    df = pd.DataFrame(res.rows, columns=res.columns)
    if audit:
        values = []
        for run_dir in df["run_dir"]:
            try:
                values.append(fake_consensus(load_result(run_dir)) if run_dir else math.nan)
            except (RunFolderError, OSError):
                values.append(math.nan)
        df["fake_consensus"] = values
    return df


POLL_SQL = """
SELECT p.run_id, p.crux_id, p.question, p.status, p.persona_id, p.answer, p.confidence, p.reason, p.decisive,
       p.flipped, p.pivot_answer, r.engine, r.topic
FROM crux_polls p JOIN runs r USING (run_id)
WHERE (? IS NULL OR r.sweep_id = ?)
ORDER BY r.topic, r.engine, p.run_id, p.crux_id, p.persona_id
"""


def poll_table(sweep: str | None = None, db: str | Path | None = None) -> list[dict[str, Any]]:
    """The personas' own answers to every candidate crux of a sweep's runs (all runs when
    ``sweep`` is None), from the ``crux_polls`` table: one dict per crux and persona."""
    path = resolve_db_path(db)
    if not path.is_file():
        return []
    res = query(POLL_SQL, path, [sweep or None, sweep or None])
    return [dict(zip(res.columns, row, strict=True)) for row in res.rows]


def poll_matrix(rows: Sequence[dict[str, Any]] | DebateResult, names: Mapping[str, str] | None = None) -> Any:
    """The persona × crux matrix of the personas' own answers (decisive cells starred), for one
    run or for the rows of :func:`poll_table`; names default to the library's."""
    if not isinstance(rows, DebateResult) and names is None:
        names = display_names(dict.fromkeys(r["persona_id"] for r in rows))
    return poll_matrix_figure(rows, names=names)


def summary_table(df: Any, metrics: Sequence[str] = ("calls", "tokens", "cost_usd", "n_cruxes", "fake_consensus"),
                  group: str = "engine") -> Any:
    """Mean and 95% CI per engine for each metric (a DataFrame, one row per engine)."""
    import pandas as pd

    rows = []
    for name, part in df.groupby(group):
        row: dict[str, Any] = {group: name, "runs": len(part)}
        for m in metrics:
            mean, lo, hi = mean_ci(list(part[m]), bounds=metric_bounds(m))
            row[m] = fmt_number(mean)
            row[f"{m} 95% CI"] = f"[{fmt_number(lo)}, {fmt_number(hi)}]"
        rows.append(row)
    return pd.DataFrame(rows)


def notebook_debate(
    from_run: str = "",
    *,
    topic: str,
    personas: Sequence[str] | str,
    engine: str = "dialogue",
    backend: str = "simulated",
    seed: int = 0,
    max_turns: int = 30,
    sim: Mapping[str, float] | None = None,
    params: Mapping[str, Any] | None = None,
    deck: str | None = None,
    run_dir: str | Path | None = None,
    sweep: str | None = None,
    save: bool = True,
    base_url: str | None = None,
    structured: str | None = None,
) -> DebateResult:
    """The debate a notebook shows: the stored run ``from_run`` when given, else a new debate
    from the parameters (written to ``run_dir`` when ``save``)."""
    if from_run:
        return load_run(from_run)
    return run_debate_from_parameters(topic, personas, engine, backend, seed, max_turns, sim, params, deck,
                                      run_dir=run_dir or None, sweep=sweep, save=save,
                                      base_url=base_url or None, structured=structured or None)


def alignment(result: DebateResult) -> Any:
    """The alignment report of a run (:func:`crux_lab.analysis.insights.alignment_report`) with
    the texts of what each column is about (:func:`reference_texts`) as column texts."""
    return alignment_report(result, stance_texts(result))


def proposition_texts(result: DebateResult) -> dict[str, str]:
    """Proposition id -> its text, for the decks of the run's personas (empty when they cannot
    be loaded), so figures show what a stance is about rather than an id."""
    try:
        return {pid: p.text for pid, p in propositions_for(result.config.persona_ids).items()}
    except PersonaError:
        return {}


def reference_texts(result: DebateResult) -> dict[str, str]:
    """Id -> text of everything a turn can address: the topic, the deck's propositions, every
    argument the run's graph ever held, its disputes, stances and reasons, cruxes and cards."""
    out: dict[str, str] = {"topic": f"the topic: {result.config.topic}", **proposition_texts(result)}
    for graph in [*(s.graph for s in framework_steps(result.events)), result.graph]:
        out.update({a.id: a.claim for a in graph.arguments})
    out.update({d.id: d.question for d in result.dcg.disputes})
    out.update({s.id: s.statement for s in result.dcg.stances})
    out.update({r.id: r.claim for r in result.dcg.reasons})
    out.update({c.id: c.statement for c in result.cruxes})
    out.update({c.id: c.question for c in result.crux_cards})
    return out


def stance_texts(result: DebateResult) -> dict[str, str]:
    """:func:`reference_texts`, plus a plain label for any claim a persona took a stance on
    whose text the run did not keep (a figure never shows a raw id)."""
    texts = reference_texts(result)
    ids = [p for position in result.positions for p in position.stances]
    ids += [p for turn in result.transcript for p in turn.proposition_ids]
    for pid in dict.fromkeys(ids):
        texts.setdefault(pid, "a claim the engine tracked without storing its text")
    return texts


def shift_timeline(result: DebateResult) -> Any:
    """The stance timeline of a run's transcript (:func:`crux_lab.analysis.shifts.shift_timeline`)."""
    return timeline(observations_from_turns(result.transcript))


def concessions_html(result: DebateResult, names: Mapping[str, str] | None = None) -> Any:
    """The concession trail as an escaped HTML table (arguments by their short titles)."""
    names = names or {}
    if not result.concession_trail:
        return HTMLBlock("<div><i>(no concessions)</i></div>")
    claims = {a.id: a.claim for s in _graphs(result) for a in s.arguments}
    rows = "".join(
        f"<tr><td>{c.turn_index + 1}</td><td>{esc(names.get(c.persona_id, c.persona_id))}</td><td>{esc(c.type.value)}</td>"
        f"<td>{esc(c.conceded_claim)}</td>"
        f"<td>{'<br>'.join(esc(short_title(claims.get(a, 'an argument no longer in the graph'), 60)) for a in c.removed_arg_ids)}</td></tr>"
        for c in result.concession_trail
    )
    return HTMLBlock("<table class=\"cl-table\"><tr><th>turn</th><th>persona</th><th>kind</th><th>conceded</th><th>arguments withdrawn</th></tr>"
                     f"{rows}</table>")


def _graphs(result: DebateResult) -> list[Any]:
    """Every argument graph state of a run (to name arguments a concession removed)."""
    return [s.graph for s in framework_steps(result.events)] + [result.graph]


def shifts_html(result: DebateResult, names: Mapping[str, str] | None = None) -> Any:
    """Per persona: shifted or not, the crux rooms the shift is attributed to, the named reason."""
    names = names or {}
    if not result.position_shifts:
        return HTMLBlock("<div><i>(no position shifts recorded)</i></div>")
    rows = "".join(
        f"<tr><td>{esc(names.get(s.persona_id, s.persona_id))}</td><td>{'yes' if s.shifted else 'no'}</td>"
        f"<td>{esc(', '.join(s.attributed_rooms))}</td><td>{esc(s.named_reason or '')}</td><td>{esc(s.summary)}</td></tr>"
        for s in result.position_shifts
    )
    return HTMLBlock("<table class=\"cl-table\"><tr><th>persona</th><th>shifted</th><th>attributed rooms</th><th>named reason</th>"
                     f"<th>summary</th></tr>{rows}</table>")


def load_persona(persona_id: str) -> Any:
    """A persona with its belief graph and corpus (:func:`crux_lab.personas.loader.load_persona`)."""
    return load(persona_id)


def retrieve_beliefs(persona: Any, claim: str, k: int = 5) -> Any:
    """The persona's beliefs most relevant to ``claim`` (:func:`crux_lab.personas.retrieval.retrieve`)."""
    return retrieve(persona, claim, k=k)


def retrieved_subgraph(persona: Any, retrieval: Any, hops: int = 1) -> Any:
    """The belief graph restricted to the retrieved nodes and their neighbours (``hops`` away)."""
    graph = persona.beliefs
    keep = {b.node.id for b in retrieval.beliefs}
    for _ in range(hops):
        keep |= {e.to for e in graph.edges if e.from_ in keep} | {e.from_ for e in graph.edges if e.to in keep}
    return graph.model_copy(update={
        "nodes": [n for n in graph.nodes if n.id in keep],
        "edges": [e for e in graph.edges if e.from_ in keep and e.to in keep],
    })


def retrieval_html(retrieval: Any) -> Any:
    """The retrieved beliefs: score, concept, type, grounding chunks (escaped)."""
    if retrieval.fallback:
        return HTMLBlock(f"<div><i>no beliefs retrieved: {esc(retrieval.reason)}</i></div>")
    rows = "".join(
        f"<tr><td>{b.score:.2f}</td><td>{esc(b.node.concept)}</td><td>{esc(b.node.type)}</td>"
        f"<td>{esc('; '.join(c.text[:160] for c in b.chunks[:2]))}</td></tr>"
        for b in retrieval.beliefs
    )
    return HTMLBlock(f"<div><b>claim:</b> {esc(retrieval.query)}</div><table class=\"cl-table\"><tr><th>score</th><th>belief</th>"
                     f"<th>type</th><th>grounding</th></tr>{rows}</table>")


def run_link(run_id: str, links_to: str, reports: str = "", text: str = "") -> str:
    """A run id linking to its report ``<links_to>/<run_id>.html``. With ``reports`` (the folder
    the reports are in), a run whose report is not written gets no link (it would open an
    empty page) but a note saying how to write it.

    >>> run_link("r1", "runs")
    '<a href="runs/r1.html">r1</a>'
    >>> run_link("r1", "runs", "/nonexistent")
    'r1 <i>(no report written: <code>crux-lab report r1</code> writes it)</i>'
    """
    shown = esc(text or run_id)
    if not links_to:
        return shown
    if reports and not (Path(reports) / f"{run_id}.html").is_file():
        return f"{shown} <i>(no report written: <code>crux-lab report {esc(run_id)}</code> writes it)</i>"
    return f'<a href="{esc(links_to.rstrip("/"))}/{esc(run_id)}.html">{shown}</a>'


def runs_table_html(df: Any, links_to: str = "", reports: str = "") -> Any:
    """The runs of a sweep as a table; with ``links_to`` (a folder relative to the page), each
    run id links to ``<links_to>/<run_id>.html`` (:func:`run_link`)."""
    cols = [c for c in ("engine", "topic", "seed", "complete", "regime", "n_cruxes", "n_crux_cards", "calls", "tokens", "cost_usd", "fake_consensus") if c in df.columns]
    head = "".join(f"<th>{esc(c)}</th>" for c in ["run", *cols])
    rows = []
    for rec in df.to_dict("records"):
        link = run_link(str(rec["run_id"]), links_to, reports)
        rows.append("<tr><td>" + link + "</td>" + "".join(f"<td>{esc(_fmt(rec[c]))}</td>" for c in cols) + "</tr>")
    return HTMLBlock(f'<table class="cl-table cl-runs"><tr>{head}</tr>{"".join(rows)}</table>')


def _fmt(v: Any) -> str:
    return fmt_number(v) if isinstance(v, float) else str(v)


def runs_found_html(df: Any, sweep: str = "") -> Any:
    """How many runs the benchmark reads, or what to do when there are none yet."""
    if len(df):
        return HTMLBlock(f"<div><b>{len(df)} run(s)</b>" + (f" of sweep {esc(sweep)}" if sweep else " in the database") + "</div>")
    where = f"sweep {esc(sweep)!s}" if sweep else "the database"
    return HTMLBlock(
        f"<div style=\"padding:8px;border:1px solid #ccc;background:#fafafa\"><b>No data yet:</b> {where} has no runs. "
        "Run the demo sweep (<code>make demo</code>, or <code>crux-lab sweep experiments/demo.yaml</code>) or a few debates "
        "(<code>crux-lab debate ...</code>), then run this notebook again.</div>"
    )


def manifest_html(manifest: str | Path) -> Any:
    """A sweep manifest's cell statuses (done / failed / incomplete) with each failure's error."""
    import json
    from collections import Counter

    if not manifest or not Path(manifest).is_file():
        return HTMLBlock("")
    cells = json.loads(Path(manifest).read_text(encoding="utf-8")).get("cells", {})
    counts = Counter(str(c.get("status")) for c in cells.values())
    head = ", ".join(f"{n} {esc(s)}" for s, n in sorted(counts.items()))
    bad = "".join(
        f"<tr><td>{esc(rid)}</td><td>{esc(c.get('status'))}</td><td>{esc(c.get('error') or '')}</td></tr>"
        for rid, c in cells.items() if c.get("status") != "done"
    )
    table = f"<table class=\"cl-table\"><tr><th>run</th><th>status</th><th>error</th></tr>{bad}</table>" if bad else ""
    return HTMLBlock(f"<div><b>cells:</b> {head}</div>{table}")


def cruxes_across_runs_html(df: Any, links_to: str = "", reports: str = "") -> Any:
    """What a sweep's report opens with: the cruxes its runs found (question, type, who says
    yes, who says no, by display name), grouped where runs found the same crux
    (:mod:`crux_lab.analysis.crux_groups`), most runs first, with how many runs found each;
    with ``links_to``, each run links to its report."""
    from crux_lab.analysis.restates import restates_topic

    items = []
    topic_of: dict[str, str] = {}
    for run_dir in (df["run_dir"] if len(df) else []):
        try:
            result = load_result(run_dir)
        except (RunFolderError, OSError, TypeError):
            continue
        topic_of[result.run_id] = result.config.topic
        items += found_cruxes(result, persona_names(result))
    groups = group_cruxes(items)
    head = f"<h2>Cruxes found</h2><div>{len(groups)} crux(es) across {len(df)} run(s)"
    if not groups:
        return HTMLBlock(f'<div class="cl-cruxes-across">{head}: none of these runs found a crux.</div></div>')
    # a "crux" that restates its debate's topic is no premise under it: marked, and listed last
    ranked = sorted(((g, any(restates_topic(g.question, topic_of[r]) for r in g.run_ids if r in topic_of)) for g in groups),
                    key=lambda gr: gr[1])

    def runs(run_ids: Sequence[str]) -> str:
        if not links_to:
            return ", ".join(esc(r) for r in run_ids)
        return ", ".join(run_link(r, links_to, reports, r[:8]) for r in run_ids)

    rows = []
    for g, topic_like in ranked:
        # another wording that only says who holds what repeats the yes and no columns
        others = [w for w in g.wordings if w != g.question and not describes_sides(w)]
        shown = " / ".join(w if len(w) <= 120 else w[:117].rsplit(" ", 1)[0] + "…" for w in others[:2])
        more = f" (and {len(others) - 2} more)" if len(others) > 2 else ""
        also = f'<div style="color:#666;font-size:90%">also worded: {esc(shown)}{more}</div>' if others else ""
        if topic_like:
            also += '<div class="cl-restates" style="color:#a33;font-size:90%">restates the debate topic: not a premise under it</div>'
        sides = (f"<td>{esc(', '.join(g.yes))}</td><td>{esc(', '.join(g.no))}</td>" if g.yes or g.no
                 else '<td colspan="2"><i>sides not known</i></td>')
        rows.append(f"<tr><td><b>{esc(g.question)}</b>{also}</td><td>{esc(g.type or '')}</td>{sides}"
                    f"<td>{g.runs} of {len(df)}<div style=\"font-size:85%\">{esc(', '.join(g.engines))}: {runs(g.run_ids)}</div></td></tr>")
    return HTMLBlock(f'<div class="cl-cruxes-across">{head}, the most often found first; runs found the same crux '
                     "when their questions say the same thing (matched by text). A crux that restates its debate's "
                     "topic is marked and listed last.</div>"
                     '<table class="cl-table cl-cruxes-across" style="width:100%"><tr><th>crux</th><th>type</th>'
                     f"<th>yes</th><th>no</th><th>runs</th></tr>{''.join(rows)}</table></div>")
