#!/usr/bin/env python
"""``arena play``: from a click on the page to the page showing the bots' next cards.

What is measured
----------------
1. ``page``: a real ``arena play`` (``python -m arena play``) on 127.0.0.1 with
   instant bots at the other three seats (``bench/bots/instant.py``: bid 3, the
   first legal card), and Debian's Chromium (Playwright, headless) in the
   person's seat playing the same way (bid 3, the first legal card).  For every
   decision, in the page: from the click (``performance.now()`` just before
   ``click()``) to the end of the page's rendering of the *next* decision, which
   holds the cards the bots played in between.  The path: the page's WebSocket
   message, the server's check, the seat adapter's gRPC answer to the referee,
   the three bots' decisions over their sockets, the next request to the seat,
   the pushed table state, the page's rendering.
2. ``harness``: the same decisions through the SDK's in-process harness
   (``arena_sdk.testing.play_game``, same rules and seed, the same bots in the
   same seats): from the person's bot returning its answer to its being asked
   the next decision.  No network, no processes, no page: the engine and the
   bots' own work, the floor under (1).

Printed: p50 and p95 of each, and page / harness.  Goal: page p95 under 100 ms.
Usage: ``python bench/play.py [--hands 6] [--games 2]`` (about a minute).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from arena_sdk import Bot, Card, View
from arena_sdk.testing import play_game

REPO = Path(__file__).resolve().parents[1]
INSTANT = f"cmd:{sys.executable} {REPO / 'bench' / 'bots' / 'instant.py'}"
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]  # fmt: skip
SEED = "bench-play-5d1c7a9e03f24b86"

#: In the page: click the person's move (bid 3, or the first legal card) and resolve with the
#: milliseconds until the next decision has been rendered (-1: the game ended instead).
MEASURE = """
() => new Promise((resolve) => {
  const before = document.body.dataset.request;
  const card = document.querySelector("button.card.legal");
  const bids = document.querySelectorAll(".bids button.action");
  const target = card || bids[3];
  if (!target || !before) { resolve(null); return; }
  const done = () => {
    const now = document.body.dataset.request;
    if (now && now !== before) { document.removeEventListener("arena:rendered", done); resolve(performance.now() - t0); }
    else if (document.querySelector("#game-over h2") && !now) { document.removeEventListener("arena:rendered", done); resolve(-1); }
  };
  document.addEventListener("arena:rendered", done);
  const t0 = performance.now();
  target.click();
})
"""


def page_samples(hands: int) -> list[float]:
    """Milliseconds from click to the next decision on the page, over one game of ``hands`` hands."""
    from playwright.sync_api import sync_playwright

    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-play-{os.getpid()}"
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "play", "--port", "0", "--out", str(out), "--seed", SEED,
         "--set", f"max_hands={hands}", "--set", "target=10000", "--partner", INSTANT, "--opponent", INSTANT,
         "--exit-when-done"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "COLUMNS": "400"},
    )  # fmt: skip
    assert process.stdout is not None
    url = None
    while url is None:
        line = process.stdout.readline()
        if not line:
            raise SystemExit("arena play printed no address")
        found = re.search(r"(http://127\.0\.0\.1:\d+/t/\S+)", line)
        url = found[1] if found else None
    samples: list[float] = []
    os.environ.setdefault("DBUS_SESSION_BUS_ADDRESS", "disabled:")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(url)
            while True:
                page.wait_for_selector("button.card.legal, .bids button.action, #game-over h2", timeout=60_000)
                if page.locator("#game-over h2").count():
                    break
                ms = page.evaluate(MEASURE)
                if ms is None:
                    time.sleep(0.01)
                    continue
                if ms < 0:
                    break
                samples.append(ms)
            browser.close()
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            process.wait(30)
    return samples


class Instant(Bot):
    """bench/bots/instant.py's decisions, in-process."""

    name = "bench-instant"

    def bid(self, view: View) -> int:
        return 3

    def play(self, view: View) -> Card:
        return view.legal[0]


class Timed(Instant):
    """The person's seat in the harness: the time from its answer to its next decision."""

    gaps: list[float] = []
    _answered: float | None = None

    def _mark(self) -> None:
        now = time.perf_counter()
        if Timed._answered is not None:
            Timed.gaps.append((now - Timed._answered) * 1000)

    def bid(self, view: View) -> int:
        self._mark()
        Timed._answered = time.perf_counter()
        return 3

    def play(self, view: View) -> Card:
        self._mark()
        Timed._answered = time.perf_counter()
        return view.legal[0]


def harness_samples(hands: int, repeats: int) -> list[float]:
    """The same game through the SDK harness, ``repeats`` times: the person's seat's answer-to-next-ask gaps."""
    Timed.gaps = []
    for _ in range(repeats):
        Timed._answered = None
        play_game([Instant, Instant, Timed, Instant], "pagat", seed=SEED, overrides={"target": 10000}, max_hands=hands)
    return Timed.gaps


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=6, help="hands per game")
    parser.add_argument("--games", type=int, default=2, help="games (each a fresh arena play and page)")
    args = parser.parse_args()
    page: list[float] = []
    for _ in range(args.games):
        page += page_samples(args.hands)
    harness = harness_samples(args.hands, 20 * args.games)
    print(f"decisions measured: page {len(page)}, harness {len(harness)}")
    print(f"{'':10} {'p50 ms':>9} {'p95 ms':>9}")
    for name, values in (("page", page), ("harness", harness)):
        print(f"{name:10} {pct(values, 50):9.2f} {pct(values, 95):9.2f}")
    print(f"page/harness: p50 {pct(page, 50) / pct(harness, 50):.0f}x, p95 {pct(page, 95) / pct(harness, 95):.0f}x")
    verdict = "met" if pct(page, 95) < 100 else "NOT met"
    print(f"goal (page p95 < 100 ms): {verdict}")


if __name__ == "__main__":
    main()
