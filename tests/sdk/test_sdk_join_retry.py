"""The SDK client tries its Join again while the referee cannot take it yet (issue #9.2).

A stand-in referee on a Unix socket refuses the first streams as a flooded
referee would (RESOURCE_EXHAUSTED, UNAVAILABLE); the client must join on a
later try, within its connect deadline, and never retry what means "no".
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from arena_sdk import Bot
from arena_sdk.client import JoinRefused, join_match
from arena_sdk.engine import resolve_ruleset
from arena_sdk.wire import arena_pb2 as pb
from arena_sdk.wire import arena_pb2_grpc as pb_grpc


class Idle(Bot):
    name = "idle"


class StandIn(pb_grpc.RefereeServicer):
    """Ends each of the first streams with ``refusals[i]``; then welcomes and ends the match.

    ``after_welcome``: end the welcomed stream with this status instead of MatchEnd.
    """

    def __init__(self, refusals: list[grpc.StatusCode], after_welcome: grpc.StatusCode | None = None) -> None:
        self.refusals = list(refusals)
        self.after_welcome = after_welcome
        self.streams = 0

    async def Play(self, request_iterator, context):  # noqa: N802
        self.streams += 1
        first = await context.read()
        assert first.WhichOneof("message") == "join"
        if self.refusals:
            await context.abort(self.refusals.pop(0), "too many streams waiting to join")
        rules = resolve_ruleset("two-player")
        welcome = pb.Welcome(seat=0, players=2, partner=-1, ruleset_json=json.dumps(rules.to_dict()))
        await context.write(pb.RefereeMessage(welcome=welcome))
        if self.after_welcome is not None:
            await context.abort(self.after_welcome, "a message over the limit")
        await context.write(pb.RefereeMessage(match_end=pb.MatchEnd(match_id="m", reason="over")))


@pytest.fixture
def address() -> Iterator[str]:
    path = Path(tempfile.mkdtemp(prefix="arena-sdk-", dir="/tmp"))  # short: Unix socket paths are limited
    yield f"unix:{path}/referee.sock"
    shutil.rmtree(path, ignore_errors=True)


def serve_and_play(address: str, stand_in: StandIn, **kw: object) -> object:
    """Serve ``stand_in`` at ``address`` and run one client against it (bounded in time)."""

    async def scenario() -> object:
        server = grpc.aio.server()
        pb_grpc.add_RefereeServicer_to_server(stand_in, server)
        server.add_insecure_port(address)
        await server.start()
        try:
            return await asyncio.wait_for(join_match(Idle(), address, "token", **kw), 10)  # type: ignore[arg-type]
        finally:
            await server.stop(0)

    return asyncio.run(scenario())


def test_a_join_refused_for_crowding_or_a_dropped_connection_is_tried_again(address: str) -> None:
    stand_in = StandIn([grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE])
    driver = serve_and_play(address, stand_in, connect_timeout=5.0)
    assert driver.finished and driver.bot.match is not None, "joined on the third stream and played to the end"
    assert stand_in.streams == 3


def test_without_retries_the_first_refusal_ends_the_bot(address: str) -> None:
    stand_in = StandIn([grpc.StatusCode.RESOURCE_EXHAUSTED])
    with pytest.raises(ConnectionError, match="RESOURCE_EXHAUSTED"):
        serve_and_play(address, stand_in, retry_join=False)
    assert stand_in.streams == 1


def test_retries_stop_at_the_connect_deadline(address: str) -> None:
    stand_in = StandIn([grpc.StatusCode.RESOURCE_EXHAUSTED] * 1000)
    with pytest.raises(ConnectionError, match="could not join .* within 0.3 s: RESOURCE_EXHAUSTED"):
        serve_and_play(address, stand_in, connect_timeout=0.3)
    assert 2 <= stand_in.streams < 20, stand_in.streams  # a short backoff, not a busy loop


def test_a_refusal_that_means_no_is_not_tried_again(address: str) -> None:
    stand_in = StandIn([grpc.StatusCode.ALREADY_EXISTS])
    with pytest.raises(JoinRefused, match="ALREADY_EXISTS"):
        serve_and_play(address, stand_in)
    assert stand_in.streams == 1


def test_a_stream_that_breaks_after_the_welcome_is_not_joined_again(address: str) -> None:
    # Joining again would be refused (ALREADY_EXISTS) and counted against the seat.
    stand_in = StandIn([], after_welcome=grpc.StatusCode.RESOURCE_EXHAUSTED)
    with pytest.raises(grpc.aio.AioRpcError):
        serve_and_play(address, stand_in)
    assert stand_in.streams == 1
