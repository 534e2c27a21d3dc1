"""Why a practice table cannot be opened (arena.ladder.games.practice): each reason one clear line, nothing opened.

The refusals on a real server are in test_ladder_play.py (off, the daily
quota); here every reason, on the manager itself with a real practice.sqlite.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from arena.ladder.config import PlaySettings
from arena.ladder.games.practice import Practice, PracticeRefused, PracticeTables
from arena.ladder.games.practice_store import PracticeStore


@dataclasses.dataclass
class Config:
    directory: Path
    play: PlaySettings


def tables(tmp_path: Path, stopping: bool = False, **play: Any) -> PracticeTables:
    tmp_path.mkdir(exist_ok=True)
    store = PracticeStore(tmp_path / "practice.sqlite")
    return PracticeTables(Config(tmp_path, PlaySettings(**play)), store, "ladder-test", lambda: stopping)


def test_each_refusal_says_why(tmp_path: Path):
    assert "turned off" in tables(tmp_path / "a", enabled=False).refusal("alpha")  # type: ignore[operator]
    assert "stopping" in tables(tmp_path / "b", stopping=True).refusal("alpha")  # type: ignore[operator]
    full = tables(tmp_path / "c", tables=1)
    full.running["k"] = Practice(1, "beta", None)  # type: ignore[arg-type]
    assert full.refusal("alpha") == "All 1 practice tables are in use; try again in a few minutes."
    quota = tables(tmp_path / "d", per_team_per_day=1)
    assert quota.refusal("alpha") is None
    assert quota.store.add("alpha", ["person", "x@1", "x@1", "x@1"], 1) is not None
    assert "opened its 1 practice table for today" in quota.refusal("alpha")  # type: ignore[operator]
    assert quota.refusal("beta") is None  # per team
    assert quota.store.add("alpha", ["person"], 1) is None  # the store checks again, in its lock


def test_a_refused_table_is_not_opened_nor_counted(tmp_path: Path):
    off = tables(tmp_path, enabled=False)

    async def attempt() -> None:
        await off.open("alpha", 0, [None, None, None, None])

    with pytest.raises(PracticeRefused, match="turned off"):
        asyncio.run(attempt())
    assert off.store.opened_today("alpha") == 0 and not off.running


def test_a_table_left_playing_by_a_killed_server_is_marked_stopped(tmp_path: Path):
    store = PracticeStore(tmp_path / "practice.sqlite")
    table_id = store.add("alpha", ["person", "x@1", "x@1", "x@1"], 5)
    store.close()
    again = PracticeStore(tmp_path / "practice.sqlite")
    game = again.game(table_id)  # type: ignore[arg-type]
    assert game is not None and game.status == "stopped"
    assert again.opened_today("alpha") == 1  # it still counts for the day
