"""The pair adapter (two table specs on the same deals, swapped seats, played at the same time) and the
runner's handling of platform failures."""

from __future__ import annotations

import dataclasses
import pickle
import sqlite3
from pathlib import Path

import pytest
import trio
from arena_sdk.engine import resolve_ruleset
from typer.testing import CliRunner

from arena.cli import app
from arena.match import TimeControl
from arena.ratings.sprt import Settings
from arena.referee.botspec import parse_bot_spec
from arena.sprt import SprtConfig, run_sprt, runner
from arena.tables import pairs as play
from arena.sprt.config import deal_seed
from arena.results.store import ResultsStore
from arena.tables.ledger import Ledger
from arena.tables.rows import GameSlot
from arena.tables.runner import Job, Runner
from arena.tables.spec import TableGame, TableResult

NEW = parse_bot_spec("cmd:new-bot")
OLD = parse_bot_spec("cmd:old-bot")
IMAGE = "sha256:" + "a" * 64


class FakeTables:
    """A table player (arena.tables.players.TablePlayer) whose tables are a test's function."""

    local = True

    def __init__(self, play_one):
        self.play_one = play_one

    def capacity(self, configured: int) -> int:
        return configured

    async def play(self, spec, on_game, stop):
        return await self.play_one(spec, on_game, stop)


def batch(players_preset: str = "pagat") -> play.PairBatch:
    return play.PairBatch(
        batch_id="sprt-x/d000004", pairs=(4, 5), deal_seeds=("s4", "s5"),
        game_ids=(("d000004-t1", "d000005-t1"), ("d000004-t2", "d000005-t2")),
        new=NEW, old=OLD, names=("new", "old"), rules=resolve_ruleset(players_preset, {}),
        time_control=TimeControl(), log_dir=Path("logs"), run_id="x", images=(IMAGE, None),
    )  # fmt: skip


class OneBatch:
    """A schedule of the run loop that plays one batch's two tables and keeps what it is told."""

    def __init__(self, b: play.PairBatch, player, on_game=lambda table, game: None) -> None:
        self.b, self.player, self.on_game = b, player, on_game
        self.given = False
        self.results: dict[int, TableResult] = {}

    def next_job(self, room):
        if self.given:
            return None
        self.given = True
        slots = {gid: GameSlot(gid, 0, 0, t, "c", "new", "old", "s") for t, ids in enumerate(self.b.game_ids, 1) for gid in ids}
        local = self.player.local
        return Job("b", {n: self.b.table(n, local=local) for n in (1, 2)}, slots, {},
                   {n: self.b.table_log_dir(n) for n in (1, 2)})  # fmt: skip

    def recorded(self, job, table, game, recorded):
        self.on_game(table, game)

    def job_done(self, job, results, stopped):
        self.results = dict(results)

    def done(self):
        return bool(self.results)

    async def idle(self):
        return False


def play_batch(b: play.PairBatch, player, tmp: Path, on_game=lambda table, game: None) -> dict[int, TableResult]:
    """Play ``b``'s two tables through the run loop (its ledger writes into ``tmp``)."""
    store = ResultsStore(tmp / "results.sqlite")
    store.claim("h", "t", "r")
    schedule = OneBatch(b, player, on_game)
    trio.run(Runner(schedule, Ledger(store, tmp, ruleset_hash="r"), player, capacity=2, watch_signals=False).run)
    store.close()
    return schedule.results


def played(game_id: str) -> TableGame:
    return TableGame(
        game_id=game_id, ending="target", winner=0, scores=(500, 100), hands=5, forfeit_sides=(),
        forfeit_reason=None, forfeit_detail=None, void=None, strikes=(0, 0), decisions=40,
        think_seconds=0.1, record={"game_id": game_id},
    )  # fmt: skip


def test_tables_swap_the_partnerships_on_the_same_deals():
    b = batch()
    t1, t2 = b.table(1), b.table(2)
    assert [s.entry for s in t1.seats] == ["new", "old", "new", "old"]
    assert [s.entry for s in t2.seats] == ["old", "new", "old", "new"]
    assert [s.target for s in t1.seats] == ["new-bot", "old-bot", "new-bot", "old-bot"]
    assert t1.seats[0].image_id == IMAGE and t1.seats[1].image_id is None, "image bots start by the pinned ID"
    assert t1.deal_seeds == t2.deal_seeds == ("s4", "s5")
    assert t1.game_ids == ("d000004-t1", "d000005-t1") and t2.game_ids == (
        "d000004-t2",
        "d000005-t2",
    )
    assert t1.match_id != t2.match_id and t1.log_dir != t2.log_dir, "separate bots, separate logs"
    assert t1.run_id == t2.run_id == "x", "containers carry the test's run id"
    assert Path(t1.log_dir or "").is_absolute(), "the table process may run anywhere"
    assert pickle.loads(pickle.dumps(t1)) == t1, "a plain spec: it crosses to the table process"


def test_two_player_tables_swap_the_players():
    b = batch("two-player")
    assert [s.entry for s in b.table(1).seats] == ["new", "old"]
    assert [s.entry for s in b.table(2).seats] == ["old", "new"]


def test_both_tables_play_at_the_same_time(tmp_path):
    events: list[tuple[str, str]] = []

    async def fake_table(spec, on_game, stop):
        events.append(("start", spec.match_id))
        await trio.sleep(0.05)
        on_game(played(spec.game_ids[0]))
        events.append(("end", spec.match_id))
        return TableResult(spec.table_id, [], {})

    got: list[tuple[int, str]] = []
    play_batch(batch(), FakeTables(fake_table), tmp_path, lambda t, g: got.append((t, g.game_id)))
    assert [e[0] for e in events] == ["start", "start", "end", "end"], events
    assert sorted(got) == [(1, "d000004-t1"), (2, "d000004-t2")]


def test_a_failed_table_lets_the_other_finish_and_says_why(tmp_path):
    finished = []

    async def fake_table(spec, on_game, stop):
        if spec.match_id.endswith("-t1"):
            raise RuntimeError("docker went away")
        await trio.sleep(0.05)
        finished.append(spec.match_id)
        return TableResult(spec.table_id, [], {})

    results = play_batch(batch(), FakeTables(fake_table), tmp_path)
    one, two = results[1], results[2]
    assert one.error == "RuntimeError: docker went away" and two.error is None
    assert finished == ["sprt-x/d000004-t2"]


def test_an_error_of_the_coordinator_is_not_taken_for_the_tables(tmp_path):
    async def fake_table(spec, on_game, stop):
        on_game(played(spec.game_ids[0]))
        return TableResult(spec.table_id, [], {})

    def broken(table, game):
        raise KeyError("a bug in the coordinator")

    with pytest.raises(BaseException) as caught:  # trio wraps it in an exception group
        play_batch(batch(), FakeTables(fake_table), tmp_path, broken)
    assert "a bug in the coordinator" in repr(caught.value)


def test_deal_seeds_depend_on_seed_and_pair_only():
    assert deal_seed("s", 0) == deal_seed("s", 0) != deal_seed("s", 1) != deal_seed("t", 1)


def test_a_platform_that_keeps_failing_stops_the_run_with_exit_1(monkeypatch, tmp_path):
    starts = []

    async def broken(spec, on_game, stop):
        starts.append((spec.match_id[-2:], spec.game_ids))
        return TableResult(spec.table_id, [], {}, error="RuntimeError: cannot start a table")

    # In place of the table processes, here and in the command below.
    monkeypatch.setattr(runner, "LocalTables", lambda: FakeTables(broken))
    config = SprtConfig(
        new=NEW, old=OLD, settings=Settings(0, 50), rules=resolve_ruleset("pagat", {}),
        time_control=TimeControl(), seed="s", out=tmp_path / "out", max_pairs=2, pairs_per_table=2,
    )  # fmt: skip
    report = run_sprt(config)
    assert report.result == "failed" and "could not be played in 3 attempts" in (
        report.failure or ""
    )
    assert "cannot start a table" in (report.failure or "")
    assert sorted(starts) == sorted(
        [("t1", ("d000000-t1", "d000001-t1")), ("t2", ("d000000-t2", "d000001-t2"))] * 3
    ), "each pair is started again (both tables), at most three times"
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as db:
        voided = db.execute("SELECT game_id, COUNT(*) FROM voids GROUP BY game_id ORDER BY game_id").fetchall()
    assert voided == [("d000000-t1", 3), ("d000000-t2", 3)], "a failed table voids the game it was to play"

    result = CliRunner().invoke(app, [
        "sprt", "--bot", "cmd:new-bot", "--bot", "cmd:old-bot", "--elo0", "0", "--elo1", "50",
        "--max-pairs", "2", "--seed", "s2", "--out", str(tmp_path / "cli"),
    ])  # fmt: skip
    assert result.exit_code == 1, result.stdout
    assert "could not be played" in result.stdout


def test_a_moved_image_tag_is_refused_on_resume(tmp_path):
    from arena.sprt.store import open_store
    from arena.results.store import StoreError

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


def test_a_store_that_fails_while_voiding_a_dead_table_stops_with_a_store_error(monkeypatch, tmp_path):
    """The void of a table that died is written like any game: a broken store is one StoreError
    (the command's one line), not a traceback out of the task group."""
    from arena.results.store import ResultsStore, StoreError

    async def broken(spec, on_game, stop):
        return TableResult(spec.table_id, [], {}, error="RuntimeError: the table process died")

    def no_void(self, game_id, reason):
        raise StoreError("cannot write the results: disk I/O error")

    monkeypatch.setattr(runner, "LocalTables", lambda: FakeTables(broken))
    monkeypatch.setattr(ResultsStore, "record_void", no_void)
    config = SprtConfig(
        new=NEW, old=OLD, settings=Settings(0, 50), rules=resolve_ruleset("pagat", {}),
        time_control=TimeControl(), seed="s", out=tmp_path / "out", max_pairs=2, pairs_per_table=2,
    )  # fmt: skip
    with pytest.raises(StoreError, match="disk I/O error"):
        run_sprt(config)


def test_a_void_reason_prints_literally_on_one_line(monkeypatch, tmp_path):
    """A void's reason can hold an image's or a bot's text: escapes and line breaks must not reach the terminal."""
    fake = "boom\x1b[2J\nH1 accepted [bold]x[/]"

    async def broken(spec, on_game, stop):
        return TableResult(spec.table_id, [], {}, error=fake)

    monkeypatch.setattr(runner, "LocalTables", lambda: FakeTables(broken))
    result = CliRunner().invoke(app, [
        "sprt", "--bot", "cmd:new-bot", "--bot", "cmd:old-bot", "--elo0", "0", "--elo1", "50",
        "--max-pairs", "1", "--seed", "s3", "--out", str(tmp_path / "cli"),
    ])  # fmt: skip
    assert "\x1b" not in result.stdout
    voids = [line for line in result.stdout.splitlines() if line.startswith("void ")]
    assert voids and all("H1 accepted [bold]x[/]" in line for line in voids), result.stdout
    assert not any(line.startswith("H1 accepted") for line in result.stdout.splitlines())


def test_a_remote_tables_logs_come_back_to_the_coordinators_log_directory(tmp_path):
    # A table on a Dask worker runs on another machine: it must not be told a
    # coordinator path to write to (it would write on the worker, where no one
    # reads them: the ladder's teams saw "(no log)"); its logs come back with
    # its result and land where a local table's would.
    seen_dirs = []

    async def remote_table(spec, on_game, stop):
        seen_dirs.append(spec.log_dir)
        return TableResult(spec.table_id, [], {"seat0.log": b"hello from " + spec.table_id.encode(), "../x.log": b"y"})

    remote = FakeTables(remote_table)
    remote.local = False
    b = dataclasses.replace(batch(), log_dir=tmp_path / "logs")
    play_batch(b, remote, tmp_path)
    assert seen_dirs == [None, None]
    for number in (1, 2):
        directory = b.table_log_dir(number)
        assert (directory / "seat0.log").read_bytes() == b"hello from " + b.table(number).table_id.encode()
        assert (directory / "x.log").exists(), "a worker's file name is a name, not a path"
    assert not (tmp_path / "logs" / "x.log").exists()
