"""The site's visitors during a rehearsal: readers at a rate, and one slow client holding a half-sent request.

Readers open the leaderboard, a team's page, the latest games and a replay,
each visit timed.  A visit that finds the server down (a fault, a restart)
is counted apart: the p95 is the site's latency while it is up.  The slow
client opens a connection, sends half a request line and holds it; the
server must close it (``[server] header_timeout``) and keep answering the
readers meanwhile.  Loopback only, one connection at a time: bounded.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import socket
import threading
import time

import httpx


@dataclasses.dataclass
class Visits:
    """What the visitors saw, shared by their threads (append-only lists; readers copy them)."""

    latencies: list[tuple[float, str, float]] = dataclasses.field(
        default_factory=list
    )  # (at, page kind, seconds)
    errors: list[tuple[float, str, int]] = dataclasses.field(
        default_factory=list
    )  # (at, page kind, status) 4xx/5xx
    down: int = 0  # visits that found no server (faults, restarts)
    slow_held: list[float] = dataclasses.field(
        default_factory=list
    )  # seconds each half-sent request was held open
    slow_unclosed: int = 0  # half-sent requests the server had not closed when the client gave up

    def p95(self, kind: str | None = None) -> float | None:
        """The 95th percentile of the visits' latencies (of one page kind), seconds."""
        values = sorted(s for _, k, s in list(self.latencies) if kind is None or k == kind)
        if not values:
            return None
        return values[min(len(values) - 1, int(0.95 * len(values)))]


class Visitors:
    """``readers`` threads visiting at ``rate`` visits per second in all, and the slow client."""

    def __init__(self, url: str, teams: list[str], *, readers: int = 2, rate: float = 2.0, seed: int = 0,
                 slow_client: bool = True, slow_hold: float = 60.0) -> None:  # fmt: skip
        self.url = url
        self.teams = teams
        self.readers = readers
        self.rate = rate
        self.rng = random.Random(seed)
        self.slow_client = slow_client
        self.slow_hold = slow_hold
        self.visits = Visits()
        self.start = time.monotonic()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def begin(self) -> None:
        for n in range(self.readers):
            self._threads.append(threading.Thread(target=self._read, args=(random.Random(self.rng.random()),),
                                                  name=f"rehearse-reader-{n}", daemon=True))  # fmt: skip
        if self.slow_client:
            self._threads.append(
                threading.Thread(target=self._hold, name="rehearse-slow-client", daemon=True)
            )
        for thread in self._threads:
            thread.start()

    def end(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=self.slow_hold + 30)

    def _pages(self, rng: random.Random, games: list[str]) -> tuple[str, str]:
        roll = rng.random()
        if roll < 0.35:
            return "leaderboard", rng.choice(("/", "/api/leaderboard"))
        if roll < 0.65:
            return "team", f"/teams/{rng.choice(self.teams)}"
        if roll < 0.8 or not games:
            return "games", "/api/games?limit=20"
        return "replay", f"/games/{rng.choice(games)}"

    def _read(self, rng: random.Random) -> None:
        games: list[str] = []
        pause = self.readers / max(self.rate, 0.01)
        with httpx.Client(base_url=self.url, timeout=30) as client:
            while not self._stop.wait(rng.expovariate(1 / pause)):
                kind, path = self._pages(rng, games)
                began = time.monotonic()
                try:
                    response = client.get(path)
                except httpx.HTTPError:
                    self.visits.down += 1
                    continue
                took = time.monotonic() - began
                at = began - self.start
                if response.status_code >= 400:
                    self.visits.errors.append((at, kind, response.status_code))
                    continue
                self.visits.latencies.append((at, kind, took))
                if path.startswith("/api/games"):
                    games = [
                        g["game_id"] for g in response.json().get("games", []) if "game_id" in g
                    ][:20] or games

    def _hold(self) -> None:
        """Half a request line, held until the server closes the connection (or ``slow_hold`` passes)."""
        port = int(self.url.rsplit(":", 1)[1])
        while not self._stop.is_set():
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=5)
            except OSError:
                self._stop.wait(2)
                continue
            with contextlib.closing(conn):
                began = time.monotonic()
                with contextlib.suppress(OSError):
                    conn.sendall(b"GET /api/leaderboard HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                closed = False
                conn.settimeout(1.0)
                while not self._stop.is_set() and time.monotonic() - began < self.slow_hold:
                    try:
                        if conn.recv(4096) == b"":
                            closed = True
                            break
                    except TimeoutError:
                        continue
                    except OSError:
                        closed = True
                        break
                if closed:
                    self.visits.slow_held.append(time.monotonic() - began)
                elif not self._stop.is_set():
                    self.visits.slow_unclosed += 1


__all__ = ["Visitors", "Visits"]
