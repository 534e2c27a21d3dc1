#!/usr/bin/env python
"""Referee round trip: our decision path against raw grpc.aio ping-pong, plus throughput.

What is measured
----------------
Every figure is taken on the *server* (referee) side, the way the match loop
times a decision: from just before the request is built/sent to just after
the answer is in hand.  Clients always run in separate processes started with
this interpreter, over a Unix-domain socket, with the arena's own gRPC server
and channel options.

1. ``raw-K``: a tiny grpc.aio server inside this bench serving the
   ``arena.v1.Referee`` service with an echo servicer.  K client processes
   each open one ``Play`` stream and answer every ``RefereeMessage`` they read
   with one ``BotMessage``.  The server asks the K streams in turn (like a
   match asks its seats) and times ``await write(); await read()``.  The
   request is a ``DecisionRequest`` holding only a request id; the reply an
   ``Answer`` with a card.  No Python conversion work on either side.
2. ``ours-2p`` / ``ours-4p``: a real :class:`RefereeServer` and
   :func:`host_match` with the SDK client in every seat (``bench/bots/instant.py``:
   bid 3, first legal card), one process per seat; the figure is
   ``GameOutcome.decision_latencies`` (request_message, the write, the bot's
   whole SDK path, the answer's conversion, the wake-up of the match loop).
   Games are capped at a few hands (``max_hands``) so a run fits its time
   slice; the per-decision path is the same as in a full game.
   ``ours-2p`` is compared with ``raw-2``, ``ours-4p`` with ``raw-4``.
   Two more contenders split the gap: ``raw-4-shaped`` is ``raw-4`` with a
   realistic 4-player request (about 250 bytes) whose answer is handed over
   by a reader task and a future, the referee's structure (transport shape,
   no conversion work); ``mini-4p`` is the real referee against
   ``bench/bots/minimal.py``, a client that answers straight from the message
   without the SDK.  So ours-4p - mini-4p is the SDK's share and mini-4p -
   raw-4-shaped the referee's.
3. ``throughput``: one whole match of four random bots (``bench/bots/rand.py``,
   uniformly random legal decisions from ``self.rng``), 4-player ``pagat``
   uncapped, ``--games`` games: decisions per second over the match wall time
   (``host_match`` call to return: bot start-up, joins and exits included) and
   over the play time (first game start to last game end).

Every run also reports CPU per decision (``time.process_time``, all threads):
the server process over the measured span, and the client processes from
their first request to their last.  The first ``WARMUP`` decisions of every
run are dropped.  Contenders run in turn for ``--seconds`` each, ``--rounds``
times, the order reversed every other round (A B C, C B A, ...), so slow
phases of the shared machine hit all alike; samples are pooled over rounds
(the per-round p50s are printed to show the noise).  Nothing is pinned (the
machine has 2 cores: the referee and the bot to move).  Bar: ours/raw <= 1.5x
at p50 and p99 (ours-2p against raw-2, ours-4p against raw-4).

Profile (skip with ``--no-profile``): an instrumented 4-player match (where
the time of one decision goes, step by step, referee and bot side), cProfile
of the referee (this process) and of the bot of seat 0, and micro-timings of
the conversion functions over the decisions of real games, with two what-ifs
(prototypes of suggested changes, checked to give identical results): the
request built in place in one ``RefereeMessage``, and the View built with
direct dict lookups.  Micro-timings are warm and in a tight loop; the same
code costs 2-4x as much on the live path (cold caches after each wait).

Every process of the run (this one and the clients) uses the transport the
referee and the SDK use: gRPC's polling I/O manager (``arena_sdk.transport``).
``GRPC_EXPERIMENTS= python bench/referee.py`` measures gRPC's default
transport instead, the raw contenders included.

Run: ``python bench/referee.py [--seconds 1.5] [--rounds 3] [--games 2] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import io
import json
import math
import os
import platform
import pstats
import random
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# Before grpc is imported: the raw contenders get the transport the referee and the SDK use.
import arena_sdk.transport

arena_sdk.transport.prefer_polling_transport()  # before grpc loads (see its docstring)
import grpc

from arena.match import MatchSpec, TimeControl, game_seeds
from arena.match.loop import default_action
from arena.referee import session as session_mod
from arena.referee.host import ENV_ADDRESS, ENV_TOKEN, host_match
from arena.referee.server import RefereeServer, server_options
from arena.referee.session import RemoteSeat, describe_answer
from arena.sandbox.local import LocalProcess
from arena_sdk.bot import BotDriver
from arena_sdk.client import CHANNEL_OPTIONS
from arena_sdk.engine import Decision, GameState
from arena_sdk.engine.ruleset import Ruleset, resolve_ruleset
from arena_sdk.protocol import (
    PROTOCOL_VERSION,
    answer_from_proto,
    answer_to_proto,
    request_message,
    request_to_proto,
)
from arena_sdk.view import View
from arena_sdk.wire import arena_pb2 as pb
from arena_sdk.wire import arena_pb2_grpc as pb_grpc

HERE = Path(__file__).resolve().parent
BOTS = HERE / "bots"
INSTANT_BOT = BOTS / "instant.py"
RANDOM_BOT = BOTS / "rand.py"
MINIMAL_BOT = BOTS / "minimal.py"
#: Decisions dropped at the start of every run (connection and cache warm-up).
WARMUP = 50
#: Hands per game in the latency matches (keeps a game well inside a time slice).
LATENCY_MAX_HANDS = 6
#: Decisions per hand, roughly: 4 bids + 52 plays; 2 players: blind nil, 26 draws, bids, 26 plays.
DECISIONS_PER_HAND = {4: 56, 2: 56}
BAR = 1.5
#: What we aim for (issue #15): four players within 1.3x of raw gRPC with as many streams.
GOAL = 1.3


def transport_name() -> str:
    """Which gRPC transport this run measures (arena_sdk.transport; GRPC_EXPERIMENTS= keeps gRPC's default)."""
    value = os.environ.get("GRPC_EXPERIMENTS", "")
    if value == arena_sdk.transport.TUNED_EXPERIMENTS:
        return f"polling (GRPC_EXPERIMENTS={value})"
    return f"GRPC_EXPERIMENTS={value}" if value else "gRPC's default (EventEngine)"


# ---------------------------------------------------------------------- statistics


def summary(samples_s: Sequence[float]) -> dict[str, float]:
    """p50, p99, mean (and count, max) in microseconds, nearest rank."""
    xs = sorted(samples_s)
    n = len(xs)
    if n == 0:
        return {"n": 0, "p50_us": math.nan, "p99_us": math.nan, "mean_us": math.nan, "max_us": math.nan}

    def q(p: float) -> float:
        return xs[min(n - 1, int(p * n))] * 1e6

    return {
        "n": n,
        "p50_us": round(q(0.50), 1),
        "p90_us": round(q(0.90), 1),
        "p99_us": round(q(0.99), 1),
        "mean_us": round(statistics.fmean(xs) * 1e6, 1),
        "max_us": round(xs[-1] * 1e6, 1),
    }


class GcWatch:
    """Counts garbage collections (and their pauses) in this process while active."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []
        self._start = 0.0

    def _cb(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.pauses.append((info["generation"], time.perf_counter() - self._start))

    def __enter__(self) -> GcWatch:
        gc.callbacks.append(self._cb)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._cb)

    def report(self) -> dict[str, Any]:
        by_gen: dict[int, list[float]] = {}
        for g, d in self.pauses:
            by_gen.setdefault(g, []).append(d)
        return {
            f"gen{g}": {"count": len(ds), "max_us": round(max(ds) * 1e6, 1), "total_ms": round(sum(ds) * 1e3, 2)}
            for g, ds in sorted(by_gen.items())
        }


# ---------------------------------------------------------------------- raw ping-pong


class _Stream:
    def __init__(self, context: grpc.aio.ServicerContext) -> None:
        self.context = context
        self.done = asyncio.Event()
        self.future: asyncio.Future[Any] | None = None


class EchoHub(pb_grpc.RefereeServicer):
    """A bare ``arena.v1.Referee``: streams join, then the hub asks them in turn."""

    def __init__(self, streams: int, reader_task: bool) -> None:
        self.want = streams
        self.reader_task = reader_task
        self.streams: list[_Stream] = []
        self.joined = asyncio.Event()

    async def Play(self, request_iterator: object, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        await context.read()  # the Join
        stream = _Stream(context)
        self.streams.append(stream)
        if len(self.streams) == self.want:
            self.joined.set()
        reader = asyncio.ensure_future(self._read(stream)) if self.reader_task else None
        await stream.done.wait()
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader

    async def _read(self, stream: _Stream) -> None:
        """The referee's structure: a reader task hands each answer to a waiting future."""
        while True:
            message = await stream.context.read()
            if message is grpc.aio.EOF:
                return
            future = stream.future
            if future is not None and not future.done():
                stream.future = None
                future.set_result(message)


async def run_raw(
    streams: int, seconds: float, work: Path, *, payload: pb.RefereeMessage | None = None,
    reader_task: bool = False,
) -> dict[str, Any]:  # fmt: skip
    """Ping-pong for ``seconds`` with ``streams`` client processes; server-side round trips."""
    address = f"unix:{work}/raw-{os.getpid()}-{time.monotonic_ns()}.sock"
    hub = EchoHub(streams, reader_task)
    server = grpc.aio.server(options=server_options())
    pb_grpc.add_RefereeServicer_to_server(hub, server)
    server.add_insecure_port(address)
    await server.start()
    cpu_files = [work / f"cpu-raw-{time.monotonic_ns()}-{i}.json" for i in range(streams)]
    clients = [
        await asyncio.create_subprocess_exec(
            sys.executable, str(Path(__file__).resolve()), "--role", "client", "--address", address,
            "--cpu-out", str(cpu_files[i]),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        for i in range(streams)
    ]
    loop = asyncio.get_running_loop()
    try:
        await asyncio.wait_for(hub.joined.wait(), 30)
        message = pb.RefereeMessage()
        message.CopyFrom(payload if payload is not None else pb.RefereeMessage(request=pb.DecisionRequest()))
        request = message.request
        clock = time.perf_counter
        samples: list[float] = []
        writes: list[float] = []
        order = hub.streams
        rid = 0
        deadline = clock() + seconds
        cpu_start = time.process_time()
        while True:
            for stream in order:
                rid += 1
                request.request_id = rid
                ctx = stream.context
                if reader_task:
                    started = clock()
                    future = loop.create_future()
                    stream.future = future
                    await ctx.write(message)
                    written = clock()
                    answer = await future
                else:
                    started = clock()
                    await ctx.write(message)
                    written = clock()
                    answer = await ctx.read()
                samples.append(clock() - started)
                writes.append(written - started)
                assert answer.answer.request_id == rid, "the echo client answered another request"
            if clock() > deadline:
                break
        server_cpu = (time.process_time() - cpu_start) / rid
    finally:
        for stream in hub.streams:
            stream.done.set()
        await asyncio.gather(*(asyncio.wait_for(c.wait(), 10) for c in clients), return_exceptions=True)
        for c in clients:
            if c.returncode is None:
                c.kill()
        await server.stop(0)
    return {
        "samples": samples[WARMUP:], "write": writes[WARMUP:],
        "cpu": {"server_us": server_cpu * 1e6, "clients_us": _client_cpu(cpu_files)},
        "clients_gc": _client_gc(cpu_files),
    }  # fmt: skip


def _client_cpu(files: Sequence[Path]) -> float:
    """All clients' CPU (from their first request to their last) per decision, in µs."""
    cpu = n = 0.0
    for path in files:
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(path.read_text())
            cpu += data["cpu_s"]
            n += data["decisions"]
    return cpu / n * 1e6 if n else math.nan


def _client_gc(files: Sequence[Path]) -> dict[str, float]:
    """The clients' garbage collections: per 1000 decisions, and the longest pause (µs)."""
    count = n = 0
    longest = 0.0
    for path in files:
        with contextlib.suppress(OSError, ValueError, KeyError):
            data = json.loads(path.read_text())
            count += data["gc_count"]
            n += data["decisions"]
            longest = max(longest, data["gc_max_s"])
    return {"per_1000_decisions": round(count / n * 1000, 2) if n else math.nan, "max_us": round(longest * 1e6, 1)}


async def raw_client(address: str, cpu_out: str | None) -> None:
    """The echo client: one Play stream, one BotMessage per RefereeMessage read."""
    sys.path.insert(0, str(BOTS))
    from _hooks import CpuMeter  # bench/bots/_hooks.py

    meter = CpuMeter(cpu_out)
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        call = pb_grpc.RefereeStub(channel).Play()
        await call.write(pb.BotMessage(join=pb.Join(token="raw", protocol_version=PROTOCOL_VERSION)))
        reply = pb.BotMessage(answer=pb.Answer(card="SA"))
        answer = reply.answer
        while True:
            message = await call.read()
            if message is grpc.aio.EOF:
                break
            meter.tick()
            answer.request_id = message.request.request_id
            await call.write(reply)


# ---------------------------------------------------------------------- our referee


class TimedSeat(RemoteSeat):
    """A RemoteSeat that notes when the first game starts (to time the play alone)."""

    first_start: float | None = None
    first_cpu = 0.0

    async def start_game(self, *args: Any, **kwargs: Any) -> None:
        if TimedSeat.first_start is None:
            TimedSeat.first_start = time.perf_counter()
            TimedSeat.first_cpu = time.process_time()
        await super().start_game(*args, **kwargs)


def env_launcher(script: Path, extra_env: Callable[[int], dict[str, str]] | None = None) -> Any:
    """Like ``command_launcher(f"python {script}")``, with extra environment per seat."""

    async def launch(seat: int, address: str, token: str, log_path: Path | None) -> LocalProcess:
        env = {ENV_ADDRESS: address, ENV_TOKEN: token, **(extra_env(seat) if extra_env else {})}
        return await LocalProcess.start(f"python {shlex.quote(str(script))}", env, log_path=log_path)

    return launch


async def run_match(
    rules: Ruleset, games: int, seed: str, script: Path, work: Path, *,
    extra_env: Callable[[int], dict[str, str]] | None = None,
    clock: Any = None, seat_class: type[RemoteSeat] = TimedSeat,
) -> dict[str, Any]:  # fmt: skip
    """One match on a fresh RefereeServer; every seat a bot process running ``script``."""
    n = rules.players
    tag = f"{n}p-{seed}-{time.monotonic_ns()}"
    address = f"unix:{work}/ref-{tag}.sock"
    server = await RefereeServer().start([address])
    spec = MatchSpec(f"bench-{tag}", rules, tuple(game_seeds(seed, games)), TimeControl())
    seats = [seat_class(s, spec.match_id) for s in range(n)]
    TimedSeat.first_start = None
    ended: list[tuple[float, float]] = []
    log_dir = work / f"logs-{tag}"
    cpu_files = [work / f"cpu-{tag}-{s}.json" for s in range(n)]

    def env(seat: int) -> dict[str, str]:
        return {"BENCH_CPU": str(cpu_files[seat]), **(extra_env(seat) if extra_env else {})}

    try:
        with GcWatch() as gcw:
            started = time.perf_counter()
            hosted = await host_match(
                server, spec, [env_launcher(script, env)] * n, address,
                seats=seats, log_dir=log_dir, clock=clock,
                on_game_end=lambda g: ended.append((time.perf_counter(), time.process_time())),
            )  # fmt: skip
            wall = time.perf_counter() - started
    finally:
        await server.stop(0)
    outcome = hosted.outcome
    bad = [g.ending for g in outcome.games if g.forfeit or g.void or any(st.strikes for st in g.stats)]
    if bad or any(c not in (0, None) for c in hosted.exit_codes):
        logs = "".join(p.read_text(errors="replace")[-2000:] for p in sorted(log_dir.glob("*.log")))
        raise RuntimeError(f"benchmark match went wrong: {bad} exit codes {hosted.exit_codes}\n{logs}")
    latencies = [x for g in outcome.games for x in g.decision_latencies]
    # Decisions that come right after a game start or a hand end (the bots are
    # still digesting a notification): the first action of every hand.
    firsts: list[float] = []
    rest: list[float] = []
    for g in outcome.games:
        for hand in g.record["hands"]:
            for i, action in enumerate(hand["actions"]):
                if "ms" in action:
                    (firsts if i == 0 else rest).append(action["ms"] / 1e3)
    assert ended and TimedSeat.first_start is not None
    play = ended[-1][0] - TimedSeat.first_start
    server_cpu = (ended[-1][1] - TimedSeat.first_cpu) / len(latencies)
    return {
        "samples": latencies[WARMUP:],
        "first_of_hand": firsts,
        "rest_of_hand": rest,
        "decisions": len(latencies),
        "games": len(outcome.games),
        "hands": sum(len(g.record["hands"]) for g in outcome.games),
        "cpu": {"server_us": server_cpu * 1e6, "clients_us": _client_cpu(cpu_files)},
        "clients_gc": _client_gc(cpu_files),
        "wall_s": wall,
        "play_s": play,
        "gc": gcw.report(),
        "outcome": outcome,
    }


# ---------------------------------------------------------------------- corpus of real requests


def corpus(rules: Ruleset, seed: str, limit: int) -> list[tuple[int, Any, Any]]:
    """(seat, engine view, the action taken) for the decisions of random games."""
    rng = random.Random(seed)
    out: list[tuple[int, Any, Any]] = []
    g = 0
    while len(out) < limit:
        state = GameState.new(rules, f"{seed}/{g}")
        g += 1
        while not state.is_over and len(out) < limit:
            s = state.to_move
            view = state.view(s)
            if state.decision is Decision.EXCHANGE:
                action = default_action(state)
            else:
                action = rng.choice(state.legal_actions())
            out.append((s, view, action))
            state.apply(action)
    return out


def payload_4p() -> pb.RefereeMessage:
    """A realistic mid-hand 4-player request (6 tricks done, 2 cards on the table)."""
    rules = resolve_ruleset("pagat")
    for _, view, _ in corpus(rules, "payload", 60):
        if view.decision is Decision.PLAY and len(view.tricks) == 6 and len(view.current_trick) == 2:
            return pb.RefereeMessage(request=request_to_proto(1, view, 1000, 30000))
    raise RuntimeError("no mid-hand view found")


def time_each(fn: Callable[[Any], Any], items: Sequence[Any], repeat: int = 3) -> float:
    """Mean microseconds per call of ``fn(item)`` over ``items`` (best of ``repeat`` passes)."""
    best = math.inf
    clock = time.perf_counter
    for _ in range(repeat):
        started = clock()
        for item in items:
            fn(item)
        best = min(best, clock() - started)
    return best / len(items) * 1e6


def micro(rules: Ruleset, limit: int) -> dict[str, float]:
    """Per-call cost (µs, mean over the decisions of real games) of each step of a decision."""
    gc.collect()
    items = corpus(rules, f"micro-{rules.players}", limit)
    # Requests as the referee builds them, and the messages as the bot receives them.
    reqs = [request_to_proto(i + 1, v, 1000, 30000) for i, (_, v, _) in enumerate(items)]
    msgs = [pb.RefereeMessage(request=r) for r in reqs]
    wire = [m.SerializeToString() for m in msgs]
    parsed = [pb.RefereeMessage.FromString(w) for w in wire]
    kinds = [v.decision for _, v, _ in items]
    answers = [answer_to_proto(i + 1, k, a, 5) for i, (k, (_, _, a)) in enumerate(zip(kinds, items, strict=True))]
    bot_msgs = [pb.BotMessage(answer=a) for a in answers]
    bot_wire = [m.SerializeToString() for m in bot_msgs]
    bot_parsed = [pb.BotMessage.FromString(w) for w in bot_wire]
    welcome = pb.RefereeMessage(
        welcome=pb.Welcome(ruleset_json=json.dumps(rules.to_dict()), players=rules.players)
    )

    # One driver per seat, fed its own requests in order (the incremental trick parse applies).
    sys.path.insert(0, str(BOTS))
    from instant import InstantBot  # bench/bots/instant.py

    def drivers() -> dict[int, BotDriver]:
        ds = {}
        for s in range(rules.players):
            d = BotDriver(InstantBot())
            d.handle(welcome)
            ds[s] = d
        return ds

    seat_of = [s for s, _, _ in items]
    ds = drivers()
    handle_items = list(zip(seat_of, parsed, strict=True))

    def handle(item: tuple[int, pb.RefereeMessage]) -> Any:
        return ds[item[0]].handle(item[1])

    # View.from_request with the driver's incremental tricks (known tricks of the hand).
    fr_items = []
    last: dict[int, View] = {}
    for s, m in handle_items:
        prev = last.get(s)
        known = prev.tricks if prev is not None and prev.hand_number == m.request.view.hand_number else None  # parsed
        v = View.from_request(rules, m.request, known)
        last[s] = v
        fr_items.append((m.request, known))
    out = {
        "referee: request_message (built in place)": time_each(
            lambda i: request_message(i + 1, items[i][1], 1000, 30000), range(len(items))
        ),
        "referee: RefereeMessage.SerializeToString (in grpc write)": time_each(lambda m: m.SerializeToString(), msgs),
        "bot: RefereeMessage.FromString (in grpc read)": time_each(pb.RefereeMessage.FromString, wire),
        "bot: View.from_request (incremental tricks)": time_each(lambda it: View.from_request(rules, *it), fr_items),
        "bot: View.from_request (no known tricks)": time_each(lambda it: View.from_request(rules, it[0]), fr_items),
        "bot: answer_to_proto": time_each(
            lambda i: answer_to_proto(i + 1, kinds[i], items[i][2], 5), range(len(items))
        ),
        "bot: BotMessage(answer=a) (copy)": time_each(lambda a: pb.BotMessage(answer=a), answers),
        "bot: BotMessage.SerializeToString (in grpc write)": time_each(lambda m: m.SerializeToString(), bot_msgs),
        "referee: BotMessage.FromString (in grpc read)": time_each(pb.BotMessage.FromString, bot_wire),
        "referee: answer_from_proto": time_each(
            lambda i: answer_from_proto(kinds[i], bot_parsed[i].answer), range(len(items))
        ),
        "referee: describe_answer": time_each(lambda m: describe_answer(m.answer), bot_parsed),
        "referee: RemoteSeat._reply (describe+answer_from_proto+SeatReply)": time_each(
            lambda i: _SEAT._reply(kinds[i], bot_parsed[i].answer), range(len(items))
        ),
    }
    # The whole SDK path of one decision (fresh drivers, fed in order, once).
    ds = drivers()
    started = time.perf_counter()
    for it in handle_items:
        handle(it)
    out["bot: BotDriver.handle (whole SDK decision path)"] = (time.perf_counter() - started) / len(items) * 1e6
    # Engine work the referee does per decision outside the timed window.
    out["engine: state.view + state.apply (outside the latency window)"] = _engine_cost(rules, f"micro-{rules.players}", limit)
    out["_request_bytes_mean"] = statistics.fmean(len(w) for w in wire)
    out["_decisions"] = len(items)
    return {k: round(v, 2) for k, v in out.items()}


_SEAT = RemoteSeat(0, "micro")


def _engine_cost(rules: Ruleset, seed: str, limit: int) -> float:
    """µs per decision of state.view(seat) + state.apply(action) (replaying the corpus's actions)."""
    items = corpus(rules, seed, limit)
    best = math.inf
    for _ in range(3):
        g = 0
        state = GameState.new(rules, f"{seed}/{g}")
        started = time.perf_counter()
        for _, _, action in items:
            if state.is_over:
                g += 1
                state = GameState.new(rules, f"{seed}/{g}")
            state.view(state.to_move)
            state.apply(action)
        best = min(best, time.perf_counter() - started)
    return best / len(items) * 1e6


# ---------------------------------------------------------------------- instrumented match


class TraceClock:
    """The match loop's clock; notes the time of every now() call."""

    def __init__(self) -> None:
        self.marks: list[float] = []

    def now(self) -> float:
        t = time.perf_counter()
        self.marks.append(t)
        return t


class TraceSeat(TimedSeat):
    """Notes when the request is built, written and answered (instrumented runs only)."""

    trace: list[dict[str, float]] = []

    def attach(self, write: Any, name: str, version: str) -> None:
        clock = time.perf_counter
        trace = TraceSeat.trace

        async def timed_write(message: pb.RefereeMessage) -> Any:
            is_request = message.WhichOneof("message") == "request"
            if is_request:
                trace[-1]["write_start"] = clock()
            result = await write(message)
            if is_request:
                trace[-1]["write_end"] = clock()
            return result

        super().attach(timed_write, name, version)

    def receive(self, message: pb.BotMessage) -> None:
        TraceSeat.trace[-1]["receive"] = time.perf_counter()
        super().receive(message)


def _install_request_trace() -> Callable[[], None]:
    """Wrap request_message as the session module calls it; returns the undo."""
    original = session_mod.request_message
    clock = time.perf_counter

    def traced(*args: Any, **kwargs: Any) -> Any:
        entry = {"r2p_start": clock()}
        TraceSeat.trace.append(entry)
        out = original(*args, **kwargs)
        entry["r2p_end"] = clock()
        return out

    session_mod.request_message = traced

    def undo() -> None:
        session_mod.request_message = original

    return undo


async def instrumented(rules: Ruleset, games: int, work: Path) -> dict[str, Any]:
    """Split each decision of an instant-bot match into its steps (referee + bot side)."""
    TraceSeat.trace = []
    clock = TraceClock()
    traces = {s: work / f"trace-{s}-{time.monotonic_ns()}.json" for s in range(rules.players)}
    undo = _install_request_trace()
    try:
        res = await run_match(
            rules, games, "instrumented", INSTANT_BOT, work, clock=clock, seat_class=TraceSeat,
            extra_env=lambda s: {"BENCH_TRACE": str(traces[s])},
        )  # fmt: skip
    finally:
        undo()
    marks = clock.marks  # pairs: before decide, after decide
    starts, ends = marks[0::2], marks[1::2]
    rows = TraceSeat.trace
    assert len(rows) == len(starts) == len(ends), (len(rows), len(starts), len(ends))
    parts: dict[str, list[float]] = {
        "loop: clock start -> request_message start": [],
        "referee: request_message": [],
        "referee: RefereeMessage(request=...) + send() entry": [],
        "grpc: await context.write(request)": [],
        "wire+bot: write returned -> answer read by the referee's reader task": [],
        "referee: receive() -> match loop resumes (reply + future wake-up)": [],
        "total (decision_latencies)": [],
    }
    for row, a, b in list(zip(rows, starts, ends, strict=True))[WARMUP:]:
        parts["loop: clock start -> request_message start"].append(row["r2p_start"] - a)
        parts["referee: request_message"].append(row["r2p_end"] - row["r2p_start"])
        parts["referee: RefereeMessage(request=...) + send() entry"].append(row["write_start"] - row["r2p_end"])
        parts["grpc: await context.write(request)"].append(row["write_end"] - row["write_start"])
        parts["wire+bot: write returned -> answer read by the referee's reader task"].append(
            row["receive"] - row["write_end"]
        )
        parts["referee: receive() -> match loop resumes (reply + future wake-up)"].append(b - row["receive"])
        parts["total (decision_latencies)"].append(b - a)
    handle: list[float] = []
    for path in traces.values():
        with contextlib.suppress(OSError, ValueError):
            handle.extend(json.loads(path.read_text())["handle_us"])
    out = {k: summary(v) for k, v in parts.items()}
    out["bot: BotDriver.handle (inside the wire+bot step)"] = summary([h / 1e6 for h in handle[WARMUP:]])
    return {"steps": out, "decisions": res["decisions"]}


# ---------------------------------------------------------------------- cProfile


def top_stats(stats: pstats.Stats, per: int, limit: int) -> list[dict[str, Any]]:
    """The functions with the most own time, in µs per decision."""
    rows = []
    for (file, line, name), (cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append((tt, ct, nc, f"{_short(file)}:{line}({name})"))
    rows.sort(reverse=True)
    return [
        {"function": f, "calls_per_decision": round(nc / per, 2), "own_us": round(tt / per * 1e6, 2),
         "cum_us": round(ct / per * 1e6, 2)}
        for tt, ct, nc, f in rows[:limit]
    ]  # fmt: skip


def _short(file: str) -> str:
    for marker in ("site-packages/", "/work/main/", "lib/python3"):
        if marker in file:
            return file.split(marker, 1)[1]
    return file


async def profiled(rules: Ruleset, games: int, work: Path, limit: int = 25) -> dict[str, Any]:
    """cProfile the referee (this process) and the bot of seat 0 over an instant-bot match."""
    bot_prof = work / f"bot0-{time.monotonic_ns()}.prof"
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        res = await run_match(
            rules, games, "profiled", INSTANT_BOT, work,
            extra_env=lambda s: {"BENCH_PROFILE": str(bot_prof)} if s == 0 else {},
        )  # fmt: skip
    finally:
        profiler.disable()
    n = res["decisions"]
    ref = pstats.Stats(profiler, stream=io.StringIO())
    out: dict[str, Any] = {"decisions": n, "referee": top_stats(ref, n, limit)}
    if bot_prof.exists():
        bot = pstats.Stats(str(bot_prof), stream=io.StringIO())
        seat0 = sum(1 for g in res["outcome"].games for h in g.record["hands"] for a in h["actions"]
                    if a["seat"] in ("N", "A"))  # fmt: skip
        out["bot_seat0_decisions"] = seat0
        out["bot"] = top_stats(bot, seat0, limit)
    return out


# ---------------------------------------------------------------------- the run


def _ours_games(rate: float, seconds: float, players: int) -> int:
    per_game = LATENCY_MAX_HANDS * DECISIONS_PER_HAND[players]
    return max(1, math.ceil((seconds * rate + WARMUP) / per_game))


async def bench(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-referee-"))
    try:
        return await _bench(args, say, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def _bench(args: argparse.Namespace, say: Callable[[str], None], work: Path) -> dict[str, Any]:
    load_start = os.getloadavg()
    r4 = resolve_ruleset("pagat", {"max_hands": LATENCY_MAX_HANDS})
    r2 = resolve_ruleset("two-player", {"max_hands": LATENCY_MAX_HANDS})
    payload = payload_4p()
    rate = {"ours-2p": 2000.0, "mini-4p": 2000.0, "ours-4p": 2000.0}  # decisions/s, refined per run

    async def ours(name: str, r: int) -> dict[str, Any]:
        players = int(name[-2])
        rules = r4 if players == 4 else r2
        script = MINIMAL_BOT if name.startswith("mini") else INSTANT_BOT
        res = await run_match(rules, _ours_games(rate[name], args.seconds, players), f"lat-{r}", script, work)
        rate[name] = res["decisions"] / res["play_s"]
        return res

    contenders: dict[str, Callable[[int], Any]] = {
        "raw-1": lambda r: run_raw(1, args.seconds, work),
        "raw-2": lambda r: run_raw(2, args.seconds, work),
        "ours-2p": lambda r: ours("ours-2p", r),
        "raw-4": lambda r: run_raw(4, args.seconds, work),
        "raw-4-shaped": lambda r: run_raw(4, args.seconds, work, payload=payload, reader_task=True),
        "mini-4p": lambda r: ours("mini-4p", r),
        "ours-4p": lambda r: ours("ours-4p", r),
    }
    samples: dict[str, list[float]] = {k: [] for k in contenders}
    cpu: dict[str, dict[str, list[float]]] = {k: {"server_us": [], "clients_us": []} for k in contenders}
    rounds_p50: dict[str, list[float]] = {k: [] for k in samples}
    rounds_p99: dict[str, list[float]] = {k: [] for k in samples}
    split: dict[str, dict[str, list[float]]] = {}
    gc_ours: dict[str, Any] = {}
    gc_clients: dict[str, list[dict[str, float]]] = {k: [] for k in contenders}
    t0 = time.perf_counter()
    for r in range(args.rounds):
        order = list(contenders.items())
        for name, run in order if r % 2 == 0 else order[::-1]:  # A B C, C B A, ...
            res = await run(r)
            for side in ("server_us", "clients_us"):
                cpu[name][side].append(res["cpu"][side])
            gc_clients[name].append(res["clients_gc"])
            if "first_of_hand" in res:
                parts = split.setdefault(name, {"first": [], "rest": []})
                parts["first"] += res["first_of_hand"]
                parts["rest"] += res["rest_of_hand"]
                gc_ours[f"{name}/round{r + 1}"] = res["gc"]
            samples[name] += res["samples"]
            stats = summary(res["samples"])
            p50 = stats["p50_us"]
            rounds_p50[name].append(p50)
            rounds_p99[name].append(stats["p99_us"])
            say(f"  round {r + 1}/{args.rounds} {name:12s} n={len(res['samples']):6d} p50={p50:8.1f} µs")
    latency = {
        k: {
            **summary(v), "round_p50s_us": rounds_p50[k], "round_p99s_us": rounds_p99[k],
            "cpu_server_us": round(statistics.median(cpu[k]["server_us"]), 1),
            "cpu_clients_us": round(statistics.median(cpu[k]["clients_us"]), 1),
            "clients_gc_per_1000": round(statistics.fmean(g["per_1000_decisions"] for g in gc_clients[k]), 2),
            "clients_gc_max_us": max(g["max_us"] for g in gc_clients[k]),
        }
        for k, v in samples.items()
    }  # fmt: skip
    for name, parts in split.items():
        latency[name]["first_of_hand"] = summary(parts["first"])
        latency[name]["rest_of_hand"] = summary(parts["rest"])
    ratios = {}
    for a, b in (
        ("ours-2p", "raw-2"), ("ours-4p", "raw-4"), ("ours-2p", "raw-1"), ("ours-4p", "raw-1"),
        ("mini-4p", "raw-4"), ("ours-4p", "mini-4p"), ("raw-4-shaped", "raw-4"),
    ):  # fmt: skip
        ratios[f"{a}/{b}"] = {
            "p50": round(latency[a]["p50_us"] / latency[b]["p50_us"], 2),
            "p99": round(latency[a]["p99_us"] / latency[b]["p99_us"], 2),
            # Robust to one disturbed round: the medians of the per-round figures.
            "p50_median_of_rounds": round(
                statistics.median(rounds_p50[a]) / statistics.median(rounds_p50[b]), 2
            ),
            "p99_median_of_rounds": round(
                statistics.median(rounds_p99[a]) / statistics.median(rounds_p99[b]), 2
            ),
        }
    say(f"latency rounds done in {time.perf_counter() - t0:.1f} s")

    # Throughput: a whole match of four random bots.
    say(f"throughput: {args.games} games of 4-player pagat, random bots ...")
    tp = await run_match(resolve_ruleset("pagat"), args.games, "throughput", RANDOM_BOT, work)
    throughput = {
        "games": tp["games"],
        "decisions": tp["decisions"],
        "match_wall_s": round(tp["wall_s"], 2),
        "play_s": round(tp["play_s"], 2),
        "decisions_per_s_match_wall": round(tp["decisions"] / tp["wall_s"], 1),
        "decisions_per_s_play": round(tp["decisions"] / tp["play_s"], 1),
        "latency": summary(tp["samples"]),
        "cpu_referee_us_per_decision": round(tp["cpu"]["server_us"], 1),
        "cpu_bots_us_per_decision": round(tp["cpu"]["clients_us"], 1),
        "bots_gc": tp["clients_gc"],
        "gc": tp["gc"],
        "endings": [g.ending for g in tp["outcome"].games],
    }

    profile: dict[str, Any] = {}
    if not args.no_profile:
        say("profile: instrumented match ...")
        games4 = _ours_games(rate["ours-4p"], args.seconds, 4)
        profile["instrumented_4p"] = await instrumented(r4, games4, work)
        say("profile: cProfile match ...")
        profile["cprofile_4p"] = await profiled(r4, max(1, games4 // 2), work)
        say("profile: micro-timings ...")
        profile["micro_4p"] = micro(resolve_ruleset("pagat"), 3000)
        profile["micro_2p"] = micro(resolve_ruleset("two-player"), 3000)

    return {
        "bench": "referee",
        "machine": {
            "python": platform.python_version(), "grpcio": grpc.__version__, "cpus": os.cpu_count(),
            "grpc_experiments": os.environ.get("GRPC_EXPERIMENTS", ""),
            "platform": platform.platform(),
            "loadavg_1m_start_end": [round(load_start[0], 2), round(os.getloadavg()[0], 2)],
        },  # fmt: skip
        "settings": {"seconds": args.seconds, "rounds": args.rounds, "games": args.games,
                     "warmup_dropped": WARMUP, "latency_max_hands": LATENCY_MAX_HANDS},  # fmt: skip
        "latency": latency,
        "ratios": ratios,
        "bar": BAR,
        "goal": GOAL,
        "meets_goal_4p": ratios["ours-4p/raw-4"]["p50"] <= GOAL,
        "meets_bar": all(
            ratios[k]["p50"] <= BAR and ratios[k]["p99"] <= BAR for k in ("ours-2p/raw-2", "ours-4p/raw-4")
        ),
        "gc_referee_latency_runs": gc_ours,
        "throughput": throughput,
        "profile": profile,
        "runtime_s": round(time.perf_counter() - t0, 1),
    }


# ---------------------------------------------------------------------- printing


def print_report(result: dict[str, Any]) -> None:
    lat = result["latency"]
    print()
    print("Round trip per decision, referee side (µs), Unix socket, clients in separate processes")
    print("(cpu: CPU µs per decision, all threads, median over rounds; ref = referee/server process,"
          " bots = all client processes)")
    print(f"{'contender':12s} {'n':>7s} {'p50':>7s} {'p90':>7s} {'p99':>7s} {'mean':>7s} {'max':>8s}"
          f" {'cpu ref':>7s} {'cpu bots':>8s}  round p50s / p99s")  # fmt: skip
    for k, v in lat.items():
        rp = " ".join(f"{x:.0f}" for x in v["round_p50s_us"]) + " / " + " ".join(
            f"{x:.0f}" for x in v["round_p99s_us"]
        )
        print(f"{k:12s} {v['n']:7d} {v['p50_us']:7.1f} {v['p90_us']:7.1f} {v['p99_us']:7.1f} "
              f"{v['mean_us']:7.1f} {v['max_us']:8.0f} {v['cpu_server_us']:7.1f} {v['cpu_clients_us']:8.1f}  {rp}")  # fmt: skip
    print("client gc per 1000 decisions (longest pause µs): " + ", ".join(
        f"{k} {v['clients_gc_per_1000']} ({v['clients_gc_max_us']:.0f})" for k, v in lat.items()
    ))
    for k in ("ours-2p", "mini-4p", "ours-4p"):
        for part in ("first_of_hand", "rest_of_hand"):
            v = lat[k][part]
            print(f"  {k} {part:14s} n={v['n']:6d} p50={v['p50_us']:8.1f} p99={v['p99_us']:8.1f}")
    print()
    print(f"Ratios ours/raw (bar <= {result['bar']}x)")
    print(f"  {'':22s} {'pooled samples':>20s}   {'median of rounds':>22s}")
    for k, v in result["ratios"].items():
        print(f"  {k:22s} p50 {v['p50']:5.2f}x p99 {v['p99']:5.2f}x   "
              f"p50 {v['p50_median_of_rounds']:5.2f}x p99 {v['p99_median_of_rounds']:5.2f}x")  # fmt: skip
    print(f"  meets bar (vs raw-2/raw-4): {result['meets_bar']}; four players p50 within the {GOAL}x goal:"
          f" {result['meets_goal_4p']}")
    tp = result["throughput"]
    print()
    print(f"Throughput: 4-player pagat, random bots, {tp['games']} games, {tp['decisions']} decisions "
          f"({', '.join(tp['endings'])})")  # fmt: skip
    print(f"  {tp['decisions_per_s_match_wall']:.0f} decisions/s over the match wall time ({tp['match_wall_s']} s,"
          f" start-up and exit included); {tp['decisions_per_s_play']:.0f}/s over play ({tp['play_s']} s)")
    print(f"  latency p50 {tp['latency']['p50_us']} µs, p99 {tp['latency']['p99_us']} µs; CPU per decision: referee"
          f" {tp['cpu_referee_us_per_decision']} µs, bots {tp['cpu_bots_us_per_decision']} µs")
    print(f"  referee gc during the match: {tp['gc']}")
    print(f"  bots' gc: {tp['bots_gc']}")
    prof = result["profile"]
    if prof:
        print()
        print(f"Instrumented 4-player match ({prof['instrumented_4p']['decisions']} decisions), steps of one decision (µs)")
        for k, v in prof["instrumented_4p"]["steps"].items():
            print(f"  {k:70s} p50 {v['p50_us']:8.1f}  mean {v['mean_us']:8.1f}  p99 {v['p99_us']:8.1f}")
        for key in ("micro_4p", "micro_2p"):
            print()
            print(f"Micro-timings, {key[-2:]}: mean µs per decision over real game states")
            for k, v in prof[key].items():
                print(f"  {k:70s} {v:8.2f}")
        cp = prof["cprofile_4p"]
        for side in ("referee", "bot"):
            if side not in cp:
                continue
            per = cp["decisions"] if side == "referee" else cp["bot_seat0_decisions"]
            print()
            print(f"cProfile, {side} ({per} decisions; µs per decision, profiler overhead included)")
            print(f"  {'own':>7s} {'cum':>8s} {'calls':>6s}  function  (idle epoll wait left out)")
            for row in [r for r in cp[side] if "epoll" not in r["function"]][:18]:
                print(f"  {row['own_us']:7.2f} {row['cum_us']:8.2f} {row['calls_per_decision']:6.2f}  {row['function']}")
    print()
    load = result["machine"]["loadavg_1m_start_end"]
    print(f"total runtime {result['runtime_s']} s; 1-minute load average {load[0]} at the start, {load[1]} at the"
          f" end ({result['machine']['cpus']} cpus; this bench alone keeps it near 2-3, so a start value"
          " well above 1 means other work shared the machine)")


def _json_safe(result: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(result, default=lambda o: None))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="seconds per contender per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--games", type=int, default=2, help="games in the random-bot throughput match")
    parser.add_argument("--json", action="store_true", help="print only the JSON result")
    parser.add_argument("--no-profile", action="store_true", help="skip the profile (instrumented match, cProfile, micro-timings)")
    parser.add_argument("--role", choices=("bench", "client"), default="bench", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--cpu-out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role == "client":
        asyncio.run(raw_client(args.address, args.cpu_out))
        return

    def say(text: str) -> None:
        if not args.json:
            print(text, flush=True)

    say(f"bench/referee.py: {args.rounds} rounds x {args.seconds} s per contender, python {platform.python_version()}, "
        f"grpcio {grpc.__version__}, {os.cpu_count()} cpus, transport: {transport_name()}")  # fmt: skip
    result = asyncio.run(bench(args, say))
    result = _json_safe(result)
    if not args.json:
        print_report(result)
    print(json.dumps(result, separators=(",", ":")))


if __name__ == "__main__":
    main()
