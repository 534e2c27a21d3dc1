"""The course's calendar on the site: the phase and countdown, the final table, a team's final selection.

- ``GET /final`` (a page) and ``GET /api/final``: the phase, the countdown to the next
  change, and the final table (the frozen one once stored; during the final evaluation,
  the live one from the loop's standings);
- ``POST /api/me/final`` (``{"version": N}``) and the form on ``/final``: a signed-in
  team selects its final version among its last ``[final] choose_from`` ranked ones,
  before the deadline (409 after it, or when the ladder has no selection).

The phase is the clock's (:func:`arena.ladder.course.calendar.phase`), asked on every request:
the site and the loop agree without talking.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from arena.ladder.course.calendar import BEFORE, FINAL, FROZEN, OPEN, PRACTICE, countdown, iso, phase, utc_now
from arena.ladder.course.final import FinalTable, choosable, final_table
from arena.ladder.site.context import Site, SiteDep, Who, team_only

router = APIRouter()

#: What each phase means, in a line the leaderboard shows.
PHASE_TEXT = {
    BEFORE: "Uploads are not open yet.",
    OPEN: "Uploads are open.",
    FINAL: "Final evaluation: uploads are closed and only the final versions play.",
    FROZEN: "Final standings: frozen.",
}
#: After the deadline with ``after_deadline = "practice"``: what uploads are for then.
PRACTICE_TEXT = " New uploads are built for practice tables only."


def phase_text(current: str, after_deadline: str) -> str:
    """The leaderboard's line for ``current`` (after the deadline, what uploads are for then)."""
    if after_deadline == PRACTICE and current in (FINAL, FROZEN):
        return PHASE_TEXT[current].replace("uploads are closed and ", "") + PRACTICE_TEXT
    return PHASE_TEXT[current]


def calendar_view(site: Site) -> dict[str, Any]:
    """The phase now, its line, the countdown, and the final table (None before the deadline)."""
    calendar = site.settings.calendar
    finals = site.finals
    frozen = finals.frozen()
    now = utc_now()
    current = phase(now, calendar, settled=frozen is not None)
    table: FinalTable | None = None
    reason = None
    if current == FROZEN and frozen is not None:
        table, reason = FinalTable.from_dict(frozen.body), frozen.reason
    elif current in (FINAL, FROZEN):  # live: as the loop last wrote it (else from its standings)
        live = finals.live()
        table = (FinalTable.from_dict(live) if live is not None
                 else final_table(site.state().standings, iso(now), calendar.los, calendar.resolution))  # fmt: skip
    return {
        "phase": current,
        "phase_text": phase_text(current, calendar.after_deadline),
        "countdown": countdown(now, calendar, frozen=current == FROZEN),
        "final": table,
        "frozen_reason": reason,
        "has_calendar": calendar.opens is not None or calendar.deadline is not None,
    }


def _choice_view(site: Site, team: str | None) -> dict[str, Any] | None:
    """What the signed-in team may select, and its selection (None when selection is off or past the deadline)."""
    calendar = site.settings.calendar
    if team is None or calendar.choose_from == 0 or phase(utc_now(), calendar) not in (BEFORE, OPEN):
        return None
    options = choosable(site.store.versions(team=team), calendar.choose_from)
    chosen = site.finals.choices().get(team)
    return {"options": [v.entry for v in options], "chosen": chosen, "n": calendar.choose_from}


def choose(site: Site, team: str, number: object) -> str:
    """Record ``team``'s selection of version ``number``; the entry, or HTTPException with one line."""
    calendar = site.settings.calendar
    if calendar.choose_from == 0:
        raise HTTPException(409, "this ladder has no final selection: each team's final version is its active one at the deadline")
    if phase(utc_now(), calendar) not in (BEFORE, OPEN):
        raise HTTPException(409, f"the deadline passed ({iso(calendar.deadline)}): the final versions are fixed")  # type: ignore[arg-type]
    if isinstance(number, bool) or not isinstance(number, int):
        raise HTTPException(400, "send the version's number, e.g. {\"version\": 3}")
    allowed = {v.number: v for v in choosable(site.store.versions(team=team), calendar.choose_from)}
    if number not in allowed:
        shown = ", ".join(str(n) for n in sorted(allowed)) or "none yet"
        raise HTTPException(400, f"version {number} cannot be selected: choose among your last {calendar.choose_from} ranked versions ({shown})")
    entry = allowed[number].entry
    site.finals.choose(team, entry, iso(utc_now()))
    return entry


@router.get("/final", response_class=HTMLResponse, include_in_schema=False)
def final_page(site: SiteDep, who: Who) -> HTMLResponse:
    """The final table (or the phase and countdown before it), and a team's selection form."""
    return site.page("final.html", who, **calendar_view(site), choice=_choice_view(site, who.team), error=None)


@router.post("/final/choose", include_in_schema=False)
def final_choose_form(site: SiteDep, who: Who, version: Annotated[int, Form()]) -> Response:
    if who.team is None:
        return RedirectResponse("/signin", status_code=303)
    try:
        choose(site, who.team, version)
    except HTTPException as exc:
        return site.page("final.html", who, **calendar_view(site), choice=_choice_view(site, who.team), error=exc.detail)
    return RedirectResponse("/final", status_code=303)


@router.get("/api/final")
def api_final(site: SiteDep) -> JSONResponse:
    """The phase, the countdown and the final table (frozen, or live during the final evaluation)."""
    view = calendar_view(site)
    table = view.pop("final")
    return JSONResponse({**view, "final": table.to_dict() if table is not None else None})


@router.post("/api/me/final")
async def api_final_choose(request: Request, site: SiteDep, who: Who) -> JSONResponse:
    """Select the team's final version: ``{"version": N}`` among its last ``choose_from`` ranked ones."""
    team = team_only(who)
    try:
        body = await request.json()
    except ValueError:
        raise HTTPException(400, "send JSON: {\"version\": N}") from None
    number = body.get("version") if isinstance(body, dict) else None
    entry = await run_in_threadpool(choose, site, team, number)
    return JSONResponse({"team": team, "final": entry})


__all__ = ["calendar_view", "choose", "phase_text", "router"]
