"""Two-player worlds agree with everything the seat has seen, the opponent's seen discards included (issue 36).

A world is a whole engine state: besides the hands it carries what each seat
has seen, and a search that plays the opponent forward (its view, its
``public_cards_unseen_by``) reads the opponent's seen discards.  The sampler
used to leave them as an arbitrary replay made them after the draw: in 110 of
240 worlds they held cards the opponent could never have seen (cards in its
own hand, the seat's own discards, too many or too few).  Seeded loops over
many states of random games (blind nil made likely, so exchanges happen):
every world must show the seat exactly its view, and the opponent's seen
discards must obey what the rules make of them, which the real game is
checked to obey too (so the properties are the rules', not the sampler's).
"""

from __future__ import annotations

import random

from arena_sdk.engine import Decision, GameState
from arena_sdk.engine.playout import random_action
from game_walk import decision_views

from arena_sdk.sampling import DealSampler

#: The view fields a world must reproduce for the seat (everything it has seen).
FIELDS = (
    "seat", "hand_number", "first", "decision", "to_move", "legal_actions", "hand", "bids",
    "blind", "tricks_won", "leader", "current_trick", "tricks", "spades_broken", "scores",
    "bags", "offered_card", "seen_discards", "exchanged",
)  # fmt: skip


def bits(mask: int) -> set[int]:
    return {c for c in range(52) if mask >> c & 1}


def played_by(state: GameState, seat: int) -> set[int]:
    """Cards ``seat`` has played in the current hand."""
    out: set[int] = set()
    for t in state.tricks:
        for i, c in enumerate(t.cards):
            if (t.leader + i) % 2 == seat:
                out.add(int(c))
    for s, c in state.current_trick():
        if s == seat:
            out.add(int(c))
    return out


def opponent_seen_problems(state: GameState, me: int) -> list[str]:
    """What is wrong with the opponent's seen discards in ``state`` (empty: nothing).

    By the rules: a seat that draws sees the card it lets go at each of its draw
    turns; a blind-nil seat sees nothing in the draw and then the cards it gives
    back in its exchange (chosen from its hand before it draws).  So what it has
    seen is never in its own hand or play, never what the other seat has seen,
    as many cards as those turns or that exchange, and in the discards unless
    the other seat drew it in a later exchange.
    """
    opp = 1 - me
    seen = bits(state.seen_discards[opp])
    mine = bits(state.seen_discards[me])
    opp_cards = bits(state.hands[opp]) | played_by(state, opp)
    my_cards = bits(state.hands[me]) | played_by(state, me)
    problems = []
    if seen & opp_cards:
        problems.append(f"in its own hand or play: {sorted(seen & opp_cards)}")
    if seen & mine:
        problems.append(f"seen by the seat too: {sorted(seen & mine)}")
    if state.blind[opp]:
        want = state.exchanged[opp]
    else:
        want = sum(1 for t in range(min(state.draw_turn, 26)) if (state.first + t) % 2 == opp)
    if len(seen) != want:
        problems.append(f"{len(seen)} cards, not {want}")
    outside = seen - set(state.discards)
    drawn_by_me = state.exchanged[me] if state.blind[me] else 0
    if outside - my_cards or len(outside) > drawn_by_me:
        problems.append(f"neither in the discards nor drawn by the seat: {sorted(outside)}")
    return problems


def test_every_two_player_world_agrees_with_the_seat_and_the_opponents_seen_discards():
    rng = random.Random(36)
    worlds = 0
    kinds: set[Decision] = set()
    exchanged = 0
    for seed in range(24):
        for real, view in decision_views("two-player", seed, every=4):
            me = view.seat
            # The properties are the rules': the real game obeys them.
            assert opponent_seen_problems(real, me) == [], (seed, view.decision)
            sampler = DealSampler(view)
            for _ in range(3):
                for world in (sampler.sample(rng), sampler.sample(rng)):  # the second may reuse a template
                    seen = world.view(me)
                    for name in FIELDS:
                        assert getattr(seen, name) == getattr(view, name), (seed, name)
                    assert opponent_seen_problems(world, me) == [], (seed, view.decision, view.exchanged)
                    worlds += 1
            kinds.add(view.decision)
            exchanged += bool(view.exchanged and any(view.exchanged))
    assert worlds > 1000 and exchanged > 10
    assert {Decision.DRAW, Decision.BID, Decision.PLAY, Decision.BLIND_NIL, Decision.EXCHANGE} <= kinds


def test_sampled_worlds_play_on_with_the_opponents_view_intact():
    """A world played forward: the opponent's view stays a view the engine accepts, to the hand's end."""
    rng = random.Random(7)
    for seed in range(6):
        for _real, view in decision_views("two-player", seed, every=9):
            world = DealSampler(view).sample(rng)
            hand = world.hand_number
            while world.decision is not None and world.hand_number == hand:
                opp = 1 - view.seat
                unseen = world.public_cards_unseen_by(opp)
                assert not unseen & world.seen_discards[opp]
                assert opponent_seen_problems(world, view.seat) == []
                world.apply(random_action(world, rng))
