"""View helpers, on views built from real engine states through the wire conversion."""

from __future__ import annotations

import time

from helpers import deck_dealing, hand_of, play_cards

from arena_sdk import Card, Decision, Suit, View
from arena_sdk.engine import GameState, parse_cards, resolve_ruleset
from arena_sdk.protocol import request_to_proto

N, E, S, W = range(4)

# Four hands (see test_sdk_example_bots.py for the same layout): N holds two
# hearts and one spade, E two hearts, S two hearts.
HANDS = {
    N: ["HK", "H3", "CA", "CK", "CQ", "CJ", "CT", "DA", "DK", "DQ", "DJ", "DT", "S2"],
    E: ["H5", "H4", "C9", "C8", "C7", "D9", "D8", "D7", "S3", "S4", "S5", "S6", "S7"],
    S: ["H9", "H6", "C6", "C5", "C4", "D6", "D5", "D4", "S8", "S9", "ST", "SJ", "SQ"],
    W: ["H2", "H7", "H8", "HT", "HJ", "HQ", "HA", "C3", "C2", "D3", "D2", "SK", "SA"],
}


def dealt(dealer: int = N, preset: str = "pagat") -> GameState:
    rules = resolve_ruleset(preset)
    return GameState.new(rules, 1, first=dealer, decks={1: deck_dealing(HANDS, dealer)})


def view_of(state: GameState, seat: int | None = None, move_ms: int = 1000, bank_ms: int = 30000) -> View:
    """The SDK's view of the seat to move, through request_to_proto as over the wire."""
    seat = state.to_move if seat is None else seat
    assert seat is not None
    request = request_to_proto(7, state.view(seat), move_ms, bank_ms)
    return View.from_request(state.rules, request)


def bid_all(state: GameState, bids: list[int]) -> None:
    for b in bids:
        state.apply(b)


def test_bidding_view_and_bid_helpers():
    state = dealt()  # dealer N: E, S, W, N bid; E leads
    view = view_of(state)
    assert view.kind is Decision.BID and view.seat == E
    assert view.legal == list(range(14)) and view.legal_cards() == []
    assert view.partner == W and view.partner_bid is None and view.my_bid is None
    bid_all(state, [3, 0, 3])
    view = view_of(state)
    assert view.seat == N and view.partner == S and view.team == 0
    assert view.partner_bid == 0 and view.is_nil(S) and not view.is_nil(E)
    assert view.team_contract() == 0 and view.team_contract(1) == 6
    assert view.opponents == [E, W]
    state.apply(4)
    view = view_of(state)
    assert view.kind is Decision.PLAY and view.seat == E
    assert view.bids == [4, 3, 0, 3] and view.my_bid == 3 and view.partner_bid == 3
    assert view.team_contract(0) == 4


def test_legal_cards_are_the_engines_legal_actions():
    state = dealt()
    bid_all(state, [3, 0, 3, 4])
    view = view_of(state)  # E leads: spades not broken, so no spade
    assert view.legal_cards() == state.legal_actions()
    assert all(c.suit != Suit.S for c in view.legal_cards())
    assert Card.S3 in view.hand and Card.S3 not in view.legal_cards()
    play_cards(state, ["H5"])
    view = view_of(state)  # S must follow hearts
    assert view.legal_cards() == state.legal_actions() == parse_cards(["H6", "H9"])
    assert view.led_suit == Suit.H


def test_cards_seen_and_unseen():
    state = dealt()
    bid_all(state, [3, 0, 3, 4])
    play_cards(state, ["H5", "H9", "H2", "HK", "H3"])  # one trick, N leads H3 to the next
    view = view_of(state)
    assert view.seat == E
    played = set(parse_cards(["H5", "H9", "H2", "HK", "H3"]))
    assert view.cards_played() == played
    assert view.cards_seen() == set(view.hand) | played
    others = {c for seat in (N, S, W) for c in hand_of(state, seat)}
    assert view.unseen_cards() == others
    assert not view.unseen_cards() & view.cards_seen()


def test_team_tricks_and_tricks():
    state = dealt()
    bid_all(state, [3, 0, 3, 4])
    play_cards(state, ["H5", "H9", "H2", "HK"])  # N wins with the king
    view = view_of(state)
    assert view.seat == N and view.leader == N
    assert len(view.tricks) == 1 and view.tricks[0].winner == N
    assert view.tricks[0].cards == tuple(parse_cards(["H5", "H9", "H2", "HK"]))
    assert view.tricks_won == [1, 0, 0, 0]
    assert view.team_tricks() == 1 and view.team_tricks(1) == 0
    play_cards(state, ["H3", "H4", "H6", "H7"])  # W wins
    view = view_of(state)
    assert view.team_tricks(0) == 1 and view.team_tricks(1) == 1 and view.seat == W


def test_winning_play_follows_trumps_and_ignores_discards():
    state = dealt()
    bid_all(state, [3, 0, 3, 4])
    play_cards(state, ["H5", "H9", "H2", "HK", "H3", "H4", "H6", "H7"])
    assert view_of(state).winning_play() is None
    play_cards(state, ["H8"])  # W leads; N has no heart left
    view = view_of(state)
    assert view.winning_play() == (W, Card.H8)
    assert not view.spades_broken
    play_cards(state, ["S2"])  # N trumps
    view = view_of(state)
    assert view.winning_play() == (N, Card.S2) and view.spades_broken
    play_cards(state, ["C7"])  # E discards: does not win
    view = view_of(state)
    assert view.seat == S and view.winning_play() == (N, Card.S2)
    assert view.current_trick == [(W, Card.H8), (N, Card.S2), (E, Card.C7)]
    play_cards(state, ["S8"])
    assert state.tricks[-1].winner == S


def test_time_left_counts_move_time_and_bank():
    state = dealt()
    view = view_of(state, move_ms=1000, bank_ms=2000)
    assert view.move_ms == 1000 and view.bank_ms == 2000
    assert 2.9 < view.time_left() <= 3.0
    view.received_at = time.monotonic() - 0.5
    assert 2.4 < view.time_left() <= 2.5
    assert 0.4 < view.move_time_left() <= 0.5


def test_blind_nil_view_hides_the_hand():
    state = dealt(preset="wikipedia")  # blind nil for anyone: E is asked first
    view = view_of(state)
    assert view.kind is Decision.BLIND_NIL and view.seat == E
    assert view.hand_hidden and view.hand == [] and view.legal == [False, True]
    state.apply(False)
    view = view_of(state, E)  # E now sees its cards; S is asked blind nil
    assert not view.hand_hidden and len(view.hand) == 13


def test_two_player_view():
    rules = resolve_ruleset("two-player")
    state = GameState.new(rules, 5)
    view = view_of(state)
    assert view.players == 2 and view.kind is Decision.BLIND_NIL and view.hand_hidden
    assert view.partner is None and view.partner_bid is None
    assert view.team == view.seat and view.opponents == [1 - view.seat]
    state.apply(False)
    view = view_of(state)
    assert view.kind is Decision.DRAW
    assert view.offered_card == state.offered_card()
    assert view.legal == [True, False]
    drawer = view.seat
    state.apply(True)  # keep it: the next card goes to the discards, seen
    while state.to_move != drawer or state.decision is not Decision.DRAW:
        state.apply(state.legal_actions()[0] if state.decision is not Decision.EXCHANGE else ())
    view = view_of(state)
    assert len(view.seen_discards) == 1
    assert set(view.seen_discards) <= view.cards_seen()
    assert not set(view.seen_discards) & view.unseen_cards()


def test_time_left_never_exceeds_the_hard_cap():
    # Issue #16.2: move 0.5 s, bank 4 s, hard cap 1 s: the referee strikes at 1 s.
    state = dealt()
    request = request_to_proto(7, state.view(state.to_move), 500, 4000)
    view = View(state.rules, request, hard_cap_ms=1000)  # cap from Welcome.time_control
    assert view.allowed_ms == 1000 and 0.9 < view.time_left() <= 1.0
    # The referee also says it in the request itself (DecisionRequest.allowed_ms).
    request = request_to_proto(7, state.view(state.to_move), 500, 4000, allowed_ms=1000)
    view = View(state.rules, request)
    assert view.allowed_ms == 1000 and 0.9 < view.time_left() <= 1.0
    assert 0.4 < view.move_time_left() <= 0.5
