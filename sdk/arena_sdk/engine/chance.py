"""Everything random in a game, as pure functions of the seed (docs/architecture.md section 3).

Every shuffle is derived from SHA-256 of ``"{seed}/deck/{hand}"`` and the
first dealer from ``"{seed}/first"``, so the same seed deals the same cards on
every machine and no library upgrade changes a recorded deal.  The compiled
core (``arena_sdk.engine._core``) computes the same numbers in C; the
engine's tests compare the two.
"""

from __future__ import annotations

import hashlib
import random

from arena_sdk.engine.cards import NUM_CARDS

__all__ = ["chance_int", "chance_rng", "chance_text", "shuffled_deck"]


def chance_text(seed: object, *tags: object) -> bytes:
    """The text naming one chance event: the seed and tags joined by ``/``."""
    return "/".join([str(seed), *map(str, tags)]).encode()


def chance_int(seed: object, *tags: object) -> int:
    """A 256-bit number for one chance event: SHA-256 of :func:`chance_text`.

    The same on every machine and Python version, and cheap (no generator
    to seed), which matters for simulations that deal thousands of hands.
    """
    return int.from_bytes(hashlib.sha256(chance_text(seed, *tags)).digest(), "big")


def chance_rng(seed: object, *tags: object) -> random.Random:
    """A generator for a chance event that needs more than 256 bits of randomness.

    Seeding ``random.Random`` with bytes hashes them with SHA-512, so the
    stream is the same on every machine and Python run.
    """
    return random.Random(chance_text(seed, *tags))


def _radix_chunks() -> tuple[tuple[int, tuple[int, ...]], ...]:
    """The radices 52, 51, ..., 2 grouped so that each group's product fits in 62 bits."""
    chunks: list[tuple[int, tuple[int, ...]]] = []
    radices: list[int] = []
    product = 1
    for radix in range(NUM_CARDS, 1, -1):
        if product * radix >= 1 << 62:
            chunks.append((product, tuple(radices)))
            radices, product = [], 1
        radices.append(radix)
        product *= radix
    chunks.append((product, tuple(radices)))
    return tuple(chunks)


_RADIX_CHUNKS = _radix_chunks()


def shuffled_deck(seed: object, hand: int) -> list[int]:
    """The deck order (deal order, or two-player stock) of hand ``hand``.

    A Fisher-Yates shuffle driven by the digits of one 256-bit number in
    mixed radix (52, 51, ..., 2).  52! is about 2**226, so every order is
    reachable and the bias is below 2**-30; written out here so that no
    library change can alter recorded deals.  The digits are the same as
    ``x, j = divmod(x, i + 1)`` for i = 51..1; they are taken a machine-word
    chunk at a time because one big-number division per chunk is much
    cheaper than one per digit.
    """
    deck = list(range(NUM_CARDS))
    x = chance_int(seed, "deck", hand)
    i = NUM_CARDS - 1
    for product, radices in _RADIX_CHUNKS:
        x, r = divmod(x, product)
        for radix in radices:
            j = r % radix
            r //= radix
            deck[i], deck[j] = deck[j], deck[i]
            i -= 1
    return deck
