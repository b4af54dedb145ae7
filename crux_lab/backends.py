"""The backend registry: every LLM backend crux_lab can run a debate on, in one table.

Each entry brings its one-line description, whether its calls are billed to an API key, how
its fast and strong tiers get their models, and where its factory lives. The CLI (``--backend``
choices and help), :mod:`crux_lab.tiers`, the store's ``billed`` columns and
:func:`crux_lab.llm.make_backend` all read this table. Adding a backend is one entry here plus
the module that holds its factory.

Standard library only, so the store and ``tiers.py`` can read the static facts without
importing an SDK. A factory is named by its dotted path (``module:function``) and imported
only when the backend is built. It takes a :class:`crux_lab.llm.registry.BackendArgs` and
returns a ``Backend``; a backend's own options (``DebateConfig.backend_options``) reach it
through the ``options`` hook, which turns a debate's configuration into the options object
the factory takes, and may refuse the debate (one line) before anything runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from crux_lab.registry import Registry

# How a backend's tiers get their models (crux_lab.tiers.models_for):
# "env": $CRUX_LAB_MODEL_STRONG / $CRUX_LAB_MODEL_FAST, else the built-in defaults;
# "explicit": only the models given (--model-strong / --model-fast), no default;
# "defaults": priced as the built-in defaults (a backend that calls no model).
TierRule = Literal["env", "explicit", "defaults"]


@dataclass(frozen=True)
class BackendSpec:
    """One backend: its static facts, and the dotted paths of its code."""

    name: str
    description: str
    billed: bool
    tiers: TierRule
    # What --help says about its tiers (after "name: "); empty to leave it out.
    tiers_help: str
    factory: str
    # A debate's configuration -> the factory's options (and the backend's own checks).
    options: str | None = None
    # Longer one-line description that depends on the run (key set, server URL, cassette).
    describe: str | None = None
    # The pydantic model of its options (DebateConfig.backend_options), if it takes any.
    options_model: str | None = None
    # Options from a persona library (personas, their propositions, a seed), for runs that
    # are not debates (building a persona, judging): a backend that speaks for personas.
    library: str | None = None
    # Whether a cassette records this backend's calls (False: the backend is the cassette).
    records: bool = True


# The one plug-in registry (the same class as engines, metrics and commands use); REGISTRY is
# its table, read as a plain mapping by the CLI, tiers.py, the store and the viz.
BACKENDS: Registry[BackendSpec] = Registry("backend")
REGISTRY: dict[str, BackendSpec] = BACKENDS.entries


def register(spec: BackendSpec) -> BackendSpec:
    """Add a backend to the table (its name must be new)."""
    if spec.name in REGISTRY or spec.name == AUTO:
        raise ValueError(f"backend {spec.name!r} is registered twice")
    BACKENDS.add(spec.name, spec, origin=__name__)
    return spec


AUTO = "auto"
# The backend a run uses when none is named: offline, free and deterministic. Its options are
# the failure knobs the evaluations sweep.
OFFLINE = "simulated"

register(BackendSpec(
    name="simulated",
    description="deterministic persona simulator, offline, no API cost",
    billed=False,
    tiers="defaults",
    tiers_help="priced as the anthropic defaults",
    factory="crux_lab.llm.simulated.options:build",
    options="crux_lab.llm.simulated.options:for_debate",
    options_model="crux_lab.llm.simulated.options:SimulatorKnobs",
    library="crux_lab.llm.simulated.options:for_library",
))
register(BackendSpec(
    name="anthropic",
    description="Claude via the Anthropic API; calls are billed to your key",
    billed=True,
    tiers="env",
    tiers_help="",  # allocation_help names its models and variables itself
    factory="crux_lab.llm.factories:anthropic",
    describe="crux_lab.llm.factories:describe_anthropic",
))
register(BackendSpec(
    name="openai",
    description="any OpenAI-compatible server (OpenAI, OpenRouter, vLLM, Ollama, llama.cpp)",
    billed=True,
    tiers="explicit",
    tiers_help="--model-strong/--model-fast, else the one model the server lists",
    factory="crux_lab.llm.factories:openai",
    describe="crux_lab.llm.factories:describe_openai",
))
register(BackendSpec(
    name="replay",
    description="answers from a recorded cassette (pass --cassette PATH), no API calls",
    billed=False,
    tiers="defaults",
    tiers_help="",
    factory="crux_lab.llm.factories:replay",
    describe="crux_lab.llm.factories:describe_replay",
    records=False,
))


def names() -> tuple[str, ...]:
    """The names ``--backend`` accepts: ``auto`` and every registered backend.

    >>> names()[:2]
    ('auto', 'simulated')
    """
    return (AUTO, *REGISTRY)


def spec(name: str) -> BackendSpec:
    """The registered backend ``name`` (KeyError when there is none)."""
    return REGISTRY[name]


def billed_names() -> tuple[str, ...]:
    """The backends whose calls are billed to an API key.

    >>> billed_names()
    ('anthropic', 'openai')
    """
    return tuple(n for n, s in REGISTRY.items() if s.billed)


def choices_help() -> str:
    """The ``--backend`` choices, for help text.

    >>> choices_help()
    'auto | simulated | anthropic | openai | replay'
    """
    return " | ".join(names())
