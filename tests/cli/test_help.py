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


def _modules_after(*args: str) -> tuple[int, set[str]]:
    """Run ``arena ARGS`` as a user does (a process of its own); its exit code and the heavy modules it imported."""
    import subprocess
    import sys

    probe = (
        "import sys\nfrom arena.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit as end:\n"
        "    code = end.code or 0\nelse:\n    code = 0\n"
        "heavy = {'fastapi', 'scipy', 'arena.ladder', 'arena.play', 'arena.ratings'}\n"
        "print(code, ' '.join(sorted(heavy & set(sys.modules))))"
    )
    done = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=120)
    code, _, modules = done.stdout.strip().splitlines()[-1].partition(" ")
    return int(code), set(modules.split())


def test_a_command_imports_its_own_module_only():
    """The finding (the suite's time): every ``arena`` start imported every command, FastAPI and SciPy (1.4 s of CPU)."""
    code, heavy = _modules_after("match", "run", "--help")
    assert code == 0 and heavy == set()
    code, heavy = _modules_after("rules", "presets")
    assert code == 0 and heavy == set()
    code, heavy = _modules_after("--help")  # the root's help lists every command: all of them
    assert code == 0 and {"fastapi", "arena.ladder"} <= heavy
    code, heavy = _modules_after("--help", "match")  # still the root's help (a review: it listed match alone)
    assert code == 0 and {"fastapi", "arena.ladder"} <= heavy


def test_a_lone_command_keeps_its_name(tmp_path):
    """Built with one command, the app stays a group: ``arena replay X`` is not read as ``arena X``."""
    code, _ = _modules_after("replay", "--help")
    assert code == 0
    code, _ = _modules_after("no-such-command")
    assert code == 2
