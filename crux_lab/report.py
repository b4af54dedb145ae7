"""HTML reports: a run's executed notebook, or a whole sweep, exported with nbconvert.

Reports are fully offline: input cells are hidden, plotly figures carry plotly.js (the
notebooks use :data:`crux_lab.workbench.OFFLINE_RENDERER`), pyvis networks are in-lined, and
the template drops nbconvert's CDN tags (require.js, MathJax, mermaid, widgets). After export,
:func:`external_references` must find nothing, or the report is refused.

    run_report("3f2a9c0d1e2b4a5c")      -> reports/3f2a9c0d1e2b4a5c.html
    sweep_report("demo")                -> experiments/demo/report/index.html (links to each run)

A run report is one self-contained file (plotly.js inside). A sweep report is a folder: its
pages share one copy of plotly.js, ``report/plotly.min.js``, loaded by a relative path, so the
folder stays offline and each page is a few hundred KB instead of about 5 MB.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import Any

from crux_lab import workbench as wb
from crux_lab.scrub import scrub, scrub_file
from crux_lab.store import resolve_db_path
from crux_lab.store.paths import project_root
from crux_lab.sweep.runner import KERNEL_ARGS

# A report must not make the browser fetch anything: no tag may point at http(s) or //host.
_EXTERNAL = re.compile(
    r"""<(?:script|link|img|iframe|source|video|audio|embed)\b[^>]*?\b(?:src|href)\s*=\s*["']?((?:https?:)?//[^"'\s>]+)""",
    re.IGNORECASE,
)
_SRCDOC = re.compile(r'srcdoc="([^"]*)"', re.IGNORECASE)
_CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?["']?((?:https?:)?//[^"')\s]+)""", re.IGNORECASE)
# The plotly.js bundle plotly's notebook renderer puts inline (once per notebook).
_PLOTLY_BUNDLE = re.compile(r"<script>(/\*\*\s*\n\* plotly\.js v.*?)</script>", re.DOTALL)
SHARED_PLOTLY = "plotly.min.js"

OFFLINE_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
"""


class ReportError(RuntimeError):
    """A report could not be built (the message names the notebook or the reference)."""


@dataclass(frozen=True)
class ReportInfo:
    path: Path
    size_bytes: int
    render_s: float


def external_references(html: str) -> list[str]:
    """URLs a page would fetch from the network (tags with an http(s) src/href, CSS imports).

    >>> external_references('<script src="https://cdn.x/plotly.js"></script><a href="https://ok">link</a>')
    ['https://cdn.x/plotly.js']
    >>> external_references('<script>var u = "https://plot.ly";</script>')
    []
    >>> external_references('<iframe srcdoc="&lt;script src=&quot;https://unpkg.com/vis.js&quot;&gt;&lt;/script&gt;"></iframe>')
    ['https://unpkg.com/vis.js']
    """
    found = [m.group(1) for m in _EXTERNAL.finditer(html)] + [m.group(1) for m in _CSS_IMPORT.finditer(html)]
    # In-lined interactive networks are whole documents inside <iframe srcdoc="...">: check them too.
    for m in _SRCDOC.finditer(html):
        found += external_references(unescape(m.group(1)))
    return found


def _exporter() -> Any:
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    return HTMLExporter(
        template_name="lab",
        template_file="crux_offline.html.j2",
        extra_loaders=[DictLoader({"crux_offline.html.j2": OFFLINE_TEMPLATE})],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        embed_images=True,
    )


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(scrub(text))  # a report quotes errors and transcripts: never a key
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a report is meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def share_plotly(page: str, bundle: Path, href: str) -> str:
    r"""``page`` with its inline plotly.js replaced by ``<script src=href>``; the bundle is
    written to ``bundle`` (once: the same plotly version gives the same file).

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> share_plotly("<p><script>/**\n* plotly.js v9\n*/ var P;</script></p>", d / "p.js", "p.js")
    '<p><script src="p.js"></script></p>'
    >>> (d / "p.js").read_text()
    '/**\n* plotly.js v9\n*/ var P;'
    """
    found = _PLOTLY_BUNDLE.search(page)
    if found is None:
        return page
    if not bundle.is_file() or bundle.read_text(encoding="utf-8") != found.group(1):
        _write_atomic(bundle, found.group(1))
    return page[: found.start()] + f'<script src="{href}"></script>' + page[found.end():]


def export_html(notebook: str | Path, out: str | Path, *, title: str | None = None,
                shared_plotly: Path | None = None) -> ReportInfo:
    """Export an executed notebook to an offline HTML file with the input hidden: one
    self-contained file, or with ``shared_plotly`` (a file in or above the page's folder)
    loading plotly.js from there."""
    import nbformat

    started = time.perf_counter()
    nb_path = Path(notebook)
    try:
        nb = nbformat.read(str(nb_path), as_version=4)
    except (OSError, ValueError) as exc:
        raise ReportError(f"{nb_path}: cannot read the notebook ({exc}).") from None
    if title:
        nb.metadata["title"] = title
    body, _ = _exporter().from_notebook_node(nb)
    found = external_references(body)
    if found:
        raise ReportError(
            f"{nb_path}: the report would load {found[0]} from the network ({len(found)} external reference(s)); "
            "show plotly figures after crux_lab.workbench.setup_plotly() and networks with crux_lab.viz.network."
        )
    out_path = Path(out)
    if shared_plotly is not None:
        href = os.path.relpath(shared_plotly, out_path.parent).replace(os.sep, "/")
        body = share_plotly(body, shared_plotly, href)
    _write_atomic(out_path, body)
    return ReportInfo(out_path, out_path.stat().st_size, time.perf_counter() - started)


def notebooks_dir() -> Path:
    return project_root() / "notebooks"


def reports_dir() -> Path:
    return project_root() / "reports"


def _execute(notebook: Path, output: Path, parameters: dict[str, Any], cwd: Path) -> None:
    import papermill

    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(str(notebook), str(output), parameters=parameters, kernel_name="python3",
                                   progress_bar=False, cwd=str(cwd), extra_arguments=list(KERNEL_ARGS))
    except papermill.PapermillExecutionError as exc:
        raise ReportError(scrub(f"{notebook} failed while building the report: {exc.ename}: {exc.evalue} "
                                f"(the executed notebook is {output}).")) from None
    finally:
        scrub_file(output)  # the executed notebook is kept beside the report


def _sweep_notebook_for(run_id: str, experiments: Path) -> Path | None:
    """The executed sweep notebook of a run, if a sweep ran it."""
    for nb in sorted(experiments.glob(f"*/runs/{run_id}.ipynb")):
        manifest = nb.parent.parent / "manifest.json"
        try:
            status = json.loads(manifest.read_text(encoding="utf-8"))["cells"][run_id]["status"]
        except (OSError, ValueError, KeyError):
            continue
        if status == "done":
            return nb
    return None


def run_report(ref: str, out: str | Path | None = None, *, db: str | Path | None = None,
               experiments: Path | None = None) -> ReportInfo:
    """The HTML report of one run: its executed sweep notebook, or ``01_debate.ipynb`` executed
    on the stored run. An unknown id raises :class:`crux_lab.workbench.UnknownRunError`
    listing the nearest known ids."""
    experiments = experiments or project_root() / "experiments"
    roots = [wb.default_runs_dir(), *sorted(experiments.glob("*/runs"))]
    folder = wb.find_run(ref, db, roots)
    result = wb.load_result(folder)
    target = Path(out) if out else reports_dir() / f"{result.run_id}.html"
    title = f"crux_lab run {result.run_id}: {result.config.topic}"
    executed = _sweep_notebook_for(result.run_id, experiments)
    if executed is not None:
        return export_html(executed, target, title=title)
    # The executed notebook is kept beside the report (open it in JupyterLab to explore further).
    nb_out = target.with_suffix(".ipynb")
    _execute(notebooks_dir() / "01_debate.ipynb", nb_out, {"from_run": str(folder.resolve())}, notebooks_dir())
    return export_html(nb_out, target, title=title)


def sweep_report(name_or_yaml: str | Path, *, db: str | Path | None = None, experiments: Path | None = None,
                 out_dir: Path | None = None) -> ReportInfo:
    """The sweep's report ``experiments/<name>/report/index.html``: the engine benchmark over the
    sweep (``06_benchmark.ipynb`` on DuckDB), the cell statuses, and a link to each run's report
    (``report/runs/<run_id>.html``, exported from the cells' executed notebooks)."""
    experiments = experiments or project_root() / "experiments"
    name = Path(name_or_yaml).stem if str(name_or_yaml).endswith((".yaml", ".yml")) else str(name_or_yaml)
    sweep_dir = experiments / name
    manifest_path = sweep_dir / "manifest.json"
    if not manifest_path.is_file():
        known = sorted(p.parent.name for p in experiments.glob("*/manifest.json"))
        raise ReportError(f"no sweep {name!r} has run in {experiments} (no {manifest_path}); "
                          f"sweeps that ran: {', '.join(known) or '(none)'}. Run `crux-lab sweep experiments/{name}.yaml` first.")
    cells = json.loads(manifest_path.read_text(encoding="utf-8")).get("cells", {})
    out_dir = out_dir or sweep_dir / "report"
    started = time.perf_counter()
    for run_id, cell in cells.items():
        nb = Path(cell.get("notebook") or sweep_dir / "runs" / f"{run_id}.ipynb")
        if cell.get("status") == "done" and nb.is_file():
            export_html(nb, out_dir / "runs" / f"{run_id}.html", title=f"crux_lab run {run_id}",
                        shared_plotly=out_dir / SHARED_PLOTLY)
    bench = out_dir / "benchmark.ipynb"

    _execute(notebooks_dir() / "06_benchmark.ipynb", bench,
             {"sweep": name, "db": str(resolve_db_path(db).resolve()), "links_to": "runs",
              "reports": str((out_dir / "runs").resolve()),
              "manifest": str(manifest_path.resolve())}, notebooks_dir())
    info = export_html(bench, out_dir / "index.html", title=f"crux_lab sweep {name}", shared_plotly=out_dir / SHARED_PLOTLY)
    return ReportInfo(info.path, info.size_bytes, time.perf_counter() - started)
