"""The PettingZoo AEC environment: PettingZoo's own API and seed tests, in every preset and option set."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from learn_support import RULESETS, random_action
from pettingzoo.test import api_test, seed_test

from arena_sdk.engine import GameState
from arena_sdk.envs import SpadesAECEnv
from arena_sdk.envs.layout import ACTION_COUNT, BID_BASE, OBSERVATION_SIZE


@pytest.mark.parametrize("reward", ["hand", "game"])
@pytest.mark.parametrize("rules_name", sorted(RULESETS))
def test_pettingzoo_api_test_passes(rules_name, reward):
    env = SpadesAECEnv(RULESETS[rules_name], reward=reward)
    with warnings.catch_warnings():
        # PettingZoo suggests Box observations; a dict with an action mask is its own
        # convention for card games (its classic environments do the same).
        warnings.simplefilter("ignore", UserWarning)
        api_test(env, num_cycles=300)


@pytest.mark.parametrize("rules_name", ["pagat", "cards4", "two-player"])
def test_pettingzoo_seed_test_passes(rules_name):
    seed_test(lambda: SpadesAECEnv(RULESETS[rules_name]), num_cycles=200)


def _play(env: SpadesAECEnv, seed: int, steps: int) -> list[tuple[str, bytes, int]]:
    env.reset(seed=seed)
    rng = random.Random(seed)
    trace = []
    for agent in env.agent_iter(steps):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = random_action(obs["action_mask"], rng)
        trace.append((agent, obs["observation"].tobytes(), action))
        env.step(action)
    return trace


def test_a_seeded_reset_deals_the_engines_game_of_that_seed():
    env = SpadesAECEnv("pagat")
    env.reset(seed=1234)
    assert env.game_seed == 1234
    expected = GameState.new(env.rules, 1234)
    assert env.table.state.hands == expected.hands  # type: ignore[union-attr]
    assert env.agent_selection == f"seat_{expected.to_move}"


def test_seeded_resets_reproduce_the_game_and_unseeded_ones_differ():
    env = SpadesAECEnv("pagat")
    first = _play(env, 77, 400)
    again = _play(env, 77, 400)
    assert first == again
    env.reset(seed=77)
    env.reset()
    deal_a = env.table.state.hands  # type: ignore[union-attr]
    env.reset()
    assert env.table.state.hands != deal_a  # type: ignore[union-attr]
    # the unseeded resets after a seeded one follow from that seed too
    env2 = SpadesAECEnv("pagat")
    env2.reset(seed=77)
    env2.reset()
    assert env2.table.state.hands == deal_a  # type: ignore[union-attr]


def test_spaces_and_agents():
    env = SpadesAECEnv("two-player")
    env.reset(seed=1)
    assert env.possible_agents == ["seat_0", "seat_1"]
    assert [env.seat_name(a) for a in env.possible_agents] == ["A", "B"]
    space = env.observation_space("seat_0")
    assert space["observation"].shape == (OBSERVATION_SIZE,)
    assert space["action_mask"].shape == (ACTION_COUNT,)
    assert env.action_space("seat_1").n == ACTION_COUNT
    obs = env.observe(env.agent_selection)
    assert space.contains(obs)
    # the other seat is not to move: its mask is all zero
    other = next(a for a in env.agents if a != env.agent_selection)
    assert not env.observe(other)["action_mask"].any()


def test_a_whole_game_ends_with_every_agent_terminated_and_removed():
    env = SpadesAECEnv("pagat", {"max_hands": 2})
    env.reset(seed=3)
    rng = random.Random(3)
    totals = {a: 0.0 for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        env.step(None if terminated or truncated else random_action(obs["action_mask"], rng))
    assert env.agents == []
    result = env.table.state.result  # type: ignore[union-attr]
    assert result is not None and result.hands == 2
    diff = (result.scores[0] - result.scores[1]) * 0.01
    assert totals["seat_0"] == pytest.approx(diff) and totals["seat_2"] == pytest.approx(diff)
    assert totals["seat_1"] == pytest.approx(-diff) and totals["seat_3"] == pytest.approx(-diff)


def test_render_shows_the_table():
    env = SpadesAECEnv("pagat", render_mode="ansi")
    env.reset(seed=9)
    text = env.render()
    assert text is not None and "hand 1" in text and "NS 0" in text
    env.step(BID_BASE + 3)
    assert "bid         3" in env.render()  # type: ignore[operator]
    with pytest.raises(ValueError, match="render_mode"):
        SpadesAECEnv("pagat", render_mode="rgb_array")


def test_bad_rules_and_settings_are_refused_clearly():
    with pytest.raises(Exception, match="unknown preset"):
        SpadesAECEnv("bridge")
    with pytest.raises(Exception, match="failed_nil_tricks"):
        SpadesAECEnv("two-player", {"failed_nil_tricks": "contract"})
    with pytest.raises(ValueError, match="reward must be one of hand, game"):
        SpadesAECEnv("pagat", reward="trick")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="illegal must be one of"):
        SpadesAECEnv("pagat", illegal="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="hand_reward_scale must be a finite number"):
        SpadesAECEnv("pagat", hand_reward_scale=float("nan"))


def test_action_ids_of_the_wrong_type_or_range_are_refused():
    env = SpadesAECEnv("pagat")
    env.reset(seed=2)
    for bad in (71, -1, 3.5, "S2"):
        with pytest.raises(ValueError, match="action"):
            env.step(bad)
    env.step(np.int64(BID_BASE + 2))  # numpy integers are fine


@pytest.mark.parametrize("rules_name", ["pagat", "two-player"])
def test_knowledge_is_the_agents_own_seat_and_what_its_observation_is_built_from(rules_name):
    from arena_sdk.envs.observation import encode, legal_mask

    env = SpadesAECEnv(RULESETS[rules_name])
    env.reset(seed=5)
    rng = random.Random(5)
    compared = 0
    for agent in env.agent_iter(300):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        for other in env.possible_agents:
            k = env.knowledge(other)
            assert k.seat == env.possible_agents.index(other)
            assert (k.kind is not None) == (other == agent)  # only the agent to move has a decision
        k = env.knowledge(agent)
        marked = env.table.marked_for(k.seat)
        assert np.array_equal(encode(k, marked), obs["observation"])
        assert np.array_equal(legal_mask(k, marked), obs["action_mask"])
        compared += 1
        env.step(random_action(obs["action_mask"], rng))
    assert compared > 100
