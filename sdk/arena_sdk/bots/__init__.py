"""Built-in opponents of graded strength: ``easy``, ``medium`` and ``hard``.

Ordinary SDK bots (they see only what their seat may see):

- :class:`EasyBot`: simple rules with noise; clearly better than random.
- :class:`MediumBot`: a strong rule bot (trick estimates, nil and nil cover,
  setting the opponents' nil, a bag budget, card counting and voids).
- :class:`HardBot`: search over sampled deals (:mod:`arena_sdk.sampling`) with
  bid-aware rollouts, exact search of the last tricks, bidding by simulation,
  within a strict per-move time budget.

Run one against a referee with ``python -m arena_sdk.bots TIER`` (it connects
through ``ARENA_ADDRESS``/``ARENA_TOKEN`` like any SDK bot), name it
``builtin:TIER`` as a bot in ``arena match run`` and tournament files, or use
:func:`make_bot` in the local harness.  See docs/builtin-bots.md.
"""

from __future__ import annotations

from arena_sdk.bot import Bot
from arena_sdk.bots.easy import EasyBot
from arena_sdk.bots.hard import HardBot
from arena_sdk.bots.medium import MediumBot

TIERS: dict[str, type[Bot]] = {"easy": EasyBot, "medium": MediumBot, "hard": HardBot}


def make_bot(tier: str) -> Bot:
    """A fresh bot of a tier; ``ValueError`` for an unknown tier name."""
    cls = TIERS.get(tier.strip().lower()) if isinstance(tier, str) else None
    if cls is None:
        raise ValueError(f"unknown built-in bot {tier!r}; tiers are {', '.join(TIERS)}")
    return cls()


__all__ = ["TIERS", "EasyBot", "HardBot", "MediumBot", "make_bot"]
