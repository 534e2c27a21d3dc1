"""Load: 8 matches of random bots in containers at once on this machine, for a bounded time.

8 tables x 4 seats = 32 containers (96 MiB each), each table on its own
asyncio loop in a worker thread, exactly as the tournament runner plays
tables.  Every table is given far more games than it can finish; after
``BUDGET_S`` seconds all of them are cancelled (the way Ctrl-C stops a
tournament) and must clean up by themselves.

Reported (printed and written to ``$ARENA_LOAD_REPORT`` or
``tmp_path/load-report.json``): decisions per second, the referee's decision
latency (p50, p99, max), and how many moves were charged as timeouts to bots
whose own clock said they had answered in time
(``SeatStats.timeouts_in_time_by_bot_clock``).  The time control is the real
one (1 s a move, 5 s bank): a move may only be charged when the bot was late,
never because the referee was.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.match import GameOutcome, MatchSpec, TimeControl, game_seeds
from arena.referee.botspec import BotSpec
from arena.referee.local_match import play_seated
from arena.sandbox.build import build_image
from arena.sandbox.docker import LABEL, MATCH_LABEL, ContainerLimits
from docker_support import BASE_IMAGE, build_once, engine_or_skip
from arena_sdk.engine import resolve_ruleset

# Its own waits end by 300 s + 60 s of clean-up: pytest-timeout must not cut it first (a cut test
# leaves its tables' containers running for the rest of the run).
# alone: it loads the machine on purpose (32 containers) and measures the referee under that load, not under other tests.
pytestmark = [pytest.mark.docker, pytest.mark.timeout(600), pytest.mark.alone("loads the machine on purpose and measures it")]

REPO = Path(__file__).resolve().parents[2]
IMAGE = "arena-random:hostile"

TABLES = 8
BUDGET_S = float(os.environ.get("ARENA_LOAD_SECONDS", "30"))
GAMES_PER_TABLE = 10_000  # never reached: the budget stops every table
TIME_CONTROL = TimeControl(move_s=1.0, bank_s=5.0, hard_cap_s=10.0)
LIMITS = ContainerLimits(memory="96m", cpus=1.0, pids=64)
#: At most this long in all if some table has not ended a game by the budget (a loaded machine).
MAX_WAIT_S = 300.0
#: After the stop, how long the tables get to stop their containers and return.
CLEANUP_S = 60.0


@pytest.fixture(scope="module")
def docker_engine() -> Iterator[Any]:
    """The main engine with the base image (skip locally without one; fail under CI)."""
    client = engine_or_skip("the load test")
    yield client
    client.close()


@pytest.fixture(scope="module")
def random_image(docker_engine: Any) -> str:
    def build() -> None:
        build_image(REPO / "example_bots" / "random", tag=IMAGE, base_image=BASE_IMAGE, client=docker_engine)

    return build_once(docker_engine, IMAGE, build)  # the platform-fault tests' random bot too: built once per run


def ours(client: Any, prefix: str) -> list[dict[str, Any]]:
    """Containers (any state; the list's own fields) labelled with a match id under ``prefix``."""
    return [
        c for c in client.api.containers(all=True, filters={"label": [LABEL]})
        if (c.get("Labels") or {}).get(MATCH_LABEL, "").startswith(prefix)
    ]  # fmt: skip


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


class Table:
    """One match on its own loop in a worker thread, stopped by ``stop``."""

    def __init__(self, index: int, prefix: str, image: str, log_dir: Path, stop: threading.Event) -> None:
        rules = resolve_ruleset("pagat", {"max_hands": "2"})
        self.spec = MatchSpec(
            match_id=f"{prefix}m{index}",
            rules=rules,
            deal_seeds=tuple(game_seeds(f"load-{index}", GAMES_PER_TABLE)),
            time_control=TIME_CONTROL,
        )
        self.bots = [BotSpec("docker", image)] * 4
        self.log_dir = log_dir
        self.stop = stop
        self.games: list[tuple[float, GameOutcome]] = []
        self.result: str = "running"
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name=f"load-table-{index}", daemon=True)

    def _on_game(self, game: GameOutcome) -> None:
        self.games.append((time.monotonic(), game))

    def _run(self) -> None:
        try:
            self.result = asyncio.run(self._play())
        except BaseException as exc:  # reported by the test
            self.error = exc
            self.result = "error"

    async def _play(self) -> str:
        play = asyncio.ensure_future(
            play_seated(
                self.spec, self.bots, log_dir=self.log_dir, limits=LIMITS,
                start_timeout=90.0, on_game_end=self._on_game,
            )  # fmt: skip
        )
        while not play.done():
            if self.stop.is_set():
                play.cancel()  # host_match stops and removes the containers on the way out
                with contextlib.suppress(asyncio.CancelledError):
                    await play
                return "cancelled"
            await asyncio.wait({play}, timeout=0.1)
        play.result()
        return "finished"


def test_eight_container_matches_at_once_charge_no_timeout_to_a_bot_in_time(random_image, docker_engine, tmp_path):
    prefix = f"hostile-load-{os.getpid()}/"
    assert not ours(docker_engine, prefix)
    stop = threading.Event()
    tables = [Table(i, prefix, random_image, tmp_path / "logs" / f"m{i}", stop) for i in range(TABLES)]
    loadavg_before = os.getloadavg()
    started = time.monotonic()
    for table in tables:
        table.thread.start()
    try:
        # The budget, then on until every table has ended a game (a loaded machine starts 32
        # containers slowly): bounded by outcomes, with a cap so that nothing hangs.
        until = started + BUDGET_S
        while time.monotonic() < until or (
            time.monotonic() < started + MAX_WAIT_S
            and not all(t.games or not t.thread.is_alive() for t in tables)
        ):
            time.sleep(0.5)
    finally:
        stop.set()
        stopped = time.monotonic()
        for table in tables:
            table.thread.join(max(1.0, stopped + CLEANUP_S - time.monotonic()))
        cleanup_s = time.monotonic() - stopped
        left = [str((c.get("Names") or [c["Id"]])[0]) for c in ours(docker_engine, prefix)]
        for container in ours(docker_engine, prefix):  # do not leak them into other tests, but fail below
            with contextlib.suppress(Exception):
                docker_engine.api.remove_container(container["Id"], force=True)

    games = [(t, g) for table in tables for t, g in table.games]
    first_end = min((t for t, _ in games), default=stopped)
    latencies = [lat for _, g in games for lat in g.decision_latencies]
    decisions = sum(st.decisions for _, g in games for st in g.stats)
    steady = [g for t, g in games if t > first_end]
    steady_decisions = sum(st.decisions for g in steady for st in g.stats)
    in_time_charged = sum(st.timeouts_in_time_by_bot_clock for _, g in games for st in g.stats)
    timeouts = sum(st.timeouts for _, g in games for st in g.stats)
    endings: dict[str, int] = {}
    for _, g in games:
        endings[g.ending] = endings.get(g.ending, 0) + 1
    report = {
        "tables": TABLES,
        "containers": TABLES * 4,
        "memory_limit": LIMITS.memory,
        "cpus": os.cpu_count(),
        "time_control": {"move_s": TIME_CONTROL.move_s, "bank_s": TIME_CONTROL.bank_s},
        "budget_s": BUDGET_S,
        "games": len(games),
        "games_per_table": [len(t.games) for t in tables],
        "endings": endings,
        "decisions": decisions,
        "decisions_per_s": round(decisions / (stopped - started), 1),
        "decisions_per_s_after_first_game": round(steady_decisions / max(1e-9, stopped - first_end), 1),
        "first_game_end_s": round(first_end - started, 2),
        "latency_ms": {
            "p50": round(1000 * percentile(latencies, 0.50), 3),
            "p99": round(1000 * percentile(latencies, 0.99), 3),
            "p999": round(1000 * percentile(latencies, 0.999), 3),
            "max": round(1000 * max(latencies, default=float("nan")), 3),
            "mean": round(1000 * statistics.fmean(latencies), 3) if latencies else None,
        },
        "timeouts": timeouts,
        "timeouts_in_time_by_bot_clock": in_time_charged,
        "table_results": [t.result for t in tables],
        "errors": [repr(t.error) for t in tables if t.error is not None],
        "cleanup_s": round(cleanup_s, 2),
        "containers_left": left,
        "loadavg_before": loadavg_before,
        "loadavg_after": os.getloadavg(),
    }
    out = Path(os.environ.get("ARENA_LOAD_REPORT", tmp_path / "load-report.json"))
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nload report ({out}):\n{json.dumps(report, indent=2)}")

    assert all(not t.thread.is_alive() for t in tables), "a table did not stop within the cleanup time"
    assert report["errors"] == [], report["errors"]
    assert set(report["table_results"]) <= {"finished", "cancelled"}, report["table_results"]
    assert not left, f"containers left behind: {left}"
    assert all(len(t.games) >= 1 for t in tables), "every table played"
    voids = {e: n for e, n in endings.items() if e.startswith("void:")}
    assert not voids, f"the platform failed no game: {voids}"
    # A bot starved of CPU (a machine loaded beyond its 32 containers: another job's cgroup is
    # not held back by its nice value) may answer late by its own clock and forfeit on time,
    # and its seat's later games with it: that is the bot's lateness, charged rightly. What may
    # never happen is a charge the bot's own clock contradicts (below), or any other forfeit.
    others = {e: n for e, n in endings.items() if e.startswith("forfeit:") and e not in ("forfeit:timeout", "forfeit:disconnect")}
    assert not others, f"random bots never forfeit but on time: {others}"
    if endings.get("forfeit:timeout"):
        late_by_own_clock = sum(st.timeouts - st.timeouts_in_time_by_bot_clock for _, g in games for st in g.stats)
        assert late_by_own_clock > 0, f"games forfeited on time with no bot late by its own clock: {endings}"
    assert in_time_charged == 0, (
        f"{in_time_charged} moves were charged as timeouts to bots whose own clock said they answered "
        f"in time (the referee was late, not the bot); see {out}"
    )
