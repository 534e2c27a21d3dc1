"""Hard's rollout policy knows a nil: its partner covers it, its opponents go after it.

Each case sets up one trick of a real four-player game (chosen hands, real
bids and plays through the engine) and asks the policy, with its random moves
switched off, for one seat's card.  Before the nil rules each of these seats
played otherwise (noted per case), which made a simulated nil look safer
than it is.
"""

from __future__ import annotations

import random

from arena_sdk.bots.rollout import rollout_policy
from arena_sdk.engine import Card, GameState, resolve_ruleset

RULES = resolve_ruleset("pagat")


def deal(given: dict[int, list[Card]], no_hearts_beyond: set[int]) -> list[int]:
    """Hands as bitmasks: the given cards, the rest dealt in order (never more hearts to ``no_hearts_beyond``)."""
    hands = {s: [int(c) for c in given.get(s, [])] for s in range(4)}
    taken = {c for cards in hands.values() for c in cards}
    for card in sorted(range(52), key=lambda c: c // 13 != 2):  # hearts first: they have the fewest places
        if card in taken:
            continue
        is_heart = card // 13 == 2
        seat = next(s for s in range(4) if len(hands[s]) < 13 and not (is_heart and s in no_hearts_beyond))
        hands[seat].append(card)
    masks = []
    for s in range(4):
        assert len(hands[s]) == 13
        masks.append(sum(1 << c for c in hands[s]))
    return masks


def table(hands: list[int], bids: list[int], plays: list[Card]) -> GameState:
    """A game with these hands and bids (seat 0 bids first and leads), after ``plays``."""
    state = GameState.new(RULES, "rollout-test", first=3)
    state.hands = hands
    for bid in bids:
        state.apply(bid)
    assert state.to_move == 0, "seat 0 leads the first trick"
    for card in plays:
        state.apply(card)
    return state


def policy_card(state: GameState) -> Card:
    pick = rollout_policy(state, random.Random(1), noise=0.0)
    seat = state.to_move
    assert seat is not None
    return Card(pick(seat, state.legal_play_mask()))


def test_the_opponents_of_a_nil_lead_low_even_when_they_need_tricks():
    # East bids nil; North (bid 3, the side needs 7) leads.  Without the nil
    # rules North led its highest side card (an ace) and let the nil duck under it.
    hands = deal({0: [Card.HA, Card.DA, Card.C2, Card.CK]}, set())
    state = table(hands, [3, 0, 4, 3], [])
    assert policy_card(state) == Card.C2


def test_an_opponent_stays_under_a_nil_that_is_winning_the_trick():
    # North leads H3, East (nil) is forced to H9; South holds HK and H5 and its
    # side needs tricks.  Without the nil rules South won with the king.
    hands = deal({0: [Card.H3], 1: [Card.H9], 2: [Card.HK, Card.H5]}, {1, 2})
    state = table(hands, [3, 0, 4, 3], [Card.H3, Card.H9])
    assert policy_card(state) == Card.H5


def test_the_partner_of_a_nil_wins_over_it_though_its_contract_is_safe():
    # East (nil) is winning with H9; West, last to play, has made its bid of 1
    # already.  Without the nil rules West ducked with H5 and the nil failed.
    hands = deal({0: [Card.H3], 1: [Card.H9], 2: [Card.H4], 3: [Card.HQ, Card.H5]}, {1, 2, 3})
    state = table(hands, [3, 0, 4, 1], [Card.H3, Card.H9, Card.H4])
    state.tricks_won[3] = 1  # West's trick of an earlier round (the policy reads the live counts)
    assert policy_card(state) == Card.HQ


def test_the_partner_of_a_nil_leads_high_though_its_contract_is_safe():
    # South bids nil; North has made its bid of 1 already and leads.  Without
    # the nil rules North led low (its side needed nothing) and left the nil exposed.
    hands = deal({0: [Card.HA, Card.C2]}, set())
    state = table(hands, [1, 3, 0, 3], [])
    state.tricks_won[0] = 1
    assert policy_card(state) == Card.HA
