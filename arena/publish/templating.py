"""The HTML template machinery: one Jinja2 environment for every page the arena publishes.

Templates live in ``arena/publish/templates/`` (package data, so a wheel carries them) and
are rendered with autoescaping on: every value a template prints is HTML-escaped unless it
is already :class:`~markupsafe.Markup`. Bot and tournament names are chosen by whoever
wrote the bot or the tournament file, so a page never marks them safe; only our own
files (the viewer's script and style, :func:`asset_markup`) and JSON escaped for a
``<script>`` block (:func:`json_for_html`, the ``json_script`` filter) are.
``StrictUndefined`` makes a misspelt variable an error instead of an empty string.

Whitespace: ``trim_blocks``/``lstrip_blocks`` drop the lines that hold only a block tag,
and a line that starts with ``{#- #}`` continues the previous one (Jinja's ``-`` strips
the line break before it), so a table row can be written one cell per line and still
come out on one line::

    from arena.publish.templating import render
    html = render("index.html", csp=CSP, standings=standings, ...)
"""

from __future__ import annotations

import base64
import hashlib
import json
from functools import cache
from importlib import resources
from typing import Any

from jinja2 import (
    BaseLoader,
    ChoiceLoader,
    Environment,
    PackageLoader,
    PrefixLoader,
    StrictUndefined,
)
from markupsafe import Markup

from arena.publish.rows import fmt_elo, fmt_pct, fmt_pentanomial, fmt_points, fmt_score


@cache
def asset(name: str) -> str:
    """The text of a shared viewer file under ``assets/`` (``replay.js`` or ``replay.css``)."""
    return resources.files("arena.publish").joinpath("assets", name).read_text(encoding="utf-8")


def asset_sha256(name: str) -> str:
    """A CSP source admitting an asset put inline: ``'sha256-<base64 of its SHA-256>'``."""
    digest = hashlib.sha256(asset(name).encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def asset_markup(name: str) -> Markup:
    """An asset to put inline in a ``<script>`` or ``<style>`` element (our file: trusted)."""
    return Markup(asset(name))  # a file of this package, not input


def json_for_html(data: Any) -> str:
    """Compact JSON that is safe inside ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` become ``\\u003c``-style escapes, so no string in the data can
    close the block or start a comment; U+2028/U+2029 are escaped for old JavaScript parsers.
    """
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def json_script(data: Any) -> Markup:
    """The ``json_script`` filter: :func:`json_for_html`, marked safe for the script block."""
    return Markup(json_for_html(data))  # escaped for a script block above


def exact(value: float | None) -> str:
    """The ``exact`` filter: a number at full precision for a ``data-*`` attribute ("" for none)."""
    return "" if value is None else repr(float(value))


#: Other parts of the arena's templates, by prefix (``ladder/leaderboard.html``): :func:`add_templates`.
_PREFIXED: dict[str, BaseLoader] = {}


def add_templates(prefix: str, package: str) -> Environment:
    """Let ``package``'s ``templates/`` folder render with this environment as ``prefix/NAME``; returns it.

    One environment for every page the arena makes (the ladder's site too):
    the same autoescaping, undefined check, filters and assets.
    """
    _PREFIXED.setdefault(prefix, PackageLoader(package, "templates"))
    return environment()


@cache
def environment() -> Environment:
    """The environment, built once per process (a publishing worker process builds its own)."""
    env = Environment(
        loader=ChoiceLoader([PackageLoader("arena.publish", "templates"), PrefixLoader(_PREFIXED)]),
        autoescape=True,  # every template is HTML; nothing is rendered unescaped by default
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        json_script=json_script,
        exact=exact,
        elo=fmt_elo,
        pct=fmt_pct,
        pentanomial=fmt_pentanomial,
        points=fmt_points,
        score=fmt_score,
    )
    env.globals["asset"] = asset_markup
    env.globals["asset_sha256"] = asset_sha256
    return env


def render(template: str, /, **context: Any) -> str:
    """Render ``templates/<template>`` with ``context`` (every value escaped unless Markup)."""
    return environment().get_template(template).render(**context)
