"""Escaping helpers: every piece of LLM or persona text goes through these before it becomes
HTML (a plotly hover or label, or a report table), so a model cannot inject markup."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any


def esc(text: object) -> str:
    """``html.escape`` of ``str(text)``, quotes included, written as numeric references
    (``&#34;``): plotly decodes those in hover text and labels, but shows ``&quot;`` as written.

    >>> esc('<script>alert("x")</script>')
    '&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;'
    >>> esc("it's")
    'it&#x27;s'
    """
    return html.escape(str(text), quote=True).replace("&quot;", "&#34;")


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
    return "<br>".join(esc(x) for x in lines)


def clip(text: object, n: int = 40) -> str:
    """Escaped label of at most ``n`` characters.

    >>> clip("abcdef", 4)
    'abc…'
    """
    s = str(text)
    return esc(s if len(s) <= n else s[: n - 1] + "…")


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


def no_figure(message: str) -> HTMLBlock:
    """What a figure builder returns when it has nothing to draw: one line saying why (never
    an empty set of axes).

    >>> no_figure("no <runs>").html
    '<div class="cl-note"><i>no &lt;runs&gt;</i></div>'
    """
    return HTMLBlock(f'<div class="cl-note"><i>{esc(message)}</i></div>')


_NEGATION = ("i don't accept that ", "it is not the case that ", "it is false that ", "it is not true that ")


def short_title(text: object, n: int = 40) -> str:
    """A short plain-text label for a long claim (not escaped): a leading "It is not the case
    that" becomes "NOT:", and the text is cut at a word boundary of at most ``n`` characters.

    >>> short_title("It is not the case that gold is money in any useful sense", 24)
    'NOT: gold is money in…'
    >>> short_title("Short claim.")
    'Short claim'
    """
    s = " ".join(str(text).split()).rstrip(" .;:")
    prefix = ""
    for neg in _NEGATION:
        if s.lower().startswith(neg):
            prefix, s = "NOT: ", s[len(neg):]
            break
    room = max(8, n - len(prefix))
    if len(s) > room:
        cut = s[: room - 1].rsplit(" ", 1)[0] if " " in s[: room - 1] else s[: room - 1]
        s = cut.rstrip(" ,;:") + "…"
    return prefix + s


def fmt_number(v: Any) -> str:
    """A number for a table, never in scientific notation: four significant digits below 1,
    two decimals up to 1000, thousands separators above; blank for NaN.

    >>> [fmt_number(x) for x in (0.000123456, 0.5, 12.3456, 123456.7, float("nan"), 3)]
    ['0.0001235', '0.5', '12.35', '123,457', '', '3']
    """
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v)
    x = float(v)
    if math.isnan(x):
        return ""
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}" if abs(x) >= 10000 else str(int(x))
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    digits = max(0, 3 - math.floor(math.log10(abs(x)))) if x else 0
    return f"{x:.{digits}f}".rstrip("0").rstrip(".")
