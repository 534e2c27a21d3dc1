"""Replay pages: the viewer's HTML around the steps of :mod:`arena.publish.steps`.

Two forms: one self-contained file (``arena replay RECORD --html OUT``: script and
style inline, :func:`standalone_html`) and published pages that share
``replay.js``/``replay.css`` (``arena ratings publish``: thousands of games, each page
only its own data; :mod:`arena.publish.games` renders ``templates/replay_game.html`` and
``replay_pair.html``).  Both work opened from disk (``file://``), load nothing from the
network, and carry a Content-Security-Policy that allows only their own scripts.

Game data goes into a ``<script type="application/json">`` block with ``<``, ``>``
and ``&`` escaped, so no bot name can close the block; the script puts every text
into the page with ``textContent``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from typing import Any

from arena.publish.templating import asset, json_for_html, render

__all__ = ["asset", "json_for_html", "standalone_html"]


def _sha256(text: str) -> str:
    """The base64 SHA-256 of ``text``, as a CSP ``'sha256-...'`` source names it."""
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def standalone_html(game: Mapping[str, Any]) -> str:
    """One self-contained replay page (inline script and style, nothing else loaded)."""
    # The policy admits the inline script by its hash: the exact text the template inlines.
    return render("replay_standalone.html", game=game, script_sha256=_sha256(asset("replay.js")))
