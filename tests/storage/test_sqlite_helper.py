"""The one SQLite helper (arena.storage): older files made current in one place, writes all or nothing.

Real SQLite files: a ``ladder.sqlite`` and a ``results.sqlite`` as the first
releases wrote them (their tables without the columns added since) are opened
by today's stores, which add the columns (and fill them once) where the
helper's migration says, and a second opening changes nothing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.ladder.store import LadderStore
from arena.results.store import ResultsStore
from arena.storage.sqlite import Column, SQLiteStore, StoreError

#: ladder.sqlite as the first ladders wrote it (no roster, no upload flag, no reason).
FIRST_LADDER = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE teams (name TEXT PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, disabled INTEGER NOT NULL DEFAULT 0,
                    created TEXT NOT NULL);
CREATE TABLE versions (id INTEGER PRIMARY KEY AUTOINCREMENT, team TEXT NOT NULL, number INTEGER NOT NULL,
    note TEXT NOT NULL DEFAULT '', status TEXT NOT NULL, image_id TEXT, build_log TEXT NOT NULL DEFAULT '',
    validation_log TEXT NOT NULL DEFAULT '', attempts INTEGER NOT NULL DEFAULT 0, created TEXT NOT NULL,
    activated TEXT, retired TEXT, final_elo REAL, final_low REAL, final_high REAL, final_pairs INTEGER,
    UNIQUE (team, number));
CREATE TABLE sessions (token_hash TEXT PRIMARY KEY, team TEXT, admin INTEGER NOT NULL DEFAULT 0, expires TEXT NOT NULL);
INSERT INTO teams VALUES ('alpha', 'h', 0, '2025-01-01T00:00:00+00:00');
INSERT INTO versions (team, number, status, created) VALUES ('alpha', 1, 'active', '2025-01-01T00:00:00+00:00');
INSERT INTO versions (team, number, status, created) VALUES ('alpha', 2, 'uploading', '2025-01-02T00:00:00+00:00');
"""


def columns(path: Path, table: str) -> list[str]:
    with sqlite3.connect(path) as db:
        return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def test_a_first_ladder_store_gains_every_column_added_since_and_its_fill_runs_once(tmp_path: Path):
    path = tmp_path / "ladder.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(FIRST_LADDER)
    store = LadderStore(path)
    try:
        assert {"reason", "uploaded", "member"} <= set(columns(path, "versions"))
        assert {"pending", "invite_hash"} <= set(columns(path, "teams"))
        assert "member_id" in columns(path, "sessions")
        assert {"history", "pairs", "members"} <= {
            r[0] for r in store.db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        # Every version past its upload counts against the day's quota; the one still uploading does not.
        assert [(v.number, v.uploaded) for v in store.versions()] == [(1, 1), (2, 0)]
        store.transition(store.versions()[0].id, "active", uploaded=0)  # a later change the fill must not redo
    finally:
        store.close()
    again = LadderStore(path)
    try:
        assert [(v.number, v.uploaded) for v in again.versions()] == [(1, 0), (2, 0)], "the fill ran once only"
        assert columns(path, "versions").count("uploaded") == 1
    finally:
        again.close()


def test_a_results_store_from_before_off_turn_cpu_gains_its_columns(tmp_path: Path):
    path = tmp_path / "results.sqlite"
    ResultsStore(path).close()
    with sqlite3.connect(path) as db:  # as a release before off-turn CPU wrote it
        db.execute("ALTER TABLE side_times DROP COLUMN offturn_cpu_s")
        db.execute("ALTER TABLE side_times DROP COLUMN offturn_s")
    assert "offturn_s" not in columns(path, "side_times")
    ResultsStore(path).close()
    assert {"offturn_cpu_s", "offturn_s"} <= set(columns(path, "side_times"))


class Base(SQLiteStore):
    SCHEMA = "CREATE TABLE IF NOT EXISTS base (id INTEGER PRIMARY KEY);"


class Part(Base):
    SCHEMA = "CREATE TABLE IF NOT EXISTS part (id INTEGER PRIMARY KEY, base INTEGER NOT NULL);"
    ADDED_COLUMNS = (Column("base", "label", "TEXT NOT NULL DEFAULT ''", "UPDATE base SET label='old'"),)


def test_a_store_has_the_tables_of_every_class_it_derives_from_and_writes_all_or_nothing(tmp_path: Path):
    path = tmp_path / "parts.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE base (id INTEGER PRIMARY KEY)")
        db.execute("INSERT INTO base (id) VALUES (1)")
    store = Part(path)
    store.migrate()
    try:
        assert store.db.execute("SELECT id, label FROM base").fetchall() == [(1, "old")]
        with pytest.raises(ZeroDivisionError), store.transaction() as db:
            db.execute("INSERT INTO part (base) VALUES (1)")
            raise ZeroDivisionError  # anything that goes wrong inside: nothing of it is kept
        assert store.db.execute("SELECT COUNT(*) FROM part").fetchone() == (0,)
        with pytest.raises(StoreError, match="cannot write"), store.transaction() as db:
            db.execute("INSERT INTO nowhere (x) VALUES (1)")  # a write SQLite cannot make: the one error, naming the file
    finally:
        store.close()
