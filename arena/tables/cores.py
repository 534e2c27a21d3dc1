"""How many cores this process may use: what ``concurrency = "auto"`` counts.

The CPUs it may run on (its affinity: ``taskset``, a container's cpuset)
capped by the CPU quota of its cgroup (``docker run --cpus``, a CI job's CPU
limit): a quota of 1.5 CPUs on a 16-core host is 1 core's worth of tables,
not 16.  Bots are charged wall time, so counting the host's cores there
would oversubscribe the quota and make bots time out.

The quota is read the way the kernel applies it: the process's own cgroup
(from ``/proc/self/cgroup``) and every ancestor up to the hierarchy's root,
the smallest limit wins; cgroup v2 (``cpu.max``) and v1
(``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``) alike.  The quota is rounded
down (at least 1): a table at the edge of the quota would run late.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

#: Where the cgroup file systems are mounted, and where a process finds its own cgroups.
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")

_Reader = Callable[[Path], float | None]


def usable_cores(cgroup_root: Path = CGROUP_ROOT, self_cgroup: Path = PROC_SELF_CGROUP) -> int:
    """The cores this process may use: its CPU affinity, capped by its cgroup's CPU quota; at least 1.

    ``cgroup_root`` and ``self_cgroup`` are parameters for tests (a fake cgroup file system).
    """
    cores = affinity_cores()
    quota = cpu_quota(cgroup_root, self_cgroup)
    if quota is not None:
        cores = min(cores, max(1, math.floor(quota)))
    return cores


def affinity_cores() -> int:
    """The CPUs this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def cpu_quota(cgroup_root: Path = CGROUP_ROOT, self_cgroup: Path = PROC_SELF_CGROUP) -> float | None:
    """CPUs' worth of time the process's cgroups allow (quota / period, the smallest on the way
    up), or None where there is no quota or it cannot be read (not Linux, no cgroup file system)."""
    try:
        lines = self_cgroup.read_text().splitlines()
    except OSError:
        return None
    limits = []
    for line in lines:
        # "hierarchy-id:controller,list:/path"; cgroup v2 is "0::/path".
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        hierarchy, controllers, path = fields
        if hierarchy == "0" and not controllers:
            mounts = [cgroup_root, cgroup_root / "unified"]  # v2 alone, or beside v1 ("hybrid")
            mount = next((m for m in mounts if (m / "cgroup.controllers").is_file()), None)
            reader: _Reader = _v2_limit
        elif "cpu" in controllers.split(","):
            mounts = [cgroup_root / controllers, cgroup_root / "cpu", cgroup_root / "cpu,cpuacct"]
            mount = next((m for m in mounts if m.is_dir()), None)
            reader = _v1_limit
        else:
            continue
        if mount is not None and (limit := _smallest_limit(mount, path, reader)) is not None:
            limits.append(limit)
    return min(limits) if limits else None


def _smallest_limit(mount: Path, path: str, reader: _Reader) -> float | None:
    """The smallest limit ``reader`` finds from the process's cgroup directory up to ``mount``."""
    parts = [p for p in path.split("/") if p]
    if ".." in parts:  # a cgroup outside this namespace's view: only the mount's own is visible
        parts = []
    # A container without a cgroup namespace lists its host path (/docker/ID) but has its own
    # cgroup mounted as the root: the deepest directory that exists is the process's.
    leaf = mount
    for skip in range(len(parts)):
        candidate = mount.joinpath(*parts[skip:])
        if candidate.is_dir():
            leaf = candidate
            break
    limits = []
    here = leaf
    while True:
        if (limit := reader(here)) is not None:
            limits.append(limit)
        if here == mount or here == here.parent:
            break
        here = here.parent
    return min(limits) if limits else None


def _v2_limit(directory: Path) -> float | None:
    """``cpu.max``: ``QUOTA PERIOD`` in µs, or ``max PERIOD`` (no limit)."""
    try:
        fields = (directory / "cpu.max").read_text().split()
    except OSError:
        return None
    return _ratio(fields[0], fields[1]) if len(fields) == 2 and fields[0] != "max" else None


def _v1_limit(directory: Path) -> float | None:
    """``cpu.cfs_quota_us`` (-1: no limit) over ``cpu.cfs_period_us``."""
    try:
        quota = (directory / "cpu.cfs_quota_us").read_text().strip()
        period = (directory / "cpu.cfs_period_us").read_text().strip()
    except OSError:
        return None
    return _ratio(quota, period)


def _ratio(quota: str, period: str) -> float | None:
    """quota / period for two positive whole numbers of µs; None for anything else (-1, garbage)."""
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None
