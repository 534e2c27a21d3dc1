"""Connect a bot to the referee over gRPC and play until the match ends.

The decision path stays on one asyncio event loop (no thread hop per
decision): read a request, call the bot, write the answer.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import sys
from collections.abc import Sequence

# A client starts here: gRPC's transport is chosen before grpc loads (arena_sdk.transport).
from arena_sdk.transport import prefer_polling_transport

prefer_polling_transport()

import grpc  # noqa: E402

from arena_sdk.bot import Bot, BotDriver
from arena_sdk.protocol import MAX_MESSAGE_BYTES, PROTOCOL_VERSION
from arena_sdk.wire import arena_pb2 as pb
from arena_sdk.wire import arena_pb2_grpc as pb_grpc

ENV_ADDRESS = "ARENA_ADDRESS"
ENV_TOKEN = "ARENA_TOKEN"
#: A read that returns faster than this found its message already waiting.
QUEUED_READ_S = 0.0005
#: Local bots get their token on an inherited pipe named here (``/dev/fd/N``), not in the environment.
ENV_TOKEN_FILE = "ARENA_TOKEN_FILE"
#: How long a bot waits for the referee to answer (and keeps trying to join) before giving up.
DEFAULT_CONNECT_TIMEOUT_S = 60.0
#: A Join the referee could not take yet is tried again: RESOURCE_EXHAUSTED
#: (too many streams waiting to join: another seat's flood) or UNAVAILABLE (the
#: connection was refused or dropped before the referee answered).  Neither
#: means the seat was taken, so trying again is safe; the wait doubles from
#: the first to the last value (with jitter, so that seats do not retry in step).
JOIN_RETRY_CODES = frozenset({grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE})
JOIN_BACKOFF_FIRST_S = 0.05
JOIN_BACKOFF_MAX_S = 1.0
#: The jitter's own generator: the global one may be a bot's.
_jitter = random.Random()

CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.enable_http_proxy", 0),
    # A bot may start before the referee's socket exists (compose): retry soon.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
]


class JoinRefused(RuntimeError):
    """The referee refused the bot (bad token, protocol version, seat taken)."""


def grpc_target(address: str) -> str:
    """Accept ``unix:/path``, ``unix:///path``, a bare socket path, or ``host:port``."""
    if address.startswith("unix:"):
        return address
    if address.startswith("/") or address.endswith(".sock"):
        return f"unix:{address}"
    return address


async def join_match(
    bot: Bot,
    address: str,
    token: str,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S,
    *,
    retry_join: bool = True,
    driver: BotDriver | None = None,
) -> BotDriver:
    """Join the referee at ``address`` with ``token`` and play until the match ends.

    Until the referee has welcomed the bot, a join refused for a reason that
    does not mean the seat is taken (``JOIN_RETRY_CODES``) is tried again with
    a short backoff, up to ``connect_timeout`` after the start (``retry_join``
    False: once, like a bot that does not retry).  ``driver`` (with its clock)
    is made from ``bot`` when not given, keeping the bot's
    ``transport_margin_s`` in hand in ``time_left()``.
    """
    driver = driver or BotDriver(bot, transport_margin_s=bot.transport_margin_s)
    loop = asyncio.get_running_loop()
    give_up = loop.time() + connect_timeout
    async with grpc.aio.insecure_channel(grpc_target(address), options=CHANNEL_OPTIONS) as channel:
        # The referee may start after the bot (compose starts them together):
        # wait for it, but not for ever.
        try:
            await asyncio.wait_for(channel.channel_ready(), connect_timeout)
        except TimeoutError:
            raise ConnectionError(f"no referee answered at {address} within {connect_timeout:g} s") from None
        stub = pb_grpc.RefereeStub(channel)
        join = pb.Join(
            token=token,
            protocol_version=PROTOCOL_VERSION,
            bot_name=str(bot.name)[:64],
            bot_version=str(bot.version)[:64],
        )
        backoff = JOIN_BACKOFF_FIRST_S
        while True:
            try:
                await _play_stream(stub, join, driver)
                return driver
            except grpc.aio.AioRpcError as exc:
                code = exc.code()
                if code in _REFUSALS:
                    raise JoinRefused(f"{code.name}: {exc.details()}") from None
                if driver.rules is not None or code not in JOIN_RETRY_CODES:
                    raise  # welcomed: the stream broke during the match (a reconnect is refused)
                if not retry_join:
                    raise ConnectionError(f"could not join at {address}: {code.name}: {exc.details()}") from None
                wait = backoff * _jitter.uniform(0.5, 1.0)
                if loop.time() + wait >= give_up:
                    raise ConnectionError(
                        f"could not join at {address} within {connect_timeout:g} s: {code.name}: {exc.details()}"
                    ) from None
                await asyncio.sleep(wait)
                backoff = min(backoff * 2, JOIN_BACKOFF_MAX_S)


#: Statuses that refuse this bot for good: trying again cannot help.
_REFUSALS = frozenset(
    {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.PERMISSION_DENIED,  # another seat's token on this seat's socket
    }
)


async def _play_stream(stub: pb_grpc.RefereeStub, join: pb.Join, driver: BotDriver) -> None:
    """One ``Play`` stream: send ``join``, then answer requests until the match ends."""
    call = stub.Play()
    await call.write(pb.BotMessage(join=join))
    clock = driver.clock
    handle = driver.handle
    while True:
        waiting = clock()
        message = await call.read()
        if message is grpc.aio.EOF:
            return
        read_at = clock()
        # A read that returns at once found the message already waiting (it
        # came while the bot was busy): its arrival is unknown, and the driver
        # bounds it by what it knows (docs/protocol.md "Time").
        answer = handle(message, read_at - waiting < QUEUED_READ_S, read_at)
        if answer is not None:
            await call.write(pb.BotMessage(answer=answer))
        elif driver.finished:
            # The match is over; the referee may already have closed the
            # call, which makes closing our side fail: that is fine.
            with contextlib.suppress(Exception):
                await call.done_writing()
            return


def token_from_env() -> str | None:
    """The seat's token: read once from the pipe or file ``ARENA_TOKEN_FILE`` names, else ``ARENA_TOKEN``.

    The pipe wins when both are set: the arena hands a local bot its token
    on the pipe, and an ``ARENA_TOKEN`` beside it can only be a stale one
    left in the organiser's shell (e.g. by ``arena serve``).
    """
    path = os.environ.get(ENV_TOKEN_FILE)
    if path:
        try:
            with open(path, encoding="utf-8") as f:  # a pipe: after this read it is empty
                token = f.read().strip()
        except OSError:
            token = ""
        if token:
            return token
    return os.environ.get(ENV_TOKEN) or None


def sdk_arguments(bot_name: str, argv: Sequence[str] | None = None) -> tuple[argparse.Namespace, list[str]]:
    """Split a command line into the SDK's own options and the bot's arguments.

    Only ``--address`` and ``--token`` (spelled in full: no abbreviations,
    which could take a bot's ``--to``) are the SDK's; every other argument,
    option or not, is returned untouched for the bot.  ``argv`` defaults to
    ``sys.argv[1:]``.
    """
    parser = argparse.ArgumentParser(
        description=f"Run the {bot_name} bot against a referee. Other arguments are left to the bot (bot.argv).",
        allow_abbrev=False,
    )
    parser.add_argument("--address", default=os.environ.get(ENV_ADDRESS), help="referee address: unix:/path/to.sock or host:port (env ARENA_ADDRESS)")
    parser.add_argument("--token", help="this seat's secret token (env ARENA_TOKEN, or read from ARENA_TOKEN_FILE)")
    args, rest = parser.parse_known_args(argv)
    args.token = args.token or token_from_env()
    if not args.address or not args.token:
        parser.error(f"give --address and --token, or set {ENV_ADDRESS} and {ENV_TOKEN}")
    return args, rest


def run(bot: Bot, argv: Sequence[str] | None = None) -> None:
    """Run ``bot`` against the referee; the entry point of a bot's ``main``.

    The address and token come from ``--address``/``--token`` or the
    environment (``ARENA_ADDRESS``, ``ARENA_TOKEN``), which is how the arena
    starts bots.  Every other argument of the command line (``argv``,
    default ``sys.argv[1:]``) is the bot's: it is left in ``bot.argv``
    before the bot connects, so ``python mybot.py --depth 3`` runs.
    Exits with status 2 if the referee refuses the bot.
    """
    args, bot.argv = sdk_arguments(str(bot.name), argv)
    try:
        asyncio.run(join_match(bot, args.address, args.token))
    except JoinRefused as exc:
        print(f"{bot.name}: the referee refused to seat this bot: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except ConnectionError as exc:
        print(f"{bot.name}: {exc}", file=sys.stderr)
        raise SystemExit(3) from None
