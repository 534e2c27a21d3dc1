"""A :class:`~arena_sdk.Bot` whose decisions come from a policy over the environments' observations.

Subclass :class:`PolicyBot` and implement :meth:`PolicyBot.choose`: it gets
the same observation vector and legal-action mask as the environments give
(built by :mod:`arena_sdk.envs.observation` from the referee's view), and
returns an action id.  The bot then plays through the SDK like any other:
``arena match run``, tournaments, Docker images, the ladder.

>>> class MyBot(PolicyBot):
...     name = "mine"
...     def choose(self, observation, mask):
...         return int(np.flatnonzero(mask)[0])

Needs numpy only.
"""

from __future__ import annotations

import numpy as np

from arena_sdk.bot import Bot
from arena_sdk.engine import Card, Decision
from arena_sdk.engine.cards import CARDS
from arena_sdk.envs import layout
from arena_sdk.envs.observation import SeatKnowledge, decision_value, encode, legal_mask
from arena_sdk.view import View


class PolicyError(RuntimeError):
    """The policy chose an action its mask does not allow."""


class PolicyBot(Bot):
    """A bot that asks :meth:`choose` for an action id at every decision."""

    name = "policy"

    def choose(self, observation: np.ndarray, mask: np.ndarray) -> int:
        """The action id to take: one where ``mask`` is 1.  Implement this."""
        raise NotImplementedError("implement choose(observation, mask) in your PolicyBot subclass")

    def _decide(self, view: View, marked: list[int]) -> int:
        k = SeatKnowledge.from_view(view)
        mask = legal_mask(k, marked)
        action = int(self.choose(encode(k, marked), mask))
        if not 0 <= action < layout.ACTION_COUNT or not mask[action]:
            legal = ", ".join(layout.action_name(int(a)) for a in np.flatnonzero(mask))
            raise PolicyError(f"the policy chose action {action}, which is not legal now (legal: {legal})")
        return action

    def bid(self, view: View) -> int:
        return decision_value(Decision.BID, self._decide(view, []))  # type: ignore[no-any-return]

    def play(self, view: View) -> Card:
        return decision_value(Decision.PLAY, self._decide(view, []))  # type: ignore[no-any-return]

    def blind_nil(self, view: View) -> bool:
        return decision_value(Decision.BLIND_NIL, self._decide(view, []))  # type: ignore[no-any-return]

    def draw(self, view: View) -> bool:
        return decision_value(Decision.DRAW, self._decide(view, []))  # type: ignore[no-any-return]

    def exchange(self, view: View) -> list[Card]:
        """Choose cards one at a time, as the environments do, until the policy finishes or three are chosen."""
        marked: list[int] = []
        while len(marked) < layout.MAX_EXCHANGE:
            action = self._decide(view, marked)
            if action == layout.FINISH_EXCHANGE:
                break
            marked.append(action)
        return [CARDS[c] for c in marked]
