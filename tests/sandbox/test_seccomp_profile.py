"""The arena's seccomp profile and masked paths as data (no engine needed; tests/sandbox/test_seat_leaks.py runs them)."""

from __future__ import annotations

import json

from arena.sandbox.docker import ContainerLimits, container_settings, masked_paths, seccomp_profile

#: System calls that reach host-wide state no file mask covers (issue 24.1).
REFUSED = {
    "io_setup", "io_submit", "io_getevents", "io_cancel", "io_destroy", "io_pgetevents", "io_pgetevents_time64",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "sysinfo",
}  # fmt: skip


def test_the_profile_allows_none_of_the_refused_calls_and_keeps_dockers_rules():
    profile = json.loads(seccomp_profile())
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO"
    allowed = {name for rule in profile["syscalls"] if rule["action"] == "SCMP_ACT_ALLOW" for name in rule["names"]}
    assert not allowed & REFUSED, allowed & REFUSED
    refusing = [rule for rule in profile["syscalls"] if REFUSED <= set(rule["names"])]
    assert refusing and refusing[0]["action"] == "SCMP_ACT_ERRNO" and refusing[0]["errnoRet"] == 38
    # Docker's default otherwise: ordinary calls allowed, namespace and mount calls only with CAP_SYS_ADMIN.
    assert {"read", "write", "clone", "execve", "futex", "epoll_wait"} <= allowed
    admin = next(rule for rule in profile["syscalls"] if "unshare" in rule["names"])
    assert admin["includes"] == {"caps": ["CAP_SYS_ADMIN"]}


def test_every_seat_gets_the_profile_no_health_check_no_log_driver_and_neutral_image_labels(tmp_path):
    settings = container_settings(
        "img", {}, tmp_path, ContainerLimits(), {"arena.run": "r1"},
        image_labels={"com.docker.compose.project": "victim", "arena.run": "theirs", "arena.managed": "0"},
    )  # fmt: skip
    assert f"seccomp={seccomp_profile()}" in settings["security_opt"]
    assert "no-new-privileges" in settings["security_opt"]
    assert settings["healthcheck"] == {"test": ["NONE"]}
    assert settings["log_config"]["type"] == "none"
    assert settings["shm_size"] == "1m"
    assert settings["labels"] == {"com.docker.compose.project": "", "arena.run": "r1", "arena.managed": "1"}


def test_masks_cover_proc_sys_and_the_host_sysfs_but_not_the_seats_own():
    paths = masked_paths()
    assert {"/proc/sys", "/proc/cmdline", "/proc/partitions", "/sys/devices", "/sys/kernel", "/sys/fs/ext4"} <= set(paths)
    assert "/sys/fs/cgroup" not in paths and "/sys/class" not in paths
