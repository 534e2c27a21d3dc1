"""No hidden information in an observation: every card a seat cannot see is dealt anew, and
the seat's observation and mask stay the same, at every decision of random games in every preset."""

from __future__ import annotations

import numpy as np
import pytest
from learn_support import RULESETS, blind_spots

from arena_sdk.envs.table import Table


def env_observe(table: Table, seat: int) -> dict[str, np.ndarray]:
    return table.observe(seat)


def leaky_observe(table: Table, seat: int) -> dict[str, np.ndarray]:
    """A broken observation that also counts the next seat's spades: the check must catch it."""
    obs = table.observe(seat)
    state = table.state
    assert state is not None
    nxt = (seat + 1) % state.players
    obs["observation"] = obs["observation"].copy()
    obs["observation"][-1] += bin(state.hands[nxt] >> 39).count("1")
    return obs


@pytest.mark.parametrize("rules_name", sorted(RULESETS))
def test_observation_is_blind_to_every_hidden_card(rules_name):
    checked, moved, differences = blind_spots(rules_name, env_observe)
    assert not differences, differences[:5]
    assert checked > 300 and moved > 10 * checked  # the scramble really moved the hidden cards


@pytest.mark.parametrize("rules_name", ["pagat", "two-player"])
def test_the_check_catches_an_observation_that_leaks(rules_name):
    _, _, differences = blind_spots(rules_name, leaky_observe, games=1)
    assert differences


def test_hidden_hand_of_an_undecided_blind_nil_is_not_observed():
    """Cards4: the first bidder decides blind nil before it sees its cards; they are not in its hand block."""
    from arena_sdk.envs.layout import BLOCK

    table = Table(RULESETS["cards4"])
    table.reset(5)
    seat = table.to_move
    assert seat is not None
    obs = table.observe(seat)
    hand = BLOCK["hand"]
    assert not obs["observation"][hand.offset : hand.offset + 52].any()
    assert obs["observation"][BLOCK["hand_hidden"].offset] == 1.0
    state = table.state
    assert state is not None and state.hands[seat] != 0  # the cards exist: they are just not shown
