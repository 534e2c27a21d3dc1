"""Does the Docker engine wedge when containers end at once?  Old network setting against the new.

Docker 20.10 before 20.10.27 (Debian bookworm's docker.io, which
``scripts/docker-setup.sh`` installs) has a lock-order deadlock in libnetwork
(moby/libnetwork#2679): a container's exit clean-up and an endpoint's deletion
take the ``none`` network's lock and the controller's in opposite orders.  Every
container with ``network_mode="none"`` is an endpoint of that one network, so two
of them ending at once can meet it; the engine then answers pings and ``ps`` but
never starts or removes a container again.  A container with networking
disabled (the arena's setting, :data:`arena.sandbox.docker.NO_NETWORK`) has no
endpoint and never enters that code.

Each *round* does three things at the same instant, as a busy ladder does
when one table's seats end while the next table's start: the previous round's
waiting containers end by themselves (a file appears), its sleeping ones are
force-removed (the engine kills them), and ``--containers`` new containers are
started (half waiting on a file, half sleeping).  The deadlock's two sides are
a container joining the network (its hosts file asks ``getSvcRecords``) and
another's endpoint being deleted (``processEndpointDelete``).  After the round
the engine must start a fresh container within ``--probe`` seconds; one that
cannot is *wedged*: its goroutines are dumped, checked for the deadlock's two
functions, and the engine is restarted.  Both
settings run on an engine of this benchmark's own (never the machine's), the
same number of rounds, in turns of ``--block`` rounds so that load on the
machine falls on both alike.

    python bench/engine_wedge.py --rounds 300 --containers 8 --json wedge.json

Needs root and a Docker engine with the base image (``scripts/docker-setup.sh``).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import dataclasses
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from arena.rehearse.docker_host import own_engine
from arena.sandbox.docker import NO_NETWORK

BASE_IMAGE = os.environ.get("ARENA_BASE_IMAGE", "arena-base:bookworm")
#: The two settings compared: what the arena's seats had before, and what they have now.
SETTINGS: dict[str, dict[str, Any]] = {"old": {"network_mode": "none"}, "new": dict(NO_NETWORK)}
LABEL = "arena.engine-wedge"
#: The deadlock's two sides, as named in the goroutine dump of a wedged engine.
DEADLOCK_FRAMES = ("getSvcRecords", "processEndpointDelete")
WAIT_SCRIPT = "while [ ! -e /sync/go ]; do sleep 0.005; done"
SLEEP_SCRIPT = "sleep 600"


@dataclasses.dataclass
class Tally:
    """One setting's rounds: how many ran, how many wedged the engine, what the dumps said."""

    setting: str
    rounds: int = 0
    wedged: int = 0
    deadlock_in_dump: int = 0
    endpoints_seen: int = 0
    seconds: float = 0.0
    dumps: list[str] = dataclasses.field(default_factory=list)


def one_round(
    client: Any, setting: dict[str, Any], count: int, timeout: float, previous: Round | None
) -> tuple[bool, int, Round | None]:
    """End ``previous`` (half by themselves, half killed) while ``count`` new containers start.

    Returns whether every call answered within ``timeout``, how many of the new
    containers were endpoints of a Docker network, and the new round.
    """
    current = Round(Path(tempfile.mkdtemp(prefix="arena-wedge-")))
    scripts = [WAIT_SCRIPT if i % 2 == 0 else SLEEP_SCRIPT for i in range(count)]
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, 2 * count)) as pool:
            ending = []
            if previous is not None:
                (previous.sync / "go").touch()  # its waiting half end by themselves, now
                ending = [pool.submit(client.api.remove_container, cid, force=True) for cid in previous.ids]
            started = [pool.submit(_start, client, setting, current.sync, script) for script in scripts]
            for future in started:
                cid, networks = future.result(timeout=timeout)
                current.ids.append(cid)
                current.endpoints += bool(networks)
            for future in ending:
                future.result(timeout=timeout)
        return True, current.endpoints, current
    except Exception:  # noqa: BLE001 - a call that did not answer in time: the probe decides
        return False, current.endpoints, None
    finally:
        if previous is not None:
            shutil.rmtree(previous.sync, ignore_errors=True)


@dataclasses.dataclass
class Round:
    """The containers one round started, and the folder their waiting half watch."""

    sync: Path
    ids: list[str] = dataclasses.field(default_factory=list)
    endpoints: int = 0


def _start(client: Any, setting: dict[str, Any], sync: Path, script: str) -> tuple[str, dict[str, Any]]:
    container = client.api.create_container(
        BASE_IMAGE, ["sh", "-c", script], labels={LABEL: "1"},
        host_config=client.api.create_host_config(
            network_mode=setting["network_mode"], binds={str(sync): {"bind": "/sync", "mode": "ro"}}
        ),
        network_disabled=bool(setting.get("network_disabled")),
    )  # fmt: skip
    client.api.start(container["Id"])
    info = client.api.inspect_container(container["Id"])
    return container["Id"], dict(info["NetworkSettings"]["Networks"] or {})


def engine_starts(client: Any, timeout: float) -> bool:
    """Whether the engine starts (and removes) a fresh container within ``timeout`` seconds."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(_start_true, client, timeout)
        try:
            return future.result(timeout=timeout + 5)
        except Exception:  # noqa: BLE001 - no answer: wedged
            return False
        finally:
            pool.shutdown(wait=False, cancel_futures=True)


def _start_true(client: Any, timeout: float) -> bool:
    container = client.api.create_container(BASE_IMAGE, ["true"], labels={LABEL: "1"}, network_disabled=True)
    client.api.start(container["Id"])
    client.api.wait(container["Id"], timeout=timeout)
    client.api.remove_container(container["Id"], force=True)
    return True


def dump_and_restart(daemon: Any, keep: Path) -> str:
    """Dump the wedged engine's goroutines into ``keep``, then restart it; returns the dump's path."""
    def dumps() -> set[Path]:  # dockerd writes it under its exec root or its data root, by version
        return set(daemon.root.glob("*/goroutine-stacks-*.log"))

    before = dumps()
    with contextlib.suppress(ProcessLookupError):
        os.kill(daemon.pid, signal.SIGUSR1)
    deadline = time.monotonic() + 10
    found: list[Path] = []
    while time.monotonic() < deadline and not found:
        time.sleep(0.5)
        found = sorted(dumps() - before)
    kept = ""
    if found:
        keep.mkdir(parents=True, exist_ok=True)
        kept = str(shutil.copy2(found[-1], keep / found[-1].name))
    daemon.stop(timeout=20)
    daemon.start(timeout=120)
    client = daemon.client()
    try:
        for container in client.api.containers(all=True, filters={"label": LABEL}):
            with contextlib.suppress(Exception):
                client.api.remove_container(container["Id"], force=True)
    finally:
        client.close()
    return kept


def run_block(daemon: Any, tally: Tally, rounds: int, args: argparse.Namespace) -> None:
    """``rounds`` rounds of one setting on ``daemon``; wedges counted and mended."""
    setting = SETTINGS[tally.setting]
    client = daemon.client()
    previous: Round | None = None
    try:
        for _ in range(rounds):
            began = time.monotonic()
            answered, endpoints, previous = one_round(client, setting, args.containers, args.timeout, previous)
            tally.rounds += 1
            tally.endpoints_seen += endpoints
            if not answered and not engine_starts(client, args.probe):
                tally.wedged += 1
                client.close()
                dump = dump_and_restart(daemon, Path(args.keep))
                tally.dumps.append(dump)
                if dump and all(frame in Path(dump).read_text(errors="replace") for frame in DEADLOCK_FRAMES):
                    tally.deadlock_in_dump += 1
                client = daemon.client()
                print(f"  {tally.setting}: round {tally.rounds} wedged the engine (dump: {dump or 'none'})", flush=True)
            tally.seconds += time.monotonic() - began
        if previous is not None:  # the block's last round ends outside the count
            one_round(client, setting, 0, args.timeout, previous)
    finally:
        client.close()


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the own engine is removed on a TERM too
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300, help="rounds per setting")
    parser.add_argument("--containers", type=int, default=8, help="containers ending at once in a round")
    parser.add_argument("--block", type=int, default=25, help="rounds of one setting before the other's turn")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds a call of a round may take")
    parser.add_argument("--probe", type=float, default=30.0, help="seconds a fresh container may take to start")
    parser.add_argument("--settings", default="old,new", help="which settings, in turn (old, new)")
    parser.add_argument("--keep", default="bench/runs/engine-wedge", help="where wedged engines' dumps go")
    parser.add_argument("--json", dest="json_file", help="write the tallies here as JSON")
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.settings.split(",") if name.strip()]
    unknown = [name for name in names if name not in SETTINGS]
    if unknown:
        parser.error(f"unknown setting(s) {unknown}: choose from {sorted(SETTINGS)}")
    tallies = {name: Tally(name) for name in names}
    with own_engine(BASE_IMAGE) as daemon:
        probe = daemon.client()
        version = str(probe.version().get("Version"))
        probe.close()
        print(f"engine {version} (of this benchmark's own), {args.containers} containers a round, "
              f"{args.rounds} rounds per setting", flush=True)  # fmt: skip
        while any(t.rounds < args.rounds for t in tallies.values()):
            for tally in tallies.values():
                run_block(daemon, tally, min(args.block, args.rounds - tally.rounds), args)
            print("  " + "; ".join(f"{t.setting}: {t.rounds} rounds, {t.wedged} wedged" for t in tallies.values()), flush=True)
    report = {"engine": version, "containers": args.containers, "rounds": args.rounds,
              "settings": {name: dataclasses.asdict(t) for name, t in tallies.items()}}  # fmt: skip
    for t in tallies.values():
        per = t.seconds / max(1, t.rounds)
        print(f"{t.setting:>4}: {t.wedged} wedged in {t.rounds} rounds of {args.containers} containers "
              f"({t.deadlock_in_dump} dumps show the libnetwork deadlock; {t.endpoints_seen} endpoints seen; "
              f"{per:.2f} s a round)")  # fmt: skip
    if args.json_file:
        Path(args.json_file).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
