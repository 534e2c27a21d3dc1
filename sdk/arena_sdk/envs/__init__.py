"""Learning environments over the rules engine (the ``arena-sdk[envs]`` extra).

- :class:`SpadesAECEnv`: PettingZoo AEC, every seat an agent, any preset and options.
- :class:`SpadesSeatEnv`: Gymnasium, one seat; the others are built-in bots or any ``Bot``.
- :class:`PolicyBot`: a ``Bot`` that plays a policy over the same observations in the arena.
- :mod:`arena_sdk.envs.layout`: the observation and action layouts (docs/learning.md).

Install with ``pip install 'arena-sdk[envs]'`` (numpy, Gymnasium, PettingZoo).
Names load on first use: a bot that needs only :class:`PolicyBot` and the
observation (numpy) never imports Gymnasium or PettingZoo.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from arena_sdk.envs.layout import ACTION_COUNT, OBSERVATION_SIZE

_EXPORTS = {
    "SpadesAECEnv": "arena_sdk.envs.aec",
    "env": "arena_sdk.envs.aec",
    "SpadesSeatEnv": "arena_sdk.envs.seat",
    "PolicyBot": "arena_sdk.envs.bot",
    "SeatKnowledge": "arena_sdk.envs.observation",
    "encode": "arena_sdk.envs.observation",
    "legal_mask": "arena_sdk.envs.observation",
}

if TYPE_CHECKING:
    from arena_sdk.envs.aec import SpadesAECEnv, env
    from arena_sdk.envs.bot import PolicyBot
    from arena_sdk.envs.observation import SeatKnowledge, encode, legal_mask
    from arena_sdk.envs.seat import SpadesSeatEnv


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'arena_sdk.envs' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        if exc.name in ("numpy", "gymnasium", "pettingzoo"):
            raise ModuleNotFoundError(
                f"arena_sdk.envs.{name} needs {exc.name}: pip install 'arena-sdk[envs]'", name=exc.name
            ) from exc
        raise
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "ACTION_COUNT", "OBSERVATION_SIZE", "PolicyBot", "SeatKnowledge", "SpadesAECEnv", "SpadesSeatEnv",
    "encode", "env", "legal_mask",
]  # fmt: skip
