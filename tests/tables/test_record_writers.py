"""Game records and their rows under writers that meet: every row's record is that row's game, and no
temporary file is left, even when two processes report the same game at the same instant or a write fails."""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
from pathlib import Path

import pytest

from arena.match import output
from arena.results.store import ResultsStore, StoreError
from arena.tables.ledger import Ledger
from arena.tables.rows import GameSlot, store_played
from arena.tables.spec import TableGame

GAMES = 40


def played(game_id: str, writer: int) -> TableGame:
    """A game as one writer reports it: its scores (and so its record) are the writer's own."""
    scores = (100 + writer, 200 + writer)
    record = {"game_id": game_id, "writer": writer, "scores": list(scores), "padding": "x" * 20_000 * (1 + writer)}
    return TableGame(
        game_id=game_id, ending="target", winner=1, scores=scores, hands=3, forfeit_sides=(), forfeit_reason=None,
        forfeit_detail=None, void=None, strikes=(0, 0), decisions=30, think_seconds=0.1, record=record,
    )  # fmt: skip


def slot(game_id: str) -> GameSlot:
    return GameSlot(game_id, 0, 0, 1, "c", "a", "b", "seed")


def report_every_game(out: str, writer: int, barrier: multiprocessing.synchronize.Barrier, errors: multiprocessing.Queue) -> None:
    """One writer (a process of its own, with its own connection): each game reported at the same instant as the other."""
    store = ResultsStore(Path(out) / "results.sqlite")
    ledger = Ledger(store, Path(out), ruleset_hash="r")
    try:
        for n in range(GAMES):
            game_id = f"g{n:03d}"
            barrier.wait(timeout=120)
            try:
                ledger.record(slot(game_id), played(game_id, writer), {})
            except Exception as exc:  # noqa: BLE001 - reported to the test
                errors.put(f"writer {writer}, {game_id}: {type(exc).__name__}: {exc}")
    finally:
        store.close()


def test_two_writers_of_the_same_games_leave_each_row_with_its_own_record(tmp_path: Path):
    store = ResultsStore(tmp_path / "results.sqlite")
    store.claim("h", "t", "r")
    store.close()
    ctx = multiprocessing.get_context("spawn")
    barrier, errors = ctx.Barrier(2), ctx.Queue()
    writers = [ctx.Process(target=report_every_game, args=(str(tmp_path), w, barrier, errors)) for w in (0, 1)]
    for process in writers:
        process.start()
    for process in writers:
        process.join(300)
        assert process.exitcode == 0
    failed = []
    while not errors.empty():
        failed.append(errors.get())
    assert failed == [], failed

    store = ResultsStore(tmp_path / "results.sqlite")
    try:
        rows = store.games()
    finally:
        store.close()
    assert len(rows) == GAMES
    unequal = []
    for row in rows:
        record = json.loads((tmp_path / str(row.record)).read_text())
        if record["scores"] != [row.score0, row.score1]:
            unequal.append(row.game_id)
    assert unequal == [], f"{len(unequal)} of {GAMES} records are not their row's game"
    assert sorted(p.name for p in (tmp_path / "records").iterdir()) == [f"g{n:03d}.json" for n in range(GAMES)]


def test_a_record_that_cannot_be_written_leaves_nothing_and_keeps_the_one_stored(tmp_path: Path, monkeypatch):
    store = ResultsStore(tmp_path / "results.sqlite")
    store.claim("h", "t", "r")
    try:
        store_played(store, tmp_path, slot("g000"), played("g000", 0), ruleset_hash="r", images={})
        stored = (tmp_path / "records" / "g000.json").read_bytes()

        def full(fd: int) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(output.os, "fsync", full)
        with pytest.raises(StoreError, match="disk is full"):
            store_played(store, tmp_path, slot("g001"), played("g001", 1), ruleset_hash="r", images={})
        with pytest.raises(OSError):
            output.write_record(tmp_path / "records", played("g000", 1), durable=True)  # type: ignore[arg-type]
        assert sorted(p.name for p in (tmp_path / "records").iterdir()) == ["g000.json"], "no temporary file left"
        assert (tmp_path / "records" / "g000.json").read_bytes() == stored
        assert not store.has_game("g001"), "no row without its record"
    finally:
        store.close()


def test_a_row_is_not_stored_when_its_record_cannot_be_put_in_place(tmp_path: Path, monkeypatch):
    """The record goes in place inside the row's transaction: a failure there stores neither."""
    store = ResultsStore(tmp_path / "results.sqlite")
    store.claim("h", "t", "r")

    def refused(src: object, dst: object) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(output.os, "replace", refused)
    try:
        with pytest.raises(StoreError):
            store_played(store, tmp_path, slot("g000"), played("g000", 0), ruleset_hash="r", images={})
        assert not store.has_game("g000")
        assert list((tmp_path / "records").iterdir()) == []
    finally:
        store.close()
