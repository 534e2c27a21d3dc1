"""The root of the errors the arena reports to its user.

Every error a command can meet because of what the user gave it or what the
machine is doing (a bad file, a missing image, a store that belongs to another
run, an unreachable cluster, a Docker engine that does not answer) derives
from :class:`ArenaError`, so a command catches one class and prints its
message as one line.  Errors that mean a bug in the arena are not
``ArenaError`` and keep their traceback.

This module imports nothing of the arena: every layer may use it.
"""

from __future__ import annotations


class ArenaError(Exception):
    """An error the user can act on; its message is one line that says what and what to do."""


__all__ = ["ArenaError"]
