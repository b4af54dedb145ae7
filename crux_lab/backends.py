"""The backend registry: every LLM backend crux_lab can run a debate on.

A backend is one factory function decorated with :func:`backend`, which carries its one-line
description, whether its calls are billed to an API key, and how its fast and strong tiers get
their models; plus one line in the entry-point group ``crux_lab.backends`` of its package's
``pyproject.toml`` (crux_lab's own are in crux_lab's; ``examples/plugins/`` shows another
package's). The CLI (``--backend`` choices and help, ``crux-lab backends``), the console,
:mod:`crux_lab.tiers`, the store's ``billed`` columns and :func:`crux_lab.llm.make_backend` all
read this registry.

Standard library only: the store and ``tiers.py`` import it without importing an SDK. The
factory modules are imported on the first lookup (their SDKs only when a backend is built). A
factory takes a :class:`crux_lab.llm.registry.BackendArgs` and returns a ``Backend``; a
backend's own options (``DebateConfig.backend_options``) reach it through the ``options``
hook, which turns a debate's configuration into the options object the factory takes, and may
refuse the debate (one line) before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from crux_lab.registry import DuplicateName, Registry

# How a backend's tiers get their models (crux_lab.tiers.models_for):
# "env": $CRUX_LAB_MODEL_STRONG / $CRUX_LAB_MODEL_FAST, else the built-in defaults;
# "explicit": only the models given (--model-strong / --model-fast), no default;
# "defaults": priced as the built-in defaults (a backend that calls no model).
TierRule = Literal["env", "explicit", "defaults"]

# (BackendArgs) -> Backend; typed loosely here so this module stays below crux_lab.llm.
Factory = Callable[[Any], Any]
F = TypeVar("F", bound=Factory)


@dataclass(frozen=True)
class BackendSpec:
    """One backend: its static facts and its code."""

    name: str
    description: str
    billed: bool
    tiers: TierRule
    # What --help says about its tiers (after "name: "); empty to leave it out.
    tiers_help: str
    factory: Factory
    # A debate's configuration -> the factory's options (and the backend's own checks).
    options: Callable[[Any], Any] | None = None
    # Longer one-line description that depends on the run: (cassette, models, base_url) -> str.
    describe: Callable[..., str] | None = None
    # The pydantic model of its options (DebateConfig.backend_options), if it takes any.
    options_model: type[Any] | None = None
    # Options from a persona library (personas, their propositions, a seed), for runs that
    # are not debates (building a persona, judging): a backend that speaks for personas.
    library: Callable[..., Any] | None = None
    # Whether a cassette records this backend's calls (False: the backend is the cassette).
    records: bool = True
    # Whether the structured-output mode (--structured) applies to it.
    structured: bool = False
    # Whether it talks to a server at a URL (--base-url).
    base_url: bool = False
    # A live backend's model settings: (models per tier chosen, base URL, structured mode) ->
    # (models per tier, base URL), after its checks (one-line BackendUnavailable: a server that
    # does not answer, an option it does not take). None: it takes no model settings.
    settings: Callable[[dict[str, str], str | None, str | None], tuple[dict[str, str], str | None]] | None = None
    # Checks before anything runs, from the cassette given (None): one-line BackendUnavailable
    # (no API key, no cassette).
    check: Callable[[Any], None] | None = None


AUTO = "auto"
# The backend a run uses when none is named: offline, free and deterministic. Its options are
# the failure knobs the evaluations sweep.
OFFLINE = "simulated"

# The one plug-in registry (the same class as engines, metrics and commands use). `order` is
# only the listing order of crux_lab's own backends (`--backend` choices, `crux-lab backends`);
# other packages' follow.
def _adopt(name: str, obj: object) -> BackendSpec:
    raise TypeError("is not a factory decorated with @crux_lab.backends.backend")


BACKENDS: Registry[BackendSpec] = Registry(
    "backend", group="crux_lab.backends", order=("simulated", "anthropic", "openai", "replay"), adopt=_adopt
)


def register(spec: BackendSpec, *, origin: str | None = None) -> BackendSpec:
    """Add a backend to the registry (its name must be new)."""
    where = origin or str(getattr(spec.factory, "__module__", "") or "")
    if spec.name == AUTO:
        raise DuplicateName(f"backend {AUTO!r} is the automatic choice, not a backend", AUTO, "crux_lab")
    BACKENDS.add(spec.name, spec, origin=where, source=spec.factory)
    return spec


def backend(
    name: str,
    *,
    description: str,
    billed: bool,
    tiers: TierRule,
    tiers_help: str = "",
    options: Callable[[Any], Any] | None = None,
    describe: Callable[..., str] | None = None,
    options_model: type[Any] | None = None,
    library: Callable[..., Any] | None = None,
    records: bool = True,
    structured: bool = False,
    base_url: bool = False,
    settings: Callable[[dict[str, str], str | None, str | None], tuple[dict[str, str], str | None]] | None = None,
    check: Callable[[Any], None] | None = None,
) -> Callable[[F], F]:
    """Decorator: register the factory below it as backend ``name``.

    ``billed``: its calls are billed to an API key. ``tiers``: how its tiers get their models
    (``env``, ``explicit`` or ``defaults``, see :data:`TierRule`); ``tiers_help`` says so in
    ``--help``. ``options`` / ``options_model`` / ``library``: its own options, if it takes
    any. ``describe``: a longer line for the start of a run. ``records``: a cassette records
    its calls. ``structured`` / ``base_url``: the structured-output mode and a server URL apply
    to it (the CLI's and the console's fields). ``settings``: it takes models per tier (and
    resolves them, asking its server); ``check``: what it needs before a run (a key, a cassette).
    """

    def add(fn: F) -> F:
        register(BackendSpec(
            name=name, description=description, billed=billed, tiers=tiers, tiers_help=tiers_help,
            factory=fn, options=options, describe=describe, options_model=options_model,
            library=library, records=records, structured=structured, base_url=base_url,
            settings=settings, check=check,
        ))
        return fn

    return add


def registered() -> dict[str, BackendSpec]:
    """Every registered backend by name, in listing order."""
    return dict(BACKENDS.items())


def problems() -> list[str]:
    """One line per backend plug-in that was left out (failed to import, or a name clash)."""
    BACKENDS.load()
    return list(BACKENDS.problems)


def names() -> tuple[str, ...]:
    """The names ``--backend`` accepts: ``auto`` and every registered backend.

    >>> names()[:2]
    ('auto', 'simulated')
    """
    return (AUTO, *BACKENDS.names())


def spec(name: str) -> BackendSpec:
    """The registered backend ``name`` (KeyError when there is none)."""
    BACKENDS.load()
    return BACKENDS.entries[name]


def billed_names() -> tuple[str, ...]:
    """The backends whose calls are billed to an API key.

    >>> billed_names()
    ('anthropic', 'openai')
    """
    return tuple(n for n, s in BACKENDS.items() if s.billed)


def answers_from_cassette(name: str) -> bool:
    """Whether backend ``name`` answers only from a cassette (a cassette does not record it).

    >>> answers_from_cassette("replay"), answers_from_cassette("simulated"), answers_from_cassette("x")
    (True, False, False)
    """
    known = registered()
    return name in known and not known[name].records


def choices_help() -> str:
    """The ``--backend`` choices, for help text.

    >>> choices_help()
    'auto | simulated | anthropic | openai | replay'
    """
    return " | ".join(names())
