"""``crux-lab personas``: list, show, decks and the belief-graph build pipeline.

Mounted by ``crux_lab.cli`` as the ``personas`` sub-command (``app`` below).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from crux_lab.llm import UnknownBackend, describe_backend_choice, make_backend, resolve_backend_name
from crux_lab.llm.base import LLMError
from crux_lab.llm.registry import options_for_library
from crux_lab.persona_tools.build import build_beliefs, load_for_build
from crux_lab.personas.loader import (
    PersonaError,
    list_personas,
    load_decks,
    load_persona,
    persona_root,
    propositions_for,
)
from crux_lab.personas.models import (
    BeliefGraph,
    CorpusChunk,
    DeckFile,
    PersonaContract,
    PersonaStances,
    VoiceProfile,
)
from crux_lab.personas.prompt import build_system_prompt
from crux_lab.personas.validate import check_library
from crux_lab.tokens import count_tokens

app = typer.Typer(help="The persona library: list, show, decks, build belief graphs.", no_args_is_help=True)
out = Console()
err = Console(stderr=True)


# British and American spellings of the same word: a persona id written either way is found.
_SPELLINGS = (("our", "or"), ("isation", "ization"), ("iser", "izer"), ("ise", "ize"), ("yse", "yze"), ("tre", "ter"))


def _canonical(text: str) -> str:
    """Lower case, words joined by hyphens, British spellings folded into American ones.

    >>> _canonical("The Tenant Organiser"), _canonical("neighbourhood_preservationist")
    ('tenant-organizer', 'neighborhood-preservationist')
    """
    words = [w for w in "".join(c if c.isalnum() else " " for c in text.lower()).split() if w != "the"]
    out = []
    for w in words:
        for british, american in _SPELLINGS:
            if british in w:
                w = w.replace(british, american)
        out.append(w)
    return "-".join(out)


def resolve_persona_id(ref: str, valid: list[str]) -> str | None:
    """The persona id ``ref`` means: itself, or the one id (or display name) that matches it up
    to case, spacing and British/American spelling (``tenant-organiser`` -> ``tenant-organizer``);
    None when nothing or more than one matches.

    >>> resolve_persona_id("tenant-organiser", ["tenant-organizer", "yimby-economist"])
    'tenant-organizer'
    >>> resolve_persona_id("nobody", ["tenant-organizer"]) is None
    True
    """
    if ref in valid:
        return ref
    want = _canonical(ref)
    matches = [v for v in valid if _canonical(v) == want]
    if not matches:
        for v in valid:
            try:
                if _canonical(load_persona(v).name) == want:
                    matches.append(v)
            except PersonaError:
                continue
    return matches[0] if len(matches) == 1 else None


def _fail(message: str, code: int = 2) -> None:
    err.print(f"[red]error:[/] {escape(message)}", soft_wrap=True)  # paths must stay copyable
    raise typer.Exit(code)


@app.command("list")
def list_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array of persona ids.")] = False,
) -> None:
    """List the personas of the library (id, name, real or synthetic, decks, belief graph size)."""
    ids = list_personas()
    if as_json:
        typer.echo(json.dumps(ids))
        return
    decks: dict[str, list[str]] = {}
    for deck in load_decks():
        for pid in deck.persona_ids:
            decks.setdefault(pid, []).append(deck.id)
    # Ids stay whole (at 80 columns too); names and the other columns wrap or fold.
    table = Table("id", "name (kind)", "decks", "beliefs", box=box.SIMPLE_HEAD, pad_edge=False,
                  caption="beliefs: belief-graph nodes/edges/corpus chunks", caption_justify="left")
    table.columns[0].no_wrap = True
    for column in table.columns[1:]:
        column.overflow = "fold"
    for pid in ids:
        try:
            p = load_persona(pid)
        except Exception as exc:  # one broken persona must not hide the others
            table.add_row(pid, f"[red]unreadable: {escape(str(exc))}[/]", "", "")
            continue
        g = p.beliefs
        graph = f"{len(g.nodes)}/{len(g.edges)}" if g else "-/-"
        table.add_row(pid, f"{escape(p.name)} ({p.contract.kind})", ", ".join(decks.get(pid, [])),
                      f"{graph}/{len(p.corpus)}")
    out.print(table)


@app.command("show")
def show_cmd(
    persona_id: Annotated[str, typer.Argument(help="Persona id (see `crux-lab personas list`).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print contract, voice and stances as JSON.")] = False,
    prompt: Annotated[bool, typer.Option("--prompt", help="Print the consolidated system prompt and its token count.")] = False,
    third: Annotated[bool, typer.Option("--third", help="With --prompt: third-person (APR) framing.")] = False,
) -> None:
    """Show one persona: contract, stances on its deck, belief graph summary."""
    try:
        p = load_persona(resolve_persona_id(persona_id, list_personas()) or persona_id)
    except PersonaError as exc:
        _fail(str(exc))
        return
    if as_json:
        typer.echo(json.dumps({
            "contract": p.contract.model_dump(mode="json", by_alias=True),
            "voice": p.voice.model_dump(mode="json", by_alias=True),
            "stances": p.stances.model_dump(mode="json", by_alias=True),
            "beliefs": {"nodes": len(p.beliefs.nodes), "edges": len(p.beliefs.edges)} if p.beliefs else None,
            "warnings": p.warnings,
        }, indent=1, ensure_ascii=False))
        return
    props = propositions_for([p.id])
    if prompt:
        text = build_system_prompt(p, framing="third" if third else "second", propositions=props)
        typer.echo(text)
        err.print(f"[dim]{count_tokens(text)} tokens (crux_lab.tokens.count_tokens)[/]")
        return
    c = p.contract
    out.print(f"[bold]{escape(p.name)}[/] ({p.id}, {c.kind})")
    for label, text in (("personality", c.personality), ("bias", c.bias), ("stakes", c.stakes),
                        ("epistemology", c.epistemology), ("time horizon", c.time_horizon),
                        ("flip conditions", c.flip_conditions)):
        out.print(f"[bold]{label}:[/] {escape(text)}")
    table = Table("proposition", "stance", "conf", "type", "reason")
    for s in p.stances.stances:
        claim = props[s.proposition_id].text if s.proposition_id in props else s.proposition_id
        table.add_row(f"{s.proposition_id}\n[dim]{escape(claim)}[/]", s.stance, f"{s.confidence:.2f}",
                      s.disagreement_type.value if s.disagreement_type else "", escape(s.reason))
    out.print(table)
    if p.beliefs:
        out.print(f"belief graph: {len(p.beliefs.nodes)} nodes, {len(p.beliefs.edges)} edges, "
                  f"{len(p.beliefs.contradictions)} contradictions; corpus {len(p.corpus)} chunks")
    for w in p.warnings:
        err.print(f"[yellow]warning:[/] {escape(w)}")


@app.command("decks")
def decks_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print decks.json content as JSON.")] = False,
) -> None:
    """List the decks: personas, suggested topics and shared propositions."""
    try:
        decks = load_decks()
    except PersonaError as exc:
        _fail(str(exc))
        return
    if as_json:
        typer.echo(json.dumps([d.model_dump(mode="json", by_alias=True) for d in decks], indent=1, ensure_ascii=False))
        return
    for d in decks:
        out.print(f"[bold]{d.id}[/] — {escape(d.name)}: {', '.join(d.persona_ids)}")
        out.print(f"  topics: {escape('; '.join(d.topics))}")
        for prop in d.propositions:
            kind = prop.disagreement_type.value if prop.disagreement_type else "common ground"
            out.print(f"  {prop.id:<14} [{kind}] {escape(prop.text)}")


@app.command("build")
def build_cmd(
    folder: Annotated[Path, typer.Argument(help="Persona folder with contract.json, voice.json, stances.json, corpus.jsonl.")],
    backend: Annotated[str, typer.Option("--backend", help="auto | simulated | anthropic | replay.")] = "auto",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the simulated backend.")] = 0,
    cassette: Annotated[Path | None, typer.Option("--cassette", help="Replay cassette (JSONL): replay answers from it; other backends record into it.")] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Parallel extraction calls.")] = 4,
    max_nodes: Annotated[int, typer.Option("--max-nodes", min=1, help="Keep at most this many best-grounded nodes.")] = 50,
) -> None:
    """Extract a grounded belief graph from the corpus and write beliefs.json atomically."""

    if not folder.is_dir():
        _fail(f"{folder} is not a folder. Pass a persona folder such as data/personas/michael-saylor.")
    try:
        persona = load_for_build(folder)
        err.print(describe_backend_choice(backend, cassette=cassette))
        resolved = resolve_backend_name(backend)
        options = options_for_library(resolved, {persona.id: persona}, propositions_for([persona.id]), seed)
        be = make_backend(resolved, options=options, cassette=cassette)
    except (PersonaError, UnknownBackend, LLMError) as exc:
        _fail(str(exc))
        return
    with Progress(TextColumn("extract_beliefs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=False) as bar:
        task = bar.add_task("chunks", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        try:
            result = asyncio.run(build_beliefs(folder, be, concurrency=concurrency, max_nodes=max_nodes, progress=progress))
        except (PersonaError, LLMError) as exc:
            _fail(f"build failed, {folder / 'beliefs.json'} left unchanged: {exc}", code=1)
            return
    g = result.graph
    out.print(f"wrote {result.path}: {len(g.nodes)} nodes, {len(g.edges)} edges, "
              f"{len(g.contradictions)} contradictions from {result.chunks} chunks ({result.calls} calls, "
              f"{result.input_tokens + result.output_tokens} tokens, ${result.cost_usd:.4f})")
    if result.diff is not None:
        out.print(f"changes against the previous beliefs.json: {result.diff.summary()}")
    if result.failed_chunks:
        err.print(f"[yellow]warning:[/] extraction failed for {len(result.failed_chunks)} chunk(s): {', '.join(result.failed_chunks)}")
    if result.dangling_stance_links:
        err.print(f"[yellow]warning:[/] stances.json links {len(result.dangling_stance_links)} node id(s) the new graph "
                  f"does not have: {', '.join(result.dangling_stance_links[:8])}. Update beliefNodeIds in stances.json.")


@app.command("check")
def check_cmd(
    strict: Annotated[bool, typer.Option("--strict", help="Exit non-zero on warnings too.")] = False,
) -> None:
    """Check the library: file links, excerpt kinds and the decks' ground-truth design."""
    issues = check_library()
    for issue in issues:
        color = "red" if issue.severity == "error" else "yellow"
        out.print(f"[{color}]{issue.severity}[/]: {escape(issue.where)}: {escape(issue.message)}")
    errors = sum(i.severity == "error" for i in issues)
    warns = len(issues) - errors
    out.print(f"{persona_root()}: {errors} error(s), {warns} warning(s)")
    if errors or (strict and warns):
        raise typer.Exit(1)


SCHEMA_FILES = ("contract.json", "voice.json", "corpus.jsonl", "beliefs.json", "stances.json", "decks.json")


@app.command("schema")
def schema_cmd(
    file: Annotated[str, typer.Argument(help=f"One of: {', '.join(SCHEMA_FILES)}.")],
) -> None:
    """Print the JSON Schema of a persona file (for editors and other tools; keys are camelCase)."""
    from pydantic import BaseModel

    models: dict[str, type[BaseModel]] = {
        "contract.json": PersonaContract, "voice.json": VoiceProfile, "corpus.jsonl": CorpusChunk,
        "beliefs.json": BeliefGraph, "stances.json": PersonaStances, "decks.json": DeckFile,
    }
    if file not in models:
        _fail(f"unknown persona file {file!r}; choose one of: {', '.join(SCHEMA_FILES)}.")
        return
    schema = models[file].model_json_schema(by_alias=True)
    if file == "corpus.jsonl":
        schema["description"] = "One object per line of corpus.jsonl. " + schema.get("description", "")
    typer.echo(json.dumps(schema, indent=1, ensure_ascii=False))
