"""The uploads of a rehearsal, as archive bytes: honest bots of known strength, broken ones, hostile ones.

Honest bots are one ``bot.py`` on the bot base image: a built-in tier
(``arena_sdk.bots``: easy, medium) or the greedy or random example bot, that
plays a random legal decision with probability ``p`` (so strength falls as
``p`` rises, and the true order of the teams is known).  Broken bots play
like that until hand ``k`` and then crash, stall past the clock, or answer
illegally.  Hostile uploads are the platform's own hostile cases
(tests/hostile, tests/ladder): a build that never ends, a build log flood, an
archive nested thousands deep, an archive bomb, a seat that forks or spins,
a bot that outlives its socket.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import uuid

#: Kinds of upload a plan may hold (see :func:`archive_for`).
HONEST = "honest"
BROKEN_KINDS = ("crash", "slow", "illegal")
HOSTILE_KINDS = (
    "build-forever",
    "log-flood",
    "deep-archive",
    "archive-bomb",
    "fork",
    "spin",
    "outlive",
)

#: Bases an honest bot may play on, weakest first (their index is their rank in the true order).
BASES = ("random", "greedy", "easy", "medium")

_BASE_CODE = {
    "random": "from arena_sdk.testing import RandomBot as Base\n",
    "greedy": (
        "from arena_sdk import Bot, Card, Suit\n"
        "class Base(Bot):\n"
        "    def bid(self, view):\n"
        "        return max(1, min(13, sum(1 for c in view.hand if c.rank >= Card.CK.rank\n"
        "                                  or (c.suit == Suit.S and c.rank >= Card.CT.rank))))\n"
        "    def play(self, view):\n"
        "        legal = view.legal_cards()\n"
        "        best = view.winning_play()\n"
        "        if best is None:\n"
        "            return max(legal, key=lambda c: (c.suit != Suit.S, c.rank))\n"
        "        top = best[1]\n"
        "        win = [c for c in legal if (c.suit == top.suit and c > top) or (c.suit == Suit.S and top.suit != Suit.S)]\n"
        "        return min(win) if win else min(legal, key=lambda c: c.rank)\n"
    ),
    "easy": "from arena_sdk.bots import EasyBot as Base\n",
    "medium": "from arena_sdk.bots import MediumBot as Base\n",
}

#: What a broken bot does from hand ``k`` on, in its ``play``.
_BROKEN = {
    "crash": "raise SystemExit('rehearsal: crash on purpose')",
    "slow": "time.sleep(3600)",
    "illegal": "return next(c for c in view.hand if c not in view.legal_cards()) if len(view.legal_cards()) < len(view.hand) else view.legal_cards()[0]",
}

#: What a hostile seat does once it is seated (before its first decision).
_HOSTILE_SEAT = {
    # A fork bomb held in a child: the sandbox's pids limit stops it; the container's removal ends it.
    "fork": (
        "import subprocess\n"
        "subprocess.Popen([sys.executable, '-c', 'import os, time\\n"
        "for _ in range(100000):\\n    try:\\n        pid = os.fork()\\n    except OSError:\\n        break\\n"
        "    if pid == 0:\\n        time.sleep(3600); os._exit(0)\\ntime.sleep(3600)'])\n"
    ),
    # A thread that spins for ever: the CPU limit and the CPU clock charge it.
    "spin": "import threading\nthreading.Thread(target=lambda: [None for _ in iter(int, 1)], daemon=True).start()\n",
    # Ignores SIGTERM and keeps a child alive after the game: only the container's removal ends it.
    "outlive": (
        "import signal, subprocess\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "subprocess.Popen([sys.executable, '-c', 'import signal, time\\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
        "time.sleep(3600)'], start_new_session=True)\n"
    ),
}


def bot_source(
    base: str, p: float, *, broken: str | None = None, at_hand: int = 0, seat: str | None = None
) -> str:
    """``bot.py`` of a bot on ``base`` that plays at random with probability ``p`` (and breaks as told)."""
    if base not in _BASE_CODE:
        raise ValueError(f"unknown base {base!r}; one of {', '.join(BASES)}")
    lines = ["import random, sys, time\n", "from arena_sdk import run\n", _BASE_CODE[base]]
    lines.append(_HOSTILE_SEAT.get(seat or "", ""))
    lines.append(
        "class Rehearsed(Base):\n"
        f"    name = 'rehearsed-{base}'\n"
        "    hands = 0\n"
        "    def on_hand_end(self, summary):\n"
        "        self.hands += 1\n"
        "        super().on_hand_end(summary)\n"
        "    def on_game_start(self, info):\n"
        "        self.hands = 0\n"
        "        super().on_game_start(info)\n"
        "    def bid(self, view):\n"
        f"        if self.rng.random() < {p!r}:\n"
        "            return self.rng.randint(1, 4)\n"
        "        return super().bid(view)\n"
        "    def play(self, view):\n"
    )
    if broken is not None:
        lines.append(f"        if self.hands >= {at_hand}:\n            {_BROKEN[broken]}\n")
    lines.append(
        f"        if self.rng.random() < {p!r}:\n"
        "            return self.rng.choice(view.legal_cards())\n"
        "        return super().play(view)\n"
        "run(Rehearsed())\n"
    )
    return "".join(lines)


def tarball(files: dict[str, str | bytes]) -> bytes:
    """A ``.tar.gz`` of ``files`` (name -> content), regular files only."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def deep_archive(depth: int = 1500) -> bytes:
    """A gzip tarball holding one directory ``depth`` levels deep (the red team's 156-byte upload)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("/".join(["d"] * depth))
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(info)
    return buffer.getvalue()


def archive_bomb(unpacked: int = 256 * 1024 * 1024) -> bytes:
    """A small gzip that unpacks to ``unpacked`` bytes of zeros (over any sane ``max_bytes``)."""
    header = tarfile.TarInfo("bot.py")
    header.size, header.mode = unpacked, 0o644
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as out:
        out.write(header.tobuf(format=tarfile.GNU_FORMAT))
        chunk = b"\0" * (1024 * 1024)
        for _ in range(unpacked // len(chunk)):
            out.write(chunk)
        out.write(b"\0" * 1024)  # the end-of-archive blocks
    return raw.getvalue()


def _dockerfile(step: str) -> str:
    # A word of its own keeps the layer cache from finishing the step at once.
    return f"ARG BOT_BASE=arena-bot-base\nFROM ${{BOT_BASE}}\nRUN echo {uuid.uuid4().hex} && {step}\nCOPY bot.py /bot/\n"


def archive_for(kind: str, *, base: str = "random", p: float = 0.0, at_hand: int = 1) -> bytes:
    """The archive of one upload of ``kind`` (honest, a broken kind or a hostile kind)."""
    if kind == HONEST:
        return tarball({"bot.py": bot_source(base, p)})
    if kind in BROKEN_KINDS:
        return tarball({"bot.py": bot_source(base, p, broken=kind, at_hand=at_hand)})
    if kind in _HOSTILE_SEAT:
        return tarball({"bot.py": bot_source(base, p, seat=kind)})
    if kind == "build-forever":
        return tarball({"Dockerfile": _dockerfile("sleep 3600"), "bot.py": bot_source(base, p)})
    if (
        kind == "log-flood"
    ):  # 64 MiB of build output in a few seconds: the log the team reads is capped
        flood = "head -c 67108864 /dev/zero | tr '\\\\0' x | fold -w 200"
        return tarball({"Dockerfile": _dockerfile(flood), "bot.py": bot_source(base, p)})
    if kind == "deep-archive":
        return deep_archive()
    if kind == "archive-bomb":
        return archive_bomb()
    raise ValueError(f"unknown upload kind {kind!r}")


__all__ = [
    "BASES",
    "BROKEN_KINDS",
    "HONEST",
    "HOSTILE_KINDS",
    "archive_bomb",
    "archive_for",
    "bot_source",
    "deep_archive",
    "tarball",
]
