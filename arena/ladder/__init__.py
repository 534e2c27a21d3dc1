"""The continuous ladder: a competition server that keeps playing duplicate pairs between active versions.

In packages by purpose, each ``__init__`` saying what it owns (docs/architecture.md section 10):

- :mod:`.common`: the directory's layout, ``ladder.sqlite``'s connection and meta, the engine watch, scratch space;
- :mod:`.teams`: teams, members, tokens and sessions, the roster, the organiser's token;
- :mod:`.versions`: a version's life: lifecycle, its table, builds and their queue, suspension, ``arena submit``;
- :mod:`.games`: the pairs' schedule, matchmaking, standings, live games, practice tables;
- :mod:`.course`: the calendar and its steps, the final evaluation, grades, exports;
- :mod:`.site`: the web site and its JSON API.

The modules here compose them: :mod:`.store` (the tables, as ``LadderStore``), :mod:`.config`
(``ladder.toml``'s sections, as ``LadderConfig``), :mod:`.service` (the loop, ``LadderService``)
and :mod:`.serve` (``arena ladder serve``'s process).  Imports go down the floors in that order:
common; teams and versions; games; store; course; site; config; service; serve
(``tests/test_layering.py``, ``LADDER_FLOORS``).
"""
