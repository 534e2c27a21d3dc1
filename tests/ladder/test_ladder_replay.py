"""A pair cut after its first table was stored plays only its missing table, and the stored game never changes.

The finding (a red team, from outside, on a real ladder): kill -9 after the
first table of a pair was stored, restart: the pair was replayed whole, the
stored game's row still said 178:80 while its record, rewritten by the replay,
said 74:199.  Here the state a kill leaves is made directly (a pair written as
playing, its first game stored) and a real server under the real Docker engine
resumes it.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from docker_support import BASE_IMAGE, engine_or_skip
from helpers import bot_image
from ladder_support import Ladder, served

from arena.ladder.config import load_ladder_config
from arena.ladder.versions.lifecycle import BUILDING, QUEUED, VALIDATING
from arena.ladder.service import open_results
from arena.ladder.games.ids import CLUSTER_FORMAT
from arena.ladder.store import LadderStore
from arena.tables.ledger import Ledger
from arena.tables.rows import GameSlot
from arena.tables.spec import TableGame

pytestmark = [pytest.mark.docker, pytest.mark.timeout(900)]

RANDOM_BOT = "from arena_sdk import run\nfrom arena_sdk.testing import RandomBot\n\nrun(RandomBot())\n"


@pytest.fixture
def image(tmp_path: Path) -> Iterator[str]:
    client = engine_or_skip("the ladder replay test")
    source = tmp_path / "bot"
    source.mkdir()
    with bot_image(client, source, RANDOM_BOT, f"arena-test-replay:{uuid.uuid4().hex[:8]}", BASE_IMAGE) as tag:
        yield str(client.images.get(tag).id)
    client.close()


def activate(store: LadderStore, team: str, image_id: str) -> str:
    version = store.add_version(team, "", quota=10)
    for status in (QUEUED, BUILDING):
        store.transition(version.id, status)
    store.transition(version.id, VALIDATING, image_id=image_id)
    return store.activate(version, {}).entry


def test_a_pair_cut_after_its_first_table_replays_only_the_missing_one(tmp_path: Path, image: str):
    ladder = Ladder(tmp_path / "lad", "ladder.suspend_after=0")
    config = load_ladder_config(ladder.directory)
    store = LadderStore(config.ladder_path)
    first, second = activate(store, "alpha", image), activate(store, "beta", image)
    results = open_results(config, store.meta()["ladder_id"])
    store.close()
    # What a kill -9 leaves: the pair written as playing, one start counted, table 1's game stored.
    ledger = Ledger(results, config.directory, ruleset_hash=config.rules.hash)
    seq = ledger.plan_pair(first, second, cluster=CLUSTER_FORMAT)
    ledger.begin_attempt(seq)
    stored = TableGame(
        game_id=f"L{seq:07d}-t1", ending="max_hands", winner=0, scores=(178, 80), hands=1, forfeit_sides=(),
        forfeit_reason=None, forfeit_detail=None, void=None, strikes=(0, 0), decisions=17, think_seconds=0.1,
        record={"game_id": f"L{seq:07d}-t1", "marker": "the game the standings count"},
    )  # fmt: skip
    slot = GameSlot(stored.game_id, seq, seq, 1, f"L{seq:07d}", first, second, "seed")
    assert ledger.record(slot, stored, {first: image, second: image}).row is not None
    record = config.directory / "records" / f"L{seq:07d}-t1.json"
    before = record.read_bytes()
    results.close()

    client = engine_or_skip("the ladder replay test")
    with served(ladder, client):
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            with sqlite3.connect(config.results_path) as db:
                status = db.execute("SELECT status FROM pairs WHERE seq=?", (seq,)).fetchone()[0]
            if status != "playing":
                break
            assert ladder.process is not None and ladder.process.poll() is None, ladder.log.read_text()[-3000:]
            time.sleep(1)
        assert status == "done", ladder.log.read_text()[-3000:]

    assert record.read_bytes() == before, "the stored game's record was rewritten by a replay"
    with sqlite3.connect(config.results_path) as db:
        rows = dict(db.execute("SELECT game_id, score0 || ':' || score1 FROM games WHERE cluster=?", (f"L{seq:07d}",)))
        attempts = db.execute("SELECT attempts FROM pairs WHERE seq=?", (seq,)).fetchone()[0]
    assert rows[f"L{seq:07d}-t1"] == "178:80", "the stored row changed"
    assert f"L{seq:07d}-t2" in rows, "the missing table was played"
    assert (config.directory / "records" / f"L{seq:07d}-t2.json").is_file()
    assert attempts == 2, "the attempt before the kill and the one that finished it, both stored"
    logs = config.directory / "logs"
    assert (logs / f"L{seq:07d}-t2").is_dir() and not (logs / f"L{seq:07d}-t1").exists(), (
        "only table 2 was played again: table 1's bots never started"
    )
    assert "table 2 again" in ladder.log.read_text(), "the console says which table is played again"
