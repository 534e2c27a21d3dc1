"""The learned bot's two small networks, in numpy.

- **Cards** (``cards``): a Q-network that rates one legal card at a time.
  Its input is the card's row of :func:`features.card_features` (what the
  card would do in this trick, and the hand's context: contracts, nils,
  bags); its output is the reward the seat's team expects for the hand if it
  plays that card now.  The policy plays the card rated highest.
- **Everything else** (``decisions``): bids, and the other presets' blind nil,
  draw and exchange decisions, from the environments' 750-number observation
  to a value for each of the 71 action ids; the legal one rated highest is
  played.

Both are plain ReLU networks (:func:`forward`); the same code runs in
training (``train.py``) and in the bot (``bot.py``), so what was trained is
what plays.  Weights are one ``.npz`` file, with the layout sizes it was
trained for.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from features import FEATURE_COUNT, card_features

from arena_sdk.envs import SeatKnowledge
from arena_sdk.envs.layout import ACTION_COUNT, OBSERVATION_SIZE

#: The value given to illegal actions, so that no argmax picks one.
MASKED = -1e9
#: The two networks a policy file holds.
NETWORKS = ("decisions", "cards")
Params = dict[str, np.ndarray]


class PolicyFileError(ValueError):
    """A policy file that cannot be used: missing, unreadable or of another layout."""


def create_network(sizes: list[int], rng: np.random.Generator, out_scale: float = 0.1) -> Params:
    """Fresh weights ``w0, b0, w1, b1, ...`` for layers of ``sizes`` (He initialisation; a small last layer)."""
    params: Params = {}
    layers = len(sizes) - 1
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        scale = out_scale if i == layers - 1 else np.sqrt(2)
        params[f"w{i}"] = (rng.standard_normal((n_in, n_out)) * scale / np.sqrt(n_in)).astype(np.float32)
        params[f"b{i}"] = np.zeros(n_out, np.float32)
    return params


def forward(params: Params, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The network's output for a batch ``x``, and each layer's input (for backpropagation)."""
    layers = len(params) // 2
    inputs = [x]
    for i in range(layers):
        x = x @ params[f"w{i}"] + params[f"b{i}"]
        if i < layers - 1:
            x = np.maximum(x, 0.0)
            inputs.append(x)
    return x, inputs


class LearnedPolicy:
    """The two networks (see the module docstring); ``nets`` maps each of :data:`NETWORKS` to its params."""

    def __init__(self, nets: dict[str, Params]) -> None:
        self.nets = nets

    @classmethod
    def create(cls, hidden: int = 128, card_hidden: int = 64, seed: int = 0) -> LearnedPolicy:
        """Fresh weights: decisions 750 → hidden → hidden → 71, cards features → card_hidden ×2 → 1."""
        rng = np.random.default_rng(seed)
        return cls({
            "decisions": create_network([OBSERVATION_SIZE, hidden, hidden, ACTION_COUNT], rng),
            "cards": create_network([FEATURE_COUNT, card_hidden, card_hidden, 1], rng),
        })  # fmt: skip

    def copy(self) -> LearnedPolicy:
        """A policy with copies of these weights."""
        return LearnedPolicy({net: {k: v.copy() for k, v in p.items()} for net, p in self.nets.items()})

    def move_towards(self, other: LearnedPolicy, share: float) -> None:
        """Move every weight ``share`` of the way to ``other``'s (a moving average of weights, in training)."""
        for net, params in self.nets.items():
            for k, v in params.items():
                v += share * (other.nets[net][k] - v)

    def best(self, observation: np.ndarray, mask: np.ndarray) -> int:
        """The legal action (a bid or another non-play decision) rated highest."""
        values, _ = forward(self.nets["decisions"], observation[None, :])
        return int(np.argmax(np.where(mask.astype(bool), values[0], MASKED)))

    def best_of(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`best` for a batch."""
        values, _ = forward(self.nets["decisions"], observations)
        return np.argmax(np.where(masks.astype(bool), values, MASKED), axis=1)

    def card_values(self, rows: np.ndarray) -> np.ndarray:
        """The value of each card of a stack of :func:`features.card_features` rows."""
        values, _ = forward(self.nets["cards"], rows)
        return values[:, 0]

    def best_card(self, k: SeatKnowledge) -> int:
        """The legal card rated highest in a play decision (how the bot plays)."""
        cards, rows = card_features(k)
        return cards[int(np.argmax(self.card_values(rows)))]

    def save(self, path: Path | str) -> None:
        """Write the weights and the layout sizes to an ``.npz`` file."""
        arrays = {f"{net}.{name}": value for net, params in self.nets.items() for name, value in params.items()}
        np.savez_compressed(
            path, observation_size=OBSERVATION_SIZE, action_count=ACTION_COUNT, card_features=FEATURE_COUNT, **arrays
        )

    @classmethod
    def load(cls, path: Path | str) -> LearnedPolicy:
        """Read a file written by :meth:`save`; :class:`PolicyFileError` says what is wrong."""
        try:
            with np.load(path) as data:
                if "observation_size" in data.files and "card_features" not in data.files:
                    raise PolicyFileError(
                        f"policy {path} has no card network (an earlier format of this example): train it again"
                    )
                sizes = tuple(int(data[k]) for k in ("observation_size", "action_count", "card_features"))
                nets: dict[str, Params] = {net: {} for net in NETWORKS}
                for key in data.files:
                    net, _, name = key.partition(".")
                    if net in nets:
                        nets[net][name] = data[key].astype(np.float32)
        except PolicyFileError:
            raise
        except (OSError, KeyError, ValueError) as exc:
            raise PolicyFileError(f"cannot read policy {path}: {exc}") from exc
        expected = (OBSERVATION_SIZE, ACTION_COUNT, FEATURE_COUNT)
        if sizes != expected:
            raise PolicyFileError(
                f"policy {path} was trained for observations of {sizes[0]}, {sizes[1]} actions and "
                f"{sizes[2]} card features; this bot has {expected[0]}, {expected[1]} and {expected[2]}: "
                "train it again"
            )
        _check_shapes(path, nets, expected)
        return cls(nets)


def _check_shapes(path: Path | str, nets: dict[str, Params], expected: tuple[int, int, int]) -> None:
    """:class:`PolicyFileError` unless both networks are whole chains of layers of the stated sizes."""
    ends = {"decisions": (expected[0], expected[1]), "cards": (expected[2], 1)}
    for net, (n_in, n_out) in ends.items():
        params = nets[net]
        layers = len(params) // 2
        names = {f"{p}{i}" for i in range(layers) for p in "wb"}
        if not layers or set(params) != names:
            raise PolicyFileError(f"policy {path}: the {net} network is missing or incomplete")
        shapes = [params[f"w{i}"].shape for i in range(layers)]
        chained = all(a[1] == b[0] for a, b in zip(shapes, shapes[1:]))
        if shapes[0][0] != n_in or shapes[-1][1] != n_out or not chained:
            raise PolicyFileError(f"policy {path}: the {net} network's weights do not match its stated sizes")
