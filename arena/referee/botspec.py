"""Bot specifications: ``cmd:COMMAND``, ``docker:IMAGE`` or ``builtin:TIER``.

``builtin:easy|medium|hard`` names one of the SDK's built-in bots
(:mod:`arena_sdk.bots`); it runs as a local process,
``python -m arena_sdk.bots TIER`` with this Python, and talks to the referee
over gRPC like any other bot.
"""

from __future__ import annotations

import dataclasses
import itertools
import shlex
import sys

from arena.errors import ArenaError

KINDS = ("cmd", "docker", "builtin")
#: The built-in tiers (kept in step with ``arena_sdk.bots.TIERS``; the arena never imports bots).
BUILTIN_TIERS = ("easy", "medium", "hard")


class BotSpecError(ArenaError, ValueError):
    """A bot specification that cannot be used; the message says why."""


@dataclasses.dataclass(frozen=True)
class BotSpec:
    """Where a bot comes from: a local command or a container image."""

    kind: str
    target: str
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment for the bot (tests and the hostile-bot suite use it)."""

    @property
    def command(self) -> str:
        """The local command that starts the bot (``cmd`` and ``builtin`` bots)."""
        if self.kind == "builtin":
            return shlex.join([sys.executable, "-m", "arena_sdk.bots", self.target])
        return self.target

    @property
    def local(self) -> bool:
        """True for a bot that runs as a local process (not in a container)."""
        return self.kind in ("cmd", "builtin")

    @property
    def label(self) -> str:
        """A short name for tables, until the bot tells its own."""
        if self.kind == "docker":
            return self.target
        if self.kind == "builtin":
            return f"builtin-{self.target}"
        words = shlex.split(self.target)  # parse_bot_spec checked that it splits
        if "-m" in words[:-1] and not any(w.endswith(".py") for w in words):
            # `python -m pkg.bots hard --worlds 12`: the module and the words before its options.
            at = words.index("-m") + 1
            module = words[at].rsplit(".", 1)[-1]
            return "-".join([module, *itertools.takewhile(lambda w: not w.startswith("-"), words[at + 1 :])])
        # The script: the last word ending in .py, else the last that looks like a path (not an
        # option or its number: `./run --depth 3` is "run"), else the program.
        script = next((w for w in reversed(words) if w.endswith(".py")), None) or next(
            (w for w in reversed(words) if _looks_like_path(w)), words[0] if words else ""
        )
        parts = script.replace("\\", "/").split("/")
        if parts[-1].startswith("bot.") and len(parts) > 1:  # example_bots/random/bot.py: "random"
            return parts[-2]
        return parts[-1].removesuffix(".py") or self.target


def _looks_like_path(word: str) -> bool:
    """A word of a command that names a file (``bot.js``, ``./run``), not an option or a number."""
    if word.startswith("-") or not ("/" in word or "." in word):
        return False
    try:
        float(word)
    except ValueError:
        return True
    return False


def parse_bot_spec(text: str) -> BotSpec:
    """Parse ``cmd:python bot.py``, ``docker:IMAGE`` or ``builtin:easy|medium|hard``."""
    kind, sep, target = text.partition(":")
    if not sep or kind not in KINDS:
        raise BotSpecError(
            f"bot {text!r} must start with cmd: (a local command, e.g. cmd:'python bot.py'), "
            f"docker: (an image, e.g. docker:mybot:1) or builtin: (builtin:easy, medium or hard)"
        )
    if kind == "builtin":
        tier = target.strip().lower()
        if tier not in BUILTIN_TIERS:
            raise BotSpecError(
                f"bot {text!r}: unknown built-in bot; choose builtin:{', builtin:'.join(BUILTIN_TIERS)}"
            )
        return BotSpec(kind, tier)
    if not target.strip():
        raise BotSpecError(f"bot {text!r} names no {'command' if kind == 'cmd' else 'image'}")
    if kind == "cmd":
        try:
            shlex.split(target)
        except ValueError as exc:
            raise BotSpecError(f"bot {text!r}: cannot split the command: {exc}") from None
    return BotSpec(kind, target.strip())


def seat_assignment(players: int, bots: int) -> list[int]:
    """Which bot (index) sits in each seat.

    Four players with two bots is team mode: bot 0 is N/S, bot 1 is E/W.
    Four bots fill N, E, S, W in order.  Two players take two bots.
    """
    if players == 4 and bots == 2:
        return [0, 1, 0, 1]
    if bots == players:
        return list(range(players))
    wanted = "2 (team mode) or 4" if players == 4 else "2"
    raise BotSpecError(f"a {players}-player ruleset takes {wanted} bots, got {bots}")
