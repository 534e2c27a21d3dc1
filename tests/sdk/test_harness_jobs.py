"""``python -m arena_sdk.testing --jobs N`` plays games in N processes, with the results of --jobs 1 (issue 26)."""

from __future__ import annotations

import re

import pytest
from arena_sdk.testing import RandomBot, RecordedGame, main, play_game


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(list(argv)) == 0
    out = capsys.readouterr().out
    # Only the elapsed time may differ.
    return [re.sub(r"; [0-9.]+ s$", "", line) for line in out.splitlines()]


def test_jobs_give_the_results_of_one_job(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("random", "--against", "easy", "--games", "6", "--rules", "two-player", "--set", "max_hands=2",
            "--seed", "11", "-v")  # fmt: skip
    one = run(capsys, *argv, "--jobs", "1")
    three = run(capsys, *argv, "--jobs", "3")
    assert len(one) == 7 and one == three
    assert one != run(capsys, *argv[:-3], "--seed", "12", "-v", "--jobs", "3"), "another seed: another series"


def test_bad_jobs_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["random", "--jobs", "0"])
    assert "--jobs must be at least 1" in capsys.readouterr().err


def test_a_harness_record_is_reproduced_with_the_harness_clock() -> None:
    """The local harness's own records rebuild too (no bank is spent there, no allowed_ms sent)."""
    seen: dict[int, tuple] = {}

    class Logger(RandomBot):
        def play(self, view):  # type: ignore[no-untyped-def]
            seen[view.request_id] = (view.hand, view.legal, view.bank_ms, view.allowed_ms, view.tricks)
            return super().play(view)

    result = play_game([Logger, RandomBot], "two-player", seed=5, max_hands=1)
    game = RecordedGame(result.record)
    plays = [d for d in game.decisions("A") if d.kind.value == "play"]
    assert len(plays) == len(seen) == 13
    for d in plays:
        view = game.reproduce("A", d.index).view
        assert (view.hand, view.legal, view.bank_ms, view.allowed_ms, view.tricks) == seen[view.request_id]
    assert not [r for r in game.reask(RandomBot(), "B") if r.differs]
