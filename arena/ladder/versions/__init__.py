"""A version's life: from an upload queued to a ranked version, and every move it may make after.

:mod:`.lifecycle` is the table of allowed moves (queued, building,
validating, active, retired, failed, suspended, disabled); the ``versions``
table of ``ladder.sqlite`` (:mod:`.store`) moves a version only as it allows,
compare-and-set.  :mod:`.builds` unpacks, builds offline and validates one
version (no store: an outcome); :mod:`.build_queue` runs the builds as side
work of the ladder's loop, in turn across teams, and writes their outcomes.
:mod:`.suspension` suspends a new version that loses its first games by its
own fault; :mod:`.settings` is ``[submissions]``; :mod:`.client` is
``arena submit``, the other end of an upload.  It knows nothing of the
games, the calendar or the site.
"""
