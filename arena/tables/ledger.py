"""The ledger: the one writer of a run's results, and the one stored-game guard.

Tournaments, ``arena sprt`` and the ladder all hand every game a table reports
to :meth:`Ledger.record`, on their coordinator's task, and nowhere else:

- a game already stored is a *late copy* (a table replayed elsewhere, a pair
  played again after a restart): it is dropped **before anything is written**,
  so a stored game's record and row never change once written;
- a void is noted (its attempts count) and nothing else;
- a finished game's record is written durably under a temporary name of its
  own and put in place inside its row's transaction, so a row never points
  to a missing record, nor to another writer's copy of the game.

Runs that play duplicate pairs (the ladder, ``arena sprt``) also keep their
pairs here (:meth:`plan_pair`, or :meth:`numbered_pair` for a run that numbers
them itself): a pair is written as ``playing`` before it plays, each start is an attempt stored with it (so attempts survive a
restart, and a kill -9 counts), a pair out of attempts is ``void`` with its
reason and its stored half leaves the ratings (:meth:`void_clusters`), and a
pair played again plays only its missing tables (:meth:`missing_tables`).

Store errors are not caught here: a write the disk cannot take raises
:class:`~arena.results.store.StoreError` (``DiskFull``), and the runner stops
with that one line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

from arena.results.store import (
    PAIR_ABANDONED,
    PAIR_DONE,
    PAIR_PLAYING,
    PAIR_VOID,
    ResultsStore,
    StoredGame,
    StoredPair,
)
from arena.match.output import remove_staged_leftovers
from arena.tables.rows import GameSlot, store_played
from arena.tables.spec import TableGame

#: How often a pair is started before it is given up as void (a platform that keeps failing it).
MAX_PAIR_ATTEMPTS = 3


@dataclasses.dataclass(frozen=True)
class Recorded:
    """What :meth:`Ledger.record` did with a reported game."""

    row: StoredGame | None = None
    """The row stored (None: a void, or a late copy that was dropped)."""
    void: str | None = None
    """The void's ending, when the game was void."""
    late: bool = False
    """The game was stored already: nothing was written."""


class Ledger:
    """The only writer of a run's results store (see the module docstring)."""

    def __init__(
        self,
        store: ResultsStore,
        output: Path,
        *,
        ruleset_hash: str,
        max_pair_attempts: int = MAX_PAIR_ATTEMPTS,
    ) -> None:
        self.store = store
        self.output = output
        self.ruleset_hash = ruleset_hash
        self.max_pair_attempts = max_pair_attempts

    # ------------------------------------------------------------ games

    def remove_leftovers(self) -> int:
        """Remove the half-written records a killed runner left (``records/<name>.<pid>-<hex>.tmp``); how many.

        The directory's one runner calls it at its start, holding the
        directory's lock (:mod:`arena.tables.runlock`): no other writer is live.
        """
        return remove_staged_leftovers(self.output / "records")

    def stored(self, game_id: str) -> bool:
        """Whether ``game_id`` is stored (an index lookup)."""
        return self.store.has_game(game_id)

    def record(self, slot: GameSlot, played: TableGame, images: Mapping[str, str | None]) -> Recorded:
        """Store one reported game (the one stored-game guard: see the module docstring)."""
        if self.store.has_game(played.game_id):
            return Recorded(late=True)
        if played.void is not None:
            self.store.record_void(played.game_id, played.void)
            return Recorded(void=played.ending)
        row = store_played(self.store, self.output, slot, played, ruleset_hash=self.ruleset_hash, images=images)
        return Recorded(row=row, late=row is None)

    def void(self, game_id: str, reason: str) -> int:
        """Note a void attempt of a game no table reported (its table failed); returns the attempts so far."""
        return self.store.record_void(game_id, reason)

    # ------------------------------------------------------------ pairs

    def plan_pair(self, first: str, second: str, *, cluster: str = "{seq}") -> int:
        """Write a new pair as ``playing`` before it plays; returns its number."""
        return self.store.add_pair(first, second, cluster=cluster)

    def numbered_pair(self, seq: int, first: str, second: str, *, cluster: str = "{seq}") -> StoredPair:
        """Pair ``seq`` of a run that numbers its own pairs (``arena sprt``'s deal number): written as
        ``playing`` before it first plays, as stored afterwards (its status and attempts kept)."""
        return self.store.ensure_pair(seq, first, second, cluster=cluster)

    def unfinished_pairs(self) -> list[StoredPair]:
        """Pairs left ``playing`` (a stop, a kill): played again, their missing tables only."""
        return self.store.pairs(PAIR_PLAYING)

    def begin_attempt(self, seq: int) -> StoredPair | None:
        """Count a start of pair ``seq``; None (and the pair void) when it has had its attempts.

        The attempt is stored before the pair plays, so a server killed during
        the pair counts it too; a pair stopped on purpose gets it back
        (:meth:`stopped`).
        """
        pair = self.store.pair(seq)
        if pair is None or pair.status != PAIR_PLAYING:
            return None
        if pair.attempts >= self.max_pair_attempts:
            why = pair.reason or "the platform failed it each time"
            self.store.update_pair(
                seq, status=PAIR_VOID, reason=f"given up after {pair.attempts} attempts: {why}"
            )
            return None
        self.store.update_pair(seq, attempts_delta=1)
        return self.store.pair(seq)

    def stopped(self, seq: int) -> None:
        """The pair was stopped on purpose (Ctrl-C, SIGTERM): that start does not count."""
        self.store.update_pair(seq, attempts_delta=-1)

    def failed(self, seq: int, reason: str) -> None:
        """An attempt failed (a table's platform fault, an error): kept as the pair's latest reason."""
        self.store.update_pair(seq, reason=reason)

    def missing_tables(self, game_ids: Sequence[str]) -> tuple[int, ...]:
        """The tables (1-based) whose game is not stored yet."""
        return tuple(number for number, game_id in enumerate(game_ids, 1) if not self.store.has_game(game_id))

    def finish_pair(self, seq: int) -> None:
        """Every game of the pair is stored."""
        self.store.update_pair(seq, status=PAIR_DONE)

    def abandon_pair(self, seq: int, reason: str) -> None:
        """The pair will not be played (a side retired or was disabled meanwhile); its stored half is unrated."""
        self.store.update_pair(seq, status=PAIR_ABANDONED, reason=reason)

    def void_pair(self, seq: int, reason: str) -> None:
        self.store.update_pair(seq, status=PAIR_VOID, reason=reason)

    def void_clusters(self) -> set[str]:
        """The clusters of pairs that did not complete (void or abandoned): out of the ratings."""
        return self.store.void_clusters()


__all__ = ["MAX_PAIR_ATTEMPTS", "Ledger", "Recorded"]
