"""What every command shares: clean error exits and JSON output."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console

from arena.errors import ArenaError
from arena.tables.runlock import RunLock, hold_directory
from arena.text import safe_text
from arena_sdk.engine import RulesError

#: Exit status for bad input: a bad option, file or record.
EXIT_BAD_INPUT = 2

console = Console()
err_console = Console(stderr=True, soft_wrap=True)


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """Print ``error: message`` to stderr and exit with ``code`` (no traceback).

    ``message`` is plain text (it may quote names, paths or a bot's output):
    markup in it prints literally and control characters are dropped.
    """
    err_console.print(f"[bold red]error:[/] {safe_text(message, keep_newlines=True)}", highlight=False, markup=True)
    raise typer.Exit(code)


@contextmanager
def bad_input_exits() -> Iterator[None]:
    """Turn the engine's typed errors into a one-line message and exit 2."""
    try:
        yield
    except RulesError as exc:
        fail(str(exc))


def hold_or_fail(directory: Path, what: str, *, create: bool = True) -> RunLock:
    """Take ``directory``'s run lock (one runner per directory) or exit 2 with the one line that names its holder.

    Taken before the command reads, cleans or writes anything there; released
    when the returned lock is released or dropped (at the latest when the process ends).
    """
    try:
        return hold_directory(directory, what, create=create)
    except ArenaError as exc:
        fail(str(exc))


def print_json(data: Any) -> None:
    """Write ``data`` as indented JSON to stdout (plain, for scripts)."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False) + "\n")
