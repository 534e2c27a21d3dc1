"""The Spades arena SDK: write a bot, test it locally, run it against the referee.

>>> from arena_sdk import Bot, run
>>> class MyBot(Bot):
...     name = "mybot"
...     def bid(self, view): return 3
...     def play(self, view): return view.legal_cards()[0]

The rules engine is :mod:`arena_sdk.engine`; the local harness is
:mod:`arena_sdk.testing`.

The names below are loaded when first used, so that ``import
arena_sdk.engine`` (the rules, standard library only) loads neither gRPC nor
protobuf and changes no environment variable: gRPC's transport is chosen
where a client starts (:mod:`arena_sdk.client`), not here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: Each public name and the module that defines it.
_EXPORTS = {
    "Bot": "arena_sdk.bot",
    "GameInfo": "arena_sdk.bot",
    "GameSummary": "arena_sdk.bot",
    "HandSummary": "arena_sdk.bot",
    "MatchInfo": "arena_sdk.bot",
    "join_match": "arena_sdk.client",
    "run": "arena_sdk.client",
    "Card": "arena_sdk.engine",
    "Decision": "arena_sdk.engine",
    "Suit": "arena_sdk.engine",
    "View": "arena_sdk.view",
}

if TYPE_CHECKING:
    from arena_sdk.bot import Bot, GameInfo, GameSummary, HandSummary, MatchInfo
    from arena_sdk.client import join_match, run
    from arena_sdk.engine import Card, Decision, Suit
    from arena_sdk.view import View


def __getattr__(name: str) -> Any:
    if name == "play_match":  # its name until round 3: one name, one thing (arena_sdk.testing.play_match is local)
        import warnings

        warnings.warn(
            "arena_sdk.play_match is now arena_sdk.join_match (arena_sdk.testing.play_match plays locally)",
            DeprecationWarning,
            stacklevel=2,
        )
        name = "join_match"
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'arena_sdk' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "Bot", "Card", "Decision", "GameInfo", "GameSummary", "HandSummary", "MatchInfo",
    "Suit", "View", "__version__", "join_match", "run",
]  # fmt: skip
