"""A person's statistics across games, kept on this machine (docs/play.md, "Your statistics").

One JSON file (by default ``$XDG_DATA_HOME/arena/play-stats.json``, else
``~/.local/share/arena/play-stats.json``) holds, per person (``arena play
--player NAME``), one entry per hand played (the bid, the tricks, the side's
bags and points, a nil's outcome, whether it was assisted, the swing against
Hard once the comparison has run) and one per game (won or not).  Entries are
keyed by game id and hand, so a hand counted twice is counted once; every
update re-reads the file under a lock and replaces it whole, so two tables
writing at once lose nothing.  A file that cannot be read is never
overwritten: :class:`StatsError` says why, and the table keeps no statistics.
"""

from __future__ import annotations

import contextlib
import fcntl
import getpass
import json
import os
import statistics
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from arena.errors import ArenaError

STATS_FORMAT = "arena-play-stats"
STATS_VERSION = 1
#: The longest person's name kept.
NAME_CHARS = 40


class StatsError(ArenaError):
    """The statistics file cannot be read or written; the message says which and why."""


def default_stats_path() -> Path:
    """Where the statistics are kept unless ``--stats-file`` says otherwise."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "arena" / "play-stats.json"


def check_person(name: str) -> str:
    """A person's name as kept: 1 to 40 printable characters; ``StatsError`` otherwise."""
    name = name.strip()
    if not 1 <= len(name) <= NAME_CHARS or not name.isprintable():
        raise StatsError(f"--player takes 1 to {NAME_CHARS} printable characters, got {name[:NAME_CHARS]!r}")
    return name


def default_person() -> str:
    """Whose statistics a table keeps unless ``--player`` says: the login name."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = ""
    return (name.strip() or "player")[:NAME_CHARS]


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{share * 100:.0f}%"


def stats_lines(summary: dict[str, Any]) -> list[str]:
    """A person's statistics (:func:`summarise`) as lines of text."""
    s = summary
    swing = "-" if s["swing_vs_hard"] is None else f"{s['swing_vs_hard']:+.1f} points a hand ({s['swing_hands']} hands)"
    return [
        f"Statistics of {s['person']}: {s['games']} games ({s['won']} won), {s['hands']} hands",
        f"bids: {_percent(s['bid_accuracy'])} exact ({s['exact_bids']} of {s['bids']}), "
        f"off by {'-' if s['off_by'] is None else s['off_by']} tricks on average; "
        f"contracts made {_percent(s['contracts_made'])}",
        f"nil: {s['nils_made']} made of {s['nils']} ({_percent(s['nil_success'])})",
        f"bags per hand: {'-' if s['bags_per_hand'] is None else s['bags_per_hand']}",
        f"swing against Hard (positive: Hard did better): {swing}",
        f"hands with a hint or an undo: {s['assisted_hands']}",
    ]


def _empty() -> dict[str, Any]:
    return {"format": STATS_FORMAT, "version": STATS_VERSION, "people": {}}


def read_stats(path: Path) -> dict[str, Any]:
    """The file's content (an empty book if there is no file); ``StatsError`` if it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return _empty()
    except OSError as exc:
        raise StatsError(f"the statistics file {path} cannot be read: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise StatsError(f"the statistics file {path} is not JSON ({exc}): move it away or fix it") from None
    if not isinstance(data, dict) or data.get("format") != STATS_FORMAT or not isinstance(data.get("people"), dict):
        raise StatsError(f"the statistics file {path} is not an arena play statistics file")
    if data.get("version") != STATS_VERSION:
        raise StatsError(f"the statistics file {path} has version {data.get('version')!r}; this arena reads {STATS_VERSION}")
    return data


class PlayStats:
    """One person's statistics in one file."""

    def __init__(self, path: Path, person: str) -> None:
        self.path = path
        self.person = check_person(person)
        self._mine = self._person(read_stats(path))  # read now: a bad file is said at the start

    def _person(self, data: dict[str, Any]) -> dict[str, Any]:
        mine = data["people"].setdefault(self.person, {})
        mine.setdefault("hands", {})
        mine.setdefault("games", {})
        return mine

    @contextlib.contextmanager
    def _updating(self) -> Iterator[dict[str, Any]]:
        """The person's entries, read again under the file's lock; written back whole after."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = read_stats(self.path)
            mine = self._person(data)
            yield mine
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".play-stats-")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump(data, out, indent=1, sort_keys=True)
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            self._mine = mine

    def add_hand(self, game_id: str, number: int, entry: dict[str, Any]) -> None:
        """A hand the person played (its swing against Hard, if known already, is kept)."""
        key = f"{game_id}#{number}"
        with self._updating() as mine:
            old = mine["hands"].get(key, {})
            mine["hands"][key] = {**entry, "swing_hard": old.get("swing_hard", entry.get("swing_hard"))}

    def add_swing(self, game_id: str, number: int, swing: int) -> None:
        """Hard's comparison of a hand finished: its swing (the bot's margin less the person's)."""
        key = f"{game_id}#{number}"
        with self._updating() as mine:
            mine["hands"].setdefault(key, {})["swing_hard"] = swing

    def add_game(self, game_id: str, entry: dict[str, Any]) -> None:
        """A game the person finished: ``{"won": bool|None, "ending": ..., "assisted": bool}``."""
        with self._updating() as mine:
            mine["games"][game_id] = entry

    def summary(self) -> dict[str, Any]:
        """The person's statistics, as the page and ``arena play --stats`` show them."""
        return summarise(self.person, self._mine)


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def summarise(person: str, mine: dict[str, Any]) -> dict[str, Any]:
    """Totals over a person's entries (see :class:`PlayStats`)."""
    hands = [h for h in mine.get("hands", {}).values() if "bid" in h]
    games = list(mine.get("games", {}).values())
    bids = [h for h in hands if h["bid"] > 0]
    nils = [h for h in hands if h["bid"] == 0]
    swings = [h["swing_hard"] for h in mine.get("hands", {}).values() if h.get("swing_hard") is not None]
    return {
        "person": person,
        "games": len(games),
        "won": sum(1 for g in games if g.get("won") is True),
        "hands": len(hands),
        "bids": len(bids),
        "exact_bids": sum(1 for h in bids if h["tricks"] == h["bid"]),
        "bid_accuracy": _share(sum(1 for h in bids if h["tricks"] == h["bid"]), len(bids)),
        "off_by": round(statistics.fmean(abs(h["tricks"] - h["bid"]) for h in bids), 2) if bids else None,
        "contracts_made": _share(sum(1 for h in hands if h.get("made")), len(hands)),
        "nils": len(nils),
        "nils_made": sum(1 for h in nils if h["tricks"] == 0),
        "nil_success": _share(sum(1 for h in nils if h["tricks"] == 0), len(nils)),
        "bags_per_hand": round(statistics.fmean(h.get("bags", 0) for h in hands), 2) if hands else None,
        "swing_hands": len(swings),
        "swing_vs_hard": round(statistics.fmean(swings), 1) if swings else None,
        "assisted_hands": sum(1 for h in hands if h.get("assisted")),
    }


__all__ = [
    "PlayStats", "StatsError", "check_person", "default_person", "default_stats_path", "read_stats", "stats_lines",
    "summarise",
]  # fmt: skip
