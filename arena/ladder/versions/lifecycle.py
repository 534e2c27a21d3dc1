"""A version's way through the ladder, as a table of allowed moves (pure: no I/O).

Every status write goes through :meth:`arena.ladder.versions.store.VersionTables.transition`,
a compare-and-set against this table: a move the table does not allow raises
:class:`IllegalTransition` and writes nothing.  So a writer that acts on an old
view cannot undo another's decision: a build that finishes after the organiser
disabled its version finds it ``disabled`` (no move to ``validating`` or
``active`` from there) and its result is dropped.

::

    uploading -> queued -> building -> validating -> active -> retired
        |          |  ^        |           |           |   \\      |
        v          |  '--------+-----------'           |    `-> suspended
      failed <-----+-----------+-----------'           v
                   any status but failed -------->  disabled

- ``queued`` again: a build cut short (the server stopped, kill -9) is built again; a ``failed``
  version is queued again only by the organiser (``arena ladder admin revalidate``), e.g. after
  the platform failed its validation.
- ``suspended``: an active version that lost its first games by crash or forfeit;
  the team's previous good version is restored (``retired -> active``).
- ``disabled`` is the organiser's, and final (a version disabled by mistake is
  submitted again).
"""

from __future__ import annotations

from arena.errors import ArenaError

UPLOADING, QUEUED, BUILDING, VALIDATING, ACTIVE, RETIRED, FAILED, DISABLED, SUSPENDED = (
    "uploading", "queued", "building", "validating", "active", "retired", "failed", "disabled", "suspended",
)  # fmt: skip

#: Every status a version can have.
STATUSES = (UPLOADING, QUEUED, BUILDING, VALIDATING, ACTIVE, RETIRED, FAILED, DISABLED, SUSPENDED)

#: The moves allowed from each status.
MOVES: dict[str, frozenset[str]] = {
    UPLOADING: frozenset({QUEUED, FAILED, DISABLED}),
    QUEUED: frozenset({BUILDING, FAILED, DISABLED}),
    BUILDING: frozenset({VALIDATING, QUEUED, FAILED, DISABLED}),
    VALIDATING: frozenset({ACTIVE, QUEUED, FAILED, DISABLED}),
    ACTIVE: frozenset({RETIRED, SUSPENDED, DISABLED}),
    RETIRED: frozenset({ACTIVE, DISABLED}),
    SUSPENDED: frozenset({DISABLED}),
    FAILED: frozenset({QUEUED}),  # the organiser's revalidation only (VersionTables.revalidate)
    DISABLED: frozenset(),
}

#: Statuses whose version has an image that can play (or could again).
PLAYABLE = frozenset({ACTIVE, RETIRED})
#: Statuses the builder owns: a server that stopped left these half-done.
IN_BUILD = frozenset({BUILDING, VALIDATING})


class IllegalTransition(ArenaError):
    """A status move the lifecycle does not allow (the version moved meanwhile): nothing was written."""

    def __init__(self, entry: str, current: str, wanted: str) -> None:
        super().__init__(f"version {entry} is {current}: it cannot become {wanted}")
        self.entry = entry
        self.current = current
        self.wanted = wanted


def allowed(current: str, wanted: str) -> bool:
    """Whether a version may move from ``current`` to ``wanted``."""
    return wanted in MOVES.get(current, frozenset())


def check(entry: str, current: str, wanted: str) -> None:
    """Raise :class:`IllegalTransition` unless ``current -> wanted`` is allowed."""
    if not allowed(current, wanted):
        raise IllegalTransition(entry, current, wanted)


__all__ = [
    "ACTIVE", "BUILDING", "DISABLED", "FAILED", "IN_BUILD", "IllegalTransition", "MOVES", "PLAYABLE", "QUEUED",
    "RETIRED", "STATUSES", "SUSPENDED", "UPLOADING", "VALIDATING", "allowed", "check",
]  # fmt: skip
