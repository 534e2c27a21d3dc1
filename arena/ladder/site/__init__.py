"""The ladder's web site and JSON API: the app, its routers, its guards and its server.

:mod:`.app` makes the app (:func:`~arena.ladder.site.app.create_app`) from
one router per audience and wraps it in its guards
(:func:`~arena.ladder.site.app.wrap`):

- :mod:`.public`: the leaderboard, team pages, replays (anyone);
- :mod:`.team`: a signed-in team's own page, its bots' logs, its validation records;
- :mod:`.admin`: the organiser's page and switches; :mod:`.api`: the JSON API under ``/api/``;
- :mod:`.join`: self-registration; :mod:`.final`: the calendar, the final table and selection;
- :mod:`.live`: watching a game as it is played; :mod:`.practice`: the practice tables' routes.

:mod:`.context` holds what they share: the stores as FastAPI dependencies
(one connection per thread: every endpoint that touches a store is a plain
``def``, run in Starlette's thread pool, so a slow write never holds the
event loop), who is asking, and the page renderer on the arena's one Jinja
environment (``templates/``, ``static/``).  :mod:`.uploads` takes a team's
upload as it streams in; :mod:`.guard` is the ASGI edge (origin check, body
limit, security headers) and :mod:`.http_server` the guarded uvicorn;
:mod:`.queries` the indexed reads; :mod:`.settings` what the site knows of
``ladder.toml`` and ``[server]``, the section it owns.  Nothing here imports
the ladder loop, the table kernel or the referee.
"""
