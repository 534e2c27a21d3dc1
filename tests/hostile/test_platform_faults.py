"""Platform faults: the runner killed, the Docker daemon restarted, the output disk full.

A fault of the platform must never be scored against a bot: the games it
touches are void and played again, nothing is lost or counted twice, no
container is left behind; a fault the platform cannot get round (a full
disk) stops the run with one clear line and a consistent store that resumes.

The daemon test runs a Docker daemon of its own (own data root, exec root,
socket and pid file; no live restore; no bridge, no iptables) and stops it by
its recorded process id, so the machine's engine is never touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.match import GameOutcome, MatchSpec, TimeControl, game_seeds
from arena.referee.botspec import BotSpec
from arena.referee.host import command_launcher, host_match
from arena.referee.local_match import MatchConfig, run_match
from arena.referee.server import RefereeServer
from arena.rehearse.docker_host import own_engine
from arena.rehearse.own_faults import DaemonError, OwnDaemon, small_filesystem
from arena.sandbox.build import DEFAULT_DOCKERFILE, build_image
from arena.sandbox.docker import LABEL, MATCH_LABEL, ContainerLimits, DockerProcess
from docker_support import BASE_IMAGE, build_once, engine_or_skip
from arena.tournament import load_config, schedule
from arena.results.store import DiskFull, StoredGame, ResultsStore
from arena_sdk.engine import resolve_ruleset

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "example_bots"
RANDOM_IMAGE = "arena-random:hostile"
RANDOM_IMAGE_B = "arena-random:hostile-b"
FAULT_IMAGE = "arena-faultbot:hostile"
TIME_CONTROL = TimeControl(move_s=1.0, bank_s=5.0, hard_cap_s=10.0)
ME = os.getpid()

# ---------------------------------------------------------------------- helpers

#: The random example bot with a behaviour chosen by ARENA_FAULTBOT:
#: ``exit-on-term`` (default in the image): plays, and exits at once on SIGTERM
#: (as a bot under an init or with a handler does; a bare Python PID 1 ignores TERM);
#: ``exit137-after-N``: exits with status 137 (what a SIGKILL gives) at its N-th card;
#: ``idle``: never connects, ignores TERM (PID 1 without a handler), sleeps.
FAULTBOT_MAIN = '''

import os as _os
import signal as _signal
import time as _time

BEHAVIOUR = _os.environ.get("ARENA_FAULTBOT", "")


class FaultBot(RandomBot):
    name = "faultbot"
    cards = 0

    def play(self, view):
        FaultBot.cards += 1
        if BEHAVIOUR.startswith("exit137-after-") and FaultBot.cards >= int(BEHAVIOUR.rsplit("-", 1)[1]):
            _os._exit(137)
        return super().play(view)


if __name__ == "__main__":
    if BEHAVIOUR == "idle":
        while True:
            _time.sleep(3600)
    if BEHAVIOUR == "exit-on-term":
        _signal.signal(_signal.SIGTERM, lambda *_: _os._exit(143))
    run(FaultBot())
'''


def faultbot_source(root: Path) -> Path:
    """The fault bot's directory (the default Dockerfile, its ENV added)."""
    source = root / "faultbot"
    source.mkdir(parents=True, exist_ok=True)
    random_bot = (BOTS / "random" / "bot.py").read_text()
    main = 'if __name__ == "__main__":\n    run(RandomBot())\n'
    assert main in random_bot
    (source / "bot.py").write_text(random_bot.replace(main, "") + FAULTBOT_MAIN)
    (source / "Dockerfile").write_text(DEFAULT_DOCKERFILE + "ENV ARENA_FAULTBOT=exit-on-term\n")
    return source


def root_or_skip() -> None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        message = "needs root (mount, dockerd)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def labelled(client: Any, prefix: str) -> list[dict[str, Any]]:
    """Containers (any state; the list's own fields) of matches whose id starts with ``prefix``."""
    return [
        c for c in client.api.containers(all=True, filters={"label": [LABEL]})
        if (c.get("Labels") or {}).get(MATCH_LABEL, "").startswith(prefix)
    ]  # fmt: skip


def names(containers: list[dict[str, Any]]) -> list[str]:
    return [str((c.get("Names") or [c["Id"][:12]])[0]) for c in containers]


def remove_all(client: Any, prefix: str) -> None:
    for container in labelled(client, prefix):
        with contextlib.suppress(Exception):
            client.api.remove_container(container["Id"], force=True)


def arena_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena", *args]


def arena_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "COLUMNS": "200", **extra}


def run_arena(cwd: Path, *args: str, timeout: float = 180, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        arena_argv(*args), cwd=cwd, capture_output=True, text=True, timeout=timeout, env=arena_env(**env)
    )


RESULT_COLUMNS = "game_id, side0, side1, ending, winner, score0, score1, hands"


def results(db: Path) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute(f"SELECT {RESULT_COLUMNS} FROM games ORDER BY game_id").fetchall()


def count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        return len(results(db))
    except sqlite3.Error:
        return 0


def voids(db: Path) -> list[tuple[str, int, str]]:
    try:
        with contextlib.closing(sqlite3.connect(db)) as conn:
            return conn.execute("SELECT game_id, attempt, reason FROM voids ORDER BY game_id, attempt").fetchall()
    except sqlite3.Error:
        return []


def integrity(db: Path) -> str:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def wait_for(condition: Callable[[], bool], timeout: float, what: str, poll: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(poll)


def tournament_text(name: str, entries: dict[str, str], *, deals: int, concurrency: int, max_hands: int) -> str:
    lines = [
        "[tournament]",
        f'name = "{name}"',
        'seed = "hostile-platform-faults"',
        f"deals_per_pairing = {deals}",
        f"concurrency = {concurrency}",
        'output = "out"',
        "start_timeout = 60",
        "",
        "[rules]",
        'preset = "pagat"',
        f"set = {{ max_hands = {max_hands} }}",
        "",
        "[time]",
        f"move = {TIME_CONTROL.move_s}",
        f"bank = {TIME_CONTROL.bank_s}",
        "",
        "[limits]",
        'memory = "128m"',
        "",
        "[faults]",
        "void_retries = 2",
    ]
    for entry, bot in entries.items():
        lines += ["", "[[entry]]", f'name = "{entry}"', f'bot = "{bot}"']
    return "\n".join(lines) + "\n"


def check_records(out: Path, game_ids: set[str]) -> None:
    """Every stored game has a complete record; no half-written record anywhere."""
    records = out / "records"
    assert not list(out.rglob("*.tmp")), "a half-written file was left"
    for path in records.glob("*.json"):
        json.loads(path.read_text())  # complete JSON, stored or not
    for game_id in game_ids:
        record = json.loads((records / f"{game_id}.json").read_text())
        assert record["game_id"] == game_id


def stored_ids(db: Path) -> set[str]:
    return {r[0] for r in results(db)}


# ---------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def engine() -> Iterator[Any]:
    client = engine_or_skip()
    yield client
    client.close()


@pytest.fixture(scope="module")
def fault_images(engine: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The random bot under two tags and the fault bot, on the machine's engine."""
    build_once(engine, RANDOM_IMAGE, lambda: build_image(BOTS / "random", tag=RANDOM_IMAGE, base_image=BASE_IMAGE, client=engine))
    build_image(BOTS / "random", tag=RANDOM_IMAGE_B, base_image=BASE_IMAGE, client=engine)
    source = faultbot_source(tmp_path_factory.mktemp("faultbot"))
    build_image(source, tag=FAULT_IMAGE, base_image=BASE_IMAGE, client=engine)
    return {"random": RANDOM_IMAGE, "random_b": RANDOM_IMAGE_B, "fault": FAULT_IMAGE}


@pytest.fixture(scope="module")
def own_daemon(engine: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnDaemon]:
    """A daemon of our own (arena.rehearse.docker_host: the rehearsal's) with the base image, the random bot and the fault bot."""
    root_or_skip()
    if shutil.which("dockerd") is None:
        pytest.fail("dockerd is not installed (scripts/docker-setup.sh)")
    with own_engine(BASE_IMAGE) as daemon:
        client = daemon.client()
        try:
            build_image(BOTS / "random", tag=RANDOM_IMAGE, base_image=BASE_IMAGE, client=client)
            build_image(faultbot_source(tmp_path_factory.mktemp("faultbot-own")), tag=FAULT_IMAGE,
                        base_image=BASE_IMAGE, client=client)  # fmt: skip
        finally:
            client.close()
        yield daemon


# ---------------------------------------------------------------------- a. the runner SIGKILLed


def test_sigkilled_docker_tournament_resumes_to_the_uninterrupted_results(engine, fault_images, tmp_path):
    entries = {"alpha": f"docker:{fault_images['random']}", "beta": f"docker:{fault_images['random_b']}"}
    total = 10

    straight = tmp_path / "straight"
    straight.mkdir()
    name_straight = f"hks{ME}"
    path = straight / "t.toml"
    path.write_text(tournament_text(name_straight, entries, deals=5, concurrency=2, max_hands=4))
    done = run_arena(straight, "tournament", "run", str(path), "--json", "--no-show")
    assert done.returncode == 0, done.stderr
    expected = results(straight / "out" / "results.sqlite")
    assert len(expected) == total and not any(r[3].startswith("forfeit:") for r in expected)
    assert not labelled(engine, f"{name_straight}/")

    resumed = tmp_path / "resumed"
    resumed.mkdir()
    name = f"hk{ME}"
    prefix = f"{name}/"
    path = resumed / "t.toml"
    path.write_text(tournament_text(name, entries, deals=5, concurrency=2, max_hands=4))
    db = resumed / "out" / "results.sqlite"
    proc = subprocess.Popen(
        arena_argv("tournament", "run", str(path), "--json", "--no-show"), cwd=resumed,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=arena_env(),
    )  # fmt: skip
    try:
        # Mid-game: some games stored, tables still running in their containers.
        wait_for(
            lambda: 1 <= count(db) < total and any(c["State"] == "running" for c in labelled(engine, prefix)),
            120, "a game stored while tables run",
        )  # fmt: skip
        proc.kill()  # SIGKILL: no cleanup at all
        proc.wait(30)
        partial = results(db)
        assert 1 <= len(partial) < total, "killed mid-way"
        left = labelled(engine, prefix)
        assert left, "the killed run left its containers (the resume must remove them)"

        again = run_arena(resumed, "tournament", "run", str(path), "--json", "--no-show")
        assert again.returncode == 0, again.stderr
        summary = json.loads(again.stdout)
        assert summary["already_done"] == len(partial) and summary["played"] == total - len(partial)
        assert summary["unfinished"] == []
        assert results(db) == expected, "no game lost, none counted twice, same outcomes"
        assert integrity(db) == "ok"
        check_records(resumed / "out", stored_ids(db))
        assert not labelled(engine, prefix), "leftovers of the killed run were removed, none left"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        remove_all(engine, prefix)
        remove_all(engine, f"{name_straight}/")


# ---------------------------------------------------------------------- b. the Docker daemon


def match_config(tmp_path: Path, bots: tuple[BotSpec, ...], games: int, match_id: str) -> MatchConfig:
    return MatchConfig(
        bots=bots,
        rules=resolve_ruleset("pagat", {"max_hands": "4"}),
        games=games,
        seed="hostile-platform",
        time_control=TIME_CONTROL,
        out_dir=tmp_path / "out",
        match_id=match_id,
        start_timeout=60.0,
        limits=ContainerLimits(memory="128m"),
    )


def test_a_bot_that_exits_like_a_kill_is_still_a_crash(engine, fault_images, tmp_path):
    """Exit status 137 (what SIGKILL gives, what the daemon's kill gives) with the daemon up: a crash."""
    match_id = f"hostile-selfkill-{ME}"
    killer = BotSpec("docker", fault_images["fault"], env=(("ARENA_FAULTBOT", "exit137-after-3"),))
    config = match_config(tmp_path, (killer, BotSpec("docker", fault_images["random"])), 2, match_id)
    try:
        report = asyncio.run(asyncio.wait_for(run_match(config), 120))
    finally:
        left = labelled(engine, match_id)
        remove_all(engine, match_id)
    assert not left, f"containers left: {names(left)}"
    first, second = report.games
    assert first.ending == "forfeit:crash", first.ending
    assert first.forfeit is not None and first.forfeit["teams"] == ["NS"]
    assert "exited with code 137" in first.forfeit["detail"]
    assert second.ending == "forfeit:crash" and "earlier game" in second.forfeit["detail"]
    assert all(g.void is None for g in report.games), "the bot's own doing is never void"


def test_a_container_removed_from_outside_voids_the_games_instead_of_a_crash(engine, fault_images, tmp_path):
    match_id = f"hostile-removed-{ME}"
    config = match_config(
        tmp_path, (BotSpec("docker", fault_images["random"]), BotSpec("docker", fault_images["random"])), 4, match_id
    )

    async def scenario() -> Any:
        first_game = asyncio.Event()

        def on_game(game: GameOutcome) -> None:
            first_game.set()

        def remove_east() -> None:  # an operator's `docker rm -f` (or a prune of everything)
            (east,) = [c for c in labelled(engine, match_id) if c["Labels"].get("arena.seat") == "1"]
            engine.api.remove_container(east["Id"], force=True)

        match = asyncio.ensure_future(run_match(config, on_game_end=on_game))
        try:
            await asyncio.wait_for(first_game.wait(), 60)
            await asyncio.to_thread(remove_east)
            return await asyncio.wait_for(match, 60)
        finally:
            if not match.done():  # the match stops its containers on the way out
                match.cancel()
                with contextlib.suppress(BaseException):
                    await match

    try:
        report = asyncio.run(scenario())
    finally:
        left = labelled(engine, match_id)
        remove_all(engine, match_id)
    assert not left, f"containers left: {names(left)}"
    endings = [g.ending for g in report.games]
    assert not any(e.startswith("forfeit:") for e in endings), endings
    assert endings[0] in ("target", "max_hands")
    voided = [g for g in report.games if g.void is not None]
    assert voided and endings[-1] == "void:platform", endings
    assert "removed from outside" in voided[0].void["detail"]


class GoneBeforeJoining:
    """A seat's bot that ended before it joined; ``fault`` is what its container would say."""

    def __init__(self, fault: str | None) -> None:
        self.fault = fault

    def exited(self) -> bool:
        return True

    async def exit_detail(self) -> str:
        return "exited with code 143"

    async def platform_fault(self) -> str | None:
        return self.fault

    async def stop(self, grace: float = 2.0) -> int:
        return 143


@pytest.mark.parametrize("fault", [None, "the Docker daemon does not answer (ConnectionError)"])
def test_a_seat_gone_before_joining_is_a_crash_unless_the_platform_took_it(fault, tmp_path):
    """The join phase too: a daemon stopping while a table starts voids its games."""
    spec = MatchSpec(
        match_id=f"hostile-join-{ME}", rules=resolve_ruleset("pagat", {"max_hands": "2"}),
        deal_seeds=tuple(game_seeds("join", 2)), time_control=TIME_CONTROL,
    )  # fmt: skip

    async def gone(seat: int, address: str, token: str, log_path: Path | None) -> Any:
        return GoneBeforeJoining(fault)

    local = command_launcher(f"python {BOTS / 'random' / 'bot.py'}")

    async def scenario() -> Any:
        server = await RefereeServer().start([f"unix:{tmp_path / 'r.sock'}"])
        try:
            return await host_match(
                server, spec, [local, gone, local, gone], server.addresses[0],
                start_timeout=30, log_dir=tmp_path / "logs",
            )  # fmt: skip
        finally:
            await server.stop(0.5)

    hosted = asyncio.run(asyncio.wait_for(scenario(), 60))
    endings = [g.ending for g in hosted.outcome.games]
    if fault is None:
        assert endings == ["forfeit:crash", "forfeit:crash"], endings
        assert hosted.outcome.games[0].forfeit["teams"] == ["EW"]
    else:
        assert endings == ["void:platform", "void:platform"], endings
        assert fault in hosted.outcome.games[0].void["detail"]


def daemon_tournament(tmp_path: Path, name: str) -> tuple[Path, set[str], Path]:
    """A tournament file of the random bot against the fault bot: its path, game ids and store."""
    entries = {"random": f"docker:{RANDOM_IMAGE}", "termbot": f"docker:{FAULT_IMAGE}"}
    path = tmp_path / "t.toml"
    path.write_text(tournament_text(name, entries, deals=4, concurrency=1, max_hands=4))
    games = {g.game_id for g in schedule(load_config(path, check_images=False))}
    return path, games, tmp_path / "out" / "results.sqlite"


def assert_voided_and_replayed(summary: dict[str, Any], db: Path, total: int) -> list[tuple[str, int, str]]:
    """Every game stored once, none forfeited, some voided and all of those played again; the voids."""
    rows = results(db)
    void_rows = voids(db)
    print("\nvoids:", *void_rows, sep="\n  ")
    assert summary["unfinished"] == [] and len(rows) == total, (summary, rows)
    assert void_rows, "the daemon's fault voided games"
    assert not any(r[3].startswith("forfeit:") for r in rows), [r for r in rows if r[3].startswith("forfeit:")]
    assert {v[0] for v in void_rows} <= {r[0] for r in rows}, "every voided game was played again"
    assert integrity(db) == "ok"
    check_records(db.parent, stored_ids(db))
    return void_rows


def test_docker_daemon_restart_mid_tournament_voids_and_replays(own_daemon, tmp_path):
    """Stop the daemon mid-game, start it again: the games it broke are void and replayed.

    Running tables lose their containers with the daemon (void, not crash);
    tables that start while it is down cannot start a container (void); the
    retry waits for the daemon, removes the leftovers and plays them again.
    Next to it, a bare container (Python as PID 1, which ignores TERM) is
    watched through the shutdown: the daemon kills it with 137 and
    ``platform_fault`` puts that down to the platform.
    """
    name = f"hd{ME}"
    prefix = f"{name}/"
    path, games, db = daemon_tournament(tmp_path, name)
    total = len(games)
    env = {"DOCKER_HOST": own_daemon.url}

    async def idle_through_shutdown() -> tuple[str | None, str, str]:
        """Start the tournament, stop the daemon mid-game, start it again; watch a bare container."""
        client = own_daemon.client()
        idle = await DockerProcess.start(
            client, FAULT_IMAGE, {"ARENA_FAULTBOT": "idle"}, tmp_path,
            labels={MATCH_LABEL: f"{name}-idle"},
        )  # fmt: skip
        await asyncio.sleep(0.5)
        assert not idle.exited()
        assert await idle.platform_fault() is None, "a running container on a healthy daemon"
        proc = subprocess.Popen(
            arena_argv("tournament", "run", str(path), "--json", "--no-show"), cwd=tmp_path,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=arena_env(**env),
        )  # fmt: skip
        try:
            await asyncio.to_thread(wait_for, lambda: 1 <= count(db) < total // 2, 120, "the first game stored")
            await asyncio.to_thread(own_daemon.stop, 90)  # SIGTERM by pid, wait for it to exit
            for _ in range(100):
                if idle.exited():
                    break
                await asyncio.sleep(0.05)
            fault = await idle.platform_fault()
            detail = await idle.exit_detail()
            # Round 0 over: every game either stored or voided; the run waits for the daemon.
            await asyncio.to_thread(
                wait_for, lambda: games <= stored_ids(db) | {v[0] for v in voids(db)}, 60, "round 0 to end"
            )
            await asyncio.to_thread(own_daemon.start)  # same data root
            out, err = await asyncio.to_thread(proc.communicate, timeout=180)
            assert proc.returncode == 0, f"{err}\n{own_daemon.tail()}"
            return fault, detail, out
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
            client.close()

    fault, detail, output = asyncio.run(idle_through_shutdown())
    assert fault is not None and "does not answer" in fault, fault
    assert "137" in detail, detail

    void_rows = assert_voided_and_replayed(json.loads(output), db, total)
    reasons = [v[2] for v in void_rows]
    assert any("Docker daemon does not answer" in r for r in reasons), "a running table lost its containers: void"
    assert any("no Docker engine answers" in r for r in reasons), "a table that could not start: void"
    client = own_daemon.client()
    try:
        remove_all(client, f"{name}-idle")
        assert not labelled(client, prefix), "leftovers of the stopped daemon were removed"
    finally:
        client.close()


def test_docker_daemon_sigkilled_mid_tournament_voids_and_replays(own_daemon, tmp_path):
    """SIGKILL the daemon mid-game (no shutdown), start it again: broken games void and are replayed.

    Unlike a stop, a killed daemon stops no container: the shims keep the
    seats running, so the game in progress plays out and is stored (its
    seats cannot be stopped or removed while the daemon is dead); tables
    that start meanwhile cannot start a container (void).  When the daemon is
    back it kills the orphaned containers (no live restore), the run removes
    its leftovers and replays the voided games: every game stored once.
    """
    name = f"hsk{ME}"
    prefix = f"{name}/"
    path, games, db = daemon_tournament(tmp_path, name)
    total = len(games)
    proc = subprocess.Popen(
        arena_argv("tournament", "run", str(path), "--json", "--no-show"), cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=arena_env(DOCKER_HOST=own_daemon.url),
    )  # fmt: skip
    watcher = own_daemon.client()
    try:
        # Mid-game: a game stored and a table's seats running.
        wait_for(
            lambda: 1 <= count(db) < total // 2 and any(c["State"] == "running" for c in labelled(watcher, prefix)),
            120, "a game stored while a table runs",
        )  # fmt: skip
        watcher.close()
        own_daemon.kill()
        # Round 0 ends: every game stored or voided; the run waits for the daemon.
        wait_for(lambda: games <= stored_ids(db) | {v[0] for v in voids(db)}, 120, "round 0 to end")
        # Same data and exec root.  A new containerd must take over the shims the old one
        # left: on a loaded machine dockerd may give up waiting for it once; try again.
        for attempt in range(3):
            try:
                own_daemon.start(timeout=120)
                break
            except DaemonError:
                if attempt == 2:
                    raise
                own_daemon.kill_containerd()
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{err}\n{own_daemon.tail()}"
    finally:
        watcher.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    assert_voided_and_replayed(json.loads(out), db, total)
    client = own_daemon.client()
    try:
        assert not labelled(client, prefix), "the killed daemon's containers were removed"
    finally:
        client.close()


# ---------------------------------------------------------------------- c. the disk full


@contextlib.contextmanager
def small_tmpfs(where: Path, size: str) -> Iterator[Path]:
    root_or_skip()
    with small_filesystem(where, size) as mounted:
        yield mounted


def test_a_full_disk_stops_the_run_with_one_line_and_a_consistent_store(tmp_path):
    random_bot = f"cmd:python {BOTS / 'random' / 'bot.py'}"
    path = tmp_path / "t.toml"
    path.write_text(
        tournament_text("diskfull", {"r1": random_bot, "r2": random_bot}, deals=40, concurrency=2, max_hands=3)
    )
    total = 80
    with small_tmpfs(tmp_path / "out", "1m") as out:
        db = out / "results.sqlite"
        result = run_arena(tmp_path, "tournament", "run", str(path), "--json", "--no-show", timeout=120)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        print("\nstderr:", result.stderr, "stored:", count(db), sep="\n")
        assert result.returncode not in (0, 130), result.returncode
        assert "Traceback" not in result.stderr + result.stdout
        assert len(lines) == 1 and "disk is full" in lines[0], result.stderr
        assert integrity(db) == "ok"
        stored = stored_ids(db)
        assert 0 < len(stored) < total
        check_records(out, stored)

        subprocess.run(["mount", "-o", "remount,size=64m", str(out)], check=True)  # room again
        again = run_arena(tmp_path, "tournament", "run", str(path), "--json", "--no-show", timeout=180)
        assert again.returncode == 0, again.stderr
        summary = json.loads(again.stdout)
        assert summary["already_done"] == len(stored) and summary["unfinished"] == []
        assert len(results(db)) == total and integrity(db) == "ok"
        check_records(out, stored_ids(db))


def test_a_full_disk_under_the_store_rolls_back_and_says_so(tmp_path):
    with small_tmpfs(tmp_path / "out", "512k") as out:
        store = ResultsStore(out / "results.sqlite")
        try:
            store.claim("hash", "diskfull", "rules")
            filler = out / "filler"
            with filler.open("wb", buffering=0) as f, contextlib.suppress(OSError):
                while True:
                    f.write(b"\0" * 4096)
            row = StoredGame(
                game_id="g1", pairing=0, deal=0, table_no=1, cluster="p000-d000", side0="a", side1="b",
                deal_seed="s", ending="max_hands", winner="a", score0=10, score1=0, hands=1,
                forfeit_entry=None, forfeit_reason=None, forfeit_detail="x" * 500, strikes0=0, strikes1=0,
                decisions=1, think_seconds=0.0, ruleset_hash="r", engine_version="e", sdk_version="s",
                image0=None, image1=None, record="records/g1.json", finished_at="now",
            )  # fmt: skip
            with pytest.raises(DiskFull, match="disk is full"):
                for i in range(200):  # the WAL grows until a write no longer fits
                    store.record_game(row.__class__(**{**row.__dict__, "game_id": f"g{i}"}))
            kept = store.finished_ids()
            assert store.integrity() == "ok"
            filler.unlink()
            store.record_game(row.__class__(**{**row.__dict__, "game_id": "after"}))
            assert store.finished_ids() == kept | {"after"}
        finally:
            store.close()
