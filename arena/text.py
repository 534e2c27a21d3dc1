"""Untrusted text (bot and tournament names, bots' messages) made safe for the terminal.

A name is chosen by whoever wrote the bot or the tournament file.  Printed as
it is, ``[/]`` is rich markup (a traceback: "closing tag has nothing to
close") and ``ESC [2J`` clears the organiser's screen or fakes output.  Every
place that prints such a name passes it through :func:`safe_text` first.
"""

from __future__ import annotations

import re
import unicodedata

from rich.markup import escape

#: Whole terminal escape sequences (CSI ``ESC [ ... final``, OSC/DCS/APC/PM ``ESC ] ... BEL or ST``,
#: and two-byte ``ESC X``), removed as a unit so no printable remainder such as ``[2J`` is left.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b[\]PX^_].*?(?:\x07|\x1b\\|$)"  # OSC, DCS, SOS, PM, APC up to BEL or ST
    r"|\x1b[@-Z\\-_]?",  # any other escape (and a lone ESC)
    re.DOTALL,
)

#: Characters that reorder text on screen (bidirectional overrides and isolates).
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")


def safe_text(text: object, *, keep_newlines: bool = False) -> str:
    """``text`` as rich markup that prints literally: no escape sequences, no control characters.

    Removes terminal escape sequences, C0/C1 control characters (``\\n`` kept
    only with ``keep_newlines``, for multi-line messages) and bidirectional
    overrides, then escapes rich markup so ``[bold]`` or ``[/]`` print as
    themselves.  The result is for ``console.print`` and rich table cells
    (which read markup); pass it to ``Text(...)`` only via ``Text.from_markup``.
    """
    cleaned = _ESCAPE_SEQUENCE.sub("", str(text))
    return escape("".join(_printable(ch, keep_newlines) for ch in cleaned))


def _printable(ch: str, keep_newlines: bool) -> str:
    """``ch`` itself, a space for a tab or line break, or nothing for any other control."""
    if ch == "\n" and keep_newlines:
        return ch
    if ch in "\t\n\r\v\f":
        return " "
    return "" if unicodedata.category(ch) == "Cc" or ch in _BIDI_CONTROLS else ch
