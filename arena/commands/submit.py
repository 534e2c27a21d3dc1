"""``arena submit``: upload a bot directory to a ladder server as a new version of your team's bot."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from arena.commands.common import console, fail, print_json
from arena.errors import ArenaError
from arena.ladder.versions.client import submit as upload
from arena.text import safe_text


def submit(
    bot_dir: Annotated[Path, typer.Argument(help="The bot directory (what arena bot build takes).")],
    server: Annotated[str, typer.Option("--server", help="The ladder's address, e.g. https://ladder.example.org")],
    token: Annotated[str, typer.Option("--token", envvar="ARENA_LADDER_TOKEN", help="Your team's token (or ARENA_LADDER_TOKEN).")],
    note: Annotated[str, typer.Option("--note", help="What changed (shown on your team's page).")] = "",
    as_json: Annotated[bool, typer.Option("--json", help="Print the server's answer as JSON.")] = False,
) -> None:
    """Upload BOT_DIR as your team's next version: the server builds it offline, validates it, then ranks it.

    Links, devices and FIFOs in the directory are refused here already (the
    server refuses them too); follow the build on your team's page (/me).
    """
    try:
        version = upload(bot_dir, server, token, note)
    except ArenaError as exc:
        fail(str(exc))
    if as_json:
        print_json(version)
        return
    console.print(
        f"submitted {safe_text(version['entry'])} (status {safe_text(version['status'])}); "
        f"follow its build at {safe_text(server.rstrip('/'))}/me"
    )
