"""build_and_validate without a store (issue 36): bounded builds, labelled and cancellable validation, kept records.

Real builds and real validation games on the machine's engine.  The function
writes no store: it reports the validating phase through ``on_phase`` and
returns a :class:`BuildOutcome`.  Its validation containers carry the ladder's
run label (a restart's prune finds them), a cancel ends a validation game
within seconds with its containers removed, and the game's record is kept
under ``DIR/validation/v<id>/`` and named in the log.
"""

from __future__ import annotations

import dataclasses
import json
import random
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from docker_support import BASE_IMAGE, engine_or_skip
from ladder_support import bot_source

from arena.ladder.versions.builds import BuildCancelled, build_and_validate, image_tag, source_dir
from arena.ladder.config import CONFIG_NAME, LadderConfig, load_ladder_config, template
from arena.ladder.versions.store import Version

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1200)]

LADDER_ID = f"bt{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def engine() -> Iterator[Any]:
    client = engine_or_skip("build and validate tests")
    yield client
    for image in client.images.list(name=f"arena-ladder-{LADDER_ID}"):
        client.images.remove(image.id, force=True)
    client.close()


def ladder_config(directory: Path, **submissions: Any) -> LadderConfig:
    directory.mkdir()
    text = template("builds", "pagat", {"max_hands": "1"}, BASE_IMAGE).replace("validation_hands = 2", "validation_hands = 1")
    (directory / CONFIG_NAME).write_text(text)
    config = load_ladder_config(directory)
    return dataclasses.replace(config, submissions=dataclasses.replace(config.submissions, **submissions))


#: Version ids unique to this test run: the validation's match label (validate-v<id>) must not be another run's.
_ids = iter(range(random.randrange(10**6, 10**7), 10**8))


def version_with(config: LadderConfig, files: dict[str, str]) -> Version:
    number = next(_ids)
    version = Version(id=number, team="alpha", number=number, note="", status="building", image_id=None,
                      build_log="", validation_log="", attempts=1, created="", activated=None, retired=None,
                      final_elo=None, final_low=None, final_high=None, final_pairs=None)  # fmt: skip
    source = source_dir(config, version)
    source.mkdir(parents=True)
    for name, text in files.items():
        (source / name).write_text(text)
    return version


def run_labels(engine: Any, match: str) -> list[dict[str, str]]:
    return [c.get("Labels") or {} for c in engine.api.containers(all=True, filters={"label": f"arena.match={match}"})]


class Watcher:
    """Records the labels of the containers of one validation game while it plays (another thread)."""

    def __init__(self, engine: Any, match: str, on_seen: threading.Event | None = None) -> None:
        self.engine, self.match, self.on_seen = engine, match, on_seen
        self.seen: list[dict[str, str]] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while not self.done.wait(0.2):
            labels = run_labels(self.engine, self.match)
            if labels:
                self.seen.extend(labels)
                if self.on_seen is not None:
                    self.on_seen.set()

    def stop(self) -> None:
        self.done.set()
        self.thread.join(10)


def test_an_honest_version_passes_its_validation_under_the_run_label_and_its_record_is_kept(engine: Any, tmp_path: Path):
    config = ladder_config(tmp_path / "lad")
    version = version_with(config, {"bot.py": bot_source("HONEST")})
    run_id = f"ladder-{LADDER_ID}"
    phases: list[tuple[str, dict[str, Any]]] = []
    watcher = Watcher(engine, f"validate-v{version.id}")
    try:
        outcome = build_and_validate(config, version, ladder_id=LADDER_ID, run_id=run_id,
                                     on_phase=lambda phase, info: phases.append((phase, dict(info))),
                                     cancel=threading.Event(), client=engine)  # fmt: skip
    finally:
        watcher.stop()
    assert outcome.passed and outcome.reason is None, outcome
    assert outcome.image_id == engine.images.get(image_tag(config, version, LADDER_ID)).id
    assert [p for p, _ in phases] == ["validating"] and phases[0][1]["image_id"] == outcome.image_id
    assert "built image" in phases[0][1]["build_log"]
    assert watcher.seen, "the validation game's containers were seen"
    assert all(labels.get("arena.run") == run_id for labels in watcher.seen), watcher.seen
    assert outcome.validation_record is not None
    record = config.directory / outcome.validation_record
    assert record.parent == config.directory / "validation" / f"v{version.id}" and record.is_file()
    assert outcome.validation_record in outcome.validation_log and "passed" in outcome.validation_log
    assert run_labels(engine, f"validate-v{version.id}") == [], "no container left"


def test_a_build_past_build_timeout_fails_at_once_with_one_line(engine: Any, tmp_path: Path):
    config = ladder_config(tmp_path / "lad", build_timeout=5.0)
    slow = f"ARG BOT_BASE=arena-bot-base\nFROM ${{BOT_BASE}}\nRUN echo {uuid.uuid4().hex} && sleep 900\nCOPY bot.py /bot/\n"
    version = version_with(config, {"Dockerfile": slow, "bot.py": bot_source("SLOW")})
    phases: list[str] = []
    started = time.monotonic()
    outcome = build_and_validate(config, version, ladder_id=LADDER_ID, run_id=f"ladder-{LADDER_ID}",
                                 on_phase=lambda phase, info: phases.append(phase), cancel=threading.Event(),
                                 client=engine)  # fmt: skip
    assert time.monotonic() - started < 600, "stopped, not waited for"
    assert not outcome.passed and outcome.reason == "build timed out after 5 s", outcome.reason
    assert outcome.image_id is None and phases == [] and "build timed out after 5 s" in outcome.build_log


def test_a_failed_validation_says_why_in_one_line_and_names_its_record(engine: Any, tmp_path: Path):
    config = ladder_config(tmp_path / "lad")
    # Each bid raises: the SDK answers nothing, and the seat is struck.
    crash_at_bid = bot_source("CRASH-AT-BID").replace(
        "class Marked(RandomBot):\n", "class Marked(RandomBot):\n    def bid(self, *a, **k):\n        raise RuntimeError('no bid today')\n\n"
    )
    version = version_with(config, {"bot.py": crash_at_bid})
    outcome = build_and_validate(config, version, ladder_id=LADDER_ID, run_id=f"ladder-{LADDER_ID}",
                                 on_phase=lambda phase, info: None, cancel=threading.Event(), client=engine)  # fmt: skip
    assert not outcome.passed and outcome.image_id is not None
    assert outcome.reason is not None and outcome.reason.startswith("validation: ") and "strike" in outcome.reason
    assert "\n" not in outcome.reason
    assert outcome.validation_record is not None and (config.directory / outcome.validation_record).is_file()
    name = Path(outcome.validation_record).name
    assert f"the game's record: {outcome.validation_record}" in outcome.validation_log
    assert f"reproduce: python -m arena_sdk.testing bot.py --replay {name} --seat " in outcome.validation_log, outcome.validation_log


def test_the_validation_game_plays_the_ladders_whole_time_control(engine: Any, tmp_path: Path):
    """Issue 44: validation rebuilt the time control from 4 of its fields; the ladder's strikes were dropped.

    With ``strikes = 1`` a seat's first strike forfeits the game; under the
    default 3 (what validation used) the same bot only collected strikes.
    """
    config = ladder_config(tmp_path / "lad")
    tc = dataclasses.replace(config.time_control, strikes_to_forfeit=1, offturn_free_s=7.0, offturn_share=0.5)
    config = dataclasses.replace(config, time_control=tc)
    illegal_bid = bot_source("ILLEGAL-BID").replace(
        "class Marked(RandomBot):\n", "class Marked(RandomBot):\n    def bid(self, *a, **k):\n        return 99\n\n"
    )
    version = version_with(config, {"bot.py": illegal_bid})
    outcome = build_and_validate(config, version, ladder_id=LADDER_ID, run_id=f"ladder-{LADDER_ID}",
                                 on_phase=lambda phase, info: None, cancel=threading.Event(), client=engine)  # fmt: skip
    assert not outcome.passed and outcome.reason is not None
    assert outcome.reason.startswith("validation: forfeit:"), outcome.reason
    assert outcome.validation_record is not None
    record = json.loads((config.directory / outcome.validation_record).read_text())
    assert record["result"]["forfeit"]["reason"] == "illegal", record["result"]


def test_a_cancel_during_the_validation_game_ends_it_within_seconds_and_removes_its_containers(engine: Any, tmp_path: Path):
    config = ladder_config(tmp_path / "lad")
    config = dataclasses.replace(config, time_control=dataclasses.replace(config.time_control, bank_s=600.0, hard_cap_s=900.0))
    slow_bot = bot_source("SLOW-THINKER").replace(
        "class Marked(RandomBot):\n", "import time\n\nclass Marked(RandomBot):\n    def bid(self, *a, **k):\n        time.sleep(600)\n        return super().bid(*a, **k)\n\n"
    )
    version = version_with(config, {"bot.py": slow_bot})
    run_id = f"ladder-{LADDER_ID}"
    cancel = threading.Event()
    seen = threading.Event()
    cancelled_at: list[float] = []

    def cancel_once_playing() -> None:
        seen.wait(600)
        time.sleep(3)  # the game is under way, a seat thinking
        cancelled_at.append(time.monotonic())
        cancel.set()

    watcher = Watcher(engine, f"validate-v{version.id}", seen)
    threading.Thread(target=cancel_once_playing, daemon=True).start()
    try:
        with pytest.raises(BuildCancelled):
            build_and_validate(config, version, ladder_id=LADDER_ID, run_id=run_id, on_phase=lambda p, i: None,
                               cancel=cancel, client=engine)  # fmt: skip
        ended = time.monotonic()
    finally:
        watcher.stop()
    assert cancelled_at, "the validation game started"
    print(f"the validation ended {ended - cancelled_at[0]:.1f} s after the cancel")
    # Uncancelled, the game waits on a bid of 600 s: half of that tells a working cancel from one
    # that waited, however loaded the machine (seconds when quiet; 85 s was seen at load 50).
    assert ended - cancelled_at[0] < 300, f"the validation ended {ended - cancelled_at[0]:.0f} s after the cancel"
    assert run_labels(engine, f"validate-v{version.id}") == [], "its containers were removed"
    assert all(labels.get("arena.run") == run_id for labels in watcher.seen)
