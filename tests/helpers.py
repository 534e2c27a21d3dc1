"""Shared test helpers: decks that deal chosen hands, scripted play, bots, tournament files, CLI refusals, waits."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from arena_sdk.engine import Card, GameState, parse_cards


def deck_dealing(hands: Mapping[int, Sequence[str]], dealer: int) -> list[int]:
    """A four-player deck order that deals ``hands`` (seat -> 13 card texts) from ``dealer``.

    Cards go one at a time clockwise starting left of the dealer, so deck
    position ``i`` goes to seat ``(dealer + 1 + i) % 4``.
    """
    parsed = {seat: parse_cards(cards) for seat, cards in hands.items()}
    assert sorted(len(c) for c in parsed.values()) == [13, 13, 13, 13]
    deck = [int(parsed[(dealer + 1 + i) % 4][i // 4]) for i in range(52)]
    assert sorted(deck) == list(range(52)), "the four hands must hold each card once"
    return deck


def suit_cards(suit: str, ranks: str = "23456789TJQKA") -> list[str]:
    """Card texts of ``suit`` for the given rank letters."""
    return [suit + r for r in ranks]


def play_cards(state: GameState, texts: Iterable[str]) -> None:
    """Apply a sequence of card plays given as text."""
    for card in parse_cards(texts):
        state.apply(card)


def hand_of(state: GameState, seat: int) -> list[Card]:
    """The cards ``seat`` holds now (through its own view)."""
    hand = state.view(seat).hand
    assert hand is not None
    return list(hand)


#: An SDK bot that bids 3 and plays its first legal card; on its second play it
#: burns ``{burn}`` seconds of CPU, on its third it sleeps as long (slow by the
#: clock, idle by the CPU).  ``BURNER_BOT.format(burn=0.3)`` is a bot.py.
BURNER_BOT = """\
import time
from arena_sdk import Bot, run

class Burner(Bot):
    name = "burner"
    plays = 0

    def bid(self, view):
        return 3

    def play(self, view):
        self.plays += 1
        if self.plays == 2:  # burn a known amount of CPU (its process, or its container)
            until = time.process_time() + {burn}
            while time.process_time() < until:
                pass
        elif self.plays == 3:  # wait without using the CPU
            time.sleep({burn})
        return view.legal_cards()[0]

run(Burner())
"""


#: A bot that burns CPU (``BURN_S``) and/or sleeps (``SLEEP_S``) on its plays listed in
#: ``ON_PLAYS`` ("all" for every play); the environment says which, so one script serves all.
CPU_BOT = """\
import os, time
from arena_sdk import Bot, run

BURN = float(os.environ.get("BURN_S", "0"))
SLEEP = float(os.environ.get("SLEEP_S", "0"))
ON = os.environ.get("ON_PLAYS", "")

class CpuBot(Bot):
    name = "cpu-test"
    plays = 0

    def bid(self, view):
        return 3

    def play(self, view):
        self.plays += 1
        if ON == "all" or str(self.plays) in ON.split(","):
            until = time.process_time() + BURN
            while time.process_time() < until:
                pass
            time.sleep(SLEEP)
        return view.legal_cards()[0]

run(CpuBot())
"""


@contextlib.contextmanager
def bot_image(docker: Any, source: Path, bot_py: str, tag: str, base_image: str) -> Iterator[str]:
    """``bot_py`` as an image ``tag``, built offline with ``arena bot build`` in ``source``; removed afterwards."""
    (source / "bot.py").write_text(bot_py)
    built = subprocess.run(
        [sys.executable, "-m", "arena", "bot", "build", str(source), "--tag", tag, "--base-image", base_image],
        check=False, capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    try:
        yield tag
    finally:
        docker.images.remove(tag, force=True)


def tournament_file(
    bot: str, *, name: str = "t", tournament: str = "", rules: str = "", time: str = "", limits: str = ""
) -> str:
    """A tournament file of two entries ``a`` and ``b`` playing ``bot``; each text goes in its section.

    ``tournament`` adds lines to ``[tournament]``; an empty ``rules``, ``time``
    or ``limits`` leaves that section out (the defaults).
    """
    sections = [f'[tournament]\nname = "{name}"\nseed = "1"\n{tournament}']
    sections += [f"[{key}]\n{text}" for key, text in (("rules", rules), ("time", time), ("limits", limits)) if text]
    sections += [f'[[entry]]\nname = "{entry}"\nbot = "{bot}"' for entry in ("a", "b")]
    return "\n\n".join(sections) + "\n"


def one_clean_line(result: Any, what: str) -> str:
    """Assert a CLI run was refused (exit 2) with one line on stderr that says ``what``; that line."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and what in lines[0], result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    return lines[0]


def wait_until(what: str, check: Callable[[], Any], timeout: float = 600, poll: float = 0.5) -> Any:
    """Poll ``check`` until it returns something true (returned); fail naming ``what`` after ``timeout`` s.

    The timeout only keeps a broken run from hanging; tests bound by outcomes, so it is generous.
    """
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(poll)
    return found
