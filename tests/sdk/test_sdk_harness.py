"""The in-process harness: full games through the wire messages, bad answers, seeds, hooks."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from arena_sdk import Bot, Card, View
from arena_sdk.bot import BotDriver
from arena_sdk.engine import Decision, replay_record, resolve_ruleset
from arena_sdk.protocol import answer_from_proto, answer_to_proto
from arena_sdk.testing import (
    BotAnswerError,
    RandomBot,
    bot_seed_for,
    play_game,
    play_match,
)
from arena_sdk.wire import arena_pb2 as pb

REPO = Path(__file__).resolve().parents[2]


def replays(record: dict) -> None:
    """The record survives JSON and replays to the same result."""
    report = replay_record(json.loads(json.dumps(record)))
    assert report.result.scores == tuple(record["result"]["scores"].values())


# ------------------------------------------------------------------ full games


def test_four_random_bots_play_a_full_game_whose_record_replays():
    result = play_game([RandomBot(), RandomBot(), RandomBot(), RandomBot()], "pagat", seed=3)
    assert result.result.ending in ("target", "floor", "max_hands")
    assert result.names == ("random",) * 4
    assert result.defaults == (0, 0, 0, 0)
    assert result.record["meta"]["seats"] == {"N": "random", "E": "random", "S": "random", "W": "random"}
    assert len(result.record["hands"]) == result.result.hands
    replays(result.record)


@pytest.mark.parametrize("preset", ["two-player", "wikipedia", "cards4"])
def test_other_rulesets_play_and_replay(preset):
    result = play_game([RandomBot, RandomBot], preset, seed=11, max_hands=4)
    assert result.players == (2 if preset == "two-player" else 4)
    assert result.result.hands <= 4
    replays(result.record)


def test_overrides_and_ruleset_objects():
    rules = resolve_ruleset("pagat", {"failed_nil_tricks": "contract"})
    result = play_game([RandomBot, RandomBot], rules, seed=2, overrides={"target": 100}, max_hands=5)
    assert result.rules.target == 100 and result.rules.max_hands == 5
    assert result.rules.failed_nil_tricks == "contract"
    assert result.record["ruleset"]["target"] == 100


def test_team_mode_gives_every_seat_its_own_bot():
    seen: list[Bot] = []

    class Recorder(RandomBot):
        def on_match_start(self, info):
            seen.append(self)

    instance = Recorder()
    result = play_game([instance, Recorder], "pagat", seed=1, max_hands=1)
    assert len(seen) == 4 and len({id(b) for b in seen}) == 4
    assert [b.match.seat for b in seen] == [0, 1, 2, 3]
    assert seen[0] is instance and seen[2] is not instance
    assert result.names == ("random",) * 4


def test_seat_counts_are_checked():
    with pytest.raises(ValueError, match="needs 2 \\(team mode\\) or 4 bots, got 3"):
        play_game([RandomBot] * 3, "pagat")
    with pytest.raises(ValueError, match="needs 2 bots"):
        play_game([RandomBot] * 4, "two-player")


# ------------------------------------------------------------------ bad answers


class NoFollowBot(RandomBot):
    """Plays a card of another suit whenever it could follow suit."""

    name = "nofollow"

    def play(self, view: View) -> Card:
        wrong = [c for c in view.hand if c not in view.legal_cards()]
        return wrong[0] if wrong else view.legal_cards()[0]


class BigBidBot(RandomBot):
    name = "bigbid"

    def bid(self, view: View) -> int:
        return 14


class NegativeBidBot(RandomBot):
    name = "negbid"

    def bid(self, view: View) -> int:
        return -1


def test_illegal_play_raises_a_clear_error_under_strict():
    with pytest.raises(BotAnswerError) as info:
        play_game([NoFollowBot, RandomBot], "pagat", seed=4)
    err = info.value
    text = str(err)
    assert err.bot == "nofollow" and err.kind is Decision.PLAY and err.seat in (0, 2)
    assert "bot 'nofollow' at seat" in text and "play decision" in text
    assert ("does not follow suit" in text or "cannot be led" in text) and "legal:" in text
    assert "strict=False" in text


def test_illegal_bid_raises_naming_the_engine_reason():
    with pytest.raises(BotAnswerError, match="bid 14 is out of range") as info:
        play_game([RandomBot, BigBidBot], "pagat", seed=4)
    assert info.value.bot == "bigbid" and info.value.seat in (1, 3)


def test_unencodable_answer_is_reported_as_malformed():
    with pytest.raises(BotAnswerError, match=r"malformed answer: bid\(\) returned -1"):
        play_game([NegativeBidBot, RandomBot], "pagat", seed=4)


def test_lenient_mode_plays_defaults_and_counts_them():
    result = play_game([NoFollowBot, BigBidBot], "pagat", seed=4, strict=False, max_hands=3)
    ns, ew = result.defaults[0] + result.defaults[2], result.defaults[1] + result.defaults[3]
    assert ns > 0 and ew == 6  # both E and W bid 14 every hand: 3 hands x 2 seats
    assert len(result.problems) == sum(result.defaults)
    assert any("bid 14" in p for p in result.problems)
    # The default bid is 1: every EW bid in the record is 1.
    for hand in result.record["hands"]:
        assert hand["result"]["bids"]["E"] == hand["result"]["bids"]["W"] == 1
    assert result.record["meta"]["defaults"]["E"] == 3
    replays(result.record)


def test_lenient_mode_sends_strike_notices():
    notices: list[pb.Notice] = []

    class Listening(BotDriver):
        def handle(self, message):
            if message.WhichOneof("message") == "notice":
                notices.append(message.notice)
            return super().handle(message)

    import arena_sdk.testing as testing

    original = testing.BotDriver
    testing.BotDriver = Listening  # type: ignore[misc]
    try:
        play_game([RandomBot, BigBidBot], "pagat", seed=4, strict=False, max_hands=1)
    finally:
        testing.BotDriver = original  # type: ignore[misc]
    assert len(notices) == 2
    assert all(n.level == pb.Notice.STRIKE and n.code == "illegal" for n in notices)


def test_an_exception_in_the_bot_propagates_with_a_note():
    class Crashing(RandomBot):
        name = "crashing"

        def play(self, view):
            raise ZeroDivisionError("my bug")

    with pytest.raises(ZeroDivisionError, match="my bug") as info:
        play_game([Crashing, RandomBot], "pagat", seed=1)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "bot 'crashing' at seat N" in notes and "play request" in notes


def test_answer_encoding_refuses_values_it_cannot_send():
    """A negative card index used to wrap around to a real card (-1 was SA)."""
    from arena_sdk.engine import MalformedInputError

    for kind, bad in [
        (Decision.PLAY, -1), (Decision.PLAY, 52), (Decision.PLAY, None),
        (Decision.BID, -1), (Decision.BID, 3.5), (Decision.BID, "3"), (Decision.BID, None),
        (Decision.BLIND_NIL, "no"), (Decision.DRAW, None), (Decision.EXCHANGE, "SA"),
    ]:  # fmt: skip
        with pytest.raises(MalformedInputError):
            answer_to_proto(1, kind, bad)
    assert answer_from_proto(Decision.PLAY, answer_to_proto(1, Decision.PLAY, Card.SA)) is Card.SA
    assert answer_from_proto(Decision.PLAY, answer_to_proto(1, Decision.PLAY, "h2")) is Card.H2
    assert answer_from_proto(Decision.BID, answer_to_proto(1, Decision.BID, 0)) == 0
    assert answer_from_proto(Decision.EXCHANGE, answer_to_proto(1, Decision.EXCHANGE, [])) == ()
    assert answer_from_proto(Decision.DRAW, answer_to_proto(1, Decision.DRAW, False)) is False


# ------------------------------------------------------------------ seeds


def test_same_seed_same_record_and_different_seed_different_game():
    a = play_game([RandomBot, RandomBot], "pagat", seed=21, max_hands=5)
    b = play_game([RandomBot, RandomBot], "pagat", seed=21, max_hands=5)
    c = play_game([RandomBot, RandomBot], "pagat", seed=22, max_hands=5)
    assert a.record == b.record
    assert a.record["hands"][0]["actions"] != c.record["hands"][0]["actions"]


def test_bot_rng_is_reseeded_every_game_from_the_bot_seed():
    firsts: list[tuple[int, int, float]] = []

    class Probe(RandomBot):
        def on_game_start(self, info):
            firsts.append((self.match.seat, info.bot_seed, self.rng.random()))

    results = play_match([Probe, Probe], "pagat", games=3, seed=40, max_hands=1)
    assert len(firsts) == 12
    for seat, bot_seed, first in firsts:
        assert first == random.Random(bot_seed).random()
    for i, result in enumerate(results):
        assert result.seed == 40 + i
        assert result.bot_seeds == tuple(bot_seed_for(40 + i, s) for s in range(4))
    assert len({s for _, s, _ in firsts}) == 12  # per game and per seat


def test_a_match_game_replays_alone_and_bot_seeds_can_be_given():
    match = play_match([RandomBot, RandomBot], "pagat", games=3, seed=70, max_hands=2)
    alone = play_game([RandomBot, RandomBot], "pagat", seed=72, max_hands=2)
    assert match[2].record["hands"] == alone.record["hands"]
    given = play_game([RandomBot, RandomBot], "pagat", seed=72, max_hands=2, bot_seeds=[1, 2, 3, 4])
    assert given.bot_seeds == (1, 2, 3, 4)
    assert given.record["hands"] != alone.record["hands"]


# ------------------------------------------------------------------ hooks


class Counting(RandomBot):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple] = []
        self.tricks_this_hand = 0

    def on_match_start(self, info):
        self.calls.append(("match", info.games))

    def on_game_start(self, info):
        self.calls.append(("game", info.index))

    def on_trick_end(self, trick, view):
        assert len(trick.cards) == self.match.rules.players
        self.tricks_this_hand += 1

    def on_hand_end(self, summary):
        self.calls.append(("hand", summary.hand_number, self.tricks_this_hand, len(summary.tricks)))
        self.tricks_this_hand = 0

    def on_game_end(self, summary):
        self.calls.append(("end", summary.index, summary.ending))


@pytest.mark.parametrize("preset", ["pagat", "two-player"])
def test_hooks_are_called_once_per_event(preset):
    bots = [Counting(), Counting()] if preset == "two-player" else [Counting() for _ in range(4)]
    results = play_match(bots, preset, games=2, seed=5, max_hands=3)
    for bot in bots:
        hands = [c for c in bot.calls if c[0] == "hand"]
        assert bot.calls[0] == ("match", 2)
        assert [c for c in bot.calls if c[0] == "game"] == [("game", 0), ("game", 1)]
        assert [c for c in bot.calls if c[0] == "end"] == [
            ("end", 0, results[0].result.ending), ("end", 1, results[1].result.ending)
        ]
        assert len(hands) == results[0].result.hands + results[1].result.hands
        assert all(c[2] == 13 and c[3] == 13 for c in hands)  # on_trick_end 13 times per hand
        assert bot.calls[-1][0] == "end"


def test_match_end_reaches_every_driver():
    drivers: list[BotDriver] = []
    import arena_sdk.testing as testing

    class Keeping(BotDriver):
        def __init__(self, bot, **kwargs):
            super().__init__(bot, **kwargs)
            drivers.append(self)

    original = testing.BotDriver
    testing.BotDriver = Keeping  # type: ignore[misc]
    try:
        play_match([RandomBot, RandomBot], "two-player", games=2, seed=1, max_hands=1)
    finally:
        testing.BotDriver = original  # type: ignore[misc]
    assert len(drivers) == 2 and all(d.finished for d in drivers)


# ------------------------------------------------------------------ command line


def test_cli_plays_a_bot_file_against_random(tmp_path: Path):
    proc = subprocess.run(
        [
            sys.executable, "-m", "arena_sdk.testing",
            str(REPO / "example_bots" / "heuristic" / "bot.py") + ":HeuristicBot",
            "--games", "2", "--set", "max_hands=2", "-v",
        ],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "heuristic vs random:" in proc.stdout and "of 2" in proc.stdout
    assert proc.stdout.count("game 0 seed 0") == 2


def test_cli_reports_a_bad_bot_and_exits_1(tmp_path: Path):
    bot = tmp_path / "bad.py"
    bot.write_text(
        "from arena_sdk import Bot\n"
        "class Bad(Bot):\n"
        "    name = 'bad'\n"
        "    def bid(self, view): return 99\n"
        "    def play(self, view): return view.legal_cards()[0]\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "arena_sdk.testing", str(bot), "--games", "1"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "bot 'bad' at seat" in proc.stderr and "bid 99 is out of range" in proc.stderr


def test_bot_seeds_use_the_referees_formula():
    """So play_game(seed=<an arena record's seed>) gives the bots the seeds they had there."""
    from arena.match.spec import bot_seed

    for deal_seed in ("0a1b2c3d", "match/7", "12"):
        for seat in range(4):
            assert bot_seed_for(deal_seed, seat) == bot_seed(deal_seed, seat)
    assert bot_seed_for(12, 1) == bot_seed("12", 1)
