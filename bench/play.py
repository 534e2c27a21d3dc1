#!/usr/bin/env python
"""``arena play``: from a real click on the page to the page showing the person's next decision.

What is measured
----------------
1. ``page``: a real ``arena play`` (``python -m arena play``) on 127.0.0.1, and
   Debian's Chromium (Playwright, headless) in the person's seat, clicking as a
   person does: Playwright's mouse click on the element (the browser's own
   input events, not a script's ``click()``), a bid of 3, then the first legal
   card each time.  For every decision, in the page: from the click's
   ``pointerdown`` (its event time) to the end of the rendering that opens the
   *next* decision, which holds the cards the bots played in between.  The
   path: the page's WebSocket message, the server's check, the seat adapter's
   gRPC answer to the referee, the three bots' decisions over their sockets,
   the next request to the seat, the pushed state, the page's rendering.  The
   page lays the cards down at its "instant" speed (``?speed=instant``): the
   other speeds wait on purpose.
2. ``harness``: the same game through the SDK's in-process harness
   (``arena_sdk.testing.play_game``, same rules and seed, the same bots): from
   the person's seat's answer to its next decision.  No network, no processes,
   no page: the engine and the bots' own work, the floor under (1).

Both are run with bots that answer at once (``bench/bots/instant.py``: bid 3,
the first legal card) and with Hard (``builtin:hard``, its 0.35 s a decision),
and, with ``--load N``, beside N processes that spin on the CPU (the machine
loaded on purpose).  The 1-minute load average is printed before and after.

Usage: ``python bench/play.py [--hands 4] [--bots instant,hard] [--load 0]``.
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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arena_sdk import Bot, Card, View
from arena_sdk.bots import HardBot
from arena_sdk.testing import play_game

REPO = Path(__file__).resolve().parents[1]
INSTANT = f"cmd:{sys.executable} {REPO / 'bench' / 'bots' / 'instant.py'}"
BOTS = {"instant": INSTANT, "hard": "builtin:hard"}
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--no-first-run"]  # fmt: skip
SEED = "bench-play-5d1c7a9e03f24b86"
#: In the page, from its first script: the time from each click's pointerdown to the rendering that
#: opens the next decision (a new request id on <body>).
TIMER = """
window.__latencies = [];
let clickedAt = null, askedBefore = null;
document.addEventListener('pointerdown', (e) => { clickedAt = e.timeStamp; askedBefore = document.body.dataset.request; }, true);
document.addEventListener('arena:rendered', () => {
  const now = document.body.dataset.request;
  if (clickedAt !== null && now && now !== askedBefore) { window.__latencies.push(performance.now() - clickedAt); clickedAt = null; }
});
"""
ACTIONABLE = "button.card.legal, .bids button.action, #game-over h2"


def load_average() -> float:
    return os.getloadavg()[0]


@contextmanager
def spinning(n: int) -> Iterator[None]:
    """``n`` processes that keep a CPU busy while inside (each ended by its pid after)."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in spinners:
            p.kill()
            p.wait()


def page_samples(hands: int, bots: str) -> list[float]:
    """Milliseconds from a click to the next decision on the page, over one game of ``hands`` hands."""
    from playwright.sync_api import sync_playwright

    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-play-{os.getpid()}"
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "play", "--port", "0", "--out", str(out), "--seed", SEED, "--no-stats",
         "--set", f"max_hands={hands}", "--set", "target=10000", "--partner", bots, "--opponent", bots,
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
    os.environ.setdefault("DBUS_SESSION_BUS_ADDRESS", "disabled:")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.add_init_script(TIMER)
            page.goto(url + "?speed=instant")
            while True:
                page.wait_for_selector(ACTIONABLE, timeout=120_000)
                if page.locator("#game-over h2").count():
                    break
                asked = page.get_attribute("body", "data-request")
                card = page.locator("button.card.legal")
                (card.first if card.count() else page.locator('.bids button.action[data-action="3"]')).click()
                page.wait_for_selector(f'body:not([data-request="{asked}"])', state="attached", timeout=120_000)
            samples = list(page.evaluate("window.__latencies"))
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


def harness_samples(hands: int, bots: str, repeats: int) -> list[float]:
    """The same game through the SDK harness: the person's seat's answer-to-next-ask gaps."""
    other = Instant if bots == "instant" else HardBot
    Timed.gaps = []
    for _ in range(repeats):
        Timed._answered = None
        play_game([other, other, Timed, other], "pagat", seed=SEED, overrides={"target": 10000}, max_hands=hands)
    return Timed.gaps


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=4, help="hands in the game")
    parser.add_argument("--bots", default="instant,hard", help="the other seats: instant, hard, or both")
    parser.add_argument("--load", type=int, default=0, help="processes spinning on the CPU meanwhile")
    args = parser.parse_args()
    kinds = [k.strip() for k in args.bots.split(",") if k.strip()]
    if not kinds or any(k not in BOTS for k in kinds):
        raise SystemExit(f"--bots takes {', '.join(BOTS)} (comma separated)")
    print(f"{os.cpu_count()} cores; {args.load} spinning processes; 1-minute load average before: {load_average():.1f}")
    print(f"{'bots':8} {'page p50':>9} {'page p95':>9} {'harness p50':>12} {'harness p95':>12} {'page/harness p50':>17} {'n':>4}")
    with spinning(args.load):
        time.sleep(2 if args.load else 0)
        for kind in kinds:
            page = page_samples(args.hands, BOTS[kind])
            harness = harness_samples(args.hands, kind, 10 if kind == "instant" else 1)
            ratio = pct(page, 50) / pct(harness, 50)
            print(f"{kind:8} {pct(page, 50):9.1f} {pct(page, 95):9.1f} {pct(harness, 50):12.2f} "
                  f"{pct(harness, 95):12.2f} {ratio:16.0f}x {len(page):4}")  # fmt: skip
            print(f"         1-minute load average now: {load_average():.1f}", flush=True)


if __name__ == "__main__":
    main()
