"""Checking and copying a bot directory, and unpacking an uploaded tarball (issue 24, item 2).

Unit tests of :mod:`arena.sandbox.bot_dir` on real files (no Docker): links,
devices, FIFOs, sockets, hard links, size and count caps, normalised modes,
and the edges of tar extraction (``..``, absolute names, links, devices,
bombs, duplicates).  Each refusal names the path and leaves nothing behind.
"""

from __future__ import annotations

import gzip
import io
import os
import socket
import stat
import tarfile
from pathlib import Path

import pytest

from arena.sandbox.bot_dir import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_FILES,
    BotDirError,
    DirLimits,
    check_bot_dir,
    copy_bot_dir,
    extract_tar,
    parse_size,
    read_regular_file,
)


def _bot(root: Path) -> Path:
    source = root / "bot"
    source.mkdir()
    (source / "bot.py").write_text("print('hi')\n")
    (source / "lib").mkdir()
    (source / "lib" / "helpers.py").write_text("X = 1\n")
    return source


def _refusal(source: Path, *words: str, limits: DirLimits | None = None) -> str:
    with pytest.raises(BotDirError) as caught:
        check_bot_dir(source, limits or DirLimits())
    message = str(caught.value)
    for word in words:
        assert word in message, (word, message)
    assert "\n" not in message
    return message


def test_a_plain_directory_passes_and_is_counted(tmp_path):
    summary = check_bot_dir(_bot(tmp_path))
    assert (summary.files, summary.dirs, summary.bytes) == (2, 1, len("print('hi')\n") + len("X = 1\n"))


def test_links_are_refused_wherever_they_point(tmp_path):
    source = _bot(tmp_path)
    secret = tmp_path / "secret"
    secret.write_text("key")
    (source / "lib" / "key").symlink_to(secret)
    assert "lib/key" in _refusal(source, "symbolic link")
    (source / "lib" / "key").unlink()
    (source / "lib" / "same").symlink_to("helpers.py")  # inside the directory: refused too
    _refusal(source, "lib/same", "symbolic link")
    (source / "lib" / "same").unlink()
    (source / "up").symlink_to(tmp_path, target_is_directory=True)
    _refusal(source, "up", "symbolic link")


def test_fifos_sockets_and_devices_are_refused(tmp_path):
    source = _bot(tmp_path)
    os.mkfifo(source / "pipe")
    _refusal(source, "pipe", "FIFO")
    (source / "pipe").unlink()
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(source / "sock"))
        _refusal(source, "sock", "socket")
    (source / "sock").unlink()
    if os.geteuid() == 0:
        os.mknod(source / "zero", 0o600 | stat.S_IFCHR, os.makedev(1, 5))
        _refusal(source, "zero", "device")


def test_a_hard_link_is_refused(tmp_path):
    source = _bot(tmp_path)
    outside = tmp_path / "tournament.toml"
    outside.write_text("seed = 1\n")
    os.link(outside, source / "deals.toml")
    _refusal(source, "deals.toml", "hard link")


def test_the_default_caps_hold_and_can_be_changed(tmp_path):
    source = _bot(tmp_path)
    with open(source / "huge.bin", "wb") as f:  # sparse: costs no disk
        f.truncate(DEFAULT_MAX_BYTES + 1)
    _refusal(source, "larger than", "--max-bytes")
    (source / "huge.bin").unlink()
    (source / "big.bin").write_bytes(b"x" * 5000)
    _refusal(source, "4 KiB", limits=DirLimits(max_bytes=4096))
    assert check_bot_dir(source, DirLimits(max_bytes=10_000)).bytes > 5000
    for i in range(10):
        (source / "lib" / f"m{i}.py").write_text("")
    _refusal(source, "more than 8 files", "--max-files", limits=DirLimits(max_files=8))
    assert DEFAULT_MAX_FILES >= 1000 and DEFAULT_MAX_BYTES >= 64 * 1024 * 1024


def test_limits_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("ARENA_BOT_MAX_BYTES", "3m")
    monkeypatch.setenv("ARENA_BOT_MAX_FILES", "77")
    assert DirLimits.from_env() == DirLimits(max_bytes=3 * 1024 * 1024, max_files=77)
    monkeypatch.setenv("ARENA_BOT_MAX_FILES", "lots")
    with pytest.raises(BotDirError, match="ARENA_BOT_MAX_FILES"):
        DirLimits.from_env()


def test_parse_size():
    assert parse_size("100") == 100
    assert parse_size("2k") == 2048 and parse_size("2KiB") == 2048
    assert parse_size("256m") == 256 * 1024**2 and parse_size("1G") == 1024**3
    for bad in ("", "-1", "0", "1.5m", "12q", "m"):
        with pytest.raises(ValueError):
            parse_size(bad)


def test_a_directory_too_deep_is_refused(tmp_path):
    source = _bot(tmp_path)
    deep = source
    for i in range(40):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    _refusal(source, "deeper than")


def test_ignored_names_are_skipped_even_when_they_hold_links(tmp_path):
    source = _bot(tmp_path)
    (source / ".venv" / "bin").mkdir(parents=True)
    (source / ".venv" / "bin" / "python").symlink_to("/usr/bin/python3")
    (source / "__pycache__").mkdir()
    (source / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (source / ".git").symlink_to(tmp_path)
    dest = tmp_path / "context"
    summary = copy_bot_dir(source, dest)
    assert summary.files == 2
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == ["bot.py", "lib", "lib/helpers.py"]


def test_the_copy_normalises_modes(tmp_path):
    source = _bot(tmp_path)
    (source / "private.key").write_text("mine")
    (source / "private.key").chmod(0o600)
    (source / "run.sh").write_text("#!/bin/sh\n")
    (source / "run.sh").chmod(0o4777)
    (source / "lib").chmod(0o2777)
    dest = tmp_path / "context"
    copy_bot_dir(source, dest)
    mode = {p.relative_to(dest).as_posix(): stat.S_IMODE(p.lstat().st_mode) for p in dest.rglob("*")}
    assert mode == {"bot.py": 0o644, "private.key": 0o644, "run.sh": 0o755, "lib": 0o755, "lib/helpers.py": 0o644}
    assert (dest / "private.key").read_text() == "mine"


def test_a_refused_copy_leaves_nothing(tmp_path):
    source = _bot(tmp_path)
    os.mkfifo(source / "lib" / "zz-pipe")
    dest = tmp_path / "context"
    with pytest.raises(BotDirError, match="lib/zz-pipe"):
        copy_bot_dir(source, dest)
    assert not dest.exists()


def test_a_file_that_grows_past_the_cap_during_the_copy_is_cut(tmp_path):
    """The copy counts the bytes it reads, not the sizes it saw: a file may grow in between."""
    source = _bot(tmp_path)
    grows = source / "grows.bin"
    grows.write_bytes(b"x" * 100)
    limits = DirLimits(max_bytes=1000)
    check_bot_dir(source, limits)
    grows.write_bytes(b"x" * 5000)  # the sizes the first pass saw are no longer true
    with pytest.raises(BotDirError, match="larger than"):
        copy_bot_dir(source, tmp_path / "context", limits)
    assert not (tmp_path / "context").exists()


def test_reading_the_dockerfile_never_follows_a_link(tmp_path):
    source = _bot(tmp_path)
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY 1234")
    (source / "Dockerfile").symlink_to(secret)
    with pytest.raises(BotDirError) as caught:
        read_regular_file(source, "Dockerfile", 1024)
    assert "Dockerfile" in str(caught.value) and "symbolic link" in str(caught.value)
    assert "PRIVATE" not in str(caught.value)
    (source / "Dockerfile").unlink()
    os.mkfifo(source / "Dockerfile")
    with pytest.raises(BotDirError, match="FIFO"):
        read_regular_file(source, "Dockerfile", 1024)  # never blocks on the FIFO
    (source / "Dockerfile").unlink()
    (source / "Dockerfile").write_text("FROM x\n" * 10)
    with pytest.raises(BotDirError, match="larger than"):
        read_regular_file(source, "Dockerfile", 20)
    assert read_regular_file(source, "Dockerfile", 1024) == b"FROM x\n" * 10
    assert read_regular_file(source, "missing", 1024) is None


# --------------------------------------------------------------------------- tar extraction


def _tar(*members: tuple[tarfile.TarInfo, bytes | None], compress: bool = False) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    raw = buffer.getvalue()
    return gzip.compress(raw) if compress else raw


def _file(name: str, data: bytes = b"x", mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    return info, data


def _entry(name: str, kind: bytes, **fields: object) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    for key, value in fields.items():
        setattr(info, key, value)
    return info, None


def test_a_tarball_is_extracted_with_normalised_modes(tmp_path):
    data = _tar(
        _entry("bot", tarfile.DIRTYPE, mode=0o2777),
        _file("bot/bot.py", b"print(1)\n", 0o600),
        _file("./bot/run.sh", b"#!/bin/sh\n", 0o4755),
        _file("bot/lib/deep.py", b"X = 2\n"),  # its directory has no entry of its own
        compress=True,
    )
    dest = tmp_path / "out"
    summary = extract_tar(io.BytesIO(data), dest)
    assert (summary.files, summary.dirs) == (3, 2)
    mode = {p.relative_to(dest).as_posix(): stat.S_IMODE(p.lstat().st_mode) for p in dest.rglob("*")}
    assert mode == {"bot": 0o755, "bot/bot.py": 0o644, "bot/run.sh": 0o755, "bot/lib": 0o755, "bot/lib/deep.py": 0o644}
    assert (dest / "bot" / "bot.py").read_text() == "print(1)\n"
    path = tmp_path / "upload.tar.gz"
    path.write_bytes(data)
    assert extract_tar(path, tmp_path / "again").files == 3


@pytest.mark.parametrize(
    ("member", "words"),
    [
        (_file("../evil.py"), ["../evil.py", ".."]),
        (_file("bot/../../evil.py"), ["bot/../../evil.py", ".."]),
        (_file("/etc/cron.d/evil"), ["/etc/cron.d/evil", "absolute"]),
        (_entry("bot/key", tarfile.SYMTYPE, linkname="/root/.ssh/id_rsa"), ["bot/key", "symbolic link"]),
        (_entry("bot/key", tarfile.LNKTYPE, linkname="etc/shadow"), ["bot/key", "hard link"]),
        (_entry("bot/tty", tarfile.CHRTYPE, devmajor=5, devminor=0), ["bot/tty", "device"]),
        (_entry("bot/disk", tarfile.BLKTYPE, devmajor=8, devminor=0), ["bot/disk", "device"]),
        (_entry("bot/pipe", tarfile.FIFOTYPE), ["bot/pipe", "FIFO"]),
    ],
    ids=["dotdot", "dotdot-inside", "absolute", "symlink", "hardlink", "chardev", "blockdev", "fifo"],
)
def test_hostile_tar_members_are_refused_and_nothing_is_left(tmp_path, member, words):
    data = _tar(_file("bot/bot.py", b"print(1)\n"), member)
    dest = tmp_path / "out"
    with pytest.raises(BotDirError) as caught:
        extract_tar(io.BytesIO(data), dest)
    for word in words:
        assert word in str(caught.value), (word, str(caught.value))
    assert not dest.exists()
    assert not (tmp_path / "evil.py").exists()


def test_a_member_over_the_size_cap_is_refused_before_it_is_written(tmp_path):
    info = tarfile.TarInfo("bot/model.bin")
    info.size = 10 * 1024 * 1024
    data = _tar((info, bytes(info.size)), compress=True)  # ~10 KiB compressed: a small bomb
    assert len(data) < 100_000
    with pytest.raises(BotDirError, match="larger than 1 MiB"):
        extract_tar(io.BytesIO(data), tmp_path / "out", DirLimits(max_bytes=1024 * 1024))
    assert not (tmp_path / "out").exists()


def test_a_huge_header_is_refused_bounded(tmp_path):
    """A pax header is read into memory: the decompressed stream is capped, not only the members."""
    info, payload = _file("bot/bot.py", b"print(1)\n")
    info.pax_headers = {"comment": "x" * (24 * 1024 * 1024)}  # over the cap with its header allowance
    data = _tar((info, payload), compress=True)
    with pytest.raises(BotDirError, match="larger than"):
        extract_tar(io.BytesIO(data), tmp_path / "out", DirLimits(max_bytes=1024 * 1024))
    assert not (tmp_path / "out").exists()


def test_too_many_members_are_refused(tmp_path):
    data = _tar(*(_file(f"bot/f{i}.py") for i in range(30)))
    with pytest.raises(BotDirError, match="more than 20 files"):
        extract_tar(io.BytesIO(data), tmp_path / "out", DirLimits(max_files=20))
    assert not (tmp_path / "out").exists()


def test_duplicate_names_and_files_used_as_directories_are_refused(tmp_path):
    with pytest.raises(BotDirError, match="twice"):
        extract_tar(io.BytesIO(_tar(_file("bot/a.py", b"1"), _file("bot/./a.py", b"2"))), tmp_path / "one")
    with pytest.raises(BotDirError, match="bot/a.py"):
        extract_tar(io.BytesIO(_tar(_file("bot/a.py"), _file("bot/a.py/b.py"))), tmp_path / "two")
    assert not (tmp_path / "one").exists() and not (tmp_path / "two").exists()


def test_a_destination_that_exists_or_garbage_is_refused(tmp_path):
    (tmp_path / "there").mkdir()
    with pytest.raises(BotDirError, match="already exists"):
        extract_tar(io.BytesIO(_tar(_file("bot.py"))), tmp_path / "there")
    with pytest.raises(BotDirError, match="not a tar archive"):
        extract_tar(io.BytesIO(b"this is no archive at all" * 50), tmp_path / "garbage")
    assert not (tmp_path / "garbage").exists()


def test_a_node_bots_own_packages_are_kept_and_other_node_modules_skipped(tmp_path):
    from arena.sandbox.bot_dir import copy_bot_dir

    node = tmp_path / "node"
    (node / "node_modules" / "left-pad").mkdir(parents=True)
    (node / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1;\n")
    (node / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n")
    (node / "package.json").write_text("{}\n")
    copy_bot_dir(node, tmp_path / "node-copy")
    assert (tmp_path / "node-copy" / "node_modules" / "left-pad" / "index.js").is_file()
    python = tmp_path / "python"
    (python / "node_modules").mkdir(parents=True)
    (python / "node_modules" / "x.js").write_text("1\n")
    (python / "bot.py").write_text("print()\n")
    copy_bot_dir(python, tmp_path / "python-copy")
    assert not (tmp_path / "python-copy" / "node_modules").exists()  # a cache beside a Python bot: skipped
