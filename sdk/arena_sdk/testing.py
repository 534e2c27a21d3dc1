"""Play bots against each other in-process: the real engine, no network, no clock.

>>> from arena_sdk.testing import RandomBot, play_game
>>> result = play_game([RandomBot(), RandomBot()], "pagat", seed=7, max_hands=2)
>>> result.result.ending
'max_hands'

Every decision goes the way it goes over the wire: the harness builds the
referee's messages (``Welcome``, ``GameStart``, ``DecisionRequest``,
``HandEnd``, ``GameEnd``, ``MatchEnd``), hands them to each seat's
:class:`~arena_sdk.bot.BotDriver` (the same driver the gRPC client uses),
decodes the ``Answer`` with :func:`~arena_sdk.protocol.answer_from_proto` and
applies it to the engine.  A bot that passes here sees nothing different
against the referee, apart from the clock (the harness does not enforce time).

Seats
    Four players: pass four bots, for N, E, S, W.  Pass two bots for *team
    mode* (the arena's four-player mode): bot 0 plays N and S, bot 1 plays E
    and W.  Two players: pass two bots, for A and B.

    A bot may be given as an instance, as a class, or as any callable that
    returns a fresh instance.  Where one entry fills two seats (team mode), a
    class or factory is called once per seat and an instance is copied with
    :func:`copy.deepcopy` for the second seat; the same instance given for
    several seats is copied likewise.  Each seat always gets its own object.

Seeds
    ``seed`` is the deal seed of the game (``play_match``: game *i* uses
    ``seed + i``).  Each bot's ``self.rng`` is reseeded at every game start
    from a per-game, per-seat ``bot_seed`` derived from the deal seed with the
    referee's formula (:func:`bot_seed_for`), or given with ``bot_seeds``.  So
    the same call gives the same game; ``play_game(bots, rules, seed=s + i)``
    replays game *i* of ``play_match(bots, rules, games, seed=s)`` when the
    bots keep no state from game to game; and ``play_game`` with the deal seed
    of an arena game record (text) deals that game again with the same bot seeds.

Bad answers
    By default (``strict=True``) an answer that is malformed or illegal
    raises :class:`BotAnswerError` naming the bot, seat, decision and the
    engine's reason: you want to see your bugs.  With ``strict=False`` the
    harness plays the default move the referee would play (bid 1, the first
    legal card, decline blind nil, keep the offered card, exchange nothing),
    sends the seat a strike ``Notice``, and counts it in
    :attr:`LocalGameResult.defaults`.  The referee forfeits a game after 3
    strikes; the harness does not.  An exception raised inside your bot
    propagates (with a note saying where); in the arena it would crash the bot
    and forfeit its games.

Recorded games
    :class:`RecordedGame` (from :mod:`arena_sdk.reproduce`) rebuilds, from
    any game record, the exact ``View`` (and ``MatchInfo``, ``GameInfo``) a
    seat had at its k-th decision, and re-asks a bot at every decision of a
    seat: ``RecordedGame.load(path).reproduce("E", 12).view``.

Command line::

    python -m arena_sdk.testing path/to/bot.py:MyBot [--against random|easy|medium|hard] [--games 10] [--rules pagat] [--jobs 4]
    python -m arena_sdk.testing path/to/bot.py:MyBot --replay RECORD.json --seat E [--json]
    python -m arena_sdk.testing path/to/bot.py:MyBot --replay RECORD.json --seat E --decision 17 [--pdb]

Built-in opponents: pass ``"easy"``, ``"medium"`` or ``"hard"`` (or
``"builtin:hard"``) wherever a bot is expected, or the classes of
:mod:`arena_sdk.bots`.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import hashlib
import importlib.util
import inspect
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena_sdk.bot import Bot, BotDriver
from arena_sdk.engine import (
    Card,
    Decision,
    GameResult,
    GameState,
    MalformedInputError,
    Ruleset,
    RulesError,
    Trick,
    record_from_state,
    resolve_ruleset,
    seat_name,
    team_name,
)
from arena_sdk.engine.policy import bot_seed, default_action
from arena_sdk.engine.seats import team_of
from arena_sdk.protocol import (
    answer_from_proto,
    game_end_message,
    game_start_message,
    hand_end_message,
    request_to_proto,
    welcome_message,
)
from arena_sdk.reproduce import (
    ClockSettings,
    ReaskOne,
    ReaskRow,
    RecordedDecision,
    RecordedGame,
    Reproduction,
    load_record,
    reproduce_decision,
    time_budget_warning,
)
from arena_sdk.view import View
from arena_sdk.wire import arena_pb2 as pb

#: A bot instance, a Bot subclass, a callable returning a fresh bot, or a
#: built-in name: ``"random"``, ``"easy"``, ``"medium"``, ``"hard"``.
BotArgument = Bot | type[Bot] | Callable[[], Bot] | str

DEFAULT_MOVE_MS = 1000
DEFAULT_BANK_MS = 30_000
STRIKES_TO_FORFEIT = 3

__all__ = [
    "BotAnswerError", "BotArgument", "ClockSettings", "LocalGameResult", "RandomBot", "ReaskOne", "ReaskRow",
    "RecordedDecision", "RecordedGame", "Reproduction", "bot_seed_for", "default_action",
    "load_record", "main", "play_game", "play_match", "reproduce_decision", "time_budget_warning",
]  # fmt: skip


class BotAnswerError(RuntimeError):
    """A bot answered a decision with something malformed or illegal (``strict`` mode)."""

    def __init__(
        self,
        message: str,
        *,
        bot: str,
        seat: int,
        kind: Decision,
        game: int,
        hand: int,
        request_id: int,
        reason: str,
    ) -> None:
        super().__init__(message)
        self.bot = bot
        self.seat = seat
        self.kind = kind
        self.game = game
        self.hand = hand
        self.request_id = request_id
        self.reason = reason


@dataclasses.dataclass(frozen=True)
class LocalGameResult:
    """One game played by the harness."""

    index: int
    """0-based index of the game in its match."""
    game_id: str
    seed: int | str
    """The deal seed (``GameState.new(rules, seed)`` deals the same cards)."""
    rules: Ruleset
    names: tuple[str, ...]
    """Bot name per seat (N, E, S, W or A, B)."""
    bot_seeds: tuple[int, ...]
    result: GameResult
    """The engine's result: ending, winner team (``None`` for a draw), scores, bags, and
    ``hands``, the number of hands played (an int; the hands are in ``record["hands"]``)."""
    record: dict[str, Any]
    """The game record (``docs/record-format.md``); ``replay_record`` checks it."""
    defaults: tuple[int, ...]
    """Default moves played per seat for bad answers (only with ``strict=False``)."""
    problems: tuple[str, ...]
    """What each of those bad answers was."""
    decisions: tuple[int, ...]
    """Decisions asked per seat."""
    think_s: tuple[float, ...]
    """Wall time spent in each seat's bot per game, in seconds."""

    @property
    def players(self) -> int:
        """4 or 2."""
        return self.rules.players

    @property
    def winner(self) -> int | None:
        """The winning team (0 = NS or A, 1 = EW or B), ``None`` for a draw."""
        return self.result.winner

    @property
    def scores(self) -> tuple[int, ...]:
        """Final scores per team."""
        return self.result.scores

    def team_of(self, seat: int) -> int:
        """The team of a seat."""
        return team_of(self.players, seat)

    def summary(self) -> str:
        """One line: seats and names, scores, who won and how."""
        n = self.players
        teams = []
        for t in range(2):
            seats = [s for s in range(n) if team_of(n, s) == t]
            who = "+".join(dict.fromkeys(self.names[s] for s in seats))
            teams.append(f"{team_name(n, t)} {who} {self.scores[t]}")
        won = "draw" if self.winner is None else f"{team_name(n, self.winner)} wins"
        return (
            f"game {self.index} seed {self.seed}: {' vs '.join(teams)}: {won} "
            f"({self.result.ending}, {self.result.hands} hands)"
        )


# ---------------------------------------------------------------------- seeds & defaults


def bot_seed_for(game_seed: int | str, seat: int) -> int:
    """The ``bot_seed`` the harness sends ``seat`` for the game dealt from ``game_seed``.

    The referee's formula: a game the arena dealt from seed ``X`` gives the
    bots the same seeds here when replayed with ``play_game(..., seed=X)``.
    """
    return bot_seed(str(game_seed), seat)




# ---------------------------------------------------------------------- seats


def _make_bot(spec: BotArgument) -> Bot:
    """A fresh bot from a class or factory, a tier name, or the instance itself."""
    if isinstance(spec, Bot):
        return spec
    if isinstance(spec, str):
        if spec == "random":
            return RandomBot()
        from arena_sdk.bots import make_bot

        try:
            return make_bot(spec.removeprefix("builtin:"))
        except ValueError as exc:
            raise TypeError(f"{exc} (or 'random')") from None
    if inspect.isclass(spec) or callable(spec):
        bot = spec()
        if not isinstance(bot, Bot):
            raise TypeError(f"{spec!r} made {bot!r}, which is not an arena_sdk.Bot")
        return bot
    raise TypeError(f"a bot must be a Bot instance, a Bot class or a factory, got {spec!r}")


def _copy_bot(bot: Bot) -> Bot:
    try:
        return copy.deepcopy(bot)
    except Exception as exc:  # noqa: BLE001 - any failure: explain what to do
        raise TypeError(
            f"bot {bot.name!r} fills two seats and cannot be copied ({exc}); "
            f"pass its class or a factory instead of an instance"
        ) from exc


def _seat_bots(specs: Sequence[BotArgument], players: int) -> list[Bot]:
    """One bot object per seat, following the module's seating rules."""
    specs = list(specs)
    if players == 4 and len(specs) == 2:
        order = [specs[0], specs[1], specs[0], specs[1]]
    elif len(specs) == players:
        order = specs
    else:
        allowed = "2 (team mode) or 4" if players == 4 else "2"
        raise ValueError(f"a {players}-player game needs {allowed} bots, got {len(specs)}")
    bots: list[Bot] = []
    for spec in order:
        bot = _make_bot(spec)
        if any(bot is b for b in bots):
            bot = _copy_bot(bot)
        bots.append(bot)
    return bots


def _resolve_rules(
    rules: Ruleset | str, overrides: Mapping[str, object] | None, max_hands: int | None
) -> Ruleset:
    changes: dict[str, object] = dict(overrides or {})
    if max_hands is not None:
        changes["max_hands"] = max_hands
    if isinstance(rules, str):
        return resolve_ruleset(rules, changes)
    if not isinstance(rules, Ruleset):
        raise TypeError(f"rules must be a preset name or a Ruleset, got {rules!r}")
    if not changes:
        return rules
    unknown = sorted(set(changes) - set(rules.options()))
    if unknown:
        raise MalformedInputError(f"unknown option(s): {', '.join(unknown)}")
    return Ruleset.from_dict({**rules.to_dict(), **changes})


# ---------------------------------------------------------------------- the table


def _msg(**kwargs: Any) -> pb.RefereeMessage:
    return pb.RefereeMessage(**kwargs)


@dataclasses.dataclass
class _GameTally:
    """Per seat, what one local game counted: default moves, problems, decisions, thinking time."""

    players: dataclasses.InitVar[int]
    defaults: list[int] = dataclasses.field(init=False)
    problems: list[str] = dataclasses.field(default_factory=list)
    decisions: list[int] = dataclasses.field(init=False)
    think: list[float] = dataclasses.field(init=False)

    def __post_init__(self, players: int) -> None:
        self.defaults = [0] * players
        self.decisions = [0] * players
        self.think = [0.0] * players


class _Table:
    """One match: a seat (bot + driver) per position, kept for all games."""

    def __init__(
        self,
        specs: Sequence[BotArgument],
        rules: Ruleset,
        *,
        games: int,
        strict: bool,
        move_ms: int,
        bank_ms: int,
        match_id: str,
    ) -> None:
        self.rules = rules
        self.players = rules.players
        self.bots = _seat_bots(specs, self.players)
        # Strict: a bug in the bot surfaces as an exception, as an author wants
        # while testing; lenient: it is a strike, as in the arena.
        self.drivers = [BotDriver(bot, catch_errors=not strict) for bot in self.bots]
        for driver in self.drivers:  # the harness writes no record to reproduce from
            driver.reproduce_hints = False
        self.names = tuple(str(bot.name) for bot in self.bots)
        self.strict = strict
        self.move_ms = move_ms
        self.bank_ms = bank_ms
        self.match_id = match_id
        self.request_id = 0
        for seat in range(self.players):
            welcome = welcome_message(
                match_id, seat, rules, move_ms=move_ms, bank_ms=bank_ms, hard_cap_ms=move_ms + bank_ms,
                strikes_to_forfeit=STRIKES_TO_FORFEIT, games=games, seat_names=self.names,
            )  # fmt: skip
            self._send(seat, _msg(welcome=welcome), "the welcome")

    def _send(self, seat: int, message: pb.RefereeMessage, what: str) -> pb.Answer | None:
        """Hand ``message`` to a seat's driver; exceptions from bot code get a note."""
        try:
            return self.drivers[seat].handle(message)
        except Exception as exc:
            exc.add_note(
                f"(raised by bot {self.names[seat]!r} at seat "
                f"{seat_name(self.players, seat)} while handling {what}, "
                f"in arena_sdk.testing)"
            )
            raise

    def _broadcast(self, message: pb.RefereeMessage, what: str) -> None:
        for seat in range(self.players):
            self._send(seat, message, what)

    def play(self, index: int, seed: int | str, bot_seeds: Sequence[int] | None) -> LocalGameResult:
        rules, n = self.rules, self.players
        game_id = f"{self.match_id}-g{index}"
        seeds = tuple(bot_seeds) if bot_seeds is not None else tuple(
            bot_seed_for(seed, s) for s in range(n)
        )
        if len(seeds) != n or not all(isinstance(s, int) and 0 <= s < 2**64 for s in seeds):
            raise ValueError(f"bot_seeds must be {n} whole numbers 0 <= seed < 2**64, got {seeds!r}")
        state = GameState.new(rules, seed)
        for seat in range(n):
            start = game_start_message(index, game_id, seeds[seat], state.first, state.scores, state.bags)
            self._send(seat, start, f"the start of game {index}")
        tally = _GameTally(n)
        while not state.is_over:
            self._decision(state, index, tally)
        result = state.result
        assert result is not None
        end_game = game_end_message(index, game_id, result.ending, result.winner, result.scores, result.bags)
        self._broadcast(end_game, f"the end of game {index}")
        meta = {
            "harness": "arena_sdk.testing",
            "match_id": self.match_id,
            "seats": {seat_name(n, s): self.names[s] for s in range(n)},
            "bot_seeds": {seat_name(n, s): seeds[s] for s in range(n)},
            "defaults": {seat_name(n, s): tally.defaults[s] for s in range(n)},
        }
        return LocalGameResult(
            index=index,
            game_id=game_id,
            seed=seed,
            rules=rules,
            names=self.names,
            bot_seeds=seeds,
            result=result,
            record=record_from_state(state, game_id=game_id, meta=meta),
            defaults=tuple(tally.defaults),
            problems=tuple(tally.problems),
            decisions=tuple(tally.decisions),
            think_s=tuple(tally.think),
        )

    def _decision(self, state: GameState, index: int, tally: _GameTally) -> None:
        """Ask the seat to move for its decision and apply it (or, not strict, the default move); tell a hand's end."""
        seat, kind = state.to_move, state.decision
        assert seat is not None and kind is not None
        hand_before = state.hand_number
        results_before = len(state.hand_results)
        tricks_before = list(state.tricks)
        trick_before = state.current_trick()
        won_before = list(state.tricks_won)

        self.request_id += 1
        request = request_to_proto(
            self.request_id, state.view(seat), self.move_ms, self.bank_ms
        )
        what = f"a {kind.value} request (game {index}, hand {hand_before})"
        started = time.perf_counter()
        answer = self._send(seat, _msg(request=request), what)
        tally.think[seat] += time.perf_counter() - started
        tally.decisions[seat] += 1

        problem = self._apply(state, seat, kind, answer)
        if problem is not None:
            self._default_move(state, seat, kind, index, hand_before, problem, tally)

        if len(state.hand_results) > results_before:
            hand = state.hand_results[-1]
            # The engine has moved on to the next hand: rebuild the last trick.
            last_cards = tuple(c for _, c in trick_before) + (state.history[-1].action,)
            leader = trick_before[0][0] if trick_before else seat
            winner = next(s for s in range(self.players) if hand.tricks[s] > won_before[s])
            tricks = (*tricks_before, Trick(leader, last_cards, winner))  # type: ignore[arg-type]
            end = hand_end_message(hand, tricks, self.players)
            self._broadcast(end, f"the end of hand {hand.number}")

    def _default_move(
        self, state: GameState, seat: int, kind: Decision, index: int, hand: int, problem: tuple[str, str],
        tally: _GameTally,
    ) -> None:  # fmt: skip
        """An answer that could not be applied: raised (strict), or the default move played and the seat told."""
        code, reason = problem
        shown = self._describe(seat, kind, index, hand, reason)
        if self.strict:
            raise BotAnswerError(
                f"{shown}\n(pass strict=False to play the default move instead and count it)",
                bot=self.names[seat],
                seat=seat,
                kind=kind,
                game=index,
                hand=hand,
                request_id=self.request_id,
                reason=reason,
            )
        tally.defaults[seat] += 1
        tally.problems.append(shown)
        state.apply(default_action(state))
        notice = pb.Notice(
            level=pb.Notice.STRIKE,
            code=code,
            message=f"{reason}; the default move was played",
            request_id=self.request_id,
        )
        self._send(seat, _msg(notice=notice), "a strike notice")

    def _apply(
        self, state: GameState, seat: int, kind: Decision, answer: pb.Answer | None
    ) -> tuple[str, str] | None:
        """Apply the answer; on failure leave the state as it was and say why."""
        if answer is None:
            return "malformed", "the driver returned no answer to a decision request"
        if answer.request_id != self.request_id:
            return "stale_answer", (
                f"the answer carries request id {answer.request_id}, not {self.request_id}"
            )
        try:
            action = answer_from_proto(kind, answer)
        except MalformedInputError as exc:
            detail = self.drivers[seat].last_error
            return "malformed", f"malformed answer: {detail or exc}"
        try:
            state.apply(action)
        except MalformedInputError as exc:
            return "malformed", f"malformed {kind.value}: {exc}"
        except RulesError as exc:
            legal = _legal_text(state)
            return "illegal", f"illegal {kind.value} {_action_text(action)}: {exc}{legal}"
        return None

    def _describe(self, seat: int, kind: Decision, game: int, hand: int, reason: str) -> str:
        return (
            f"bot {self.names[seat]!r} at seat {seat_name(self.players, seat)} gave a bad "
            f"answer to a {kind.value} decision (game {game}, hand {hand}, "
            f"request {self.request_id}): {reason}"
        )

    def close(self, reason: str = "completed") -> None:
        self._broadcast(_msg(match_end=pb.MatchEnd(match_id=self.match_id, reason=reason)), "the match end")


def _action_text(action: Any) -> str:
    if isinstance(action, Card):
        return action.name
    if isinstance(action, tuple):
        return "[" + ", ".join(c.name for c in action) + "]"
    return repr(action)


def _legal_text(state: GameState) -> str:
    kind = state.decision
    if kind is Decision.PLAY:
        return " (legal: " + ", ".join(c.name for c in state.legal_actions()) + ")"
    if kind is Decision.BID:
        return " (legal: 0-13)"
    return ""


# ---------------------------------------------------------------------- public API


def play_match(
    bots: Sequence[BotArgument],
    rules: Ruleset | str = "pagat",
    games: int = 1,
    seed: int = 0,
    *,
    overrides: Mapping[str, object] | None = None,
    max_hands: int | None = None,
    strict: bool = True,
    move_ms: int = DEFAULT_MOVE_MS,
    bank_ms: int = DEFAULT_BANK_MS,
    match_id: str | None = None,
) -> list[LocalGameResult]:
    """Play ``games`` games at one table; the bots stay seated (and keep their state) throughout.

    Game *i* is dealt from seed ``seed + i``.  ``rules`` is a preset name or a
    :class:`Ruleset`; ``overrides`` (``{"target": 300}``) and ``max_hands``
    change options.  See the module docstring for seating, seeds and ``strict``.
    """
    if not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be a whole number >= 1, got {games!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be a whole number, got {seed!r}")
    resolved = _resolve_rules(rules, overrides, max_hands)
    table = _Table(
        bots, resolved, games=games, strict=strict, move_ms=move_ms, bank_ms=bank_ms,
        match_id=match_id or f"local-{seed}",
    )  # fmt: skip
    results = [table.play(i, seed + i, None) for i in range(games)]
    table.close()
    return results


def play_game(
    bots: Sequence[BotArgument],
    rules: Ruleset | str = "pagat",
    seed: int | str = 0,
    *,
    bot_seeds: Sequence[int] | None = None,
    overrides: Mapping[str, object] | None = None,
    max_hands: int | None = None,
    strict: bool = True,
    move_ms: int = DEFAULT_MOVE_MS,
    bank_ms: int = DEFAULT_BANK_MS,
    match_id: str | None = None,
) -> LocalGameResult:
    """Play one game (a match of one game) and return its result and record.

    ``seed`` may also be text (the arena's deal seeds are hex text): the game
    is then dealt as the arena dealt it.  ``bot_seeds`` gives each seat's
    ``bot_seed`` instead of deriving it from ``seed``.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, str)):
        raise TypeError(f"seed must be a whole number or text, got {seed!r}")
    resolved = _resolve_rules(rules, overrides, max_hands)
    table = _Table(
        bots, resolved, games=1, strict=strict, move_ms=move_ms, bank_ms=bank_ms,
        match_id=match_id or f"local-{seed}",
    )  # fmt: skip
    result = table.play(0, seed, bot_seeds)
    table.close()
    return result


# ---------------------------------------------------------------------- a built-in opponent


class RandomBot(Bot):
    """Random legal decisions from ``self.rng`` (the example bot in ``example_bots/random``).

    Bids 1-4 at random and nil one time in twenty; plays a random legal card;
    declines blind nil; keeps an offered card half of the time; exchanges a
    random 0-3 cards.
    """

    name = "random"
    version = "1"

    def bid(self, view: View) -> int:
        return 0 if self.rng.random() < 0.05 else self.rng.randint(1, 4)

    def play(self, view: View) -> Card:
        return self.rng.choice(view.legal_cards())

    def blind_nil(self, view: View) -> bool:
        return False

    def draw(self, view: View) -> bool:
        return self.rng.random() < 0.5

    def exchange(self, view: View) -> list[Card]:
        return self.rng.sample(view.hand, self.rng.randint(0, 3))


# ---------------------------------------------------------------------- command line


def load_bot(spec: str) -> type[Bot] | Callable[[], Bot]:
    """``random``, a built-in tier (``easy``, ``medium``, ``hard``, also as ``builtin:TIER``),
    or ``path/to/bot.py:ClassName`` (the class may be omitted if there is one)."""
    if spec == "random":
        return RandomBot
    from arena_sdk.bots import TIERS  # the tiers import this module's neighbours, not it

    tier = spec.removeprefix("builtin:").lower()
    if tier in TIERS:
        return TIERS[tier]
    path_text, _, class_name = spec.partition(":")
    path = Path(path_text)
    if not path.is_file():
        raise SystemExit(f"no such bot file: {path}")
    module_name = f"_arena_bot_{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    module_spec.loader.exec_module(module)
    if class_name:
        cls = getattr(module, class_name, None)
        if not (inspect.isclass(cls) and issubclass(cls, Bot)):
            raise SystemExit(f"{path} has no Bot subclass named {class_name!r}")
        return cls
    found = [
        c for c in vars(module).values()
        if inspect.isclass(c) and issubclass(c, Bot) and c is not Bot and c.__module__ == module_name
    ]  # fmt: skip
    if len(found) != 1:
        names = ", ".join(c.__name__ for c in found) or "none"
        raise SystemExit(f"{path}: name the bot class as {path}:ClassName (found: {names})")
    return found[0]


@dataclasses.dataclass(frozen=True)
class _GameJob:
    """One game of the command line's duplicate series (picklable: it crosses to a worker process)."""

    index: int
    mine: str
    theirs: str
    rules: dict[str, Any]
    seed: int
    swap: bool
    lenient: bool


@dataclasses.dataclass(frozen=True)
class _GameOutcome:
    index: int
    summary: str
    names: tuple[str, str]
    won: bool
    drawn: bool
    margin: int
    defaults: int
    error: str | None = None


def _play_job(job: _GameJob) -> _GameOutcome:
    """Play one game of the series: your bot in team 0, or in team 1 when ``swap``."""
    mine, theirs = load_bot(job.mine), load_bot(job.theirs)
    order = [theirs, mine] if job.swap else [mine, theirs]
    rules = Ruleset.from_dict(job.rules)
    try:
        res = play_game(
            order, rules, job.seed, strict=not job.lenient, match_id=f"local-{job.seed}-{int(job.swap)}"
        )
    except BotAnswerError as exc:
        return _GameOutcome(job.index, "", ("", ""), False, False, 0, 0, error=str(exc))
    team = 1 if job.swap else 0
    return _GameOutcome(
        index=job.index,
        summary=res.summary(),
        names=(res.names[team], res.names[1 - team]),
        won=res.winner == team,
        drawn=res.winner is None,
        margin=res.scores[team] - res.scores[1 - team],
        defaults=sum(d for s, d in enumerate(res.defaults) if res.team_of(s) == team),
    )


def _play_series(jobs: list[_GameJob], processes: int) -> Iterator[_GameOutcome]:
    """The games' outcomes in game order, played in ``processes`` worker processes (1: here)."""
    if processes <= 1 or len(jobs) <= 1:
        yield from map(_play_job, jobs)
        return
    from concurrent.futures import ProcessPoolExecutor

    # Each game is independent (fresh bots, its own seeds): the results are
    # those of --jobs 1, only sooner.  map() keeps the game order.
    with ProcessPoolExecutor(max_workers=min(processes, len(jobs))) as pool:
        yield from pool.map(_play_job, jobs)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m arena_sdk.testing BOT [--against BOT] [--games N] [--rules PRESET] [--jobs N]``,
    or ``python -m arena_sdk.testing BOT --replay RECORD --seat SEAT [--json]``."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.replay is not None:
        return _replay_main(parser, args)
    if args.seat is not None or args.json or args.decision is not None or args.pdb:
        parser.error("--seat, --decision, --pdb and --json go with --replay")
    return _series_main(parser, args)


def _parser() -> argparse.ArgumentParser:
    """The command line of :func:`main`."""
    parser = argparse.ArgumentParser(
        prog="python -m arena_sdk.testing",
        description="Play a bot against another in-process (no referee, no clock) and "
        "print the results. Four players: team mode (each bot fills both seats of "
        "its side); the sides swap every other game, on the same deals. With --replay: "
        "ask the bot again at every decision of one seat in a recorded game and show "
        "where its answer now differs from what was played.",
    )
    parser.add_argument("bot", help="path/to/bot.py:ClassName, 'random', or a tier: easy, medium, hard")
    parser.add_argument(
        "--against", default="random",
        help="the opponent: random (default), easy, medium, hard, or path/to/bot.py:ClassName",
    )  # fmt: skip
    parser.add_argument("--games", type=int, default=10, help="games to play (default 10)")
    parser.add_argument("--rules", default="pagat", help="ruleset preset (default pagat)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="override an option"
    )
    parser.add_argument("--seed", type=int, default=0, help="deal seed of the first game")
    parser.add_argument(
        "--lenient", action="store_true",
        help="play the default move for a bad answer instead of stopping",
    )  # fmt: skip
    parser.add_argument(
        "--jobs", "-j", type=int, default=1,
        help="games played at once, each in its own process (default 1); the results are the same",
    )  # fmt: skip
    parser.add_argument("--verbose", "-v", action="store_true", help="print every game")
    replay = parser.add_argument_group("re-asking a recorded game")
    replay.add_argument("--replay", metavar="RECORD", help="a game record (JSON) to ask the bot again on")
    replay.add_argument("--seat", help="the seat the bot plays in the record: N, E, S, W, A, B or 0-3")
    replay.add_argument(
        "--decision", type=int, default=None, metavar="K",
        help="ask only the seat's decision K (0-based, as strikes name it): print the view and the "
        "answer; an exception in the bot shows its traceback",
    )  # fmt: skip
    replay.add_argument(
        "--pdb", action="store_true",
        help="with --decision: stop in the debugger at the bot's method for that decision "
        "(and after an exception in it)",
    )  # fmt: skip
    replay.add_argument("--json", action="store_true", help="print the decisions as JSON")
    replay.add_argument("--all", action="store_true", help="list every decision, not only the differing ones")
    replay.add_argument(
        "--time-control", metavar="MOVE_MS,BANK_MS,HARD_CAP_MS", default=None,
        help="the match's time control, which records do not hold (default 1000,30000,60000)",
    )  # fmt: skip
    replay.add_argument(
        "--game-index", type=int, default=None,
        help="the game's index in its match (default: read from a game id <match>-gN, else 0)",
    )  # fmt: skip
    return parser


def _series_main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Games between the two bots (duplicate pairs, sides swapped), and a one-line summary."""
    try:
        from arena_sdk.engine import parse_overrides

        rules = resolve_ruleset(args.rules, parse_overrides(args.set))
    except RulesError as exc:
        parser.error(str(exc))
    load_bot(args.bot), load_bot(args.against)  # a bad bot spec fails here, before any game
    if args.games < 1:
        parser.error("--games must be at least 1")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    started = time.perf_counter()
    # Duplicate pairs: game 2k with your bot in team 0, game 2k+1 on the same deal in team 1.
    jobs = [
        _GameJob(g, args.bot, args.against, rules.to_dict(), args.seed + g // 2, g % 2 == 1, args.lenient)
        for g in range(args.games)
    ]
    wins = draws = score_diff = defaults = 0
    names = ("", "")
    for out in _play_series(jobs, args.jobs):
        if out.error is not None:
            print(f"stopped: {out.error}", file=sys.stderr)
            return 1
        wins += out.won
        draws += out.drawn
        score_diff += out.margin
        defaults += out.defaults
        names = out.names
        if args.verbose:
            print(f"[{out.index + 1}/{args.games}] {out.summary}")
    elapsed = time.perf_counter() - started
    losses = args.games - wins - draws
    print(
        f"{names[0]} vs {names[1]}: {wins} won, {losses} lost, {draws} drawn of {args.games} "
        f"({rules.preset}, seeds {args.seed}..{args.seed + (args.games - 1) // 2}); "
        f"mean score margin {score_diff / args.games:+.1f}; "
        f"default moves {defaults}; {elapsed:.1f} s"
    )
    return 0


def _replay_main(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--replay RECORD --seat SEAT``: the bot asked again at every decision of the seat."""
    import json

    if args.seat is None:
        parser.error("--replay needs --seat (the seat your bot played)")
    clock = None
    if args.time_control is not None:
        try:
            move, bank, cap = (int(x) for x in args.time_control.split(","))
            clock = ClockSettings(move_ms=move, bank_ms=bank, hard_cap_ms=cap)
        except ValueError:
            parser.error(f"--time-control must be MOVE_MS,BANK_MS,HARD_CAP_MS, got {args.time_control!r}")
    try:
        game = RecordedGame.load(args.replay, clock=clock, game_index=args.game_index)
        seat = game.seat(args.seat)
    except (ValueError, RulesError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    bot = _make_bot(load_bot(args.bot))
    warning = time_budget_warning(bot)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    if args.decision is not None:
        return _decision_main(game, bot, seat, args)
    if args.pdb:
        parser.error("--pdb goes with --decision K")
    rows = game.reask(bot, seat)
    changed = [r for r in rows if r.differs]
    name = seat_name(game.players, seat)
    if args.json:
        print(json.dumps({
            "record": str(args.replay), "game_id": game.game_id, "seat": name, "bot": str(bot.name),
            "bot_seed": game.bot_seed(seat), "decisions": len(rows), "differences": len(changed),
            "rows": [r.to_json() for r in rows],
        }, indent=1))  # fmt: skip
        return 0
    shown = rows if args.all else changed
    print(
        f"{bot.name} at seat {name} of {game.game_id or args.replay} (bot seed {game.bot_seed(seat)}): "
        f"{len(changed)} of {len(rows)} decisions differ"
    )
    if shown:
        print(f"  {'#':>4} {'hand':>4}  {'kind':<9} {'played':<22} now")
        for row in shown:
            d = row.decision
            mark = "*" if row.differs else " "
            print(f"{mark} {d.index:>4} {d.hand:>4}  {d.kind.value:<9} {d.played_text:<22} {row.now_text}")
    return 0


def _decision_main(game: RecordedGame, bot: Bot, seat: int, args: argparse.Namespace) -> int:
    """``--replay RECORD --seat SEAT --decision K``: that one decision asked again, shown in full.

    Exit 0 for an answer the referee would take, 1 for an exception in the bot
    or an answer it would strike.
    """
    import json
    import traceback

    name = seat_name(game.players, seat)
    try:
        decisions = game.decisions(seat)
        if not 0 <= args.decision < len(decisions):
            raise IndexError(
                f"seat {name} has {len(decisions)} decisions in this game (0..{len(decisions) - 1}), "
                f"not {args.decision}"
            )
    except IndexError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    d = decisions[args.decision]
    recorded = d.played_text + (f" (the referee's default move: {d.default})" if d.default else "")
    v = game.reproduce(seat, d.index).view  # the view the bot is about to get (the recorded one)
    print(f"{bot.name}: decision {d.index} of seat {name} in {game.game_id or args.replay} ({d.path})")
    print(f"  hand {d.hand}, {d.kind.value}; recorded: {recorded}")
    print(f"  view: {v!r}")
    if d.kind is Decision.PLAY:
        trick = " ".join(f"{seat_name(game.players, s)}:{c.name}" for s, c in v.current_trick) or "(leading)"
        print(f"  trick: {trick}; bids: {json.dumps(v.bids)}")
    sys.stdout.flush()  # before a traceback on stderr
    debugger = None
    before = None
    if args.pdb:
        import pdb  # noqa: T100 - the debugger is what --pdb asks for

        debugger = pdb.Pdb()
        method = _DECISION_METHOD[d.kind]

        def before() -> None:  # at decision K only: the earlier ones are asked without stopping
            original = getattr(bot, method)

            def stop_in(view: View) -> Any:
                print(f"  stopping in {type(bot).__name__}.{method}(view); 'c' lets it answer", flush=True)
                return debugger.runcall(original, view)  # type: ignore[union-attr]

            setattr(bot, method, stop_in)  # the driver calls it through the instance

    try:
        one = game.reask_one(bot, seat, args.decision, before=before)
    except Exception as exc:  # noqa: BLE001 - the bot's own exception at that decision: the point of the command
        traceback.print_exc()
        print(f"  answer now: {bot.name} raised {type(exc).__name__}: {exc}")
        if debugger is not None:
            import pdb  # noqa: T100

            pdb.post_mortem(exc.__traceback__)
        return 1
    same = one.now is not None and not ReaskRow(d, one.now).differs
    verdict = f" -> {one.problem}" if one.problem else " (as recorded)" if same else " (differs from the record)"
    print(f"  answer now: {one.now_text}{verdict}")
    if one.note:
        print(f"  note: {one.note}")
    return 1 if one.problem else 0


_DECISION_METHOD: dict[Decision, str] = {
    Decision.PLAY: "play", Decision.BID: "bid", Decision.BLIND_NIL: "blind_nil",
    Decision.DRAW: "draw", Decision.EXCHANGE: "exchange",
}  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
