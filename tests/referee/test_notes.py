"""Notes on decisions (issue 26): a bot's ``self.note(...)`` reaches the record beside its decision.

Through the real referee and the real SDK client over a Unix socket: notes
land at the decisions they were written in, control characters are dropped
and the length is capped, a seat over its game's budget loses only its own
notes (one ``notes_dropped`` event), and published replay pages leave notes
out unless the organiser asks.
"""

from __future__ import annotations

from pathlib import Path

from referee_support import all_actions, check_record, events, host, make_spec, python_launcher

from arena.publish.steps import game_steps
from arena.referee import session

NOTE_BOT = '''
from arena_sdk import run
from arena_sdk.testing import RandomBot


class Noting(RandomBot):
    name = "noting"

    def bid(self, view):
        self.note("bid at hand %d" % view.hand_number)
        self.note("second thought")
        return super().bid(view)

    def play(self, view):
        self.note("\\x1b[2Jplay " + "x" * 500 + "\\u202e")
        return super().play(view)


run(Noting())
'''


def _write(tmp: Path) -> Path:
    path = tmp / "noting.py"
    path.write_text(NOTE_BOT)
    return path


def test_notes_land_beside_their_decisions_cleaned_and_capped(unix_address: str, bot_dir: Path, log_dir: Path):
    bot = _write(bot_dir)
    quiet = bot_dir / "quiet.py"
    quiet.write_text("from arena_sdk import run\nfrom arena_sdk.testing import RandomBot\nrun(RandomBot())\n")
    seats = [python_launcher(bot), python_launcher(quiet)] * 2  # N and S note, E and W do not
    hosted = host(unix_address, make_spec(preset="pagat", max_hands=1), seats, log_dir, 90)
    [game] = hosted.outcome.games
    record = check_record(game.record)  # the replay reader takes the note field
    mine = [a for a in all_actions(record) if a["seat"] in ("N", "S")]
    theirs = [a for a in all_actions(record) if a["seat"] in ("E", "W")]
    assert all("note" not in a for a in theirs), "a bot that writes no note has none"
    bids = [a for a in mine if a["kind"] == "bid"]
    plays = [a for a in mine if a["kind"] == "play"]
    assert bids and all(a["note"] == "bid at hand 1; second thought" for a in bids)
    assert plays and all(a["note"].startswith("[2Jplay xxx") and 290 <= len(a["note"]) <= 300 for a in plays)
    assert all("\x1b" not in a["note"] and "\u202e" not in a["note"] for a in plays)
    # The viewer's data has them only when asked for.
    steps = game_steps(record)
    assert all("note" not in (s.get("a") or {}) for s in steps["steps"])
    noted = game_steps(record, with_notes=True)
    assert any((s.get("a") or {}).get("note") == "bid at hand 1; second thought" for s in noted["steps"])


def test_a_flood_of_notes_costs_only_its_own_seat(unix_address: str, bot_dir: Path, log_dir: Path, monkeypatch):
    monkeypatch.setattr(session, "NOTES_PER_GAME", 3)
    hosted = host(unix_address, make_spec(preset="two-player", max_hands=1), [python_launcher(_write(bot_dir)), python_launcher(_write(bot_dir))], log_dir, 90)
    [game] = hosted.outcome.games
    record = check_record(game.record)
    for seat in ("A", "B"):
        noted = [a for a in all_actions(record) if a["seat"] == seat and "note" in a]
        assert len(noted) == 3, "the first notes of the game are kept, the rest dropped"
    dropped = events(record, "notes_dropped")
    assert sorted(e["seat"] for e in dropped) == ["A", "B"], "counted once per seat"
    assert game.ending in ("target", "floor", "max_hands"), "notes never cost a game"
