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
import dataclasses
import json
import secrets
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from arena_sdk.engine import Ruleset, seat_name, team_name

from arena.errors import ArenaError
from arena.match import GameOutcome, MatchSpec, TimeControl, game_seeds
from arena.match.output import write_json, write_record
from arena.play.compare import COMPARE_BOTS, HandSetup
from arena.play.seat import DEFAULT_RECONNECT_S, HandEnd, HumanSeat
from arena.play.views import clean_name, decision_json, hand_json, seat_view_json
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


async def run_comparison(setup: HandSetup, seat: int, bot: str, others: list[str]) -> dict[str, Any]:
    """Replay a hand in a process of its own (``python -m arena.play.compare``); its result.

    A process, not a thread: the bots' search is CPU-bound and would hold up the
    table's event loop; not a multiprocessing pool: that would run the CLI's
    main module again in the worker.
    """
    job = {"setup": dataclasses.asdict(setup), "seat": seat, "bot": bot, "others": others}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arena.play.compare",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(process.communicate(json.dumps(job).encode()), COMPARE_TIMEOUT_S)
    except BaseException:
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
    if process.returncode != 0:
        last = (err.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the replay failed: {last[:200]}")
    return json.loads(out)


class PlayTable:
    """A table with one person and bots: its match, its seat adapter, its comparisons.

    ``on_change`` is called whenever :meth:`snapshot` would differ (the web
    layer pushes it to the page).
    """

    def __init__(self, config: TableConfig, *, key: str | None = None) -> None:
        self.config = config
        self.key = key or secrets.token_urlsafe(18)
        """The table's secret: its page is ``/t/KEY``; whoever has it sits in the person's seat."""
        self.match_id = config.match_id or new_match_id()
        self.spec = MatchSpec(
            match_id=self.match_id,
            rules=config.rules,
            deal_seeds=tuple(game_seeds(config.seed, config.games)),
            time_control=config.time_control,
        )
        self.listeners: list[Callable[[], None]] = []
        self.seat = HumanSeat(reconnect_s=config.reconnect_s, on_change=self.changed, on_hand_end=self._hand_ended)
        self.comparisons: dict[tuple[int, int, str], dict[str, Any]] = {}
        self.records: dict[str, Path] = {}
        self.outcomes: list[GameOutcome] = []
        self.finished = False
        self.error = ""
        self.version = 0
        self._comparing: set[asyncio.Task[None]] = set()

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

    # ------------------------------------------------------------ the match

    async def run(self) -> None:
        """Host the match to its end (records written as each game ends), then write ``play.json``."""
        out = self.config.out_dir
        out.mkdir(parents=True, exist_ok=True)
        placeholder = BotSpec("cmd", "person")  # never started: the seat's launcher replaces it
        bots = [b or placeholder for b in self.config.bots]

        def saved(game: GameOutcome) -> None:
            self.records[game.game_id] = write_record(out, game)
            self.outcomes.append(game)
            self.changed()

        try:
            await play_seated(
                self.spec, bots, log_dir=out / "logs", start_timeout=self.config.start_timeout,
                on_game_end=saved, seat_launchers={self.config.seat: self.seat.launcher()},
                limits=self.config.limits, labels=dict(self.config.labels) or None,
            )  # fmt: skip
        except Exception as exc:  # the table's page says why, and the command too
            self.error = f"the match stopped: {type(exc).__name__}: {exc}"[:300]
            raise
        finally:
            self.finished = True
            write_json(out / "play.json", self.summary())
            self.changed()

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

    # ------------------------------------------------------------ comparisons

    def _hand_ended(self, hand: HandEnd) -> None:
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
            self.comparisons[key] = {"status": "unavailable", "bot": bot, "hand": number,
                                     "message": "the comparison replays built-in bots only: another seat is not one"}  # fmt: skip
            self.changed()
            return None
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
        task = asyncio.get_running_loop().create_task(self._compare(key, setup, tiers))
        self._comparing.add(task)
        task.add_done_callback(self._comparing.discard)
        return None

    async def close(self) -> None:
        """Stop the comparisons still running (their processes are killed)."""
        for task in list(self._comparing):
            task.cancel()
        await asyncio.gather(*self._comparing, return_exceptions=True)

    async def _compare(self, key: tuple[int, int, str], setup: HandSetup, tiers: list[str]) -> None:
        try:
            played = await run_comparison(setup, self.config.seat, key[2], tiers)
            self.comparisons[key] = {"status": "done", "bot": key[2], "hand": key[1], **played}
        except Exception as exc:
            self.comparisons[key] = {"status": "failed", "bot": key[2], "hand": key[1],
                                     "message": f"{type(exc).__name__}: {exc}"[:200]}  # fmt: skip
        self.changed()

    # ------------------------------------------------------------ what the page shows

    def snapshot(self) -> dict[str, Any]:
        """Everything the page shows now, as JSON-ready data (the seat's view and nothing more)."""
        seat = self.seat
        n = self.players
        me = self.config.seat
        decision = seat.decision
        view = decision.view if decision is not None else seat.view
        hands = [hand_json(n, me, h) for h in seat.hands]
        hands_by = {h["number"]: h for h in hands}
        comparisons = [
            with_swing(c, hands_by.get(c["hand"])) for (g, _, _), c in sorted(self.comparisons.items())
            if g == seat.game_index
        ]  # fmt: skip
        games_ended = [
            {"game_id": g.game_id, "ending": g.ending, "winner": g.winner, "scores": list(g.scores),
             "replay": f"replay/{g.game_id}" if g.game_id in self.records else None}
            for g in seat.games_ended
        ]  # fmt: skip
        return {
            "version": self.version,
            "players": n,
            "seat": me,
            "seat_names": [seat_name(n, s) for s in range(n)],
            "team_names": [team_name(n, t) for t in range(2)],
            "names": self.names(),
            "rules": {"preset": self.config.rules.preset, "target": self.config.rules.to_dict().get("target")},
            "games": self.config.games,
            "game_index": seat.game_index,
            "game_id": seat.game_id,
            "view": seat_view_json(view) if view is not None else None,
            "decision": None if decision is None else decision_json(
                decision.request_id, decision.kind.value, decision.legal, decision.move_ms, decision.bank_ms,
                decision.allowed_ms, int((time.monotonic() - decision.asked_at) * 1000),
            ),
            "just_played": None if seat.just_played is None else {"seat": seat.just_played[0], "card": seat.just_played[1]},
            "hands": hands,
            "comparisons": comparisons,
            "compare_bots": list(COMPARE_BOTS),
            "compare_bot": self.config.compare_bot,
            "games_ended": games_ended,
            "finished": self.finished,
            "abandoned": seat.abandoned,
            "message": seat.message,
            "error": self.error,
        }

    def replay_record(self, game_id: str) -> Path | None:
        """The record of a finished game of this table, or None."""
        return self.records.get(game_id)


def with_swing(comparison: dict[str, Any], hand: dict[str, Any] | None) -> dict[str, Any]:
    """A finished comparison with its swing: the bot's margin (its side's points less the other
    side's) less the person's, in the same hand.  Positive: the bot did better."""
    if comparison.get("status") != "done" or hand is None:
        return comparison
    yours = hand["you"]["side_points"] - hand["you"]["other_points"]
    return {**comparison, "swing": comparison["margin"] - yours}


def dumps(data: Any) -> str:
    """Compact JSON for the WebSocket."""
    return json.dumps(data, separators=(",", ":"))
