"""The referee against misbehaving bots: a real server, bots in processes, scripted raw clients.

Every misbehaviour of docs/architecture.md section 5 / docs/protocol.md "Faults":
the documented outcome (strike, refusal, forfeit), and a match that still
finishes with records that replay.
"""

from __future__ import annotations

import asyncio
import re
import signal
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
import rawclient as rc
from arena_sdk.wire import arena_pb2 as pb
from grpc_health.v1 import health_pb2, health_pb2_grpc
from referee_support import (
    EASY,
    Remember,
    all_actions,
    arun,
    check_record,
    events,
    make_spec,
    python_launcher,
    rawclient_launcher,
    running_referee,
    task_launcher,
    write_sdk_bot,
)

from arena.match import TimeControl
from arena.referee.host import host_match
from arena.referee.server import RefereeServer
from arena.referee.session import MAX_REFUSED_PER_GAME, RemoteSeat


async def play(
    address: str, spec: Any, launchers: list[Any], log_dir: Path, **kw: Any
) -> tuple[Any, Any]:
    """Start a referee on ``address``, host one match, stop; returns (server, hosted)."""
    kw.setdefault("start_timeout", 15.0)
    async with running_referee(address) as server:
        hosted = await host_match(
            server, spec, launchers, server.addresses[0], log_dir=log_dir, **kw
        )
    return server, hosted


def sdk(bot_dir: Path, behaviour: str = "random", **params: Any) -> Any:
    return python_launcher(write_sdk_bot(bot_dir, behaviour, **params))


def only_strikes(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in all_actions(record) if "default" in a]


def finished_normally(record: dict[str, Any]) -> None:
    assert record["result"]["ending"] in ("max_hands", "target", "floor"), record["result"]


async def health_status(address: str) -> int:
    async with grpc.aio.insecure_channel(rc.target(address), options=rc.CHANNEL_OPTIONS) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=5
        )
        return reply.status


# ---------------------------------------------------------------------- strikes


class TestStrikes:
    """Late, illegal and malformed answers: a strike, the default move, the game goes on.

    Run on a Unix socket and on 127.0.0.1 (port 0).
    """

    def test_late_answer_is_a_timeout_strike_then_stale(
        self, bind_address, bot_dir, log_dir
    ) -> None:
        # Hard cap 1.0 s: the late answer (1.5 s) is a timeout; the next request
        # waits at most 0.5 s behind it, well inside 1.0 s.
        tc = TimeControl(move_s=0.8, bank_s=5.0, hard_cap_s=1.0)
        spec = make_spec(tc=tc)
        launchers = [sdk(bot_dir, "late", delay=1.5, plays=(1,)), sdk(bot_dir)]
        _, hosted = arun(play(bind_address, spec, launchers, log_dir), 40)
        [game] = hosted.outcome.games
        record = check_record(game.record)
        finished_normally(record)
        [strike] = only_strikes(record)
        assert strike["seat"] == "A" and strike["kind"] == "play" and strike["default"] == "timeout"
        assert strike["ms"] >= 1000 - 5
        assert "answer" not in strike  # nothing arrived in time
        assert record["strikes"] == {"A": 1, "B": 0}
        stale = events(record, "stale_answer")
        assert [(e["seat"], e["request_id"]) for e in stale] == [("A", strike["request_id"])]
        assert game.stats[0].timeouts == 1
        assert hosted.exit_codes == [0, 0]

    def test_illegal_card_is_a_strike_and_the_first_legal_card_is_played(
        self, bind_address, bot_dir, log_dir
    ) -> None:
        spec = make_spec()
        launchers = [sdk(bot_dir), sdk(bot_dir, "illegal", plays=(1, 3))]
        _, hosted = arun(play(bind_address, spec, launchers, log_dir), 40)
        [game] = hosted.outcome.games
        record = check_record(game.record)  # checks each defaulted action is the first legal card
        finished_normally(record)
        strikes = only_strikes(record)
        assert [(s["seat"], s["kind"], s["default"]) for s in strikes] == [
            ("B", "play", "illegal")
        ] * 2
        for s in strikes:
            assert s["answer"].startswith("card ") and s["answer"][5:] != s["action"]
        assert record["strikes"] == {"A": 0, "B": 2}

    def test_malformed_card_text_is_a_malformed_strike(
        self, bind_address, bot_dir, log_dir
    ) -> None:
        spec = make_spec()
        launchers = [sdk(bot_dir, "malformed", plays=(2,)), sdk(bot_dir)]
        _, hosted = arun(play(bind_address, spec, launchers, log_dir), 40)
        record = check_record(hosted.outcome.games[0].record)
        finished_normally(record)
        [strike] = only_strikes(record)
        assert (strike["seat"], strike["default"], strike["answer"]) == (
            "A",
            "malformed",
            "card ZZ",
        )


class TestMalformedAnswers:
    """Scripted raw answers: wrong oneof field, no action, a bad card text."""

    @pytest.mark.parametrize(
        ("make_answer", "raw"),
        [
            (lambda req: pb.Answer(request_id=req.request_id, bid=3), "bid 3"),
            (lambda req: pb.Answer(request_id=req.request_id, keep=True), "keep True"),
            (lambda req: pb.Answer(request_id=req.request_id), "no action"),
            (lambda req: pb.Answer(request_id=req.request_id, card="ZZ"), "card ZZ"),
            (lambda req: pb.Answer(request_id=req.request_id, card=""), "card "),
            (lambda req: pb.Answer(request_id=req.request_id, card="H10"), "card H10"),
        ],
        ids=[
            "wrong-field-bid",
            "wrong-field-keep",
            "no-action",
            "card-ZZ",
            "empty-card",
            "card-H10",
        ],
    )
    def test_strike_malformed(self, unix_address, bot_dir, log_dir, make_answer, raw) -> None:
        script = rc.Sends(make_answer, kind=pb.PLAY, nth=1)
        spec = make_spec()
        _, hosted = arun(
            play(unix_address, spec, [task_launcher(script), sdk(bot_dir)], log_dir), 40
        )
        record = check_record(hosted.outcome.games[0].record)
        finished_normally(record)
        [strike] = only_strikes(record)
        assert (strike["seat"], strike["kind"], strike["default"], strike["answer"]) == (
            "A",
            "play",
            "malformed",
            raw,
        )
        assert strike["request_id"] == script.bad_rids[0]
        # The bot is told: a STRIKE notice for that request, and the match ends with OK.
        [notice] = script.notices()
        assert (notice.level, notice.code, notice.request_id) == (
            pb.Notice.STRIKE,
            "malformed",
            script.bad_rids[0],
        )
        assert script.status == grpc.StatusCode.OK
        assert len(script.of("match_end")) == 1

    def test_three_malformed_answers_forfeit_as_illegal(
        self, unix_address, bot_dir, log_dir
    ) -> None:
        script = rc.Sends(
            lambda req: pb.Answer(request_id=req.request_id, card="ZZ"), nth=1, then_correct=False
        )
        spec = make_spec()
        _, hosted = arun(
            play(unix_address, spec, [task_launcher(script), sdk(bot_dir)], log_dir), 40
        )
        record = check_record(hosted.outcome.games[0].record)
        assert record["result"]["ending"] == "forfeit:illegal"
        assert record["result"]["winner"] == "B"
        assert [s["default"] for s in only_strikes(record)] == ["malformed"] * 3
        # The bot is told its side forfeited the game (Notice level FORFEIT).
        forfeits = [n for n in script.notices() if n.level == pb.Notice.FORFEIT]
        assert [n.code for n in forfeits] == ["forfeit:illegal"] and "3 strikes" in forfeits[0].message


class TestForfeitByStrikes:
    def test_three_illegal_cards_forfeit_the_game_not_the_match(
        self, unix_address, bot_dir, log_dir
    ) -> None:
        spec = make_spec(games=2)
        launchers = [sdk(bot_dir), sdk(bot_dir, "illegal", plays="all", games=(0,))]
        _, hosted = arun(play(unix_address, spec, launchers, log_dir), 40)
        first, second = hosted.outcome.games
        r1 = check_record(first.record)
        assert r1["result"]["ending"] == "forfeit:illegal"
        assert r1["result"]["forfeit"]["teams"] == ["B"] and r1["result"]["forfeit"]["seat"] == "B"
        assert r1["result"]["winner"] == "A" and first.winner == 0
        assert [(s["seat"], s["default"]) for s in only_strikes(r1)] == [("B", "illegal")] * 3
        assert r1["strikes"] == {"A": 0, "B": 3}
        # Strikes count per game: the next game is played out normally.
        r2 = check_record(second.record)
        finished_normally(r2)
        assert r2["strikes"] == {"A": 0, "B": 0}
        assert hosted.exit_codes == [0, 0]

    def test_never_answering_forfeits_by_timeout_each_game(
        self, unix_address, bot_dir, log_dir
    ) -> None:
        script = rc.Silent()
        spec = make_spec(games=2, tc=TimeControl(move_s=0.3, bank_s=0.3, hard_cap_s=1.0))
        started = time.monotonic()
        _, hosted = arun(
            play(unix_address, spec, [sdk(bot_dir), task_launcher(script)], log_dir), 40
        )
        assert time.monotonic() - started < 20
        for game in hosted.outcome.games:
            record = check_record(game.record)
            assert record["result"]["ending"] == "forfeit:timeout"
            assert (
                record["result"]["forfeit"]["teams"] == ["B"] and record["result"]["winner"] == "A"
            )
            strikes = [s for s in only_strikes(record) if s["seat"] == "B"]
            assert [s["default"] for s in strikes] == ["timeout"] * 3
            # First the move time plus the whole bank, then the move time alone.
            assert 600 - 5 <= strikes[0]["ms"] < 600 + 1000
            assert all(300 - 5 <= s["ms"] < 300 + 1000 for s in strikes[1:])
            assert "lost in an earlier game" not in record["result"]["forfeit"]["detail"]
        # The silent bot was told of each strike and each forfeit, and stayed connected to the end.
        assert [n.code for n in script.notices()] == (["timeout"] * 3 + ["forfeit:timeout"]) * 2
        assert script.status == grpc.StatusCode.OK


# ---------------------------------------------------------------------- refused answers


class DoubleAnswer(rc.Script):
    """Answers its first PLAY request twice."""

    def __init__(self) -> None:
        super().__init__()
        self.doubled = 0

    async def on_request(self, call, request):
        await super().on_request(call, request)
        if request.kind == pb.PLAY and not self.doubled:
            self.doubled = request.request_id
            await super().on_request(call, request)


class TestRefusedAnswers:
    def test_out_of_turn_is_refused_and_recorded_without_strike(
        self, unix_address, bot_dir, log_dir
    ) -> None:
        script = rc.OutOfTurn(count=2)
        _, hosted = arun(
            play(unix_address, make_spec(), [sdk(bot_dir), task_launcher(script)], log_dir), 40
        )
        record = check_record(hosted.outcome.games[0].record)
        finished_normally(record)
        assert only_strikes(record) == []
        assert [(e["seat"], e["request_id"]) for e in events(record)] == [
            ("B", rc.OutOfTurn.bogus_rid), ("B", rc.OutOfTurn.bogus_rid + 1),
        ]  # fmt: skip
        assert {e["code"] for e in events(record)} == {"out_of_turn"}
        assert script.status == grpc.StatusCode.OK

    def test_answering_twice_is_a_stale_answer_without_strike(
        self, unix_address, bot_dir, log_dir
    ) -> None:
        script = DoubleAnswer()
        _, hosted = arun(
            play(unix_address, make_spec(), [task_launcher(script), sdk(bot_dir)], log_dir), 40
        )
        record = check_record(hosted.outcome.games[0].record)
        finished_normally(record)
        assert only_strikes(record) == []
        assert [(e["seat"], e["code"], e["request_id"]) for e in events(record)] == [
            ("A", "stale_answer", script.doubled)
        ]
        assert [(n.code, n.request_id) for n in script.notices()] == [
            ("stale_answer", script.doubled)
        ]

    def test_a_flood_of_refused_answers_is_a_protocol_forfeit(
        self, unix_address, bot_dir, log_dir
    ) -> None:
        script = rc.OutOfTurn(count=MAX_REFUSED_PER_GAME + 1)
        spec = make_spec(games=2)
        _, hosted = arun(
            play(unix_address, spec, [task_launcher(script), sdk(bot_dir)], log_dir), 40
        )
        first, second = (check_record(g.record) for g in hosted.outcome.games)
        assert first["result"]["ending"] == "forfeit:protocol" and first["result"]["winner"] == "B"
        assert f"more than {MAX_REFUSED_PER_GAME} refused" in first["result"]["forfeit"]["detail"]
        assert len(events(first, "out_of_turn")) == MAX_REFUSED_PER_GAME + 1
        assert second["result"]["ending"] == "forfeit:protocol"
        assert script.status == grpc.StatusCode.PERMISSION_DENIED

    def test_a_refused_answer_is_noticed_to_the_bot(self, unix_address, bot_dir, log_dir) -> None:
        script = rc.OutOfTurn(count=1)
        _, hosted = arun(
            play(unix_address, make_spec(), [sdk(bot_dir), task_launcher(script)], log_dir), 40
        )
        check_record(hosted.outcome.games[0].record)
        assert [(n.code, n.request_id) for n in script.notices()] == [
            ("out_of_turn", rc.OutOfTurn.bogus_rid)
        ]


# ---------------------------------------------------------------------- lost seats


class TestLostSeats:
    def test_disconnect_mid_hand_forfeits_this_and_later_games(
        self, unix_address, bot_dir, log_dir
    ) -> None:
        script = rc.Disconnect(after=5, linger_s=1.5)  # the "process" lives on: a disconnect
        spec = make_spec(games=3)
        _, hosted = arun(
            play(unix_address, spec, [sdk(bot_dir), task_launcher(script)], log_dir), 40
        )
        records = [check_record(g.record) for g in hosted.outcome.games]
        assert [r["result"]["ending"] for r in records] == ["forfeit:disconnect"] * 3
        assert all(
            r["result"]["winner"] == "A" and r["result"]["forfeit"]["seat"] == "B" for r in records
        )
        assert all(
            "lost in an earlier game" in r["result"]["forfeit"]["detail"] for r in records[1:]
        )
        assert records[1]["hands"] == [] and records[2]["hands"] == []
        # The first game stopped inside hand 1, at B's sixth request.
        assert sum(a["seat"] == "B" for a in all_actions(records[0])) == 5
        assert script.status == grpc.StatusCode.CANCELLED

    def test_process_exit_mid_hand_is_a_crash(self, unix_address, bot_dir, log_dir) -> None:
        spec = make_spec(games=2)
        launchers = [sdk(bot_dir, "crash", plays=(3,), code=7), sdk(bot_dir)]
        _, hosted = arun(play(unix_address, spec, launchers, log_dir), 40)
        records = [check_record(g.record) for g in hosted.outcome.games]
        assert [r["result"]["ending"] for r in records] == ["forfeit:crash"] * 2
        assert all(
            r["result"]["forfeit"]["teams"] == ["A"] and r["result"]["winner"] == "B"
            for r in records
        )
        assert sum(a["seat"] == "A" and a["kind"] == "play" for a in all_actions(records[0])) == 2
        assert hosted.exit_codes[0] == 7 and hosted.exit_codes[1] == 0

    def test_answering_the_partners_request_is_a_protocol_forfeit(
        self, unix_address, bot_dir, log_dir, tmp_path
    ) -> None:
        """Seats N and S collude: N writes its request ids to a file, S answers with one."""
        rids = tmp_path / "rids.txt"
        spec = make_spec(preset="pagat", games=2)
        launchers = [
            rawclient_launcher("leak", str(rids)),
            sdk(bot_dir),
            rawclient_launcher("steal", str(rids)),
            sdk(bot_dir),
        ]
        _, hosted = arun(play(unix_address, spec, launchers, log_dir), 40)
        first, second = (check_record(g.record) for g in hosted.outcome.games)
        forfeit = first["result"]["forfeit"]
        assert first["result"]["ending"] == "forfeit:protocol"
        assert (forfeit["seat"], forfeit["teams"], first["result"]["winner"]) == ("S", ["NS"], "EW")
        stolen = {int(x) for x in rids.read_text().split()}
        assert any(
            f"answered request {rid}, which was sent to seat 0" in forfeit["detail"]
            for rid in stolen
        )
        assert [e["code"] for e in events(first) if e["seat"] == "S"] == ["lost:protocol"]
        assert second["result"]["ending"] == "forfeit:protocol" and second["hands"] == []
        assert "status=PERMISSION_DENIED" in (log_dir / "seat2.log").read_text()
        assert "status=OK" in (log_dir / "seat0.log").read_text()

    def test_a_second_join_message_on_the_stream_is_a_protocol_forfeit(
        self, unix_address, bot_dir, log_dir
    ) -> None:
        class Rejoin(rc.Script):
            async def on_request(self, call, request):
                if request.kind == pb.PLAY:
                    await call.write(rc.join_message("whatever"))
                    return
                await super().on_request(call, request)

        script = Rejoin()
        _, hosted = arun(
            play(unix_address, make_spec(), [sdk(bot_dir), task_launcher(script)], log_dir), 40
        )
        record = check_record(hosted.outcome.games[0].record)
        assert record["result"]["ending"] == "forfeit:protocol"
        assert "unexpected join message" in record["result"]["forfeit"]["detail"]
        assert script.status == grpc.StatusCode.PERMISSION_DENIED


class TestFrozenBot:
    def test_keepalive_notices_a_stopped_process(self, bind_address, bot_dir, log_dir) -> None:
        """A SIGSTOPped bot cannot answer pings: dropped within seconds, not after the 30 s move time."""
        frozen = Remember(sdk(bot_dir, "frozen", plays=(1,)))
        spec = make_spec(games=2, tc=TimeControl(move_s=30.0, bank_s=30.0, hard_cap_s=60.0))
        ended: list[float] = []

        def on_game_end(game: Any) -> None:
            ended.append(time.time())
            frozen.signal(signal.SIGCONT)

        try:
            _, hosted = arun(
                play(bind_address, spec, [frozen, sdk(bot_dir)], log_dir, on_game_end=on_game_end),
                40,
            )
        finally:
            frozen.cleanup()
        # The bot prints the time just before it stops itself.
        log = (log_dir / "seat0.log").read_text()
        match = re.search(r"misbehaving \(frozen\) .* at (\d+\.\d+)", log)
        assert match is not None, (
            log,
            [[(e.code, e.detail) for e in g.events] for g in hosted.outcome.games],
            hosted.exit_codes,
            [len(all_actions(g.record)) for g in hosted.outcome.games],
        )
        froze = float(match.group(1))
        assert ended[0] - froze < 12, (
            f"the frozen bot was noticed only after {ended[0] - froze:.1f} s"
        )
        records = [check_record(g.record) for g in hosted.outcome.games]
        assert [r["result"]["ending"] for r in records] == ["forfeit:disconnect"] * 2
        assert records[0]["result"]["forfeit"]["seat"] == "A"
        assert sum(a["seat"] == "A" and a["kind"] == "play" for a in all_actions(records[0])) == 0


# ---------------------------------------------------------------------- joining


class Probing(rc.Script):
    """Before joining, tries a wrong token, a wrong version, a non-Join first message; after, a second join."""

    async def first_message(self, call, token):
        a = self.address
        self.token = token
        self.probes = {
            "token": await rc.join_status(a, token + "x"),
            "version": await rc.join_status(a, token, version=2),
            "version0": await rc.join_status(a, token, version=0),
            "answer-first": await rc.join_status(
                a, token, first=pb.BotMessage(answer=pb.Answer(request_id=1, bid=1))
            ),
            "empty-first": await rc.join_status(a, token, first=pb.BotMessage()),
        }
        await super().first_message(call, token)

    async def on_welcome(self, call, welcome, token, address):
        self.second = await rc.join_status(address, token)


class TestJoining:
    def test_refusals_then_a_good_join(self, unix_address, bot_dir, log_dir) -> None:
        script = Probing()
        spec = make_spec()

        async def scenario() -> tuple[Any, Any, Any]:
            async with running_referee(unix_address) as server:
                hosted = await host_match(
                    server,
                    spec,
                    [task_launcher(script), sdk(bot_dir)],
                    server.addresses[0],
                    log_dir=log_dir,
                )
                expired = await rc.join_status(server.addresses[0], script.token)
            return server, hosted, expired

        server, hosted, expired = arun(scenario(), 40)
        codes = {k: v[0] for k, v in script.probes.items()}
        assert codes == {
            "token": grpc.StatusCode.UNAUTHENTICATED,
            "version": grpc.StatusCode.FAILED_PRECONDITION,
            "version0": grpc.StatusCode.FAILED_PRECONDITION,
            "answer-first": grpc.StatusCode.INVALID_ARGUMENT,
            "empty-first": grpc.StatusCode.INVALID_ARGUMENT,
        }
        assert script.second[0] == grpc.StatusCode.ALREADY_EXISTS
        assert expired[0] == grpc.StatusCode.UNAUTHENTICATED  # the token died with the match
        # The refusals did not hurt the seat: it joined and the match was played out.
        record = check_record(hosted.outcome.games[0].record)
        finished_normally(record)
        assert record["seats"]["A"]["name"] == "scripted"
        assert script.status == grpc.StatusCode.OK
        assert [c for c, _ in server.service.refusals] == [
            "UNAUTHENTICATED", "FAILED_PRECONDITION", "FAILED_PRECONDITION", "INVALID_ARGUMENT",
            "INVALID_ARGUMENT", "ALREADY_EXISTS", "UNAUTHENTICATED",
        ]  # fmt: skip

    def test_sdk_bot_with_a_wrong_token_exits_2_and_forfeits(
        self, unix_address, bot_dir, log_dir
    ) -> None:
        spec = make_spec(games=2)
        bad = python_launcher(write_sdk_bot(bot_dir), token="not-a-token")
        _, hosted = arun(play(unix_address, spec, [sdk(bot_dir), bad], log_dir), 40)
        assert hosted.exit_codes[1] == 2
        assert "UNAUTHENTICATED" in (log_dir / "seat1.log").read_text()
        records = [check_record(g.record) for g in hosted.outcome.games]
        # The referee cannot tell which seat a wrong token meant; the host sees the process exit.
        assert [r["result"]["ending"] for r in records] == ["forfeit:crash"] * 2
        assert all(r["result"]["winner"] == "A" for r in records)

    def test_a_bot_that_never_joins_forfeits_after_the_start_timeout(
        self, unix_address, bot_dir, log_dir
    ) -> None:
        script = rc.Script()
        spec = make_spec(games=2)
        started = time.monotonic()
        _, hosted = arun(
            play(unix_address, spec, [task_launcher(script), None], log_dir, start_timeout=1.0), 30
        )
        assert 1.0 <= time.monotonic() - started < 10
        records = [check_record(g.record) for g in hosted.outcome.games]
        assert [r["result"]["ending"] for r in records] == ["forfeit:timeout"] * 2
        assert all(
            r["result"]["forfeit"]["teams"] == ["B"] and r["result"]["winner"] == "A"
            for r in records
        )
        assert "did not join within 1 s" in records[0]["result"]["forfeit"]["detail"]
        assert all(r["hands"] == [] for r in records)
        # The seat that joined is told each game's ending, then the match's.
        assert [g.ending for g in script.of("game_end")] == ["forfeit:timeout"] * 2
        assert len(script.of("match_end")) == 1 and script.status == grpc.StatusCode.OK


# ---------------------------------------------------------------------- bad bytes


def join_bytes(token: str) -> bytes:
    return rc.join_message(token).SerializeToString()


GARBAGE = b"\xff\xff garbage"


class RawSender:
    """A bot "process" that sends raw chunks (``make_chunks(token)``), then stays alive ``linger_s``."""

    def __init__(self, make_chunks: Any, linger_s: float = 0.0) -> None:
        self.make_chunks = make_chunks
        self.linger_s = linger_s
        self.result: tuple[Any, str, list[Any]] | None = None

    async def run(self, address: str, token: str) -> None:
        self.result = await rc.send_raw(address, self.make_chunks(token))
        await asyncio.sleep(self.linger_s)


class TestBadBytes:
    def test_garbage_after_join_is_a_protocol_forfeit(self, unix_address, bot_dir, log_dir) -> None:
        sender = RawSender(lambda token: [join_bytes(token), GARBAGE], linger_s=1.0)
        spec = make_spec(games=2)

        launchers = [task_launcher(sender), sdk(bot_dir)]
        _, hosted = arun(play(unix_address, spec, launchers, log_dir), 40)
        records = [check_record(g.record) for g in hosted.outcome.games]
        assert [r["result"]["ending"] for r in records] == ["forfeit:protocol"] * 2
        assert "unreadable message" in records[0]["result"]["forfeit"]["detail"]
        code, details, messages = sender.result
        assert code == grpc.StatusCode.PERMISSION_DENIED and "unreadable message" in details
        assert messages[0].WhichOneof("message") == "welcome"

    def test_garbage_first_message_fails_the_stream_and_the_server_survives(
        self, unix_address, bot_dir, log_dir
    ) -> None:
        """The stream is refused (INVALID_ARGUMENT), the seat never joined, the server serves on."""
        sender = RawSender(lambda token: [GARBAGE], linger_s=0.0)

        async def scenario() -> Any:
            async with running_referee(unix_address) as server:
                address = server.addresses[0]
                hosted = await host_match(
                    server, make_spec(), [task_launcher(sender), sdk(bot_dir)], address, log_dir=log_dir,
                    start_timeout=5.0,
                )  # fmt: skip
                # The server still serves: health, and a fresh match on the same socket.
                status = await health_status(address)
                again = await host_match(
                    server, make_spec("m2"), [task_launcher(rc.Script()), sdk(bot_dir)], address
                )
            return hosted, status, again

        hosted, status, again = arun(scenario(), 40)
        code, details, messages = sender.result
        assert code is not None and code != grpc.StatusCode.OK and messages == []
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, details)
        record = check_record(hosted.outcome.games[0].record)
        assert record["result"]["ending"] in ("forfeit:crash", "forfeit:timeout")  # never joined
        assert record["result"]["winner"] == "B"
        assert status == health_pb2.HealthCheckResponse.SERVING
        finished_normally(check_record(again.outcome.games[0].record))

    def test_garbage_first_message_is_invalid_argument(self, unix_address) -> None:
        async def scenario() -> Any:
            async with running_referee(unix_address) as server:
                result = await rc.send_raw(server.addresses[0], [GARBAGE])
                return result, list(server.service.refusals)

        (code, details, _), refusals = arun(scenario(), 20)
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, details)
        assert [c for c, _ in refusals] == ["INVALID_ARGUMENT"]

    def test_a_10mb_join_is_refused_by_the_receive_limit(
        self, unix_address, bot_dir, log_dir
    ) -> None:
        huge = lambda token: [
            pb.BotMessage(
                join=pb.Join(token=token, protocol_version=1, bot_name="x" * 10_000_000)
            ).SerializeToString()
        ]
        sender = RawSender(huge, linger_s=2.0)  # stays alive: it simply never joined

        async def scenario() -> Any:
            async with running_referee(unix_address) as server:
                address = server.addresses[0]
                hosted = await host_match(
                    server, make_spec(), [task_launcher(sender), sdk(bot_dir)], address, log_dir=log_dir,
                    start_timeout=1.0,
                )  # fmt: skip
                status = await health_status(address)
            return hosted, status

        hosted, status = arun(scenario(), 40)
        code, details, messages = sender.result
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "65536" in details, (code, details)
        assert messages == []
        record = check_record(hosted.outcome.games[0].record)
        assert record["result"]["ending"] == "forfeit:timeout" and record["result"]["winner"] == "B"
        assert status == health_pb2.HealthCheckResponse.SERVING

    def test_a_10mb_answer_ends_the_stream_and_forfeits(
        self, unix_address, bot_dir, log_dir
    ) -> None:
        script = rc.Huge(10_000_000, nth=3)
        script.linger_s = 1.0  # the process lives on: the referee sees the stream end, not an exit
        spec = make_spec(games=2)
        _, hosted = arun(
            play(unix_address, spec, [sdk(bot_dir), task_launcher(script)], log_dir), 40
        )
        assert script.status == grpc.StatusCode.RESOURCE_EXHAUSTED and "65536" in script.details
        records = [check_record(g.record) for g in hosted.outcome.games]
        # Over the limit gRPC cancels the stream; the referee's reader sees it end: a disconnect.
        assert [r["result"]["ending"] for r in records] == ["forfeit:disconnect"] * 2
        assert records[0]["result"]["winner"] == "A"
        assert sum(a["seat"] == "B" for a in all_actions(records[0])) == 2

    def test_a_60kib_answer_is_within_the_limit_and_merely_malformed(
        self, unix_address, bot_dir, log_dir
    ) -> None:
        script = rc.Huge(60_000, nth=3)
        _, hosted = arun(
            play(unix_address, make_spec(), [sdk(bot_dir), task_launcher(script)], log_dir), 40
        )
        record = check_record(hosted.outcome.games[0].record)
        finished_normally(record)
        [strike] = only_strikes(record)
        assert strike["seat"] == "B" and strike["default"] == "malformed"
        assert len(strike["answer"]) <= 200


# ---------------------------------------------------------------------- health, TCP


def test_health_service_answers_serving(bind_address) -> None:
    async def scenario() -> int:
        async with running_referee(bind_address) as server:
            return await health_status(server.addresses[0])

    assert arun(scenario(), 20) == health_pb2.HealthCheckResponse.SERVING


def test_full_match_between_two_sdk_bots_over_tcp(bot_dir, log_dir) -> None:
    spec = make_spec(games=2, max_hands=3, tc=EASY, seed="tcp")
    server, hosted = arun(play("127.0.0.1:0", spec, [sdk(bot_dir), sdk(bot_dir)], log_dir), 60)
    address = server.addresses[0]
    assert address.startswith("127.0.0.1:") and not address.endswith(":0")
    assert hosted.exit_codes == [0, 0]
    assert hosted.outcome.seat_names == ["sdk-random", "sdk-random"]
    for game in hosted.outcome.games:
        record = check_record(game.record)
        finished_normally(record)
        assert record["strikes"] == {"A": 0, "B": 0} and record["events"] == []
        assert len(record["hands"]) == 3 or record["result"]["ending"] != "max_hands"
        assert record["seats"] == {
            "A": {"name": "sdk-random", "version": "1"},
            "B": {"name": "sdk-random", "version": "1"},
        }


# ---------------------------------------------------------------------- more joining, platform


def test_no_join_within_the_join_timeout_is_deadline_exceeded(unix_address, monkeypatch) -> None:
    import arena.referee.server as server_module

    monkeypatch.setattr(server_module, "JOIN_TIMEOUT_S", 0.3)

    async def scenario() -> Any:
        async with running_referee(unix_address) as server:
            started = time.monotonic()
            result = await rc.send_raw(server.addresses[0], [], read_timeout=10)
            return result, time.monotonic() - started, list(server.service.refusals)

    (code, details, messages), took, refusals = arun(scenario(), 20)
    assert code == grpc.StatusCode.DEADLINE_EXCEEDED and messages == [], (code, details)
    assert took < 5
    assert [c for c, _ in refusals] == ["DEADLINE_EXCEEDED"]


def test_long_bot_names_are_cut_to_64_characters(unix_address, bot_dir, log_dir) -> None:
    script = rc.Script()
    script.name = "n" * 100
    _, hosted = arun(
        play(unix_address, make_spec(), [task_launcher(script), sdk(bot_dir)], log_dir), 40
    )
    record = check_record(hosted.outcome.games[0].record)
    assert record["seats"]["A"]["name"] == "n" * 64
    assert hosted.outcome.seat_names[0] == "n" * 64


def test_stopping_the_referee_mid_match_voids_the_game(unix_address, bot_dir, log_dir) -> None:
    """A referee that stops is the platform's failure: void games, no forfeit charged to a bot."""
    spec = make_spec(games=2, max_hands=2)
    seats = [RemoteSeat(s, spec.match_id) for s in range(2)]
    for seat in seats:
        seat.transcript = []
    launchers = [sdk(bot_dir, "late", delay=0.02, plays="all", games=(0, 1)) for _ in range(2)]

    async def scenario() -> Any:
        server = await RefereeServer().start([unix_address])
        match = asyncio.ensure_future(
            host_match(server, spec, launchers, server.addresses[0], log_dir=log_dir, seats=seats)
        )
        try:
            while not any(
                m.WhichOneof("message") == "request" for s in seats for m in s.transcript or []
            ):
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.3)
            await server.stop(0.2)  # the platform goes away mid-game
            return await asyncio.wait_for(match, 20)
        finally:
            match.cancel()
            await server.stop(0)

    hosted = arun(scenario(), 40)
    endings = [g.ending for g in hosted.outcome.games]
    for game in hosted.outcome.games:
        check_record(game.record)
    assert not any(e.startswith("forfeit:") for e in endings), endings
    assert endings[0] == "void:platform"


class SlowWelcomeSeat(RemoteSeat):
    """A seat whose stream takes 0.2 s to accept the Welcome (as a busy transport can)."""

    def attach(self, write, name, version):
        async def slow(message: pb.RefereeMessage) -> None:
            if message.WhichOneof("message") == "welcome":
                await asyncio.sleep(0.2)
            await write(message)

        super().attach(slow, name, version)


class JoinLate(rc.Script):
    async def first_message(self, call, token):
        await asyncio.sleep(0.5)  # the other seat has joined: this join starts the match
        await super().first_message(call, token)


def test_welcome_is_the_first_message_even_when_its_write_is_slow(
    unix_address, bot_dir, log_dir
) -> None:
    """The last join starts the match at once: its GameStart must wait for the Welcome.

    (Without a per-seat write lock the two writes overlapped: GameStart arrived
    first, or the call failed with ExecuteBatchError and the seat was lost.)
    """
    spec = make_spec()
    seats = [SlowWelcomeSeat(0, spec.match_id), RemoteSeat(1, spec.match_id)]
    late, early = JoinLate(), rc.Script()

    async def scenario() -> Any:
        async with running_referee(unix_address) as server:
            return await host_match(
                server,
                spec,
                [task_launcher(late), task_launcher(early)],
                server.addresses[0],
                seats=seats,
            )

    hosted = arun(scenario(), 30)
    finished_normally(check_record(hosted.outcome.games[0].record))
    assert [m.WhichOneof("message") for m in late.received[:2]] == ["welcome", "game_start"]
