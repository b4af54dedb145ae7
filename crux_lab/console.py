"""Console helpers shared by the ``crux-lab`` command and its sub-apps.

The two consoles, :func:`fail` (one-line error, exit code) and :func:`note`, and the runs-folder
check. A leaf under every CLI module, so a sub-app never imports :mod:`crux_lab.cli` (which
mounts it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from crux_lab import backends
from crux_lab.llm import (
    BackendUnavailable,
    UnknownBackend,
    resolve_backend_name,
)
from crux_lab.scrub import scrub
from crux_lab.store import default_runs_dir
from crux_lab.tiers import STRUCTURED_MODES

__all__ = ["check_runs_dir", "err_console", "fail", "note", "out_console"]

out_console = Console(soft_wrap=True)
err_console = Console(stderr=True, soft_wrap=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: message`` on stderr and exit (2 = bad input, 1 = the run failed)."""
    err_console.print(f"[bold red]error:[/] {escape(scrub(message))}")
    raise typer.Exit(code)


def note(message: str) -> None:
    err_console.print(scrub(message))


def check_runs_dir(runs_dir: Path | None) -> Path:
    """The runs folder to write to (``runs_dir`` or the default), created and writable."""
    # Lazy: the store loads DuckDB, which `crux-lab --help` does not need.

    folder = runs_dir or default_runs_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        fail(f"cannot create the runs folder {folder} ({exc.strerror or exc}); pass a writable --runs-dir or set CRUX_LAB_RUNS.")
    if not os.access(folder, os.W_OK):
        fail(f"the runs folder {folder} is not writable; pass a writable --runs-dir or set CRUX_LAB_RUNS.")
    return folder


@dataclass(frozen=True)
class LLMSettings:
    """What a live backend will use: the model per tier, the server URL and the openai
    backend's structured-output mode (None: its default, auto)."""

    models: dict[str, str]
    base_url: str | None
    structured: str | None = None


def llm_settings(
    resolved: str,
    base_url: str | None,
    model_strong: str | None,
    model_fast: str | None,
    config_file: Path | None,
    structured: str | None = None,
) -> LLMSettings:
    """The models per tier, the server URL and the structured-output mode a live backend will
    use, or a clear failure.

    For openai the server is asked once (it must answer before anything is spent or written),
    and a missing model is filled with the one model it lists.
    """
    settings: dict[str, Any] = {}
    if config_file is not None:
        import yaml

        try:
            loaded = yaml.safe_load(config_file.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            fail(f"--llm-config {config_file} cannot be read: {str(exc).splitlines()[0]}")
        known = {"base_url", "model_strong", "model_fast", "structured"}
        if not isinstance(loaded, dict) or set(loaded) - known:
            fail(f"--llm-config {config_file} must be a mapping with keys {', '.join(sorted(known))}.")
        settings = dict(loaded)
    url = base_url or settings.get("base_url")
    mode = structured or settings.get("structured")
    if mode is not None and mode not in STRUCTURED_MODES:
        where = "--structured" if structured else f"--llm-config {config_file}: structured"
        fail(f"{where} is {mode!r}; use one of {', '.join(STRUCTURED_MODES)}.")
    chosen = {
        tier: str(value)
        for tier, value in (("strong", model_strong or settings.get("model_strong")), ("fast", model_fast or settings.get("model_fast")))
        if value
    }
    spec = backends.spec(resolved)
    if spec.settings is None:
        if url or chosen or mode:
            live = " and ".join(n for n, s in backends.registered().items() if s.settings is not None)
            fail(f"--base-url/--model-strong/--model-fast/--structured/--llm-config apply to the {live} backends, not {resolved}.")
        return LLMSettings({}, None)
    try:
        models, url = spec.settings(chosen, url, mode)
    except BackendUnavailable as exc:
        fail(str(exc))
    return LLMSettings(models, url, mode if spec.structured else None)


def backend_choice(name: str, cassette: Path | None) -> str:
    """The resolved backend name, or a clear failure (unknown name, no key, no cassette)."""
    try:
        resolved = resolve_backend_name(name)
    except UnknownBackend:
        fail(f"unknown backend {name!r}. Valid backends: {', '.join(backends.names())}.")
    check = backends.spec(resolved).check
    if check is not None:
        try:
            check(cassette)  # a key, a cassette: what the backend needs before anything runs
        except BackendUnavailable as exc:
            fail(str(exc))
    return resolved
