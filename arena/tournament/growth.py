"""A tournament file that grew: which changes a started tournament takes, and which it refuses.

The results store keeps the content of the file it was started from
(:func:`arena.tournament.config.tournament_content`).  When the file changes,
:func:`check_growth` compares the two:

- entries added, and an entry's ``opponents`` widened (or removed), only add
  pairings: accepted, and only the new pairings are played;
- entries removed: accepted; their stored games stay in the store but are
  left out of the standings and ratings (put the entry back, with the same
  ``bot`` and ``env``, and they count again, and its missing games are played);
- anything else (rules, time control, limits, seed, deals per pairing, faults,
  an entry's ``bot`` or ``env``, a narrowed ``opponents``) would change games
  already played: refused with one message naming every change.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from arena.results.store import StoreError


class ChangedTournament(StoreError):
    """The tournament file changed in a way that would change games already played."""


@dataclasses.dataclass(frozen=True)
class Growth:
    """What a grown file adds and removes (entry names)."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    widened: tuple[str, ...]
    """Entries whose ``opponents`` now allow more pairings."""

    def summary(self) -> str:
        """One line for the organiser, e.g. ``entries added: c, d; entries removed: b``."""
        parts = []
        if self.added:
            parts.append(f"entries added: {', '.join(self.added)}")
        if self.widened:
            parts.append(f"opponents widened: {', '.join(self.widened)}")
        if self.removed:
            parts.append(
                f"entries removed: {', '.join(self.removed)} (their stored games are kept but left out of the "
                "standings until they are back in the file)"
            )
        return "; ".join(parts) or "no change to the games"


def _entries(content: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for item in content.get("entry") or []:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            out[item["name"].strip()] = item
    return out


def _shown(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str) if value is not None else "(not set)"
    return text if len(text) <= 60 else text[:57] + "..."


def _section_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """``[section] key: old -> new`` for every difference outside the entries."""
    changes = []
    for section in sorted((set(old) | set(new)) - {"entry"}):
        a, b = old.get(section), new.get(section)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    changes.append(f"[{section}] {key}: {_shown(a.get(key))} -> {_shown(b.get(key))}")
        else:
            changes.append(f"[{section}]: {_shown(a)} -> {_shown(b)}")
    return changes


def _opponents(item: dict[str, Any]) -> set[str] | None:
    found = item.get("opponents")
    return None if found is None else {str(o).strip() for o in found}


def known_entries(content: str, known: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Every entry a store has had (``known``) and those of ``content``: name -> its ``bot`` and ``env``."""
    found = dict(known or {})
    for name, item in _entries(json.loads(content)).items():
        found.setdefault(name, {"bot": item.get("bot"), "env": item.get("env")})
    return found


def check_growth(
    old_content: str, new_content: str, where: str = "the results store", known: dict[str, dict[str, Any]] | None = None
) -> Growth:
    """What the new file adds to the old; raises :class:`ChangedTournament` naming every other change.

    ``where``: the store, as the message names it; ``known``: the entries it
    has had (:func:`known_entries`), so an entry removed and added back is the
    same bot or refused.
    """
    old, new = json.loads(old_content), json.loads(new_content)
    changes = _section_changes(old, new)
    before, after = _entries(old), _entries(new)
    for name in sorted(after.keys() - before.keys()):
        was = (known or {}).get(name)
        for key in ("bot", "env") if was is not None else ():
            if was.get(key) != after[name].get(key):
                changes.append(
                    f"entry {name!r}: played before with {key} {_shown(was.get(key))}, now {_shown(after[name].get(key))} "
                    "(its stored games are that bot's: give the new one a new name)"
                )
    widened = []
    for name in sorted(before.keys() & after.keys()):
        a, b = before[name], after[name]
        for key in ("bot", "env"):
            if a.get(key) != b.get(key):
                changes.append(
                    f"entry {name!r}: {key} {_shown(a.get(key))} -> {_shown(b.get(key))} "
                    "(a different bot is a new entry: give it a new name)"
                )
        was, now = _opponents(a), _opponents(b)
        if was == now:
            continue
        if now is None or (was is not None and was <= now):
            widened.append(name)
        else:
            dropped = sorted((was or set(after)) - (now or set()) - {name})
            changes.append(
                f"entry {name!r}: opponents narrowed (its pairings with {', '.join(dropped) or 'others'} would be "
                "dropped; remove the entry instead, or start a new output directory)"
            )
    if changes:
        raise ChangedTournament(
            f"{where} holds a tournament played from a different file, and the change would alter games "
            "already played: " + "; ".join(changes)
            + ". A started tournament takes only added entries (and widened opponents) and removed entries; "
            "restore these keys to resume, or use another output directory"
        )
    return Growth(
        added=tuple(n for n in after if n not in before),
        removed=tuple(n for n in before if n not in after),
        widened=tuple(widened),
    )


def entry_names(content: str | None) -> set[str] | None:
    """The entry names of a stored file content (None: no content stored, e.g. an old store)."""
    if not content:
        return None
    try:
        return set(_entries(json.loads(content)))
    except (ValueError, TypeError, AttributeError):
        return None


__all__ = ["ChangedTournament", "Growth", "check_growth", "entry_names", "known_entries"]
