"""Before a tournament's games: each entry's image is started once, and one that cannot start is disqualified.

An image whose own configuration stops every container of it from starting
(``VOLUME /sys/x``, a missing entrypoint: :mod:`arena.sandbox.preflight`)
would forfeit every game it is seated in.  It is found here, once, and the
entry is disqualified at once (the store's ``disqualified`` table, with the
daemon's reason): each of its games is then stored as a forfeit charged to it
(:func:`arena.tournament.disqualify.forfeit_unplayed`) and the other entries'
games are played as scheduled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from arena.results.store import ResultsStore
from arena.sandbox.docker import ContainerLimits, DockerUnavailable, ImageNotFound, SeatStartError
from arena.sandbox.preflight import preflight_images


def preflight_entries(
    store: ResultsStore,
    images: Mapping[str, str | None],
    limits: ContainerLimits,
    notice: Callable[[str], None],
) -> dict[str, str]:
    """Start each entry's image once; disqualify (and ``notice``) each that cannot start; returns them.

    ``images``: image IDs by entry (None: a local command, not checked).
    Entries already disqualified are not started again (a resumed run).  A
    fault of the platform says nothing about an image: it is noticed and the
    games go ahead, where a seat that cannot start is charged a crash and a
    platform fault voids the game, as ever.
    """
    skip = store.disqualified()
    try:
        refused = preflight_images(
            {name: image for name, image in images.items() if name not in skip}, limits=limits, run=store.run_id
        )
    except (SeatStartError, DockerUnavailable, ImageNotFound) as exc:  # ImageNotFound: removed since resolved
        notice(f"could not check that each image starts ({exc}); the games go ahead")
        return {}
    for name, why in refused.items():
        store.disqualify(name, why)
        notice(f"entry {name} is disqualified, each of its games a forfeit: {why}")
    return refused


__all__ = ["preflight_entries"]
