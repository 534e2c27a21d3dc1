"""Replay pages: the viewer's HTML around the steps of :mod:`arena.publish.steps`.

Two forms: one self-contained file (``arena replay RECORD --html OUT``: script and
style inline) and published pages that share ``replay.js``/``replay.css`` (``arena
ratings publish``: thousands of games, each page only its own data).  Both work
opened from disk (``file://``), load nothing from the network, and carry a
Content-Security-Policy that allows only their own scripts.

Game data goes into a ``<script type="application/json">`` block with ``<``, ``>``
and ``&`` escaped, so no bot name can close the block; the script puts every text
into the page with ``textContent``.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import cache
from html import escape
from importlib import resources
from typing import Any


@cache
def asset(name: str) -> str:
    """The text of a shared viewer file (``replay.js`` or ``replay.css``)."""
    return resources.files("arena.publish").joinpath("assets", name).read_text(encoding="utf-8")


def json_for_html(data: Any) -> str:
    """Compact JSON that is safe inside ``<script type="application/json">``."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _data_blocks(games: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(
        f'<div id="viewer-{k}"></div>\n'
        f'<script type="application/json" class="game-data" data-viewer="viewer-{k}">'
        f"{json_for_html(g)}</script>"
        for k, g in enumerate(games)
    )


def _page(title: str, head_extra: str, csp: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)}</title>\n{head_extra}\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def _title(game: Mapping[str, Any]) -> str:
    return f"Replay of {game.get('game_id') or 'a game'}"


def standalone_html(game: Mapping[str, Any]) -> str:
    """One self-contained replay page (inline script and style, nothing else loaded)."""
    script = asset("replay.js")
    csp = f"default-src 'none'; script-src {_sha256(script)}; style-src 'unsafe-inline'"
    body = _data_blocks([game]) + f"\n<script>{script}</script>"
    return _page(_title(game), f"<style>{asset('replay.css')}</style>", csp, body)


#: Published pages load the shared files next to them (``'self'`` covers file:// too).
SHARED_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; frame-src 'self'"


def shared_html(game: Mapping[str, Any], *, title: str, nav: str, asset_dir: str = "") -> str:
    """A published replay page of one game. ``nav`` is trusted HTML (escaped by the caller)."""
    head = f'<link rel="stylesheet" href="{asset_dir}replay.css">'
    body = f"{nav}\n{_data_blocks([game])}\n" f'<script src="{asset_dir}replay.js"></script>'
    return _page(title, head, SHARED_CSP, body)


def pair_html(left: str, right: str, *, title: str, nav: str, asset_dir: str = "") -> str:
    """Two published replay pages side by side (frames: no game's data is copied).

    ``left``/``right`` are the pages' relative addresses; buttons move both tables by
    hand and trick, and a status line shows where each one is.
    """
    head = f'<link rel="stylesheet" href="{asset_dir}replay.css">'
    body = (
        f"{nav}\n"
        '<div class="controls" id="pair-controls"></div>\n'
        '<p class="meta" id="pair-status"></p>\n'
        '<div class="pair" id="pair-frames">'
        f'<iframe class="table-frame" data-side="left" src="{_e(left)}#embed"></iframe>'
        f'<iframe class="table-frame" data-side="right" src="{_e(right)}#embed"></iframe>'
        "</div>\n"
        f'<script src="{asset_dir}replay.js"></script>'
    )
    return _page(title, head, SHARED_CSP, body)
