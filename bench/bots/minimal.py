"""Benchmark client: joins the real referee but answers straight from the message.

No SDK on the decision path (no View, no Bot, no conversion): bid 3, the first
legal card, no blind nil, keep every offered card, exchange nothing.  Running
the referee against this client separates the referee's cost from the SDK's.
Started by bench/referee.py with ARENA_ADDRESS and ARENA_TOKEN in the environment.
"""

from __future__ import annotations

import asyncio
import os

import grpc
from _hooks import CpuMeter

from arena_sdk.client import CHANNEL_OPTIONS, grpc_target
from arena_sdk.protocol import PROTOCOL_VERSION
from arena_sdk.wire import arena_pb2 as pb
from arena_sdk.wire import arena_pb2_grpc as pb_grpc


async def main() -> None:
    meter = CpuMeter(os.environ.get("BENCH_CPU"))
    address = grpc_target(os.environ["ARENA_ADDRESS"])
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        call = pb_grpc.RefereeStub(channel).Play()
        join = pb.Join(token=os.environ["ARENA_TOKEN"], protocol_version=PROTOCOL_VERSION, bot_name="bench-minimal")
        await call.write(pb.BotMessage(join=join))
        while True:
            message = await call.read()
            if message is grpc.aio.EOF:
                break
            if message.WhichOneof("message") != "request":
                continue
            meter.tick()
            request = message.request
            reply = pb.BotMessage()
            answer = reply.answer
            answer.request_id = request.request_id
            kind = request.kind
            if kind == pb.PLAY:
                answer.card = request.legal[0]
            elif kind == pb.BID:
                answer.bid = 3
            elif kind == pb.BLIND_NIL:
                answer.blind_nil = False
            elif kind == pb.DRAW:
                answer.keep = True
            else:
                answer.exchange.SetInParent()
            await call.write(reply)


if __name__ == "__main__":
    asyncio.run(main())
