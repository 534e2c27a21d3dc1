"""Any recorded decision, reproduced (issue 26): the rebuilt view is the view the referee sent.

Bots play through the real referee (gRPC on a Unix socket, the SDK's client)
and log every view, ``MatchInfo`` and ``GameInfo`` they receive; the records
the referee wrote are then rebuilt with :class:`arena_sdk.testing.RecordedGame`
and compared with the logs, field by field, at every decision of every seat.
Every preset, blind nil (both modes) and the two-player exchange included.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from arena_sdk.bot import Bot, GameInfo, MatchInfo
from arena_sdk.client import join_match
from arena_sdk.engine import Card, resolve_ruleset
from arena_sdk.testing import ClockSettings, RecordedGame, main, reproduce_decision
from arena_sdk.view import View

from arena.match import MatchSpec, TimeControl, game_seeds
from arena.referee.host import host_match
from arena.referee.server import RefereeServer
from arena.referee.session import RemoteSeat

TC = TimeControl(move_s=1.0, bank_s=4.0, hard_cap_s=8.0)
CLOCK = ClockSettings(move_ms=1000, bank_ms=4000, hard_cap_ms=8000, strikes_to_forfeit=3)

VIEW_FIELDS = (
    "kind", "request_id", "legal", "hand", "seat", "hand_number", "first", "hand_hidden", "bids",
    "blind", "tricks_won", "leader", "current_trick", "tricks", "spades_broken", "scores", "bags",
    "offered_card", "seen_discards", "exchanged", "move_ms", "bank_ms", "allowed_ms", "rules",
)  # fmt: skip


def snapshot(view: View) -> dict[str, Any]:
    """Every field of a view, decoded (a later decision never changes it)."""
    return {name: getattr(view, name) for name in VIEW_FIELDS}


class LoggingBot(Bot):
    """Random legal play from ``self.rng`` that bids blind nil half the time; logs what it gets."""

    name = "logger"
    version = "1"

    def __init__(self) -> None:
        super().__init__()
        self.views: dict[int, dict[str, Any]] = {}  # request id -> snapshot
        self.games: list[GameInfo] = []
        self.infos: list[MatchInfo] = []

    def on_match_start(self, info: MatchInfo) -> None:
        self.infos.append(info)

    def on_game_start(self, info: GameInfo) -> None:
        self.games.append(info)

    def log(self, view: View) -> None:
        self.views[view.request_id] = snapshot(view)

    def bid(self, view: View) -> int:
        self.log(view)
        return self.rng.randint(0, 4)

    def play(self, view: View) -> Card:
        self.log(view)
        return self.rng.choice(view.legal_cards())

    def blind_nil(self, view: View) -> bool:
        self.log(view)
        return self.rng.random() < 0.5

    def draw(self, view: View) -> bool:
        self.log(view)
        return self.rng.random() < 0.5

    def exchange(self, view: View) -> list[Card]:
        self.log(view)
        return self.rng.sample(view.hand, self.rng.randint(0, 3))


def play_through_referee(preset: str, games: int, **options: object) -> tuple[list[LoggingBot], list[dict[str, Any]]]:
    """A match of ``games`` games through the real referee; the bots and the records (as JSON)."""
    rules = resolve_ruleset(preset, {"max_hands": 2, **options})
    spec = MatchSpec(f"rep-{preset}", rules, tuple(game_seeds(f"rep-{preset}", games)), TC)
    bots = [LoggingBot() for _ in range(rules.players)]
    folder = Path(tempfile.mkdtemp(prefix="arena-rep-", dir="/tmp"))  # short: Unix socket paths are limited

    async def scenario() -> Any:
        server = await RefereeServer().start([f"unix:{folder / 'r.sock'}"])
        seats = [RemoteSeat(s, spec.match_id) for s in range(rules.players)]
        try:
            hosting = asyncio.create_task(
                host_match(server, spec, [None] * rules.players, server.addresses[0], seats=seats, start_timeout=30)
            )
            await asyncio.sleep(0)
            await asyncio.gather(*(join_match(b, server.addresses[0], s.token) for b, s in zip(bots, seats)))
            return await hosting
        finally:
            await server.stop(0.5)

    try:
        hosted = asyncio.run(asyncio.wait_for(scenario(), 180))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    records = [json.loads(json.dumps(g.record)) for g in hosted.outcome.games]
    for game in hosted.outcome.games:
        assert game.ending in ("max_hands", "target", "floor"), (game.ending, game.forfeit)
    return bots, records


def kinds_played(records: list[dict[str, Any]]) -> set[tuple[str, Any]]:
    return {(a["kind"], a["action"] if a["kind"] == "blind_nil" else None)
            for r in records for h in r["hands"] for a in h["actions"]}  # fmt: skip


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("pagat", {}),
        ("pagat", {"blind_nil": "any"}),
        ("wikipedia", {}),
        ("cards4", {}),
        ("two-player", {}),
    ],
)
def test_the_rebuilt_view_is_the_view_the_referee_sent(preset: str, options: dict[str, object]) -> None:
    bots, records = play_through_referee(preset, 2, **options)
    rules = resolve_ruleset(preset, {"max_hands": 2, **options})
    if rules.blind_nil != "off":
        # The records must exercise what the test claims: blind nil bid, and in two-player the exchange.
        assert ("blind_nil", True) in kinds_played(records), "no blind nil was bid: pick other seeds"
        if rules.players == 2:
            assert ("exchange", None) in kinds_played(records), "no exchange was played"
    compared = 0
    for index, record in enumerate(records):
        game = RecordedGame(record, clock=CLOCK, games=2)
        assert game.game_index == index, "read from the game id <match>-g<N>"
        for seat, bot in enumerate(bots):
            decisions = game.decisions(seat)
            sent = [rid for rid in bot.views if any(rid == d.message.request.request_id for d in decisions)]
            assert len(decisions) == len(sent) > 0, "one rebuilt decision per request the seat got"
            for k, decision in enumerate(decisions):
                rep = game.reproduce(seat, k)
                assert rep.decision is decision
                rebuilt = snapshot(rep.view)
                logged = bot.views[rebuilt["request_id"]]
                for name in VIEW_FIELDS:
                    assert rebuilt[name] == logged[name], (preset, index, seat, k, name)
                compared += 1
            match_info = game.reproduce(seat, 0).match
            got = bot.infos[0]
            assert dataclasses_equal(match_info, got, but=("seat_names",)), (match_info, got)
            # A seat that had not joined yet is "" in the Welcome; the record has every name.
            assert all(g in ("", r) for g, r in zip(got.seat_names, match_info.seat_names, strict=True))
            assert game.reproduce(seat, 0).game == bot.games[index]
    assert compared == sum(len(b.views) for b in bots), "every view any bot got was rebuilt"


def dataclasses_equal(a: Any, b: Any, *, but: tuple[str, ...]) -> bool:
    import dataclasses

    return all(getattr(a, f.name) == getattr(b, f.name) for f in dataclasses.fields(a) if f.name not in but)


# ---------------------------------------------------------------------- re-asking


class Plain(Bot):
    """Deterministic bids from the hand; plays and the rest from ``self.rng``."""

    name = "plain"

    def bid(self, view: View) -> int:
        return max(1, sum(1 for c in view.hand if c.rank >= 12))

    def play(self, view: View) -> Card:
        return self.rng.choice(view.legal_cards())

    def blind_nil(self, view: View) -> bool:
        return self.rng.random() < 0.25

    def draw(self, view: View) -> bool:
        return self.rng.random() < 0.5

    def exchange(self, view: View) -> list[Card]:
        return self.rng.sample(view.hand, self.rng.randint(0, 3))


class BidsOneMore(Plain):
    """``Plain`` changed in one rule: it bids one more."""

    name = "plain+1"

    def bid(self, view: View) -> int:
        return super().bid(view) + 1


BOT_FILE = '''
import sys
sys.path.insert(0, {here!r})
from test_reproduce import Plain, BidsOneMore
'''


@pytest.fixture(scope="module")
def plain_records() -> dict[str, list[dict[str, Any]]]:
    """Records of ``Plain`` through the real referee: four players, and two with the exchange."""
    out = {}
    for preset in ("wikipedia", "two-player"):
        rules = resolve_ruleset(preset, {"max_hands": 2})
        spec = MatchSpec(f"plain-{preset}", rules, tuple(game_seeds(f"plain-{preset}", 1)), TC)
        out[preset] = _hosted_records(spec, [Plain() for _ in range(rules.players)])
    return out


def _hosted_records(spec: MatchSpec, bots: list[Bot]) -> list[dict[str, Any]]:
    folder = Path(tempfile.mkdtemp(prefix="arena-rep-", dir="/tmp"))

    async def scenario() -> Any:
        server = await RefereeServer().start([f"unix:{folder / 'r.sock'}"])
        seats = [RemoteSeat(s, spec.match_id) for s in range(len(bots))]
        try:
            hosting = asyncio.create_task(
                host_match(server, spec, [None] * len(bots), server.addresses[0], seats=seats, start_timeout=30)
            )
            await asyncio.sleep(0)
            await asyncio.gather(*(join_match(b, server.addresses[0], s.token) for b, s in zip(bots, seats)))
            return await hosting
        finally:
            await server.stop(0.5)

    try:
        hosted = asyncio.run(asyncio.wait_for(scenario(), 180))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return [json.loads(json.dumps(g.record)) for g in hosted.outcome.games]


@pytest.mark.parametrize("preset", ["wikipedia", "two-player"])
def test_reasking_the_same_bot_changes_nothing_and_a_changed_rule_shows_only_where_it_applies(
    preset: str, plain_records: dict[str, list[dict[str, Any]]]
) -> None:
    record = plain_records[preset]
    game = RecordedGame(record[0], clock=CLOCK)
    bids_seen = 0
    for seat in range(game.players):
        same = game.reask(Plain(), seat)
        assert same and not [r for r in same if r.differs], "a seeded bot answers exactly as it did"
        changed = game.reask(BidsOneMore(), seat)
        differing = [r for r in changed if r.differs]
        bids = [r for r in changed if r.decision.kind.value == "bid"]
        assert differing == bids, "exactly the bids differ, nothing else"  # (none for a blind nil bidder)
        assert all(r.now == r.decision.played + 1 for r in differing)
        bids_seen += len(bids)
    assert bids_seen >= 2


def test_the_command_lists_the_differing_decisions(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   plain_records: dict[str, list[dict[str, Any]]]) -> None:  # fmt: skip
    record = tmp_path / "game.json"
    record.write_text(json.dumps(plain_records["two-player"][0]))
    here = Path(__file__).resolve().parent
    bot = tmp_path / "bots.py"
    bot.write_text(BOT_FILE.format(here=str(here)))
    clock = "1000,4000,8000"
    assert main([f"{bot}:Plain", "--replay", str(record), "--seat", "B", "--time-control", clock, "--json"]) == 0
    same = json.loads(capsys.readouterr().out)
    assert same["differences"] == 0 and same["decisions"] == len(same["rows"]) > 10
    assert same["bot_seed"] == plain_records["two-player"][0]["bot_seeds"]["B"]
    assert main([f"{bot}:BidsOneMore", "--replay", str(record), "--seat", "1", "--time-control", clock, "--json"]) == 0
    changed = json.loads(capsys.readouterr().out)
    bids = [a for h in plain_records["two-player"][0]["hands"] for a in h["actions"] if a["seat"] == "B" and a["kind"] == "bid"]
    assert bids and [r["kind"] for r in changed["rows"] if r["differs"]] == ["bid"] * len(bids)
    assert main([f"{bot}:BidsOneMore", "--replay", str(record), "--seat", "B", "--time-control", clock]) == 0
    table = capsys.readouterr().out.splitlines()
    assert f"{len(bids)} of" in table[0] and "decisions differ" in table[0]
    marked = [line for line in table[1:] if line.startswith("*")]
    assert len(marked) == len(bids) and all(" bid " in line for line in marked)
    assert main([f"{bot}:Plain", "--replay", str(record), "--seat", "Q"]) == 2


def test_reproduce_decision_takes_a_path_and_names_a_missing_decision(
    tmp_path: Path, plain_records: dict[str, list[dict[str, Any]]]
) -> None:
    record = tmp_path / "game.json"
    record.write_text(json.dumps(plain_records["wikipedia"][0]))
    rep = reproduce_decision(record, "E", 0, clock=CLOCK)
    assert rep.view.seat == 1 and rep.match.seat == 1 and rep.match.partner == 3
    assert rep.game.bot_seed == plain_records["wikipedia"][0]["bot_seeds"]["E"]
    bot = rep.prepare(Plain())
    assert getattr(bot, rep.decision.kind.value if rep.decision.kind.value != "blind_nil" else "blind_nil")(rep.view) is not None
    with pytest.raises(IndexError, match="decisions in this game"):
        reproduce_decision(record, "E", 10_000, clock=CLOCK)


class SlowLogger(LoggingBot):
    """Spends a few ms on every decision: with a 1 ms move time, the bank pays."""

    def log(self, view: View) -> None:
        super().log(view)
        import time

        time.sleep(0.004)


def test_the_bank_left_at_each_decision_is_recomputed_from_the_recorded_times() -> None:
    rules = resolve_ruleset("two-player", {"max_hands": 1})
    tc = TimeControl(move_s=0.001, bank_s=20.0, hard_cap_s=20.0)
    spec = MatchSpec("rep-bank", rules, tuple(game_seeds("rep-bank", 1)), tc)
    bots = [SlowLogger(), SlowLogger()]
    record = _hosted_records(spec, bots)[0]
    game = RecordedGame(record, clock=ClockSettings(move_ms=1, bank_ms=20_000, hard_cap_ms=20_000))
    for seat, bot in enumerate(bots):
        sent = [bot.views[d.message.request.request_id] for d in game.decisions(seat)]
        assert sent[-1]["bank_ms"] < sent[0]["bank_ms"] - 10, "the bank was spent"
        for k, logged in enumerate(sent):
            view = game.reproduce(seat, k).view
            # The record keeps times to the microsecond: the bank may differ by its rounding.
            assert abs(view.bank_ms - logged["bank_ms"]) <= 1, (k, view.bank_ms, logged["bank_ms"])
            assert abs(view.allowed_ms - logged["allowed_ms"]) <= 1
            assert snapshot(view) | {"bank_ms": 0, "allowed_ms": 0} == logged | {"bank_ms": 0, "allowed_ms": 0}


def test_a_tournament_style_game_keyed_seeds_and_given_ids() -> None:
    """Tournaments and sprt runs give game ids of their own and key the bot seeds by a secret:
    the record's ``bot_seeds`` still re-seed the bot, and ``game_index`` places the game."""
    rules = resolve_ruleset("cards4", {"max_hands": 1})
    spec = MatchSpec(
        "t-batch-7-t2", rules, tuple(game_seeds("tour", 2)), TC,
        game_ids=("tour-p001-d003-t2", "tour-p001-d004-t2"), bot_seed_key="secret-of-the-run",
    )  # fmt: skip
    bots = [LoggingBot() for _ in range(4)]
    records = _hosted_records(spec, bots)
    record = records[1]
    assert record["game_id"] == "tour-p001-d004-t2"
    assert RecordedGame(record).game_index == 0, "not a <match>-gN id: 0 unless told"
    game = RecordedGame(record, clock=CLOCK, game_index=1, games=2)
    for seat, bot in enumerate(bots):
        rep = game.reproduce(seat, 0)
        assert rep.game == bot.games[1] and rep.match.games == 2
        assert rep.game.bot_seed == record["bot_seeds"]["NESW"[seat]]
        assert snapshot(rep.view) == bot.views[rep.view.request_id]
        # The bot re-seeded from the record answers as it did (its log is the only difference).
        assert not [r for r in game.reask(LoggingBot(), seat) if r.differs]
