"""Who takes part: teams, their members, their tokens and sign-in sessions, the roster and the organiser's token.

The ``teams``, ``members`` and ``sessions`` tables of ``ladder.sqlite`` are
this package's (:mod:`.store`): a team's shared token and each member's own,
kept only as hashes; sessions of the site's sign-in.  :mod:`.roster` is the
``[roster]`` section of ``ladder.toml`` (self-registration, team size), the
organiser's CSV import and the rules names and e-mails follow;
:mod:`.admin_token` replaces the organiser's token.  It knows nothing of
versions, games or the calendar.
"""
