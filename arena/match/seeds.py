"""Every seed the arena derives, in one place: deal seeds and the keys of bot seeds.

A run (a tournament, an sprt test, the ladder) keeps a random *secret* in its
results store, made when the store is made.  Each deal seed is an HMAC-SHA256,
keyed by that secret, of the deal's path (the run's seed, the two entries'
names, the deal's number ...), and each bot seed is keyed by another value
derived from it.  A bot sees only its own bot seed, so guessing the run's
seed (``seed = 31337``) tells it nothing: without the secret neither the deal
seeds nor other seats' bot seeds can be computed, and a bot seed says nothing
about the deal it was given with.

The secret is random unless ``ARENA_RUN_SECRET`` is set when the store is
made (to deal the same cards in two output directories: a reference run,
another machine, the test suite).

Without a secret (``arena match run --seed``, stores made before secrets) the
derivation is the plain SHA-256 of the same path: reproducible from the seed
alone, and guessable if the seed is (:func:`guessable`).  Paths are JSON, so
names holding ``/`` or quotes cannot make two paths one.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets

from arena.errors import ArenaError

#: Bits of randomness in a new run secret.
SECRET_BITS = 256
#: A seed with fewer bits than this (by a generous count) can be searched offline.
GUESSABLE_BELOW_BITS = 64


#: A new store's secret is this variable's value when it is set: two output directories (two
#: machines, a test and its reference) then deal the same cards for the same seed.  Keep it as
#: secret as the secret itself: whoever knows it can compute every deal.
SECRET_ENV = "ARENA_RUN_SECRET"
#: The least a secret from the environment must hold (characters), so that it cannot be searched.
MIN_SECRET_CHARS = 32


def new_secret() -> str:
    """A fresh run secret: random (256 bits, hex), or ``ARENA_RUN_SECRET`` when set."""
    given = os.environ.get(SECRET_ENV)
    if given:
        if len(given) < MIN_SECRET_CHARS:
            raise ArenaError(f"{SECRET_ENV} must hold at least {MIN_SECRET_CHARS} characters (random ones)")
        return given
    return secrets.token_hex(SECRET_BITS // 8)


def derive_seed(secret: str | None, *path: object) -> str:
    """The seed (32 hex digits) named by ``path``: keyed by the run's ``secret``, or public without one."""
    text = json.dumps(list(path)).encode()
    if secret is None:
        return hashlib.sha256(text).hexdigest()[:32]
    return hmac.new(secret.encode(), text, hashlib.sha256).hexdigest()[:32]


def bot_seed_key(secret: str | None) -> str:
    """The key of a run's bot seeds ("" without a secret: bot seeds then follow from the deal seeds)."""
    return "" if secret is None else derive_seed(secret, "bot-seeds")


def guessable(seed: str) -> bool:
    """Whether ``seed`` is small enough to search offline (a word, a date, a number).

    Counted generously: hex digits give 4 bits each, decimal digits 3.3, other
    characters 5; under :data:`GUESSABLE_BELOW_BITS` is guessable.
    """
    if re.fullmatch(r"[0-9a-fA-F]+", seed) and not seed.isdigit():
        bits = 4.0 * len(seed)
    elif seed.isdigit():
        bits = 3.32 * len(seed)
    else:
        bits = 5.0 * len(seed)
    return bits < GUESSABLE_BELOW_BITS


__all__ = ["SECRET_ENV", "bot_seed_key", "derive_seed", "guessable", "new_secret"]
