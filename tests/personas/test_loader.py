from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from crux_lab.personas.loader import (
    PersonaFileError,
    UnknownDeck,
    UnknownPersona,
    deck_for,
    get_deck,
    list_personas,
    load_decks,
    load_persona,
    load_personas,
    persona_root,
    propositions_for,
)


def test_default_root_is_repo_data_personas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRUX_LAB_PERSONAS", raising=False)
    root = persona_root()
    assert root == Path(__file__).resolve().parents[2] / "data" / "personas"
    assert {"michael-saylor", "arthur-hayes", "peter-schiff", "vitalik-buterin"} <= set(list_personas())


def test_env_override(library: Path) -> None:
    assert list_personas() == ["arthur-hayes", "michael-saylor"]


def test_load_persona_round_trip(library: Path) -> None:
    p = load_persona("michael-saylor")
    assert p.name == "Michael Saylor"
    assert p.beliefs is not None and p.beliefs.nodes
    assert p.warnings == []
    assert p.stance_on("crypto.p2") is not None and p.stance_on("crypto.p2").stance == "pro"  # type: ignore[union-attr]
    both = load_personas(["arthur-hayes", "michael-saylor"])
    assert list(both) == ["arthur-hayes", "michael-saylor"]


def test_unknown_persona_lists_valid_ids(library: Path) -> None:
    with pytest.raises(UnknownPersona) as err:
        load_persona("satoshi")
    assert "satoshi" in str(err.value) and "arthur-hayes, michael-saylor" in str(err.value)


def test_malformed_json_names_file_and_field(library: Path) -> None:
    path = library / "michael-saylor" / "contract.json"
    data = json.loads(path.read_text())
    data["evidencePolicy"]["accepts"] = "not a list"
    path.write_text(json.dumps(data))
    with pytest.raises(PersonaFileError) as err:
        load_persona("michael-saylor")
    msg = str(err.value)
    assert "contract.json" in msg and "evidencePolicy.accepts" in msg
    assert err.value.field == "evidencePolicy.accepts"


def test_json_syntax_error_names_file_and_line(library: Path) -> None:
    path = library / "arthur-hayes" / "stances.json"
    path.write_text('{"personaId": "arthur-hayes", "stances": [')
    with pytest.raises(PersonaFileError) as err:
        load_persona("arthur-hayes")
    assert "stances.json" in str(err.value) and "line 1" in str(err.value)


def test_bad_corpus_line_names_line_and_field(library: Path) -> None:
    path = library / "arthur-hayes" / "corpus.jsonl"
    lines = path.read_text().splitlines()
    bad = json.loads(lines[2])
    bad["kind"] = "rumour"
    lines[2] = json.dumps(bad)
    path.write_text("\n".join(lines))
    with pytest.raises(PersonaFileError) as err:
        load_persona("arthur-hayes")
    assert "corpus.jsonl" in str(err.value) and "line 3: kind" in str(err.value)


def test_missing_beliefs_warns_and_loads(library: Path) -> None:
    (library / "arthur-hayes" / "beliefs.json").unlink()
    with pytest.warns(UserWarning, match="contract-only"):
        p = load_persona("arthur-hayes")
    assert p.beliefs is None
    assert any("beliefs.json" in w for w in p.warnings)


def test_decks(library: Path) -> None:
    decks = load_decks()
    assert [d.id for d in decks][0] == "crypto"
    assert get_deck("crypto").persona_ids[:2] == ["michael-saylor", "arthur-hayes"]
    with pytest.raises(UnknownDeck) as err:
        get_deck("poetry")
    assert "known decks: crypto" in str(err.value)
    assert deck_for(["michael-saylor", "arthur-hayes"]) is not None
    assert deck_for(["michael-saylor", "someone-else"]) is None
    props = propositions_for(["arthur-hayes"])
    assert "crypto.p2" in props and all(k.startswith("crypto.") for k in props)
    assert propositions_for(["nobody"]) == {}


def test_no_warnings_on_shipped_library(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CRUX_LAB_PERSONAS", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for pid in list_personas():
            assert load_persona(pid).warnings == []


def test_missing_library_folder_is_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRUX_LAB_PERSONAS", str(tmp_path / "nowhere"))
    assert list_personas() == [] and load_decks() == []
    with pytest.raises(UnknownPersona, match="does not exist.*CRUX_LAB_PERSONAS"):
        load_persona("michael-saylor")


def test_malformed_decks_json_names_field(library: Path) -> None:
    path = library / "decks.json"
    data = json.loads(path.read_text())
    del data["decks"][0]["propositions"][1]["question"]
    path.write_text(json.dumps(data))
    with pytest.raises(PersonaFileError) as err:
        load_decks()
    assert "decks.json" in str(err.value) and err.value.field == "decks.0.propositions.1.question"


def test_works_from_a_clone_outside_the_repo_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in __import__("os").environ.items() if k != "CRUX_LAB_PERSONAS"}
    env["PYTHONPATH"] = str(repo)
    code = "from crux_lab.personas.loader import persona_root, load_persona; print(persona_root()); print(load_persona('peter-schiff').name)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [str(repo / "data" / "personas"), "Peter Schiff"]


def test_display_names_read_each_contract_and_fall_back_to_the_id() -> None:
    from crux_lab.personas.loader import display_names, load_persona

    names = display_names(["michael-saylor", "no-such-persona"])
    assert names == {"michael-saylor": load_persona("michael-saylor").name, "no-such-persona": "no-such-persona"}
    assert names["michael-saylor"] != "michael-saylor"
