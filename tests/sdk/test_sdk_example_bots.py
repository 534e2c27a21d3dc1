"""The example bots: they run, the heuristic beats random clearly, and it covers a nil partner."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import deck_dealing, play_cards

from arena_sdk import Card, View
from arena_sdk.bots import medium
from arena_sdk.engine import GameState, parse_cards, resolve_ruleset
from arena_sdk.protocol import request_to_proto
from arena_sdk.testing import play_game

REPO = Path(__file__).resolve().parents[2]
N, E, S, W = range(4)

HANDS = {
    N: ["HK", "H3", "CA", "CK", "CQ", "CJ", "CT", "DA", "DK", "DQ", "DJ", "DT", "S2"],
    E: ["H5", "H4", "C9", "C8", "C7", "D9", "D8", "D7", "S3", "S4", "S5", "S6", "S7"],
    S: ["H9", "H6", "C6", "C5", "C4", "D6", "D5", "D4", "S8", "S9", "ST", "SJ", "SQ"],
    W: ["H2", "H7", "H8", "HT", "HJ", "HQ", "HA", "C3", "C2", "D3", "D2", "SK", "SA"],
}


def dealt(dealer: int) -> GameState:
    rules = resolve_ruleset("pagat")
    return GameState.new(rules, 1, first=dealer, decks={1: deck_dealing(HANDS, dealer)})


def decide(bot, state: GameState):
    """Ask ``bot`` for the decision due, through the wire conversion."""
    view = View.from_request(state.rules, request_to_proto(1, state.view(state.to_move), 1000, 30000))
    return bot.play(view) if state.decision.value == "play" else bot.bid(view)


# ------------------------------------------------------------------ strength


def heuristic_vs_random(heuristic, random_bot, preset: str, games: int, max_hands: int):
    """Team mode; the heuristic sits NS in even games and EW in odd ones, on the same deals."""
    wins = 0
    for g in range(games):
        swap = g % 2 == 1
        pair = [random_bot.RandomBot, heuristic.HeuristicBot]
        result = play_game(pair if swap else pair[::-1], preset, seed=1000 + g // 2, max_hands=max_hands)
        assert result.defaults == (0,) * result.players
        wins += result.winner == (1 if swap else 0)
    return wins


def test_heuristic_beats_random_clearly(heuristic, random_bot):
    # Measured: 599 of 600 games (seeds 0-299, 5000-5099, 9000-9099 pairs) at max_hands=10.
    started = time.perf_counter()
    wins = heuristic_vs_random(heuristic, random_bot, "pagat", games=40, max_hands=10)
    print(f"heuristic won {wins}/40 against random in {time.perf_counter() - started:.1f} s")
    assert wins >= 36


def test_heuristic_beats_random_in_the_two_player_game(heuristic, random_bot):
    # Measured: 200 of 200 at max_hands=10.
    wins = heuristic_vs_random(heuristic, random_bot, "two-player", games=20, max_hands=10)
    assert wins >= 18


@pytest.mark.parametrize("preset", ["wikipedia", "cards4"])
def test_heuristic_plays_every_preset_without_a_bad_answer(heuristic, random_bot, preset):
    result = play_game([heuristic.HeuristicBot, random_bot.RandomBot], preset, seed=3, max_hands=6)
    assert result.defaults == (0, 0, 0, 0)


# ------------------------------------------------------------------ nil and cover


def test_heuristic_covers_a_nil_partner_who_is_winning(heuristic):
    # Dealer N: E, S, W, N bid; E leads.  S (N's partner) bids nil.
    state = dealt(N)
    for b in (3, 0, 3, 4):
        state.apply(b)
    play_cards(state, ["H5", "H9", "H2"])  # partner S is winning with the nine
    assert state.to_move == N
    assert decide(heuristic.HeuristicBot(), state) is Card.HK  # overtakes the partner

    control = dealt(N)
    for b in (3, 2, 3, 4):  # partner not nil: no need to waste the king
        control.apply(b)
    play_cards(control, ["H5", "H9", "H2"])
    assert decide(heuristic.HeuristicBot(), control) is Card.H3


def test_heuristic_plays_high_in_front_of_a_nil_partner(heuristic):
    # Dealer S: W, N, E, S bid; W leads and N plays second, before its partner S.
    state = dealt(S)
    for b in (3, 4, 3, 0):
        state.apply(b)
    play_cards(state, ["H7"])
    assert decide(heuristic.HeuristicBot(), state) is Card.HK  # raise the bar for S

    control = dealt(S)
    for b in (3, 4, 3, 2):
        control.apply(b)
    play_cards(control, ["H7"])
    assert decide(heuristic.HeuristicBot(), control) is Card.H3  # second hand low


def test_heuristic_leads_high_for_a_nil_partner(heuristic):
    state = dealt(W)  # N bids first and leads
    for b in (4, 3, 0, 3):
        state.apply(b)
    card = decide(heuristic.HeuristicBot(), state)
    assert card.rank == Card.CA.rank  # an ace, for the partner to play under


def test_heuristic_nil_bidder_plays_its_highest_loser(heuristic):
    state = dealt(N)
    for b in (3, 2, 3, 0):  # N bids nil
        state.apply(b)
    play_cards(state, ["H5", "H9", "H2"])
    assert decide(heuristic.HeuristicBot(), state) is Card.H3


def test_heuristic_ducks_once_the_contract_is_safe(heuristic):
    def after_two_tricks(n_bid: int) -> GameState:
        state = dealt(W)  # N leads
        for b in (n_bid, 1, 1, 1):  # N, E, S, W
            state.apply(b)
        play_cards(state, ["CA", "C7", "C4", "C2", "DA", "D7", "D4", "D2"])  # N wins both
        return state

    safe = after_two_tricks(1)  # NS bid 2 and have 2: no more tricks wanted
    card = decide(heuristic.HeuristicBot(), safe)
    assert card is Card.H3  # the lead most likely to lose
    hungry = after_two_tricks(4)  # NS bid 5: cash the king of clubs, now the boss
    assert decide(heuristic.HeuristicBot(), hungry) is Card.CK


WEAK_E = ["C2", "C5", "C9", "D3", "D7", "DT", "H2", "H4", "H8", "HJ", "S3", "S5", "D5"]
WEAK_W = ["C3", "C4", "C6", "D2", "D4", "D6", "D8", "H3", "H5", "H6", "H7", "S2", "S4"]


def test_heuristic_hand_evaluation(heuristic):
    assert medium.nil_hand(parse_cards(WEAK_E)) and medium.nil_hand(parse_cards(WEAK_W))
    strong = parse_cards(["CA", "CK", "C5", "DA", "DK", "D7", "HA", "H4", "SA", "SK", "SQ", "S9", "S5"])
    assert not medium.nil_hand(strong)
    assert 8 <= medium.estimate_tricks(strong) <= 11
    assert medium.estimate_tricks(parse_cards(WEAK_E)) < 1
    ace_high = parse_cards(["HA", "H3", "C2", "C5", "C9", "D3", "D7", "DT", "H4", "H8", "S3", "S5", "D5"])
    assert not medium.nil_hand(ace_high)


def test_heuristic_bids_nil_on_a_weak_hand_but_never_a_second_nil(heuristic):
    taken = set(WEAK_E) | set(WEAK_W)
    rest = [c.name for c in Card if c.name not in taken]
    hands = {E: WEAK_E, W: WEAK_W, N: rest[:13], S: rest[13:]}

    def at_west(east_bid: int) -> GameState:
        state = GameState.new(resolve_ruleset("pagat"), 1, first=N, decks={1: deck_dealing(hands, N)})
        assert decide(heuristic.HeuristicBot(), state) == 0  # E, first to bid: nil
        state.apply(east_bid)
        state.apply(3)  # S
        assert state.to_move == W
        return state

    assert decide(heuristic.HeuristicBot(), at_west(2)) == 0
    assert decide(heuristic.HeuristicBot(), at_west(0)) >= 1  # partner E is nil already


# ------------------------------------------------------------------ packaging


@pytest.mark.parametrize("name", ["random", "heuristic"])
def test_example_bot_script_runs_and_asks_for_the_referee(name):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    proc = subprocess.run(
        [sys.executable, str(REPO / "example_bots" / name / "bot.py")],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "ARENA_ADDRESS" in proc.stderr and "ARENA_TOKEN" in proc.stderr


@pytest.mark.parametrize("name", ["random", "greedy", "heuristic"])
def test_example_bots_build_with_the_default_dockerfile_offline(name):
    """An example is just bot.py: `arena bot build` gives it the default Dockerfile on the bot base."""
    from arena.sandbox.build import BOT_BASE_DOCKERFILE, DEFAULT_DOCKERFILE

    folder = REPO / "example_bots" / name
    assert (folder / "bot.py").is_file() and not (folder / "Dockerfile").exists()
    assert "FROM ${BOT_BASE}" in DEFAULT_DOCKERFILE and "\nUSER 10001" in DEFAULT_DOCKERFILE
    assert "--no-index" in DEFAULT_DOCKERFILE  # the author's requirements, from their wheels only
    assert "python3 -m venv /venv" in BOT_BASE_DOCKERFILE
    assert "--no-index --find-links /wheels arena-sdk" in BOT_BASE_DOCKERFILE
    assert BOT_BASE_DOCKERFILE.rstrip().endswith('ENTRYPOINT ["/venv/bin/python", "/bot/bot.py"]')
