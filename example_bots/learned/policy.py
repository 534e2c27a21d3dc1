"""A small network in numpy: observation -> a value for each of the 71 action ids.

Two hidden layers (ReLU) and one output per action id: the reward the
network expects for the hand when it takes that action now (``train.py``
fits it to the rewards of self-play).  The policy plays the legal action with
the highest value.  The same :meth:`MLPPolicy.forward` runs in training and
in the bot (``bot.py``), so what was trained is what plays.  Weights are one
``.npz`` file, with the observation and action sizes it was trained for.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from arena_sdk.envs.layout import ACTION_COUNT, OBSERVATION_SIZE

#: The value given to illegal actions, so that no argmax picks one.
MASKED = -1e9
PARAMETERS = ("w1", "b1", "w2", "b2", "wq", "bq")


class PolicyFileError(ValueError):
    """A policy file that cannot be used: missing, unreadable or of another layout."""


class MLPPolicy:
    """The network; ``params`` maps each name of :data:`PARAMETERS` to its float32 array."""

    def __init__(self, params: dict[str, np.ndarray]) -> None:
        self.params = params

    @classmethod
    def create(cls, hidden: int = 128, seed: int = 0) -> MLPPolicy:
        """Fresh weights (He initialisation; a small output layer)."""
        rng = np.random.default_rng(seed)

        def layer(n_in: int, n_out: int, scale: float) -> np.ndarray:
            return (rng.standard_normal((n_in, n_out)) * scale / np.sqrt(n_in)).astype(np.float32)

        return cls({
            "w1": layer(OBSERVATION_SIZE, hidden, np.sqrt(2)), "b1": np.zeros(hidden, np.float32),
            "w2": layer(hidden, hidden, np.sqrt(2)), "b2": np.zeros(hidden, np.float32),
            "wq": layer(hidden, ACTION_COUNT, 0.1), "bq": np.zeros(ACTION_COUNT, np.float32),
        })  # fmt: skip

    def forward(self, obs: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """Action values (batch, 71) of a batch of observations, and the hidden layers (for training)."""
        p = self.params
        h1 = np.maximum(obs @ p["w1"] + p["b1"], 0.0)
        h2 = np.maximum(h1 @ p["w2"] + p["b2"], 0.0)
        return h2 @ p["wq"] + p["bq"], (h1, h2)

    def best(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The legal action with the highest value (how the bot plays)."""
        values, _ = self.forward(obs[None, :])
        return int(np.argmax(np.where(mask.astype(bool), values[0], MASKED)))

    def best_of(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`best` for a batch."""
        values, _ = self.forward(obs)
        return np.argmax(np.where(masks.astype(bool), values, MASKED), axis=1)

    def save(self, path: Path | str) -> None:
        """Write the weights and the layout sizes to an ``.npz`` file."""
        np.savez_compressed(
            path, observation_size=OBSERVATION_SIZE, action_count=ACTION_COUNT, **self.params
        )

    @classmethod
    def load(cls, path: Path | str) -> MLPPolicy:
        """Read a file written by :meth:`save`; :class:`PolicyFileError` says what is wrong."""
        try:
            with np.load(path) as data:
                sizes = (int(data["observation_size"]), int(data["action_count"]))
                params = {name: data[name].astype(np.float32) for name in PARAMETERS}
        except (OSError, KeyError, ValueError) as exc:
            raise PolicyFileError(f"cannot read policy {path}: {exc}") from exc
        if sizes != (OBSERVATION_SIZE, ACTION_COUNT):
            raise PolicyFileError(
                f"policy {path} was trained for observations of {sizes[0]} and {sizes[1]} actions; "
                f"this SDK has {OBSERVATION_SIZE} and {ACTION_COUNT}: train it again"
            )
        if params["w1"].shape[0] != OBSERVATION_SIZE or params["wq"].shape[1] != ACTION_COUNT:
            raise PolicyFileError(f"policy {path}: its weights do not match its stated sizes")
        return cls(params)

