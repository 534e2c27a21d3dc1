"""One game for the environments: the engine state, an exchange being chosen, rewards.

Both environments (:mod:`~arena_sdk.envs.aec` and :mod:`~arena_sdk.envs.seat`)
step a :class:`Table`: it turns action ids into engine actions (a blind-nil
exchange is chosen a card at a time), plays the referee's default move for an
illegal action, and says which hands ended and what each seat earned.
Observations come from ``GameState.view(seat)`` only.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Literal

import numpy as np

from arena_sdk.engine import Decision, GameState, HandResult, Ruleset, RulesError, resolve_ruleset
from arena_sdk.engine.cards import indices_of
from arena_sdk.engine.policy import default_action
from arena_sdk.engine.seats import team_of
from arena_sdk.envs import layout
from arena_sdk.envs.observation import SeatKnowledge, decision_value, encode, legal_mask

RewardMode = Literal["hand", "game"]
IllegalMode = Literal["default", "raise"]
REWARD_MODES = ("hand", "game")
ILLEGAL_MODES = ("default", "raise")


class IllegalActionIdError(ValueError):
    """An action id that is not legal now (raised only with ``illegal="raise"``)."""


@dataclasses.dataclass(frozen=True)
class StepResult:
    """What one action did: who acted, whether it was illegal, and the rewards it settled."""

    seat: int
    illegal: bool
    rewards: tuple[float, ...]
    """Per seat: what this step earned it (hand or game rewards, the illegal penalty)."""
    hands: tuple[HandResult, ...]
    """The hands that ended with this step (at most one)."""


def make_rules(rules: Ruleset | str = "pagat", options: dict[str, object] | None = None) -> Ruleset:
    """A ruleset from a preset name (or a :class:`Ruleset`) and option overrides, validated."""
    if isinstance(rules, Ruleset):
        if not options:
            return rules
        return Ruleset.from_dict({**rules.to_dict(), **options})
    if not isinstance(rules, str):
        raise TypeError(f"rules must be a preset name or a Ruleset, got {rules!r}")
    return resolve_ruleset(rules, options or {})


def check_settings(reward: str, hand_reward_scale: float, illegal: str, illegal_penalty: float) -> None:
    """``ValueError`` naming the first bad environment setting."""
    if reward not in REWARD_MODES:
        raise ValueError(f"reward must be one of {', '.join(REWARD_MODES)}, got {reward!r}")
    if illegal not in ILLEGAL_MODES:
        raise ValueError(f"illegal must be one of {', '.join(ILLEGAL_MODES)}, got {illegal!r}")
    for name, value in (("hand_reward_scale", hand_reward_scale), ("illegal_penalty", illegal_penalty)):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not np.isfinite(value):
            raise ValueError(f"{name} must be a finite number, got {value!r}")


def action_id(action: object) -> int:
    """An action as a plain int; ``ValueError`` for anything that is not an id 0..70."""
    try:
        value = operator.index(action)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"an action must be a whole number 0..{layout.ACTION_COUNT - 1}, got {action!r}") from None
    if not 0 <= value < layout.ACTION_COUNT:
        raise ValueError(f"action {value} is out of range: actions are 0..{layout.ACTION_COUNT - 1}")
    return value


class Table:
    """A game of Spades stepped one action id at a time (see the module docstring)."""

    def __init__(
        self,
        rules: Ruleset,
        *,
        reward: RewardMode = "hand",
        hand_reward_scale: float = 0.01,
        illegal: IllegalMode = "default",
        illegal_penalty: float = 1.0,
    ) -> None:
        check_settings(reward, hand_reward_scale, illegal, illegal_penalty)
        self.rules = rules
        self.players = rules.players
        self.reward = reward
        self.hand_reward_scale = float(hand_reward_scale)
        self.illegal = illegal
        self.illegal_penalty = float(illegal_penalty)
        self.state: GameState | None = None
        #: Cards the seat to move has chosen so far in an exchange decision.
        self.marked: list[int] = []

    def reset(self, seed: int | str) -> None:
        """Start a new game dealt from ``seed`` (the engine's seed: the same seed, the same cards)."""
        self.state = GameState.new(self.rules, seed)
        self.marked = []

    def _game(self) -> GameState:
        if self.state is None:
            raise RuntimeError("no game yet: call reset() first")
        return self.state

    @property
    def to_move(self) -> int | None:
        """The seat whose decision it is (``None`` once the game is over)."""
        return self._game().to_move

    @property
    def over(self) -> bool:
        """True once the game has a result."""
        return self._game().is_over

    def knowledge(self, seat: int) -> SeatKnowledge:
        """What ``seat`` knows now, from its engine view."""
        return SeatKnowledge.from_seat_view(self._game().view(seat))

    def marked_for(self, seat: int) -> list[int]:
        """The cards ``seat`` has chosen to return so far (only while it is choosing)."""
        return self.marked if seat == self.to_move else []

    def observe(self, seat: int) -> dict[str, np.ndarray]:
        """``{"observation": float32 vector, "action_mask": int8 vector}`` for ``seat``."""
        k = self.knowledge(seat)
        marked = self.marked_for(seat)
        return {"observation": encode(k, marked), "action_mask": legal_mask(k, marked)}

    def step(self, action: object) -> StepResult:
        """Apply the action id of the seat to move; see :class:`StepResult`."""
        state = self._game()
        seat = state.to_move
        if seat is None:
            raise RuntimeError("the game is over: no action is expected (call reset())")
        value = action_id(action)
        hands_before = len(state.hand_results)
        illegal = not self._apply(state, seat, value)
        if illegal:
            if self.illegal == "raise":
                raise IllegalActionIdError(
                    f"{layout.action_name(value)} (action {value}) is not legal for seat {seat} now"
                )
            self.marked = []
            state.apply(default_action(state))
        rewards = self.settle(hands_before)
        if illegal:
            rewards[seat] -= self.illegal_penalty
        return StepResult(seat, illegal, tuple(rewards), tuple(state.hand_results[hands_before:]))

    def settle(self, hands_before: int) -> list[float]:
        """Per seat: the rewards of the hands after the first ``hands_before``, and of the game's end.

        For moves made outside :meth:`step` (the bots of a one-seat environment).
        """
        state = self._game()
        rewards = [0.0] * self.players
        if self.reward == "hand":
            for hand in state.hand_results[hands_before:]:
                self._add_hand_rewards(rewards, hand)
        elif state.result is not None:
            self._add_game_rewards(rewards)
        return rewards

    def _apply(self, state: GameState, seat: int, action: int) -> bool:
        """Apply ``action`` if it is legal now; False (state unchanged) if not."""
        kind = state.decision
        if kind is Decision.EXCHANGE:
            return self._exchange_step(state, seat, action)
        try:
            value = decision_value(kind, action)  # type: ignore[arg-type]
            state.apply(value)
        except (ValueError, RulesError):
            return False
        return True

    def _exchange_step(self, state: GameState, seat: int, action: int) -> bool:
        if action == layout.FINISH_EXCHANGE:
            chosen, self.marked = tuple(self.marked), []
            state.apply(chosen)
            return True
        if action >= 52 or action in self.marked or not state.hands[seat] >> action & 1:
            return False
        self.marked.append(action)
        if len(self.marked) == layout.MAX_EXCHANGE:  # nothing left to choose: the exchange is made
            chosen, self.marked = tuple(self.marked), []
            state.apply(chosen)
        return True

    def _add_hand_rewards(self, rewards: list[float], hand: HandResult) -> None:
        gains = [t.score_after - t.score_before for t in hand.teams]
        for seat in range(self.players):
            team = team_of(self.players, seat)
            rewards[seat] += (gains[team] - gains[1 - team]) * self.hand_reward_scale

    def _add_game_rewards(self, rewards: list[float]) -> None:
        result = self._game().result
        assert result is not None
        for seat in range(self.players):
            if result.winner is not None:
                rewards[seat] += 1.0 if result.winner == team_of(self.players, seat) else -1.0

    def hand_cards(self, seat: int) -> list[int]:
        """``seat``'s cards as indices (for rendering and tests)."""
        return indices_of(self._game().hands[seat])
