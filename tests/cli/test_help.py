"""Every command's --help: no value type shown for flags (``--help <bool>``), no help text eaten as markup."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from arena.cli import app


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


def test_every_command_is_listed():
    paths = {" ".join(p) for p, _ in COMMANDS}
    assert {"", "match run", "serve", "bot build", "bot check", "tournament run", "rules show"} <= paths


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "arena")
def test_help_shows_no_type_for_flags(path):
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"}, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "--help" in result.output
    assert "<bool>" not in result.output
    help_line = next(line for line in result.output.splitlines() if "--help" in line)
    assert "<" not in help_line, help_line


def test_hard_cap_default_is_shown_not_eaten_as_markup():
    result = CliRunner().invoke(app, ["match", "run", "--help"], env={"COLUMNS": "200"}, terminal_width=200)
    assert "[default: max(60, move time)]" in result.output
