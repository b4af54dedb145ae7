"""Escaping helpers: every piece of LLM or persona text goes through these before it becomes
HTML (a plotly hover or label, or a report table), so a model cannot inject markup."""

from __future__ import annotations

import html
from dataclasses import dataclass


def esc(text: object) -> str:
    """``html.escape`` of ``str(text)`` (quotes included).

    >>> esc('<script>alert("x")</script>')
    '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'
    """
    return html.escape(str(text), quote=True)


def wrap(text: object, width: int = 60, max_lines: int = 8) -> str:
    """Escape ``text`` and wrap it with ``<br>`` for a plotly hover (long text is clipped).

    >>> wrap("a <b> c", width=3)
    'a<br>&lt;b&gt;<br>c'
    """
    words, lines, line = str(text).split(), [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    if line:
        lines.append(line)
    if len(lines) > max_lines:
        lines = lines[:max_lines] + ["…"]
    return "<br>".join(html.escape(x) for x in lines)


def clip(text: object, n: int = 40) -> str:
    """Escaped label of at most ``n`` characters.

    >>> clip("abcdef", 4)
    'abc…'
    """
    s = str(text)
    return html.escape(s if len(s) <= n else s[: n - 1] + "…")


# Jupyter's CSS right-aligns table cells; text tables read better left-aligned and top-aligned.
TABLE_STYLE = "<style>table.cl-table td, table.cl-table th {text-align:left !important; vertical-align:top; padding:2px 8px}</style>"


@dataclass(frozen=True)
class HTMLBlock:
    """A piece of already-escaped HTML that Jupyter (and nbconvert) displays as is."""

    html: str

    def _repr_html_(self) -> str:
        return (TABLE_STYLE if "cl-table" in self.html else "") + self.html

    def __str__(self) -> str:
        return self.html
