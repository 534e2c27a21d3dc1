"""A scripted referee client that can send anything: the misbehaving bot of the referee tests.

It speaks raw ``grpc.aio`` through ``arena_sdk.wire`` (no SDK ``Bot``), so a
test can send wrong fields, foreign request ids, garbage bytes or huge
messages.  Use it in-process (``await SomeScript().run(address, token)``) or
as a process::

    python rawclient.py MODE [ARG]     # ARENA_ADDRESS / ARENA_TOKEN from the environment

where MODE is a key of :data:`MODES`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path

import grpc
from arena_sdk.client import token_from_env
from arena_sdk.wire import arena_pb2 as pb
from arena_sdk.wire import arena_pb2_grpc as pb_grpc

PLAY_METHOD = "/arena.v1.Referee/Play"
#: No receive limit of our own (we want to see what the referee sends) and no proxy.
CHANNEL_OPTIONS = [("grpc.enable_http_proxy", 0)]


def target(address: str) -> str:
    return (
        address if address.startswith("unix:") or not address.startswith("/") else f"unix:{address}"
    )


def first_legal(request: pb.DecisionRequest) -> pb.Answer:
    """The answer carrying the request's first legal action (an empty exchange for EXCHANGE)."""
    answer = pb.Answer(request_id=request.request_id)
    legal = list(request.legal)
    kind = request.kind
    if kind == pb.PLAY:
        answer.card = legal[0]
    elif kind == pb.BID:
        answer.bid = int(legal[0])
    elif kind == pb.BLIND_NIL:
        answer.blind_nil = legal[0] == "true"
    elif kind == pb.DRAW:
        answer.keep = legal[0] == "keep"
    else:
        answer.exchange.SetInParent()
    return answer


def join_message(token: str, *, version: int = 1, name: str = "scripted") -> pb.BotMessage:
    return pb.BotMessage(
        join=pb.Join(token=token, protocol_version=version, bot_name=name, bot_version="1")
    )


class Script:
    """Join, then answer every request with its first legal action.

    Subclasses override :meth:`on_request` (and friends) to misbehave.  After
    :meth:`run`, ``status``/``details`` hold how the stream ended (``OK`` after
    MatchEnd) and ``received`` every message the referee sent.
    """

    name = "scripted"
    version = 1
    #: Seconds to stay alive after the stream ends (a process that lingers is
    #: a disconnect, one that dies at once a crash, one that exits 0 a disconnect).
    linger_s = 0.0
    #: As a process: exit with status 0 the moment the stream ends.
    exit_at_once = False

    def __init__(self) -> None:
        self.received: list[pb.RefereeMessage] = []
        self.requests: list[pb.DecisionRequest] = []
        self.status: grpc.StatusCode | None = None
        self.details: str = ""
        self.stop_reading = False
        self.address = ""

    def notices(self, code: str | None = None) -> list[pb.Notice]:
        out = [m.notice for m in self.received if m.WhichOneof("message") == "notice"]
        return [n for n in out if code is None or n.code == code]

    def of(self, kind: str) -> list[object]:
        return [getattr(m, kind) for m in self.received if m.WhichOneof("message") == kind]

    async def on_request(
        self, call: grpc.aio.StreamStreamCall, request: pb.DecisionRequest
    ) -> None:
        await call.write(pb.BotMessage(answer=first_legal(request)))

    async def on_welcome(
        self, call: grpc.aio.StreamStreamCall, welcome: pb.Welcome, token: str, address: str
    ) -> None:
        """Called after Welcome (a place to try a second join)."""

    async def first_message(self, call: grpc.aio.StreamStreamCall, token: str) -> None:
        await call.write(join_message(token, version=self.version, name=self.name))

    async def run(self, address: str, token: str) -> Script:
        self.address = address
        async with grpc.aio.insecure_channel(target(address), options=CHANNEL_OPTIONS) as channel:
            call = pb_grpc.RefereeStub(channel).Play()
            try:
                await self.first_message(call, token)
                while not self.stop_reading:
                    message = await call.read()
                    if message is grpc.aio.EOF:
                        break
                    self.received.append(message)
                    which = message.WhichOneof("message")
                    if which == "welcome":
                        await self.on_welcome(call, message.welcome, token, address)
                    elif which == "request":
                        self.requests.append(message.request)
                        await self.on_request(call, message.request)
                    elif which == "match_end":
                        await call.done_writing()
                if self.stop_reading:
                    call.cancel()
                    self.status = grpc.StatusCode.CANCELLED
                else:
                    self.status = await call.code()
                    self.details = await call.details() or ""
            except grpc.aio.AioRpcError as exc:
                self.status = exc.code()
                self.details = exc.details() or ""
            except asyncio.CancelledError:
                call.cancel()
                raise
            if self.exit_at_once:  # a bot that leaves as soon as its stream ends, status 0
                print(f"stream ended: {self.status} {self.details}", flush=True)
                os._exit(0)
        if self.linger_s:
            await asyncio.sleep(self.linger_s)
        return self


async def join_status(address: str, token: str, *, version: int = 1, first: pb.BotMessage | None = None,
                      timeout: float = 10.0) -> tuple[grpc.StatusCode, str, list[pb.RefereeMessage]]:  # fmt: skip
    """Open a stream, send one first message (a Join by default), and report how the referee answers.

    Returns the status (``None`` if the stream is still open after a Welcome:
    the call is then cancelled), its details, and the messages received.
    """
    async with grpc.aio.insecure_channel(target(address), options=CHANNEL_OPTIONS) as channel:
        call = pb_grpc.RefereeStub(channel).Play()
        messages: list[pb.RefereeMessage] = []
        try:
            await call.write(first if first is not None else join_message(token, version=version))
            message = await asyncio.wait_for(call.read(), timeout)
            if message is not grpc.aio.EOF:
                messages.append(message)
                call.cancel()
                return None, "", messages  # type: ignore[return-value]
            return await call.code(), await call.details() or "", messages
        except grpc.aio.AioRpcError as exc:
            return exc.code(), exc.details() or "", messages


async def send_raw(address: str, chunks: list[bytes], *, read_timeout: float = 15.0,
                   pause_s: float = 0.05) -> tuple[grpc.StatusCode | None, str, list[pb.RefereeMessage]]:  # fmt: skip
    """Send ``chunks`` as raw (unserialized) messages on a Play stream; read until it ends.

    The identity serializer lets anything through: garbage bytes, huge
    messages, a valid Join followed by garbage.
    """
    messages: list[pb.RefereeMessage] = []
    async with grpc.aio.insecure_channel(target(address), options=CHANNEL_OPTIONS) as channel:
        play = channel.stream_stream(
            PLAY_METHOD,
            request_serializer=lambda b: b,
            response_deserializer=pb.RefereeMessage.FromString,
        )
        call = play()

        async def talk() -> tuple[grpc.StatusCode | None, str]:
            for chunk in chunks:
                await call.write(chunk)
                await asyncio.sleep(pause_s)
            while True:
                message = await call.read()
                if message is grpc.aio.EOF:
                    break
                messages.append(message)
            return await call.code(), await call.details() or ""

        try:
            code, details = await asyncio.wait_for(talk(), read_timeout)
        except grpc.aio.AioRpcError as exc:
            code, details = exc.code(), exc.details() or ""
        except TimeoutError:
            call.cancel()
            code, details = None, "still open"
    return code, details, messages


# ---------------------------------------------------------------------- misbehaviours


class Silent(Script):
    """Joins and never answers."""

    name = "silent"

    async def on_request(self, call, request):
        pass


class Late(Script):
    """Answers its ``nth`` request after ``delay_s`` (past the deadline), the rest at once."""

    name = "late"

    def __init__(self, delay_s: float, nth: int = 1) -> None:
        super().__init__()
        self.delay_s = delay_s
        self.nth = nth
        self.late_rid = 0

    async def on_request(self, call, request):
        if len(self.requests) == self.nth:
            self.late_rid = request.request_id
            await asyncio.sleep(self.delay_s)
        await super().on_request(call, request)


class Sends(Script):
    """Answers request number ``nth`` (1-based) of kind ``kind`` with ``answer(request)`` instead."""

    def __init__(
        self, answer, kind: int = pb.PLAY, nth: int = 1, then_correct: bool = True
    ) -> None:
        super().__init__()
        self.answer = answer
        self.kind = kind
        self.nth = nth
        self.seen = 0
        self.then_correct = then_correct
        self.bad_rids: list[int] = []

    async def on_request(self, call, request):
        if request.kind == self.kind:
            self.seen += 1
            if self.seen == self.nth or (not self.then_correct and self.seen >= self.nth):
                self.bad_rids.append(request.request_id)
                await call.write(pb.BotMessage(answer=self.answer(request)))
                return
        await super().on_request(call, request)


class OutOfTurn(Script):
    """Before its first PLAY answer, sends an answer to a request id never sent."""

    name = "out-of-turn"
    bogus_rid = 987_654_321

    def __init__(self, count: int = 1) -> None:
        super().__init__()
        self.count = count
        self.sent = 0

    async def on_request(self, call, request):
        if request.kind == pb.PLAY and self.sent < self.count:
            for _ in range(self.count):
                bogus = first_legal(request)
                bogus.request_id = self.bogus_rid + self.sent
                self.sent += 1
                await call.write(pb.BotMessage(answer=bogus))
        await super().on_request(call, request)


class Disconnect(Script):
    """Cancels its call after ``after`` answers (the process stays alive for ``linger_s``)."""

    name = "disconnect"

    def __init__(self, after: int, linger_s: float = 1.5) -> None:
        super().__init__()
        self.after = after
        self.linger_s = linger_s

    async def on_request(self, call, request):
        if len(self.requests) > self.after:
            self.stop_reading = True
            return
        await super().on_request(call, request)


class Huge(Script):
    """Answers request number ``nth`` with a card text of ``size`` bytes."""

    name = "huge"

    def __init__(self, size: int, nth: int = 1) -> None:
        super().__init__()
        self.size = size
        self.nth = nth

    async def on_request(self, call, request):
        if len(self.requests) == self.nth:
            await call.write(
                pb.BotMessage(answer=pb.Answer(request_id=request.request_id, card="S" * self.size))
            )
            return
        await super().on_request(call, request)


class Leak(Script):
    """Plays correctly and writes each request id it gets to ``path`` (for a colluding partner)."""

    name = "leak"

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = Path(path)

    async def on_request(self, call, request):
        with self.path.open("a") as f:
            f.write(f"{request.request_id}\n")
        await super().on_request(call, request)


class Steal(Script):
    """At its first PLAY request, answers with the partner's latest request id read from ``path``."""

    name = "steal"

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = Path(path)
        self.stolen: int | None = None

    async def on_request(self, call, request):
        if self.stolen is None and request.kind == pb.PLAY:
            text = self.path.read_text() if self.path.exists() else ""
            rids = [int(x) for x in text.split()]
            if rids:
                self.stolen = rids[-1]
                answer = first_legal(request)
                answer.request_id = self.stolen
                await call.write(pb.BotMessage(answer=answer))
                return
        await super().on_request(call, request)


MODES = {
    "first-legal": lambda arg: Script(),
    "silent": lambda arg: Silent(),
    "leak": lambda arg: Leak(arg),
    "steal": lambda arg: Steal(arg),
    "huge-exit0": lambda arg: _exiting(Huge(int(arg or 10_000_000), nth=3)),
}


def _exiting(script: Script) -> Script:
    script.exit_at_once = True
    return script


def main(argv: list[str]) -> int:
    mode, arg = argv[0], (argv[1] if len(argv) > 1 else "")
    script = MODES[mode](arg)
    started = time.monotonic()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(script.run(os.environ["ARENA_ADDRESS"], token_from_env() or ""))
    status = script.status.name if script.status is not None else "NONE"
    print(f"rawclient {mode}: status={status} details={script.details!r} "
          f"requests={len(script.requests)} in {time.monotonic() - started:.2f}s", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
