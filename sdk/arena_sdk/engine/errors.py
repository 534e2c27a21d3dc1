"""The engine's error types.

Everything the engine refuses is a :class:`RulesError`.  Callers that need to
tell a broken message from a well-formed but wrong move (the referee strikes
both, but records them differently) catch the two subclasses.
"""

from __future__ import annotations


class RulesError(ValueError):
    """Base of every error the rules engine raises on bad input."""


class MalformedInputError(RulesError):
    """Input that cannot mean anything: bad card text, unknown option, wrong type."""


class IllegalActionError(RulesError):
    """A well-formed action that the rules do not allow now."""
