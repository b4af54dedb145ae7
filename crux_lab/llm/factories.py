"""The built-in API backends (anthropic, openai, replay): each a factory registered with
:func:`crux_lab.backends.backend` (and one entry point in crux_lab's ``pyproject.toml``), with
its run description. The simulator's lives with it (:mod:`crux_lab.llm.simulated.options`).
SDKs are imported only when a backend is built.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from crux_lab.backends import backend
from crux_lab.llm.base import Backend, BackendUnavailable
from crux_lab.llm.keys import API_KEY_ENV, OPENAI_KEY_ENV
from crux_lab.llm.registry import BackendArgs
from crux_lab.models.domain import Tier


def describe_replay(cassette: Path | None, models: Mapping[str, str] | None, base_url: str | None) -> str:
    if cassette:
        return f"answers from the cassette {cassette}, no API calls"
    return "answers from a recorded cassette (pass --cassette PATH), no API calls"


def describe_openai(cassette: Path | None, models: Mapping[str, str] | None, base_url: str | None) -> str:
    from crux_lab.llm import tier_models
    from crux_lab.llm.openai_backend import is_local, resolve_base_url

    url = resolve_base_url(base_url)
    chosen = tier_models("openai", models)
    listed = ", ".join(f"{t.value}={chosen[t]}" for t in (Tier.strong, Tier.fast) if t in chosen)
    if is_local(url):
        billing = "a server on this machine: no key, no cost"
    elif os.environ.get(OPENAI_KEY_ENV, "").strip():
        billing = f"{OPENAI_KEY_ENV} is set; calls are billed to your key"
    else:
        billing = f"unavailable: {OPENAI_KEY_ENV} is not set"
    return f"OpenAI-compatible server at {url} ({listed or 'models from the server'}); {billing}"


def describe_anthropic(cassette: Path | None, models: Mapping[str, str] | None, base_url: str | None) -> str:
    from crux_lab.llm import tier_models

    if not os.environ.get(API_KEY_ENV, "").strip():
        return f"unavailable: {API_KEY_ENV} is not set (export {API_KEY_ENV}=sk-ant-... first)"
    chosen = tier_models("anthropic", models)
    listed = ", ".join(f"{t.value}={chosen[t]}" for t in (Tier.strong, Tier.fast))
    return f"Claude via the Anthropic API ({listed}); calls are billed to your key"


def anthropic_settings(
    chosen: dict[str, str], url: str | None, mode: str | None
) -> tuple[dict[str, str], str | None]:
    if url:
        raise BackendUnavailable("--base-url applies to the openai backend; the anthropic backend reads $ANTHROPIC_BASE_URL.")
    if mode:
        raise BackendUnavailable("--structured applies to the openai backend; the anthropic backend uses its native structured outputs.")
    from crux_lab.llm import tier_models

    return {t.value: m for t, m in tier_models("anthropic", chosen).items()}, None


def anthropic_check(cassette: Path | None) -> None:
    if not os.environ.get(API_KEY_ENV, "").strip():
        raise BackendUnavailable(
            f"the anthropic backend needs an API key in the environment: `export {API_KEY_ENV}=sk-ant-...` "
            f"(never pass it on the command line), or use --backend simulated."
        )


def openai_settings(
    chosen: dict[str, str], url: str | None, mode: str | None
) -> tuple[dict[str, str], str | None]:
    """Ask the server once (it must answer before anything is spent or written); a missing model
    is filled with the one model it lists."""
    from crux_lab.llm import resolve_openai_models
    from crux_lab.llm.openai_backend import check_settings, resolve_base_url, served_models

    url = resolve_base_url(url)
    check_settings(url)  # an http(s) URL, and a key unless the server is local
    served_models(url)  # the server answers (one line naming the URL if not)
    models = resolve_openai_models(chosen, url)
    return {t.value: m for t, m in models.items()}, url


def replay_check(cassette: Path | None) -> None:
    if cassette is None:
        raise BackendUnavailable("the replay backend needs a cassette: pass --cassette PATH (recorded by an earlier run with --cassette).")
    if not cassette.is_file():
        raise BackendUnavailable(f"cassette {cassette} does not exist; record one first or pass another --cassette PATH.")


@backend(
    "anthropic",
    description="Claude via the Anthropic API; calls are billed to your key",
    billed=True,
    tiers="env",  # allocation_help names its models and variables itself
    describe=describe_anthropic,
    settings=anthropic_settings,
    check=anthropic_check,
)
def anthropic(args: BackendArgs) -> Backend:
    from crux_lab.llm import tier_models

    if not os.environ.get(API_KEY_ENV, "").strip():
        from crux_lab.llm.anthropic_backend import MISSING_KEY_MESSAGE

        raise BackendUnavailable(MISSING_KEY_MESSAGE)
    from crux_lab.llm.anthropic_backend import AnthropicBackend

    return AnthropicBackend(models=tier_models("anthropic", args.models))


@backend(
    "openai",
    description="any OpenAI-compatible server (OpenAI, OpenRouter, vLLM, Ollama, llama.cpp)",
    billed=True,
    tiers="explicit",
    tiers_help="--model-strong/--model-fast, else the one model the server lists",
    describe=describe_openai,
    structured=True,
    base_url=True,
    settings=openai_settings,
)
def openai(args: BackendArgs) -> Backend:
    from crux_lab.llm import resolve_openai_models
    from crux_lab.llm.openai_backend import OpenAIBackend

    return OpenAIBackend(
        models=resolve_openai_models(args.models, args.base_url), base_url=args.base_url,
        structured=args.structured or "auto",  # type: ignore[arg-type]  # checked by the backend
    )


@backend(
    "replay",
    description="answers from a recorded cassette (pass --cassette PATH), no API calls",
    billed=False,
    tiers="defaults",
    describe=describe_replay,
    records=False,
    check=replay_check,
)
def replay(args: BackendArgs) -> Backend:
    if args.cassette is None:
        raise BackendUnavailable(
            "the replay backend needs a cassette file: pass --cassette PATH "
            "(recorded by an earlier run with --cassette)."
        )
    from crux_lab.llm.replay import ReplayBackend

    return ReplayBackend(args.cassette, mode="replay")
