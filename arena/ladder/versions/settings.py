"""``[submissions]`` of ``ladder.toml``: what one upload may be, how it is built, and how often a team may send one.

This package owns the section: :class:`SubmissionLimits` and its parser, and
the text ``arena ladder init`` writes for it (:func:`submissions_template`).
The configuration loader (:mod:`arena.ladder.config`) composes it with the
other packages' sections.  A bad value is one :class:`~arena.toml_keys.ConfigError` line.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from arena.sandbox.bot_dir import parse_size
from arena.sandbox.build import DEFAULT_BASE_IMAGE
from arena.sandbox.build_run import BuildLimits
from arena.toml_keys import ConfigError, read_key, toml_value

#: The keys of ``[submissions]``.
KEYS = {
    "max_bytes", "max_files", "build_timeout", "build_memory", "build_cpus", "max_image_size", "builders",
    "daily_quota", "validation_hands", "base_image",
}  # fmt: skip
#: The least a build step may be given (the engine refuses less than 6 MiB; pip needs far more).
MIN_BUILD_MEMORY = 32 * 1024**2
#: The least an image may be capped at (the bot base alone is over 100 MiB).
MIN_IMAGE_SIZE = 64 * 1024**2


@dataclasses.dataclass(frozen=True)
class SubmissionLimits:
    """What one upload may be, and how often a team may send one."""

    max_bytes: int = 32 * 1024 * 1024
    """The uploaded archive, compressed, and the unpacked directory: at most this many bytes each."""
    max_files: int = 2000
    build_timeout: float = 600.0
    """Seconds a build may take (the offline image build; validation has its own bounded game)."""
    build_memory: int = 1024**3
    """Bytes of memory (swap included) of each build step's container."""
    build_cpus: float = 1.0
    """CPU cores each build step's container may use."""
    max_image_size: int = 2 * 1024**3
    """Bytes a built image may take (base included); a build step's writable layer is stopped past it too."""
    builders: int = 2
    """Builds run at once (so other teams' uploads do not wait behind one slow build)."""
    daily_quota: int = 20
    """Submissions per team per UTC day: every upload whose files arrived counts, even if its build fails
    (a build costs the organiser's machine); one refused or failed before its files were in place does not."""
    validation_hands: int = 2
    """Hands of the validation game a new version plays against itself before it is ranked."""
    base_image: str = DEFAULT_BASE_IMAGE
    """The Python image the bot base is built on (on a machine with no registry: arena-base:bookworm)."""

    @property
    def build_limits(self) -> BuildLimits:
        """What every build of an upload may use (:mod:`arena.sandbox.build_run`)."""
        return BuildLimits(
            timeout_s=self.build_timeout, memory=self.build_memory, cpus=self.build_cpus, image_bytes=self.max_image_size
        )


def parse_submissions(table: dict[str, Any]) -> SubmissionLimits:
    """``[submissions]`` (its keys checked before); :class:`ConfigError` (one line) for a bad value."""
    d = SubmissionLimits

    def number(key: str, kind: type | tuple[type, ...]) -> Any:
        return read_key(table, key, kind, getattr(d, key), "submissions")

    submissions = SubmissionLimits(
        max_bytes=number("max_bytes", int),
        max_files=number("max_files", int),
        build_timeout=float(number("build_timeout", (int, float))),
        build_memory=_size(table, "build_memory", d.build_memory, MIN_BUILD_MEMORY),
        build_cpus=float(number("build_cpus", (int, float))),
        max_image_size=_size(table, "max_image_size", d.max_image_size, MIN_IMAGE_SIZE),
        builders=number("builders", int),
        daily_quota=number("daily_quota", int),
        validation_hands=number("validation_hands", int),
        base_image=number("base_image", str),
    )
    _check_ranges(submissions)
    return submissions


def _check_ranges(submissions: SubmissionLimits) -> None:
    for key in ("max_bytes", "max_files", "daily_quota", "validation_hands"):
        if getattr(submissions, key) < 1:
            raise ConfigError(f"[submissions] {key} must be at least 1, got {getattr(submissions, key)}")
    if not 1 <= submissions.build_timeout <= 86400:  # TOML allows inf and nan: neither is a bound
        raise ConfigError(f"[submissions] build_timeout must be 1 to 86400 seconds, got {submissions.build_timeout}")
    if not 0.01 <= submissions.build_cpus <= 256:
        raise ConfigError(f"[submissions] build_cpus must be 0.01 to 256 cores, got {submissions.build_cpus}")
    if not 1 <= submissions.builders <= 16:
        raise ConfigError(f"[submissions] builders must be 1 to 16, got {submissions.builders}")


def _size(table: dict[str, Any], key: str, default: int, least: int) -> int:
    """A size key of [submissions]: ``"512m"`` (k, m, g: powers of 1024) or a whole number of bytes."""
    value = read_key(table, key, (str, int), default, "submissions")
    try:
        size = value if isinstance(value, int) else parse_size(value)
    except ValueError as exc:
        raise ConfigError(f"[submissions] {key}: {exc}") from None
    if size < least:
        raise ConfigError(f"[submissions] {key} must be at least {least // 1024**2} MiB, got {value!r}")
    return size


def submissions_template(base_image: str) -> str:
    """``[submissions]`` as ``arena ladder init`` writes it, every key with its default and what it means."""
    return f"""[submissions]
max_bytes = 33554432           # the upload (compressed) and the unpacked bot directory, each: 32 MiB
max_files = 2000               # files in the bot directory
build_timeout = 600.0          # seconds an image build may take; then it is stopped and the version fails
build_memory = "1g"            # memory (swap included) of each build step: a whole number and k, m or g
build_cpus = 1.0               # CPU cores each build step may use
max_image_size = "2g"          # a built image (base included) and a build step's disk writes: at most this
builders = 2                   # builds at once (other teams' uploads do not wait behind one slow build)
daily_quota = 20               # uploads per team per UTC day (a failed build counts; a refused upload does not)
validation_hands = 2           # hands of the game a new version plays against itself before it is ranked
base_image = {toml_value(base_image)}  # the Python image bots are built on (arena bot build --base-image)
"""


__all__ = ["KEYS", "MIN_BUILD_MEMORY", "MIN_IMAGE_SIZE", "SubmissionLimits", "parse_submissions", "submissions_template"]
