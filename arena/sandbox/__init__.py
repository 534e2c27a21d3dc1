"""Runners for bot seats: local processes (and Docker containers).  Nothing here knows Spades."""

from arena.sandbox.local import LocalProcess, parse_command

__all__ = ["LocalProcess", "parse_command"]
