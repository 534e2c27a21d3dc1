"""A Gymnasium environment for one seat; the other seats are SDK bots.

>>> from arena_sdk.envs import SpadesSeatEnv
>>> env = SpadesSeatEnv("pagat", seat=0, others="easy")
>>> obs, info = env.reset(seed=7)
>>> obs, reward, terminated, truncated, info = env.step(action)

The learner plays ``seat`` (0..3 for N, E, S, W; 0..1 for A, B); every other
seat is a built-in bot (``"easy"``, ``"medium"``, ``"hard"``, ``"random"``)
or any :class:`~arena_sdk.Bot` (an instance, a class or a factory), one for
all or one per seat.  An episode is one game.  Observations and actions are
those of :class:`~arena_sdk.envs.SpadesAECEnv`; ``step`` runs the other seats
until it is the learner's turn again (or the game ends) and returns what the
learner earned meanwhile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from arena_sdk.bot import Bot
from arena_sdk.engine import GameState, Ruleset, seat_name
from arena_sdk.envs import layout
from arena_sdk.envs.aec import observation_space
from arena_sdk.envs.render import render_in_mode
from arena_sdk.envs.seats import BotSeat, seat_bots
from arena_sdk.envs.table import IllegalMode, RewardMode, Table, make_rules
from arena_sdk.testing import BotArgument


class SpadesSeatEnv(gymnasium.Env):
    """One seat of Spades against SDK bots (see the module docstring).

    ``reward``, ``hand_reward_scale``, ``illegal`` and ``illegal_penalty`` are
    those of :class:`~arena_sdk.envs.SpadesAECEnv`.  ``info`` carries
    ``hands_completed``, ``illegal_action``, ``game_seed`` and, once the game
    is over, ``winner`` (the team index, or ``None`` for a draw) and ``scores``.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        rules: Ruleset | str = "pagat",
        options: dict[str, object] | None = None,
        *,
        seat: int = 0,
        others: BotArgument | Sequence[BotArgument] | Mapping[int, BotArgument] = "easy",
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
        n = self.rules.players
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < n:
            raise ValueError(f"seat must be 0..{n - 1} for a {n}-player game, got {seat!r}")
        self.seat = seat
        self.table = Table(
            self.rules, reward=reward, hand_reward_scale=hand_reward_scale,
            illegal=illegal, illegal_penalty=illegal_penalty,
        )  # fmt: skip
        self.render_mode = render_mode
        self.observation_space = observation_space()
        self.action_space = spaces.Discrete(layout.ACTION_COUNT)
        bots = seat_bots(others, seat, n)
        names = [("learner" if s == seat else str(bots[s].name)) for s in range(n)]
        self.bots: dict[int, BotSeat] = {
            s: BotSeat(bot, s, self.rules, names, match_id="gymnasium") for s, bot in bots.items()
        }
        self._games = 0
        self.game_seed: int | None = None

    @property
    def game(self) -> GameState:
        """The engine's whole game (every hand, every card): for logging and hindsight, never for the policy."""
        state = self.table.state
        if state is None:
            raise RuntimeError("no game yet: call reset() first")
        return state

    @property
    def other_bots(self) -> dict[int, Bot]:
        """The bot object at each other seat."""
        return {s: b.bot for s, b in self.bots.items()}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Deal a new game (of engine seed ``seed`` if given) and play up to the learner's turn."""
        super().reset(seed=seed)
        self.game_seed = int(seed) if seed is not None else int(self.np_random.integers(0, 2**63 - 1))
        self.table.reset(self.game_seed)
        self._games += 1
        state = self.table.state
        assert state is not None
        for bot in self.bots.values():
            bot.start_game(self._games - 1, self._game_id(), state)
        self._play_others()  # no hand ends before the learner's first decision: nothing earned yet
        return self.table.observe(self.seat), self._info(illegal=False)

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Play the learner's action, then the other seats up to its next turn or the game's end."""
        if self.table.state is None:
            raise RuntimeError("call reset() before step()")
        if self.table.over:
            raise RuntimeError("the game is over: call reset() to start another")
        result = self.table.step(action)
        reward = result.rewards[self.seat]
        if result.hands:
            self._tell_hand_end()
        reward += self._play_others()
        if self.render_mode == "human":
            self.render()
        obs = self.table.observe(self.seat)
        return obs, float(reward), self.table.over, False, self._info(illegal=result.illegal)

    def _play_others(self) -> float:
        """Let the bots move until the learner's turn or the game's end; the learner's rewards meanwhile."""
        earned = 0.0
        table = self.table
        state = table.state
        assert state is not None
        while not table.over and table.to_move != self.seat:
            seat = table.to_move
            assert seat is not None
            hands_before = len(state.hand_results)
            self.bots[seat].play(state)
            if len(state.hand_results) > hands_before or table.over:
                earned += table.settle(hands_before)[self.seat]
                if len(state.hand_results) > hands_before:
                    self._tell_hand_end()
        if table.over:
            for bot in self.bots.values():
                bot.game_end(self._games - 1, self._game_id(), state)
        return earned

    def _tell_hand_end(self) -> None:
        state = self.table.state
        assert state is not None
        for bot in self.bots.values():
            bot.hand_end(state)

    def _game_id(self) -> str:
        return f"gymnasium-g{self._games - 1}"

    def _info(self, *, illegal: bool) -> dict[str, Any]:
        state = self.table.state
        assert state is not None
        info: dict[str, Any] = {
            "hands_completed": len(state.hand_results),
            "illegal_action": illegal,
            "game_seed": self.game_seed,
        }
        if state.result is not None:
            info["winner"] = state.result.winner
            info["scores"] = state.result.scores
        return info

    def action_masks(self) -> np.ndarray:
        """The learner's legal-action mask as booleans (the name sb3-contrib's MaskablePPO asks for)."""
        return self.table.observe(self.seat)["action_mask"].astype(bool)

    def render(self) -> str | None:
        """The table as text (``ansi``: returned; ``human``: printed)."""
        return render_in_mode(self.table, self.render_mode)

    def seat_name(self) -> str:
        """The learner's seat: ``N``, ``E``, ``S``, ``W``, ``A`` or ``B``."""
        return seat_name(self.rules.players, self.seat)


#: The Gymnasium id: ``gymnasium.make("arena_sdk.envs.seat:SpadesSeat-v0", rules="cards4", others="medium")``.
ENV_ID = "SpadesSeat-v0"
if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="arena_sdk.envs.seat:SpadesSeatEnv")
