"""The tables and quoted figures of a Markdown file that must reproduce from committed items.

A rebuilt table sits between the lines ``<!-- rescore: NAME -->`` and ``<!-- /rescore -->``, NAME being
its items folder under ``benchmarks/items/`` (``NAME.poll``: that folder's poll against the
debates' own sides, :func:`crux_lab.eval.items.poll_against_debate`). A quoted item with its cosine is written
``"<the item's text>" (cosine 0.90)``; :func:`quoted_cosines` finds every one, so a test can
check each against the committed items. Text under a heading that starts with "History" is
not checked: it is kept as it was, marked as not re-scorable.
"""

from __future__ import annotations

import re

__all__ = ["ReadmeError", "quoted_cosines", "replace_blocks", "table_blocks"]

_BLOCK = re.compile(r"^<!-- rescore: ([\w.-]+) -->\n(.*?)^<!-- /rescore -->$", re.S | re.M)
_OPEN = re.compile(r"^<!-- rescore: ", re.M)
_CLOSE = re.compile(r"^<!-- /rescore -->$", re.M)
_QUOTE = re.compile(r"[\"\u201c]([^\"\u201d\n]{8,}?)[\"\u201d]\s*\(cosine (\d\.\d\d)\)")


class ReadmeError(ValueError):
    """A Markdown file whose table markers do not pair up."""


def table_blocks(text: str) -> dict[str, str]:
    """``{name: table text}`` of every rescore block.

    >>> table_blocks("a\\n<!-- rescore: t1 -->\\n| x |\\n<!-- /rescore -->\\n")
    {'t1': '| x |\\n'}
    """
    opened = len(_OPEN.findall(text))
    found = {m.group(1): m.group(2) for m in _BLOCK.finditer(text)}
    if opened != len(found) or opened != len(_CLOSE.findall(text)):
        raise ReadmeError("the <!-- rescore: NAME --> and <!-- /rescore --> markers do not pair up (or a NAME is used twice); fix them.")
    return found


def replace_blocks(text: str, tables: dict[str, str]) -> str:
    """``text`` with each block whose name is in ``tables`` replaced by that table.

    >>> replace_blocks("<!-- rescore: t -->\\nold\\n<!-- /rescore -->", {"t": "new"})
    '<!-- rescore: t -->\\nnew\\n<!-- /rescore -->'
    """
    table_blocks(text)

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        body = tables[name].strip() + "\n" if name in tables else m.group(2)
        return f"<!-- rescore: {name} -->\n{body}<!-- /rescore -->"

    return _BLOCK.sub(sub, text)


def quoted_cosines(text: str) -> list[tuple[str, float]]:
    """Every ``"text" (cosine 0.NN)`` outside the history sections.

    >>> quoted_cosines('It asked "Do fees keep people away?" (cosine 0.81).')
    [('Do fees keep people away?', 0.81)]
    """
    kept = re.split(r"^#+ History", text, maxsplit=1, flags=re.M)[0]
    return [(m.group(1), float(m.group(2))) for m in _QUOTE.finditer(kept)]
