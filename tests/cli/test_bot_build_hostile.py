"""Hostile bot directories and Dockerfiles against the real `arena bot build` (issue 24, items 2, 3, 7).

Each test reproduces an attack the third red team made on the builder: a link
that carries the organiser's files into the image, a Dockerfile that is a link,
a FIFO or a link to /dev/zero, an oversized directory, a Dockerfile that makes
the daemon fetch a URL, copy another entrant's image or start from it.  Real
Docker engine; everything this file builds carries a tag of its own (the bot
base included, through ``ARENA_BOT_BASE``) and is removed at the end.
"""

from __future__ import annotations

import http.server
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.sandbox.build import BUILD_LABEL
from docker_support import BASE_IMAGE, TEST_LABEL, TEST_RUN, engine_or_skip

pytestmark = pytest.mark.docker

REPO = Path(__file__).resolve().parents[2]
RUN = f"{os.getpid()}-{uuid.uuid4().hex[:6]}"
BOT_BASE = f"arena-bot-base:hostile-{RUN}"
REPO_TAG = "arena-hostile-build-test"
#: Another entrant's image: the red team copied from it and started from it.
COMPETITOR = f"{REPO_TAG}:competitor-{RUN}"
SECRET = f"ORGANISER-SECRET-{uuid.uuid4().hex}"
#: The largest file a build of this file may write (a safety net: a link to /dev/zero filled the disk).
FILE_SIZE_CAP = 512 * 1024 * 1024


def _tag(name: str) -> str:
    return f"{REPO_TAG}:{name}-{RUN}"


@pytest.fixture(scope="module")
def engine() -> Iterator[Any]:
    """The engine with the competitor's image; removes every image this module made when done."""
    client = engine_or_skip("hostile build tests")
    dockerfile = f"FROM {BASE_IMAGE}\nENV COMPETITOR_BOT={SECRET}\n"
    client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=COMPETITOR, rm=True, network_mode="none")
    yield client
    for image in client.images.list(name=REPO_TAG):
        if any(t.endswith(f"-{RUN}") for t in image.tags):
            client.images.remove(image.id, force=True)
    for image in client.images.list(filters={"label": f"{BUILD_LABEL}"}):
        if (image.labels or {}).get(BUILD_LABEL, "").endswith(RUN):
            client.images.remove(image.id, force=True)
    try:
        client.images.remove(BOT_BASE, force=True)
    except Exception:  # never built (every build was refused)
        pass


@pytest.fixture
def arena(engine: Any, tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """The real CLI in a subprocess that may write no file over 512 MiB (RLIMIT_FSIZE)."""

    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_CAP, FILE_SIZE_CAP))

    def run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        env = {
            "COLUMNS": "200",
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "ARENA_WHEEL_CACHE": str(Path.home() / ".cache" / "arena" / "wheels"),
            **{k: v for k, v in os.environ.items() if k.startswith("ARENA_")},
            "ARENA_BOT_BASE": BOT_BASE,
            "ARENA_BASE_IMAGE": BASE_IMAGE,
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
        }
        return subprocess.run(
            [sys.executable, "-m", "arena", *args], capture_output=True, text=True, cwd=tmp_path, timeout=timeout,
            env=env, preexec_fn=limit_file_size,
        )  # fmt: skip

    return run


def _bot_dir(root: Path, name: str) -> Path:
    """A bot directory named ``<name>-<run>`` (the build label names it) with the random bot."""
    path = root / f"{name}-{RUN}"
    path.mkdir()
    shutil.copy(REPO / "example_bots" / "random" / "bot.py", path / "bot.py")
    return path


def _images_of(engine: Any, source: Path) -> list[Any]:
    """Images a build of ``source`` made (labelled with the directory's name)."""
    return engine.images.list(filters={"label": f"{BUILD_LABEL}={source.name}"})


def _refused(result: subprocess.CompletedProcess[str], *words: str) -> str:
    """The one error line of a refused build, which must contain ``words``; never the secret."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    for word in words:
        assert word in errors[0], (word, result.stderr)
    assert SECRET not in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return errors[0]


def _secret_file(root: Path, name: str = "tournament.toml") -> Path:
    secrets = root / "organiser"
    secrets.mkdir(exist_ok=True)
    path = secrets / name
    path.write_text(f'seed = "{SECRET}"\n')
    path.chmod(0o600)
    return path


# ------------------------------------------------------------------------------- item 2: the directory


def test_a_link_to_the_organisers_file_is_refused_and_no_image_is_made(arena, engine, tmp_path):
    source = _bot_dir(tmp_path, "link-file")
    (source / "deals.toml").symlink_to(_secret_file(tmp_path))
    result = arena("bot", "build", str(source), "--tag", _tag("link-file"))
    _refused(result, "deals.toml", "symbolic link")
    assert not _images_of(engine, source)


def test_a_link_to_the_organisers_ssh_directory_is_refused(arena, engine, tmp_path):
    source = _bot_dir(tmp_path, "link-dir")
    key = _secret_file(tmp_path, "id_ed25519")
    (source / "data").mkdir()
    (source / "data" / "keys").symlink_to(key.parent, target_is_directory=True)
    result = arena("bot", "build", str(source), "--tag", _tag("link-dir"))
    _refused(result, "data/keys", "symbolic link")
    assert not _images_of(engine, source)


def test_a_link_inside_the_directory_is_refused_too(arena, engine, tmp_path):
    source = _bot_dir(tmp_path, "link-inside")
    (source / "main.py").symlink_to("bot.py")
    result = arena("bot", "build", str(source), "--tag", _tag("link-inside"))
    _refused(result, "main.py", "symbolic link")
    assert not _images_of(engine, source)


def test_a_dockerfile_that_is_a_link_is_refused_without_printing_its_target(arena, engine, tmp_path):
    source = _bot_dir(tmp_path, "link-dockerfile")
    (source / "Dockerfile").symlink_to(_secret_file(tmp_path))
    result = arena("bot", "build", str(source), "--tag", _tag("link-dockerfile"))
    _refused(result, "Dockerfile", "symbolic link")
    assert not _images_of(engine, source)


def test_a_fifo_is_refused_at_once(arena, engine, tmp_path):
    source = _bot_dir(tmp_path, "fifo")
    os.mkfifo(source / "pipe")
    result = arena("bot", "build", str(source), "--tag", _tag("fifo"), timeout=120)
    _refused(result, "pipe", "FIFO")
    assert not _images_of(engine, source)


def test_a_link_to_dev_zero_is_refused_and_writes_nothing(arena, engine, tmp_path):
    source = _bot_dir(tmp_path, "zero")
    (source / "weights.bin").symlink_to("/dev/zero")
    result = arena("bot", "build", str(source), "--tag", _tag("zero"), timeout=120)
    _refused(result, "weights.bin", "symbolic link")
    assert not _images_of(engine, source)


def test_a_device_node_is_refused(arena, engine, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    source = _bot_dir(tmp_path, "device")
    os.mknod(source / "null", 0o600 | 0o020000, os.makedev(1, 3))  # a character device, like /dev/null
    result = arena("bot", "build", str(source), "--tag", _tag("device"), timeout=120)
    _refused(result, "null", "device")
    assert not _images_of(engine, source)


def test_a_directory_over_the_size_cap_is_refused(arena, engine, tmp_path):
    source = _bot_dir(tmp_path, "big")
    (source / "model.bin").write_bytes(os.urandom(3 * 1024 * 1024))
    result = arena("bot", "build", str(source), "--tag", _tag("big"), "--max-bytes", "2m", timeout=120)
    _refused(result, "2 MiB", "--max-bytes")
    assert not _images_of(engine, source)


def test_a_directory_with_too_many_files_is_refused(arena, engine, tmp_path):
    source = _bot_dir(tmp_path, "many")
    (source / "data").mkdir()
    for i in range(60):
        (source / "data" / f"f{i}.txt").write_text(str(i))
    result = arena("bot", "build", str(source), "--tag", _tag("many"), "--max-files", "50", timeout=120)
    _refused(result, "50 files", "--max-files")
    assert not _images_of(engine, source)


def _listing(engine: Any, image: str, path: str) -> dict[str, int]:
    """Modes of the files under ``path`` in ``image`` (from a created, never started container)."""
    container = engine.api.create_container(image, labels={TEST_LABEL: TEST_RUN}, network_disabled=True)
    try:
        chunks, _ = engine.api.get_archive(container["Id"], path)
        with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as tar:
            return {m.name: m.mode & 0o7777 for m in tar.getmembers()}  # Docker's archive keeps the type bits
    finally:
        engine.api.remove_container(container["Id"], force=True)


def test_file_modes_are_normalised_in_the_image(arena, engine, tmp_path):
    source = _bot_dir(tmp_path, "modes")
    (source / "private.txt").write_text("the author's own file\n")
    (source / "private.txt").chmod(0o600)
    (source / "everyone.txt").write_text("writable by all\n")
    (source / "everyone.txt").chmod(0o666)
    (source / "tool.sh").write_text("#!/bin/sh\necho hi\n")
    (source / "tool.sh").chmod(0o4755)  # setuid
    (source / "data").mkdir()
    (source / "data").chmod(0o2777)  # setgid, world-writable
    result = arena("bot", "build", str(source), "--tag", _tag("modes"))
    assert result.returncode == 0, result.stderr
    modes = _listing(engine, _tag("modes"), "/bot")
    assert modes["bot/private.txt"] == 0o644
    assert modes["bot/everyone.txt"] == 0o644
    assert modes["bot/tool.sh"] == 0o755
    assert modes["bot/data"] == 0o755
    assert modes["bot/bot.py"] == 0o644


# ------------------------------------------------------------------------------- item 3: the Dockerfile


class _Recorder(http.server.BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        type(self).requests.append(self.path)
        body = SECRET.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_HEAD(self) -> None:  # noqa: N802
        type(self).requests.append(f"HEAD {self.path}")
        self.send_response(200)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass


@pytest.fixture
def http_server() -> Iterator[tuple[int, list[str]]]:
    """A real HTTP server on 127.0.0.1 that records every request it gets."""
    _Recorder.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], _Recorder.requests
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def test_add_from_a_url_is_refused_and_the_daemon_fetches_nothing(arena, engine, tmp_path, http_server):
    port, requests = http_server
    source = _bot_dir(tmp_path, "add-url")
    (source / "Dockerfile").write_text(
        f"ARG BOT_BASE=arena-bot-base\nFROM ${{BOT_BASE}}\nCOPY bot.py /bot/bot.py\nADD http://127.0.0.1:{port}/x /bot/x\n"
    )
    result = arena("bot", "build", str(source), "--tag", _tag("add-url"))
    _refused(result, "Dockerfile line 4", "ADD", "URL")
    assert requests == []
    assert not _images_of(engine, source)


def test_copy_from_another_image_is_refused(arena, engine, tmp_path):
    source = _bot_dir(tmp_path, "copy-from")
    (source / "Dockerfile").write_text(
        f"ARG BOT_BASE=arena-bot-base\nFROM ${{BOT_BASE}}\nCOPY bot.py /bot/bot.py\nCOPY --from={COMPETITOR} /etc/hostname /bot/theirs\n"
    )
    result = arena("bot", "build", str(source), "--tag", _tag("copy-from"))
    _refused(result, "Dockerfile line 4", "--from")
    assert not _images_of(engine, source)


def test_from_another_image_is_refused(arena, engine, tmp_path):
    source = _bot_dir(tmp_path, "from-other")
    (source / "Dockerfile").write_text(f"FROM {COMPETITOR}\nCOPY bot.py /bot/bot.py\n")
    result = arena("bot", "build", str(source), "--tag", _tag("from-other"))
    _refused(result, "Dockerfile line 1", "FROM", "BOT_BASE")
    assert not _images_of(engine, source)


def test_from_another_image_through_an_argument_default_is_refused(arena, engine, tmp_path):
    source = _bot_dir(tmp_path, "from-arg")
    (source / "Dockerfile").write_text(f"ARG OTHER={COMPETITOR}\nFROM ${{OTHER}}\nCOPY bot.py /bot/bot.py\n")
    result = arena("bot", "build", str(source), "--tag", _tag("from-arg"))
    _refused(result, "Dockerfile line 2", "FROM")
    assert not _images_of(engine, source)


@pytest.mark.parametrize(
    "line",
    ["HEALTHCHECK --interval=1s CMD true", "VOLUME /data", "STOPSIGNAL SIGKILL", "ONBUILD RUN true"],
)
def test_image_settings_that_make_docker_work_for_a_seat_are_refused(arena, engine, tmp_path, line):
    keyword = line.split()[0]
    source = _bot_dir(tmp_path, f"config-{keyword.lower()}")
    (source / "Dockerfile").write_text(f"ARG BOT_BASE=arena-bot-base\nFROM ${{BOT_BASE}}\nCOPY bot.py /bot/bot.py\n{line}\n")
    result = arena("bot", "build", str(source), "--tag", _tag(f"config-{keyword.lower()}"))
    _refused(result, "Dockerfile line 4", keyword)
    assert not _images_of(engine, source)


def test_a_multi_stage_dockerfile_on_the_base_images_still_builds(arena, engine, tmp_path):
    """The honest case: stages of the same file, FROM ${BASE_IMAGE} and ${BOT_BASE}, continuations."""
    source = _bot_dir(tmp_path, "stages")
    (source / "Dockerfile").write_text(
        "# escape=\\\n"
        "ARG BASE_IMAGE=python:3.11-slim\n"
        "ARG BOT_BASE=arena-bot-base\n"
        "from ${BASE_IMAGE} as Tools\n"
        "RUN mkdir -p /out \\\n"
        "  # a comment inside a continuation\n"
        " && echo made-in-a-stage > /out/note.txt\n"
        "FROM ${BOT_BASE}\n"
        "COPY --from=tools /out/note.txt /bot/note.txt\n"
        "COPY bot.py /bot/bot.py\n"
    )
    result = arena("bot", "build", str(source), "--tag", _tag("stages"))
    assert result.returncode == 0, result.stderr
    assert "bot/note.txt" in _listing(engine, _tag("stages"), "/bot")


# ------------------------------------------------------------------------------- item 7: bot check


def test_bot_check_warns_about_image_settings(arena, engine, tmp_path):
    """An image built elsewhere (docker build) with settings that make Docker work for a seat."""
    source = _bot_dir(tmp_path, "settings")
    tag = _tag("settings")
    dockerfile = (
        f"FROM {BASE_IMAGE}\nHEALTHCHECK --interval=1h CMD true\nVOLUME /data\nSTOPSIGNAL SIGINT\nONBUILD RUN true\n"
        'CMD ["/bin/true"]\n'  # no bot: the check fails, and reports
    )
    (source / "Dockerfile").write_text(dockerfile)
    engine.images.build(path=str(source), tag=tag, rm=True, network_mode="none")
    result = arena("bot", "check", tag, "--json", "--timeout", "5", timeout=240)
    assert result.stdout.strip() and "Traceback" not in result.stderr, result.stderr
    verdict = json.loads(result.stdout)
    warnings = " ".join(verdict["warnings"])
    for word in ("HEALTHCHECK", "VOLUME /data", "STOPSIGNAL SIGINT", "ONBUILD"):
        assert word in warnings, (word, verdict)
    text = arena("bot", "check", tag, "--timeout", "5", timeout=240)
    for word in ("HEALTHCHECK", "VOLUME", "STOPSIGNAL", "ONBUILD"):
        assert f"warning: the image declares {word}" in text.stdout, text.stdout
