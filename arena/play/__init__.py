"""People at the table: a person plays Spades in the browser, seated like any bot.

``arena play`` hosts one match on this machine: the referee (unchanged), the
bots (any bot spec), and a *seat adapter* (:mod:`arena.play.seat`) in the
person's seat: a client of the referee's gRPC protocol, with its own token,
that relays each decision to the page and the person's answer back.  The page
(:mod:`arena.play.web`) is served by FastAPI on 127.0.0.1 and fed by a
WebSocket.  After each hand, :mod:`arena.play.compare` replays the same deal
with a chosen bot in the person's seat.  docs/play.md describes it for users.

The pieces are meant to be used by other hosts of a table (the ladder's
practice tables and live games): :meth:`arena.play.seat.HumanSeat.launcher` is
a launcher like any bot's (``play_seated(..., seat_launchers={seat: ...})``),
:func:`arena.play.web.create_app` serves any number of tables by key, and
:func:`arena.play.views.public_view_json` is a view with only the public
information (what a spectator may be sent).  The comparison runs in a process
of its own (``python -m arena.play.compare``).
"""
