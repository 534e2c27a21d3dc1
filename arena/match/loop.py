"""The match loop: play games between seats under the time control and fault policy.

docs/architecture.md section 5, in code:

- every decision has a limit (``move_s``) plus the game's bank, capped by
  ``hard_cap_s``; time over the limit comes out of the bank (under the CPU
  clock these count CPU time, and a wall allowance per game,
  ``CPU_WALL_FACTOR`` times the bank and move times, bounds the wall time:
  docs/time-control.md);
- a late, illegal or malformed answer is a **strike**: the deterministic
  default move is played instead; ``strikes_to_forfeit`` strikes forfeit the
  game;
- the CPU a seat uses while it is not asked is counted per game (where its
  CPU can be read) and, past ``offturn_free_s`` plus ``offturn_share`` of the
  wall time it was not asked, its next answer is struck too (``offturn``);
- a seat that is lost (crash, disconnect, protocol violation) forfeits the
  game and every later game of the match;
- a platform failure makes the game **void** (not scored).

Every game ends with a result and a version-2 record (docs/record-format.md).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from arena_sdk.engine import (
    GameResult,
    GameState,
    IllegalActionError,
    MalformedInputError,
    action_to_json,
    game_result_to_json,
    record_from_state,
    seat_name,
    stopped_result,
    team_name,
    team_of,
)
from arena_sdk.engine.policy import default_action

from arena.match.clock import Clock, MonotonicClock
from arena.match.seat import DecisionPrompt, PlatformFault, Seat, SeatEvent, SeatLost, SeatReply
from arena.match.spec import CPU_WALL_FACTOR, MatchSpec, TimeControl
from arena.match.undo import RewindPoint, restore_state

log = logging.getLogger(__name__)

@dataclasses.dataclass
class SeatStats:
    """Per-seat statistics of one game."""

    decisions: int = 0
    strikes: int = 0
    timeouts: int = 0
    think_s: float = 0.0
    max_s: float = 0.0
    bot_reported_us: int = 0
    timeouts_in_time_by_bot_clock: int = 0
    """Timeouts charged although the bot's own clock said it answered in time."""
    cpu_s: float = 0.0
    """The bot's CPU time over its decisions, where measured (``cpu_measured`` of them)."""
    cpu_measured: int = 0
    ref_s: float = 0.0
    """The referee's own CPU time over this seat's decisions."""
    lag_s: float = 0.0
    """The referee's own stalls during this seat's decisions (added to the bot's time)."""
    offturn_cpu_s: float = 0.0
    """The bot's CPU time while it was not asked (docs/time-control.md, "Off-turn CPU")."""
    offturn_s: float = 0.0
    """The wall time of the spans ``offturn_cpu_s`` covers."""
    offturn_measured: bool = False
    """True once a span was measured (False: the seat's CPU cannot be read)."""
    offturn_mark: tuple[float, float] = (0.0, 0.0)
    """``(offturn_cpu_s, offturn_s)`` at the seat's last off-turn strike: what the next one counts from."""

    def add_offturn(self, cpu_s: float | None, wall_s: float) -> None:
        """Count one span the seat was not asked (nothing where its CPU was not measured)."""
        if cpu_s is not None:
            self.offturn_cpu_s += cpu_s
            self.offturn_s += wall_s
            self.offturn_measured = True


@dataclasses.dataclass
class GameOutcome:
    """How one game ended, with its record."""

    index: int
    game_id: str
    deal_seed: str
    ending: str
    winner: int | None
    result: GameResult
    forfeit: dict[str, Any] | None
    void: dict[str, Any] | None
    stats: list[SeatStats]
    events: list[SeatEvent]
    record: dict[str, Any]
    decision_latencies: list[float]

    @property
    def scored(self) -> bool:
        """False for a void game (not to be counted anywhere)."""
        return self.void is None


@dataclasses.dataclass
class MatchOutcome:
    """All games of a match."""

    spec: MatchSpec
    games: list[GameOutcome]
    seat_names: list[str]


class _Forfeit(Exception):
    def __init__(self, seat: int, reason: str, detail: str, decision: int | None = None) -> None:
        super().__init__(detail)
        self.seat = seat
        self.reason = reason
        self.detail = detail
        self.decision = decision
        """The seat's own decision index (0-based, in this game) it was lost at, if during one."""


async def play_game(
    spec: MatchSpec,
    index: int,
    seats: Sequence[Seat],
    clock: Clock | None = None,
    request_ids: Iterator[int] | None = None,
) -> GameOutcome:
    """Play game ``index`` of ``spec`` between ``seats`` (indexed by seat)."""
    clock = clock or MonotonicClock()
    request_ids = request_ids or itertools.count(1)
    n = spec.rules.players
    game_id = spec.game_id(index)
    state = GameState.new(spec.rules, spec.deal_seeds[index])
    stats = [SeatStats() for _ in range(n)]
    meta: list[dict[str, Any]] = []
    bank = [spec.time_control.bank_s] * n
    latencies: list[float] = []
    stop = _Stop(n)
    try:
        if not _lost_before(seats, index, stop):
            for s, seat in enumerate(seats):
                await seat.start_game(
                    index, game_id, spec.bot_seed(index, s), state.first,
                    tuple(state.scores), tuple(state.bags),
                )  # fmt: skip
            await _play_out(state, seats, spec, index, clock, request_ids, stats, meta, bank, latencies)
    except _Forfeit as f:
        stop.lose(f.seat, f.reason, f.detail, f.decision)
        # Tell the seat while its stream is open (a lost seat drops it).
        await seats[f.seat].notice("forfeit", f"forfeit:{f.reason}", f.detail)
    except PlatformFault as exc:
        stop.void_platform(str(exc))
        # The platform failed under the whole table (e.g. the Docker daemon
        # took every container with it): streams broken by it are no bot's fault.
        for seat in seats:
            failed = getattr(seat, "platform_failed", None)
            if failed is not None:
                failed(str(exc))
    except Exception as exc:  # an engine or loop bug must not take the tournament down
        log.exception("game %s void: platform error", game_id)
        stop.void_platform(f"{type(exc).__name__}: {exc}")
    return await _end_game(spec, index, state, seats, stop, stats, meta, latencies)


@dataclasses.dataclass
class _Stop:
    """How a game of ``players`` stopped before its natural end: a forfeit (who lost) or a void."""

    players: int
    losers: set[int] | None = None
    ending: str | None = None
    forfeit: dict[str, Any] | None = None
    void: dict[str, Any] | None = None

    def lose(self, seat: int, reason: str, detail: str, decision: int | None = None) -> None:
        """Seat ``seat``'s team forfeits the game."""
        n = self.players
        self.losers = {team_of(n, seat)}
        self.ending = f"forfeit:{reason}"
        self.forfeit = {
            "teams": [team_name(n, team_of(n, seat))],
            "seat": seat_name(n, seat),
            "reason": reason,
            "detail": detail,
        }
        if decision is not None:  # what `--decision K` reproduces (docs/record-format.md)
            self.forfeit["decision"] = decision

    def void_platform(self, detail: str) -> None:
        """The platform failed: the game is void."""
        self.ending = "void:platform"
        self.void = {"reason": "platform", "detail": detail}


def _lost_before(seats: Sequence[Seat], index: int, stop: _Stop) -> bool:
    """Whether a seat was lost before game ``index`` began: the game is then forfeit (both teams' if both lost one)."""
    n = stop.players
    gone = [(s, seat.lost()) for s, seat in enumerate(seats)]
    gone = [(s, g) for s, g in gone if g is not None]
    if not gone:
        return False
    s, g = gone[0]
    when = "lost in an earlier game" if index > 0 else "lost before the first game"
    stop.lose(s, g.reason, f"{when}: {g.detail}")
    teams = sorted({team_of(n, s) for s, _ in gone})
    if len(teams) == 2:
        stop.losers = set(teams)
        assert stop.forfeit is not None
        stop.forfeit["teams"] = [team_name(n, t) for t in teams]
    return True


async def _end_game(
    spec: MatchSpec, index: int, state: GameState, seats: Sequence[Seat], stop: _Stop,
    stats: list[SeatStats], meta: list[dict[str, Any]], latencies: list[float],
) -> GameOutcome:  # fmt: skip
    """The game's result (its natural end, or ``stop``'s), told to every seat, with its record."""
    events: list[SeatEvent] = []
    for s, seat in enumerate(seats):
        events.extend(seat.take_events())
        tail = getattr(seat, "offturn_tail", None)  # an OffTurnMeter (arena.match.seat)
        if tail is not None:
            stats[s].add_offturn(*tail())  # after its last answer, to the game's end
    ending = stop.ending
    if ending is None:
        assert state.result is not None
        result = state.result
        ending = result.ending
    else:
        result = stopped_result(state, ending, stop.losers)
    game_id = spec.game_id(index)
    for seat in seats:
        await seat.end_game(
            index, game_id, ending, result.winner, result, tuple(result.scores), tuple(result.bags)
        )
    record = _record(spec, index, state, seats, meta, events, stats, result, stop.forfeit, stop.void)
    return GameOutcome(
        index=index,
        game_id=game_id,
        deal_seed=spec.deal_seeds[index],
        ending=ending,
        winner=result.winner,
        result=result,
        forfeit=stop.forfeit,
        void=stop.void,
        stats=stats,
        events=events,
        record=record,
        decision_latencies=latencies,
    )


async def _play_out(
    state: GameState,
    seats: Sequence[Seat],
    spec: MatchSpec,
    index: int,
    clock: Clock,
    request_ids: Iterator[int],
    stats: list[SeatStats],
    meta: list[dict[str, Any]],
    bank: list[float],
    latencies: list[float],
) -> None:
    """Ask for decisions until the game is over; raises _Forfeit to stop it."""
    tc = spec.time_control
    # Under the CPU clock, each seat's wall allowance for this game (CPU_WALL_FACTOR): a bot
    # that sleeps, blocks or waits uses it up, where it would only meet the hard cap each time.
    wall_bank = [CPU_WALL_FACTOR * tc.bank_s] * len(seats)
    hands_reported = 0
    thread_time = time.thread_time
    while not state.is_over:
        ref_started = thread_time()  # the referee's own CPU for this decision (its loop thread)
        s = state.to_move
        assert s is not None
        if spec.undo is not None:  # unrated play: where this seat's decision could be taken back to
            spec.undo.mark(index, s, state, _Books(len(meta), copy.deepcopy(stats), bank[:], wall_bank[:], len(latencies)))
        rid = next(request_ids)
        entry = await _decide(state, seats[s], s, rid, tc, clock, stats[s], bank, wall_bank, latencies, meta)
        if spec.undo is not None and (point := spec.undo.take(state)) is not None:
            _rewind(point, state, meta, stats, bank, wall_bank, latencies)  # that answer is withdrawn
            continue
        if spec.observe is not None:  # a live feed (the ladder's spectators): after the decision is applied
            spec.observe(spec.game_id(index), state)
        if len(state.hand_results) > hands_reported:
            hand = state.hand_results[hands_reported]
            hands_reported += 1
            for other in seats:  # in turn, like start_game and end_game (no task per seat)
                await other.end_hand(hand, hand.played, spec.rules)
        ref_s = thread_time() - ref_started
        entry["ref_us"] = int(ref_s * 1e6)
        stats[s].ref_s += ref_s


async def _decide(
    state: GameState,
    seat: Seat,
    s: int,
    rid: int,
    tc: TimeControl,
    clock: Clock,
    st: SeatStats,
    bank: list[float],
    wall_bank: list[float],
    latencies: list[float],
    meta: list[dict[str, Any]],
) -> dict[str, Any]:
    """Seat ``s``'s decision: asked, timed, charged, applied or struck; its record entry (kept in ``meta``)."""
    cpu_clock = tc.cpu
    allowed = min(tc.move_s + bank[s], tc.hard_cap_s)
    # Under the CPU clock `allowed` is CPU time and the seat waits up to the
    # wall hard cap or what is left of its wall allowance (a sleeping bot is
    # still struck); else both are `allowed`.
    if cpu_clock:
        wall_bank[s] += CPU_WALL_FACTOR * tc.move_s
        wall_limit = min(tc.hard_cap_s, wall_bank[s])
    else:
        wall_limit = allowed
    prompt = DecisionPrompt(
        rid, state.view(s), int(tc.move_s * 1000), int(bank[s] * 1000), int(allowed * 1000),
        cpu_limit_s=allowed if cpu_clock else None,
    )  # fmt: skip
    started = clock.now()
    reply: SeatReply | None
    lag = 0.0
    cpu: float | None = None
    try:
        reply = await seat.decide(prompt, wall_limit)
    except TimeoutError as exc:
        reply = None
        lag = getattr(exc, "platform_lag_s", 0.0)
        cpu = getattr(exc, "cpu_s", None)
        st.add_offturn(getattr(exc, "offturn_cpu_s", None), getattr(exc, "offturn_s", 0.0))
    except SeatLost as lost:
        # Lost while asked its next decision (a crash, a dropped stream): that decision's index.
        raise _Forfeit(s, lost.reason, lost.detail, decision=st.decisions) from None
    ended = clock.now()
    if reply is not None:
        lag = reply.platform_lag_s
        cpu = reply.cpu_s
        st.add_offturn(reply.offturn_cpu_s, reply.offturn_s)
        if reply.received_at is not None:
            ended = reply.received_at  # judged by when it arrived (docs/protocol.md "Time")
    # The referee's own stalls are the platform's time, never the bot's.
    elapsed = max(0.0, ended - started - lag)
    # What the decision is charged: its wall time, or under the CPU clock
    # its CPU time (wall time where the seat's CPU cannot be read: never less).
    charged = cpu if cpu_clock and cpu is not None else elapsed
    late = reply is None or charged > allowed or elapsed > wall_limit
    entry = _count_decision(st, rid, elapsed, lag, cpu, reply)
    latencies.append(elapsed)
    bank[s] = max(0.0, bank[s] - max(0.0, min(charged, allowed) - tc.move_s))
    if cpu_clock:
        wall_bank[s] = max(0.0, wall_bank[s] - elapsed)
    strike, detail = _judge(state, reply, late, st, tc, cpu, allowed, wall_limit)
    if strike is not None:
        await _strike(state, seat, s, st, strike, detail, entry, reply, rid, tc, meta)
    meta.append(entry)
    return entry


def _count_decision(
    st: SeatStats, rid: int, elapsed: float, lag: float, cpu: float | None, reply: SeatReply | None
) -> dict[str, Any]:
    """Count a decision in its seat's stats; its record entry (time, lag, CPU, the bot's own figures)."""
    st.decisions += 1
    st.think_s += elapsed
    st.max_s = max(st.max_s, elapsed)
    entry: dict[str, Any] = {"ms": round(elapsed * 1000, 3), "request_id": rid}
    if lag:
        entry["lag_ms"] = round(lag * 1000, 3)
        st.lag_s += lag
    if cpu is not None:
        entry["cpu_ms"] = round(cpu * 1000, 3)
        st.cpu_s += cpu
        st.cpu_measured += 1
    if reply is not None and reply.think_us:
        entry["bot_us"] = reply.think_us
        st.bot_reported_us += reply.think_us
    if reply is not None and reply.note:
        entry["note"] = reply.note
    return entry


def _judge(
    state: GameState, reply: SeatReply | None, late: bool, st: SeatStats, tc: TimeControl,
    cpu: float | None, allowed: float, wall_limit: float,
) -> tuple[str | None, str]:  # fmt: skip
    """The decision's strike and why (None: its action was legal and is applied)."""
    strike: str | None = None
    detail = ""
    if late:
        strike, detail = "timeout", _timeout_detail(tc.cpu, cpu, allowed, wall_limit, tc.hard_cap_s)
        st.timeouts += 1
        if reply is not None and reply.think_us and reply.think_us / 1e6 <= allowed:
            st.timeouts_in_time_by_bot_clock += 1
    elif reply.malformed is not None:  # type: ignore[union-attr]
        strike, detail = "malformed", reply.malformed  # type: ignore[union-attr]
    elif (offturn := _offturn_over(st, tc)) is not None:
        strike, detail = "offturn", offturn
        st.offturn_mark = (st.offturn_cpu_s, st.offturn_s)  # the next strike needs as much again
    else:
        try:
            state.apply(reply.action)  # type: ignore[union-attr]
        except MalformedInputError as exc:
            strike, detail = "malformed", str(exc)
        except IllegalActionError as exc:
            strike, detail = "illegal", str(exc)
    return strike, detail


async def _strike(
    state: GameState, seat: Seat, s: int, st: SeatStats, strike: str, detail: str, entry: dict[str, Any],
    reply: SeatReply | None, rid: int, tc: TimeControl, meta: list[dict[str, Any]],
) -> None:  # fmt: skip
    """Play the default move for a struck decision and tell the seat; raises _Forfeit at its last strike."""
    kind = state.decision
    assert kind is not None
    fallback = default_action(state)
    state.apply(fallback)
    st.strikes += 1
    entry["default"] = strike
    # Which of the seat's decisions (0-based, its own count in this game: the
    # index `python -m arena_sdk.testing ... --decision K` takes), and why.
    entry["decision"] = st.decisions - 1
    entry["reason"] = detail[:300]
    if reply is not None and reply.raw:
        entry["answer"] = reply.raw[:200]
    await seat.notice("strike", strike, f"{detail}; played {action_to_json(kind, fallback)}", rid)
    if st.strikes >= tc.strikes_to_forfeit:
        meta.append(entry)
        reason = "timeout" if strike in ("timeout", "offturn") else "illegal"  # time, or the rules
        raise _Forfeit(s, reason, f"{st.strikes} strikes; last: {strike}: {detail}", decision=st.decisions - 1)


@dataclasses.dataclass
class _Books:
    """The loop's bookkeeping at a rewind point (arena.match.undo): what a rewind puts back."""

    entries: int
    stats: list[SeatStats]
    bank: list[float]
    wall_bank: list[float]
    latencies: int


def _rewind(point: RewindPoint, state: GameState, meta: list[dict[str, Any]], stats: list[SeatStats],
            bank: list[float], wall_bank: list[float], latencies: list[float]) -> None:  # fmt: skip
    """Put the game and the loop's bookkeeping back as they were at ``point`` (an undo in unrated play)."""
    books: _Books = point.books
    restore_state(state, point.state)
    del meta[books.entries :]
    del latencies[books.latencies :]
    stats[:] = books.stats
    bank[:] = books.bank
    wall_bank[:] = books.wall_bank


def _offturn_over(st: SeatStats, tc: TimeControl) -> str | None:
    """Why the seat is struck for its CPU while not asked, or None (docs/time-control.md, "Off-turn CPU").

    Counted since the game's start or the seat's last off-turn strike: more than
    ``offturn_free_s`` plus ``offturn_share`` of the wall time it was not asked.
    """
    cpu = st.offturn_cpu_s - st.offturn_mark[0]
    if cpu <= tc.offturn_free_s:  # the common case: no more arithmetic
        return None
    wall = st.offturn_s - st.offturn_mark[1]
    allowed = tc.offturn_free_s + tc.offturn_share * wall
    if cpu <= allowed:
        return None
    return (
        f"used {cpu:.3f} s of CPU while not asked ({wall:.3f} s of wall time), more than the "
        f"{allowed:.3f} s allowed ({tc.offturn_free_s:g} s + {tc.offturn_share:.0%} of that wall time)"
    )


def _timeout_detail(cpu_clock: bool, cpu: float | None, allowed: float, wall_limit: float, hard_cap: float) -> str:
    """Why a decision timed out, in the clock's terms."""
    if not cpu_clock:
        return f"no answer within {allowed:.3f} s"
    if cpu is None:
        return f"no answer within {allowed:.3f} s (its CPU could not be read: wall time counted)"
    if cpu > allowed:
        return f"used {cpu:.3f} s of CPU, more than the {allowed:.3f} s allowed"
    if wall_limit < hard_cap:
        return (
            f"no answer within the {wall_limit:.3f} s of wall time left of its allowance for the game "
            f"({CPU_WALL_FACTOR:g} x its CPU allowance; it used {cpu:.3f} s of CPU)"
        )
    return f"no answer within the hard cap of {wall_limit:.3f} s wall time (it used {cpu:.3f} s of CPU)"


def _record(
    spec: MatchSpec,
    index: int,
    state: GameState,
    seats: Sequence[Seat],
    meta: list[dict[str, Any]],
    events: list[SeatEvent],
    stats: list[SeatStats],
    result: GameResult,
    forfeit: dict[str, Any] | None,
    void: dict[str, Any] | None,
) -> dict[str, Any]:
    """The version-2 record: the engine's record plus the referee's fields."""
    n = spec.rules.players
    record = record_from_state(state, game_id=spec.game_id(index))
    entries = iter(meta)
    for hand in record["hands"]:
        for action in hand["actions"]:
            action.update(next(entries, {}))
    record["match_id"] = spec.match_id
    if spec.time_control.cpu:
        # Which clock judged the decisions (their ``ms`` may pass the move time unstruck).
        record["meta"] = {**record.get("meta", {}), "clock": "cpu"}
    offturn = {
        seat_name(n, s): {"cpu_ms": round(st.offturn_cpu_s * 1000, 3), "ms": round(st.offturn_s * 1000, 3)}
        for s, st in enumerate(stats)
        if st.offturn_measured
    }
    if offturn:
        # Under meta, which every reader takes as it is: records with it replay in older arenas too.
        record["meta"] = {**record.get("meta", {}), "offturn": offturn}
    record["seats"] = {
        seat_name(n, s): {"name": seat.name, "version": seat.version} for s, seat in enumerate(seats)
    }
    # Each seat's bot seed, so a decision can be asked again of a bot exactly as it was asked.
    record["bot_seeds"] = {seat_name(n, s): spec.bot_seed(index, s) for s in range(n)}
    record["strikes"] = {seat_name(n, s): stats[s].strikes for s in range(n)}
    record["events"] = [
        {"seat": seat_name(n, e.seat), "code": e.code, "detail": e.detail[:300], "request_id": e.request_id}
        for e in events
    ]
    out = game_result_to_json(n, result)
    out["ending"] = result.ending
    if forfeit is not None:
        out["forfeit"] = forfeit
    if void is not None:
        out["void"] = void
    record["result"] = out
    return record


async def run_match_loop(
    spec: MatchSpec,
    seats: Sequence[Seat],
    clock: Clock | None = None,
    on_game_end: Callable[[GameOutcome], Any] | None = None,
) -> MatchOutcome:
    """Play every game of ``spec`` with the same seats, in order.

    ``on_game_end`` is called with each game's outcome as soon as it is known
    (to save records and show progress as the match goes).
    """
    request_ids = itertools.count(1)
    games = []
    for index in range(len(spec.deal_seeds)):
        game = await play_game(spec, index, seats, clock, request_ids)
        games.append(game)
        if on_game_end is not None:
            on_game_end(game)
    return MatchOutcome(spec=spec, games=games, seat_names=[s.name for s in seats])
