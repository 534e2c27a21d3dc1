"""The Spades arena SDK: write a bot, test it locally, run it against the referee.

>>> from arena_sdk import Bot, run
>>> class MyBot(Bot):
...     name = "mybot"
...     def bid(self, view): return 3
...     def play(self, view): return view.legal_cards()[0]

The rules engine is :mod:`arena_sdk.engine`; the local harness is
:mod:`arena_sdk.testing`.
"""

# First, before anything imports grpc: gRPC reads its transport settings once, at import.
from arena_sdk.transport import prefer_polling_transport

prefer_polling_transport()

from arena_sdk.bot import Bot, GameInfo, GameSummary, HandSummary, MatchInfo  # noqa: E402
from arena_sdk.client import play_match, run  # noqa: E402
from arena_sdk.engine import Card, Decision, Suit  # noqa: E402
from arena_sdk.view import View  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "Bot", "Card", "Decision", "GameInfo", "GameSummary", "HandSummary", "MatchInfo",
    "Suit", "View", "__version__", "play_match", "run",
]  # fmt: skip
