"""Literal scoring tables from docs/rules.md, hand by hand and game end."""

from __future__ import annotations

import pytest

from arena_sdk.engine import GameState, game_ending, resolve_ruleset, score_team
from helpers import deck_dealing, suit_cards

PAGAT = resolve_ruleset("pagat")
CONTRACT = resolve_ruleset("pagat", {"failed_nil_tricks": "contract"})


def team(rules, bids, tricks, score=0, bags=0, blind=(False, False)):
    """Score a partnership of seats 0 and 1 with the given bids and tricks."""
    return score_team(rules, (0, 1), bids, blind, tricks, score, bags)


@pytest.mark.parametrize(
    ("tricks", "points", "score_after", "bags_after", "penalties"),
    [
        # Worked example (pagat seed): 337 points, 7 bags, bid 5.
        (7, 52, 389, 9, 0),
        (8, 53 - 100, 290, 0, 1),
        (9, 54 - 100, 291, 1, 1),
    ],
)
def test_pagat_worked_example(tricks, points, score_after, bags_after, penalties):
    s = team(PAGAT, (5, 0), (tricks, 0), score=337, bags=7)
    # Seat 1 bid nil and made it: +100 on top; isolate the contract part.
    assert s.points - 100 == points
    assert s.score_after - 100 == score_after
    assert (s.bags_after, s.penalties) == (bags_after, penalties)


def test_pagat_worked_example_single_bidder_team():
    # The same example as a two-player (one-seat) team, no nil involved.
    rules = resolve_ruleset("two-player")
    for tricks, score_after, bags_after in [(7, 389, 9), (8, 290, 0), (9, 291, 1)]:
        s = score_team(rules, (0,), (5,), (False,), (tricks,), 337, 7)
        assert (s.score_after, s.bags_after) == (score_after, bags_after)


def test_wikipedia_worked_example_set_contract():
    s = team(PAGAT, (4, 3), (3, 3), score=30)
    assert (s.made, s.contract_points, s.points, s.score_after) == (False, -70, -70, -40)
    assert s.bags_after == 0


@pytest.mark.parametrize(
    ("rules", "points", "bags"),
    [(PAGAT, -138, 2), (CONTRACT, -59, 1)],
)
def test_failed_nil_modes_example(rules, points, bags):
    # Bids 0 and 4, tricks 2 and 3, from 0 points and 0 bags.
    s = team(rules, (0, 4), (2, 3))
    assert (s.points, s.bags_after) == (points, bags)
    assert s.nil_results == ((0, "nil", False, -100),)


@pytest.mark.parametrize("rules", [PAGAT, CONTRACT])
def test_nil_made_scores_on_top_of_partner_contract(rules):
    s = team(rules, (0, 4), (0, 5))
    assert s.nil_results == ((0, "nil", True, 100),)
    assert (s.contract_points, s.bag_points, s.points, s.bags_after) == (40, 1, 141, 1)


@pytest.mark.parametrize("rules", [PAGAT, CONTRACT])
def test_blind_nil_made_and_failed(rules):
    made = team(rules, (0, 3), (0, 3), blind=(True, False))
    assert made.nil_results == ((0, "blind_nil", True, 200),)
    assert made.points == 230
    failed = team(rules, (0, 3), (1, 3), blind=(True, False))
    assert failed.nil_results == ((0, "blind_nil", False, -200),)
    # bags: the nil's trick is a bag (1 point); contract: it is an overtrick (1 point).
    assert failed.points == -200 + 30 + 1
    assert failed.bags_after == 1


def test_failed_nil_tricks_rescue_partner_only_in_contract_mode():
    # Partner bid 5 and took 4; the failed nil took 2.
    bags_mode = team(PAGAT, (0, 5), (2, 4))
    assert (bags_mode.made, bags_mode.points, bags_mode.bags_after) == (False, -100 - 50 + 2, 2)
    contract_mode = team(CONTRACT, (0, 5), (2, 4))
    assert (contract_mode.made, contract_mode.points, contract_mode.bags_after) == (True, -100 + 51, 1)


@pytest.mark.parametrize("rules", [PAGAT, CONTRACT])
def test_both_partners_nil(rules):
    both_made = team(rules, (0, 0), (0, 0))
    assert (both_made.contract, both_made.points, both_made.bags_after) == (0, 200, 0)
    one_failed = team(rules, (0, 0), (3, 0))
    assert one_failed.points == 100 - 100 + 3
    assert one_failed.bags_after == 3
    both_failed = team(rules, (0, 0), (4, 2))
    assert (both_failed.points, both_failed.bags_after) == (-200 + 6, 6)


def test_several_bag_penalties_in_one_hand():
    # 9 bags carried; bid 1 and take 13: 12 new bags -> 21 -> two penalties, 1 left.
    s = team(PAGAT, (1, 0), (13, 0), score=100, bags=9, blind=(False, False))
    # Seat 1 is a nil that was made.
    assert s.bags == 12
    assert (s.penalties, s.penalty_points, s.bags_after) == (2, -200, 1)
    assert s.points == 10 + 12 + 100 - 200
    assert s.score_after == 100 + s.points


def test_penalty_threshold_and_value_options():
    rules = resolve_ruleset("cards4", {"bag_threshold": "5", "bag_penalty": "50"})
    s = team(rules, (2, 2), (4, 3), bags=3)
    assert (s.bags, s.penalties, s.penalty_points, s.bags_after) == (3, 1, -50, 1)
    off = resolve_ruleset("pagat", {"bag_penalty": "0"})
    s = team(off, (2, 2), (4, 9), bags=8)
    # Off means no penalty and no reset (the rule book): 8 + 9 bags = 17.
    assert (s.penalties, s.penalty_points, s.bags_after, s.points) == (0, 0, 17, 40 + 9)


def test_bags_with_negative_scores_use_the_counter_not_the_score():
    # OpenSpiel derives bags from the score's last digit; -41 would give the wrong answer.
    s = team(PAGAT, (2, 2), (3, 3), score=-91, bags=4)
    assert (s.points, s.score_after, s.bags_after) == (42, -49, 6)
    s = team(PAGAT, (2, 2), (1, 1), score=-41, bags=6)
    assert (s.points, s.score_after, s.bags_after) == (-40, -81, 6)


def test_all_thirteen_tricks_no_boston_bonus():
    s = team(PAGAT, (7, 6), (7, 6))
    assert s.points == 130


@pytest.mark.parametrize(
    ("scores", "hands", "floor", "expected"),
    [
        ((500, 480), 5, None, "target"),
        ((480, 520), 5, None, "target"),
        ((499, 480), 5, None, None),
        ((510, 510), 5, None, None),  # equal at the target: another hand
        ((510, 510), 200, None, "max_hands"),  # ... unless the cap is reached
        ((-200, 50), 3, -200, "floor"),
        ((-199, 50), 3, -200, None),
        ((-250, -250), 3, -200, None),  # equal at the floor: another hand
        ((-300, 600), 3, -200, "target"),
        ((100, 50), 200, None, "max_hands"),
    ],
)
def test_game_ending(scores, hands, floor, expected):
    rules = resolve_ruleset("pagat", {"lose_floor": "none" if floor is None else str(floor)})
    assert game_ending(rules, scores, hands) == expected


# ---------------------------------------------------------------- whole games


def one_sided_deck() -> list[int]:
    """Dealer W: N holds all spades (wins every trick), E hearts, S diamonds, W clubs."""
    return deck_dealing(
        {0: suit_cards("S"), 1: suit_cards("H"), 2: suit_cards("D"), 3: suit_cards("C")},
        dealer=3,
    )


def play_one_sided_hand(state: GameState, bids: dict[int, int]) -> None:
    """Bid (N leads after W deals) then play out: N leads spades, everybody follows."""
    for seat in (0, 1, 2, 3):
        assert state.to_move == seat
        state.apply(bids[seat])
    for _ in range(13):
        for _seat in range(4):
            state.apply(state.legal_actions()[0])


def test_equal_scores_at_target_play_another_hand_then_cap_draws():
    # NS: N bids 10 and takes 13, S nil made: 100 + 3 + 100 = 203.  EW: both nil made: 200.
    rules = resolve_ruleset("pagat", {"target": "200", "max_hands": "2"})
    deck = one_sided_deck()
    state = GameState.new(rules, 7, first=3, scores=(0, 3), decks={1: deck, 2: deck})
    play_one_sided_hand(state, {0: 10, 1: 0, 2: 0, 3: 0})
    assert [t.score_after for t in state.hand_results[0].teams] == [203, 203]
    assert not state.is_over, "equal scores at the target must play another hand"
    assert state.hand_number == 2 and state.first == 0
    # Hand 2 is dealt by N, so E leads; play it out with the first legal card.
    while not state.is_over:
        state.apply(state.legal_actions()[0])
    assert state.result is not None
    assert state.result.hands == 2


def test_equal_scores_at_cap_is_a_draw():
    rules = resolve_ruleset("pagat", {"target": "200", "max_hands": "1"})
    state = GameState.new(rules, 7, first=3, scores=(0, 3), decks={1: one_sided_deck()})
    play_one_sided_hand(state, {0: 10, 1: 0, 2: 0, 3: 0})
    assert state.result is not None
    assert (state.result.ending, state.result.winner, state.result.scores) == (
        "max_hands",
        None,
        (203, 203),
    )


def test_floor_ends_the_game_on_the_running_total():
    rules = resolve_ruleset("wikipedia")
    state = GameState.new(rules, 7, first=3, scores=(0, -150), decks={1: one_sided_deck()})
    # Decline blind nil everywhere, then: N 13, S 0 (made); E 3, W 3 (set: -60 -> -210).
    for seat, bid in ((0, 13), (1, 3), (2, 0), (3, 3)):
        assert state.to_move == seat
        state.apply(False)
        state.apply(bid)
    for _ in range(52):
        state.apply(state.legal_actions()[0])
    assert state.result is not None
    assert state.result.ending == "floor"
    assert state.result.scores == (230, -210)
    assert state.result.winner == 0


def test_target_reached_by_running_total_not_by_one_hand():
    state = GameState.new(PAGAT, 7, first=3, scores=(380, 0), decks={1: one_sided_deck()})
    play_one_sided_hand(state, {0: 12, 1: 0, 2: 1, 3: 0})
    # NS: contract 13 made exactly: 130 -> 510.  EW: two nils made: 200.
    assert state.result is not None
    assert (state.result.ending, state.result.winner, state.result.scores) == ("target", 0, (510, 200))


def test_bag_penalty_zero_is_off_and_the_count_keeps_growing():
    # Rule book: with bag_penalty = 0 there is no penalty and no reset.
    off = resolve_ruleset("pagat", {"bag_penalty": 0})
    s = team(off, (5, 4), (7, 4), score=337, bags=8)  # 2 overtricks: 8 -> 10 bags
    assert (s.penalties, s.penalty_points, s.points, s.bags_after) == (0, 0, 92, 10)
    s = team(off, (1, 1), (13, 0), score=0, bags=25)  # far past the threshold
    assert (s.penalties, s.bags_after, s.score_after) == (0, 36, 31)
    # Two-player (a one-seat team) follows the same rule.
    two = resolve_ruleset("two-player", {"bag_penalty": 0, "bag_threshold": 3})
    s = score_team(two, (0,), (2,), (False,), (9,), 0, 2)
    assert (s.penalties, s.bags_after, s.score_after) == (0, 9, 27)


def test_bag_penalty_zero_in_a_played_game():
    """Bags carried through whole games: never reset, never penalised."""
    import random

    from arena_sdk.engine.playout import play_random_game

    off = resolve_ruleset("pagat", {"bag_penalty": 0, "bag_threshold": 3, "max_hands": 30})
    state = GameState.new(off, 11)
    play_random_game(state, random.Random(3))
    total = [0, 0]
    for h in state.hand_results:
        for t, ts in enumerate(h.teams):
            total[t] += ts.bags
            assert ts.penalties == 0 and ts.bags_after == total[t]
    assert max(state.bags) >= off.bag_threshold  # the test says something
    assert list(state.bags) == total
