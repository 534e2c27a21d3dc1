"""The games: which pair plays next, what the standings are, who is watching, and the practice tables.

:mod:`.schedule` is the ladder's schedule for the run loop (a pair left
unfinished first, then a new one; what a stored or failed game means);
:mod:`.matchmaking` picks the next pairing; :mod:`.standings` keeps the
leaderboard game by game and :mod:`.leaderboard` builds it from the stores
(voided pairs out); :mod:`.ids` names the ladder's games; :mod:`.store` is
the rating history in ``ladder.sqlite``; :mod:`.state` is what the loop
tells the site.  :mod:`.live` shows games as they are played (public
information only); :mod:`.practice` and :mod:`.practice_store` are the
unrated practice tables and their own ``practice.sqlite``.  It reads
versions (who may play); it knows nothing of the calendar or the site.
"""
