"""A ladder's site with no Docker: a real ladder directory filled directly, served by a real uvicorn.

``arena ladder init`` makes the directory; teams, versions, games, records,
history rows and validation records are then written through the stores'
own APIs (what the loop and the builder write), so the site reads exactly
what it reads under ``arena ladder serve``.  :func:`served` runs the app
(behind :func:`arena.ladder.site.app.wrap`) in a uvicorn thread on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ladder_support import cli, token_of

from arena.ladder.config import LadderConfig, load_ladder_config
from arena.ladder.common.paths import record_path, validation_dir
from arena.ladder.games.standings import standings
from arena.ladder.games.ids import game_ids
from arena.ladder.games.state import LadderState
from arena.ladder.store import LadderStore
from arena.ladder.versions.lifecycle import ACTIVE, QUEUED
from arena.ladder.versions.store import Version
from arena.results.store import ResultsStore, StoredGame


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def record_json(game_id: str, seed: int, side_names: tuple[str, str], notes: bool = True) -> dict[str, Any]:
    """A real record (random legal play, pagat, two hands) whose every decision carries its seat's note."""
    from arena_sdk.engine import Decision, GameState, record_from_state, resolve_ruleset, seat_name

    rules = resolve_ruleset("pagat", {"max_hands": "2"})
    state = GameState.new(rules, seed)
    rng = random.Random(seed)
    while not state.is_over:
        action: Any = False if state.decision is Decision.BLIND_NIL else rng.choice(state.legal_actions())
        state.apply(action)
    record = record_from_state(state, game_id=game_id)
    n = state.players
    record["seats"] = {seat_name(n, s): {"name": "RandomBot", "version": "1"} for s in range(n)}
    if notes:
        for hand in record["hands"]:
            for act in hand["actions"]:
                act["note"] = f"note of {side_names[0 if act['seat'] in 'NSA' else 1]} at {act['seat']}"
    return record


class SyntheticLadder:
    """A ladder directory with teams and stored games, written directly through the stores."""

    def __init__(self, directory: Path, *settings: str) -> None:
        made = cli("ladder", "init", str(directory), "--name", "Site test", *settings)
        assert made.returncode == 0, made.stderr
        self.admin = token_of(made.stdout)
        self.directory = directory
        self.config: LadderConfig = load_ladder_config(directory)
        self.store = LadderStore(self.config.ladder_path)
        self.results = ResultsStore(self.config.results_path)
        self.tokens: dict[str, str] = {}
        self.seq = 0

    def close(self) -> None:
        self.store.close()
        self.results.close()

    def add_team(self, name: str) -> str:
        self.tokens[name] = self.store.add_team(name)
        return self.tokens[name]

    def add_version(self, team: str, note: str = "", *, active: bool = True) -> Version:
        version = self.store.add_version(team, note, 1000)
        self.store.set_status(version.id, QUEUED)
        if active:  # the way a build takes it (the lifecycle allows no shortcut)
            self.store.set_status(version.id, "building")
            self.store.set_status(version.id, "validating")
            self.store.activate(version, {})
        found = self.store.version(version.id)
        assert found is not None and (found.status == ACTIVE or not active)
        return found

    def add_pair(self, a: str, b: str, *, rng: random.Random, records: bool = False,
                 at: datetime.datetime | None = None) -> tuple[str, str]:  # fmt: skip
        """One duplicate pair between entries ``a`` and ``b`` (both tables), as the loop stores it."""
        self.seq += 1
        seq = self.seq
        stamp = (at or datetime.datetime.now(datetime.UTC)).isoformat(timespec="seconds")
        ids = game_ids(seq)
        for table, game_id in enumerate(ids, start=1):
            side0, side1 = (a, b) if table == 1 else (b, a)
            score0, score1 = rng.randint(-200, 500), rng.randint(-200, 500)
            winner = side0 if score0 > score1 else side1 if score1 > score0 else None
            self.results.record_game(StoredGame(
                game_id=game_id, pairing=seq, deal=seq, table_no=table, cluster=f"L{seq:07d}", side0=side0,
                side1=side1, deal_seed=f"{seq:016x}", ending="score", winner=winner, score0=score0, score1=score1,
                hands=rng.randint(8, 14), forfeit_entry=None, forfeit_reason=None, forfeit_detail=None, strikes0=0,
                strikes1=0, decisions=rng.randint(300, 600), think_seconds=rng.uniform(1, 30), ruleset_hash="x",
                engine_version="1", sdk_version="1", image0=None, image1=None, record=None, finished_at=stamp,
            ))  # fmt: skip
            if records:
                self.write_record(game_id, (side0, side1), seed=seq * 2 + table)
        return ids

    def write_record(self, game_id: str, sides: tuple[str, str], seed: int = 1) -> Path:
        path = record_path(self.directory, game_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record_json(game_id, seed, sides)))
        return path

    def add_validation_record(self, version: Version, name: str, content: str) -> Path:
        """A validation game's record where the builder writes it (``DIR/validation/v<id>/NAME``)."""
        folder = validation_dir(self.directory, version.id)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(content)
        return folder / name

    def add_history(self, rows: list[tuple[str, str, int, float, float, float]]) -> None:
        """History rows (entry, at, pairs, elo, low, high), written as the loop writes them."""
        with sqlite3.connect(self.config.ladder_path) as db:
            db.executemany("INSERT INTO history(version, at, pairs, elo, low, high) VALUES (?, ?, ?, ?, ?, ?)", rows)

    def state(self) -> LadderState:
        """The standings the loop would show now (fitted from the stored games)."""
        active = [v.entry for v in self.store.active_versions()]
        return LadderState(tuple(standings(self.results.games(), active)))


@contextlib.contextmanager
def served(config: Any, state: Callable[[], LadderState]) -> Iterator[str]:
    """The site of ``config`` on a real uvicorn on 127.0.0.1 (a thread); yields its URL."""
    import uvicorn

    from arena.ladder.site.app import create_app, wrap

    app = create_app(config, state)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(wrap(app, config), host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="off"))  # fmt: skip
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the site did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        app.state.site.close()
