"""The bot of the off-turn CPU tests (issue 36): local (tests/referee) and in a container (tests/sandbox)."""

from __future__ import annotations

#: A bot that pauses PAUSE_S at each decision, and with SPIN_THREADS > 0 keeps that many
#: threads busy all along (hashlib on a large buffer releases the GIL: real cores, and its
#: own decisions are not held up).
SPIN_BOT = """\
import hashlib, os, threading, time
from arena_sdk import Bot, run

THREADS = int(os.environ.get("SPIN_THREADS", "0"))
PAUSE = float(os.environ.get("PAUSE_S", "0"))


def spin():
    block = b"x" * (1 << 20)
    while True:
        hashlib.sha256(block).digest()


class Spinner(Bot):
    name = os.environ.get("BOT_NAME", "spinner")
    spinning = False

    def think(self):
        if THREADS and not self.spinning:
            self.spinning = True
            for _ in range(THREADS):
                threading.Thread(target=spin, daemon=True).start()
        time.sleep(PAUSE)

    def draw(self, view):
        self.think()
        return True

    def bid(self, view):
        self.think()
        return 3

    def play(self, view):
        self.think()
        return view.legal_cards()[0]


run(Spinner())
"""
