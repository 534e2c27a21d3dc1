"""People at the table: a person plays Spades in the browser, seated like any bot.

``arena play`` hosts one match on this machine: the referee (unchanged), the
bots (any bot spec), and a *seat adapter* (:mod:`arena.play.seat`) in the
person's seat: a client of the referee's gRPC protocol, with its own token,
that relays each decision to the page and the person's answer back.  The page
(:mod:`arena.play.web`) is served by FastAPI on 127.0.0.1 and fed by a
WebSocket with :mod:`arena.play.snapshot`'s state; the page's felt
(``static/table.js``) lays the other seats' cards down one at a time.  After
each hand, :mod:`arena.play.compare` replays the same deal with a chosen bot
in the person's seat, and :mod:`arena.play.explain` reads it trick by trick.
The person may ask for a hint (:mod:`arena.play.hint`: Hard's choice and its
reason) and undo a decision (the referee's rewind, :mod:`arena.match.undo`);
:mod:`arena.play.assist` marks both in the game's record.
:mod:`arena.play.stats` keeps the person's statistics across games.
docs/play.md describes it for users.

The pieces are meant to be used by other hosts of a table (the ladder's
practice tables and live games): :meth:`arena.play.seat.HumanSeat.launcher` is
a launcher like any bot's (``play_seated(..., seat_launchers={seat: ...})``),
:func:`arena.play.web.create_app` serves any number of tables by key,
:func:`arena.play.views.public_view_json` is a view with only the public
information (what a spectator may be sent), and ``static/table.js`` is the
felt the ladder's live page draws.  The comparison and the hint run in
processes of their own (:mod:`arena.play.worker`).
"""
