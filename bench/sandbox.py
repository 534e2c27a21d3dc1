#!/usr/bin/env python
"""Sandbox cost: container seats against local-process seats, same bot, same match.

What is measured
----------------
The bot is ``example_bots/random`` in both cases: as the image
``arena-random:bench`` (built from that directory with
:func:`arena.sandbox.build.build_image`, base image ``$ARENA_BASE_IMAGE`` or
``arena-base:bookworm``; rebuilt only when the image is missing or the SDK,
the bot, its Dockerfile or the base image changed, or with ``--rebuild``; the
build is outside every figure) and as ``python example_bots/random/bot.py``
run by this interpreter.  Every match is 4-player ``pagat`` in team mode (two
bot specs, seats N/S and E/W), ``--games`` games capped at ``--max-hands``
hands (random bots seldom reach 500 points: an uncapped game runs to the
preset's 200-hand cap, about 11,000 decisions), played by a real
:class:`RefereeServer` on a Unix socket in a fresh temporary directory and
:func:`host_match` with the launchers ``local_match.run_match`` uses
(``docker_launcher`` with the default :class:`ContainerLimits`, or
``command_launcher``).  The bench drives ``host_match`` itself (the same steps
as ``run_match``, socket-directory permissions included) so that it can pass
its own :class:`RemoteSeat` objects and wrap the launchers:

1. join time: from the moment launching begins (just before ``host_match``
   is called; the Docker client and the image check come before, as in
   ``run_match``) until every seat's ``joined`` event is set (awaited
   directly, no polling).  Per seat it is split into *launch* (the launcher's
   call: for containers ``client.containers.run`` in a worker thread, i.e.
   POST create, GET inspect, POST start; for processes the spawn) and *bot
   start-up* (launcher returned -> joined: interpreter, imports, channel
   connect, the Join handshake).
2. decision latency: ``GameOutcome.decision_latencies`` of every game (the
   referee's time from sending a request to having the answer), pooled per
   kind over all matches; p50, p99 and mean, and container/local ratios.
   Next to it, from ``/proc/TID/schedstat`` between "all joined" and the last
   game's end: CPU and run-queue wait per decision of the four bots (a
   container's threads are the tasks of its cgroup), of the referee and of
   dockerd/containerd/the shims; and from the containers' cgroups, CFS
   throttling and peak memory.  These say whether a container difference is
   work (CPU) or scheduling (waiting for a core).

Matches alternate container, local, container, local, ... (``--rounds``
pairs) so slow phases of the shared machine hit both alike.  Unless
``--no-probe``, single containers are then timed phase by phase (create,
start, run to exit, remove) running ``/bin/true`` (with and without the
sandbox settings), ``python -c pass`` and the bot's imports, against the same
commands as local processes, and the API calls of ``containers.run`` one at
a time and four at once: where a container seat's start-up goes.

Bars: median join time of the container matches <= 1.5 s; container/local
latency ratio <= 1.2x at p50 and at the mean (p99 is shown too: on a 2-core
machine shared with other work it is dominated by scheduling noise).  The
load average is printed with the results; read them with it.

At the end the bench removes any container of its own matches that is left
and reports what ``docker ps -a --filter label=arena.managed`` shows.
Games that did not play out (forfeit, void) are reported with the seat's log
tail: e.g. ``arena sandbox prune`` run elsewhere on the machine removes every
labelled container, running ones included, and shows up here as a crash.

Exit status 1 if a bar (median join, latency p50/mean) is missed or a
container was left behind.

Run: ``python bench/sandbox.py [--games N] [--rounds R] [--max-hands H] [--no-probe]
[--rebuild] [--json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena_sdk.engine import resolve_ruleset, seat_name

from arena.match import GameOutcome, MatchSpec, TimeControl, game_seeds
from arena.referee.botspec import BotSpec, seat_assignment
from arena.referee.host import (
    SOCKET_NAME,
    Launcher,
    command_launcher,
    docker_launcher,
    host_match,
)
from arena.referee.server import RefereeServer
from arena.referee.session import RemoteSeat
from arena.sandbox.docker import (
    LABEL,
    MATCH_LABEL,
    ContainerLimits,
    container_settings,
    docker_client,
    image_id,
)

REPO = Path(__file__).resolve().parents[1]
IMAGE = "arena-random:bench"
BOT_DIR = REPO / "example_bots" / "random"
JOIN_BAR_S = 1.5
RATIO_BAR = 1.2
RUN_TAG = f"bench-sandbox-{os.getpid()}"


# --------------------------------------------------------------------- helpers


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in 0..100) of a non-empty sequence."""
    xs = sorted(values)
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summary(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p99": percentile(values, 99),
        "mean": statistics.fmean(values),
        "min": min(values),
        "max": max(values),
    }


def ms(x: float) -> str:
    return f"{x * 1e3:8.3f}"


def _sdk_fingerprint(base_id: str) -> str:
    """What the bench image depends on: the SDK, the bot, its Dockerfile, the base image."""
    digest = hashlib.sha256(base_id.encode())
    files = [REPO / "sdk" / "pyproject.toml", BOT_DIR / "bot.py", BOT_DIR / "Dockerfile"]
    files += sorted((REPO / "sdk" / "arena_sdk").rglob("*.py"))
    for path in files:
        if path.exists():
            digest.update(str(path.relative_to(REPO)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def bench_image(client: Any, base_image: str, *, rebuild: bool) -> tuple[str, float, str]:
    """The bench image's ID, the build time and what was done (built / up to date).

    ``build_image`` rebuilds the arena wheels whenever anything under ``arena/``
    changed (half a minute), although a bot image only holds the SDK; so the
    bench rebuilds only when the image is missing or the SDK, the bot, its
    Dockerfile or the base image changed since its last build (a stamp in
    the arena cache directory), or with ``--rebuild``.
    """
    from arena.sandbox.build import build_image, wheel_dir

    base_id = image_id(client, base_image)
    fingerprint = _sdk_fingerprint(base_id)
    stamp = wheel_dir().parent / "bench-sandbox-image.json"
    with contextlib.suppress(Exception):
        current = image_id(client, IMAGE)
        saved = json.loads(stamp.read_text())
        if not rebuild and saved == {"image_id": current, "fingerprint": fingerprint}:
            return current, 0.0, "up to date"
    t = time.perf_counter()
    built = build_image(BOT_DIR, tag=IMAGE, base_image=base_image, client=client)
    build_s = time.perf_counter() - t
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps({"image_id": built.image_id, "fingerprint": fingerprint}))
    return built.image_id, build_s, "built"


# ----------------------------------------------------------------- one match


async def run_one(
    kind: str, index: int, games: int, max_hands: int, client: Any, log_root: Path
) -> dict[str, Any]:
    """One 4-player team-mode match with container (``docker``) or local (``cmd``) seats."""
    rules = resolve_ruleset("pagat", {"max_hands": max_hands} if max_hands else None)
    if kind == "docker":
        specs = (BotSpec("docker", IMAGE), BotSpec("docker", IMAGE))
    else:
        command = f"{shlex.quote(sys.executable)} {shlex.quote(str(BOT_DIR / 'bot.py'))}"
        specs = (BotSpec("cmd", command), BotSpec("cmd", command))
    seat_bots = seat_assignment(rules.players, len(specs))
    match_id = f"{RUN_TAG}-{kind}-{index}"
    spec = MatchSpec(
        match_id=match_id,
        rules=rules,
        deal_seeds=tuple(game_seeds(f"sandbox-bench-{index}", games)),
        time_control=TimeControl(),
    )
    n = rules.players
    clock = time.perf_counter
    launch_start = [math.nan] * n
    launch_end = [math.nan] * n
    joined_at = [math.nan] * n
    game_ends: list[float] = []

    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        socket_dir = Path(tmp)
        socket_path = socket_dir / SOCKET_NAME
        address = f"unix:{socket_path}"

        def make(seat: int) -> Launcher:
            b = specs[seat_bots[seat]]
            if b.kind == "cmd":
                inner = command_launcher(b.target, dict(b.env))
            else:
                inner = docker_launcher(
                    client, b.target, socket_dir, match_id, ContainerLimits(), dict(b.env)
                )

            async def timed(s: int, addr: str, token: str, log_path: Path | None) -> Any:
                launch_start[s] = clock()
                try:
                    return await inner(s, addr, token, log_path)
                finally:
                    launch_end[s] = clock()

            return timed

        launchers = [make(s) for s in range(n)]
        server = await RefereeServer().start([address])
        if kind == "docker":
            # As run_match: the containers' unprivileged user must reach the socket.
            socket_dir.chmod(0o755)
            socket_path.chmod(0o777)
        seats = [RemoteSeat(s, match_id) for s in range(n)]

        async def watch(seat: RemoteSeat) -> None:
            await seat.joined.wait()
            joined_at[seat.seat] = clock()

        watchers = [asyncio.ensure_future(watch(s)) for s in seats]
        cgroups: list[dict[str, int]] = []
        sched: dict[str, Any] = {}

        def snapshot() -> dict[str, dict[int, tuple[int, int]]]:
            shot = {f"bot{seat.seat}": sched_totals(bot_threads(seat.process)) for seat in seats}
            shot["referee"] = sched_totals(process_threads(os.getpid()))
            shot["docker_daemons"] = sched_totals(
                [t for pid in daemon_pids() for t in process_threads(pid)]
            )
            return shot

        async def all_joined() -> None:
            await asyncio.gather(*watchers)
            sched["start"] = snapshot()

        joined_all = asyncio.ensure_future(all_joined())

        def game_ended(game: GameOutcome) -> None:
            game_ends.append(clock())
            sched["end"] = snapshot()
            if kind == "docker":  # the containers are still up: read their cgroups
                cgroups[:] = [
                    container_cgroup(getattr(seat.process, "container", None)) for seat in seats
                ]

        try:
            t0 = clock()
            hosted = await host_match(
                server, spec, launchers, address,
                log_dir=log_root / match_id, seats=seats,
                on_game_end=game_ended,
            )  # fmt: skip
            t_end = clock()
        finally:
            for w in [*watchers, joined_all]:
                w.cancel()
            await server.stop(0.5)

    outcome_games: list[GameOutcome] = hosted.outcome.games
    latencies = [x for g in outcome_games for x in g.decision_latencies]
    problems = []
    for g in outcome_games:
        if g.ending.startswith(("forfeit", "void")):
            why = g.forfeit or g.void or {}
            problem = (
                f"{g.game_id}: {g.ending} {why.get('seat', '')} {why.get('detail', '')}".rstrip()
            )
            seat = why.get("seat")
            if seat is not None:
                s = [seat_name(n, i) for i in range(n)].index(seat)
                log_path = log_root / match_id / f"seat{s}.log"
                with contextlib.suppress(OSError):
                    tail = log_path.read_text(errors="replace").strip().splitlines()[-6:]
                    problem += " | log: " + " / ".join(tail)
            problems.append(problem)
    joins = [j - t0 for j in joined_at]
    return {
        "kind": kind,
        "match_id": match_id,
        "join_all_s": max(joins),
        "join_s": joins,
        "launch_s": [e - s for s, e in zip(launch_start, launch_end, strict=True)],
        "launch_done_s": [e - t0 for e in launch_end],
        "startup_s": [j - e for j, e in zip(joined_at, launch_end, strict=True)],
        "play_s": (game_ends[-1] - max(joined_at)) if game_ends else math.nan,
        "teardown_s": t_end - (game_ends[-1] if game_ends else t_end),
        "wall_s": t_end - t0,
        "games": len(outcome_games),
        "decisions": len(latencies),
        "latencies": latencies,
        "problems": problems,
        "exit_codes": hosted.exit_codes,
        "cgroups": cgroups,
        "sched": sched_deltas(sched),
        "seat_names": hosted.outcome.seat_names,
    }


def process_threads(pid: int) -> list[int]:
    with contextlib.suppress(OSError):
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    return []


DAEMONS = ("dockerd", "containerd", "containerd-shim", "containerd-shim-runc-v2")


def daemon_pids() -> list[int]:
    """dockerd, containerd and every containerd-shim (one per container) on this host."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if Path(f"/proc/{entry}/comm").read_text().strip() in DAEMONS:
                    pids.append(int(entry))
    return pids


def bot_threads(bot: Any) -> list[int]:
    """Host thread ids of a seat's bot: its process's threads, or its container's cgroup tasks."""
    container = getattr(bot, "container", None)
    if container is None:
        pid = getattr(bot, "pid", None)
        return process_threads(pid) if pid else []
    for tasks in (
        Path("/sys/fs/cgroup/cpu/docker") / container.id / "tasks",
        *Path("/sys/fs/cgroup").glob(f"**/*{container.id}*/cgroup.threads"),
    ):
        with contextlib.suppress(OSError, ValueError):
            return [int(t) for t in tasks.read_text().split()]
    return []


def sched_totals(tids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """Per thread: on-CPU time and run-queue wait (ns), from /proc/TID/schedstat."""
    out = {}
    for tid in tids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{tid}/schedstat").read_text().split()
            out[tid] = (int(fields[0]), int(fields[1]))
    return out


def sched_deltas(sched: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per bot (and the referee, the docker daemons): CPU and run-queue wait (s) from all
    joined to the last game's end, over the threads alive at both moments (the
    bots' threads live for the whole match; threads born in between are missed)."""
    if "start" not in sched or "end" not in sched:
        return {}
    out = {}
    for key, end in sched["end"].items():
        start = sched["start"].get(key, {})
        both = set(start) & set(end)
        out[key] = {
            "cpu_s": sum(end[t][0] - start[t][0] for t in both) / 1e9,
            "runqueue_wait_s": sum(end[t][1] - start[t][1] for t in both) / 1e9,
        }
    return out


def container_cgroup(container: Any) -> dict[str, int]:
    """CFS throttling and peak memory of a running container (cgroup v1 or v2; {} if unreadable)."""
    if container is None:
        return {}
    cid = container.id
    out: dict[str, int] = {}
    v1 = Path("/sys/fs/cgroup/cpu/docker") / cid
    v2 = next(iter(Path("/sys/fs/cgroup").glob(f"**/*{cid}*")), None) if not v1.exists() else None
    cpu_stat = v1 / "cpu.stat" if v1.exists() else (v2 / "cpu.stat" if v2 else None)
    with contextlib.suppress(OSError, ValueError, TypeError):
        for line in cpu_stat.read_text().splitlines():  # type: ignore[union-attr]
            key, value = line.split()
            out[key] = int(value)
    mem = Path("/sys/fs/cgroup/memory/docker") / cid / "memory.max_usage_in_bytes"
    if not mem.exists() and v2 is not None:
        mem = v2 / "memory.peak"
    with contextlib.suppress(OSError, ValueError):
        out["memory_peak_bytes"] = int(mem.read_text())
    return out


# --------------------------------------------------------------------- probes

PROBE_IMPORT = (
    "import time; t = time.perf_counter(); "
    "from arena_sdk import Bot, Card, View, run; import grpc; "
    "print(f'IMPORT {time.perf_counter() - t:.6f}')"
)


def probe_container(
    client: Any, socket_dir: Path, entrypoint: list[str], command: list[str], minimal: bool = False
) -> dict[str, float]:
    """Create, start, wait for exit and remove one container with the seat settings; phase times.

    ``minimal``: only the network settings (none at all) and the labels, none of the other sandbox settings.
    """
    settings = container_settings(
        IMAGE, {}, socket_dir, ContainerLimits(), {MATCH_LABEL: f"{RUN_TAG}-probe"}
    )
    if minimal:
        keep = ("image", "network_mode", "network_disabled", "labels", "name")
        settings = {k: v for k, v in settings.items() if k in keep}
    settings.pop("detach", None)
    settings.update(entrypoint=entrypoint, command=command)
    api_keys = {k: v for k, v in settings.items()}
    t0 = time.perf_counter()
    container = client.containers.create(**api_keys)  # POST create + GET inspect
    t1 = time.perf_counter()
    try:
        container.start()
        t2 = time.perf_counter()
        status = container.wait()
        t3 = time.perf_counter()
        out = container.logs().decode(errors="replace")
    finally:
        t4 = time.perf_counter()
        container.remove(force=True)
        t5 = time.perf_counter()
    result = {
        "create": t1 - t0,
        "start": t2 - t1,
        "run_to_exit": t3 - t2,
        "remove": t5 - t4,
        "total": t3 - t0,
    }
    if status.get("StatusCode") != 0:
        raise RuntimeError(f"probe {entrypoint} {command} failed: {status}: {out[-300:]}")
    for line in out.splitlines():
        if line.startswith("IMPORT "):
            result["import_in_process"] = float(line.split()[1])
    return result


def probe_local(argv: list[str]) -> dict[str, float]:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, check=True)
    result = {"total": time.perf_counter() - t0}
    for line in proc.stdout.splitlines():
        if line.startswith("IMPORT "):
            result["import_in_process"] = float(line.split()[1])
    return result


def probe_create_api(client: Any, socket_dir: Path) -> dict[str, float]:
    """The API calls of containers.run: POST create, GET inspect, POST start (then removed)."""
    settings = container_settings(
        IMAGE, {}, socket_dir, ContainerLimits(), {MATCH_LABEL: f"{RUN_TAG}-probe"}
    )
    settings.pop("detach")
    settings.update(entrypoint=["/bin/true"], command=[])
    from docker.models.containers import _create_container_args

    kwargs = _create_container_args({**settings, "version": client.api._version})
    api = client.api
    t0 = time.perf_counter()
    cid = api.create_container(**kwargs)["Id"]
    t1 = time.perf_counter()
    api.inspect_container(cid)
    t2 = time.perf_counter()
    api.start(cid)
    t3 = time.perf_counter()
    api.wait(cid)
    api.remove_container(cid, force=True)
    return {"api_create": t1 - t0, "api_inspect": t2 - t1, "api_start": t3 - t2}


async def run_probes(client: Any, reps: int) -> dict[str, Any]:
    py = "/venv/bin/python"
    cases = {
        "true": (["/bin/true"], [], None),
        "true, no sandbox settings": (["/bin/true"], [], None),
        "python -c pass": ([py], ["-c", "pass"], [sys.executable, "-c", "pass"]),
        "python + bot imports": ([py], ["-c", PROBE_IMPORT], [sys.executable, "-c", PROBE_IMPORT]),
    }
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="arena-bench-probe-") as tmp:
        socket_dir = Path(tmp)
        socket_dir.chmod(0o755)
        for name, (entry, cmd, local_argv) in cases.items():
            minimal = name.endswith("no sandbox settings")
            rows = [
                await asyncio.to_thread(probe_container, client, socket_dir, entry, cmd, minimal)
                for _ in range(reps)
            ]
            row: dict[str, Any] = {
                "container": {k: statistics.median(r[k] for r in rows) for k in rows[0]},
            }
            if local_argv is not None:
                lrows = [await asyncio.to_thread(probe_local, local_argv) for _ in range(reps)]
                row["local"] = {k: statistics.median(r[k] for r in lrows) for k in lrows[0]}
            out[name] = row
        api_rows = [
            await asyncio.to_thread(probe_create_api, client, socket_dir) for _ in range(reps)
        ]
        out["api"] = {k: statistics.median(r[k] for r in api_rows) for k in api_rows[0]}

        # Four containers.run calls at once, as a match launches them (default-executor threads).
        async def four() -> list[float]:
            async def one() -> float:
                settings = container_settings(
                    IMAGE, {}, socket_dir, ContainerLimits(), {MATCH_LABEL: f"{RUN_TAG}-probe"}
                )
                settings.update(entrypoint=["/bin/true"], command=[])
                t = time.perf_counter()
                c = await asyncio.to_thread(client.containers.run, **settings)
                dt = time.perf_counter() - t
                await asyncio.to_thread(c.wait)
                await asyncio.to_thread(c.remove, force=True)
                return dt

            t = time.perf_counter()
            calls = await asyncio.gather(*(one() for _ in range(4)))
            return [*calls, time.perf_counter() - t]

        fours = [await four() for _ in range(reps)]
        out["run_x4_concurrent"] = {
            "slowest_run_call": statistics.median(max(f[:4]) for f in fours),
            "fastest_run_call": statistics.median(min(f[:4]) for f in fours),
        }
        single = []
        for _ in range(reps):
            settings = container_settings(
                IMAGE, {}, socket_dir, ContainerLimits(), {MATCH_LABEL: f"{RUN_TAG}-probe"}
            )
            settings.update(entrypoint=["/bin/true"], command=[])
            t = time.perf_counter()
            c = await asyncio.to_thread(client.containers.run, **settings)
            single.append(time.perf_counter() - t)
            await asyncio.to_thread(c.wait)
            await asyncio.to_thread(c.remove, force=True)
        out["run_x1"] = statistics.median(single)
    return out


# ----------------------------------------------------------------------- main


def leftovers(client: Any, everything: bool = False) -> list[str]:
    found = client.containers.list(all=True, filters={"label": [LABEL]})
    if everything:
        return [c.name for c in found]
    return [c.name for c in found if c.labels.get(MATCH_LABEL, "").startswith(RUN_TAG)]


def remove_ours(client: Any) -> list[str]:
    removed = []
    for c in client.containers.list(all=True, filters={"label": [LABEL]}):
        if c.labels.get(MATCH_LABEL, "").startswith(RUN_TAG):
            with contextlib.suppress(Exception):
                c.remove(force=True)
                removed.append(c.name)
    return removed


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    base = os.environ.get("ARENA_BASE_IMAGE") or "arena-base:bookworm"
    say = (lambda *a, **k: None) if args.json else (lambda *a, **k: print(*a, **k, flush=True))
    client = docker_client()
    img, build_s, how = bench_image(client, base, rebuild=args.rebuild)
    say(
        f"image {IMAGE} {img[:19]} (base {base}; {how}"
        + (f" in {build_s:.1f} s)" if build_s else ")")
    )
    t_measure = time.perf_counter()

    load_before = os.getloadavg()
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="arena-bench-logs-") as logs:
        try:
            for r in range(args.rounds):
                for kind in ("docker", "cmd"):
                    res = await run_one(kind, r, args.games, args.max_hands, client, Path(logs))
                    runs.append(res)
                    label = "container" if kind == "docker" else "local    "
                    say(
                        f"round {r + 1}/{args.rounds} {label}: "
                        f"all joined {res['join_all_s']:.3f} s "
                        f"(launch {max(res['launch_s']):.3f} s, "
                        f"bot start-up {max(res['startup_s']):.3f} s), "
                        f"{res['games']} game(s), {res['decisions']} decisions, "
                        f"p50 {percentile(res['latencies'], 50) * 1e3:.3f} ms, "
                        f"play {res['play_s']:.2f} s, teardown {res['teardown_s']:.2f} s"
                        + (
                            f", PROBLEMS {res['problems']} exit codes {res['exit_codes']}"
                            if res["problems"]
                            else ""
                        )
                    )
            probes = await run_probes(client, args.probe_reps) if args.probe else None
        finally:
            removed = remove_ours(client)
    left = leftovers(client)
    left_all = leftovers(client, everything=True)
    result = report(args, base, img, build_s, runs, probes, removed, left, left_all, say)
    result["measure_wall_s"] = round(time.perf_counter() - t_measure, 2)
    after = os.getloadavg()[0]
    result["loadavg_1m"] = {"before": load_before[0], "after": after}
    say(
        f"load average (1 min) before {load_before[0]:.2f}, after {after:.2f}, "
        f"{os.cpu_count()} CPUs"
    )
    return result


def sched_per_decision(runs: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Per decision over the matches: CPU and run-queue wait of the bots, referee and daemons."""
    decisions = sum(r["decisions"] for r in runs if r["sched"])
    if not decisions:
        return {}
    out = {
        f"{who}_{what}": 0.0
        for who in ("bots", "referee", "docker_daemons")
        for what in ("cpu", "runqueue_wait")
    }
    for r in runs:
        for who, v in r["sched"].items():
            prefix = "bots" if who.startswith("bot") else who
            out[f"{prefix}_cpu"] += v["cpu_s"]
            out[f"{prefix}_runqueue_wait"] += v["runqueue_wait_s"]
    return {k: v / decisions for k, v in out.items()}


def cgroup_summary(runs: Sequence[dict[str, Any]]) -> dict[str, int]:
    rows = [c for r in runs for c in r["cgroups"] if c]
    if not rows:
        return {}
    return {
        "nr_periods": sum(c.get("nr_periods", 0) for c in rows),
        "nr_throttled": sum(c.get("nr_throttled", 0) for c in rows),
        "throttled_time_ns": sum(c.get("throttled_time", 0) for c in rows),
        "memory_peak_max_bytes": max(c.get("memory_peak_bytes", 0) for c in rows),
    }


def report(
    args: argparse.Namespace,
    base: str,
    img: str,
    build_s: float,
    runs: list[dict[str, Any]],
    probes: dict[str, Any] | None,
    removed: list[str],
    left: list[str],
    left_all: list[str],
    say: Any,
) -> dict[str, Any]:
    kinds = {"docker": "container", "cmd": "local"}
    per: dict[str, Any] = {}
    for kind, label in kinds.items():
        rs = [r for r in runs if r["kind"] == kind]
        per[label] = {
            "join_all_s": summary([r["join_all_s"] for r in rs]),
            "join_all_each_s": [round(r["join_all_s"], 4) for r in rs],
            "launch_s": summary([x for r in rs for x in r["launch_s"]]),
            "launch_all_done_s": summary([max(r["launch_done_s"]) for r in rs]),
            "bot_startup_s": summary([x for r in rs for x in r["startup_s"]]),
            "teardown_s": summary([r["teardown_s"] for r in rs]),
            "latency_s": summary([x for r in rs for x in r["latencies"]]),
            "latency_p50_each_s": [round(percentile(r["latencies"], 50), 6) for r in rs],
            "games": sum(r["games"] for r in rs),
            "problems": [p for r in rs for p in r["problems"]],
            "exit_codes": [r["exit_codes"] for r in rs],
            "sched_per_decision_s": sched_per_decision(rs),
            "cgroups": cgroup_summary(rs),
        }
    c, lo = per["container"], per["local"]
    ratio = {k: c["latency_s"][k] / lo["latency_s"][k] for k in ("p50", "p99", "mean")}
    join_med = c["join_all_s"]["p50"]
    bars = {
        "join_median_le_1_5s": join_med <= JOIN_BAR_S,
        "join_max_le_1_5s": c["join_all_s"]["max"] <= JOIN_BAR_S,
        "latency_ratio_p50_le_1_2": ratio["p50"] <= RATIO_BAR,
        "latency_ratio_mean_le_1_2": ratio["mean"] <= RATIO_BAR,
        "latency_ratio_p99_le_1_2": ratio["p99"] <= RATIO_BAR,
        "no_leftover_containers": not left,
    }

    say("")
    say(f"{'':28}{'container':>12}{'local':>12}{'ratio':>9}")
    say(f"{'match: start -> all joined':28}")
    for stat in ("p50", "mean", "min", "max"):
        a, b = c["join_all_s"][stat], lo["join_all_s"][stat]
        say(f"  {stat:<26}{a:11.3f}s{b:11.3f}s{a / b:8.2f}x")
    say(f"{'per seat (median)':28}")
    for key, name in (("launch_s", "launch call"), ("bot_startup_s", "launched -> joined")):
        a, b = c[key]["p50"], lo[key]["p50"]
        say(f"  {name:<26}{a:11.3f}s{b:11.3f}s{a / b:8.2f}x")
    a, b = c["launch_all_done_s"]["p50"], lo["launch_all_done_s"]["p50"]
    say(f"  {'all 4 launch calls done':<26}{a:11.3f}s{b:11.3f}s{a / b:8.2f}x")
    a, b = c["teardown_s"]["p50"], lo["teardown_s"]["p50"]
    say(f"  {'teardown (not timed bar)':<26}{a:11.3f}s{b:11.3f}s{a / b:8.2f}x")
    say(f"decision latency (ms), {c['latency_s']['n']} / {lo['latency_s']['n']} decisions")
    for stat in ("p50", "p99", "mean"):
        a, b = c["latency_s"][stat], lo["latency_s"][stat]
        say(f"  {stat:<26}{ms(a):>11} {ms(b):>11} {ratio[stat]:8.2f}x")
    sc, sl = c["sched_per_decision_s"], lo["sched_per_decision_s"]
    if sc and sl:
        for key, name in (
            ("bots_cpu", "4 bots' CPU / decision"),
            ("bots_runqueue_wait", "4 bots' run-queue wait"),
            ("referee_cpu", "referee CPU / decision"),
            ("referee_runqueue_wait", "referee run-queue wait"),
            ("docker_daemons_cpu", "docker daemons' CPU"),
        ):
            a, b = sc[key], sl[key]
            say(f"  {name:<26}{ms(a):>11} {ms(b):>11} {a / b if b else math.nan:8.2f}x")
    if c["cgroups"]:
        cg = c["cgroups"]
        say(
            f"  containers: CFS-throttled periods {cg['nr_throttled']} of {cg['nr_periods']}, "
            f"peak memory {cg['memory_peak_max_bytes'] / 2**20:.1f} MiB "
            f"(limit {ContainerLimits().memory})"
        )
    say(f"  per-match p50 container {[round(x * 1e3, 3) for x in c['latency_p50_each_s']]}")
    say(f"  per-match p50 local     {[round(x * 1e3, 3) for x in lo['latency_p50_each_s']]}")
    if probes:
        say(f"start-up probes (median of {args.probe_reps}; seconds)")
        for name in ("true", "true, no sandbox settings", "python -c pass", "python + bot imports"):
            row = probes[name]
            cc = row["container"]
            line = (
                f"  {name:<26} container: create {cc['create']:.3f} start {cc['start']:.3f} "
                f"run-to-exit {cc['run_to_exit']:.3f} (remove {cc['remove']:.3f})"
            )
            if "import_in_process" in cc:
                line += f" imports {cc['import_in_process']:.3f}"
            if "local" in row:
                line += f" | local total {row['local']['total']:.3f}"
                if "import_in_process" in row["local"]:
                    line += f" imports {row['local']['import_in_process']:.3f}"
            say(line)
        api = probes["api"]
        say(
            f"  containers.run API calls: create {api['api_create']:.3f} "
            f"inspect {api['api_inspect']:.3f} start {api['api_start']:.3f}; "
            f"one run() {probes['run_x1']:.3f}, four at once: "
            f"fastest {probes['run_x4_concurrent']['fastest_run_call']:.3f} "
            f"slowest {probes['run_x4_concurrent']['slowest_run_call']:.3f}"
        )
    for label, p in per.items():
        if p["problems"]:
            say(f"WARNING {label} games not played out: {p['problems']}")
    join_ok = "PASS" if bars["join_median_le_1_5s"] else "FAIL"
    ratio_ok = bars["latency_ratio_p50_le_1_2"] and bars["latency_ratio_mean_le_1_2"]
    say(
        f"bars: join median {join_med:.3f} s <= {JOIN_BAR_S} s: {join_ok}"
        f" (max {c['join_all_s']['max']:.3f} s); latency ratio p50 {ratio['p50']:.2f}x"
        f" / mean {ratio['mean']:.2f}x <= {RATIO_BAR}x: {'PASS' if ratio_ok else 'FAIL'}"
        f" (p99 {ratio['p99']:.2f}x)"
    )
    say(
        f"leftover containers of this run: {left or 'none'} "
        f"(removed at the end: {removed or 'none'}); "
        f"all arena.managed containers now: {len(left_all)}"
    )

    return {
        "bench": "sandbox",
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "image": IMAGE,
        "image_id": img,
        "base_image": base,
        "build_s": round(build_s, 3),
        "games_per_match": args.games,
        "rounds": args.rounds,
        "container": per["container"],
        "local": per["local"],
        "latency_ratio": ratio,
        "probes": probes,
        "bars": bars,
        "leftover_containers": left,
        "arena_managed_containers_after": left_all,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=1, help="games per match (default 1)")
    parser.add_argument(
        "--rounds", type=int, default=5, help="container+local match pairs (default 5)"
    )
    parser.add_argument(
        "--no-probe", dest="probe", action="store_false", help="skip the start-up probes"
    )
    parser.add_argument(
        "--probe-reps", type=int, default=3, help="repetitions of each probe (default 3)"
    )
    parser.add_argument(
        "--rebuild", action="store_true", help=f"build {IMAGE} even if it looks up to date"
    )
    parser.add_argument(
        "--max-hands",
        type=int,
        default=30,
        help="cap on hands per game (random bots rarely reach 500 points: a full game is the "
        "preset's 200-hand cap, ~11,000 decisions, ~10 s); 0 = the preset's own cap (default 30)",
    )
    parser.add_argument("--json", action="store_true", help="print only the JSON line")
    args = parser.parse_args(argv)
    t = time.perf_counter()
    result = asyncio.run(main_async(args))
    result["bench_wall_s"] = round(time.perf_counter() - t, 2)
    if not args.json:
        wall, measuring = result["bench_wall_s"], result["measure_wall_s"]
        print(f"bench wall time {wall:.1f} s (measuring {measuring:.1f} s)")
    print(
        json.dumps(
            result,
            sort_keys=True,
            default=lambda x: None if isinstance(x, float) and math.isnan(x) else x,
        )
    )
    failed = [
        k
        for k, v in result["bars"].items()
        if not v
        and k
        in (
            "join_median_le_1_5s",
            "latency_ratio_p50_le_1_2",
            "latency_ratio_mean_le_1_2",
            "no_leftover_containers",
        )
    ]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
