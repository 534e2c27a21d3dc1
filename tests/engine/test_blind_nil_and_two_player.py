"""Blind nil (asked before the cards are seen), the two-player draw and exchange."""

from __future__ import annotations

import pytest

from arena_sdk.engine import (
    CARDS,
    Card,
    Decision,
    GameState,
    IllegalActionError,
    MalformedInputError,
    resolve_ruleset,
)

STOCK = list(range(52))  # C2, C3, ... SA in order: easy to reason about


# ---------------------------------------------------------------- four players


def test_wikipedia_asks_every_seat_blind_nil_before_it_sees_its_cards():
    state = GameState.new(resolve_ruleset("wikipedia"), 5, first=3)
    for seat in (0, 1, 2, 3):
        assert (state.to_move, state.decision) == (seat, Decision.BLIND_NIL)
        assert state.legal_actions() == [False, True]
        for later in range(seat, 4):
            assert state.view(later).hand is None, "undecided seats must not see their cards"
        state.apply(False)
        assert len(state.view(seat).hand) == 13
        assert state.decision is Decision.BID and state.to_move == seat
        state.apply(2)
    assert state.decision is Decision.PLAY


def test_blind_nil_bid_is_the_seats_bid_and_scores_200():
    state = GameState.new(resolve_ruleset("wikipedia"), 5, first=3)
    state.apply(True)  # N bids blind nil: no BID decision follows for N
    assert (state.to_move, state.decision) == (1, Decision.BLIND_NIL)
    assert state.bids[0] == 0 and state.blind[0]
    assert len(state.view(0).hand) == 13, "after deciding, the seat sees its cards"
    for _ in range(3):
        state.apply(False)
        state.apply(3)
    while state.hand_number == 1 and not state.is_over:
        state.apply(state.legal_actions()[0])
    nil = state.hand_results[0].teams[0].nil_results
    assert nil[0][:2] == (0, "blind_nil")
    assert nil[0][3] == (200 if state.hand_results[0].tricks[0] == 0 else -200)


def test_cards4_asks_only_the_first_bidder():
    state = GameState.new(resolve_ruleset("cards4"), 5, first=1)  # E deals, S bids first
    assert (state.to_move, state.decision) == (2, Decision.BLIND_NIL)
    assert state.view(2).hand is None
    assert all(len(state.view(s).hand) == 13 for s in (0, 1, 3))
    state.apply(False)
    state.apply(4)
    for seat in (3, 0, 1):
        assert (state.to_move, state.decision) == (seat, Decision.BID)
        state.apply(3)


def test_min_deficit_limits_blind_nil_to_the_trailing_team():
    rules = resolve_ruleset("pagat", {"blind_nil": "any", "blind_nil_min_deficit": "100"})
    state = GameState.new(rules, 5, first=3, scores=(0, 150))
    kinds = []
    while state.decision is not Decision.PLAY:
        kinds.append((state.to_move, state.decision))
        state.apply(False if state.decision is Decision.BLIND_NIL else 3)
    assert kinds == [
        (0, Decision.BLIND_NIL), (0, Decision.BID), (1, Decision.BID),
        (2, Decision.BLIND_NIL), (2, Decision.BID), (3, Decision.BID),
    ]  # fmt: skip
    assert state.view(1).hand is not None


def test_bad_action_types_are_malformed_not_illegal():
    state = GameState.new(resolve_ruleset("wikipedia"), 5, first=3)
    with pytest.raises(MalformedInputError):
        state.apply(0)  # blind nil wants true/false
    state.apply(False)
    with pytest.raises(MalformedInputError):
        state.apply("4")
    with pytest.raises(IllegalActionError):
        state.apply(14)
    state.apply(4)


# ---------------------------------------------------------------- two players


def two_player(**overrides: str) -> GameState:
    rules = resolve_ruleset("two-player", overrides)
    return GameState.new(rules, 9, first=0, decks={1: STOCK})


def test_draw_phase_keep_and_discard():
    state = two_player(blind_nil="off")
    # A draws first: sees C2, keeps it, so C3 goes out (A has seen it).
    assert (state.to_move, state.decision, state.offered_card()) == (0, Decision.DRAW, Card.C2)
    assert state.view(1).offered_card is None, "only the drawer sees the offered card"
    state.apply(True)
    assert state.view(0).hand == (Card.C2,)
    assert state.view(0).seen_discards == (Card.C3,)
    # B sees C4, discards it, and must keep C5.
    assert (state.to_move, state.offered_card()) == (1, Card.C4)
    state.apply(False)
    assert state.view(1).hand == (Card.C5,)
    assert state.view(1).seen_discards == (Card.C4,)
    assert state.view(0).seen_discards == (Card.C3,), "A never saw C4"
    for _ in range(24):
        state.apply(True)
    assert len(state.view(0).hand) == 13 and len(state.view(1).hand) == 13
    # Second player (B) bids first and leads the first trick.
    assert (state.to_move, state.decision) == (1, Decision.BID)
    state.apply(3)
    assert (state.to_move, state.decision) == (0, Decision.BID)
    state.apply(4)
    assert (state.to_move, state.decision) == (1, Decision.PLAY)
    assert len(state.current_trick()) == 0


def test_roles_alternate_each_hand():
    state = two_player(blind_nil="off")
    while state.hand_number == 1 and not state.is_over:
        state.apply(state.legal_actions()[0])
    assert state.first == 1 and state.to_move == 1 and state.decision is Decision.DRAW


def test_blind_nil_exchange():
    state = two_player()
    assert (state.to_move, state.decision) == (0, Decision.BLIND_NIL)
    state.apply(True)  # A: blind nil, takes no draw decisions
    assert (state.to_move, state.decision) == (1, Decision.BLIND_NIL)
    state.apply(False)
    for _ in range(13):
        assert (state.to_move, state.decision) == (1, Decision.DRAW)
        state.apply(True)
    # A kept the first card of each of its pairs unseen: stock positions 0, 4, 8, ...
    assert state.view(0).hand == tuple(CARDS[i] for i in range(0, 52, 4))
    assert state.view(0).seen_discards == ()
    discards_before = set(state.discards)
    assert (state.to_move, state.decision) == (0, Decision.EXCHANGE)
    legal = state.legal_actions()
    assert legal[0] == () and len(legal) == 1 + 13 + 78 + 286
    with pytest.raises(IllegalActionError, match="at most 3"):
        state.apply((Card.C2, Card.C6, Card.CT, Card.D3))
    with pytest.raises(IllegalActionError, match="does not hold"):
        state.apply((Card.C3,))
    returned = (Card.C2, Card.C6, Card.CT)
    state.apply(returned)
    hand = set(state.view(0).hand)
    drawn = hand - {CARDS[i] for i in range(0, 52, 4)}
    assert len(hand) == 13 and len(drawn) == 3
    assert drawn <= discards_before, "replacements come from the discards as they were"
    assert set(returned) <= set(state.discards) and len(state.discards) == 26
    assert state.view(1).exchanged == (3, 0), "how many were exchanged is public"
    assert not set(state.view(1).hand) & hand
    # Only B bids; A's blind nil is its bid.  B leads.
    assert (state.to_move, state.decision) == (1, Decision.BID)
    state.apply(5)
    assert (state.to_move, state.decision) == (1, Decision.PLAY)
    while state.hand_number == 1 and not state.is_over:
        state.apply(state.legal_actions()[0])
    result = state.hand_results[0]
    assert result.blind == (True, False) and result.exchanged == (3, 0)
    assert result.teams[0].nil_results[0][3] == (200 if result.tricks[0] == 0 else -200)


def test_exchange_draw_is_reproducible_from_the_seed():
    hands = []
    for _ in range(2):
        state = two_player()
        state.apply(True)
        state.apply(False)
        for _ in range(13):
            state.apply(False)
        state.apply((Card.C2, Card.C6))
        hands.append(state.view(0).hand)
    assert hands[0] == hands[1]


def test_two_player_refuses_first_bidder_and_failed_nil_tricks():
    from arena_sdk.engine import RulesError

    with pytest.raises(RulesError, match="first-bidder"):
        resolve_ruleset("two-player", {"blind_nil": "first-bidder"})
    with pytest.raises(RulesError, match="failed_nil_tricks"):
        resolve_ruleset("two-player", {"failed_nil_tricks": "contract"})
