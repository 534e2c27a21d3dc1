"""What the site's routers share: the stores as dependencies, who is asking, the data of the pages, rendering.

Every function here that reads a store is called from a plain ``def``
endpoint (Starlette's thread pool): the stores hand each thread its own
connection (:class:`~arena.ladder.site.queries.PerThread`), so no request waits on
another's transaction and none holds the event loop.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Annotated, Any, cast

from fastapi import Depends, HTTPException, Request
from fastapi.responses import HTMLResponse

from arena.ladder.common.paths import record_path, seat_log_path, validation_records
from arena.ladder.site.queries import PLOT_POINTS, GameSummary, PerThread, Reads
from arena.ladder.site.guard import PAGE_CSP  # every page's policy (the guard sends it where a page has none)
from arena.ladder.site.settings import SiteSettings
from arena.ladder.site.sizes import mib
from arena.ladder.games.ids import GAME_ID
from arena.ladder.games.state import LadderState
from arena.ladder.course.board import FINAL_TABLE, Board, board
from arena.ladder.course.calendar import utc_now
from arena.ladder.course.final_store import FinalStore
from arena.ladder.store import LadderStore
from arena.ladder.teams.store import Team
from arena.ladder.versions.lifecycle import ACTIVE, DISABLED, RETIRED
from arena.ladder.versions.store import Version
from arena.publish.templating import add_templates

#: The session cookie (a random id; the store keeps its hash).
COOKIE = "arena_session"
#: A replay page's: the same, plus the viewer's script from this site (no inline script).
REPLAY_CSP = PAGE_CSP.replace("style-src 'self';", "script-src 'self'; style-src 'self';")
#: Seconds between the leaderboard's reloads (a ``<meta http-equiv="refresh">``: no script needed).
REFRESH_S = 30

_ENV = add_templates("ladder", "arena.ladder.site")
_ENV.filters.setdefault("per_hand", lambda v: "–" if v is None else f"{v:+.1f}")
_ENV.filters.setdefault("mib", mib)


class Viewer:
    """Who is asking: nobody, a team (one of its members, or its shared token), or the organiser."""

    def __init__(self, team: str | None = None, admin: bool = False, member: str | None = None) -> None:
        self.team = team
        self.admin = admin
        #: The member signed in (None: the team's shared token, the organiser, or nobody).
        self.member = member

    def may_see(self, team: str) -> bool:
        return self.admin or self.team == team


def team_of(entry: str) -> str:
    """The team of an entry ``team@N``."""
    return entry.rpartition("@")[0]


def side_of_seat(players: int, seat: int) -> int:
    """The side (0 or 1) a seat plays for: partners N-S and E-W with four players, one seat each with two."""
    return seat % 2 if players == 4 else seat


#: The record's seat letters by side (``seats`` of docs/record-format.md).
_SEAT_SIDE = {"N": 0, "S": 0, "A": 0, "E": 1, "W": 1, "B": 1}


class Site:
    """One ladder's site: its settings, stores and the loop's state (``app.state.site``)."""

    def __init__(self, config: Any, state: Callable[[], LadderState]) -> None:
        self.config = config
        self.settings = SiteSettings.of(config)
        self.directory = self.settings.directory
        self.state = state
        ladder_path = self.settings.ladder_path
        self._stores: PerThread[LadderStore] = PerThread(lambda: LadderStore(ladder_path), LadderStore.close)
        #: The ladder store, the calling thread's own connection (reads and the site's few writes).
        self.store = cast(LadderStore, self._stores)
        self.reads = Reads(self.settings.results_path, ladder_path)
        #: The calendar's stored facts: final versions, selections, the live and the frozen final table.
        self.finals = FinalStore(ladder_path)
        #: The practice tables (arena.ladder.games.practice), when the site serves a whole ladder; set by the app.
        self.practice: Any = None
        #: What /me shows of practice tables for a team (:func:`arena.ladder.site.practice.panel`, set by the app).
        self.practice_panel: Callable[[str], dict[str, Any]] = lambda team: {"available": False}

    def close(self) -> None:
        self._stores.close_all()
        self.reads.close()
        self.finals.close()
        if self.practice is not None:
            self.practice.store.close()

    # ------------------------------------------------------------ rendering

    def page(self, name: str, who: Viewer, *, csp: str = PAGE_CSP, **values: Any) -> HTMLResponse:
        """Render ``templates/NAME`` with its policy as a header."""
        first_seat = "N" if self.settings.players == 4 else "A"  # the reproduce lines' example seat
        html = _ENV.get_template(f"ladder/{name}").render(
            ladder=self.settings.name, who=who, first_seat=first_seat, **values
        )
        return HTMLResponse(html, headers={"Content-Security-Policy": csp, "X-Content-Type-Options": "nosniff"})

    # ------------------------------------------------------------ data

    def board(self) -> Board:
        """The table shown now (:func:`arena.ladder.course.board.board`, the one definition): the frozen
        final table after the freeze, the live final one during the final evaluation, else the
        standings as the loop last published them."""
        return board(utc_now(), self.settings.calendar, self.finals.frozen(), self.finals.live(), self.state().standings)

    def leaderboard(self, shown: Board | None = None) -> list[dict[str, Any]]:
        """The rows of :meth:`board` as dicts, each with its version's note.

        Active versions; during and after the final evaluation the final versions, some of
        which may be retired (a selected older one, or one a practice upload replaced).
        """
        rows = []
        for r in (shown or self.board()).rows:
            v = self.store.version_by_entry(r.entry)
            rows.append({**dataclasses.asdict(r), "note": v.note if v is not None else ""})
        return rows

    def version_public(self, v: Version, shown: Board | None = None) -> dict[str, Any]:
        """A version's public figures: during and after the final evaluation those of the final table
        (:meth:`board`, the one the leaderboard, ``show`` and the export give: its place, tie and
        verdict too), else the live standings'.  Pass ``shown`` when listing several versions."""
        shown = shown or self.board()
        final_row = next((r for r in shown.rows if r.entry == v.entry), None) if shown.kind == FINAL_TABLE else None
        s = final_row or next((s for s in self.state().standings if s.entry == v.entry), None)
        return {
            "team": v.team, "version": v.number, "entry": v.entry, "note": v.note, "status": v.status,
            "created": v.created, "activated": v.activated, "retired": v.retired,
            "elo": s.elo if s else v.final_elo, "low": s.low if s else v.final_low,
            "high": s.high if s else v.final_high, "pairs": s.pairs if s else v.final_pairs,
            "table": shown.kind, "phase": shown.phase, "final": final_row is not None,
            "rank": final_row.rank if final_row else None, "tied": bool(final_row and final_row.tied),
            "verdict": final_row.verdict if final_row else None,
        }  # fmt: skip

    def version_private(self, v: Version, shown: Board | None = None) -> dict[str, Any]:
        return {**self.version_public(v, shown), "image_id": v.image_id, "build_log": v.build_log,
                "validation_log": v.validation_log, "attempts": v.attempts, "reason": v.reason,
                "member": v.member, "validation_records": validation_records(self.directory, v.id)}  # fmt: skip

    @staticmethod
    def ranked(v: Version) -> bool:
        return v.status in (ACTIVE, RETIRED) or (v.status == DISABLED and v.activated is not None)

    def team_or_404(self, name: str) -> Team:
        team = self.store.team(name)
        if team is None:
            raise HTTPException(404, "no such team")
        return team

    def recent_games(self, limit: int, team: str | None = None) -> list[dict[str, Any]]:
        return [g.to_dict() for g in self.reads.recent_games(limit, team)]

    def history(self, team: str, *, thin: bool) -> list[tuple[str, str, int, float, float, float]]:
        return self.reads.history(team, PLOT_POINTS if thin else None)

    def me(self, team: str, member: str | None = None) -> dict[str, Any]:
        """A team's private summary: who is signed in, its members, quota, limits and versions."""
        from arena.ladder.site.team_calendar import team_calendar

        sub = self.settings.submissions
        found = self.store.team(team)
        versions = self.store.versions(team=team)
        shown = self.board()
        return {
            "team": team,
            "member": member,
            "pending": bool(found and found.pending),
            "members": [{"name": m.name, "email": m.email, "revoked": m.revoked} for m in self.store.members(team)],
            "quota": {"per_day": sub.daily_quota, "used_today": self.store.submissions_today(team)},
            "limits": {"max_bytes": sub.max_bytes, "max_files": sub.max_files},
            "versions": [self.version_private(v, shown) for v in versions],
            "practice": self.practice_panel(team),
            "calendar": team_calendar(self.settings.calendar, self.finals, team, versions),
        }

    def game_or_404(self, game_id: str) -> GameSummary:
        """The stored game (its id checked against the ladder's pattern first: nothing else is looked up)."""
        row = self.reads.game(game_id) if GAME_ID.fullmatch(game_id) else None
        if row is None:
            raise HTTPException(404, "no such game")
        return row

    def record(self, game_id: str, who: Viewer) -> tuple[GameSummary, dict[str, Any]]:
        """A game's row and record, with only the notes of the asking team's seats (the organiser: all)."""
        row = self.game_or_404(game_id)
        path = record_path(self.directory, game_id)
        if not path.is_file():
            raise HTTPException(404, "no such game")
        record = json.loads(path.read_text())
        sides = (row.side0, row.side1)
        for hand in record.get("hands", []):
            for action in hand.get("actions", []):
                side = _SEAT_SIDE.get(action.get("seat"))
                team = team_of(sides[side]) if side is not None else ""
                if "note" in action and not (team and who.may_see(team)):
                    del action["note"]  # a seat's notes are its team's own
        return row, record

    def game_logs(self, game_id: str, who: Viewer) -> str:
        row = self.game_or_404(game_id)
        n = self.settings.players
        sides = (row.side0, row.side1)
        owned = [s for s in range(n) if who.may_see(team_of(sides[side_of_seat(n, s)]))]
        if not owned:
            raise HTTPException(404, "no such game")  # the same answer as for a game that does not exist
        parts = []
        for seat in owned:
            path = seat_log_path(self.directory, game_id, seat)
            text = path.read_text(errors="replace") if path.is_file() else "(no log)\n"
            parts.append(f"--- seat {seat} ({sides[side_of_seat(n, seat)]})\n{text}")
        return "\n".join(parts)


async def site_of(request: Request) -> Site:
    """The app's :class:`Site` (a dependency: the routers never hold one of their own)."""
    return cast(Site, request.app.state.site)


SiteDep = Annotated[Site, Depends(site_of)]


def viewer(request: Request, site: SiteDep) -> Viewer:
    """Who is asking: a bearer token (team or admin), a session cookie, or nobody (a thread-pool dependency)."""
    store = site.store
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        token = auth[7:].strip()
        if store.is_admin_token(token):
            return Viewer(admin=True)
        identity = store.identify(token)  # the team's shared token, or one member's own
        if identity is None:
            raise HTTPException(401, "unknown, rotated, revoked or disabled token")
        return Viewer(identity.team.name, member=identity.member.name if identity.member else None)
    session = request.cookies.get(COOKIE)
    if session:
        found = store.session(session)
        if found is not None:
            return Viewer(found[0], found[1], found[2])
    return Viewer()


Who = Annotated[Viewer, Depends(viewer)]


def team_only(who: Viewer) -> str:
    if who.team is None:
        raise HTTPException(401, "sign in with your team's token")
    return who.team


def admin_only(who: Viewer) -> None:
    if not who.admin:
        raise HTTPException(403, "the organiser's token is needed")


__all__ = [
    "COOKIE", "PAGE_CSP", "REFRESH_S", "REPLAY_CSP", "Site", "SiteDep", "Viewer", "Who", "admin_only",
    "side_of_seat", "site_of", "team_of", "team_only", "viewer",
]  # fmt: skip
