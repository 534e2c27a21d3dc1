"""Round 3 of the red team (issue 24): what still leaked out of a seat's container, and what stays shut.

Each test runs real containers under the real Docker engine with the
platform's own seat settings (:meth:`DockerProcess.start`); each test of a
leak failed on the code before the fix (docs/reliability.md, "Containment,
round 3"):

- host-wide kernel counters partners signalled through (``io_setup`` and
  ``/proc/sys/fs/aio-nr``, ``/proc/sys/kernel/pty/nr``, ``sysinfo``,
  ``io_uring``) and host files (``/proc/cmdline``, ``/proc/partitions``);
- an image's ``HEALTHCHECK`` and a stdout flood that made Docker work for
  the seat (and dropped the start of its log);
- image labels that made a seat findable by someone else's filters;
- the static ``/proc`` folder each table process left in the temp directory;
- a 64 MiB ``/dev/shm`` beyond the ``/tmp`` cap.

What was already contained is checked again (a regression test, it passed
before too): no capabilities, ``EPERM`` for
``mount``/``unshare``/``setns``/``bpf``/``perf_event_open``/``userfaultfd``/
``keyctl``, ``noexec`` ``/tmp`` and ``/dev/shm``.
"""

from __future__ import annotations

import asyncio
import errno
import io
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from docker_support import BASE_IMAGE, TEST_LABEL, TEST_RUN, build_once

from arena.sandbox.build import build_image
from arena.sandbox.docker import LABEL, MATCH_LABEL, RUN_LABEL, ContainerLimits, DockerProcess

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]
PROBE = REPO / "tests" / "sandbox" / "probe_bot"
PROBE_IMAGE = "arena-probe:test"
HEALTH_IMAGE = "arena-probe-health:test"
LABELS_IMAGE = "arena-probe-labels:test"
#: Labels an image declares to be caught by other people's filters (and to pass as the platform's).
FOREIGN_LABELS = {
    TEST_LABEL: "someone-elses-test-run",
    "com.docker.compose.project": "victim",
    "com.docker.compose.service": "db",
    RUN_LABEL: "someone-elses-run",
    MATCH_LABEL: "someone-elses-match",
    LABEL: "0",
    "org.example.cleanup": "yes",
}


@pytest.fixture(scope="module")
def probe(docker: Any) -> str:
    """The probe bot's image (only it: the session's ``images`` builds four)."""
    return build_once(docker, PROBE_IMAGE, lambda: build_image(PROBE, tag=PROBE_IMAGE, base_image=BASE_IMAGE, client=docker))


def derived_image(docker: Any, base: str, lines: str, tag: str) -> str:
    """``base`` with ``lines`` of Dockerfile on top, built by the engine itself (offline).

    Not through ``arena bot build``, which refuses a ``HEALTHCHECK``: an image
    built elsewhere, or a base image, can still carry one.
    """
    dockerfile = f"FROM {base}\n{lines}".encode()
    docker.images.build(fileobj=io.BytesIO(dockerfile), tag=tag, network_mode="none", rm=True, pull=False)
    return tag


async def wait_exit(proc: DockerProcess, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not proc.exited() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)


def probe_report(log: Path, probe: str) -> dict[str, Any]:
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    found = [line for line in lines if line.get("probe") == probe]
    assert found, log.read_text()[-2000:]
    return found[-1]


# ------------------------------------------------------------------ 24.1 kernel counters, 24.8 host files


@pytest.fixture(scope="module")
def kernel_report(docker: Any, probe: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The kernel probe's report from one seat container (the platform's default limits)."""
    tmp_path = tmp_path_factory.mktemp("kernel")

    async def scenario() -> None:
        proc = await DockerProcess.start(docker, probe, {"ARENA_PROBE": "kernel"}, tmp_path, log_path=tmp_path / "kernel.log")
        try:
            await wait_exit(proc, 120)
        finally:
            await proc.stop()

    asyncio.run(scenario())
    return probe_report(tmp_path / "kernel.log", "kernel")


def test_aio_io_uring_and_sysinfo_are_refused(kernel_report):
    """io_setup filled the host-wide aio-nr (294-364 bits/s between partners); sysinfo gave the host's process count."""
    refused = {
        name: kernel_report["errnos"][name]
        for name in ("io_setup", "io_destroy", "io_getevents", "io_submit", "io_cancel", "io_pgetevents",
                     "io_uring_setup", "io_uring_enter", "io_uring_register", "sysinfo")
    }  # fmt: skip
    assert all(code in (errno.EPERM, errno.ENOSYS) for code in refused.values()), refused


def test_host_wide_files_are_hidden(kernel_report):
    """aio-nr, pty/nr, inode-state, cgroups and crypto counters, the kernel command line and the host's disks."""
    shown = {path: text for path, text in kernel_report["files"].items() if text and not text.startswith("OSError")}
    assert not shown, shown
    # Nothing of /proc/sys and /sys is readable but the seat's own cgroup and network namespace, and
    # the class attributes of /sys/class (its links into /sys/devices lead to nothing).
    readable = [path for path in kernel_report["readable"] if not path.startswith("/sys/class/")]
    assert not readable, f"{kernel_report['readable_count']} files, e.g. {readable[:10]}"
    assert kernel_report["cpus"] == os.cpu_count(), "the seat still counts the machine's CPUs"


def test_what_was_contained_stays_contained(kernel_report):
    errnos = kernel_report["errnos"]
    blocked = {name: errnos[name] for name in ("mount", "umount2", "unshare", "setns", "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key")}
    assert set(blocked.values()) == {errno.EPERM}, blocked
    assert all(value == "0000000000000000" for value in kernel_report["caps"].values()), kernel_report["caps"]
    assert kernel_report["executed"] == {"/tmp": f"OSError:{errno.EACCES}", "/dev/shm": f"OSError:{errno.EACCES}"}


def test_dev_shm_is_small(kernel_report):
    """Docker's default /dev/shm was 64 MiB of writable memory beyond the /tmp cap."""
    assert kernel_report["shm_bytes"] <= 1 << 20, kernel_report["shm_bytes"]


# ------------------------------------------------------------------ 24.7 Docker's own work for a seat


def test_an_image_healthcheck_is_switched_off(docker, probe, tmp_path):
    """``HEALTHCHECK --interval=1ms`` made dockerd and containerd run a process every millisecond."""
    health = 'HEALTHCHECK --interval=1ms --timeout=1s --retries=1 CMD ["/venv/bin/python", "-c", "0"]\n'
    derived_image(docker, probe, health, HEALTH_IMAGE)
    assert docker.api.inspect_image(HEALTH_IMAGE)["Config"]["Healthcheck"]["Interval"] == 1_000_000

    async def scenario() -> dict[str, Any]:
        env = {"ARENA_PROBE": "flood", "ARENA_PROBE_BYTES": "0", "ARENA_PROBE_LINGER": "30"}
        proc = await DockerProcess.start(docker, HEALTH_IMAGE, env, tmp_path)
        try:
            await asyncio.sleep(1.0)
            return dict(docker.api.inspect_container(proc.container.id))
        finally:
            await proc.stop(grace=0.5)

    attrs = asyncio.run(scenario())
    assert attrs["Config"].get("Healthcheck", {}).get("Test") == ["NONE"], attrs["Config"].get("Healthcheck")
    assert "Health" not in attrs["State"], attrs["State"].get("Health")


def test_a_log_flood_keeps_the_first_bytes_up_to_the_cap(docker, probe, tmp_path):
    """Docker's log rotation kept the end of a flood (the first ~1 MB was lost); the cap must keep the start."""
    total, cap = 4 << 20, 256 << 10
    expected = b"".join(f"line {n:08d} ".encode() + b"x" * 49 + b"\n" for n in range(total // 64))

    async def scenario() -> None:
        env = {"ARENA_PROBE": "flood", "ARENA_PROBE_BYTES": str(total)}
        limits = ContainerLimits(log_cap_bytes=cap)
        proc = await DockerProcess.start(docker, probe, env, tmp_path, limits=limits, log_path=tmp_path / "flood.log")
        try:
            # The rest of the flood is drained slowly (the seat's writes block): stop once the log is full.
            deadline = time.monotonic() + 120
            while not proc.exited() and time.monotonic() < deadline:
                if (tmp_path / "flood.log").exists() and (tmp_path / "flood.log").stat().st_size >= cap:
                    break
                await asyncio.sleep(0.1)
        finally:
            await proc.stop(grace=0.5)

    asyncio.run(scenario())
    log = (tmp_path / "flood.log").read_bytes()
    kept, _, note = log.partition(b"\n[arena: ")
    assert kept[:64] == expected[:64], kept[:200]
    assert kept == expected[:cap], f"{len(kept)} bytes kept, not the first {cap} of the output"
    assert note == f"output after the first {cap} bytes dropped]\n".encode(), note[:200]


# ------------------------------------------------------------------ 24.8 labels, proc folders


def test_image_labels_never_make_a_seat_findable_by_others(docker, probe, tmp_path):
    """Containers inherit their image's labels: a seat must not be caught by someone else's filter or cleanup."""
    lines = "".join(f'LABEL {key}="{value}"\n' for key, value in FOREIGN_LABELS.items())
    derived_image(docker, probe, lines, LABELS_IMAGE)
    run = f"labels-{uuid.uuid4().hex[:8]}"

    async def scenario() -> tuple[dict[str, str], dict[str, int]]:
        env = {"ARENA_PROBE": "flood", "ARENA_PROBE_BYTES": "0", "ARENA_PROBE_LINGER": "30"}
        proc = await DockerProcess.start(docker, LABELS_IMAGE, env, tmp_path, labels={RUN_LABEL: run, MATCH_LABEL: f"{run}/t1"})
        try:
            labels = docker.api.inspect_container(proc.container.id)["Config"]["Labels"]
            caught = {
                f"{key}={value}": len(docker.api.containers(filters={"label": f"{key}={value}"}))
                for key, value in FOREIGN_LABELS.items()
            }
            return labels, caught
        finally:
            await proc.stop(grace=0.5)

    labels, caught = asyncio.run(scenario())
    assert labels[LABEL] == "1" and labels[RUN_LABEL] == run and labels[MATCH_LABEL] == f"{run}/t1"
    assert labels[TEST_LABEL] == TEST_RUN, "the platform's labels win"
    assert not any(caught.values()), caught


CHILD = """\
import asyncio, os, sys
from pathlib import Path
from arena.sandbox.docker import DockerProcess, docker_client

async def main():
    client = docker_client()
    proc = await DockerProcess.start(client, sys.argv[1], {"ARENA_PROBE": "exit"}, Path(sys.argv[2]))
    mounts = client.api.inspect_container(proc.container.id)["Mounts"]
    print(next(str(Path(m["Source"]).parent.parent) for m in mounts if m["Destination"] == "/proc/loadavg"), flush=True)
    while not proc.exited():
        await asyncio.sleep(0.1)
    await proc.stop()

asyncio.run(main())
os._exit(0)  # as a table process ends (multiprocessing): no atexit handlers
"""


def test_a_table_process_leaves_no_static_proc_folder(docker, probe, tmp_path):
    """Each table process left its /tmp/arena-proc-* folder behind (atexit does not run in them)."""
    temp = tmp_path / "temp"
    temp.mkdir()
    temp.chmod(0o755)
    # A stale folder of a process that is gone (the runner was killed): pruned by the next one.
    stale = temp / "arena-proc-999999999-stale"
    stale.mkdir()
    result = subprocess.run(
        [sys.executable, "-c", CHILD, probe, str(tmp_path)],
        check=False, capture_output=True, text=True, timeout=180, env={**os.environ, "TMPDIR": str(temp)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    used = Path(result.stdout.strip().splitlines()[-1])
    assert used.parent == temp, used
    assert not used.exists(), f"left behind: {sorted(p.name for p in temp.iterdir())}"
    assert not stale.exists(), "a dead process's folder is pruned"
    assert not list(temp.iterdir())
