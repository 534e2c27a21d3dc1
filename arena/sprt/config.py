"""What an SPRT run is: the two bots, the hypotheses, the rules, the clock, the seed.

The *identity* of a test is every setting that changes what is measured (the
bots, elo0/elo1, alpha/beta, the ruleset, the time control, the seed). It is
stored with the results, and a run with another identity is refused for the
same output directory. ``--concurrency``, ``--max-pairs`` and the table batch
size may change between runs (to use another machine, or to extend an
inconclusive test).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from arena_sdk.engine import Ruleset

from arena.errors import ArenaError
from arena.match import TimeControl
from arena.match.seeds import derive_seed
from arena.ratings.sprt import Settings
from arena.referee.botspec import BotSpec
from arena.referee.host import DEFAULT_START_TIMEOUT_S
from arena.sandbox.docker import ContainerLimits
from arena.tables.cores import usable_cores
from arena.tables.settings import MAX_CONCURRENCY, ConfigError, parse_concurrency

#: Pairs a table plays before its bots are restarted.
DEFAULT_PAIRS_PER_TABLE = 4


class SprtConfigError(ArenaError, ValueError):
    """Settings that cannot make a test; the message says which and why."""


def sprt_concurrency(text: str) -> int:
    """``--concurrency``: a whole number, or ``auto`` (the usable cores rounded down to an even
    number, at least 2).  Whether a number is even and in range, :class:`SprtConfig` checks."""
    if text.strip().lower() == "auto":
        return max(2, usable_cores() // 2 * 2)
    try:
        return parse_concurrency(text, "--concurrency")
    except ConfigError:
        raise SprtConfigError(
            f"--concurrency must be an even number of tables from 2 to {MAX_CONCURRENCY} or auto, got {text!r}"
        ) from None


@dataclasses.dataclass(frozen=True)
class SprtConfig:
    """Everything ``arena sprt`` needs."""

    new: BotSpec
    old: BotSpec
    settings: Settings
    rules: Ruleset
    time_control: TimeControl
    seed: str
    out: Path
    concurrency: int = 2
    """Tables at the same time: two per pair, so an even number."""
    max_pairs: int | None = None
    """Stop as inconclusive after this many pairs (None: until a bound is crossed)."""
    pairs_per_table: int = DEFAULT_PAIRS_PER_TABLE
    start_timeout: float = DEFAULT_START_TIMEOUT_S
    limits: ContainerLimits = ContainerLimits()

    def __post_init__(self) -> None:
        if self.concurrency < 2 or self.concurrency % 2 or self.concurrency > MAX_CONCURRENCY:
            raise SprtConfigError(
                f"--concurrency must be an even number of tables from 2 to {MAX_CONCURRENCY} (each pair "
                f"plays its two tables at the same time) or auto, got {self.concurrency}"
            )
        if self.max_pairs is not None and self.max_pairs < 1:
            raise SprtConfigError(f"--max-pairs must be at least 1, got {self.max_pairs}")
        if self.pairs_per_table < 1:
            raise SprtConfigError(
                f"--pairs-per-table must be at least 1, got {self.pairs_per_table}"
            )

    @property
    def names(self) -> tuple[str, str]:
        """Entry names of NEW and OLD (their labels; marked when the labels are the same)."""
        new, old = self.new.label, self.old.label
        if new == old:
            return f"{new} (new)", f"{old} (old)"
        return new, old

    def identity(self) -> dict[str, Any]:
        """The settings a resumed run must share with the run that started the test.

        Keys are the command-line options they come from, so a refusal can name them.
        """
        return {
            "--bot NEW": _spec(self.new),
            "--bot OLD": _spec(self.old),
            "--elo0": self.settings.elo0,
            "--elo1": self.settings.elo1,
            "--alpha": self.settings.alpha,
            "--beta": self.settings.beta,
            "--rules/--set": self.rules.to_dict(),
            "--move-time": self.time_control.move_s,
            "--time-bank": self.time_control.bank_s,
            "--hard-cap": self.time_control.hard_cap_s,
            "--strikes": self.time_control.strikes_to_forfeit,
            "--seed": self.seed,
            # Only when not the default: tests started before the clock existed resume.
            **({"--clock": self.time_control.clock} if self.time_control.clock != "wall" else {}),
        }

    def identity_hash(self) -> str:
        """A hash of :meth:`identity`."""
        text = json.dumps(self.identity(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


def _spec(spec: BotSpec) -> dict[str, Any]:
    return {"kind": spec.kind, "target": spec.target, "env": [list(kv) for kv in spec.env]}


def deal_seed(seed: str, pair: int, secret: str | None = None) -> str:
    """The deal of pair ``pair``: keyed by the test's ``secret`` (:func:`arena.match.seeds.derive_seed`)."""
    return derive_seed(secret, "sprt", seed, pair)


def pair_cluster(pair: int) -> str:
    """Pair ``pair``'s cluster (its two games): also the stem of its game ids and log directories."""
    return f"d{pair:06d}"


def game_id(pair: int, table: int) -> str:
    """The id of pair ``pair``'s game at ``table`` (1: NEW is the first side)."""
    return f"{pair_cluster(pair)}-t{table}"


def changed_options(stored: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """The identity keys whose values differ (sorted as in ``current``)."""
    return [k for k in current if stored.get(k) != current[k]] + [
        k for k in stored if k not in current
    ]
