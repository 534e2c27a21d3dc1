"""Both cores side by side in one process: the snapshot of every attribute of a state."""

from __future__ import annotations

from typing import Any

from arena_sdk.engine import core
from arena_sdk.engine.pure import PureCore
from arena_sdk.engine.state import GameState, game_state_on

#: Every attribute of the state machine (both cores keep the same ones).
ATTRIBUTES = tuple(PureCore.__slots__)
#: The pure engine, whatever core GameState runs on.
PureGameState = game_state_on(PureCore)
#: The compiled engine, or None where the extension is not built (or ARENA_SDK_PURE is set).
CompiledGameState = game_state_on(core.compiled.CoreState) if core.compiled is not None else None


def snapshot(state: Any) -> dict[str, Any]:
    """Every attribute of ``state`` (the rules by value), to compare two engines' states."""
    return {name: getattr(state, name) for name in ATTRIBUTES}


def assert_same(a: Any, b: Any, where: str = "") -> None:
    """Two states are equal in every attribute (named in the failure)."""
    sa, sb = snapshot(a), snapshot(b)
    for name in ATTRIBUTES:
        assert sa[name] == sb[name], f"{where}: {name} differs: {sa[name]!r} != {sb[name]!r}"
    assert type(a.decision) is type(b.decision)


__all__ = ["ATTRIBUTES", "CompiledGameState", "GameState", "PureGameState", "assert_same", "snapshot"]
