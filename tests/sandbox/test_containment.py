"""Containment on a real Docker engine: image volumes, run labels, start failures, descriptors.

Each test reproduces an attack or fault found on the first version (see
docs/reliability.md, "Containment"): it failed there and shows it contained now.
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from arena.match import GameOutcome, MatchSpec, TimeControl, game_seeds
from arena.referee.botspec import BotSpec
from arena.referee.local_match import MatchConfig, play_seated, run_match
from arena.sandbox.build import build_image
from arena.sandbox.docker import LABEL, MATCH_LABEL, RUN_LABEL, DockerProcess, prune
from arena_sdk.engine import resolve_ruleset
from docker_support import BASE_IMAGE, TEST_LABEL, TEST_RUN, own_containers

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]
PROBE = REPO / "tests" / "sandbox" / "probe_bot"
RANDOM_CMD = f"python {REPO / 'example_bots' / 'random' / 'bot.py'}"
FAST = TimeControl(move_s=1.0, bank_s=5.0, hard_cap_s=10.0)
VOLUME_IMAGE = "arena-probe-volumes:test"
NOEXEC_IMAGE = "arena-probe-noexec:test"
SYSFS_IMAGE = "arena-probe-sysfs:test"


def probe_variant(root: Path, name: str, extra: str) -> Path:
    """The probe bot with ``extra`` lines appended to its Dockerfile."""
    source = root / name
    shutil.copytree(PROBE, source)
    with (source / "Dockerfile").open("a") as f:
        f.write(extra)
    return source


@pytest.fixture(scope="module")
def variants(docker: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("variants")
    # /data holds a file in the image: a VOLUME copies it into a fresh writable volume.
    volumes = probe_variant(root, "volumes", "USER root\nRUN mkdir -p /data && echo x > /data/seed\nUSER 10001\nVOLUME /data /cache\n")
    # trusted: `arena bot build` refuses VOLUME in a bot's Dockerfile; this image stands for one built elsewhere.
    build_image(volumes, tag=VOLUME_IMAGE, base_image=BASE_IMAGE, client=docker, trusted=True)
    noexec = probe_variant(root, "noexec", 'ENTRYPOINT ["/no/such/bot"]\n')
    build_image(noexec, tag=NOEXEC_IMAGE, base_image=BASE_IMAGE, client=docker)
    return {"volumes": VOLUME_IMAGE, "noexec": NOEXEC_IMAGE}


def match(tmp_path: Path, *bots: BotSpec, games: int = 1, match_id: str = "ct") -> Any:
    config = MatchConfig(
        bots=bots,
        rules=resolve_ruleset("pagat", {"max_hands": "1"}),
        games=games,
        seed="containment",
        time_control=FAST,
        out_dir=tmp_path / "out",
        match_id=match_id,
        start_timeout=60.0,
    )
    return asyncio.run(asyncio.wait_for(run_match(config), 240))


# ------------------------------------------------------------------ #9.3 image-declared volumes


def test_an_image_volume_is_no_writable_volume_and_nothing_is_left(docker, variants, tmp_path):
    async def scenario() -> tuple[list[dict[str, Any]], str]:
        env = {"ARENA_PROBE": "write", "ARENA_PROBE_PATHS": "/data/x,/cache/x,/tmp/x"}
        proc = await DockerProcess.start(docker, variants["volumes"], env, tmp_path, log_path=tmp_path / "probe.log")
        mounts = docker.api.inspect_container(proc.container.id)["Mounts"]
        for _ in range(300):
            if proc.exited():
                break
            await asyncio.sleep(0.1)
        await proc.stop()
        return mounts, (tmp_path / "probe.log").read_text()

    mounts, log = asyncio.run(scenario())
    volumes = [m["Name"] for m in mounts if m.get("Type") == "volume"]
    left = [name for name in volumes if docker.api.volumes(filters={"name": name}).get("Volumes")]
    result = json.loads([line for line in log.splitlines() if line.startswith("{")][-1])["results"]
    assert volumes == [], f"the seat got volumes: {volumes} (left on the host: {left})"
    assert result["/data/x"].startswith("OSError:30") and result["/cache/x"].startswith("OSError:30"), result
    assert result["/tmp/x"] == "written"
    assert sorted(m["Destination"] for m in mounts if m.get("Type") == "bind" and not m["Destination"].startswith("/proc/")) == ["/arena"]


def test_bot_check_reports_image_volumes(variants, run_cli):
    result = run_cli("bot", "check", variants["volumes"], "--json", timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    verdict = json.loads(result.stdout)
    assert verdict["volumes"] == ["/cache", "/data"]
    text = run_cli("bot", "check", variants["volumes"], timeout=240)
    assert "VOLUME" in text.stdout and "/data" in text.stdout, text.stdout


def test_prune_removes_a_leftover_container_with_its_volumes(docker, variants, run_cli):
    run = f"prune-{uuid.uuid4().hex[:8]}"
    labels = {LABEL: "1", RUN_LABEL: run, TEST_LABEL: TEST_RUN}
    created = docker.api.create_container(variants["volumes"], labels=labels, host_config=docker.api.create_host_config(network_mode="none"))
    volumes = [m["Name"] for m in docker.api.inspect_container(created["Id"])["Mounts"] if m.get("Type") == "volume"]
    assert len(volumes) == 2, "an older version's leftover: the image's two volumes"
    result = run_cli("sandbox", "prune", "--run", run, "--json")
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["removed"]) == 1
    assert not own_containers(docker, label=[f"{RUN_LABEL}={run}"])
    assert not [v for v in volumes if docker.api.volumes(filters={"name": v}).get("Volumes")], "its volumes went too"


# ------------------------------------------------------------------ #9.7 run-scoped labels


def test_two_runs_with_the_same_tournament_name_never_touch_each_others_containers(docker, images, tmp_path):
    run_a, run_b = f"a-{uuid.uuid4().hex[:8]}", f"b-{uuid.uuid4().hex[:8]}"
    table = f"same-name-{os.getpid()}/p000-d000-t1"

    async def scenario() -> tuple[list[str], str, list[str]]:
        # Run A plays: a running seat.  Run B, same tournament name, prunes "its" leftovers at start.
        env = {"ARENA_ADDRESS": "unix:/arena/none.sock", "ARENA_TOKEN": "x" * 16}
        seat_a = await DockerProcess.start(docker, images["probe"], env, tmp_path, labels={MATCH_LABEL: table, RUN_LABEL: run_a})
        try:
            leftover_b = docker.api.create_container(
                images["probe"], labels={LABEL: "1", MATCH_LABEL: table, RUN_LABEL: run_b, TEST_LABEL: TEST_RUN},
                host_config=docker.api.create_host_config(network_mode="none"),
            )  # fmt: skip
            removed_b = await asyncio.to_thread(prune, docker, match_prefix=f"same-name-{os.getpid()}/", run=run_b, include_running=True)
            await asyncio.sleep(0.5)
            state_a = docker.api.inspect_container(seat_a.container.id)["State"]["Status"]
            removed_a = await asyncio.to_thread(prune, docker, run=run_a, include_running=True)
            return removed_b, state_a, [leftover_b["Id"], *removed_a]
        finally:
            await seat_a.stop()

    removed_b, state_a, rest = asyncio.run(scenario())
    assert len(removed_b) == 1, "run B removed its own leftover"
    assert state_a == "running", "run A's seat was not touched by run B"
    assert len(rest) == 2, "prune(run=A) removed A's container"
    assert not own_containers(docker, label=[f"{MATCH_LABEL}={table}"])


def test_play_seated_labels_every_container_and_reuses_the_client(docker, images, tmp_path):
    run = f"labels-{uuid.uuid4().hex[:8]}"
    spec = MatchSpec(
        match_id=f"labels-{os.getpid()}", rules=resolve_ruleset("pagat", {"max_hands": "1"}),
        deal_seeds=tuple(game_seeds("labels", 1)), time_control=FAST,
    )  # fmt: skip
    seen: list[int] = []

    def on_game(game: GameOutcome) -> None:  # the seats are still up at the end of a game
        seen.append(len(own_containers(docker, label=[f"{RUN_LABEL}={run}"])))

    random_image = BotSpec("docker", images["random"])
    hosted = asyncio.run(asyncio.wait_for(play_seated(
        spec, [random_image, BotSpec("cmd", RANDOM_CMD), random_image, BotSpec("cmd", RANDOM_CMD)],
        log_dir=tmp_path / "logs", client=docker, labels={RUN_LABEL: run}, on_game_end=on_game,
    ), 120))  # fmt: skip
    assert [g.ending for g in hosted.outcome.games] in (["max_hands"], ["target"])
    assert seen == [2], "both container seats carry the run's label"
    assert not own_containers(docker, label=[f"{RUN_LABEL}={run}"])
    docker.ping()  # the caller's client is still open (play_seated does not close what it did not open)


# ------------------------------------------------------------------ #9.2 a socket per seat


def test_a_seat_container_sees_only_its_own_socket(docker, images, tmp_path):
    """Each seat mounts only its own socket directory: no other seat's socket to flood (#9.2)."""
    run = f"sockets-{uuid.uuid4().hex[:8]}"
    spec = MatchSpec(
        match_id=f"sockets-{os.getpid()}", rules=resolve_ruleset("pagat", {"max_hands": "1"}),
        deal_seeds=tuple(game_seeds("sockets", 1)), time_control=FAST,
    )  # fmt: skip
    mounts: dict[str, str] = {}

    def on_game(game: GameOutcome) -> None:  # the seats are still up at the end of a game
        for c in own_containers(docker, label=[f"{RUN_LABEL}={run}"]):
            seat = c["Labels"]["arena.seat"]
            mounts[seat] = next(m["Source"] for m in c["Mounts"] if m["Destination"] == "/arena")

    probe = BotSpec("docker", images["probe"], (("ARENA_PROBE", "sockets"),))
    hosted = asyncio.run(asyncio.wait_for(play_seated(
        spec, [probe, BotSpec("cmd", RANDOM_CMD), probe, BotSpec("cmd", RANDOM_CMD)],
        log_dir=tmp_path / "logs", client=docker, labels={RUN_LABEL: run}, on_game_end=on_game,
    ), 120))  # fmt: skip
    game = hosted.outcome.games[0]
    assert game.ending in ("max_hands", "target"), (game.ending, game.forfeit, game.void)
    assert hosted.outcome.seat_names[0] == hosted.outcome.seat_names[2] == "probe"
    for seat, letter in ((0, "N"), (2, "S")):
        lines = [json.loads(line) for line in (tmp_path / "logs" / f"seat{seat}.log").read_text().splitlines()
                 if line.startswith("{")]  # fmt: skip
        seen = next(line for line in lines if line.get("probe") == "sockets")
        # Its own socket, at the address every image expects; nothing of another seat's.
        assert seen["seen"] == ["/arena/referee.sock"], seen
        assert seen["address"] == "unix:/arena/referee.sock"
        # The host directory mounted at /arena is this seat's own.
        assert Path(mounts[str(seat)]).name == f"seat-{letter}", mounts
    assert mounts["0"] != mounts["2"] and Path(mounts["0"]).parent == Path(mounts["2"]).parent
    assert not own_containers(docker, label=[f"{RUN_LABEL}={run}"])


# ------------------------------------------------------------------ a seat that cannot start


def test_a_container_that_cannot_start_is_its_seats_crash_and_the_others_are_stopped(docker, variants, images, tmp_path):
    match_id = f"noexec-{os.getpid()}"
    report = match(tmp_path, BotSpec("docker", variants["noexec"]), BotSpec("docker", images["random"]), match_id=match_id)
    game = report.games[0]
    assert game.ending == "forfeit:crash", (game.ending, game.void)
    assert game.forfeit["teams"] == ["NS"]
    assert "did not start" in game.forfeit["detail"], game.forfeit["detail"]
    assert not own_containers(docker, label=[f"{MATCH_LABEL}={match_id}"]), "started seats stopped, the failed one removed"


# ------------------------------------------------------------------ #16.6 one client per run, closed


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_descriptors_stay_flat_over_many_tables(docker, images, tmp_path):
    """Each table without a client opens one and closes it; ~27 descriptors a table leaked before."""
    bots = [BotSpec("docker", images["random"]), *[BotSpec("cmd", RANDOM_CMD)] * 3]

    async def tables(first: int, count: int) -> None:
        for t in range(first, first + count):
            spec = MatchSpec(
                match_id=f"fd-{os.getpid()}-{t}", rules=resolve_ruleset("pagat", {"max_hands": "1"}),
                deal_seeds=tuple(game_seeds(f"fd{t}", 1)), time_control=FAST,
            )  # fmt: skip
            hosted = await play_seated(spec, bots, log_dir=tmp_path / f"t{t}", start_timeout=60)
            assert hosted.outcome.games[0].void is None

    asyncio.run(tables(0, 2))  # warm up: gRPC, thread pools, the wheel of imports
    before = open_descriptors()
    asyncio.run(tables(2, 6))
    after = open_descriptors()
    print(f"\ndescriptors: {before} before, {after} after 6 more tables")
    assert after - before <= 3, f"{after - before} descriptors more after 6 tables"


# ------------------------------------------------------------------ #9.4 host-wide counters in /sys

#: Host-wide counters of sysfs a seat could watch (or drive) to signal its partner:
#: per-NUMA-node memory, per-disk I/O, per-CPU idle time.
SYSFS_COUNTERS = (
    "/sys/devices/system/node/node*/meminfo", "/sys/devices/system/node/node*/vmstat",
    "/sys/devices/system/node/node*/numastat", "/sys/block/*/stat", "/sys/class/block/*/stat",
    "/sys/dev/block/*/stat", "/sys/devices/system/cpu/cpu*/cpuidle/state*/usage",
    "/sys/devices/system/cpu/cpu*/cpuidle/state*/time",
)  # fmt: skip

SYSFS_PROBE = """\
import glob, json, os, sys
found = {}
for pattern in sys.argv[1:] + os.environ["PROBE_PATHS"].split(","):
    for path in glob.glob(pattern):
        try:
            with open(path) as f:
                found[path] = f.read(200)
        except OSError as exc:
            found[path] = f"OSError:{exc.errno}"
print(json.dumps({"found": found}), flush=True)
"""


def host_counter_files() -> list[str]:
    """The runner's own counter files: each disk's stat by its real path too (not only via /sys/block)."""
    disks = [os.path.realpath(d) + "/stat" for d in glob.glob("/sys/class/block/*")]
    return sorted({*disks, *(p for pattern in SYSFS_COUNTERS for p in glob.glob(pattern))})


def test_host_wide_sysfs_counters_are_hidden_from_seats(docker, tmp_path):
    """Node memory, disk I/O and CPU idle counters of the host read as nothing inside a seat."""
    on_host = host_counter_files()
    assert on_host, "this machine has none of the counters: the test would show nothing"
    source = probe_variant(tmp_path, "sysfs", 'COPY sysfs_probe.py /bot/sysfs_probe.py\nENTRYPOINT ["/venv/bin/python", "/bot/sysfs_probe.py"]\n')
    (source / "sysfs_probe.py").write_text(SYSFS_PROBE)
    build_image(source, tag=SYSFS_IMAGE, base_image=BASE_IMAGE, client=docker)

    async def scenario() -> str:
        env = {"PROBE_PATHS": ",".join([*SYSFS_COUNTERS, *on_host])}
        proc = await DockerProcess.start(docker, SYSFS_IMAGE, env, tmp_path, log_path=tmp_path / "sysfs.log")
        for _ in range(300):
            if proc.exited():
                break
            await asyncio.sleep(0.1)
        await proc.stop()
        return (tmp_path / "sysfs.log").read_text()

    log = asyncio.run(scenario())
    found = json.loads([line for line in log.splitlines() if line.startswith("{")][-1])["found"]
    readable = {path: text for path, text in found.items() if text and not text.startswith("OSError")}
    assert not readable, f"a seat reads host-wide counters: {sorted(readable)[:5]} ... ({len(readable)} files)"
