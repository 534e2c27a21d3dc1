"""The ladder's web site as routers, one per audience (assembled by :func:`arena.ladder.site.app.create_app`).

- :mod:`.public`: the leaderboard, team pages, replays (anyone);
- :mod:`.team`: a signed-in team's own page, its bots' logs, its validation records;
- :mod:`.admin`: the organiser's page and switches;
- :mod:`.api`: the JSON API under ``/api/``.

:mod:`.context` holds what they share: the stores as FastAPI dependencies
(one connection per thread: every endpoint that touches a store is a plain
``def``, run in Starlette's thread pool, so a slow write never holds the
event loop), who is asking, and the page renderer on the arena's one Jinja
environment.  Nothing here imports the ladder loop, the table kernel or the
referee.
"""
