"""Hostile archives and trees (issue 36): nesting bounded, bombs cut while they unpack, clean-up never recursive.

A 156-byte upload nested 1,500 directories deep got a 500 and left its tree,
and ``shutil.rmtree`` (recursive) then raised ``RecursionError`` at every
server start.  Here: :func:`extract_tar` refuses the nesting in one line and
leaves nothing, :func:`remove_tree` removes trees deeper than the recursion
limit and ``PATH_MAX`` with hostile modes and names, and a decompression bomb
is refused having written no more than its cap.
"""

from __future__ import annotations

import io
import os
import resource
import sys
import tarfile
from pathlib import Path

import pytest
from tree_support import deep_archive, deep_tmp, make_deep_tree  # noqa: F401 - deep_tmp: a fixture, used below

#: Every test here empties its tmp_path without recursion afterwards (deep trees, even when it fails).
pytestmark = pytest.mark.usefixtures("deep_tmp")

from arena.sandbox.bot_dir import BotDirError, DirLimits, extract_tar
from arena.sandbox.tree import remove_children, remove_tree


def test_a_1500_deep_archive_is_refused_in_one_line_and_leaves_nothing(tmp_path: Path):
    archive = deep_archive(1500)
    assert len(archive) < 1024, "the red team's upload was 156 bytes: a tiny archive"
    dest = tmp_path / "unpacked"
    with pytest.raises(BotDirError) as refused:
        extract_tar(io.BytesIO(archive), dest, DirLimits())
    message = str(refused.value)
    assert "nested deeper than 32" in message and "\n" not in message and len(message) < 300, message
    assert not dest.exists() and list(tmp_path.iterdir()) == []


def test_nesting_at_the_limit_is_unpacked(tmp_path: Path):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("/".join(["d"] * 4) + "/bot.py")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"ok"))
    extract_tar(io.BytesIO(buffer.getvalue()), tmp_path / "ok", DirLimits(max_depth=4))
    assert (tmp_path / "ok" / "d" / "d" / "d" / "d" / "bot.py").read_text() == "ok"
    with pytest.raises(BotDirError, match="nested deeper than 3"):
        extract_tar(io.BytesIO(buffer.getvalue()), tmp_path / "refused", DirLimits(max_depth=3))
    assert not (tmp_path / "refused").exists()


def test_remove_tree_removes_a_tree_deeper_than_the_recursion_limit_and_path_max(tmp_path: Path):
    depth = max(1500, sys.getrecursionlimit() + 200)  # "d/" x 2,200 is past PATH_MAX (4,096) too
    tree = tmp_path / "deep"
    make_deep_tree(tree, depth)
    remove_tree(tree)
    assert not tree.exists()


def test_remove_tree_repairs_hostile_modes_and_takes_any_name(tmp_path: Path):
    tree = tmp_path / "hostile"
    tree.mkdir()
    odd = os.fsdecode(b"\xff\x1b[31mred\nline")  # not UTF-8, an escape code and a newline
    (tree / odd).mkdir()
    (tree / odd / "f").write_text("x")
    locked = tree / "locked"
    locked.mkdir()
    (locked / "inner").mkdir()
    (locked / "inner" / "f").write_text("x")
    (locked / "inner").chmod(0o000)  # unreadable
    locked.chmod(0o500)  # entries cannot be removed
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    os.symlink(outside, tree / "link")
    os.symlink(tmp_path, tree / "dirlink")
    tree.chmod(0o000)
    remove_tree(tree)
    assert not tree.exists()
    assert outside.read_text() == "keep me", "a link is unlinked, never followed"


def test_remove_tree_needs_no_descriptor_per_level(tmp_path: Path):
    """With 32 descriptors to spare a 500-deep tree still goes: one directory is open at a time.

    The limit is set above what the test process already holds (a long suite's
    process may hold more than a fixed 64: logs, sockets, stores), so that only
    remove_tree's own need is measured.
    """
    tree = tmp_path / "deep"
    make_deep_tree(tree, 500)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    in_use = max(int(name) for name in os.listdir("/proc/self/fd")) + 1
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, in_use + 32), hard))
    try:
        remove_tree(tree)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert not tree.exists()


def test_remove_tree_of_a_file_a_link_or_nothing(tmp_path: Path):
    remove_tree(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    remove_tree(tmp_path / "file")
    target = tmp_path / "target"
    target.mkdir()
    (target / "kept").write_text("x")
    os.symlink(target, tmp_path / "link")
    remove_tree(tmp_path / "link")
    assert not (tmp_path / "link").is_symlink() and (target / "kept").exists()


def test_remove_children_keeps_the_folder(tmp_path: Path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    make_deep_tree(tmp / "unpack-1", 1500)
    (tmp / "upload-1").write_bytes(b"x")
    remove_children(tmp)
    assert tmp.is_dir() and list(tmp.iterdir()) == []


def test_a_decompression_bomb_is_cut_while_it_unpacks(tmp_path: Path):
    """256 MiB of zeros (about 256 KiB of gzip) against a 4 MiB cap: refused, and never more than the cap on disk."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("bot.py")
        info.size = 1 << 28

        class Zeros(io.RawIOBase):
            left = 1 << 28

            def readable(self) -> bool:
                return True

            def readinto(self, b):  # type: ignore[override]
                n = min(len(b), self.left)
                b[:n] = bytes(n)
                self.left -= n
                return n

        # The header says 256 MiB: refused before a byte is written.
        tar.addfile(info, io.BufferedReader(Zeros(), 1 << 20))
    bomb = buffer.getvalue()
    assert len(bomb) < 2 << 20
    with pytest.raises(BotDirError, match="larger than 4 MiB"):
        extract_tar(io.BytesIO(bomb), tmp_path / "bomb", DirLimits(max_bytes=4 << 20))
    assert not (tmp_path / "bomb").exists()


def test_a_bomb_of_many_small_members_is_cut_by_bytes_read(tmp_path: Path):
    """Members each under the cap whose sum is over it: refused as the sum passes the cap, nothing left."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz") as tar:
        for i in range(64):
            info = tarfile.TarInfo(f"part{i}.bin")
            info.size = 1 << 20
            tar.addfile(info, io.BytesIO(bytes(1 << 20)))
    with pytest.raises(BotDirError, match="larger than 8 MiB"):
        extract_tar(io.BytesIO(buffer.getvalue()), tmp_path / "bomb", DirLimits(max_bytes=8 << 20))
    assert not (tmp_path / "bomb").exists()
