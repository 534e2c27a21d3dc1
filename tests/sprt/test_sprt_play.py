"""The pair adapter (two tables at the same time, swapped seats) and the runner's handling of platform failures."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from arena_sdk.engine import resolve_ruleset
from typer.testing import CliRunner

from arena.cli import app
from arena.match import TimeControl
from arena.ratings.sprt import Settings
from arena.referee.botspec import parse_bot_spec
from arena.sprt import SprtConfig, play, run_sprt, runner
from arena.sprt.config import deal_seed

NEW = parse_bot_spec("cmd:new-bot")
OLD = parse_bot_spec("cmd:old-bot")


def batch(players_preset: str = "pagat") -> play.PairBatch:
    return play.PairBatch(
        batch_id="sprt-x/d000004", pairs=(4, 5), deal_seeds=("s4", "s5"),
        game_ids=(("d000004-t1", "d000005-t1"), ("d000004-t2", "d000005-t2")),
        new=NEW, old=OLD, rules=resolve_ruleset(players_preset, {}), time_control=TimeControl(),
        log_dir=Path("logs"),
    )  # fmt: skip


def test_tables_swap_the_partnerships_on_the_same_deals():
    b = batch()
    t1, t2 = b.table(1), b.table(2)
    assert t1.seats == (NEW, OLD, NEW, OLD) and t2.seats == (OLD, NEW, OLD, NEW)
    assert t1.deal_seeds == t2.deal_seeds == ("s4", "s5")
    assert t1.game_ids == ("d000004-t1", "d000005-t1") and t2.game_ids == (
        "d000004-t2",
        "d000005-t2",
    )
    assert t1.match_id != t2.match_id and t1.log_dir != t2.log_dir, "separate bots, separate logs"


def test_two_player_tables_swap_the_players():
    b = batch("two-player")
    assert b.table(1).seats == (NEW, OLD) and b.table(2).seats == (OLD, NEW)


def test_both_tables_play_at_the_same_time(monkeypatch):
    events: list[tuple[str, str]] = []

    async def fake_table(task, on_game, client=None):
        events.append(("start", task.match_id))
        await asyncio.sleep(0.05)
        events.append(("end", task.match_id))

    monkeypatch.setattr(play, "play_table", fake_table)
    asyncio.run(play.play_pairs(batch(), lambda table, outcome: None))
    assert [e[0] for e in events] == ["start", "start", "end", "end"], events


def test_a_failed_table_lets_the_other_finish_then_raises(monkeypatch):
    finished = []

    async def fake_table(task, on_game, client=None):
        if task.match_id.endswith("-t1"):
            raise RuntimeError("docker went away")
        await asyncio.sleep(0.05)
        finished.append(task.match_id)

    monkeypatch.setattr(play, "play_table", fake_table)
    with pytest.raises(RuntimeError, match="docker went away"):
        asyncio.run(play.play_pairs(batch(), lambda table, outcome: None))
    assert finished == ["sprt-x/d000004-t2"]


def test_deal_seeds_depend_on_seed_and_pair_only():
    assert deal_seed("s", 0) == deal_seed("s", 0) != deal_seed("s", 1) != deal_seed("t", 1)


def test_a_platform_that_keeps_failing_stops_the_run_with_exit_1(monkeypatch, tmp_path):
    starts = []

    async def broken(batch, on_game, client=None):
        starts.append(batch.pairs)
        raise RuntimeError("cannot start a table")

    monkeypatch.setattr(runner, "play_pairs", broken)
    config = SprtConfig(
        new=NEW, old=OLD, settings=Settings(0, 50), rules=resolve_ruleset("pagat", {}),
        time_control=TimeControl(), seed="s", out=tmp_path / "out", max_pairs=2, pairs_per_table=2,
    )  # fmt: skip
    report = run_sprt(config)
    assert report.result == "failed" and "could not be played in 3 attempts" in (
        report.failure or ""
    )
    assert "cannot start a table" in (report.failure or "")
    assert starts == [(0, 1)] * 3, "each pair is started again, at most three times"

    result = CliRunner().invoke(app, [
        "sprt", "--bot", "cmd:new-bot", "--bot", "cmd:old-bot", "--elo0", "0", "--elo1", "50",
        "--max-pairs", "2", "--seed", "s2", "--out", str(tmp_path / "cli"),
    ])  # fmt: skip
    assert result.exit_code == 1, result.stdout
    assert "could not be played" in result.stdout


def test_a_moved_image_tag_is_refused_on_resume(tmp_path):
    from arena.sprt.store import open_store
    from arena.tournament.store import StoreError

    config = SprtConfig(
        new=NEW, old=OLD, settings=Settings(0, 50), rules=resolve_ruleset("pagat", {}),
        time_control=TimeControl(), seed="s", out=tmp_path / "out",
    )  # fmt: skip
    new, old = config.names
    store, run_id = open_store(config, {new: "sha256:" + "a" * 64, old: None})
    store.close()
    store, again = open_store(config, {new: "sha256:" + "a" * 64, old: None})
    store.close()
    assert again == run_id, "the same test keeps its run id"
    with pytest.raises(StoreError, match=f"the image of {new} changed"):
        open_store(config, {new: "sha256:" + "b" * 64, old: None})
