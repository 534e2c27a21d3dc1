"""Every image build bounded (issue 36): time, memory, CPU, disk, and the log it prints.

Real builds on the machine's engine.  A Dockerfile that passes the policy with
``RUN sleep 900`` held the only builder of a ladder for good; here it stops at
its timeout with one line, leaves none of its step containers, and the next
build goes through.  Each slow or noisy step holds a random word, so the
engine's layer cache cannot finish it from an earlier run.
"""

from __future__ import annotations

import re
import threading
import time
import tracemalloc
import uuid
from pathlib import Path
from typing import Any

import pytest
from docker_support import BASE_IMAGE, engine_or_skip

from arena.sandbox.build import LOG_KEEP_CHARS, BuildError, BuildInterrupted, build_image
from arena.sandbox.build_run import BuildLimits, LogTail

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1200)]

TAG = f"arena-buildlimits-test:{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def engine() -> Any:
    client = engine_or_skip("build limit tests")
    yield client
    for image in client.images.list(name=TAG.split(":")[0]):
        client.images.remove(image.id, force=True)
    client.close()


def bot_dir(root: Path, *steps: str) -> Path:
    """A bot directory whose Dockerfile (on the bot base) runs ``steps``, each made unique by a random word."""
    root.mkdir()
    word = uuid.uuid4().hex
    lines = ["ARG BOT_BASE=arena-bot-base", "FROM ${BOT_BASE}", *(f"RUN echo {word} && {step}" for step in steps)]
    (root / "Dockerfile").write_text("\n".join([*lines, "COPY bot.py /bot/", ""]))
    (root / "bot.py").write_text("print('a bot')\n")
    return root


def step_containers(lines: list[str]) -> list[str]:
    return [found[1] for line in lines if (found := re.search(r"---> Running in ([0-9a-f]+)", line))]


def existing(engine: Any, ids: list[str]) -> list[str]:
    return [i for i in ids if engine.api.containers(all=True, filters={"id": i})]


def test_a_build_past_its_timeout_stops_with_one_line_and_leaves_no_container(engine: Any, tmp_path: Path):
    source = bot_dir(tmp_path / "slow", "sleep 900")
    word = (source / "Dockerfile").read_text().split("echo ")[1].split()[0]
    lines: list[str] = []
    started = time.monotonic()
    with pytest.raises(BuildInterrupted) as stopped:
        build_image(source, tag=TAG, base_image=BASE_IMAGE, client=engine, on_line=lines.append,
                    build_limits=BuildLimits(timeout_s=6))  # fmt: skip
    waited = time.monotonic() - started
    assert str(stopped.value) == "build timed out after 6 s" and stopped.value.reason == "timeout"
    assert waited < 600, "the build was stopped, not waited for (its step sleeps 900 s)"
    ids = step_containers(lines)
    assert ids and word in "\n".join(lines), "the slow step had started"
    assert existing(engine, ids) == [], "the step containers were removed"
    leftover = [c for c in engine.api.containers(all=True) if word in str(c.get("Command", ""))]
    assert leftover == [], f"a container of the stopped build is still there: {leftover}"

    # The builder is free again: an honest build right after succeeds.
    honest = build_image(bot_dir(tmp_path / "honest", "true"), tag=TAG, base_image=BASE_IMAGE, client=engine,
                         build_limits=BuildLimits(timeout_s=300))  # fmt: skip
    assert engine.images.get(TAG).id == honest.image_id


def test_a_cancelled_build_stops_and_leaves_no_container(engine: Any, tmp_path: Path):
    cancel = threading.Event()
    lines: list[str] = []

    def on_line(line: str) -> None:
        lines.append(line)
        if "Running in" in line:
            cancel.set()

    with pytest.raises(BuildInterrupted) as stopped:
        build_image(bot_dir(tmp_path / "slow", "sleep 900"), tag=TAG, base_image=BASE_IMAGE, client=engine,
                    on_line=on_line, cancel=cancel)  # fmt: skip
    assert stopped.value.reason == "cancelled"
    ids = step_containers(lines)
    assert ids and existing(engine, ids) == []


def test_each_step_gets_the_memory_and_cpu_limits(engine: Any, tmp_path: Path):
    show = ("cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max "
            "/sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu.max 2>/dev/null || true")  # v1 or v2
    built = build_image(bot_dir(tmp_path / "show", show), tag=TAG, base_image=BASE_IMAGE, client=engine,
                        build_limits=BuildLimits(timeout_s=300, memory=96 << 20, cpus=0.5))  # fmt: skip
    assert str(96 << 20) in built.log, built.log
    assert "50000" in built.log, built.log  # 0.5 of a 100,000 us period (v1), or "50000 100000" (v2)


def test_a_step_over_the_memory_limit_fails_the_build(engine: Any, tmp_path: Path):
    hog = "/venv/bin/python -c 'b = bytearray(400 * 2**20); b[::4096] = b\"x\" * len(b[::4096])'"
    with pytest.raises(BuildError) as failed:
        build_image(bot_dir(tmp_path / "hog", hog), tag=TAG, base_image=BASE_IMAGE, client=engine,
                    build_limits=BuildLimits(timeout_s=300, memory=64 << 20))  # fmt: skip
    assert not isinstance(failed.value, BuildInterrupted)
    message = str(failed.value)
    assert "failed (exit code 137)" in message and "memory limit" in message, message  # the OOM killer, said so


def test_an_image_over_the_size_cap_is_refused_and_removed(engine: Any, tmp_path: Path):
    tag = f"{TAG}-big"
    base_size = int(engine.api.inspect_image(BASE_IMAGE)["Size"])
    cap = base_size + (120 << 20)  # the bot base adds its venv (~60 MiB); the step adds 200 MiB
    with pytest.raises(BuildError, match="over the cap of"):
        build_image(bot_dir(tmp_path / "big", "head -c 200m /dev/zero > /tmp/blob"), tag=tag, base_image=BASE_IMAGE,
                    client=engine, build_limits=BuildLimits(timeout_s=300, image_bytes=cap))  # fmt: skip
    assert engine.api.images(name=tag) == [], "the refused image's tag was removed"


def test_a_step_writing_past_the_disk_cap_is_stopped_while_it_runs(engine: Any, tmp_path: Path):
    base_size = int(engine.api.inspect_image(BASE_IMAGE)["Size"])
    cap = base_size + (120 << 20)
    lines: list[str] = []
    with pytest.raises(BuildInterrupted) as stopped:
        build_image(bot_dir(tmp_path / "fill", "head -c 600m /dev/zero > /tmp/blob && sleep 900"), tag=TAG,
                    base_image=BASE_IMAGE, client=engine, on_line=lines.append,
                    build_limits=BuildLimits(timeout_s=500, image_bytes=cap))  # fmt: skip
    assert stopped.value.reason == "disk" and "over the cap" in str(stopped.value), stopped.value
    assert existing(engine, step_containers(lines)) == []


def test_a_build_printing_tens_of_mib_keeps_a_bounded_log_in_bounded_memory(engine: Any, tmp_path: Path):
    noisy = "/venv/bin/python -c \"import sys; [sys.stdout.write('%07d ' % i + 'x' * 1015 + '\\n') for i in range(40 * 1024)]\""
    lines_seen = 0

    def on_line(line: str) -> None:
        nonlocal lines_seen
        lines_seen += 1

    tracemalloc.start()
    try:
        built = build_image(bot_dir(tmp_path / "noisy", noisy), tag=TAG, base_image=BASE_IMAGE, client=engine,
                            on_line=on_line, build_limits=BuildLimits(timeout_s=600))  # fmt: skip
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert lines_seen >= 40 * 1024, "every line of the 40 MiB reached on_line"
    assert len(built.log) <= LOG_KEEP_CHARS + 100, len(built.log)
    cut = int(re.match(r"\[\.\.\. (\d+) bytes of earlier output cut\]", built.log)[1])  # type: ignore[index]
    assert cut >= 39 * 2**20, cut
    assert "0040959 " in built.log, "the tail is the end of the output"
    assert peak < 24 * 2**20, f"the collector held {peak / 2**20:.0f} MiB for 40 MiB of output"


def test_log_tail_keeps_the_end_and_counts_the_cut():
    tail = LogTail(100)
    for i in range(10_000):
        tail.write(f"line {i:05d}\n")
    text = tail.text()
    assert text.endswith("line 09999\n") and tail.high_water <= 200 + 11
    cut = int(re.match(r"\[\.\.\. (\d+) bytes", text)[1])  # type: ignore[index]
    assert cut + len(text.split("\n", 1)[1]) == 10_000 * 11
    big = LogTail(10)
    big.write("é" * 1000)
    assert big.text().endswith("é" * 10) and big.cut_bytes == 990 * 2


def test_two_builds_at_once_on_one_client_an_honest_one_does_not_wait_behind_a_slow_one(engine: Any, tmp_path: Path):
    """The slow build holds no lock the honest one needs: the honest one ends while the slow one still runs."""
    cancel = threading.Event()
    slow_ended: list[BaseException] = []
    slow_started = threading.Event()

    def slow() -> None:
        try:
            build_image(bot_dir(tmp_path / "slow", "sleep 900"), tag=f"{TAG}-slow", base_image=BASE_IMAGE, client=engine,
                        on_line=lambda line: slow_started.set() if "Running in" in line else None, cancel=cancel)  # fmt: skip
        except BaseException as exc:  # noqa: BLE001 - the test looks at it
            slow_ended.append(exc)

    worker = threading.Thread(target=slow, daemon=True)
    worker.start()
    assert slow_started.wait(600), "the slow build reached its step"
    honest = build_image(bot_dir(tmp_path / "honest", "true"), tag=f"{TAG}-honest", base_image=BASE_IMAGE, client=engine)
    assert not slow_ended and worker.is_alive(), "the honest build ended while the slow one was still running"
    assert engine.images.get(f"{TAG}-honest").id == honest.image_id
    cancel.set()
    worker.join(120)
    assert len(slow_ended) == 1 and isinstance(slow_ended[0], BuildInterrupted), slow_ended
