"""The heuristic example bot: a rule bot that counts its tricks, covers a nil partner, avoids bags.

It is the SDK's built-in Medium bot (``arena_sdk.bots.medium``) without its
bag budget, and shows how a bot can start from a built-in one and change one
rule: subclass it, set what differs, and run it.  Read Medium's source for the
rules themselves (trick counting for the bid, nil and nil cover, second hand
low and third hand high, ducking once the contract is safe, card counting and
shown voids); every one of its methods (``bid``, ``play``, ``blind_nil``,
``draw``) can be overridden the same way.

Run it against a referee with ``python example_bots/heuristic/bot.py``, or
locally with ``python -m arena_sdk.testing example_bots/heuristic/bot.py:HeuristicBot``.
"""

from __future__ import annotations

from arena_sdk import run
from arena_sdk.bots.medium import MediumBot


class HeuristicBot(MediumBot):
    """Medium's trick counting, nil and nil cover, and bag avoidance, without its bag budget."""

    name = "heuristic"
    version = "1"
    bag_budget = False


if __name__ == "__main__":
    run(HeuristicBot())
