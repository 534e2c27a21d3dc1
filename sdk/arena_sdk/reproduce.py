"""Any recorded decision, reproduced: the exact messages a seat got, rebuilt from a game record.

>>> from arena_sdk.testing import RecordedGame
>>> game = RecordedGame.load("matches/latest/m1-g1.json")   # doctest: +SKIP
>>> rep = game.reproduce("E", 12)                            # E's 13th decision (0-based)
>>> rep.view, rep.match, rep.game                            # View, MatchInfo, GameInfo
>>> MyBot().play(rep.view)                                   # ask it again, in a debugger
>>> game.reask_one(MyBot(), "E", 12)                         # the same, its state rebuilt first

The record is replayed in the rules engine up to the decision, and the
request is built from ``state.view(seat)`` by the same function the referee
uses (:func:`arena_sdk.protocol.request_message`), as are the ``Welcome``,
``GameStart``, ``HandEnd`` and ``GameEnd`` messages.  So the :class:`View`
equals the one the referee sent, field by field, with two limits the record
sets:

* The clock.  A record does not hold the match's time control; pass it as
  :class:`ClockSettings` (default: the referee's default, 1 s a move, a 30 s
  bank, a 60 s hard cap).  The bank left at each decision is recomputed from
  the times recorded for the seat's earlier decisions (``ms``), with the
  referee's rule; a record of the local harness (``arena_sdk.testing``) gets
  the harness's clock without asking.
* The match around the game.  ``GameStart.game_index`` and
  ``Welcome.games`` are not in the record: the index is read from a game id
  ``<match_id>-g<N>`` (``arena match run``), else 0; pass ``game_index`` and
  ``games`` for a tournament or sprt game.  ``Welcome.seat_names`` are the
  names the record lists (a seat that had not joined yet was "" then).  A bot
  that carries state from game to game sees only this game.

Strike notices are rebuilt with the recorded code; their text is not recorded.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from arena_sdk.bot import Bot, BotDriver, GameInfo, MatchInfo
from arena_sdk.engine import (
    Decision,
    GameState,
    Ruleset,
    action_from_json,
    action_to_json,
    parse_card,
    parse_decision,
    parse_seat,
    replay_record,
    seat_name,
    team_name,
)
from arena_sdk.engine.errors import MalformedInputError, RulesError
from arena_sdk.protocol import (
    answer_from_proto,
    game_end_message,
    game_start_message,
    hand_end_message,
    request_message,
    welcome_message,
)
from arena_sdk.view import View
from arena_sdk.wire import arena_pb2 as pb

__all__ = [
    "ClockSettings", "ReaskOne", "ReaskRow", "RecordedDecision", "RecordedGame", "Reproduction",
    "load_record", "reproduce_decision", "time_budget_warning",
]  # fmt: skip

_GAME_INDEX = re.compile(r"-g(\d+)$")


@dataclasses.dataclass(frozen=True)
class ClockSettings:
    """The time control of the match a record comes from (records do not hold it).

    ``harness``: the clock of :mod:`arena_sdk.testing` (no bank is spent, no
    ``allowed_ms`` is sent), used by default for the harness's own records.
    """

    move_ms: int = 1000
    bank_ms: int = 30_000
    hard_cap_ms: int = 60_000
    strikes_to_forfeit: int = 3
    harness: bool = False


@dataclasses.dataclass(frozen=True)
class RecordedDecision:
    """One decision of the record, as the seat to move was asked it."""

    index: int
    """0-based among this seat's decisions in the game (the ``k`` of :meth:`RecordedGame.reproduce`)."""
    number: int
    """0-based among all decisions of the game."""
    seat: int
    hand: int
    kind: Decision
    played: Any
    """The engine action recorded (the referee's default move where ``default`` is set)."""
    default: str | None
    """``timeout``, ``illegal`` or ``malformed`` when the referee played the default move."""
    path: str
    """Where it is in the record, e.g. ``hands[2].actions[14]``."""
    message: pb.RefereeMessage
    """The request message the seat got, rebuilt."""

    @property
    def played_text(self) -> str:
        """The recorded action as the record writes it (``"SA"``, ``3``, ``["C3"]``)."""
        return json.dumps(action_to_json(self.kind, self.played))


@dataclasses.dataclass(frozen=True)
class Reproduction:
    """What a seat had at one decision: call ``bot.play(view)`` (or ``bid``...) on it."""

    decision: RecordedDecision
    view: View
    match: MatchInfo
    """The ``MatchInfo`` the bot got when it joined (``bot.match``)."""
    game: GameInfo
    """The ``GameInfo`` of ``on_game_start``; ``game.bot_seed`` seeded ``bot.rng``."""

    def prepare(self, bot: Bot) -> Bot:
        """Set ``bot.match`` and reseed ``bot.rng`` as at the start of the game; returns ``bot``.

        (State the bot builds from earlier messages is not rebuilt: use
        :meth:`RecordedGame.reask` for a bot that keeps state.)
        """
        from arena_sdk.bot import default_seed_rng

        bot.match = self.match
        bot.rng = default_seed_rng(self.game.bot_seed)
        return bot


def load_record(source: str | os.PathLike[str] | Mapping[str, Any]) -> dict[str, Any]:
    """A record from a file path or an already parsed dict (returned as a dict)."""
    if isinstance(source, Mapping):
        return dict(source)
    path = Path(source)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read record {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not a JSON game record: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a game record (a JSON object)")  # noqa: TRY004 - bad input, one error type
    return data


class _Probe(Bot):
    """Takes the infos a driver hands out (the same decoding a real bot gets)."""

    name = "probe"

    def __init__(self) -> None:
        super().__init__()
        self.game: GameInfo | None = None

    def on_game_start(self, info: GameInfo) -> None:
        self.game = info


class RecordedGame:
    """A checked game record and the message stream each seat got in it."""

    def __init__(
        self,
        record: Mapping[str, Any],
        *,
        clock: ClockSettings | None = None,
        game_index: int | None = None,
        games: int | None = None,
    ) -> None:
        """``record``: the parsed record; it is replayed (and checked) first.

        Raises :class:`arena_sdk.engine.RecordError` (a ``RulesError``) naming
        the first bad entry of a record that does not replay.
        """
        self.record = dict(record)
        report = replay_record(self.record)  # checks everything this class relies on
        self.rules: Ruleset = report.rules
        self.players = self.rules.players
        meta = self.record.get("meta") if isinstance(self.record.get("meta"), Mapping) else {}
        harness = meta.get("harness") == "arena_sdk.testing"
        self.clock = clock or ClockSettings(harness=harness)
        self.game_id = str(self.record.get("game_id") or "")
        self.match_id = str(self.record.get("match_id") or meta.get("match_id") or "")
        self.game_index = self._game_index() if game_index is None else game_index
        self.games = games if games is not None else self.game_index + 1
        self.bot_seeds = self._bot_seeds(meta)
        self.names = self._names(meta)
        self._streams: dict[int, list[tuple[pb.RefereeMessage, RecordedDecision | None]]] = {}

    @classmethod
    def load(cls, source: str | os.PathLike[str] | Mapping[str, Any], **kwargs: Any) -> RecordedGame:
        """Read a record (a path or a parsed dict); keyword arguments as for the constructor."""
        return cls(load_record(source), **kwargs)

    # ------------------------------------------------------------------ what the record says

    def _game_index(self) -> int:
        found = _GAME_INDEX.search(self.game_id)
        if found and self.game_id == f"{self.match_id}-g{found.group(1)}" and int(found.group(1)) >= 1:
            return int(found.group(1)) - 1
        return 0

    def _bot_seeds(self, meta: Mapping[str, Any]) -> dict[int, int | None]:
        seeds = self.record.get("bot_seeds") or meta.get("bot_seeds") or {}
        out: dict[int, int | None] = {}
        for s in range(self.players):
            value = seeds.get(seat_name(self.players, s)) if isinstance(seeds, Mapping) else None
            out[s] = value if isinstance(value, int) and not isinstance(value, bool) else None
        return out

    def _names(self, meta: Mapping[str, Any]) -> tuple[str, ...]:
        seats = self.record.get("seats") or meta.get("seats") or {}
        names = []
        for s in range(self.players):
            entry = seats.get(seat_name(self.players, s)) if isinstance(seats, Mapping) else None
            if isinstance(entry, Mapping):
                entry = entry.get("name")
            names.append(entry if isinstance(entry, str) else "")
        return tuple(names)

    def seat(self, seat: int | str) -> int:
        """A seat given as its number or its name (``"E"``, ``"B"``)."""
        if isinstance(seat, str) and not seat.isdigit():
            try:
                return parse_seat(self.players, seat.upper())
            except RulesError as exc:
                raise ValueError(str(exc)) from None
        number = int(seat)
        if not 0 <= number < self.players:
            raise ValueError(f"seat must be 0..{self.players - 1} or a seat name, got {seat!r}")
        return number

    def bot_seed(self, seat: int | str) -> int:
        """The bot seed the seat got at the start of the game (0 if the record does not say)."""
        value = self.bot_seeds[self.seat(seat)]
        return 0 if value is None else value

    # ------------------------------------------------------------------ the messages

    def _new_state(self) -> GameState:
        data, n = self.record, self.players
        start = data.get("start") or {}
        scores = [start["scores"][team_name(n, t)] for t in range(2)] if start.get("scores") else None
        bags = [start["bags"][team_name(n, t)] for t in range(2)] if start.get("bags") else None
        decks = {
            i + 1: [int(parse_card(c)) for c in hand["deck"]]
            for i, hand in enumerate(data["hands"])
            if "deck" in hand
        }
        return GameState.new(
            self.rules, data["seed"], first=parse_seat(n, data["first"]), scores=scores, bags=bags, decks=decks
        )

    def welcome(self, seat: int | str) -> pb.RefereeMessage:
        """The ``Welcome`` the seat got when it joined."""
        c = self.clock
        welcome = welcome_message(
            self.match_id, self.seat(seat), self.rules, move_ms=c.move_ms, bank_ms=c.bank_ms,
            hard_cap_ms=c.move_ms + c.bank_ms if c.harness else c.hard_cap_ms,
            strikes_to_forfeit=c.strikes_to_forfeit, games=self.games, seat_names=self.names,
        )  # fmt: skip
        return pb.RefereeMessage(welcome=welcome)

    def messages(self, seat: int | str) -> list[tuple[pb.RefereeMessage, RecordedDecision | None]]:
        """Every message of the game to ``seat``, in order, from ``Welcome`` to ``GameEnd``.

        Each request comes with its :class:`RecordedDecision` (``None`` for the
        other messages).
        """
        number = self.seat(seat)
        if number not in self._streams:
            self._streams[number] = list(self._stream(number))
        return self._streams[number]

    def _stream(self, seat: int) -> Iterator[tuple[pb.RefereeMessage, RecordedDecision | None]]:
        n, c = self.players, self.clock
        state = self._new_state()
        yield self.welcome(seat), None
        yield game_start_message(
            self.game_index, self.game_id, self.bot_seed(seat), state.first, tuple(state.scores), tuple(state.bags)
        ), None  # fmt: skip
        move_s, hard_cap_s = c.move_ms / 1000, c.hard_cap_ms / 1000
        bank = [c.bank_ms / 1000] * n
        mine = 0
        number = 0
        hands_reported = 0
        for i, hand in enumerate(self.record["hands"]):
            for j, entry in enumerate(hand["actions"]):
                who = state.to_move
                assert who is not None and state.decision is not None
                kind = parse_decision(entry["kind"])
                action = action_from_json(kind, entry["action"])
                rid = entry.get("request_id", number + 1)
                if who == seat:
                    if c.harness:
                        message = request_message(rid, state.view(seat), c.move_ms, c.bank_ms)
                    else:
                        # The referee's clock (arena.match.loop): the allowance, then the bank spent.
                        allowed = min(move_s + bank[seat], hard_cap_s)
                        message = request_message(
                            rid, state.view(seat), c.move_ms, int(bank[seat] * 1000), int(allowed * 1000)
                        )
                    decision = RecordedDecision(
                        index=mine, number=number, seat=seat, hand=state.hand_number, kind=kind, played=action,
                        default=entry.get("default"), path=f"hands[{i}].actions[{j}]", message=message,
                    )  # fmt: skip
                    yield message, decision
                    mine += 1
                if not c.harness and isinstance(entry.get("ms"), (int, float)):
                    allowed = min(move_s + bank[who], hard_cap_s)
                    elapsed = entry["ms"] / 1000
                    bank[who] = max(0.0, bank[who] - max(0.0, min(elapsed, allowed) - move_s))
                state.apply(action)
                number += 1
                if who == seat and entry.get("default"):
                    notice = pb.Notice(
                        level=pb.Notice.STRIKE, code=str(entry["default"]), request_id=rid,
                        message=f"{entry['default']}; played {json.dumps(entry['action'])}",
                    )  # fmt: skip
                    yield pb.RefereeMessage(notice=notice), None
                if len(state.hand_results) > hands_reported:
                    result = state.hand_results[hands_reported]
                    hands_reported += 1
                    yield hand_end_message(result, result.played, n), None
        end = self.record.get("result")
        if isinstance(end, Mapping):
            winner = end.get("winner")
            yield game_end_message(
                self.game_index, self.game_id, str(end.get("ending", "")),
                None if winner is None else [team_name(n, t) for t in range(2)].index(winner),
                tuple(end["scores"][team_name(n, t)] for t in range(2)),
                tuple(end["bags"][team_name(n, t)] for t in range(2)),
            ), None  # fmt: skip

    def decisions(self, seat: int | str) -> list[RecordedDecision]:
        """The seat's decisions in the game, in order."""
        return [d for _, d in self.messages(seat) if d is not None]

    # ------------------------------------------------------------------ reproduce, re-ask

    def reproduce(self, seat: int | str, k: int) -> Reproduction:
        """The ``View``, ``MatchInfo`` and ``GameInfo`` of the seat's ``k``-th decision (0-based)."""
        decisions = self.decisions(seat)
        if not -len(decisions) <= k < len(decisions):
            raise IndexError(
                f"seat {seat_name(self.players, self.seat(seat))} has {len(decisions)} decisions "
                f"in this game (0..{len(decisions) - 1}), not {k}"
            )
        decision = decisions[k]
        probe = _Probe()
        driver = BotDriver(probe)
        for message, _ in self.messages(seat)[:2]:  # Welcome, GameStart: decoded as a bot decodes them
            driver.handle(message)
        assert probe.match is not None and probe.game is not None
        view = View(self.rules, decision.message.request, hard_cap_ms=probe.match.hard_cap_ms)
        return Reproduction(decision=decision, view=view, match=probe.match, game=probe.game)

    def reask(self, bot: Bot, seat: int | str) -> list[ReaskRow]:
        """Feed ``bot`` the seat's whole message stream; its answer at each decision vs the record.

        The game goes on as recorded whatever the bot answers now, so every
        later view is the recorded one.  An exception in the bot is caught
        (its traceback printed) and shown as the answer.
        """
        driver = BotDriver(bot, catch_errors=True)
        driver.reproduce_hints = False  # this is the reproduction
        rows: list[ReaskRow] = []
        for message, decision in self.messages(seat):
            answer = driver.handle(message)
            if decision is None:
                continue
            now: Any = None
            problem = None
            try:
                assert answer is not None
                now = answer_from_proto(decision.kind, answer)
            except (RulesError, AssertionError) as exc:
                problem = driver.last_error or str(exc) or "no answer"
            rows.append(ReaskRow(decision, now, problem))
        return rows


    def state_before(self, number: int) -> GameState:
        """The engine state just before the game's decision ``number`` (0-based among all seats')."""
        state = self._new_state()
        done = 0
        for hand in self.record["hands"]:
            for entry in hand["actions"]:
                if done == number:
                    return state
                state.apply(action_from_json(parse_decision(entry["kind"]), entry["action"]))
                done += 1
        if done == number:
            return state
        raise IndexError(f"the game has {done} decisions, not {number + 1}")

    def reask_one(
        self, bot: Bot, seat: int | str, k: int, *, before: Callable[[], None] | None = None
    ) -> ReaskOne:
        """Ask ``bot`` the seat's ``k``-th decision again, after feeding it every message before it.

        The earlier decisions are asked too (answers ignored, exceptions
        caught and printed), so a bot that keeps state has the state it had.
        At decision ``k`` the bot is called with nothing caught: an exception
        it raises propagates to the caller, as in a debugger.  The answer is
        checked against the rules at that point of the game.  ``before`` is
        called just before decision ``k`` is asked (``--pdb`` sets its
        breakpoint there).
        """
        decisions = self.decisions(seat)
        if not 0 <= k < len(decisions):
            raise IndexError(
                f"seat {seat_name(self.players, self.seat(seat))} has {len(decisions)} decisions "
                f"in this game (0..{len(decisions) - 1}), not {k}"
            )
        driver = BotDriver(bot, catch_errors=True)
        driver.reproduce_hints = False
        for message, decision in self.messages(seat):
            if decision is not None and decision.index == k:
                driver.catch_errors = False  # the exception, if any, is the caller's to see
                if before is not None:
                    before()
                answer = driver.handle(message)
                driver.catch_errors = True
                view = driver.last_view
                assert view is not None and answer is not None
                try:
                    now = answer_from_proto(decision.kind, answer)
                except RulesError as exc:  # no action (an exception caught inside the bot's code) or malformed
                    return ReaskOne(decision, view, None, f"malformed: {driver.last_error or exc}", answer.note)
                try:
                    self.state_before(decision.number).apply(now)
                except RulesError as exc:
                    kind = "malformed" if isinstance(exc, MalformedInputError) else "illegal"
                    return ReaskOne(decision, view, now, f"{kind}: {exc}", answer.note)
                return ReaskOne(decision, view, now, None, answer.note)
            driver.handle(message)
        raise AssertionError("unreachable: decision k is in the stream")  # pragma: no cover


@dataclasses.dataclass(frozen=True)
class ReaskOne:
    """One decision asked again on its own (:meth:`RecordedGame.reask_one`)."""

    decision: RecordedDecision
    view: View
    """The view the bot was given (the recorded one)."""
    now: Any
    """The engine action the bot answers now (``None`` if it sent none)."""
    problem: str | None
    """``malformed: ...`` or ``illegal: ...`` when the referee would strike the answer."""
    note: str = ""
    """The bot's note on the answer."""

    @property
    def now_text(self) -> str:
        """The answer now as the record would write it."""
        if self.now is None:
            return "no action"
        try:
            return json.dumps(action_to_json(self.decision.kind, self.now))
        except (RulesError, TypeError, ValueError):
            return repr(self.now)


def time_budget_warning(bot: Bot) -> str | None:
    """Why re-asking ``bot`` may not give the recorded answer: a search budget in seconds.

    Checks the ``budget_s`` attribute (the built-in Hard bot's, and the
    convention of docs/sampling.md): a search stopped by the clock sees more or
    fewer worlds on another run, so it can answer differently.
    """
    budget = getattr(bot, "budget_s", None)
    if isinstance(budget, (int, float)) and not isinstance(budget, bool) and budget > 0:
        return (
            f"{bot.name} searches for {budget:g} s a decision (budget_s): it can answer differently "
            "when asked again; give it a budget in worlds (the built-in Hard: HardBot(worlds=N)) to "
            "re-ask it deterministically (docs/sampling.md)"
        )
    return None


@dataclasses.dataclass(frozen=True)
class ReaskRow:
    """One decision asked again: what was played and what the bot answers now."""

    decision: RecordedDecision
    now: Any
    """The engine action the bot answers now (``None`` with ``problem``)."""
    problem: str | None = None
    """Why there is no action: the bot raised, or its answer could not be decoded."""

    @property
    def differs(self) -> bool:
        """The answer now is not what the record holds."""
        if self.problem is not None:
            return True
        kind = self.decision.kind
        if kind is Decision.EXCHANGE:  # a set of cards: the order is not part of the answer
            return sorted(self.now) != sorted(self.decision.played)
        return bool(self.now != self.decision.played)

    @property
    def now_text(self) -> str:
        """The answer now, as the record would write it (or the problem)."""
        if self.problem is not None:
            return f"error: {self.problem}"
        try:
            return json.dumps(action_to_json(self.decision.kind, self.now))
        except (RulesError, TypeError, ValueError):
            return repr(self.now)

    def to_json(self) -> dict[str, Any]:
        """The row as JSON data (``python -m arena_sdk.testing --replay ... --json``)."""
        d = self.decision
        return {
            "index": d.index,
            "number": d.number,
            "hand": d.hand,
            "kind": d.kind.value,
            "path": d.path,
            "played": action_to_json(d.kind, d.played),
            "default": d.default,
            "now": None if self.problem is not None else json.loads(self.now_text),
            "error": self.problem,
            "differs": self.differs,
        }


def reproduce_decision(
    record: str | os.PathLike[str] | Mapping[str, Any], seat: int | str, k: int, **kwargs: Any
) -> Reproduction:
    """The view (with ``MatchInfo``, ``GameInfo``) of ``seat``'s ``k``-th decision in ``record``.

    ``record`` is a path or a parsed record; ``kwargs`` as for :class:`RecordedGame`.
    """
    return RecordedGame.load(record, **kwargs).reproduce(seat, k)
