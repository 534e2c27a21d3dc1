"""Where the SDK takes a seat's token from (issue 23 item 3): the arena's pipe beats ``ARENA_TOKEN``.

A local bot gets its token on an inherited pipe named by ``ARENA_TOKEN_FILE``;
an ``ARENA_TOKEN`` beside it can only be a stale one from the organiser's
shell.  Real pipes, read the way the arena hands them over.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena_sdk.client import ENV_TOKEN, ENV_TOKEN_FILE, token_from_env


def pipe_holding(text: str) -> str:
    """A pipe's read end holding ``text`` (as /dev/fd/N), like the one a local bot inherits."""
    read_end, write_end = os.pipe()
    with os.fdopen(write_end, "w") as w:
        w.write(text)
    return f"/dev/fd/{read_end}"


def test_the_pipe_wins_over_a_stale_arena_token(monkeypatch: pytest.MonkeyPatch) -> None:
    path = pipe_holding("seat-token")
    monkeypatch.setenv(ENV_TOKEN, "stale")
    monkeypatch.setenv(ENV_TOKEN_FILE, path)
    try:
        assert token_from_env() == "seat-token"
    finally:
        os.close(int(path.rsplit("/", 1)[1]))


def test_the_variable_is_used_without_a_pipe_or_when_the_pipe_gives_nothing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(ENV_TOKEN, "container-token")  # how a container seat or a bot run by hand gets it
    monkeypatch.delenv(ENV_TOKEN_FILE, raising=False)
    assert token_from_env() == "container-token"
    monkeypatch.setenv(ENV_TOKEN_FILE, str(tmp_path / "missing"))
    assert token_from_env() == "container-token"
    (tmp_path / "empty").write_text("\n")
    monkeypatch.setenv(ENV_TOKEN_FILE, str(tmp_path / "empty"))
    assert token_from_env() == "container-token"
    monkeypatch.delenv(ENV_TOKEN)
    assert token_from_env() is None
