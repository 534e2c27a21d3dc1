"""Hostile trees for the tests: an archive nested N directories deep, and such a tree on disk."""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.sandbox.tree import remove_children


@pytest.fixture
def deep_tmp(tmp_path: Path) -> Iterator[Path]:
    """``tmp_path``, emptied without recursion afterwards: a deep tree left by a failing test would
    make pytest's own clean-up of old temporary folders (``shutil.rmtree``) raise RecursionError."""
    yield tmp_path
    remove_children(tmp_path)


def deep_archive(depth: int) -> bytes:
    """A gzip tarball holding one directory ``depth`` levels deep (pax headers carry the long name)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("/".join(["d"] * depth))
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        tar.addfile(info)
    return buffer.getvalue()


def make_deep_tree(root: Path, depth: int, name: str = "d") -> None:
    """``root`` with ``depth`` nested directories below it, made by descriptor (deeper than PATH_MAX)."""
    root.mkdir()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        with open(os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
            f.write("bottom")
    finally:
        os.close(fd)
