"""Remove a directory tree that hostile input made: never recursive, never through a link.

``shutil.rmtree`` recurses once per level: an uploaded archive nested 1,500
directories deep (156 bytes compressed) made it raise ``RecursionError``, which
``ignore_errors`` does not cover, and a server that cleans its temporary
folder at start refused to start.  :func:`remove_tree` walks the tree with an
explicit stack and one open directory descriptor at a time (a descriptor per
level would run out at a low descriptor limit), moving down by name and back
up through ``..`` (checked to be the directory it came from), so depth costs
memory for a name per level and nothing else.  Paths are never built: a tree
deeper than ``PATH_MAX`` is removed like any other.

Hostile permissions are repaired on the way (a directory of mode ``000`` or
``500`` is made ``700`` before it is read, by its owner: the server), names
are used as the kernel gives them (any bytes), and links are unlinked, never
followed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import stat
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclasses.dataclass
class _Level:
    """One directory on the way down: its name in its parent, its identity, and its subdirectories left."""

    name: str
    identity: tuple[int, int]
    subdirs: list[str] | None = None


def remove_tree(path: str | os.PathLike[str], *, ignore_errors: bool = False) -> None:
    """Remove ``path`` and everything below it; a missing ``path`` is not an error.

    A file or a link at ``path`` is unlinked (a link's target is untouched).
    Raises :class:`OSError` when something cannot be removed, unless
    ``ignore_errors`` (then as much as possible is removed).
    """
    try:
        _remove(os.fspath(path))
    except FileNotFoundError:
        pass
    except OSError:
        if not ignore_errors:
            raise


def _remove(path: str) -> None:
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)
        return
    parent_path, name = os.path.split(os.path.abspath(path))
    parent = os.open(parent_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _empty(parent, name)
        os.rmdir(name, dir_fd=parent)
    finally:
        os.close(parent)


def _open_child(fd: int, name: str) -> tuple[int, tuple[int, int]]:
    """Open the subdirectory ``name`` of ``fd`` (made readable first: its owner may chmod it)."""
    with contextlib.suppress(OSError):
        os.chmod(name, 0o700, dir_fd=fd)  # a link is not a directory: lstat said so just before
    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
    st = os.fstat(child)
    return child, (st.st_dev, st.st_ino)


def _empty(top_parent: int, top_name: str) -> None:
    """Remove everything inside ``top_parent/top_name`` (the directory itself stays)."""
    fd, identity = _open_child(top_parent, top_name)
    levels = [_Level(top_name, identity)]
    try:
        while levels:
            level = levels[-1]
            if level.subdirs is None:
                level.subdirs = _unlink_files(fd)
            if level.subdirs:
                name = level.subdirs.pop()
                child, identity = _open_child(fd, name)
                os.close(fd)
                fd = child
                levels.append(_Level(name, identity))
                continue
            levels.pop()
            if not levels:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != levels[-1].identity:
                raise OSError(f"{top_name}: a directory was moved while its tree was removed")
            os.rmdir(level.name, dir_fd=fd)
    finally:
        os.close(fd)


def _unlink_files(fd: int) -> list[str]:
    """Unlink every entry of ``fd`` that is not a directory; returns the subdirectories' names."""
    subdirs = []
    for name in os.listdir(fd):
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(st.st_mode):
            subdirs.append(name)
        else:
            os.unlink(name, dir_fd=fd)
    return subdirs


def remove_children(path: Path, *, ignore_errors: bool = True) -> None:
    """Remove every entry of the directory ``path`` (which stays), each with :func:`remove_tree`."""
    try:
        names = os.listdir(path)
    except FileNotFoundError:
        return
    for name in names:
        remove_tree(path / name, ignore_errors=ignore_errors)


__all__ = ["remove_children", "remove_tree"]
