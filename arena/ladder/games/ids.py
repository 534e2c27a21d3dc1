"""The ladder's game ids: a pair's cluster ``L<pair, 7 digits>`` and its two games ``-t1`` and ``-t2``.

One per table of a duplicate pair.  The site answers 404 for anything not of
this form (:data:`GAME_ID`) before it touches a store.
"""

from __future__ import annotations

import re

#: The ids of the ladder's games (:func:`game_ids`): anything else is a 404.
GAME_ID = re.compile(r"L\d{7}-t[12]")

#: The cluster of the ladder's pair ``seq`` (its two games share it), as a format the ledger fills in.
CLUSTER_FORMAT = "L{seq:07d}"


def pair_cluster(seq: int) -> str:
    """The cluster of the ladder's pair ``seq``: ``L`` and the pair's number in 7 digits."""
    return CLUSTER_FORMAT.format(seq=seq)


def game_ids(seq: int) -> tuple[str, str]:
    """The two games (tables 1 and 2) of the ladder's pair ``seq``."""
    return f"{pair_cluster(seq)}-t1", f"{pair_cluster(seq)}-t2"


def pair_of(cluster: str) -> int:
    """The pair number of a cluster ``L0000042`` (what :func:`pair_cluster` made)."""
    return int(cluster.removeprefix("L"))


__all__ = ["CLUSTER_FORMAT", "GAME_ID", "game_ids", "pair_cluster", "pair_of"]
