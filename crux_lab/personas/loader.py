"""Load personas and decks from ``data/personas/`` (or ``$CRUX_LAB_PERSONAS``).

Every failure names the file, the field and the fix: a researcher editing a persona by hand
should never see a deep pydantic traceback.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from crux_lab.personas.models import (
    BeliefGraph,
    CorpusChunk,
    Deck,
    DeckFile,
    Persona,
    PersonaContract,
    PersonaStances,
    Proposition,
    VoiceProfile,
)

ENV_VAR = "CRUX_LAB_PERSONAS"
PERSONA_FILES = ("contract.json", "voice.json", "stances.json", "corpus.jsonl", "beliefs.json")

M = TypeVar("M", bound=BaseModel)


class PersonaError(Exception):
    """Base class of persona loading errors."""


class UnknownPersona(PersonaError, KeyError):
    """No persona folder with that id."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class UnknownDeck(PersonaError, KeyError):
    """No deck with that id in decks.json."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class PersonaFileError(PersonaError, ValueError):
    """A persona file is missing, is not valid JSON, or does not match the format."""

    def __init__(self, path: Path | str, message: str, field: str | None = None) -> None:
        self.path = Path(path)
        self.field = field
        where = f"{self.path}" + (f", field '{field}'" if field else "")
        super().__init__(f"{where}: {message}")


def persona_root() -> Path:
    """The persona library folder.

    ``$CRUX_LAB_PERSONAS`` wins; otherwise ``data/personas`` of the repository this package
    lives in (an editable install or a clone on ``sys.path``); otherwise ``./data/personas``.
    """
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    repo = Path(__file__).resolve().parents[2] / "data" / "personas"
    if repo.is_dir():
        return repo
    return Path.cwd() / "data" / "personas"


def list_personas() -> list[str]:
    """Ids of the personas in the library (folders holding a contract.json), sorted."""
    root = persona_root()
    if not root.is_dir():
        return []
    return sorted(
        p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")) and (p / "contract.json").is_file()
    )


def _field_path(loc: Sequence[int | str]) -> str:
    return ".".join(str(x) for x in loc) or "<root>"


def _validate(model: type[M], data: Any, path: Path, prefix: str = "") -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = prefix + _field_path(err["loc"])
        more = f" (and {len(exc.errors()) - 1} more problem(s))" if len(exc.errors()) > 1 else ""
        raise PersonaFileError(
            path, f"{err['msg']}{more}. Fix the value to match the {model.__name__} format (data/personas/README.md).", field
        ) from None


def read_json_model(model: type[M], path: Path) -> M:
    """Parse one JSON file into ``model``, raising :class:`PersonaFileError` with the field."""
    if not path.is_file():
        raise PersonaFileError(path, f"file is missing; every persona folder needs {path.name}.")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise PersonaFileError(
            path, f"not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}. Fix the syntax.", None
        ) from None
    return _validate(model, data, path)


def read_corpus(path: Path) -> list[CorpusChunk]:
    """Parse ``corpus.jsonl`` (one chunk object per line; blank lines skipped)."""
    if not path.is_file():
        raise PersonaFileError(path, "file is missing; every persona folder needs corpus.jsonl.")
    chunks: list[CorpusChunk] = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PersonaFileError(path, f"line {lineno} is not valid JSON: {exc.msg}. Fix the syntax.") from None
        chunks.append(_validate(CorpusChunk, data, path, prefix=f"line {lineno}: "))
    return chunks


def load_persona_dir(folder: Path) -> Persona:
    """Load a persona from any folder (used by ``personas build`` and tests)."""
    folder = Path(folder)
    contract = read_json_model(PersonaContract, folder / "contract.json")
    voice = read_json_model(VoiceProfile, folder / "voice.json")
    stances = read_json_model(PersonaStances, folder / "stances.json")
    corpus = read_corpus(folder / "corpus.jsonl")
    persona = Persona(id=contract.persona_id, contract=contract, voice=voice, corpus=corpus, stances=stances)
    if contract.persona_id != folder.name:
        persona.warnings.append(
            f"{folder / 'contract.json'}: personaId {contract.persona_id!r} differs from the folder name {folder.name!r}."
        )
    if stances.persona_id != contract.persona_id:
        raise PersonaFileError(
            folder / "stances.json",
            f"personaId {stances.persona_id!r} does not match contract.json ({contract.persona_id!r}).",
            "personaId",
        )
    beliefs_path = folder / "beliefs.json"
    if beliefs_path.is_file():
        persona.beliefs = read_json_model(BeliefGraph, beliefs_path)
    else:
        msg = (
            f"{beliefs_path} is missing: {persona.id} will get contract-only prompts. "
            f"Build it with `crux-lab personas build {folder}`."
        )
        persona.warnings.append(msg)
        warnings.warn(msg, stacklevel=3)
    return persona


def load_persona(persona_id: str) -> Persona:
    """Load one persona by id.

    Raises :class:`UnknownPersona` (listing valid ids) or :class:`PersonaFileError`.
    """
    root = persona_root()
    folder = root / persona_id
    if not root.is_dir():
        hint = f" (set by ${ENV_VAR})" if os.environ.get(ENV_VAR) else ""
        raise UnknownPersona(
            f"unknown persona {persona_id!r}: the persona library {root}{hint} does not exist. "
            f"Point ${ENV_VAR} at a folder of persona folders, or unset it to use the repo's data/personas."
        )
    if not persona_id or "/" in persona_id or not (folder / "contract.json").is_file():
        known = ", ".join(list_personas()) or "(none)"
        raise UnknownPersona(f"unknown persona {persona_id!r} in {root}; valid ids: {known}")
    return load_persona_dir(folder)


def display_names(persona_ids: Iterable[str], known: Mapping[str, str] | None = None) -> dict[str, str]:
    """Display names of personas, for what a reader sees: ``known`` names first (those a run
    recorded), then each read from its contract alone (no beliefs or corpus loaded), the id
    itself when it cannot be read (e.g. a run read on a machine without its persona library).

    >>> display_names(["x-nobody"], {"x-nobody": "The Nobody"})
    {'x-nobody': 'The Nobody'}
    >>> display_names(["x-nobody"])
    {'x-nobody': 'x-nobody'}
    """
    root = persona_root()
    out = {}
    for pid in persona_ids:
        if known and known.get(pid):
            out[pid] = known[pid]
            continue
        try:
            out[pid] = read_json_model(PersonaContract, root / pid / "contract.json").name
        except (PersonaError, OSError, ValueError):
            out[pid] = pid
    return out


def load_personas(ids: Sequence[str]) -> dict[str, Persona]:
    """Load several personas, keyed by id, in the given order."""
    return {pid: load_persona(pid) for pid in ids}


def load_decks() -> list[Deck]:
    """All decks of ``decks.json`` (empty list when the library has none)."""
    path = persona_root() / "decks.json"
    if not path.is_file():
        return []
    return read_json_model(DeckFile, path).decks


def get_deck(deck_id: str) -> Deck:
    """One deck by id; :class:`UnknownDeck` lists the known decks."""
    decks = load_decks()
    for deck in decks:
        if deck.id == deck_id:
            return deck
    known = ", ".join(d.id for d in decks) or "(none)"
    raise UnknownDeck(f"unknown deck {deck_id!r}; known decks: {known}")


def deck_for(persona_ids: Sequence[str]) -> Deck | None:
    """The first deck that contains all of ``persona_ids``, else ``None``."""
    wanted = set(persona_ids)
    for deck in load_decks():
        if wanted <= set(deck.persona_ids):
            return deck
    return None


def propositions_for(persona_ids: Sequence[str]) -> dict[str, Proposition]:
    """Union of the propositions of every deck containing any of ``persona_ids``."""
    wanted = set(persona_ids)
    out: dict[str, Proposition] = {}
    for deck in load_decks():
        if wanted & set(deck.persona_ids):
            for prop in deck.propositions:
                out.setdefault(prop.id, prop)
    return out
