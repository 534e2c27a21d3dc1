"""People at the table: a person plays Spades in the browser, seated like any bot.

``arena play`` hosts one match on this machine: the referee (unchanged), the
bots (any bot spec), and a *seat adapter* (:mod:`arena.play.seat`) in the
person's seat: a client of the referee's gRPC protocol, with its own token,
that relays each decision to the page and the person's answer back.  The page
(:mod:`arena.play.web`) is served by FastAPI on 127.0.0.1 and fed by a
WebSocket.  After each hand, :mod:`arena.play.compare` replays the same deal
with a chosen bot in the person's seat.  docs/play.md describes it for users.

This module imports nothing heavy: the comparison runs in a worker process that
imports :mod:`arena.play.compare` alone.
"""
