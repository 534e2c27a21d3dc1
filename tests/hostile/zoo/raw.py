"""The raw-gRPC half of the hostile-bot zoo: a client that can send anything.

No SDK ``Bot`` here: ``grpc.aio`` with the generated stubs of arena_sdk.wire
(and an identity serializer where the bytes themselves must be wrong).  Each
behaviour plays the first legal action except where it misbehaves, prints
what the referee answered as ``HOSTILE {json}`` lines, and after its stream
ends stays alive (until the platform stops it) so a broken stream is judged
as what the bot did to the stream, not as a crash.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import time

import grpc
from arena_sdk.wire import arena_pb2 as pb
from arena_sdk.wire import arena_pb2_grpc as pb_grpc

PLAY_METHOD = "/arena.v1.Referee/Play"
OPTIONS = [("grpc.enable_http_proxy", 0)]
#: How long a bot whose stream is gone stays alive (the platform stops it sooner).
LINGER_S = 30.0
DECK = [s + r for s in "CDHS" for r in "23456789TJQKA"]


def report(behaviour: str, **data: object) -> None:
    print("HOSTILE " + json.dumps({"behaviour": behaviour, **data}), flush=True)


def first_legal(request: pb.DecisionRequest) -> pb.Answer:
    answer = pb.Answer(request_id=request.request_id)
    legal = list(request.legal)
    if request.kind == pb.PLAY:
        answer.card = legal[0]
    elif request.kind == pb.BID:
        answer.bid = 2 if "2" in legal else int(legal[0])
    elif request.kind == pb.BLIND_NIL:
        answer.blind_nil = False
    elif request.kind == pb.DRAW:
        answer.keep = True
    else:
        answer.exchange.SetInParent()
    return answer


def join(token: str, name: str) -> pb.BotMessage:
    return pb.BotMessage(join=pb.Join(token=token, protocol_version=1, bot_name=name, bot_version="1"))


async def join_status(address: str, token: str, timeout: float = 10.0) -> str:
    """Open a stream, send a Join, and say how the referee answered (a status name, or WELCOME)."""
    async with grpc.aio.insecure_channel(address, options=OPTIONS) as channel:
        call = pb_grpc.RefereeStub(channel).Play()
        try:
            await call.write(join(token, "hostile-token-guess"))
            message = await asyncio.wait_for(call.read(), timeout)
            if message is not grpc.aio.EOF and message.WhichOneof("message") == "welcome":
                call.cancel()
                return "WELCOME"
            return (await call.code()).name
        except grpc.aio.AioRpcError as exc:
            return exc.code().name
        except TimeoutError:
            call.cancel()
            return "NO_ANSWER"


class Player:
    """Join and answer every request with its first legal action; subclasses misbehave."""

    #: Send raw bytes (identity serializer) instead of BotMessage objects.
    raw_bytes = False

    def __init__(self, behaviour: str, address: str, token: str) -> None:
        self.behaviour = behaviour
        self.address = address
        self.token = token
        self.requests = 0
        self.play_requests = 0
        self.status = ""
        self.details = ""
        self.stop = False

    async def write(self, call: grpc.aio.StreamStreamCall, message: pb.BotMessage | bytes) -> None:
        if self.raw_bytes and isinstance(message, pb.BotMessage):
            message = message.SerializeToString()
        await call.write(message)

    async def on_request(self, call, request: pb.DecisionRequest) -> None:
        await self.write(call, pb.BotMessage(answer=first_legal(request)))

    async def on_welcome(self, call, welcome: pb.Welcome) -> None:
        pass

    async def before_join(self) -> None:
        pass

    async def after_match(self) -> None:
        pass

    async def play(self) -> None:
        await self.before_join()
        async with grpc.aio.insecure_channel(self.address, options=OPTIONS) as channel:
            if self.raw_bytes:
                call = channel.stream_stream(
                    PLAY_METHOD, request_serializer=lambda b: b,
                    response_deserializer=pb.RefereeMessage.FromString,
                )()  # fmt: skip
            else:
                call = pb_grpc.RefereeStub(channel).Play()
            ended = False
            try:
                await self.write(call, join(self.token, f"hostile-{self.behaviour}"))
                while not self.stop:
                    message = await call.read()
                    if message is grpc.aio.EOF:
                        break
                    which = message.WhichOneof("message")
                    if which == "welcome":
                        await self.on_welcome(call, message.welcome)
                    elif which == "request":
                        self.requests += 1
                        if message.request.kind == pb.PLAY:
                            self.play_requests += 1
                        await self.on_request(call, message.request)
                    elif which == "match_end":
                        ended = True
                        await call.done_writing()
                if self.stop:
                    call.cancel()
                    self.status = "CANCELLED by the bot"
                else:
                    self.status = (await call.code()).name
                    self.details = await call.details() or ""
            except grpc.aio.AioRpcError as exc:
                self.status, self.details = exc.code().name, exc.details() or ""
            except Exception as exc:  # a write on a stream the referee ended
                self.status, self.details = "ERROR", f"{type(exc).__name__}: {exc}"[:200]
        report(self.behaviour, stream=self.status, details=self.details[:200], requests=self.requests)
        if ended:
            await self.after_match()
            return
        await self.linger()

    async def linger(self) -> None:
        await asyncio.sleep(LINGER_S)


class Silent(Player):
    """Joins and never answers."""

    async def on_request(self, call, request):
        pass


class Twice(Player):
    """Answers every request twice."""

    async def on_request(self, call, request):
        answer = pb.BotMessage(answer=first_legal(request))
        await self.write(call, answer)
        await self.write(call, answer)


class OutOfTurn(Player):
    """Before each answer, answers a request id that was never sent."""

    async def on_request(self, call, request):
        bogus = first_legal(request)
        bogus.request_id = 10_000_000 + request.request_id
        await self.write(call, pb.BotMessage(answer=bogus))
        await super().on_request(call, request)


class ForeignRequest(Player):
    """At its first card, also answers the request sent just before its own: another seat's.

    Request ids count up through a match and consecutive decisions belong to
    different seats, so ``request_id - 1`` is a copied id of the previous
    seat's request (no cooperating partner needed).
    """

    async def on_request(self, call, request):
        if request.kind == pb.PLAY and self.play_requests == 1:
            stolen = first_legal(request)
            stolen.request_id = request.request_id - 1
            report(self.behaviour, answered_for=stolen.request_id, own=request.request_id)
            await self.write(call, pb.BotMessage(answer=stolen))
        await super().on_request(call, request)


class TokenGuess(Player):
    """Guessed tokens before joining, its own token twice, and its token again after the match."""

    async def before_join(self):
        guesses = [secrets.token_urlsafe(24) for _ in range(3)]
        guesses.append(self.token[:-4] + ("AAAA" if not self.token.endswith("AAAA") else "BBBB"))
        results = [await join_status(self.address, g) for g in guesses]
        report(self.behaviour, guessed_tokens=results)

    async def on_welcome(self, call, welcome):
        report(self.behaviour, second_join=await join_status(self.address, self.token))

    async def after_match(self):
        await asyncio.sleep(0.3)
        report(self.behaviour, after_match=await join_status(self.address, self.token))


class Garbage(Player):
    """At its first request sends bytes that are no protobuf message."""

    raw_bytes = True

    async def on_request(self, call, request):
        await self.write(call, b"\x0a\xff\xff\xff\xff\x0f not a protobuf message")


class Oversized(Player):
    """At its first request answers with a 100 KiB card (the referee takes 64 KiB)."""

    async def on_request(self, call, request):
        huge = pb.Answer(request_id=request.request_id, card="S" * 100_000)
        await self.write(call, pb.BotMessage(answer=huge))


class Flood(Player):
    """At its first request sends 5000 answers to ids never sent, as fast as it can."""

    async def on_request(self, call, request):
        answer = first_legal(request)
        started = time.monotonic()
        sent = 0
        try:
            for i in range(5000):
                answer.request_id = 30_000_000 + i
                await self.write(call, pb.BotMessage(answer=answer))
                sent += 1
        finally:
            report(self.behaviour, flood_sent=sent, seconds=round(time.monotonic() - started, 3))


class Reconnect(Player):
    """After five answers drops its stream (staying alive) and joins again with its token."""

    async def on_request(self, call, request):
        if self.requests > 5:
            self.stop = True  # do not answer: cancel the stream
            return
        await super().on_request(call, request)

    async def linger(self):
        await asyncio.sleep(0.3)
        report(self.behaviour, rejoin=await join_status(self.address, self.token))
        await asyncio.sleep(LINGER_S)


class Illegal(Player):
    """Bids properly, plays a card that is not legal now."""

    async def on_request(self, call, request):
        if request.kind != pb.PLAY:
            return await super().on_request(call, request)
        legal = set(request.legal)
        illegal = next(c for c in DECK if c not in legal)
        await self.write(call, pb.BotMessage(answer=pb.Answer(request_id=request.request_id, card=illegal)))


PLAYERS = {
    "silent": Silent,
    "twice": Twice,
    "out-of-turn": OutOfTurn,
    "foreign-request": ForeignRequest,
    "token-guess": TokenGuess,
    "garbage": Garbage,
    "oversized": Oversized,
    "flood": Flood,
    "reconnect": Reconnect,
    "illegal": Illegal,
}


def main(behaviour: str) -> None:
    address = os.environ["ARENA_ADDRESS"]
    token = os.environ["ARENA_TOKEN"]
    asyncio.run(PLAYERS[behaviour](behaviour, address, token).play())
