"""Results stores written by older versions are still read, read-only, by every reader.

The first stores (before forfeits were structural, commit c22ace8) have no
``forfeits`` table: a forfeit's entries sit comma-joined in ``games.forfeit_entry``.
Nor have they ``side_times`` or a ``run_id``.  Opened read-only nothing can
migrate them, so the readers must understand the old layout as it is.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.results.store import ResultsStore
from tournament_support import cannot_write_prefix

#: The schema as the first tournament store wrote it (``git show 92245e1:arena/tournament/store.py``).
OLD_SCHEMA = """
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
CREATE TABLE IF NOT EXISTS disqualified (
    entry TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    at TEXT NOT NULL
);
"""

# (game_id, side0, side1, ending, winner, score0, score1, forfeit_entry, forfeit_reason, strikes0, strikes1),
# written in this order (the rowid order ``games_in_write_order`` returns).
GAMES = [
    ("p000-d000-t1", "alpha", "beta", "target", "alpha", 510, 220, None, None, 0, 0),
    ("p000-d000-t2", "beta", "alpha", "target", "alpha", 180, 500, None, None, 0, 0),
    ("p000-d001-t1", "alpha", "beta", "target", "alpha", 530, 300, None, None, 0, 0),
    ("p000-d001-t2", "beta", "alpha", "target", "beta", 505, 410, None, None, 0, 0),
    ("p001-d000-t1", "alpha", "gamma", "forfeit:crash", "alpha", 120, 40, "gamma", "crash", 0, 0),
    # Both sides crashed: the old store joined the two names with a comma.
    ("p001-d000-t2", "gamma", "alpha", "forfeit:crash", None, 60, 90, "gamma,alpha", "crash", 0, 0),
    ("p002-d000-t1", "beta", "gamma", "max_hands", "beta", 300, 250, None, None, 0, 2),
    ("p002-d000-t2", "gamma", "beta", "forfeit:disqualified", "beta", 0, 0, "gamma", "disqualified", 0, 0),
]
#: What the standings must say of those games: W/L/D per entry and the fault table.
EXPECTED_WLD = {"alpha": (4, 1, 1), "beta": (3, 3, 0), "gamma": (0, 3, 1)}
EXPECTED_FAULTS = {"alpha": {"crash": 1}, "gamma": {"crash": 2, "disqualified": 1, "strikes": 2}}


def write_old_store(path: Path) -> None:
    """A results store exactly as the first version wrote it (WAL, old schema, comma-joined forfeits)."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(OLD_SCHEMA)
    db.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?)",
        [("file_hash", "f" * 64), ("name", "old tournament"), ("ruleset_hash", "0123456789abcdef"),
         ("ruleset", json.dumps({"preset": "pagat", "players": 4})), ("created", "2026-01-01T00:00:00+00:00")],
    )  # fmt: skip
    for gid, side0, side1, ending, winner, s0, s1, f_entry, f_reason, k0, k1 in GAMES:
        pairing, deal, table = (int(part[1:]) for part in gid.split("-"))
        db.execute(
            "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (gid, pairing, deal, table, gid.rsplit("-", 1)[0], side0, side1, f"seed-{pairing}-{deal}", ending,
             winner, s0, s1, 0 if ending == "forfeit:disqualified" else 3, f_entry, f_reason,
             None if f_reason is None else f"{f_reason} detail", k0, k1, 40, 1.5, "0123456789abcdef", "0.1.0",
             "0.1.0", None, None, None, "2026-01-01T00:00:00+00:00"),
        )  # fmt: skip
    db.execute("INSERT INTO disqualified VALUES ('gamma', 'forfeited 3 of 4 games', '2026-01-01T00:00:00+00:00')")
    db.close()


@pytest.fixture
def frozen_old_store() -> Iterator[tuple[Path, Path]]:
    """An old store in a directory nobody may write, and a writable site directory beside it.

    Both live in /tmp (not pytest's private tmp_path) so that the unprivileged
    user the CLI runs as when the tests run as root can reach them.
    """
    frozen = Path(tempfile.mkdtemp(prefix="arena-old-store-"))
    site = Path(tempfile.mkdtemp(prefix="arena-old-site-"))
    try:
        write_old_store(frozen / "results.sqlite")
        (frozen / "results.sqlite").chmod(0o444)
        frozen.chmod(0o555)
        site.chmod(0o777)
        yield frozen, site
    finally:
        frozen.chmod(0o755)
        shutil.rmtree(frozen)
        shutil.rmtree(site)


def ratings_cli(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``arena ratings ARGS`` by a process that cannot write the store (root writes anywhere: no privileges)."""
    return subprocess.run(
        [*cannot_write_prefix(), sys.executable, "-m", "arena", "ratings", *args], cwd=site, capture_output=True, text=True,
        timeout=120, env={**os.environ, "COLUMNS": "200", "HOME": str(site)},
    )  # fmt: skip


def test_an_old_store_reads_read_only_through_the_store(frozen_old_store):
    frozen, _ = frozen_old_store
    store = ResultsStore.open_read_only(frozen / "results.sqlite")
    try:
        by_id = {r.game_id: r for r in store.games()}
        assert by_id["p001-d000-t2"].forfeit_entries == ("alpha", "gamma"), "the comma-joined pair, split"
        assert by_id["p001-d000-t1"].forfeit_entries == ("gamma",)
        assert by_id["p000-d000-t1"].forfeit_entries == ()
        assert [r.game_id for r in store.games_in_write_order()] == [g[0] for g in GAMES]
        assert {r.game_id: r.forfeit_entries for r in store.games_of("gamma") if r.forfeit_entries} == {
            "p001-d000-t1": ("gamma",), "p001-d000-t2": ("alpha", "gamma"), "p002-d000-t2": ("gamma",),
        }  # fmt: skip
        assert store.entry_times() == {} and store.disqualified() == {"gamma": "forfeited 3 of 4 games"}
    finally:
        store.close()
    # (Nothing-written is checked by the CLI test: in-process the tests may be root, who writes anywhere.)


def test_ratings_show_and_publish_read_an_old_read_only_store(frozen_old_store):
    frozen, site = frozen_old_store
    shown = ratings_cli(site, "show", str(frozen), "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert doc["title"] == "old tournament" and doc["games"] == len(GAMES)
    assert [e["name"] for e in doc["entries"]] == ["alpha", "beta", "gamma"], "best first"
    assert {e["name"]: (e["wins"], e["losses"], e["draws"]) for e in doc["entries"]} == EXPECTED_WLD
    assert doc["faults"] == EXPECTED_FAULTS, "a comma-joined forfeit is charged to each of its entries"
    assert doc["disqualified"] == ["gamma"]
    assert all(e["timing"] is None for e in doc["entries"]), "no times stored before side_times"

    table = ratings_cli(site, "show", str(frozen))
    assert table.returncode == 0, table.stderr
    assert "alpha" in table.stdout and "gamma,alpha" not in table.stdout

    published = ratings_cli(site, "publish", str(frozen), "--out", str(site / "out"), "--json")
    assert published.returncode == 0, published.stderr
    written = json.loads((site / "out" / "ratings.json").read_text())
    assert written["faults"] == EXPECTED_FAULTS
    assert [e["name"] for e in written["entries"]] == ["alpha", "beta", "gamma"]
    csv_lines = (site / "out" / "results.csv").read_text().strip().splitlines()
    assert len(csv_lines) == 1 + len(GAMES)
    assert (site / "out" / "index.html").is_file() and (site / "out" / "games.html").is_file()
    assert sorted(p.name for p in frozen.iterdir()) == ["results.sqlite"], "nothing written next to the store"
