"""A bot's directory is hostile input: check it, copy it safely, unpack an uploaded tarball safely.

What a bot directory may hold (docs/packaging.md): regular files and
directories, nothing else.  Refused, each with one message naming the path:

- **symbolic links**, wherever they point (a link to ``~/.ssh`` or to the
  tournament file carried the organiser's files into the image; a link to
  ``/dev/zero`` filled the disk).  Even a link inside the directory: simpler,
  and nothing needs one;
- **hard links** (a regular file with more than one name may be the content
  of a file outside the directory);
- **devices, FIFOs and sockets** (a FIFO blocked the copy forever);
- more than :data:`DEFAULT_MAX_BYTES` of files, more than
  :data:`DEFAULT_MAX_FILES` files and directories, directories nested deeper
  than :data:`DEFAULT_MAX_DEPTH` (:class:`DirLimits`; ``--max-bytes`` and
  ``--max-files`` of ``arena bot build``, or ``ARENA_BOT_MAX_BYTES`` and
  ``ARENA_BOT_MAX_FILES``).

Names in :data:`IGNORED` (caches, ``.git``, virtual environments) are skipped
without being looked into, but for a Node.js bot's own packages: the top
``node_modules`` of a directory with its own ``Dockerfile`` and a
``package.json`` is the bot's (its build is offline: they must come in it).  Every file is opened relative to its directory's
descriptor with ``O_NOFOLLOW`` and checked again after opening (a file swapped
for a link or a FIFO between the check and the copy is refused), and the copy
counts the bytes it reads, not the sizes it saw.  Copies get normalised modes:
``0644``, or ``0755`` for a file with any execute bit, ``0755`` for a
directory (no setuid, setgid, sticky or world-writable bits; everything in a
bot's image is readable by the bot's user).

:func:`check_bot_dir` and :func:`copy_bot_dir` serve ``arena bot build`` and
a server that unpacked an upload; :func:`extract_tar` unpacks an uploaded
tarball (plain, gzip, bzip2 or xz) under the same rules.  Nothing is left
behind when one refuses.
"""

from __future__ import annotations

import bz2
import dataclasses
import fnmatch
import gzip
import lzma
import os
import re
import stat
import tarfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

from arena.errors import ArenaError
from arena.sandbox.tree import remove_tree

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_FILES = 10_000
DEFAULT_MAX_DEPTH = 32
MAX_BYTES_ENV = "ARENA_BOT_MAX_BYTES"
MAX_FILES_ENV = "ARENA_BOT_MAX_FILES"
#: Names never copied (nor looked into): caches, version control, virtual environments.
IGNORED = ("__pycache__", "*.pyc", ".git", ".venv", "node_modules")
_CHUNK = 1024 * 1024
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO swapped in after the check must not block the open.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class BotDirError(ArenaError, ValueError):
    """A bot directory or archive that is refused; the message names the path and the reason."""


@dataclasses.dataclass(frozen=True)
class DirLimits:
    """Caps on a bot's directory: total bytes of its files, files and directories, nesting."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_files: int = DEFAULT_MAX_FILES
    max_depth: int = DEFAULT_MAX_DEPTH

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> DirLimits:
        """The defaults, changed by ``ARENA_BOT_MAX_BYTES`` (a size like ``512m``) and ``ARENA_BOT_MAX_FILES``."""
        values = {}
        for key, env, parse in (("max_bytes", MAX_BYTES_ENV, parse_size), ("max_files", MAX_FILES_ENV, _count)):
            if environ.get(env, "").strip():
                try:
                    values[key] = parse(environ[env])
                except ValueError as exc:
                    raise BotDirError(f"{env}: {exc}") from None
        return cls(**values)


@dataclasses.dataclass(frozen=True)
class DirSummary:
    """What a checked directory or an unpacked archive holds."""

    files: int
    dirs: int
    bytes: int


_SIZE = re.compile(r"(\d+)\s*([kmg]?)(?:i?b)?", re.IGNORECASE)


def parse_size(text: str) -> int:
    """A positive size in bytes: ``4096``, ``64k``, ``256m``, ``1g`` (also ``KiB``, ``MB``: all powers of 1024)."""
    found = _SIZE.fullmatch(text.strip())
    if not found or int(found.group(1)) <= 0:
        raise ValueError(f"expected a positive size like 256m, got {text!r}")
    return int(found.group(1)) * 1024 ** " kmg".index(found.group(2).lower() or " ")


def _count(text: str) -> int:
    if not text.strip().isdigit() or int(text) <= 0:
        raise ValueError(f"expected a positive whole number, got {text!r}")
    return int(text)


def human_size(n: int) -> str:
    """``n`` bytes as the largest whole unit: ``2 MiB``, ``4 KiB``, ``1000 bytes``."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


#: The most of a path a message shows (a hostile archive's names run to thousands of characters).
SHOWN_CHARS = 160


def _shown(path: str) -> str:
    """A path for a one-line message: escaped unless printable (a name can hold escape codes), and capped."""
    if len(path) > SHOWN_CHARS:
        path = f"{path[:SHOWN_CHARS]}... ({len(path)} characters)"
    return path if path.isprintable() else ascii(path)


def _too_big(where: str, limits: DirLimits) -> BotDirError:
    return BotDirError(
        f"{_shown(where)}: the bot's directory is larger than {human_size(limits.max_bytes)} "
        f"(its cap: raise it with --max-bytes or {MAX_BYTES_ENV})"
    )


def _too_many(where: str, limits: DirLimits) -> BotDirError:
    return BotDirError(
        f"{_shown(where)}: the bot's directory holds more than {limits.max_files} files and directories "
        f"(its cap: raise it with --max-files or {MAX_FILES_ENV})"
    )


def _kind_refusal(where: str, mode: int, nlink: int) -> BotDirError | None:
    """Why an entry of this ``lstat`` mode may not be in a bot's directory, or None."""
    why = None
    if stat.S_ISLNK(mode):
        why = "is a symbolic link: links are refused in a bot's directory, wherever they point (copy the file in)"
    elif stat.S_ISFIFO(mode):
        why = "is a FIFO (named pipe): only regular files and directories may be in a bot's directory"
    elif stat.S_ISSOCK(mode):
        why = "is a socket: only regular files and directories may be in a bot's directory"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "character" if stat.S_ISCHR(mode) else "block"
        why = f"is a {kind} device: only regular files and directories may be in a bot's directory"
    elif stat.S_ISREG(mode) and nlink > 1:
        why = f"is a hard link ({nlink} names for one file): refused, it may be a file from outside the directory (copy it instead)"  # fmt: skip
    elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        why = "is neither a regular file nor a directory"
    return BotDirError(f"{_shown(where)} {why}") if why else None


def _ignored(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in IGNORED)


def _normal_mode(mode: int, is_dir: bool) -> int:
    """0755 for directories and files with any execute bit, else 0644."""
    return 0o755 if is_dir or mode & 0o111 else 0o644


@dataclasses.dataclass
class _Walk:
    limits: DirLimits
    keep_at_top: frozenset[str] = frozenset()
    """Names of :data:`IGNORED` kept at the directory's top (a Node bot's ``node_modules``)."""
    files: int = 0
    dirs: int = 0
    bytes: int = 0

    def count(self, where: str) -> None:
        if self.files + self.dirs > self.limits.max_files:
            raise _too_many(where, self.limits)

    def add_bytes(self, n: int, where: str) -> None:
        self.bytes += n
        if self.bytes > self.limits.max_bytes:
            raise _too_big(where, self.limits)


def _walk(fd: int, shown: str, depth: int, walk: _Walk, dest_fd: int | None) -> None:
    """Check (and copy into ``dest_fd``) the directory open at ``fd``; ``shown`` is its path."""
    with os.scandir(fd) as entries:
        for entry in entries:
            name = entry.name
            if _ignored(name) and not (depth == 0 and name in walk.keep_at_top):
                continue
            where = f"{shown}/{name}"
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            refusal = _kind_refusal(where, st.st_mode, st.st_nlink)
            if refusal is not None:
                raise refusal
            if stat.S_ISDIR(st.st_mode):
                walk.dirs += 1
                walk.count(where)
                if depth + 1 > walk.limits.max_depth:
                    raise BotDirError(f"{_shown(where)}: directories nested deeper than {walk.limits.max_depth}")
                child = _open_same(name, fd, st, where, _DIR_FLAGS)
                child_dest = None
                try:
                    if dest_fd is not None:
                        os.mkdir(name, 0o755, dir_fd=dest_fd)
                        child_dest = os.open(name, _DIR_FLAGS, dir_fd=dest_fd)
                        os.fchmod(child_dest, 0o755)
                    _walk(child, where, depth + 1, walk, child_dest)
                finally:
                    os.close(child)
                    if child_dest is not None:
                        os.close(child_dest)
            else:
                walk.files += 1
                walk.count(where)
                if dest_fd is None:
                    walk.add_bytes(st.st_size, where)
                else:
                    _copy_file(name, fd, st, where, walk, dest_fd)


def _open_same(name: str, fd: int, seen: os.stat_result, where: str, flags: int) -> int:
    """Open ``name`` without following a link; refuse it if it is no longer what ``lstat`` saw."""
    try:
        opened = os.open(name, flags, dir_fd=fd)
    except OSError as exc:
        raise BotDirError(f"{_shown(where)} changed while it was read ({exc.strerror})") from None
    now = os.fstat(opened)
    if (now.st_dev, now.st_ino, stat.S_IFMT(now.st_mode)) != (seen.st_dev, seen.st_ino, stat.S_IFMT(seen.st_mode)):
        os.close(opened)
        raise BotDirError(f"{_shown(where)} changed while it was read")
    return opened


def _copy_file(name: str, fd: int, seen: os.stat_result, where: str, walk: _Walk, dest_fd: int) -> None:
    source = _open_same(name, fd, seen, where, _FILE_FLAGS)
    try:
        if os.fstat(source).st_nlink > 1:
            raise _kind_refusal(where, seen.st_mode, 2) or BotDirError(where)
        mode = _normal_mode(seen.st_mode, False)
        target = os.open(name, _NEW_FILE_FLAGS, mode, dir_fd=dest_fd)
        try:
            os.fchmod(target, mode)  # the umask does not decide
            while chunk := os.read(source, _CHUNK):
                walk.add_bytes(len(chunk), where)  # what is read counts: the file may have grown
                os.write(target, chunk)
        finally:
            os.close(target)
    finally:
        os.close(source)


def _kept_at_top(root: Path) -> frozenset[str]:
    """``node_modules`` for a Node bot with its own Dockerfile (its packages), else nothing."""
    own_build = os.path.isfile(root / "Dockerfile") and os.path.isfile(root / "package.json")
    return frozenset({"node_modules"}) if own_build else frozenset()


def check_bot_dir(root: Path, limits: DirLimits | None = None) -> DirSummary:
    """Check the bot directory ``root`` (the directory itself is the caller's choice) without copying.

    Raises :class:`BotDirError` naming the first entry refused.  Cheap: ``lstat`` only.
    """
    limits = limits or DirLimits()
    fd = _open_root(root)
    walk = _Walk(limits, _kept_at_top(root))
    try:
        _walk(fd, str(root), 0, walk, None)
    finally:
        os.close(fd)
    return DirSummary(files=walk.files, dirs=walk.dirs, bytes=walk.bytes)


def copy_bot_dir(root: Path, dest: Path, limits: DirLimits | None = None) -> DirSummary:
    """Check ``root`` and copy it to the new directory ``dest`` with normalised modes.

    The check runs first (nothing is written for a refused directory); the
    copy checks every entry again as it opens it.  On a refusal ``dest`` is
    removed and :class:`BotDirError` raised.
    """
    limits = limits or DirLimits()
    check_bot_dir(root, limits)
    fd = _open_root(root)
    walk = _Walk(limits, _kept_at_top(root))
    try:
        os.mkdir(dest, 0o755)
    except FileExistsError:
        os.close(fd)
        raise BotDirError(f"{_shown(str(dest))} already exists: copy into a new directory") from None
    try:
        dest_fd = os.open(dest, _DIR_FLAGS)
        try:
            os.fchmod(dest_fd, 0o755)
            _walk(fd, str(root), 0, walk, dest_fd)
        finally:
            os.close(dest_fd)
    except BaseException:
        remove_tree(dest, ignore_errors=True)
        raise
    finally:
        os.close(fd)
    return DirSummary(files=walk.files, dirs=walk.dirs, bytes=walk.bytes)


def _open_root(root: Path) -> int:
    try:
        return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise BotDirError(f"{_shown(str(root))} is not a directory one can read ({exc.strerror})") from None


def read_regular_file(root: Path, name: str, max_bytes: int) -> bytes | None:
    """The content of the regular file ``root/name``, never through a link; None if there is none.

    Refuses (with :class:`BotDirError`, never showing the content) a link, a
    FIFO, a device, or a file over ``max_bytes``.
    """
    if "/" in name or name in ("", ".", ".."):
        raise ValueError(f"one file name expected, got {name!r}")
    fd = _open_root(root)
    where = f"{root}/{name}"
    try:
        try:
            seen = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        refusal = _kind_refusal(where, seen.st_mode, seen.st_nlink)
        if refusal is not None:
            raise refusal
        if stat.S_ISDIR(seen.st_mode):
            raise BotDirError(f"{_shown(where)} is a directory, not a file")
        source = _open_same(name, fd, seen, where, _FILE_FLAGS)
        try:
            data = os.read(source, max_bytes + 1)
            while len(data) <= max_bytes and (more := os.read(source, max_bytes + 1 - len(data))):
                data += more
        finally:
            os.close(source)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise BotDirError(f"{_shown(where)} is larger than {human_size(max_bytes)}")
    return data


# --------------------------------------------------------------------------- tar archives


class _Capped:
    """A reader that refuses to give more than ``cap`` bytes in all (a decompression bomb stops here)."""

    def __init__(self, raw: BinaryIO, cap: int) -> None:
        self.raw, self.cap, self.read_bytes, self.exceeded = raw, cap, 0, False

    def read(self, size: int = -1) -> bytes:
        want = self.cap + 1 - self.read_bytes if size is None or size < 0 else min(size, self.cap + 1 - self.read_bytes)
        data = self.raw.read(max(want, 0))
        self.read_bytes += len(data)
        if self.read_bytes > self.cap:
            self.exceeded = True
            raise OSError("the archive is larger than its cap")
        return data


class _Prefixed:
    """``prefix`` then the rest of ``raw`` (the magic bytes read to pick a decompressor)."""

    def __init__(self, prefix: bytes, raw: BinaryIO) -> None:
        self.prefix, self.raw = prefix, raw

    def read(self, size: int = -1) -> bytes:
        if self.prefix:
            if size is None or size < 0:
                data, self.prefix = self.prefix + self.raw.read(), b""
                return data
            data, self.prefix = self.prefix[:size], self.prefix[size:]
            return data
        return self.raw.read(size)


def _decompressed(raw: BinaryIO) -> BinaryIO:
    magic = raw.read(6)
    stream = _Prefixed(magic, raw)
    if magic.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[arg-type]
    if magic.startswith(b"BZh"):
        return bz2.BZ2File(stream, mode="rb")  # type: ignore[arg-type]
    if magic.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(stream, mode="rb")  # type: ignore[arg-type]
    return stream  # type: ignore[return-value]


def _member_path(name: str) -> list[str]:
    """A member's name as path parts below the destination; refuses absolute names and ``..``."""
    if name.startswith("/"):
        raise BotDirError(f"{_shown(name)}: an absolute name in the archive")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise BotDirError(f"{_shown(name)}: a name with '..' in the archive")
    return parts


def extract_tar(archive: Path | BinaryIO, dest: Path, limits: DirLimits | None = None) -> DirSummary:
    """Unpack a bot's tarball (plain, gzip, bzip2 or xz) into the new directory ``dest``.

    Only regular files and directories; refused with :class:`BotDirError`
    naming the member: absolute names, ``..``, links (symbolic or hard),
    devices, FIFOs, a name twice, a file used as a directory, more than
    ``limits.max_files`` members, more than ``limits.max_bytes`` of files.
    The decompressed stream is capped too (headers included: a pax header is
    read into memory, so memory stays below the cap).  Modes are normalised
    as in :func:`copy_bot_dir`.  On a refusal ``dest`` is removed.
    """
    limits = limits or DirLimits()
    if os.path.lexists(dest):
        raise BotDirError(f"{_shown(str(dest))} already exists: extract into a new directory")
    if isinstance(archive, Path):
        with open(archive, "rb") as f:
            return extract_tar(f, dest, limits)
    capped = _Capped(_decompressed(archive), limits.max_bytes + (limits.max_files + 2) * 1024 + _CHUNK)
    os.mkdir(dest, 0o755)
    dest_fd = os.open(dest, _DIR_FLAGS)
    walk = _Walk(limits)
    kinds: dict[str, str] = {}
    try:
        os.fchmod(dest_fd, 0o755)
        try:
            with tarfile.open(fileobj=capped, mode="r|") as tar:  # type: ignore[call-overload]
                members = 0
                for member in tar:
                    members += 1
                    if members > limits.max_files:
                        raise _too_many(member.name, limits)
                    try:
                        _extract_member(tar, member, dest_fd, walk, kinds)
                    except OSError as exc:
                        if capped.exceeded:
                            raise
                        raise BotDirError(f"{_shown(member.name)}: cannot be unpacked ({exc.strerror or exc})") from None
        except BotDirError:
            raise
        except (tarfile.TarError, OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
            if capped.exceeded:
                raise _too_big("the archive", limits) from None
            raise BotDirError(f"not a tar archive one can read ({type(exc).__name__}: {exc})") from None
    except BaseException:
        os.close(dest_fd)
        dest_fd = -1
        remove_tree(dest, ignore_errors=True)
        raise
    finally:
        if dest_fd >= 0:
            os.close(dest_fd)
    return DirSummary(files=walk.files, dirs=walk.dirs, bytes=walk.bytes)


def _extract_member(tar: tarfile.TarFile, member: tarfile.TarInfo, dest_fd: int, walk: _Walk, kinds: dict[str, str]) -> None:
    name = member.name
    parts = _member_path(name)
    kind = (
        "symbolic link" if member.issym() else "hard link" if member.islnk()
        else "device" if member.ischr() or member.isblk() else "FIFO" if member.isfifo()
        else "sparse file" if member.issparse() else None
    )  # fmt: skip
    if kind is not None or not (member.isreg() or member.isdir()):
        raise BotDirError(f"{_shown(name)} is a {kind or 'special entry'}: only regular files and directories may be in a bot's archive")  # fmt: skip
    if not parts:
        return  # "./": the destination itself
    # A file at depth N is in N-1 directories; a directory at depth N is N deep: the same rule as check_bot_dir.
    depth = len(parts) if member.isdir() else len(parts) - 1
    if depth > walk.limits.max_depth:
        raise BotDirError(f"{_shown(name)}: directories nested deeper than {walk.limits.max_depth}")
    parent = _make_dirs(parts[:-1], name, dest_fd, walk, kinds)
    try:
        path = "/".join(parts)
        if member.isdir():
            if kinds.get(path) == "file":
                raise BotDirError(f"{_shown(name)}: the archive holds this name twice")
            if path not in kinds:
                os.mkdir(parts[-1], 0o755, dir_fd=parent)
                os.chmod(parts[-1], 0o755, dir_fd=parent)
                kinds[path] = "dir"
                walk.dirs += 1
                walk.count(name)
            return
        if path in kinds:
            raise BotDirError(f"{_shown(name)}: the archive holds this name twice")
        kinds[path] = "file"
        walk.files += 1
        walk.count(name)
        if walk.bytes + member.size > walk.limits.max_bytes:
            raise _too_big(name, walk.limits)  # before a byte is written
        mode = _normal_mode(member.mode, False)
        target = os.open(parts[-1], _NEW_FILE_FLAGS, mode, dir_fd=parent)
        try:
            os.fchmod(target, mode)
            data = tar.extractfile(member)
            while data is not None and (chunk := data.read(_CHUNK)):
                walk.add_bytes(len(chunk), name)
                os.write(target, chunk)
        finally:
            os.close(target)
    finally:
        if parent != dest_fd:
            os.close(parent)


def _make_dirs(parts: list[str], name: str, dest_fd: int, walk: _Walk, kinds: dict[str, str]) -> int:
    """The descriptor of ``parts`` below the destination, made as needed (never through a link)."""
    fd = dest_fd
    for i, part in enumerate(parts):
        path = "/".join(parts[: i + 1])
        if kinds.get(path) == "file":
            raise BotDirError(f"{_shown(name)}: its directory {_shown(path)} is a file in the archive")
        if path not in kinds:
            os.mkdir(part, 0o755, dir_fd=fd)
            os.chmod(part, 0o755, dir_fd=fd)
            kinds[path] = "dir"
            walk.dirs += 1
            walk.count(name)
        opened = os.open(part, _DIR_FLAGS, dir_fd=fd)
        if fd != dest_fd:
            os.close(fd)
        fd = opened
    return fd
