"""The public pages: the leaderboard, a team's page, a game's replay (anyone; a team or the organiser sees more)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from arena.ladder.site.history_plot import history_svg
from arena.ladder.site.final import calendar_view
from arena.ladder.site.context import REFRESH_S, REPLAY_CSP, SiteDep, Who, side_of_seat, team_of

router = APIRouter(include_in_schema=False)


@router.get("/", response_class=HTMLResponse)
def home(site: SiteDep, who: Who) -> HTMLResponse:
    """The leaderboard; with a calendar, its phase and countdown; after the deadline, the final table."""
    state = site.state()
    view = calendar_view(site)
    return site.page("leaderboard.html", who, rows=site.leaderboard(view["board"]), games=site.recent_games(15),
                     paused=site.store.paused, building=state.building, in_play=state.in_play,
                     engine_down=state.engine_down is not None,
                     live=state.live.games() if state.live is not None else [],
                     refresh=REFRESH_S, **view)  # fmt: skip


@router.get("/teams/{team}", response_class=HTMLResponse)
def team_page(team: str, site: SiteDep, who: Who) -> HTMLResponse:
    """A team's ranked versions, rating history and games; its own versions' private parts for itself."""
    found = site.team_or_404(team)
    mine = who.may_see(team)
    shown = site.board()  # the table every page shows now: the final one after the freeze
    versions = [site.version_private(v, shown) if mine else site.version_public(v, shown)
                for v in site.store.versions(team=team) if site.ranked(v)]  # fmt: skip
    private = [site.version_private(v, shown) for v in site.store.versions(team=team)] if mine else []
    return site.page("team.html", who, team=found, versions=versions, private=private,
                     plot=history_svg(site.history(team, thin=True)), games=site.recent_games(20, team))  # fmt: skip


@router.get("/games/{game_id}", response_class=HTMLResponse)
def replay_page(game_id: str, site: SiteDep, who: Who) -> HTMLResponse:
    """A game in the replay viewer: seats named team@version, the asking team's own notes, links back."""
    from arena.publish.steps import game_steps

    row, record = site.record(game_id, who)
    steps = game_steps(record, with_notes=True)  # only the asker's notes are left in the record
    sides = (row.side0, row.side1)
    n = int(steps["players"])
    steps["names"] = [{"name": sides[side_of_seat(n, k)], "version": ""} for k in range(n)]
    seats: list[list[str]] = [[], []]
    for k, seat in enumerate(steps["seats"]):
        seats[side_of_seat(n, k)].append(str(seat))
    entries: list[dict[str, Any]] = [
        {"entry": sides[s], "team": team_of(sides[s]), "seats": "-".join(seats[s]), "notes": who.may_see(team_of(sides[s]))}
        for s in (0, 1)
    ]
    return site.page("replay.html", who, csp=REPLAY_CSP, game=row, entries=entries, steps=steps)
