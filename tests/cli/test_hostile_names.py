"""Names that are rich markup or escape codes (issue 9, item 9): printed literally, never obeyed.

A tournament name ``[/]`` gave a traceback (rich: "closing tag has nothing to
close"); a bot-reported name with ANSI escapes cleared or faked the organiser's
terminal.  Every name now goes through ``arena.text``.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from rich.console import Console

from arena.text import safe_text

REPO = Path(__file__).resolve().parents[2]
RANDOM = f"cmd:{sys.executable} {REPO / 'example_bots' / 'random' / 'bot.py'}"
HOSTILE = "[/]\x1b[2J\x1b[H\x1b]0;pwned\x07[bold]evil\x9b31m\u202egnp.exe\rfake"

HOSTILE_BOT = f'''
from arena_sdk import Bot, run

class Hostile(Bot):
    name = {HOSTILE!r}

    def bid(self, view):
        return 1

    def play(self, view):
        return view.legal_cards()[0]

run(Hostile())
'''


def _no_escape_codes(text: str) -> None:
    assert "\x1b" not in text and "\x9b" not in text and "\x07" not in text and "\r" not in text
    assert "\u202e" not in text


@pytest.mark.parametrize(
    "name",
    [HOSTILE, "[/]", "[bold", "x\\", "[link=file:///etc/passwd]x[/link]", "\x1b[31mred", "a\x00b\x7fc"],
)
def test_safe_text_prints_literally(name):
    console = Console(file=io.StringIO(), width=200, force_terminal=False)
    console.print(f"[bold]{safe_text(name)}[/] end")
    out = console.file.getvalue()
    _no_escape_codes(out)
    visible = "".join(ch for ch in name if ch.isprintable())
    if "\x1b" not in name and "\x9b" not in name:
        assert visible in out  # markup is shown as written, not obeyed


def test_safe_text_keeps_newlines_only_when_asked():
    assert safe_text("a\nb\tc") == "a b c"
    assert safe_text("a\nb", keep_newlines=True) == "a\nb"


def test_match_run_prints_a_hostile_bot_name_literally(run_cli, tmp_path):
    bot = tmp_path / "hostile.py"
    bot.write_text(HOSTILE_BOT)
    result = run_cli(
        "match", "run", "--bot", f"cmd:{sys.executable} {bot}", "--bot", RANDOM,
        "--games", "1", "--set", "max_hands=1", "--out", "m",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    _no_escape_codes(result.stdout + result.stderr)
    assert "N=[/]" in result.stdout and "[bold]evil" in result.stdout
    assert result.stdout.lstrip().startswith("match: N=") and "match match" not in result.stdout


TOURNAMENT = """
[tournament]
name = {name}
seed = "1"
deals_per_pairing = 1
output = "out"

[rules]
set = {{ max_hands = 1 }}

[[entry]]
name = "a"
bot = {bot}

[[entry]]
name = "b"
bot = {bot}
"""


def test_tournament_with_a_markup_name_runs_and_prints_it(run_cli, tmp_path):
    name = "[/]\x1b[2Jcup[bold]"
    toml = TOURNAMENT.format(name=json.dumps(name), bot=json.dumps(RANDOM))  # JSON strings are TOML basic strings
    (tmp_path / "t.toml").write_text(toml)
    result = run_cli("tournament", "run", "t.toml", timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    _no_escape_codes(result.stdout + result.stderr)
    assert "[/]cup[bold]" in result.stdout


def test_error_messages_quote_markup_literally(run_cli, tmp_path):
    (tmp_path / "t.toml").write_text("[time]\nbank = -1\n[tournament]\nseed = '[/]'\n")
    result = run_cli("tournament", "run", "t.toml")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1


def test_replay_prints_a_hostile_record_path_literally(run_cli, tmp_path):
    """A record path is the user's text too: ``[/]`` in it gave a MarkupError, escape codes printed raw."""
    sys.path.insert(0, str(REPO / "tests" / "publish"))
    from replay_records import record

    folder = tmp_path / "[/]\x1b[2Jrecords[bold]"  # "/" separates: the folders "[" and "]\x1b[2J..."
    path = folder / "g[/i].json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record("pagat", 11)))
    result = run_cli("replay", str(path), "--html", str(folder / "[red]view.html"))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    _no_escape_codes(result.stdout + result.stderr)
    assert "replay OK: " in result.stdout and "[/]records[bold]/g[/i].json" in result.stdout
    assert "[/]records[bold]/[red]view.html" in result.stdout and (folder / "[red]view.html").is_file()


def test_replay_errors_quote_a_hostile_path_exactly(run_cli, tmp_path):
    """Error lines show the path as it is: no MarkupError, no escape codes, no stray backslashes."""
    path = tmp_path / "[/]\x1b[2Jbad[bold].json"
    path.parent.mkdir()
    path.write_text("[" * 100_000)  # nested too deeply: one of the hostile-record lines
    result = run_cli("replay", str(path))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    _no_escape_codes(result.stderr)
    assert result.stderr.count("\n") == 1
    assert "[/]bad[bold].json is not a usable record" in result.stderr and "\\[" not in result.stderr
