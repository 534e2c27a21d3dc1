"""The course around the ladder: its calendar, the final evaluation, the grades and the exports.

:mod:`.calendar` is ``[schedule]`` and ``[final]`` and the phase as a pure
function of the clock; :mod:`.evaluation` takes the calendar's steps in the
loop (the final versions fixed at the deadline, the final table frozen once
settled); :mod:`.final` decides which neighbours are settled and which pair
plays next after the deadline, and :mod:`.final_store` keeps what it fixed;
:mod:`.grades` is ``[grades]``; :mod:`.export` writes the leaderboard and
the final table with members and grades.  It stands on the teams, the
versions and the games; the site shows it and the loop drives it.
"""
