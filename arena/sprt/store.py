"""An SPRT's results: the tournament results store (SQLite, WAL), one row per finished game.

The same file and schema as a tournament's, so ``arena ratings show DIR`` and
``arena ratings publish DIR`` work on a test's directory too. A game is
written once, in one transaction, as it finishes; a pair is complete when
both of its games are stored, and pairs count in the order they completed
(the order of their second game's row), so a reloaded test replays exactly
the sequence the live one saw: a run killed at any moment loses at most the
games in progress and never counts a pair twice.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import sqlite3
from pathlib import Path

from arena.ratings.pairs import PairOutcome
from arena.results.store import STORE_NAME, ResultsStore, StoredGame, StoreError
from arena.sprt.config import SprtConfig, changed_options


def open_store(config: SprtConfig, images: dict[str, str | None]) -> tuple[ResultsStore, str]:
    """The test's store, bound to its identity; returns it and the run id (new or stored).

    Raises :class:`StoreError` (one line) when the directory holds another
    test or a tournament, or when an image changed since the test started.
    """
    store = ResultsStore(config.out / STORE_NAME)
    try:
        run_id = _claim(store, config, images)
    except BaseException:
        store.close()
        raise
    return store, run_id


def stored_seed(out: Path) -> str | None:
    """The seed of the test already in ``out`` (to resume without ``--seed``), if any."""
    path = out / STORE_NAME
    if not path.is_file():
        return None
    store = ResultsStore.open_read_only(path)  # a look: nothing is written
    try:
        meta = store.meta()
    except sqlite3.Error:
        return None  # not a store it can read: opening it for the test says why
    finally:
        store.close()
    if meta.get("kind") != "sprt":
        return None
    return json.loads(meta.get("sprt", "{}")).get("--seed")


def _claim(store: ResultsStore, config: SprtConfig, images: dict[str, str | None]) -> str:
    meta = store.meta()
    identity = json.loads(json.dumps(config.identity()))
    where = config.out
    if meta:
        if meta.get("kind") != "sprt":
            raise StoreError(f"{where} holds a tournament, not an SPRT; use another --out")
        stored = json.loads(meta.get("sprt", "{}"))
        changed = changed_options(stored, identity)
        if changed:
            raise StoreError(
                f"{where} holds a different test (changed: {', '.join(changed)}); "
                f"use another --out, or the original options to resume it"
            )
        before = json.loads(meta.get("images", "{}"))
        for side, image in images.items():
            if image is not None and before.get(side) not in (None, image):
                raise StoreError(
                    f"the image of {side} changed since the test started in {where} "
                    f"({before[side][:19]} -> {image[:19]}); a test compares two fixed bots: use another --out"
                )
        return meta.get("run_id") or ""
    new, old = config.names
    run_id = secrets.token_hex(4)
    store.bind_new(
        config.identity_hash(), f"sprt: {new} vs {old}", config.rules.hash, json.dumps(config.rules.to_dict()), run_id,
        {"kind": "sprt", "sprt": json.dumps(identity), "images": json.dumps(images),
         "settings": json.dumps(config.settings.to_dict())},
    )  # fmt: skip
    return run_id


@dataclasses.dataclass
class PairBook:
    """Pairs in the making: games by pair until both tables' games are in.

    Feed it games in the order they were stored; it answers a pair's outcome
    (for NEW) when its second game arrives.
    """

    new: str
    halves: dict[int, StoredGame] = dataclasses.field(default_factory=dict)
    complete: dict[int, PairOutcome] = dataclasses.field(default_factory=dict)

    def has(self, pair: int, table: int) -> bool:
        """Whether pair ``pair``'s game at ``table`` is stored."""
        half = self.halves.get(pair)
        return pair in self.complete or (half is not None and half.table_no == table)

    def add(self, row: StoredGame) -> tuple[int, PairOutcome] | None:
        """Count ``row``; returns ``(pair, outcome)`` if it completes a pair."""
        pair = row.deal
        if self.has(pair, row.table_no):
            return None
        first = self.halves.get(pair)
        if first is None:
            self.halves[pair] = row
            return None
        del self.halves[pair]
        score = margin = 0.0
        for g in (first, row):
            own, other = (g.score0, g.score1) if g.side0 == self.new else (g.score1, g.score0)
            margin += own - other
            score += 0.5 if g.winner is None else float(g.winner == self.new)
        outcome = PairOutcome(score, margin, first.hands + row.hands)
        self.complete[pair] = outcome
        return pair, outcome


def stored_pairs(store: ResultsStore, new: str) -> tuple[PairBook, list[tuple[int, PairOutcome]]]:
    """The book of stored games and the completed pairs in completion order."""
    book = PairBook(new)
    done = []
    for row in store.games_in_write_order():
        got = book.add(row)
        if got is not None:
            done.append(got)
    return book, done
