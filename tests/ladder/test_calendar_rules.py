"""The course calendar's pure parts: phases by the clock, countdown text, grade bands, neighbours' verdicts, final pairs."""

from __future__ import annotations

import dataclasses
import datetime
import re
import subprocess
import sys
from pathlib import Path

import pytest

from arena.ladder.course.calendar import (
    BEFORE, FINAL, FROZEN, OPEN, Calendar, countdown, parse_instant, phase, span, upload_refusal,
)  # fmt: skip
from arena.ladder.course.final import OPEN as UNSETTLED
from arena.ladder.course.final import SEPARATED, TIED, final_pairing, final_table, settled, verdict, verdicts
from arena.ladder.course.grades import GradeBands
from arena.ladder.games.standings import Standing

UTC = datetime.UTC
T0 = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
HOUR = datetime.timedelta(hours=1)
CAL = Calendar(opens=T0, deadline=T0 + 48 * HOUR, final_until=T0 + 72 * HOUR)


def test_phases_follow_the_clock_and_a_ladder_with_no_dates_is_open_for_ever():
    assert phase(T0 - HOUR, CAL) == BEFORE
    assert phase(T0, CAL) == OPEN  # opens is the first instant of the open phase
    assert phase(T0 + 47 * HOUR, CAL) == OPEN
    assert phase(T0 + 48 * HOUR, CAL) == FINAL
    assert phase(T0 + 50 * HOUR, CAL, settled=True) == FROZEN  # settled early: frozen before final_until
    assert phase(T0 + 72 * HOUR, CAL) == FROZEN
    assert phase(T0 + 1000 * HOUR, Calendar()) == OPEN
    assert phase(T0 + 1000 * HOUR, Calendar(deadline=T0)) == FINAL  # no final_until: until settled


def test_upload_refusals_name_the_time():
    before = upload_refusal(T0 - 3 * HOUR, CAL)
    assert before == "uploads open at 2026-03-01T12:00:00+00:00 (in 3 h 0 min)"
    assert upload_refusal(T0 + HOUR, CAL) is None
    after = upload_refusal(T0 + 49 * HOUR, CAL)
    assert after is not None and "closed at the deadline, 2026-03-03T12:00:00+00:00" in after


def test_with_practice_uploads_after_the_deadline_are_taken():
    practice = dataclasses.replace(CAL, after_deadline="practice")
    assert upload_refusal(T0 + 49 * HOUR, practice) is None and upload_refusal(T0 + 80 * HOUR, practice) is None
    before = upload_refusal(T0 - HOUR, practice)
    assert before is not None and before.startswith("uploads open at "), "the opening still holds"


def test_countdown_text_is_days_and_hours_then_hours_and_minutes():
    assert span(3 * 86400 + 4 * 3600 + 59) == "3 d 4 h"
    assert span(5 * 3600 + 12 * 60) == "5 h 12 min"
    assert span(420) == "7 min" and span(40) == "40 s"
    now = T0 + 44 * HOUR - datetime.timedelta(minutes=30)
    assert countdown(now, CAL) == "deadline in 4 h 30 min (2026-03-03 12:00 UTC)"
    assert countdown(T0 - 76 * HOUR, CAL) == "uploads open in 3 d 4 h (2026-03-01 12:00 UTC)"
    assert countdown(T0 + 60 * HOUR, CAL) == "final standings freeze in 12 h 0 min (2026-03-04 12:00 UTC)"
    assert countdown(T0 + 80 * HOUR, CAL) is None


def test_instants_are_iso_8601_in_utc():
    assert parse_instant("2026-03-01T12:00:00Z", "opens") == T0
    assert parse_instant("2026-03-01T13:00:00+01:00", "opens") == T0
    assert parse_instant("2026-03-01T12:00:00", "opens") == T0  # no offset: UTC
    assert parse_instant("", "opens") is None
    with pytest.raises(ValueError, match="opens: 'next monday' is not an ISO 8601 time"):
        parse_instant("next monday", "opens")
    with pytest.raises(ValueError, match="must come after"):
        Calendar(opens=T0, deadline=T0)
    with pytest.raises(ValueError, match="final_until needs a deadline"):
        Calendar(final_until=T0)
    with pytest.raises(ValueError, match="after_deadline must be 'refuse' or 'practice', got 'keep'"):
        Calendar(after_deadline="keep")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ('deadline = "2026-13-01"', "[schedule] deadline: '2026-13-01' is not an ISO 8601 time"),
        ('los = 1.5', "[final] los must be a number above 0.5 and below 1, got 1.5"),
        ('bands = [[50, "A"]]', "[grades] bands: the last bound must be 100"),
        ('after_deadline = "later"', "[schedule] after_deadline must be 'refuse' or 'practice'"),
    ],
)
def test_a_bad_calendar_key_is_one_line(tmp_path: Path, edit: str, message: str):
    arena = str(Path(sys.executable).with_name("arena"))
    made = subprocess.run([arena, "ladder", "init", str(tmp_path / "lad")], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    toml = tmp_path / "lad" / "ladder.toml"
    key = edit.split(" = ")[0]
    text, n = re.subn(rf"(?m)^{key} = .*$", edit, toml.read_text())
    assert n == 1
    toml.write_text(text)
    from arena.ladder.config import load_ladder_config
    from arena.tournament.config import ConfigError

    with pytest.raises(ConfigError) as caught:
        load_ladder_config(tmp_path / "lad")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_grade_bands_by_rank_percentile_ties_share_a_place():
    bands = GradeBands(((10, "A"), (35, "B"), (70, "C"), (100, "D")), missing="F")
    # Ten ranked teams: fewer than 10% above is only the first.
    assert [bands.grade(p, 10) for p in range(1, 11)] == ["A", "B", "B", "B", "C", "C", "C", "D", "D", "D"]
    assert bands.grade(None, 10) == "F"
    assert bands.grade(2, 4) == "B"  # 25% of the teams above it: fewer than 35
    with pytest.raises(ValueError, match="rise|above the previous"):
        GradeBands(((50, "A"), (40, "B"), (100, "C")))


def row(entry: str, elo: float | None, half: float | None, rank: int | None, pairs: int = 10) -> Standing:
    low = None if elo is None or half is None else elo - half
    high = None if elo is None or half is None else elo + half
    return Standing(entry, elo, low, high, pairs, 2 * pairs, 0.0, rank)


def test_neighbours_are_separated_tied_or_open():
    far = verdict(row("a@1", 1700, 60, 1), row("b@1", 1500, 60, 2), 0.95, 40)
    assert far.state == SEPARATED and far.los > 0.99
    close_narrow = verdict(row("a@1", 1505, 10, 1), row("b@1", 1500, 10, 2), 0.95, 40)
    assert close_narrow.state == TIED  # 5 + 1.96·sqrt(2)·10/1.96 ≈ 19 <= 40
    close_wide = verdict(row("a@1", 1520, 80, 1), row("b@1", 1500, 80, 2), 0.95, 40)
    assert close_wide.state == UNSETTLED and 0.5 < close_wide.los < 0.95


def test_final_pairing_plays_the_least_separated_free_neighbours_and_unrated_versions_first():
    rows = [row("a@1", 1700, 30, 1), row("b@1", 1560, 90, 2), row("c@1", 1540, 90, 3), row("d@1", 1200, 30, 4)]
    found = verdicts(rows, 0.95, 10)
    assert [v.state for v in found] == [SEPARATED, UNSETTLED, SEPARATED]
    assert final_pairing(rows, found, busy=set(), played={}) == ("b@1", "c@1")
    assert final_pairing(rows, found, busy={"c@1"}, played={}) is None  # the only open pair is busy
    newcomer = [*rows, row("e@2", None, None, None, pairs=0)]
    assert final_pairing(newcomer, found, busy=set(), played={frozenset(("a@1", "e@2")): 3}) == ("b@1", "e@2")
    assert not settled(rows, found)


def test_the_final_table_marks_tied_groups_and_they_share_their_best_place():
    rows = [row("a@1", 1700, 20, 1), row("b@1", 1510, 10, 2), row("c@1", 1505, 10, 3), row("d@1", 1300, 20, 4)]
    table = final_table(rows, "2026-03-04T12:00:00+00:00", 0.95, 40)
    assert table.settled
    by = {r.entry: r for r in table.rows}
    assert by["b@1"].tie_group == by["c@1"].tie_group == 1 and by["a@1"].tie_group is None
    assert (by["b@1"].rank, by["c@1"].rank, by["d@1"].rank) == (2, 2, 4)
    assert by["a@1"].next_verdict == SEPARATED and by["b@1"].next_verdict == TIED and by["d@1"].los_next is None
    assert type(table).from_dict(table.to_dict()) == table


def test_neighbours_own_games_narrow_their_difference_and_settle_a_tie():
    """Two equal versions that met often: tied by the model of the pairs played, open from their intervals alone.

    Their own intervals stay as wide as their placing against the rest of the pool; the
    difference between them is what their many games against each other measured.
    """
    rows = [row("a@1", 1700, 40, 1), row("b@1", 1502, 30, 2), row("c@1", 1498, 30, 3), row("d@1", 1300, 40, 4)]
    played = {frozenset(("a@1", "b@1")): 6, frozenset(("b@1", "c@1")): 60, frozenset(("c@1", "d@1")): 6,
              frozenset(("a@1", "d@1")): 6}  # fmt: skip
    alone = verdicts(rows, 0.95, 40)
    counted = verdicts(rows, 0.95, 40, played)
    assert alone[1].state == UNSETTLED and counted[1].state == TIED
    assert counted[1].width < alone[1].width
