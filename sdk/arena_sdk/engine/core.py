"""Which implementation of the game's state machine runs: the compiled core or the pure one.

The SDK ships the rules twice: :class:`~arena_sdk.engine.pure.PureCore` in
pure Python, and ``arena_sdk.engine._core`` compiled from Cython when the SDK
was installed with a C compiler at hand (``pip`` builds it; without a compiler
the install goes on without it).  Both give the same states, scores and random
choices from the same seeds and generators.  The compiled one is chosen when it
is there and imports; set ``ARENA_SDK_PURE=1`` in the environment to force the
pure one (for a test, or to rule the extension out when something looks wrong).

>>> from arena_sdk.engine import core
>>> core.COMPILED, core.REASON                  # doctest: +SKIP
(True, 'compiled core arena_sdk.engine._core')
"""

from __future__ import annotations

import os  # only to read ARENA_SDK_PURE (tests/test_layering.py allows it here alone)
from typing import Any

from arena_sdk.engine.chance import chance_int
from arena_sdk.engine.pure import PureCore

#: The environment variable that forces the pure-Python core when set to 1 (or true/yes).
PURE_ENV = "ARENA_SDK_PURE"


def _forced_pure() -> bool:
    return os.environ.get(PURE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _load() -> tuple[type, Any, str]:
    """``(base class, compiled module or None, why)``."""
    if _forced_pure():
        return PureCore, None, f"pure Python ({PURE_ENV}=1)"
    try:
        from arena_sdk.engine import _core  # type: ignore[attr-defined]
    except ImportError as exc:
        return PureCore, None, f"pure Python (no compiled core: {exc})"
    return _core.CoreState, _core, "compiled core arena_sdk.engine._core"


#: The base class of :class:`~arena_sdk.engine.state.GameState`.
Core, compiled, REASON = _load()
#: True when the compiled core runs the games.
COMPILED = compiled is not None


def _pure_first_dealer(seed: object, players: int) -> int:
    return chance_int(seed, "first") % players


#: ``chance_int(seed, "first") % players``: the seeded first dealer (in C when compiled).
first_dealer = compiled.first_dealer if COMPILED else _pure_first_dealer


def describe() -> dict[str, object]:
    """What runs, for ``--version`` style reports and tests: ``compiled``, ``reason``, ``module``."""
    return {"compiled": COMPILED, "reason": REASON, "module": getattr(compiled, "__file__", None)}
