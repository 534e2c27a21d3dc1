"""The results store: SQLite in WAL mode, one row per finished game.

A game is written once, in one transaction, when it has finished (its record
file is written first, atomically), so a run killed at any moment loses at
most the games in progress and never counts one twice.  The store remembers
the hash and the content of the tournament file and refuses to resume under
another one (a file that only grew is rebound by the tournament runner, see
:mod:`arena.tournament.growth`), and numbers each pairing once, by its two
entries' names, so entries added later never renumber the games stored.
"""

from __future__ import annotations

import dataclasses
import datetime
import secrets
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from arena.match.seeds import new_secret
from arena.publish.model import EntryTiming
from arena.storage.sqlite import Column, SQLiteStore

# The store's errors and its write transaction are the arena's one SQLite helper's (arena.storage);
# the runners import them from here too.
from arena.storage.sqlite import DiskFull, StoreError, out_of_space, storage_error, write_transaction  # noqa: F401

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    game_id TEXT PRIMARY KEY,
    pairing INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    table_no INTEGER NOT NULL,
    cluster TEXT NOT NULL,
    side0 TEXT NOT NULL,
    side1 TEXT NOT NULL,
    deal_seed TEXT NOT NULL,
    ending TEXT NOT NULL,
    winner TEXT,
    score0 INTEGER NOT NULL,
    score1 INTEGER NOT NULL,
    hands INTEGER NOT NULL,
    forfeit_entry TEXT,
    forfeit_reason TEXT,
    forfeit_detail TEXT,
    strikes0 INTEGER NOT NULL,
    strikes1 INTEGER NOT NULL,
    decisions INTEGER NOT NULL,
    think_seconds REAL NOT NULL,
    ruleset_hash TEXT NOT NULL,
    engine_version TEXT NOT NULL,
    sdk_version TEXT NOT NULL,
    image0 TEXT,
    image1 TEXT,
    record TEXT,
    finished_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS voids (
    game_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    reason TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (game_id, attempt)
);
CREATE TABLE IF NOT EXISTS forfeits (
    game_id TEXT NOT NULL,
    entry TEXT NOT NULL,
    PRIMARY KEY (game_id, entry)
);
CREATE TABLE IF NOT EXISTS side_times (
    game_id TEXT NOT NULL,
    side INTEGER NOT NULL,
    entry TEXT NOT NULL,
    decisions INTEGER NOT NULL,
    wall_s REAL NOT NULL,
    max_s REAL NOT NULL,
    cpu_s REAL,
    cpu_decisions INTEGER NOT NULL,
    ref_s REAL NOT NULL,
    lag_s REAL NOT NULL,
    timeouts INTEGER NOT NULL,
    offturn_cpu_s REAL,
    offturn_s REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (game_id, side)
);
CREATE TABLE IF NOT EXISTS pairings (
    pairing INTEGER PRIMARY KEY,
    first TEXT NOT NULL,
    second TEXT NOT NULL,
    UNIQUE (first, second)
);
CREATE TABLE IF NOT EXISTS disqualified (
    entry TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pairs (
    seq INTEGER PRIMARY KEY,
    first TEXT NOT NULL,
    second TEXT NOT NULL,
    cluster TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    reason TEXT NOT NULL DEFAULT '',
    started TEXT NOT NULL,
    finished TEXT
);
CREATE INDEX IF NOT EXISTS pairs_status ON pairs(status);
CREATE INDEX IF NOT EXISTS games_cluster ON games(cluster);
CREATE INDEX IF NOT EXISTS games_side0 ON games(side0);
CREATE INDEX IF NOT EXISTS games_side1 ON games(side1);
"""

#: A duplicate pair's states in the ``pairs`` table (:mod:`arena.tables.ledger` writes them).
PAIR_PLAYING, PAIR_DONE, PAIR_VOID, PAIR_ABANDONED = "playing", "done", "void", "abandoned"


#: The store's file in a run's directory (a tournament's output, an sprt's --out, a ladder's directory).
STORE_NAME = "results.sqlite"
#: The meta key of the run's secret (never shown to bots; in the store only).
SECRET_KEY = "deal_secret"
#: The meta key of the tournament file's content the store is bound to (canonical JSON).
CONFIG_KEY = "config"


@dataclasses.dataclass(frozen=True)
class SideTime:
    """One side's time in one game: what its bots used and what the platform added.

    ``wall_s`` is the time charged to the bots (answer received minus request
    sent, the referee's own stalls taken out), ``cpu_s`` the bots' CPU time over the
    ``cpu_decisions`` decisions where the platform could measure it (None if
    none), ``ref_s`` the referee's own CPU time for the side's decisions and
    ``lag_s`` the referee's stalls while they thought (never charged to them).
    ``offturn_cpu_s`` is the CPU its bots used while not asked (None: not measured),
    over ``offturn_s`` of wall time.
    """

    side: int
    entry: str
    decisions: int
    wall_s: float
    max_s: float
    cpu_s: float | None
    cpu_decisions: int
    ref_s: float
    lag_s: float
    timeouts: int
    offturn_cpu_s: float | None = None
    offturn_s: float = 0.0

    @classmethod
    def from_figures(cls, side: int, entry: str, figures: dict[str, Any]) -> SideTime:
        """From :func:`arena.match.timing.team_timing`'s figures of one team."""
        cpu_ms = figures.get("cpu_ms")
        offturn_cpu_ms = figures.get("offturn_cpu_ms")
        return cls(
            side=side, entry=entry, decisions=int(figures["decisions"]), wall_s=figures["ms"] / 1000,
            max_s=figures["max_ms"] / 1000, cpu_s=None if cpu_ms is None else cpu_ms / 1000,
            cpu_decisions=int(figures.get("cpu_decisions", 0)), ref_s=figures["ref_us"] / 1e6,
            lag_s=figures["lag_ms"] / 1000, timeouts=int(figures["timeouts"]),
            offturn_cpu_s=None if offturn_cpu_ms is None else offturn_cpu_ms / 1000,
            offturn_s=(figures.get("offturn_ms") or 0.0) / 1000,
        )  # fmt: skip


@dataclasses.dataclass(frozen=True)
class StoredGame:
    """One finished game as stored."""

    game_id: str
    pairing: int
    deal: int
    table_no: int
    cluster: str
    side0: str
    side1: str
    deal_seed: str
    ending: str
    winner: str | None
    score0: int
    score1: int
    hands: int
    forfeit_entry: str | None
    forfeit_reason: str | None
    forfeit_detail: str | None
    strikes0: int
    strikes1: int
    decisions: int
    think_seconds: float
    ruleset_hash: str
    engine_version: str
    sdk_version: str
    image0: str | None
    image1: str | None
    record: str | None
    finished_at: str
    forfeit_entries: tuple[str, ...] = ()
    """Every entry charged with the game's forfeit (stored in the ``forfeits`` table, one row each).

    ``forfeit_entry`` is kept for readers of the games table alone: the
    forfeiting entry when there is exactly one, else NULL.
    """
    side_times: tuple[SideTime, ...] = ()
    """Each side's time figures, written to the ``side_times`` table (empty when the record had none).

    Rows read back leave it empty: readers sum the times with :meth:`ResultsStore.entry_times`.
    """


@dataclasses.dataclass(frozen=True)
class StoredPair:
    """A duplicate pair of a run that plays pairs one at a time (the ladder): its state and attempts."""

    seq: int
    first: str
    second: str
    cluster: str
    status: str
    attempts: int
    reason: str
    started: str
    finished: str | None


_PAIR_COLUMNS = ", ".join(f.name for f in dataclasses.fields(StoredPair))

#: The columns of the games table (every StoredGame field but the forfeit list and the times, stored apart).
COLUMNS = tuple(f.name for f in dataclasses.fields(StoredGame) if f.name not in ("forfeit_entries", "side_times"))
SIDE_TIME_COLUMNS = tuple(f.name for f in dataclasses.fields(SideTime))


def now() -> str:
    """UTC time as ISO text."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


class ResultsStore(SQLiteStore):
    """The tournament's SQLite database."""

    SCHEMA = SCHEMA
    #: Off-turn CPU, stored since: an older store's rows read as not measured.
    ADDED_COLUMNS = (Column("side_times", "offturn_cpu_s", "REAL"), Column("side_times", "offturn_s", "REAL NOT NULL DEFAULT 0"))

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        super().__init__(path)  # one connection per thread (arena.storage)
        self.read_only = read_only
        try:
            if read_only:
                _ = self.db  # connects now: a missing store is told at once
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.migrate()
                self._migrate_forfeits()
        except sqlite3.Error as exc:
            if getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL":
                raise storage_error(exc, path) from None
            raise StoreError(f"cannot open the results store {path}: {exc}") from None
        except OSError as exc:
            raise storage_error(exc, path.parent) from None

    def _connect(self) -> sqlite3.Connection:
        if self.read_only:
            return _connect_read_only(self.path)
        return super()._connect()

    @classmethod
    def open_read_only(cls, path: Path) -> ResultsStore:
        """Open for reading only: no schema, no WAL switch, nothing written (a read-only directory works)."""
        return cls(path, read_only=True)

    def _migrate_forfeits(self) -> None:
        """A store written before forfeits were structural: fill the forfeits table once."""
        if self.db.execute("SELECT 1 FROM forfeits LIMIT 1").fetchone() is not None:
            return
        old = self.db.execute("SELECT game_id, forfeit_entry FROM games WHERE forfeit_entry IS NOT NULL").fetchall()
        if old:
            with self.transaction() as db:
                db.executemany(
                    "INSERT OR IGNORE INTO forfeits(game_id, entry) VALUES (?, ?)",
                    [(g, e) for g, joined in old for e in joined.split(",")],
                )

    # ------------------------------------------------------------ meta

    def claim(
        self, file_hash: str, name: str, ruleset_hash: str, ruleset_json: str = "{}", aliases: tuple[str, ...] = (),
        content: str = "",
    ) -> bool:
        """Bind the store to a tournament file (``aliases``: hashes it had before); True if it is new.

        ``content`` is the file's content the hash is of: kept (also by a store
        made before it was), so a later file can be compared with it.
        Raises :class:`StoreError` if the store belongs to another file.
        """
        row = self.db.execute("SELECT value FROM meta WHERE key='file_hash'").fetchone()
        if row is None:
            self.bind_new(file_hash, name, ruleset_hash, ruleset_json, secrets.token_hex(8), {CONFIG_KEY: content})
            return True
        if row[0] != file_hash and row[0] not in aliases:
            raise StoreError(
                f"{self.path} holds a tournament played from a different file "
                f"(hash {row[0][:12]}, this file {file_hash[:12]}); "
                f"use another output directory, or restore the original file to resume"
            )
        if row[0] != file_hash:  # claimed under an older hash of this file: bind it to today's
            self.set_meta("file_hash", file_hash)
        if self.meta().get("run_id") is None:  # a store from before run identities
            self.set_meta("run_id", secrets.token_hex(8))
        if content and not self.meta().get(CONFIG_KEY):  # a store from before contents were kept
            self.set_meta(CONFIG_KEY, content)
        return False

    def bind_new(
        self, file_hash: str, name: str, ruleset_hash: str, ruleset_json: str, run_id: str, own: Mapping[str, str]
    ) -> None:
        """Bind a new store to its run, in one transaction (a run killed here leaves an empty store): the keys
        every run's store has (``arena ratings`` reads them), a new secret, and the run's ``own`` keys."""
        common = {
            "file_hash": file_hash, "name": name, "ruleset_hash": ruleset_hash, "ruleset": ruleset_json,
            "created": now(), "run_id": run_id, SECRET_KEY: new_secret(),
        }  # fmt: skip
        with self.transaction() as db:
            db.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", [*common.items(), *own.items()])

    def bound_content(self) -> str | None:
        """The content of the tournament file the store is bound to (None: bound before contents were kept)."""
        return self.meta().get(CONFIG_KEY) or None

    def rebind(self, file_hash: str, content: str) -> None:
        """Bind the store to a grown tournament file (the caller has checked that it only grew)."""
        with self.transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                [("file_hash", file_hash), (CONFIG_KEY, content)],
            )

    # ------------------------------------------------------------ pairings

    def pairing_numbers(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, str, str]]:
        """Each pair's number and its registered order (first, second), registering new pairs.

        A pair is known by its two names in either order; a new one gets the
        next number, in the order given (so a new store numbers them as the
        schedule lists them, as stores did before pairings were registered).
        The number never changes: game ids stay put when entries are added.
        """
        found: dict[tuple[str, str], tuple[int, str, str]] = {}
        with self.transaction() as db:
            known = {frozenset((a, b)): (n, a, b) for n, a, b in db.execute("SELECT pairing, first, second FROM pairings")}
            following = max((n for n, _, _ in known.values()), default=-1) + 1
            for a, b in pairs:
                key = frozenset((a, b))
                if key not in known:
                    db.execute("INSERT INTO pairings(pairing, first, second) VALUES (?, ?, ?)", (following, a, b))
                    known[key] = (following, a, b)
                    following += 1
                found[(a, b)] = known[key]
        return found

    @property
    def secret(self) -> str | None:
        """The run's secret that keys its deal and bot seeds (:mod:`arena.match.seeds`).

        None for a store made before secrets: its deals stay those of its seed
        alone, so a resumed run completes the pairs it started.
        """
        return self.meta().get(SECRET_KEY)

    @property
    def run_id(self) -> str:
        """This output directory's run identity (created once, with the store)."""
        return self.meta()["run_id"]

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def meta(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, value FROM meta").fetchall())

    # ------------------------------------------------------------ games

    def record_game(self, row: StoredGame, *, in_place: Callable[[], None] | None = None) -> bool:
        """Store a finished game; False if it was already stored (a replay of the same game is ignored).

        ``in_place`` puts the game's record file in place: called inside the
        row's transaction, once the row is known to be new, so of two writers
        of one game (another process on the same store) the one whose row is
        stored is the one whose record is in place; if it raises, no row is stored.
        """
        names = ", ".join(COLUMNS)
        marks = ", ".join("?" for _ in COLUMNS)
        with self.transaction() as db:
            cursor = db.execute(
                f"INSERT OR IGNORE INTO games ({names}) VALUES ({marks})",
                [getattr(row, name) for name in COLUMNS],
            )
            if cursor.rowcount == 0:
                return False
            db.executemany(
                "INSERT OR IGNORE INTO forfeits(game_id, entry) VALUES (?, ?)",
                [(row.game_id, entry) for entry in row.forfeit_entries],
            )
            db.executemany(
                f"INSERT OR IGNORE INTO side_times (game_id, {', '.join(SIDE_TIME_COLUMNS)}) "
                f"VALUES (?{', ?' * len(SIDE_TIME_COLUMNS)})",
                [(row.game_id, *(getattr(t, c) for c in SIDE_TIME_COLUMNS)) for t in row.side_times],
            )
            if in_place is not None:
                in_place()
        return True

    def entry_times(self) -> dict[str, EntryTiming]:
        """Each entry's time figures summed over its stored games (entries without any are absent)."""
        sums = (
            "COUNT(*), SUM(decisions), SUM(wall_s), MAX(max_s), COALESCE(SUM(cpu_s), 0), "
            "SUM(cpu_decisions), SUM(ref_s), SUM(lag_s), SUM(timeouts)"
        )
        # A store opened read-only may predate the off-turn columns, or times altogether.
        for offturn in (", SUM(offturn_cpu_s), COUNT(offturn_cpu_s)", ""):
            try:
                rows = self.db.execute(f"SELECT entry, {sums}{offturn} FROM side_times GROUP BY entry").fetchall()
            except sqlite3.OperationalError:
                continue
            return {r[0]: EntryTiming(*r[1:]) for r in rows}
        return {}

    def record_void(self, game_id: str, reason: str) -> int:
        """Note a void attempt; returns how many there have been for this game."""
        with self.transaction() as db:
            (count,) = db.execute("SELECT COUNT(*) FROM voids WHERE game_id=?", (game_id,)).fetchone()
            db.execute(
                "INSERT INTO voids(game_id, attempt, reason, at) VALUES (?, ?, ?, ?)",
                (game_id, count + 1, reason[:500], now()),
            )
        return count + 1

    def void_attempts(self) -> dict[str, int]:
        return dict(self.db.execute("SELECT game_id, COUNT(*) FROM voids GROUP BY game_id").fetchall())

    def has_game(self, game_id: str) -> bool:
        """Whether ``game_id`` is stored (one index lookup, whatever the number of games)."""
        return self.db.execute("SELECT 1 FROM games WHERE game_id=?", (game_id,)).fetchone() is not None

    def game(self, game_id: str) -> StoredGame | None:
        """One stored game, or None."""
        rows = self._rows("WHERE game_id=?", (game_id,))
        return rows[0] if rows else None

    # ------------------------------------------------------------ duplicate pairs

    def add_pair(self, first: str, second: str, *, cluster: str = "{seq}", seq: int | None = None) -> int:
        """Write a pair as ``playing`` (its next number, or ``seq``); returns its number.

        ``cluster`` names the pair's games' cluster, formatted with its ``seq``.
        """
        with self.transaction() as db:
            if seq is None:
                (last,) = db.execute("SELECT COALESCE(MAX(seq), 0) FROM pairs").fetchone()
                seq = max(int(last), int(self.meta_value(db, "pairs_floor") or 0)) + 1
            db.execute(
                "INSERT INTO pairs(seq, first, second, cluster, status, started) VALUES (?, ?, ?, ?, ?, ?)",
                (seq, first, second, cluster.format(seq=seq), PAIR_PLAYING, now()),
            )
        return seq

    def ensure_pair(self, seq: int, first: str, second: str, *, cluster: str) -> StoredPair:
        """Pair ``seq`` as stored, written as ``playing`` first if it is new (a run that numbers its own pairs)."""
        with self.transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO pairs(seq, first, second, cluster, status, started) VALUES (?, ?, ?, ?, ?, ?)",
                (seq, first, second, cluster.format(seq=seq), PAIR_PLAYING, now()),
            )
        pair = self.pair(seq)
        assert pair is not None
        return pair

    @staticmethod
    def meta_value(db: sqlite3.Connection, key: str) -> str | None:
        row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def pair(self, seq: int) -> StoredPair | None:
        row = self.db.execute(f"SELECT {_PAIR_COLUMNS} FROM pairs WHERE seq=?", (seq,)).fetchone()
        return None if row is None else StoredPair(*row)

    def pairs(self, status: str | None = None) -> list[StoredPair]:
        """The pairs (``status``: only those), oldest first."""
        where, args = ("WHERE status=?", (status,)) if status is not None else ("", ())
        return [StoredPair(*r) for r in self.db.execute(f"SELECT {_PAIR_COLUMNS} FROM pairs {where} ORDER BY seq", args)]

    def update_pair(self, seq: int, *, status: str | None = None, attempts_delta: int = 0, reason: str | None = None) -> None:
        """Change a pair in one write (its status, its attempts, its reason)."""
        sets, args = ["attempts = MAX(0, attempts + ?)"], [attempts_delta]
        if status is not None:
            sets += ["status=?", "finished=?"]
            args += [status, None if status == PAIR_PLAYING else now()]
        if reason is not None:
            sets.append("reason=?")
            args.append(reason[:500])
        with self.transaction() as db:
            db.execute(f"UPDATE pairs SET {', '.join(sets)} WHERE seq=?", (*args, seq))

    def void_clusters(self) -> set[str]:
        """The clusters of pairs given up (void) or abandoned: their stored half is out of the ratings."""
        found = self.db.execute("SELECT cluster FROM pairs WHERE status IN (?, ?)", (PAIR_VOID, PAIR_ABANDONED))
        return {r[0] for r in found}

    def finished_ids(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT game_id FROM games")}

    def games(self) -> list[StoredGame]:
        return self._rows("", ())

    def games_in_write_order(self) -> list[StoredGame]:
        """Every finished game in the order it was stored (``arena sprt`` replays its pairs so)."""
        return self._rows("", (), order="rowid")

    def games_of(self, entry: str) -> list[StoredGame]:
        """The finished games ``entry`` took part in."""
        return self._rows("WHERE side0=? OR side1=?", (entry, entry))

    def _rows(self, where: str, args: tuple[str, ...], order: str = "game_id") -> list[StoredGame]:
        """The games matching ``where``, each with the entries charged with its forfeit.

        A store written before forfeits were structural has no ``forfeits``
        table, and opened read-only it cannot be migrated: its comma-joined
        ``forfeit_entry`` column is then the only record of who forfeited.
        """
        cursor = self.db.execute(f"SELECT {', '.join(COLUMNS)} FROM games {where} ORDER BY {order}", args)
        rows = cursor.fetchall()
        charged: dict[str, list[str]] = {}
        if self._has_table("forfeits"):
            forfeits = (
                f"SELECT forfeits.game_id, entry FROM forfeits JOIN games USING (game_id) {where} ORDER BY entry"
            )
            for game_id, entry in self.db.execute(forfeits, args):
                charged.setdefault(game_id, []).append(entry)
        else:
            joined_at = COLUMNS.index("forfeit_entry")
            for row in rows:
                if row[joined_at]:  # sorted as the table's rows are, so both layouts read the same
                    charged[row[0]] = sorted({e for e in row[joined_at].split(",") if e})
        return [_game_row(row, tuple(charged.get(row[0], ()))) for row in rows]

    def _has_table(self, name: str) -> bool:
        """Whether the store has table ``name`` (older stores lack the ones added since)."""
        found = self.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone()
        return found is not None

    # ------------------------------------------------------------ disqualification

    def disqualify(self, entry: str, reason: str) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO disqualified(entry, reason, at) VALUES (?, ?, ?)",
                (entry, reason, now()),
            )

    def disqualified(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT entry, reason FROM disqualified").fetchall())

    def integrity(self) -> str:
        """SQLite's own integrity check (``ok`` when sound)."""
        return str(self.db.execute("PRAGMA integrity_check").fetchone()[0])


def _game_row(row: tuple[Any, ...], charged: tuple[str, ...]) -> StoredGame:
    """A games-table row as a :class:`StoredGame` charged to ``charged``.

    ``forfeit_entry`` is made what :class:`StoredGame` documents (the one entry, or
    None when several forfeited): the first stores, and the stores migrated from
    them, hold a comma-joined list there that no reader should take for a name.
    """
    game = StoredGame(*row, forfeit_entries=charged)
    if charged:
        game = dataclasses.replace(game, forfeit_entry=charged[0] if len(charged) == 1 else None)
    return game


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that never writes: ``mode=ro``; ``immutable`` where SQLite cannot even make its WAL index.

    A WAL database in a read-only directory cannot get its ``-shm`` file, and
    nobody can be writing there, so reading it as immutable is safe.
    """
    if not path.is_file():
        raise StoreError(f"no results store at {path}")
    uri = path.resolve().as_uri()
    try:
        db = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
        db.execute("SELECT COUNT(*) FROM meta").fetchone()
        return db
    except sqlite3.OperationalError:
        return sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None, check_same_thread=False)


def row_values(row: StoredGame) -> dict[str, Any]:
    """A row as a dict (for JSON)."""
    return dataclasses.asdict(row)
