"""``arena sandbox prune``: remove leftover bot containers."""

from __future__ import annotations

from typing import Annotated

import typer

from arena.commands.common import console, fail, print_json
from arena.sandbox.docker import DockerUnavailable, docker_client, prune

app = typer.Typer(help="Manage the containers the arena starts.", no_args_is_help=True)


@app.command("prune")
def prune_command(
    match_id: Annotated[
        str | None, typer.Option("--match", help="Only containers whose match id starts with this (a tournament: NAME/).")
    ] = None,
    run: Annotated[
        str | None, typer.Option("--run", help="Only containers of this run (label arena.run).")
    ] = None,
    running: Annotated[
        bool, typer.Option("--running", help="Also stop running ones (they may belong to a match in progress).")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the removed names as JSON.")] = False,
) -> None:
    """Remove the containers the arena labelled (arena.managed) that are left over after a crash.

    Each goes with its anonymous volumes.  Running containers are kept unless
    --running is given.  On an engine others use too, filter with --run or --match.

    Volumes whose container is already gone (left before seats stopped getting
    an image's VOLUME as a volume) carry no label tying them to the arena,
    so they are not touched here: `docker volume ls --filter dangling=true`
    lists them and `docker volume prune` removes them, with every other unused
    volume of the engine (before Docker 23 named ones too; see docs/reliability.md).
    """
    try:
        client = docker_client()
    except DockerUnavailable as exc:
        fail(str(exc))
    try:
        removed = prune(client, match_id, run=run, include_running=running)
    finally:
        client.close()
    if as_json:
        print_json({"removed": removed})
    else:
        console.print(f"removed {len(removed)} container(s)" + (": " + ", ".join(removed) if removed else ""))
