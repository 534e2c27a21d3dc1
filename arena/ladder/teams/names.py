"""When two team names or two e-mails are the same person's or the same team's: the comparison keys.

- :func:`email_key`: an e-mail compared case-folded (``Ann@Uni.example`` is
  ``ann@uni.example``): one address belongs to at most one member of a ladder.
- :func:`name_key`: a team name's *skeleton*, so that look-alikes compare equal
  (``Alpha``, ``a1pha``, ``ALPHA``, ``al-pha`` all give ``alpha``).  Team names
  are ASCII letters, digits, ``.``, ``_`` and ``-`` only
  (:func:`arena.ladder.teams.store.check_team_name`), so Unicode's confusables
  cannot occur; what remains is what the eye confuses in ASCII: case, the
  separators, the digits read as letters (0 o, 1 l, 2 z, 3 e, 4 a, 5 s, 7 t,
  8 b), ``i`` and ``l``, ``rn`` and ``m``, ``vv`` and ``w``.  Each digit maps to a
  different letter, so numbered teams (``g01`` ... ``g40``) stay distinct.
"""

from __future__ import annotations

#: Digits and letters read as another letter (one target each: numbered teams stay apart).
_SAME_LETTER = str.maketrans({"0": "o", "1": "l", "i": "l", "2": "z", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b"})
#: Separators the eye skips.
_SEPARATORS = str.maketrans("", "", "._-")


def email_key(email: str) -> str:
    """An e-mail as the ladder compares it: stripped and case-folded."""
    return email.strip().casefold()


def name_key(name: str) -> str:
    """A team name's skeleton: two names with one skeleton look alike (see the module docstring)."""
    folded = name.strip().casefold().translate(_SEPARATORS)
    return folded.replace("rn", "m").replace("vv", "w").translate(_SAME_LETTER)


__all__ = ["email_key", "name_key"]
