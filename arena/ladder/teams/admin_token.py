"""The organiser's token: replace it, and end every session it opened.

The store keeps only the token's SHA-256 (``meta.admin_token_hash``); a
sign-in with it makes a 7-day session (``sessions.admin = 1``).  Rotating
writes the new hash and deletes every admin session in one transaction, so
after it neither the old token nor a page signed in with it does anything.
(The SQL lives here, against the store's transaction, rather than as a store
method: it is the only writer of these two rows besides ``arena ladder init``.)
"""

from __future__ import annotations

from arena.ladder.teams.store import TeamTables, new_token, token_hash


def rotate_admin_token(store: TeamTables, token: str | None = None) -> tuple[str, int]:
    """Make ``token`` (default: a new random one) the admin token; it and the number of admin sessions ended.

    Only the token's hash is kept: the caller shows or saves the token.
    """
    token = token or new_token()
    with store.transaction() as db:
        db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('admin_token_hash', ?)", (token_hash(token),))
        ended = db.execute("DELETE FROM sessions WHERE admin=1").rowcount
    return token, int(ended)


__all__ = ["rotate_admin_token"]
