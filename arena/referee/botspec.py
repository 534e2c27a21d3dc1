"""Bot specifications on the command line: ``cmd:COMMAND`` or ``docker:IMAGE``."""

from __future__ import annotations

import dataclasses
import shlex

KINDS = ("cmd", "docker")


class BotSpecError(ValueError):
    """A bot specification that cannot be used; the message says why."""


@dataclasses.dataclass(frozen=True)
class BotSpec:
    """Where a bot comes from: a local command or a container image."""

    kind: str
    target: str
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment for the bot (tests and the hostile-bot suite use it)."""

    @property
    def label(self) -> str:
        """A short name for tables, until the bot tells its own."""
        if self.kind == "docker":
            return self.target
        words = shlex.split(self.target)
        script = next((w for w in reversed(words) if w.endswith(".py")), words[-1] if words else "")
        parts = script.replace("\\", "/").split("/")
        if parts[-1] == "bot.py" and len(parts) > 1:
            return parts[-2]
        return parts[-1].removesuffix(".py") or self.target


def parse_bot_spec(text: str) -> BotSpec:
    """Parse ``cmd:python bot.py`` or ``docker:IMAGE``."""
    kind, sep, target = text.partition(":")
    if not sep or kind not in KINDS:
        raise BotSpecError(
            f"bot {text!r} must start with cmd: (a local command, e.g. cmd:'python bot.py') "
            f"or docker: (an image, e.g. docker:mybot:1)"
        )
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
