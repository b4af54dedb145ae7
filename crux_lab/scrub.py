"""The one secret scrubber: every writer passes its text through :func:`scrub`.

A *secret* is the value of any environment variable whose name ends in ``_API_KEY``
(``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``, ...), of any variable named in
``$CRUX_LAB_SECRET_VARS`` (comma-separated), or a value passed to :func:`register` (a key
given to a backend in code). The environment is read at every call, so a key set after
import is covered too. Values shorter than :data:`MIN_SECRET_LEN` are ignored (a stray
``X_API_KEY=1`` must not blank every digit 1 in a transcript).

Writers that go through it: the run folder (result, events, transcript, metrics, Parquet,
manifest: :func:`crux_lab.store.write_run`), the runner's live event log, the database
(ingest and ``record_metrics`` refuse nothing, they only ever see scrubbed files and values),
cassettes, the HTML reports, the sweep manifest and executed notebooks, log records
(:func:`install_log_filter`) and every CLI error or note on stderr.

>>> import os
>>> os.environ["DEMO_API_KEY"] = "sk-demo-0123456789"
>>> scrub("401: invalid key sk-demo-0123456789")
'401: invalid key [REDACTED]'
>>> scrub_data({"a": ["x sk-demo-0123456789"]})
{'a': ['x [REDACTED]']}
>>> del os.environ["DEMO_API_KEY"]
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

REDACTED = "[REDACTED]"
MIN_SECRET_LEN = 8
KEY_SUFFIX = "_API_KEY"
EXTRA_VARS_ENV = "CRUX_LAB_SECRET_VARS"

_registered: set[str] = set()

M = TypeVar("M", bound=BaseModel)


def register(value: str | None) -> None:
    """Treat ``value`` as a secret from now on (a key passed in code, not via the environment)."""
    if value and len(value.strip()) >= MIN_SECRET_LEN:
        _registered.add(value.strip())


def secret_names() -> list[str]:
    """The environment variables whose values are secrets (names only; never print values).

    >>> "ANTHROPIC_API_KEY" in secret_names() or "ANTHROPIC_API_KEY" not in os.environ
    True
    """
    extra = {n.strip() for n in os.environ.get(EXTRA_VARS_ENV, "").split(",") if n.strip()}
    return sorted(n for n in os.environ if n.upper().endswith(KEY_SUFFIX) or n in extra)


def secrets() -> list[str]:
    """Every secret value, longest first (so a key containing another is removed whole)."""
    found = set(_registered)
    for name in secret_names():
        value = os.environ.get(name, "").strip()
        if len(value) >= MIN_SECRET_LEN:
            found.add(value)
    return sorted(found, key=len, reverse=True)


def scrub(text: str) -> str:
    """``text`` with every secret replaced by ``[REDACTED]``."""
    for value in secrets():
        if value in text:
            text = text.replace(value, REDACTED)
    return text


def contains_secret(text: str) -> bool:
    return any(value in text for value in secrets())


def scrub_data(value: Any) -> Any:
    """Scrub every string inside dicts, lists and tuples (keys included)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub_data(k): scrub_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(scrub_data(v) for v in value)
    return value


def scrub_model(model: M) -> M:
    """The model itself when it holds no secret, else a scrubbed copy (validated again)."""
    if not secrets():
        return model
    dumped = model.model_dump_json()
    if not contains_secret(dumped):
        return model
    return type(model).model_validate_json(scrub(dumped))


def write_text(path: Path, text: str) -> None:
    """``path.write_text(scrub(text))`` in UTF-8: the one way writers put text on disk."""
    path.write_text(scrub(text), encoding="utf-8")


def scrub_file(path: Path) -> bool:
    """Scrub a text file written by someone else (e.g. papermill's executed notebook) in place;
    True when something was removed. Binary or unreadable files are left alone."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    clean = scrub(text)
    if clean == text:
        return False
    tmp = path.with_name(f".{path.name}.scrub.tmp")
    tmp.write_text(clean, encoding="utf-8")
    os.replace(tmp, path)
    return True


class ScrubFilter(logging.Filter):
    """A logging filter that scrubs the formatted message (and drops exception tracebacks'
    secrets by formatting them into the message first)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
            record.exc_text = None
        record.msg, record.args = scrub(message), None
        return True


def install_log_filter(logger: logging.Logger | None = None) -> None:
    """Scrub every log record: a record factory scrubs each record's message when it is
    created (whatever logger or handler it goes to later), and the handlers of ``logger``
    (default: the root logger) also get a :class:`ScrubFilter` for exception tracebacks."""
    global _factory_installed
    if not _factory_installed:
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            try:
                message = record.getMessage()
            except (TypeError, ValueError):  # a malformed %-format: leave it to logging
                return record
            record.msg, record.args = scrub(message), None
            return record

        logging.setLogRecordFactory(factory)
        _factory_installed = True
    target = logger or logging.getLogger()
    for handler in target.handlers:
        if not any(isinstance(f, ScrubFilter) for f in handler.filters):
            handler.addFilter(ScrubFilter())


_factory_installed = False


__all__ = [
    "REDACTED",
    "ScrubFilter",
    "contains_secret",
    "install_log_filter",
    "register",
    "scrub",
    "scrub_data",
    "scrub_file",
    "scrub_model",
    "secret_names",
    "secrets",
    "write_text",
]
