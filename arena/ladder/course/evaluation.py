"""The course's calendar in the ladder's loop: the phase asked of the clock, and each step into it taken once.

The phase (:func:`arena.ladder.course.calendar.phase`) is asked before every
pick.  After the deadline the final versions are fixed (once, stored: a
restart reads them back) and only they play, in the final evaluation's order
(:mod:`arena.ladder.course.final`), until every neighbour pair is separated
or tied or ``final_until`` passes; then the final table is stored (once: it
never changes after) and nothing more plays.  Each phase change is one
console line.  The loop (:class:`arena.ladder.service.LadderService`) holds
one :class:`FinalEvaluation` and asks it who is listed and who may play.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence

from arena.ladder.course import final
from arena.ladder.course.calendar import BEFORE, FINAL, FROZEN, OPEN, Calendar, Clock, countdown, iso, phase
from arena.ladder.course.final_store import FinalStore
from arena.ladder.games.standings import Standing, StandingsBook
from arena.ladder.store import LadderStore
from arena.ladder.versions.lifecycle import ACTIVE, RETIRED
from arena.ladder.versions.store import Version


class FinalEvaluation:
    """The calendar's steps for one loop (see the module docstring).

    ``standings()``: the standings as last published; ``refresh()``: publish them again
    (the listed versions change with the phase); ``tell(text)``: a console line.
    """

    def __init__(
        self,
        store: LadderStore,
        calendar: Calendar,
        clock: Clock,
        book: StandingsBook,
        *,
        standings: Callable[[], Sequence[Standing]],
        refresh: Callable[[], None],
        tell: Callable[[str], None],
    ) -> None:
        self.store = store
        self.calendar = calendar
        self.clock = clock
        self.book = book
        self.standings = standings
        self.refresh = refresh
        self.tell = tell
        self.finals = FinalStore(store.path)
        #: The phase last seen (None before the first look): a change is told once.
        self.phase: str | None = None
        #: The final versions' entries once fixed (read back from the store on a restart).
        self.final_entries: list[str] | None = None

    def close(self) -> None:
        """Close its own connections to the final evaluation's tables."""
        self.finals.close()

    # ------------------------------------------------------------ what the loop asks

    def listed(self) -> list[str] | None:
        """The versions the standings list once the final evaluation began (the final ones); None before."""
        if self.phase in (FINAL, FROZEN) and self.final_entries is not None:
            return list(self.final_versions())
        return None

    def show_live(self, rows: Sequence[Standing]) -> None:
        """During the final evaluation, the final table as it stands (the site shows it)."""
        if self.phase == FINAL:
            table = final.final_table(rows, iso(self.clock()), self.calendar.los, self.calendar.resolution,
                                      self.book.pairs_played())  # fmt: skip
            self.finals.set_live(table.to_dict())

    def final_versions(self) -> dict[str, Version]:
        """The final versions that may play: their team still enabled, the version not disabled."""
        out = {}
        for entry in self.final_entries or []:
            version = self.store.version_by_entry(entry)
            team = self.store.team(version.team) if version is not None else None
            if version is not None and team is not None and not team.disabled and version.status in (ACTIVE, RETIRED):
                out[entry] = version
        return out

    def pick(self, playing: list[str], busy: set[str]) -> tuple[str, str] | None:
        """The final evaluation's next pair among the final versions that may play (``playing``)."""
        rows = [s for s in self.standings() if s.entry in playing]
        found = [v for v in self._verdicts() if v.upper in playing and v.lower in playing]
        return final.final_pairing(rows, found, busy, self.book.pairs_played())

    # ------------------------------------------------------------ the steps

    def advance(self) -> str:
        """The phase now, by the clock; every step into it taken once (told at the console).

        Entering the final phase fixes the final versions (stored: a restart reads them back);
        a final evaluation that is settled, or whose ``final_until`` passed, stores the final
        table (once: it never changes after).
        """
        now = self.clock()
        frozen = self.finals.frozen()
        current = phase(now, self.calendar, settled=frozen is not None)
        if current in (FINAL, FROZEN) and self.final_entries is None:
            self._fix_finals(now)
        if current != self.phase:
            before, self.phase = self.phase, current
            self.refresh()
            if current == FROZEN and frozen is None:  # final_until passed (while running, or while stopped)
                self._freeze(now, f"final_until ({iso(self.calendar.final_until)}) passed")  # type: ignore[arg-type]
            self._tell_phase(before, current, now)
        if current == FINAL and final.settled(self.standings(), self._verdicts()):
            self._freeze(now, "settled: every neighbour pair is separated or tied")
            return self.advance()
        return current

    def _tell_phase(self, before: str | None, current: str, now: datetime.datetime) -> None:
        """One console line for the phase the loop is now in (and the next dated change, if any)."""
        what = {
            BEFORE: "uploads are refused until the opening",
            OPEN: "uploads are taken and the ladder plays",
            FINAL: f"the final evaluation: only the {len(self.final_entries or [])} final versions play",
            FROZEN: "the final table is stored; nothing more plays",
        }[current]
        ahead = countdown(now, self.calendar, frozen=current == FROZEN)
        change = current if before is None else f"{before} -> {current}"
        self.tell(f"phase {change}: {what}" + (f"; {ahead}" if ahead else ""))

    def _fix_finals(self, now: datetime.datetime) -> None:
        """Each team's final version, fixed once (the stored ones on a restart)."""
        candidates = final.fix_candidates(self.store, self.calendar, self.finals.choices())
        fixed, made = self.finals.fix(candidates, iso(now))
        self.final_entries = [f.entry for f in fixed]
        if made:
            told = ", ".join(f"{f.entry}{' (selected)' if f.how == final.SELECTED else ''}" for f in fixed) or "none"
            self.tell(f"final versions fixed at the deadline: {told}")

    def _verdicts(self) -> list[final.Verdict]:
        cal = self.calendar
        return final.verdicts(self.standings(), cal.los, cal.resolution, self.book.pairs_played())

    def _freeze(self, now: datetime.datetime, reason: str) -> None:
        """Store the final table (the first stored stays: a restart never changes it) and tell it."""
        cal = self.calendar
        table = final.final_table(self.standings(), iso(now), cal.los, cal.resolution, self.book.pairs_played())
        _, made = self.finals.freeze(iso(now), reason, table.to_dict())
        if made:
            top = ", ".join(f"{r.rank or '–'}. {r.entry}" for r in table.rows[:5])
            self.tell(f"final table frozen ({reason}): {top}")


__all__ = ["FinalEvaluation"]
