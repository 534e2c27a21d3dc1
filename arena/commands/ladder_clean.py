"""``arena ladder clean``: remove the ladder's bot images from the Docker engine (docs/ladder.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from arena.commands.common import console, err_console, fail, hold_or_fail, print_json
from arena.errors import ArenaError
from arena.text import safe_text


def clean_command(
    directory: Annotated[Path, typer.Argument(help="The ladder directory (made by arena ladder init).")],
    every: Annotated[
        bool,
        typer.Option("--all", help="Every image of this ladder, active versions' too: only once its server is stopped "
                                   "for good (the term is over); served again, its versions could not play."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print what was removed and kept as JSON.")] = False,
) -> None:
    """Remove this ladder's bot images (tags arena-ladder-ID:vN, no other ladder's and nothing else).

    Without --all: the images of versions that can never play again (failed,
    disabled, suspended, or gone from the store), safe while the server runs.
    With --all: every image of the ladder, for the end of a term or a
    rehearsal; refused while a server runs on the directory (its lock). An
    image a container still uses is kept, and said so.
    """
    from arena.ladder.versions.builds import SPENT, ladder_images, remove_images
    from arena.ladder.config import load_ladder_config
    from arena.ladder.store import LadderStore
    from arena.sandbox.docker import docker_client

    lock = hold_or_fail(directory, "arena ladder clean --all", create=False) if every else None  # noqa: F841 - held while it runs
    try:
        config = load_ladder_config(directory)
        store = LadderStore(config.ladder_path)
        try:
            ladder_id = store.meta()["ladder_id"]
            status = {v.id: v.status for v in store.versions()}
        finally:
            store.close()
        client = docker_client()
    except ArenaError as exc:
        fail(str(exc))
    try:
        found = ladder_images(client, ladder_id)
        chosen = sorted(tag for tag, version in found.items() if every or version is None or status.get(version, "") in SPENT
                        or version not in status)  # fmt: skip
        removal = remove_images(client, chosen)
    finally:
        client.close()
    _report(removal, len(found), every, as_json)


def _report(removal: Any, images: int, every: bool, as_json: bool) -> None:
    if as_json:
        print_json({"removed": list(removal.removed), "kept": [{"tag": t, "why": w} for t, w in removal.kept],
                    "left": images - len(removal.removed)})  # fmt: skip
        return
    what = "every image" if every else "the images of versions that can no longer play"
    console.print(f"removed {len(removal.removed)} of this ladder's {images} images ({what})", highlight=False)
    for tag, why in removal.kept:
        err_console.print(f"kept {tag}: {safe_text(why)}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``clean`` to the ``arena ladder`` command group."""
    app.command("clean")(clean_command)


__all__ = ["register"]
