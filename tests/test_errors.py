"""One root for the errors a command reports as one line: ``arena.errors.ArenaError`` (issue 22).

Commands catch ``ArenaError`` once instead of long tuples; an error that is a
bug in the arena is not one and keeps its traceback.
"""

from __future__ import annotations

import pytest

from arena.errors import ArenaError
from arena.ladder.common.ladder_db import LadderError
from arena.match.seat import PlatformFault
from arena.referee.botspec import BotSpecError
from arena.results.store import DiskFull, StoreError
from arena.sandbox.bot_dir import BotDirError
from arena.sandbox.build import BuildError
from arena.sandbox.docker import BotStartFailed, DockerUnavailable, ImageNotFound
from arena.sandbox.dockerfile_policy import DockerfileError
from arena.sprt.config import SprtConfigError
from arena.tables.cluster import ClusterError
from arena.tables.players import RunStopped
from arena.tables.task import ImageMismatch
from arena.tournament.config import ConfigError

USER_FACING = [
    BotDirError, BotSpecError, BuildError, ClusterError, ConfigError, DiskFull, DockerUnavailable,
    DockerfileError, ImageMismatch, ImageNotFound, LadderError, RunStopped, SprtConfigError, StoreError,
]  # fmt: skip


@pytest.mark.parametrize("error", USER_FACING, ids=lambda e: e.__name__)
def test_user_facing_errors_share_one_root(error: type[Exception]) -> None:
    assert issubclass(error, ArenaError)


def test_faults_that_are_not_the_users_are_not_arena_errors() -> None:
    """A bot's start failure is charged to its seat (an OSError); a platform fault voids a game."""
    assert not issubclass(BotStartFailed, ArenaError) and issubclass(BotStartFailed, OSError)
    assert not issubclass(PlatformFault, ArenaError)


def test_value_errors_stay_value_errors() -> None:
    """Callers that catch ValueError for a bad value (option parsers) still do."""
    assert issubclass(ConfigError, ValueError) and issubclass(BotSpecError, ValueError)
