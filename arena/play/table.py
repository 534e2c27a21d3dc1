"""One table a person plays at: the match hosted as ``arena match run`` hosts it, the person's seat,
the comparisons, and what the page is shown.

:class:`PlayTable` hosts its match with :func:`arena.referee.local_match.play_seated`
(the referee, the bots' processes or containers, one socket per seat) and
puts a :class:`~arena.play.seat.HumanSeat` in the person's seat through
``seat_launchers``: the seat joins like any bot.  Every game's record is
written to the table's directory as ``arena match run`` writes it, with a
``play.json`` beside them (who sat where, how each game ended, whether the
person left).  :meth:`PlayTable.snapshot` is what the page shows, rebuilt
on every change (a reloaded page gets the current one at once).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import secrets
import time
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any

from arena_sdk.engine import Ruleset, action_to_json, seat_name, team_name, team_of

from arena.errors import ArenaError
from arena.match import GameOutcome, MatchSpec, TimeControl, game_seeds
from arena.match.output import write_json, write_record
from arena.match.undo import UndoBook
from arena.play.assist import Assists
from arena.play.compare import COMPARE_BOTS, HandSetup
from arena.play.seat import DEFAULT_RECONNECT_S, HandEnd, HumanSeat
from arena.play.snapshot import table_snapshot
from arena.play.stats import PlayStats, StatsError
from arena.play.views import clean_name, hand_json
from arena.play.worker import run_job
from arena.referee.botspec import BotSpec
from arena.referee.local_match import play_seated
from arena.sandbox.docker import ContainerLimits

#: The person's time control by default: a minute a move and five in the bank (docs/play.md).
DEFAULT_MOVE_S = 60.0
DEFAULT_BANK_S = 300.0


class PlayError(ArenaError, ValueError):
    """A table that cannot be set up as asked; the message says why."""


def person_time_control(move_s: float = DEFAULT_MOVE_S, bank_s: float = DEFAULT_BANK_S) -> TimeControl:
    """The match's time control for a table with a person: the hard cap is the move and the whole bank.

    The bots play under it too (they answer in their own time).  The person is
    never struck by it: their seat answers the default move before it runs out.
    """
    try:
        return TimeControl(move_s=move_s, bank_s=bank_s, hard_cap_s=move_s + bank_s)
    except ValueError as exc:
        raise PlayError(f"--time-control: {exc}") from None


def parse_time_control(text: str) -> TimeControl:
    """``"60"`` or ``"60,300"`` (seconds a move, and of bank per game) as a time control."""
    parts = [p.strip() for p in text.split(",")]
    if not 1 <= len(parts) <= 2:
        raise PlayError(f"--time-control takes MOVE or MOVE,BANK in seconds (e.g. 60,300), got {text!r}")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise PlayError(f"--time-control takes seconds (e.g. 60,300), got {text!r}") from None
    return person_time_control(*values)


@dataclasses.dataclass(frozen=True)
class TableConfig:
    """Everything one table needs."""

    rules: Ruleset
    seat: int
    """The person's seat (0..players-1)."""
    bots: tuple[BotSpec | None, ...]
    """One per seat; ``None`` at the person's seat."""
    out_dir: Path
    seed: str
    games: int = 1
    time_control: TimeControl = dataclasses.field(default_factory=person_time_control)
    reconnect_s: float = DEFAULT_RECONNECT_S
    compare_bot: str = "hard"
    """The bot the comparison seats by default (the page can ask for another)."""
    start_timeout: float = 20.0
    match_id: str = ""
    limits: ContainerLimits = dataclasses.field(default_factory=ContainerLimits)
    """The bots' containers' limits (a ladder's practice table: the ladder's own)."""
    labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Labels on the bots' containers (a ladder's practice table: the ladder's run label, so its prune finds them)."""
    names: tuple[str, ...] = ()
    """Each seat's name for the page ("" or none: the bot's label); the person's seat is "You" anyway."""

    def __post_init__(self) -> None:
        n = self.rules.players
        if not 0 <= self.seat < n:
            raise PlayError(f"--seat must be one of {', '.join(seat_name(n, s) for s in range(n))}")
        if len(self.bots) != n or any((b is None) != (s == self.seat) for s, b in enumerate(self.bots)):
            raise PlayError(f"a {n}-player table takes a bot at every seat but the person's")
        if self.compare_bot not in COMPARE_BOTS:
            raise PlayError(f"--compare-with takes one of {', '.join(COMPARE_BOTS)}, got {self.compare_bot!r}")
        if not 0 < self.reconnect_s <= 86_400:
            raise PlayError(f"--reconnect must be more than 0 and at most 86400 s, got {self.reconnect_s}")
        if not 1 <= self.games <= 1000:
            raise PlayError(f"--games must be between 1 and 1000, got {self.games}")


def new_match_id() -> str:
    """A fresh match id for a table: ``play-`` and the time, so its records sort by date and never clash."""
    return f"play-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


#: The longest one comparison may take before it is given up (Hard at every seat takes seconds).
COMPARE_TIMEOUT_S = 300.0
#: The longest a hint may take before it is given up (Hard's search takes a fraction of a second).
HINT_TIMEOUT_S = 120.0


async def run_comparison(setup: HandSetup, seat: int, bot: str, others: list[str]) -> dict[str, Any]:
    """Replay a hand in a process of its own (``python -m arena.play.compare``); its result."""
    job = {"setup": dataclasses.asdict(setup), "seat": seat, "bot": bot, "others": others}
    return await run_job("arena.play.compare", job, COMPARE_TIMEOUT_S)


class PlayTable:
    """A table with one person and bots: its match, its seat adapter, its comparisons, hints and undos.

    ``on_change`` is called whenever :meth:`snapshot` would differ (the web
    layer pushes it to the page).  ``stats``: where the person's statistics
    are kept (None: not kept).  The host may set :attr:`new_game` (a button
    that opens the next table) or :attr:`new_game_link` (a page that does).
    """

    def __init__(self, config: TableConfig, *, key: str | None = None, stats: PlayStats | None = None) -> None:
        self.config = config
        self.key = key or secrets.token_urlsafe(18)
        """The table's secret: its page is ``/t/KEY``; whoever has it sits in the person's seat."""
        self.match_id = config.match_id or new_match_id()
        self.undo_book = UndoBook({config.seat}) if self.undo_available() else None
        self.spec = MatchSpec(
            match_id=self.match_id,
            rules=config.rules,
            deal_seeds=tuple(game_seeds(config.seed, config.games)),
            time_control=config.time_control,
            undo=self.undo_book,
        )
        self.listeners: list[Callable[[], None]] = []
        self.assists = Assists()
        self.seat = HumanSeat(
            reconnect_s=config.reconnect_s, on_change=self.changed, on_hand_end=self._hand_ended,
            on_ask=lambda decision: self.assists.asked(decision.request_id),
        )  # fmt: skip
        self.comparisons: dict[tuple[int, int, str], dict[str, Any]] = {}
        self.records: dict[str, Path] = {}
        self.outcomes: list[GameOutcome] = []
        self.stats = stats
        self.stats_message = ""
        self.new_game: Callable[[PlayTable], str] | None = None
        """Opens the next table like this one and returns its key (``arena play``: the "New game" button)."""
        self.new_game_link: str | None = None
        """Where another table is opened instead (a ladder's practice tables: the team's page)."""
        self.finished = False
        self.error = ""
        self.version = 0
        self._working: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------ names and labels

    @property
    def players(self) -> int:
        return self.config.rules.players

    def names(self) -> list[str]:
        """Each seat's name for the page: "You", and each bot's label (its own name once it joins)."""
        given = self.config.names
        return [
            "You" if b is None else clean_name(given[s] if s < len(given) and given[s] else b.label)
            for s, b in enumerate(self.config.bots)
        ]

    def builtin_tiers(self) -> list[str] | None:
        """The built-in tier at each seat but the person's (which gets ""), or None if any seat is not built-in."""
        tiers = []
        for b in self.config.bots:
            if b is None:
                tiers.append("")
            elif b.kind == "builtin":
                tiers.append(b.target)
            else:
                return None
        return tiers

    def undo_available(self) -> bool:
        """Undo needs bots that take a hand going back (the built-in ones): another author's bot
        may keep its own memory of the hand, written for hands that only go forward."""
        return self.builtin_tiers() is not None

    # ------------------------------------------------------------ the match

    async def run(self) -> None:
        """Host the match to its end (records written as each game ends), then write ``play.json``."""
        out = self.config.out_dir
        out.mkdir(parents=True, exist_ok=True)
        placeholder = BotSpec("cmd", "person")  # never started: the seat's launcher replaces it
        bots = [b or placeholder for b in self.config.bots]
        try:
            await play_seated(
                self.spec, bots, log_dir=out / "logs", start_timeout=self.config.start_timeout,
                on_game_end=self._game_saved, seat_launchers={self.config.seat: self.seat.launcher()},
                limits=self.config.limits, labels=dict(self.config.labels) or None,
            )  # fmt: skip
        except Exception as exc:  # the table's page says why, and the command too
            self.error = f"the match stopped: {type(exc).__name__}: {exc}"[:300]
            raise
        finally:
            self.finished = True
            write_json(out / "play.json", self.summary())
            self.changed()

    def _game_saved(self, game: GameOutcome) -> None:
        """A game ended: its record, marked where the person had help, is written; statistics kept."""
        n = self.players
        self.assists.mark(game.record, seat_name(n, self.config.seat), self._undone(game.index))
        self.records[game.game_id] = write_record(self.config.out_dir, game)
        self.outcomes.append(game)
        if not game.ending.startswith("void:") and not self.seat.abandoned:  # games the person finished
            won = None if game.winner is None else game.winner == team_of(n, self.config.seat)
            self._keep_stats("add_game", game.game_id, {"won": won, "ending": game.ending,
                                                        "assisted": self.assists.assisted()})  # fmt: skip
        self.assists.new_game()
        self.changed()

    def _undone(self, game: int) -> list[list[dict[str, Any]]]:
        """The decisions each undo of game ``game`` took back, as the record writes actions."""
        if self.undo_book is None:
            return []
        n = self.players
        return [
            [{"hand": hand, "seat": seat_name(n, s), "kind": kind.value, "action": action_to_json(kind, action)}
             for hand, s, kind, action in taken]  # fmt: skip
            for g, taken in self.undo_book.undone
            if g == game
        ]

    def summary(self) -> dict[str, Any]:
        """``play.json``: the table's match, who sat where, how each game ended."""
        n = self.players
        return {
            "match_id": self.match_id,
            "seed": self.config.seed,
            "ruleset": self.config.rules.to_dict(),
            "person": seat_name(n, self.config.seat),
            "seats": {seat_name(n, s): "person" if b is None else b.label for s, b in enumerate(self.config.bots)},
            "time_control": dataclasses.asdict(self.config.time_control),
            "abandoned": self.seat.abandoned,
            "games": [
                {
                    "game_id": g.game_id,
                    "ending": g.ending,
                    "winner": None if g.winner is None else team_name(n, g.winner),
                    "scores": {team_name(n, t): g.result.scores[t] for t in range(2)},
                    "record": f"{g.game_id}.json",
                    "assisted": (g.record.get("meta") or {}).get("assisted", {}),
                }
                for g in self.outcomes
            ],
        }

    # ------------------------------------------------------------ changes

    def changed(self) -> None:
        """Something the page shows changed: tell every listener."""
        self.version += 1
        for listener in list(self.listeners):
            listener()

    def _start(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` beside the match (stopped by :meth:`close`)."""
        task = asyncio.get_running_loop().create_task(work)
        self._working.add(task)
        task.add_done_callback(self._working.discard)

    async def close(self) -> None:
        """Stop the comparisons and hints still running (their processes are killed)."""
        for task in list(self._working):
            task.cancel()
        await asyncio.gather(*self._working, return_exceptions=True)

    # ------------------------------------------------------------ statistics

    def _keep_stats(self, what: str, *args: Any) -> None:
        """Update the person's statistics; a file that cannot be written turns them off, with a message."""
        if self.stats is None:
            return
        try:
            getattr(self.stats, what)(*args)
        except (StatsError, OSError) as exc:
            self.stats = None
            self.stats_message = f"Statistics are not kept any more at this table: {exc}"[:300]

    def _hand_stats(self, hand: HandEnd) -> None:
        you = hand_json(self.players, self.config.seat, hand)
        side = team_of(self.players, self.config.seat)
        team = you["teams"][side]
        entry = {
            "bid": you["you"]["bid"], "blind": you["you"]["blind"], "tricks": you["you"]["tricks"],
            "made": team["made"], "bags": team["bags"], "points": team["points"],
            "other_points": you["teams"][1 - side]["points"], "players": self.players,
            "assisted": any(self.assists.counts.values()),
        }  # fmt: skip
        self._keep_stats("add_hand", self.seat.game_id, hand.number, entry)

    # ------------------------------------------------------------ comparisons

    def _hand_ended(self, hand: HandEnd) -> None:
        self._hand_stats(hand)
        if self.builtin_tiers() is not None:
            self.compare(self.seat.game_index, hand.number, self.config.compare_bot)

    def compare(self, game: int, number: int, bot: str) -> str | None:
        """Start replaying hand ``number`` of game ``game`` with ``bot`` in the person's seat.

        Returns why it cannot be done (a message for the page), or None once it
        is started (or was already).
        """
        if bot not in COMPARE_BOTS:
            return f"no comparison bot {bot[:20]!r}"
        key = (game, number, bot)
        if key in self.comparisons:
            return None
        hand = next((h for h in self.seat.hands if h.number == number), None)
        if game != self.seat.game_index or hand is None:
            return "that hand is not in the game being played"
        tiers = self.builtin_tiers()
        if tiers is None:
            return "the comparison replays built-in bots only: another seat is not one"
        n = self.players
        teams = list(hand.result["teams"].values())
        setup = HandSetup(
            rules=self.config.rules.to_dict(),
            deal_seed=self.spec.deal_seeds[game],
            hand_number=number,
            first=hand.first,
            scores=(teams[0]["score_before"], teams[1]["score_before"]),
            bags=(teams[0]["bags_before"], teams[1]["bags_before"]),
            bot_seeds=tuple(self.spec.bot_seed(game, s) for s in range(n)),
        )
        self.comparisons[key] = {"status": "running", "bot": bot, "hand": number}
        self.changed()
        self._start(self._compare(key, setup, tiers, self.seat.game_id))
        return None

    async def _compare(self, key: tuple[int, int, str], setup: HandSetup, tiers: list[str], game_id: str) -> None:
        try:
            played = await run_comparison(setup, self.config.seat, key[2], tiers)
            self.comparisons[key] = {"status": "done", "bot": key[2], "hand": key[1], **played}
            hand = next((h for h in self.seat.hands if h.number == key[1] and self.seat.game_id == game_id), None)
            if key[2] == "hard" and hand is not None:
                you = hand_json(self.players, self.config.seat, hand)["you"]
                self._keep_stats("add_swing", game_id, key[1], played["margin"] - (you["side_points"] - you["other_points"]))
        except Exception as exc:
            self.comparisons[key] = {"status": "failed", "bot": key[2], "hand": key[1],
                                     "message": f"{type(exc).__name__}: {exc}"[:200]}  # fmt: skip
        self.changed()

    # ------------------------------------------------------------ hints and undo

    def hint(self, request_id: int) -> str | None:
        """Ask Hard for the open decision ``request_id`` (marked as assisted); why not, or None once asked."""
        decision = self.seat.decision
        if decision is None or decision.request_id != request_id or decision.answer.done() or decision.request is None:
            return "a hint is for the decision that is open now: the table has moved on"
        if request_id in self.assists.hints:
            return None
        self.assists.hinted(request_id)
        self.assists.hints[request_id] = {"status": "running"}
        game = self.seat.game_index
        job = {
            "rules": self.config.rules.to_dict(),
            "seat": self.config.seat,
            "bot_seed": self.spec.bot_seed(game, self.config.seat),
            "request": base64.b64encode(decision.request.SerializeToString()).decode(),
        }
        self.changed()
        self._start(self._hint(request_id, job))
        return None

    async def _hint(self, request_id: int, job: dict[str, Any]) -> None:
        try:
            found = await run_job("arena.play.hint", job, HINT_TIMEOUT_S)
            self.assists.hints[request_id] = {"status": "done", "action": str(found["action"]),
                                              "reason": str(found["reason"])[:400]}  # fmt: skip
        except Exception as exc:
            self.assists.hints[request_id] = {"status": "failed", "message": f"{type(exc).__name__}: {exc}"[:200]}
        self.changed()

    def can_undo(self) -> bool:
        """Whether the open decision can be withdrawn for the person's previous one (same hand)."""
        decision = self.seat.decision
        book = self.undo_book
        return book is not None and decision is not None and not decision.answer.done() and book.can_undo()

    def undo(self, request_id: int) -> str | None:
        """Take back the person's previous decision (the open one, ``request_id``, is withdrawn); why not, or None."""
        if self.undo_book is None:
            return "undo needs built-in bots at every seat: this table has another bot"
        decision = self.seat.decision
        if decision is None or decision.request_id != request_id or decision.answer.done():
            return "undo works when it is your turn: the table has moved on"
        if not self.undo_book.can_undo():
            return "there is nothing to undo in this hand yet"
        self.undo_book.request()
        self.assists.undone()
        self.seat.withdraw(request_id)
        self.seat.message = "Undone: make your previous move again."
        self.changed()
        return None

    # ------------------------------------------------------------ what the page shows

    def snapshot(self) -> dict[str, Any]:
        """Everything the page shows now, as JSON-ready data (the seat's view and nothing more)."""
        return table_snapshot(self)

    def replay_record(self, game_id: str) -> Path | None:
        """The record of a finished game of this table, or None."""
        return self.records.get(game_id)


def dumps(data: Any) -> str:
    """Compact JSON for the WebSocket."""
    return json.dumps(data, separators=(",", ":"))
