"""The learned example bot: plays the policy that ``train.py`` trained by self-play.

It is an ordinary SDK bot (a :class:`~arena_sdk.envs.PolicyBot`).  To play a
card it describes each legal card from the referee's view
(``features.py``, the same numbers as in training) and plays the one its card
network rates highest; for a bid (and the other presets' blind nil, draw and
exchange) it builds the learning environments' observation and mask and plays
the legal action its decision network rates highest.  The weights are
``policy.npz`` beside this file (or the file named by ``ARENA_POLICY``).

Run it like any bot::

    arena match run --bot cmd:'python example_bots/learned/bot.py' --bot builtin:easy
    python -m arena_sdk.testing example_bots/learned/bot.py:LearnedBot --against easy --games 20

It needs numpy (``requirements.txt``); docs/learning.md says how to build its
image offline and submit it to a ladder.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# One BLAS thread: these matrices are small, and on a busy machine (or in a container
# with one CPU) more threads make each product many times slower, not faster.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # policy.py beside this file, wherever it runs

from policy import LearnedPolicy  # noqa: E402

from arena_sdk import run  # noqa: E402
from arena_sdk.engine import Card  # noqa: E402
from arena_sdk.engine.cards import CARDS  # noqa: E402
from arena_sdk.envs import SeatKnowledge  # noqa: E402
from arena_sdk.envs.bot import PolicyBot  # noqa: E402
from arena_sdk.view import View  # noqa: E402

#: The weights this bot plays, unless ``ARENA_POLICY`` names another file.
DEFAULT_POLICY = Path(__file__).resolve().parent / "policy.npz"


class LearnedBot(PolicyBot):
    """The trained networks' best legal action at every decision (deterministic)."""

    name = "learned"
    version = "2"

    def __init__(self, policy: LearnedPolicy | None = None) -> None:
        super().__init__()
        if policy is None:
            policy = LearnedPolicy.load(os.environ.get("ARENA_POLICY", DEFAULT_POLICY))
        self.policy = policy

    def choose(self, observation: np.ndarray, mask: np.ndarray) -> int:
        return self.policy.best(observation, mask)

    def play(self, view: View) -> Card:
        return CARDS[self.policy.best_card(SeatKnowledge.from_view(view))]


if __name__ == "__main__":
    run(LearnedBot())
