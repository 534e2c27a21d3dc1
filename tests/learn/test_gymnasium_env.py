"""The one-seat Gymnasium environment: Gymnasium's checker, the other seats' bots, rewards, seeds."""

from __future__ import annotations

import random

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from learn_support import RULESETS, random_action

from arena_sdk import Bot
from arena_sdk.bots import EasyBot, HardBot, MediumBot
from arena_sdk.envs import SpadesSeatEnv
from arena_sdk.envs.layout import BID_BASE
from arena_sdk.envs.seats import BotSeatError
from arena_sdk.testing import RandomBot


@pytest.mark.parametrize("rules_name", sorted(RULESETS))
def test_gymnasium_env_checker_passes(rules_name):
    check_env(SpadesSeatEnv(RULESETS[rules_name], others="easy"), skip_render_check=True)


@pytest.mark.parametrize("others", ["medium", lambda: HardBot(worlds=8)])
def test_gymnasium_env_checker_passes_against_stronger_bots(others):
    # Hard with a budget in worlds: its choices depend on the seed alone (its default
    # budget is in seconds, so its games follow the machine's speed, and the checker's
    # determinism test would fail on that, not on the environment).
    check_env(SpadesSeatEnv("pagat", seat=1, others=others), skip_render_check=True)


def test_registered_id_makes_the_env_and_passes_the_checker_with_render():
    env = gymnasium.make("arena_sdk.envs.seat:SpadesSeat-v0", rules="cards4", others="easy", render_mode="ansi")
    check_env(env.unwrapped)
    env.reset(seed=4)
    assert "hand 1" in env.render()


class Recorder(Bot):
    """A bot that records what the SDK told it (the hooks the referee drives)."""

    name = "recorder"

    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []

    def on_game_start(self, info):
        self.events.append("game_start")

    def on_hand_end(self, summary):
        self.events.append(f"hand_end {summary.hand_number}")

    def on_game_end(self, summary):
        self.events.append(f"game_end {summary.ending}")

    def bid(self, view):
        return 2

    def play(self, view):
        return view.legal_cards()[0]


def _play_game(env: SpadesSeatEnv, seed: int) -> tuple[float, dict, int]:
    obs, info = env.reset(seed=seed)
    rng = random.Random(seed)
    total, steps, terminated = 0.0, 0, False
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(random_action(obs["action_mask"], rng))
        assert not truncated
        total += reward
        steps += 1
    return total, info, steps


@pytest.mark.parametrize("rules_name", ["pagat", "two-player"])
def test_a_game_against_bots_pays_the_score_difference(rules_name):
    rules = RULESETS[rules_name]
    players = rules.players
    seat = players - 1
    env = SpadesSeatEnv(rules, {"max_hands": 3}, seat=seat, others=Recorder)
    total, info, _ = _play_game(env, 11)
    scores = info["scores"]
    team = seat % 2
    assert total == pytest.approx((scores[team] - scores[1 - team]) * 0.01)
    assert info["hands_completed"] == env.table.state.result.hands  # type: ignore[union-attr]
    for bot in env.other_bots.values():
        assert isinstance(bot, Recorder)
        hands = info["hands_completed"]
        ending = env.table.state.result.ending  # type: ignore[union-attr]
        assert bot.events == ["game_start", *[f"hand_end {h}" for h in range(1, hands + 1)], f"game_end {ending}"]


def test_game_rewards_are_plus_or_minus_one_at_the_end_only():
    env = SpadesSeatEnv("pagat", {"max_hands": 2}, others="random", reward="game")
    obs, _ = env.reset(seed=5)
    rng = random.Random(5)
    rewards = []
    terminated = False
    while not terminated:
        obs, reward, terminated, _, info = env.step(random_action(obs["action_mask"], rng))
        rewards.append(reward)
    assert all(r == 0.0 for r in rewards[:-1])
    winner = info["winner"]
    assert rewards[-1] == (0.0 if winner is None else (1.0 if winner == 0 else -1.0))


def test_the_other_seats_may_be_one_bot_a_list_or_a_mapping():
    env = SpadesSeatEnv("pagat", seat=2, others=[EasyBot, MediumBot(), "random"])
    assert [type(env.other_bots[s]) for s in (0, 1, 3)] == [EasyBot, MediumBot, RandomBot]
    env = SpadesSeatEnv("pagat", seat=0, others={1: "easy", 2: "medium", 3: "easy"})
    assert type(env.other_bots[2]) is MediumBot
    shared = EasyBot()
    env = SpadesSeatEnv("pagat", others=shared)
    bots = list(env.other_bots.values())
    assert len({id(b) for b in bots}) == 3  # one instance given: each seat gets its own copy
    with pytest.raises(ValueError, match="others must give 3 bots"):
        SpadesSeatEnv("pagat", others=["easy", "easy"])
    with pytest.raises(ValueError, match="others must name seats"):
        SpadesSeatEnv("pagat", others={1: "easy"})
    with pytest.raises(ValueError, match="seat must be 0..1"):
        SpadesSeatEnv("two-player", seat=2)
    with pytest.raises(TypeError, match="unknown built-in bot"):
        SpadesSeatEnv("pagat", others="grandmaster")


def test_seeded_resets_reproduce_the_bots_games_too():
    def trace(seed: int) -> list[bytes]:
        env = SpadesSeatEnv("pagat", {"max_hands": 2}, others="easy")
        obs, _ = env.reset(seed=seed)
        out = [obs["observation"].tobytes()]
        while True:
            action = int(np.flatnonzero(obs["action_mask"])[0])
            obs, _, terminated, _, _ = env.step(action)
            out.append(obs["observation"].tobytes())
            if terminated:
                return out

    assert trace(21) == trace(21)
    assert trace(21) != trace(22)


def test_an_illegal_action_plays_the_default_move_and_costs_the_penalty():
    env = SpadesSeatEnv("pagat", others="easy", illegal_penalty=0.5)
    obs, _ = env.reset(seed=8)
    card_action = 0  # a card while bidding: not legal
    assert not obs["action_mask"][card_action]
    state = env.table.state
    _, reward, _, _, info = env.step(card_action)
    assert info["illegal_action"] is True
    assert reward == pytest.approx(-0.5)
    assert state.hand_results == [] and state.bids[0] == 1  # type: ignore[union-attr]  # the referee's default bid
    strict = SpadesSeatEnv("pagat", others="easy", illegal="raise")
    strict.reset(seed=8)
    with pytest.raises(ValueError, match="card C2 .*not legal"):
        strict.step(card_action)
    _, _, _, _, info = strict.step(BID_BASE + 3)
    assert info["illegal_action"] is False


class Broken(Bot):
    name = "broken"

    def bid(self, view):
        return 99

    def play(self, view):
        return view.legal_cards()[0]


def test_a_bot_that_answers_badly_is_named_in_the_error():
    env = SpadesSeatEnv("pagat", seat=3, others=Broken)
    with pytest.raises(BotSeatError, match="bot 'broken' at seat [NES] gave a bad answer to a bid"):
        env.reset(seed=1)
        env.step(BID_BASE + 3)  # if the learner bids first, the bots' bids come after it


def test_step_before_reset_and_after_the_end_is_refused():
    env = SpadesSeatEnv("pagat", {"max_hands": 1}, others="random")
    with pytest.raises(RuntimeError, match="reset"):
        env.step(BID_BASE)
    _play_game(env, 3)
    with pytest.raises(RuntimeError, match="game is over"):
        env.step(BID_BASE)
