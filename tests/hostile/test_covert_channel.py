"""Partners signalling through the host: host-wide counters are static, the CPU-timing channel is measured.

The red team's attack: two containers of one partnership; the sender changes
how many processes it keeps busy (one bit per slot), the receiver reads a
host-wide counter (``/proc/loadavg``) and decodes the bits.  Seats now see
static files for ``/proc/loadavg``, ``/proc/stat``, ``/proc/meminfo`` and
``/proc/uptime`` (and masked pressure, vmstat, interrupts ... files).

What is left cannot be closed on shared cores: the receiver's own speed (the
CPU-timing channel) and the ``sysinfo`` system call (host load averages and
process count; no file to mask).  The test measures them with the same
sender and receiver and prints bits per second (docs/reliability.md states
the figures); it asserts only what the platform controls: the counter files
never change.

Round 3 (issue 24): the red team's faster pair signalled through the
host-wide kernel counters ``/proc/sys/fs/aio-nr`` (``io_setup`` adds to it)
and ``/proc/sys/kernel/pty/nr`` (each open ``/dev/ptmx``) at 294-364 bits/s.
Seats now run under the arena's seccomp profile (no aio, no ``io_uring``, no
``sysinfo``) with ``/proc/sys`` masked: ``test_kernel_counters_carry_nothing``
measures that pair with 100 ms slots and asserts it decodes nothing.
"""

from __future__ import annotations

import asyncio
import errno
import json
import math
import random
import statistics
import time
from pathlib import Path
from typing import Any

import pytest
from docker_support import BASE_IMAGE

from arena.sandbox.build import build_image
from arena.sandbox.docker import ContainerLimits, DockerProcess

pytestmark = pytest.mark.docker

HERE = Path(__file__).resolve().parent
IMAGE = "arena-covert:test"
SLOT_S = 0.5
BITS = "".join(random.Random(20261201).sample("01" * 16, 32))  # 16 ones, 16 zeros, fixed order
STATIC_FILES = ("/proc/loadavg", "/proc/stat", "/proc/meminfo", "/proc/uptime")
#: The kernel-counter pair: 128 bits of 100 ms (up to 10 bits/s).  Shorter slots lose bits
#: when the machine is loaded (both sides run late); on a quieter machine the red team's
#: faster pair carried 294-364 bits/s.
KERNEL_SLOT_S = 0.1
KERNEL_BITS = "".join(random.Random(20261203).sample("01" * 64, 128))


def entropy(p: float) -> float:
    return 0.0 if p <= 0.0 or p >= 1.0 else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def channel(
    values: list[float], one_is_higher: bool = True, bits: str = BITS, slot_s: float = SLOT_S, midrange: bool = False
) -> tuple[float, float]:
    """Accuracy of decoding ``bits`` from ``values`` and the capacity in bits/s.

    The values are split at their median, or with ``midrange`` halfway
    between the lowest and the highest (a two-level signal, such as a counter
    the sender raises by a fixed amount, whose high slots may be more than
    half).  A binary symmetric channel with the observed error rate p carries
    1 - H(p) bits per slot.  32 bits: chance alone gives ~0.5 +- 0.09.
    """
    threshold = (min(values) + max(values)) / 2 if midrange else statistics.median(values)
    decoded = ["1" if (v > threshold if one_is_higher else v < threshold) else "0" for v in values]
    accuracy = sum(d == b for d, b in zip(decoded, bits, strict=True)) / len(bits)
    p = min(accuracy, 1 - accuracy)
    return accuracy, (1 - entropy(p)) / slot_s


async def run_pair(
    client: Any, socket_dir: Path, log_dir: Path, *, roles: tuple[str, str] = ("recv", "send"),
    bits: str = BITS, slot_s: float = SLOT_S, lead_s: float = 5.0,
) -> list[dict[str, Any]]:
    """Start the receiver and the sender as seats; return the receiver's per-slot lines."""
    start = time.time() + lead_s  # both containers are up well before (a start takes < 1 s)
    common = {"COVERT_START": f"{start:.3f}", "COVERT_SLOT": str(slot_s), "COVERT_BITS": bits}
    limits = ContainerLimits()
    receiver = await DockerProcess.start(
        client, IMAGE, {**common, "COVERT_ROLE": roles[0]}, socket_dir, limits=limits, log_path=log_dir / "recv.log"
    )
    try:
        sender = await DockerProcess.start(
            client, IMAGE, {**common, "COVERT_ROLE": roles[1]}, socket_dir, limits=limits, log_path=log_dir / "send.log"
        )
        try:
            deadline = start + len(bits) * slot_s + 60
            while not (receiver.exited() and sender.exited()) and time.time() < deadline:
                await asyncio.sleep(0.2)
        finally:
            await sender.stop()
    finally:
        await receiver.stop()
    lines = [json.loads(line) for line in (log_dir / "recv.log").read_text().splitlines() if line.startswith("{")]
    slots = [line for line in lines if "slot" in line]
    assert len(slots) == len(bits), (log_dir / "recv.log").read_text()[-2000:]
    return lines


def test_host_counters_are_static_and_the_timing_channel_is_measured(docker, tmp_path):
    build_image(HERE / "covert", tag=IMAGE, base_image=BASE_IMAGE, client=docker)
    socket_dir = tmp_path / "socket"
    socket_dir.mkdir()
    socket_dir.chmod(0o755)
    slots = asyncio.run(run_pair(docker, socket_dir, tmp_path))
    slots = [s for s in slots if "slot" in s]

    seen = {path: set() for path in STATIC_FILES}
    for slot in slots:
        for path in STATIC_FILES:
            seen[path].update(slot["distinct"][path])
            if slot["distinct_count"][path] > 3:
                seen[path].add(f"... {slot['distinct_count'][path]} values in one slot")
    measured = {
        "/proc/loadavg running count": channel([s["running"] or 0.0 for s in slots]),
        "sysinfo() 1-min load": channel([s["sysinfo_load"] for s in slots]),
        "sysinfo() process count": channel([s["sysinfo_procs"] for s in slots]),
        "CPU timing (receiver's own speed)": channel([s["speed"] for s in slots], one_is_higher=False),
    }
    print(f"\ncovert channel, {len(BITS)} bits, {SLOT_S:g} s a bit ({1 / SLOT_S:g} bits/s sent):")
    for name, (accuracy, rate) in measured.items():
        print(f"  {name:40s} decoded {accuracy:5.0%}   capacity {rate:.2f} bits/s")
    (tmp_path / "covert.json").write_text(json.dumps({k: list(v) for k, v in measured.items()}))

    changed = {path: sorted(values)[:3] for path, values in seen.items() if len(values) != 1}
    assert not changed, f"host-wide counters a seat can watch change: {changed}"
    assert seen["/proc/loadavg"] == {"0.00 0.00 0.00 1/1 1\n"}
    accuracy, _ = measured["/proc/loadavg running count"]
    assert accuracy == 0.5, "a constant counter carries nothing"


def test_kernel_counters_carry_nothing(docker, tmp_path):
    """aio-nr and pty/nr: 294-364 bits/s between two seats before; refused calls and masked files now."""
    build_image(HERE / "covert", tag=IMAGE, base_image=BASE_IMAGE, client=docker)
    socket_dir = tmp_path / "socket"
    socket_dir.mkdir()
    socket_dir.chmod(0o755)
    lines = asyncio.run(run_pair(
        docker, socket_dir, tmp_path, roles=("recv-kernel", "send-kernel"),
        bits=KERNEL_BITS, slot_s=KERNEL_SLOT_S, lead_s=8.0,
    ))  # fmt: skip
    seen = lines[0]
    slots = [line for line in lines if "slot" in line]
    sent = next(json.loads(line) for line in (tmp_path / "send.log").read_text().splitlines() if line.startswith("{"))
    measured = {
        counter: channel([s[counter] for s in slots], bits=KERNEL_BITS, slot_s=KERNEL_SLOT_S, midrange=True)
        for counter in ("aio", "pty")
    }
    print(f"\nkernel counters, {len(KERNEL_BITS)} bits, {KERNEL_SLOT_S * 1000:g} ms a bit ({1 / KERNEL_SLOT_S:g} bits/s sent):")
    print(f"  sender: {sent}; receiver reads: {seen}")
    for name, (accuracy, rate) in measured.items():
        print(f"  /proc/sys/{'fs/aio-nr' if name == 'aio' else 'kernel/pty/nr':28s} decoded {accuracy:5.0%}   capacity {rate:.2f} bits/s")
    (tmp_path / "kernel.json").write_text(json.dumps({k: list(v) for k, v in measured.items()}))

    assert sent["io_setup_errno"] in (errno.EPERM, errno.ENOSYS), sent
    assert not seen["aio_nr"].isdigit() and not seen["pty_nr"].isdigit(), seen
    assert seen["sysinfo"] == [-1, -1], "sysinfo() is refused"
    for name, (accuracy, _) in measured.items():
        assert accuracy == 0.5, f"{name}: a constant counter carries nothing"
