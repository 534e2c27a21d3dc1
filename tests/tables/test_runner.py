"""The run loop's own rules, with a scripted schedule and table player: room, store errors, coordinator bugs."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from arena.results.store import DiskFull, ResultsStore
from arena.tables.ledger import Ledger
from arena.tables.rows import GameSlot
from arena.tables.runner import Job, Runner
from arena.tables.spec import TableGame, TableResult


def game(game_id: str) -> TableGame:
    return TableGame(
        game_id=game_id, ending="target", winner=0, scores=(300, 100), hands=4, forfeit_sides=(),
        forfeit_reason=None, forfeit_detail=None, void=None, strikes=(0, 0), decisions=30, think_seconds=0.1,
        record={"game_id": game_id},
    )  # fmt: skip


class Tables:
    """A table player whose table reports its one game after a moment; counts tables playing at once."""

    local = True

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0

    def capacity(self, configured: int) -> int:
        return configured

    async def play(self, spec, on_game, stop):  # type: ignore[no-untyped-def]
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            await trio.sleep(0.02)
            on_game(game(spec))
            return TableResult("t", [], {})
        finally:
            self.now -= 1


class Script:
    """Jobs of the given sizes (tables), one game each table; what the loop tells it is kept."""

    def __init__(self, sizes: list[int], *, fail_recorded: Exception | None = None, fail_idle: Exception | None = None):
        self.sizes = sizes
        self.rooms: list[int] = []
        self.done_jobs = 0
        self.fail_recorded = fail_recorded
        self.fail_idle = fail_idle
        self.n = 0

    def next_job(self, room: int) -> Job | None:
        self.rooms.append(room)
        if not self.sizes or self.sizes[0] > room:
            return None
        size = self.sizes.pop(0)
        self.n += 1
        ids = [f"j{self.n}-t{t}" for t in range(1, size + 1)]
        return Job(f"j{self.n}", {t: ids[t - 1] for t in range(1, size + 1)},  # the "spec" is the game id here
                   {g: GameSlot(g, self.n, self.n, 1, f"c{self.n}", "a", "b", "s") for g in ids}, {})  # fmt: skip

    def recorded(self, job, table, game, recorded):  # type: ignore[no-untyped-def]
        if self.fail_recorded is not None:
            raise self.fail_recorded

    def job_done(self, job, results, stopped):  # type: ignore[no-untyped-def]
        self.done_jobs += 1

    def done(self) -> bool:
        return False

    async def idle(self) -> bool:
        if self.fail_idle is not None:
            raise self.fail_idle
        return bool(self.sizes)


def run(schedule: Script, tmp: Path, capacity: int = 2) -> Tables:
    store = ResultsStore(tmp / "results.sqlite")
    store.claim("h", "t", "r")
    tables = Tables()
    try:
        trio.run(Runner(schedule, Ledger(store, tmp, ruleset_hash="r"), tables, capacity=capacity, watch_signals=False).run)
    finally:
        store.close()
    return tables


def test_a_job_is_asked_for_within_the_room_left_and_never_overshoots(tmp_path: Path):
    """The finding (a review): room was not told, so a one-table job and a two-table one ran 3 tables at capacity 2."""
    schedule = Script([1, 2, 2, 1])
    tables = run(schedule, tmp_path)
    assert schedule.done_jobs == 4 and not schedule.sizes
    assert tables.peak <= 2
    assert 1 in schedule.rooms, "with one table playing the schedule was told one table of room is left"


def test_a_store_error_while_a_game_is_recorded_ends_the_run_with_that_error_alone(tmp_path: Path):
    """trio wraps what leaves a nursery in an ExceptionGroup: the CLI's one line needs the error itself."""
    with pytest.raises(DiskFull, match="the disk is full"):
        run(Script([1], fail_recorded=DiskFull("the disk is full: cannot write x")), tmp_path)


def test_a_store_error_between_rounds_ends_the_run_with_that_error_alone(tmp_path: Path):
    with pytest.raises(DiskFull):
        run(Script([1], fail_idle=DiskFull("the disk is full: cannot write y")), tmp_path)


def test_a_bug_in_the_schedule_is_raised_not_taken_for_a_table_fault(tmp_path: Path):
    with pytest.raises(BaseException) as caught:
        run(Script([1], fail_recorded=KeyError("a bug in the coordinator")), tmp_path)
    assert "a bug in the coordinator" in repr(caught.value)


def test_a_killed_runs_half_written_records_go_at_the_next_start_and_stored_ones_stay(tmp_path: Path):
    """The finding (CI): a SIGKILLed tournament left ``records/<game>.json.<pid>-<hex>.tmp`` behind for good."""
    records = tmp_path / "records"
    records.mkdir()
    leftover = records / "j9-t1.json.4242-0123456789ab.tmp"
    leftover.write_text('{"game_id": "j9-t1", "actions": [')  # cut off mid-write
    stored_before = records / "j0-t1.json"
    stored_before.write_text('{"game_id": "j0-t1"}\n')
    notes = records / "notes.tmp"  # not a staged record's name: not the runner's to remove
    notes.write_text("kept")
    run(Script([1]), tmp_path)
    assert not leftover.exists()
    assert stored_before.read_text() == '{"game_id": "j0-t1"}\n' and notes.read_text() == "kept"
    assert (records / "j1-t1.json").is_file(), "the run's own game was stored"
    assert not list(records.glob("*.*-*.tmp")), "nothing half-written after the run"
