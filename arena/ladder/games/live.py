"""Ladder games as they are played, for spectators: public information only.

The ladder's tables run in their own processes; a table flagged ``live``
sends, after each decision, the game id, the seat to move and a view (seat
0's, its private fields already cleared there) to the ladder's loop
(:mod:`arena.tables.runner`), which hands it to :meth:`LiveGames.publish`.
That goes through :func:`spectator_message`, the one function that turns a
table's view into what a spectator is sent: it keeps the public part of the
view (:func:`arena.play.views.public_view_json`: bids, cards played, tricks,
scores) and drops everything else, whatever the table sent.  Nothing else
ever reaches a spectator: the hub keeps only its output.

:class:`LiveGames` is shared by the loop (trio, one thread) and the site
(asyncio, another): a lock around its dictionary, and each waiting spectator
woken on its own event loop (``call_soon_threadsafe``).  A finished game stays
listed for :data:`KEEP_FINISHED_S` (a spectator arriving late is sent to its
replay); at most :data:`MAX_GAMES` games are kept.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from typing import Any

#: How long a finished game stays on the list (its spectators are sent to the replay).
KEEP_FINISHED_S = 600.0
#: The most games the hub keeps (running ones first): a bound on its memory.
MAX_GAMES = 256
#: The most spectator streams open at once, all games together.
MAX_SPECTATORS = 200


def spectator_message(game_id: str, to_move: int, view_bytes: bytes) -> dict[str, Any]:
    """What a spectator is sent for one view of a running game: its public part and nothing else.

    ``view_bytes``: a serialised ``SeatView`` as the table sent it.  Whatever
    it holds (even a hand), only :func:`~arena.play.views.public_view_json`'s
    fields are kept.  Raises ``ValueError`` for bytes that are not a view.
    """
    from arena_sdk.wire import (
        arena_pb2 as pb,  # here: the site imports this module without gRPC's machinery
    )

    from arena.play.views import public_view_json

    view = pb.SeatView()
    try:
        view.ParseFromString(view_bytes)
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError (its module differs by backend)
        raise ValueError(f"not a seat view: {exc}") from None
    return {"type": "view", "game_id": game_id, "to_move": int(to_move), "view": public_view_json(view)}


@dataclasses.dataclass
class LiveGame:
    """One game on the live list: who plays it, its latest public message, whether it is over."""

    game_id: str
    sides: tuple[str, str]
    players: int
    seq: int = 0
    message: dict[str, Any] | None = None
    over: bool = False
    replay: bool = False
    """Over with a stored record (its replay opens); a void or stopped game has none."""
    changed_at: float = dataclasses.field(default_factory=time.monotonic)
    previous: dict[str, Any] | None = None
    """The last hand's number and its 13 tricks once the next hand has begun (all played: public)."""

    def summary(self) -> dict[str, Any]:
        hand = self.message["view"]["hand_number"] if self.message else 0
        return {"game_id": self.game_id, "side0": self.sides[0], "side1": self.sides[1], "hand": hand, "over": self.over}


class LiveGames:
    """The ladder's running games as spectators see them (see the module docstring)."""

    def __init__(self, players: int = 4, stop: threading.Event | None = None) -> None:
        self.players = players
        #: The ladder's stop flag (set by Ctrl-C or SIGTERM): spectators' streams and practice tables end on it.
        self.stop = stop or threading.Event()
        self._lock = threading.Lock()
        self._games: dict[str, LiveGame] = {}
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self.spectators = 0
        self.closed = False

    # ------------------------------------------------------------ the loop's side

    def start(self, game_id: str, sides: tuple[str, str]) -> None:
        """A game is about to be played (listed before its first card)."""
        with self._lock:
            self._forget_old()
            if game_id not in self._games or self._games[game_id].over:
                self._games[game_id] = LiveGame(game_id, sides, self.players)
        self._wake()

    def publish(self, game_id: str, to_move: int, view_bytes: bytes) -> None:
        """A decision was played: keep the view's public part (:func:`spectator_message`) as the game's latest."""
        try:
            message = spectator_message(game_id, to_move, view_bytes)
        except ValueError:
            return  # not a view: nothing to show
        with self._lock:
            game = self._games.get(game_id)
            if game is None or game.over:
                return  # not announced by start(): not a game of this ladder's pairs
            old = game.message
            if old is not None and old["view"]["hand_number"] != message["view"]["hand_number"]:
                # Its last view (the hand's end: every trick) goes with the next hand's views, so a
                # spectator who was folded past it still sees the last trick of every hand.
                view = old["view"]
                game.previous = {k: view[k] for k in ("hand_number", "bids", "blind", "tricks")}
            if game.previous is not None:
                message["previous_hand"] = game.previous
            game.seq += 1
            game.message = message
            game.changed_at = time.monotonic()
        self._wake()

    def finish(self, game_id: str, *, replay: bool) -> None:
        """The game is over: stored (``replay``) or not (void, stopped)."""
        with self._lock:
            game = self._games.get(game_id)
            if game is None or game.over:
                return
            game.over = True
            game.replay = replay
            game.seq += 1
            game.changed_at = time.monotonic()
        self._wake()

    def close(self) -> None:
        """The ladder stops: every spectator's stream ends."""
        self.closed = True
        self._wake()

    @property
    def stopping(self) -> bool:
        """The ladder is stopping (or stopped): nothing new starts, what runs ends."""
        return self.closed or self.stop.is_set()

    # ------------------------------------------------------------ the site's side

    def games(self) -> list[dict[str, Any]]:
        """The games being played now, by id (finished ones are not listed)."""
        with self._lock:
            return [g.summary() for g in sorted(self._games.values(), key=lambda g: g.game_id) if not g.over]

    def latest(self, game_id: str) -> tuple[int, dict[str, Any]] | None:
        """The game's change count and what a spectator is sent now; None for a game not on the list."""
        with self._lock:
            game = self._games.get(game_id)
            if game is None:
                return None
            if game.over:
                over: dict[str, Any] = {"type": "over", "game_id": game_id, "replay": f"/games/{game_id}" if game.replay else None}
                if game.message is not None:  # the last view (public), so a late or folded spectator sees the end
                    over["last"] = game.message
                return game.seq, over
            start = {"type": "start", "game_id": game_id, "sides": list(game.sides), "players": game.players}
            return game.seq, game.message or start

    def sides(self, game_id: str) -> tuple[str, str] | None:
        with self._lock:
            game = self._games.get(game_id)
            return None if game is None else game.sides

    async def wait(self, game_id: str, seen: int, timeout: float) -> None:
        """Return once the game changed past ``seen``, the hub closed, or ``timeout`` passed."""
        loop = asyncio.get_running_loop()
        event = asyncio.Event()
        waiter = (loop, event)
        with self._lock:
            self._waiters.add(waiter)
            game = self._games.get(game_id)
            changed = game is None or game.seq != seen
        try:
            if not changed and not self.stopping:
                try:
                    await asyncio.wait_for(event.wait(), timeout)
                except TimeoutError:
                    pass
        finally:
            with self._lock:
                self._waiters.discard(waiter)

    # ------------------------------------------------------------ inside

    def _wake(self) -> None:
        with self._lock:
            waiters = list(self._waiters)
        for loop, event in waiters:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # that loop is closed: its spectator is gone
                pass

    def _forget_old(self) -> None:
        """Drop finished games past their time, and the oldest finished ones past :data:`MAX_GAMES` (lock held)."""
        now = time.monotonic()
        for gid in [g.game_id for g in self._games.values() if g.over and now - g.changed_at > KEEP_FINISHED_S]:
            del self._games[gid]
        if len(self._games) >= MAX_GAMES:
            done = sorted((g for g in self._games.values() if g.over), key=lambda g: g.changed_at)
            for g in done[: len(self._games) - MAX_GAMES + 1]:
                del self._games[g.game_id]


__all__ = ["KEEP_FINISHED_S", "MAX_SPECTATORS", "LiveGame", "LiveGames", "spectator_message"]
