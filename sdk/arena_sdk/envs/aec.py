"""A PettingZoo AEC environment of Spades: every seat an agent, any preset and options.

>>> from arena_sdk.envs import SpadesAECEnv
>>> env = SpadesAECEnv("pagat", reward="hand")
>>> env.reset(seed=7)
>>> for agent in env.agent_iter():
...     obs, reward, terminated, truncated, info = env.last()
...     action = None if terminated or truncated else policy(obs["observation"], obs["action_mask"])
...     env.step(action)

Agents are ``seat_0`` .. ``seat_3`` (N, E, S, W) or ``seat_0``, ``seat_1``
(A, B).  An observation is ``{"observation": float32[OBSERVATION_SIZE],
"action_mask": int8[ACTION_COUNT]}`` built from that seat's view only
(docs/learning.md has the layout).  ``reset(seed=s)`` deals the game of
engine seed ``s`` (``GameState.new(rules, s)`` deals the same cards); a reset
without a seed deals a new game drawn from the environment's generator.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from arena_sdk.engine import GameState, Ruleset, seat_name
from arena_sdk.envs import layout
from arena_sdk.envs.observation import SeatKnowledge
from arena_sdk.envs.render import render_in_mode
from arena_sdk.envs.table import IllegalMode, RewardMode, Table, make_rules


def observation_space() -> spaces.Dict:
    """The observation space every seat shares (a fresh object)."""
    return spaces.Dict(
        {
            "observation": spaces.Box(
                -layout.FEATURE_BOUND, layout.FEATURE_BOUND, (layout.OBSERVATION_SIZE,), np.float32
            ),
            "action_mask": spaces.Box(0, 1, (layout.ACTION_COUNT,), np.int8),
        }
    )


def agent_name(seat: int) -> str:
    """The agent name of a seat: ``seat_0`` .. ``seat_3``."""
    return f"seat_{seat}"


class SpadesAECEnv(AECEnv):
    """Spades for PettingZoo (AEC: one agent acts at a time).  See the module docstring.

    ``rules``: a preset name or a :class:`Ruleset`; ``options``: overrides
    (``{"failed_nil_tricks": "contract"}``, ``{"max_hands": 3}``).
    ``reward``: ``"hand"`` (after every hand each seat gets its team's points
    minus the other team's, times ``hand_reward_scale``) or ``"game"`` (+1 win,
    -1 loss, 0 draw at the end).  An illegal action plays the referee's default
    move and costs ``illegal_penalty`` (``illegal="raise"`` raises instead).
    """

    metadata = {"name": "arena_spades_v0", "render_modes": ["ansi", "human"], "is_parallelizable": False}

    def __init__(
        self,
        rules: Ruleset | str = "pagat",
        options: dict[str, object] | None = None,
        *,
        reward: RewardMode = "hand",
        hand_reward_scale: float = 0.01,
        illegal: IllegalMode = "default",
        illegal_penalty: float = 1.0,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.rules = make_rules(rules, options)
        self.table = Table(
            self.rules, reward=reward, hand_reward_scale=hand_reward_scale,
            illegal=illegal, illegal_penalty=illegal_penalty,
        )  # fmt: skip
        self.render_mode = render_mode
        self.possible_agents = [agent_name(s) for s in range(self.rules.players)]
        self._seat = {a: s for s, a in enumerate(self.possible_agents)}
        self.observation_spaces = {a: observation_space() for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(layout.ACTION_COUNT) for a in self.possible_agents}
        self._np_random, self._np_random_seed = seeding.np_random(None)
        self._games = 0
        self.game_seed: int | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        """The agent's observation space (the same object every call, as PettingZoo asks)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """``Discrete(71)``: the action ids of docs/learning.md (the same object every call)."""
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game: of engine seed ``seed`` if given, else one drawn from the generator."""
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
            self.game_seed = int(seed)
        else:
            self.game_seed = int(self._np_random.integers(0, 2**63 - 1))
        self.table.reset(self.game_seed)
        self._games += 1
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: self._info(illegal=False) for a in self.agents}
        self.agent_selection = self.possible_agents[self.table.to_move]  # type: ignore[index]

    def _info(self, *, illegal: bool) -> dict[str, Any]:
        state = self.table.state
        assert state is not None
        return {"hands_completed": len(state.hand_results), "illegal_action": illegal, "game_seed": self.game_seed}

    @property
    def game(self) -> GameState:
        """The engine's whole game (every hand, every card): for logging, and for training
        targets computed in hindsight once a hand is over.  Never show it to a policy."""
        state = self.table.state
        if state is None:
            raise RuntimeError("no game yet: call reset() first")
        return state

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self.table.observe(self._seat[agent])

    def knowledge(self, agent: str) -> SeatKnowledge:
        """What ``agent``'s seat knows now: the object its observation is built from.

        For policies that compute features of their own (``PolicyBot`` gets the
        same object from the referee's view, ``SeatKnowledge.from_view``), so
        they see exactly what the seat may see and nothing more.
        """
        return self.table.knowledge(self._seat[agent])

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        result = self.table.step(action)
        self._cumulative_rewards[agent] = 0.0
        for a in self.agents:
            self.rewards[a] = result.rewards[self._seat[a]]
            self.infos[a] = self._info(illegal=result.illegal and a == agent)
        if self.table.over:
            self.terminations = {a: True for a in self.agents}
            seat = (self._seat[agent] + 1) % self.rules.players  # the dead agents step in seat order
            self.agent_selection = self.possible_agents[seat]
        else:
            self.agent_selection = self.possible_agents[self.table.to_move]  # type: ignore[index]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        """The table as text from the seat to move (``ansi``: returned; ``human``: printed)."""
        return render_in_mode(self.table, self.render_mode)

    def close(self) -> None:
        """Nothing to release."""

    def seat_name(self, agent: str) -> str:
        """``N``, ``E``, ``S``, ``W`` (or ``A``, ``B``) of an agent."""
        return seat_name(self.rules.players, self._seat[agent])


def env(**kwargs: Any) -> SpadesAECEnv:
    """PettingZoo's usual factory name: :class:`SpadesAECEnv` with ``kwargs``."""
    return SpadesAECEnv(**kwargs)
