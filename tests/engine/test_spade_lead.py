"""The spade-lead rule under broken, trumped and always, from the rule text."""

from __future__ import annotations

import pytest

from arena_sdk.engine import Card, Decision, Suit, GameState, IllegalActionError, resolve_ruleset
from helpers import deck_dealing, play_cards, suit_cards

# Dealer W, so N leads.  N: ten low spades and three top hearts.  E: the three top
# spades and ten clubs.  S: ten hearts and three diamonds.  W: ten diamonds, three clubs.
HANDS = {
    0: suit_cards("S", "23456789TJ") + ["HA", "HK", "HQ"],
    1: ["SQ", "SK", "SA"] + suit_cards("C", "23456789TJ"),
    2: suit_cards("H", "23456789TJ") + ["DQ", "DK", "DA"],
    3: suit_cards("D", "23456789TJ") + ["CQ", "CK", "CA"],
}


def start(spade_lead: str) -> GameState:
    rules = resolve_ruleset("pagat", {"spade_lead": spade_lead})
    state = GameState.new(rules, 1, first=3, decks={1: deck_dealing(HANDS, dealer=3)})
    for bid in (3, 3, 3, 3):
        state.apply(bid)
    assert state.decision is Decision.PLAY and state.to_move == 0
    return state


def play_three_hearts_without_trumping(state: GameState) -> None:
    """N leads its three hearts; E discards clubs, S follows, W discards diamonds."""
    play_cards(state, ["HA", "C2", "H2", "D2", "HK", "C3", "H3", "D3", "HQ", "C4", "H4", "D4"])
    assert state.to_move == 0 and not state.spades_broken


@pytest.mark.parametrize("mode", ["broken", "trumped"])
def test_spade_cannot_be_led_before_broken_while_holding_another_suit(mode):
    state = start(mode)
    assert all(c.suit != Suit.S for c in state.legal_actions())
    with pytest.raises(IllegalActionError, match="cannot be led"):
        state.apply(Card.S2)
    assert state.to_move == 0 and len(state.view(0).hand) == 13  # unchanged


def test_always_lets_spades_be_led_on_the_first_trick():
    state = start("always")
    assert Card.S2 in state.legal_actions()
    state.apply(Card.S2)
    assert state.to_move == 1


@pytest.mark.parametrize("mode", ["broken", "trumped", "always"])
def test_trumping_is_allowed_on_the_first_trick(mode):
    state = start(mode)
    state.apply(Card.HA)
    # E holds no hearts: every card, spades included, is legal.
    assert set(state.legal_actions()) == {Card.SQ, Card.SK, Card.SA} | {Card["C" + r] for r in "23456789TJ"}
    state.apply(Card.SA)
    assert state.spades_broken, "a spade on another suit breaks spades in every mode"
    play_cards(state, ["H2", "D2"])
    assert state.tricks[0].winner == 1


@pytest.mark.parametrize(("mode", "e_may_lead_spade"), [("broken", True), ("trumped", False)])
def test_only_spades_lead_breaks_spades_only_under_broken(mode, e_may_lead_spade):
    state = start(mode)
    play_three_hearts_without_trumping(state)
    # N now holds only spades and must be allowed to lead one.
    assert all(c.suit == Suit.S for c in state.legal_actions())
    play_cards(state, ["S2", "SQ", "H5", "D5"])  # E's queen wins; S and W have no spades
    assert state.tricks[-1].winner == 1 and state.to_move == 1
    assert state.spades_broken is e_may_lead_spade
    leads = state.legal_actions()
    assert (Card.SK in leads) is e_may_lead_spade
    if not e_may_lead_spade:
        with pytest.raises(IllegalActionError):
            state.apply(Card.SK)
        assert all(c.suit == Suit.C for c in leads)


def test_leader_with_only_spades_leads_one_from_the_first_trick():
    hands = {
        0: suit_cards("S"),
        1: suit_cards("H"),
        2: suit_cards("D"),
        3: suit_cards("C"),
    }
    for mode in ("broken", "trumped"):
        rules = resolve_ruleset("pagat", {"spade_lead": mode})
        state = GameState.new(rules, 1, first=3, decks={1: deck_dealing(hands, dealer=3)})
        for bid in (13, 0, 0, 0):
            state.apply(bid)
        assert state.legal_actions() == [Card[f"S{r}"] for r in "23456789TJQKA"]


def test_follow_suit_is_enforced():
    state = start("broken")
    state.apply(Card.HA)
    state.apply(Card.C2)
    # S holds hearts and must follow.
    with pytest.raises(IllegalActionError, match="follow suit"):
        state.apply(Card.DQ)
    with pytest.raises(IllegalActionError, match="does not hold"):
        state.apply(Card.SA)
    assert all(c.suit == Suit.H for c in state.legal_actions())
